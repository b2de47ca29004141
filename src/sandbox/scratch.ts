// Private $TMPDIRs for commands. Removing a directory can cost milliseconds (ext4 with discard, SD
// cards), more than the whole sandboxed spawn, so a directory that comes back empty is reused,
// and one that does not is removed in the background, after the result has been returned.
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorMessage } from '../errors.js';
import { log } from '../log.js';

const KEEP = 4;
const idle: string[] = [];
let exitHook = false;

/** An empty directory only this pinclaw uses (0700). */
export function acquireScratch(): string {
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const dir of idle.splice(0)) {
        try {
          rmdirSync(dir);
        } catch {
          // left for the system's tmp cleaning
        }
      }
    });
  }
  for (let dir = idle.pop(); dir; dir = idle.pop()) {
    try {
      if (lstatSync(dir).isDirectory()) return dir;
    } catch {
      // cleaned away by the system meanwhile
    }
  }
  return mkdtempSync(join(tmpdir(), 'pinclaw-exec-'));
}

/**
 * Takes a directory back after a command. Reused only when it is still a plain, empty directory
 * (nothing of one command can reach the next); its mode is reset, as the command could change it.
 */
export function releaseScratch(dir: string): void {
  try {
    if (idle.length < KEEP && lstatSync(dir).isDirectory() && readdirSync(dir).length === 0) {
      chmodSync(dir, 0o700);
      idle.push(dir);
      return;
    }
  } catch {
    // fall through to removal
  }
  void forceRemove(dir);
}

/** rm -rf, also through directories the command made unreadable (chmod 000) to a non-root pinclaw. */
async function forceRemove(dir: string): Promise<void> {
  try {
    await rm(dir, { recursive: true, force: true });
    return;
  } catch {
    // retried below with permissions restored
  }
  const open = (path: string): void => {
    try {
      const st = lstatSync(path);
      if (!st.isDirectory()) return;
      chmodSync(path, 0o700);
      for (const name of readdirSync(path)) open(join(path, name));
    } catch {
      // gone, or not ours
    }
  };
  open(dir);
  try {
    await rm(dir, { recursive: true, force: true });
  } catch (err) {
    log.warn(`sandbox: cannot remove ${dir}: ${errorMessage(err)}`);
  }
}
