// Tries the home lock from another process, as a second gateway would: POSIX locks are per process,
// so only another process can tell whether this one still holds its lock. `wrap` runs the child under
// a command (unshare, to put it in another pid namespace).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { root, tempDir } from './proc.js';

export interface ChildLock {
  /** 'held' when the child took the lock, 'busy' when it was refused */
  outcome: 'held' | 'busy';
  /** what the child said of the holder, when busy */
  holder?: string;
  stderr: string;
}

export function lockFromChild(file: string, wrap: string[] = []): ChildLock {
  const script = join(tempDir('pinclaw-lock-child-'), 'lock.mjs');
  const mod = pathToFileURL(join(root, 'src', 'store', 'home-lock.js')).href;
  writeFileSync(
    script,
    `const { tryLockHome, describeHolder } = await import(${JSON.stringify(mod)});
const r = tryLockHome(process.argv[2]);
console.log(JSON.stringify('held' in r ? { outcome: 'held' } : { outcome: 'busy', holder: describeHolder(r.busy) }));
if ('held' in r) r.held.release();
`,
  );
  const loader = process.execArgv.filter((a) => a.startsWith('--import=') && a.includes('typescript'));
  const [cmd, ...args] = [...wrap, process.execPath, ...loader, script, file];
  const r = spawnSync(cmd!, args, { encoding: 'utf8', cwd: root, timeout: 60_000 });
  const last = r.stdout.trim().split('\n').pop() ?? '';
  if (!last.startsWith('{')) throw new Error(`the locking child said nothing (exit ${r.status}): ${r.stderr}`);
  return { ...(JSON.parse(last) as Omit<ChildLock, 'stderr'>), stderr: r.stderr };
}
