// Putting a checked executable in place, and the old one back. Every step leaves a whole
// executable at the target path: the old one is kept by a hard link as pinclaw.prev before the new
// one is renamed over the target (rename(2) is atomic), and the directory is fsynced after each
// rename so a power cut cannot undo it. A journal file next to them says an update is between its
// swap and its health check: a `pinclaw update` killed there is finished (or undone) by the next.
import { closeSync, existsSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, unlinkSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { PinclawError } from '../errors.js';
import { writeFileAtomic } from '../fsutil.js';

export interface Journal {
  from: string;
  to: string;
  /** the executable's path when the update started */
  target: string;
}

export const prevPath = (target: string) => join(dirname(target), `${basename(target)}.prev`);
export const journalPath = (target: string) => join(dirname(target), `.${basename(target)}.update.json`);

export function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export function readJournal(target: string): Journal | undefined {
  const file = journalPath(target);
  if (!existsSync(file)) return undefined;
  const j = JSON.parse(readFileSync(file, 'utf8')) as Partial<Journal>;
  if (typeof j.from !== 'string' || typeof j.to !== 'string' || typeof j.target !== 'string') throw new PinclawError(`${file} is not an update journal; remove it once pinclaw runs as it should`);
  return j as Journal;
}

export function clearJournal(target: string): void {
  try {
    unlinkSync(journalPath(target));
    fsyncDir(dirname(target));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/** Keeps the running executable as pinclaw.prev, then renames `fresh` over the target. */
export function swapIn(target: string, fresh: string, journal: Journal, crashPoint: (name: string) => void = () => {}): void {
  const dir = dirname(target);
  const prev = prevPath(target);
  const prevTmp = `${prev}.tmp`;
  try {
    unlinkSync(prevTmp);
  } catch {
    // none left over
  }
  // A link, not a copy: the target never goes missing, and the link costs no space.
  linkSync(target, prevTmp);
  renameSync(prevTmp, prev);
  writeFileAtomic(journalPath(target), JSON.stringify(journal) + '\n', 0o644);
  fsyncDir(dir);
  renameSync(fresh, target);
  fsyncDir(dir);
  crashPoint('after-rename');
}

/** Puts pinclaw.prev back at the target (the failed new one is dropped). */
export function rollBack(target: string): void {
  renameSync(prevPath(target), target);
  fsyncDir(dirname(target));
}
