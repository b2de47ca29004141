// What a killed `pinclaw backup` leaves behind: its staging directory (a full copy of the database
// and the workspace) and its half-written `.partial` archive, next to the output file. A backup
// records both in a note in the home (.backups-running/PID.json) for its life; the next backup and
// the next gateway start remove what the notes of dead processes name. The names carry the pid too,
// so the next backup into the same directory also finds leftovers of a backup of another home.
// Its own module so the gateway can call it without loading the backup code.
import { mkdirSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { pidAlive } from '../pid-alive.js';

const NOTES = '.backups-running';
/** The staging folder's name: `.pinclaw-backup-<pid>-` and the six random characters mkdtemp adds. */
const STAGING = /^\.pinclaw-backup-(\d+)-[A-Za-z0-9]{6}$/;
/** `.NAME.PID.partial` */
const PARTIAL = /^\..+\.(\d+)\.partial$/;

export const stagingPrefix = (dir: string, pid = process.pid) => join(dir, `.pinclaw-backup-${pid}-`);
export const partialName = (out: string, pid = process.pid) => join(dirname(out), `.${basename(out)}.${pid}.partial`);

/** Whether the process with this pid exists; this process counts, whatever the signal says. */
const alive = (pid: number): boolean => pid === process.pid || pidAlive(pid);

interface Note {
  staging: string;
  partial: string;
}

function noteFile(home: string, pid = process.pid): string {
  return join(home, NOTES, `${pid}.json`);
}

/** Records this process's staging directory and partial file until `forget` is called. */
export function noteBackup(home: string, note: Note): () => void {
  const file = noteFile(home);
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    writeFileSync(file, JSON.stringify(note) + '\n', { mode: 0o600 });
  } catch {
    // A home the backup may read but not write (a read-only mount): the pid in the names still
    // lets the next backup into the same directory find what a kill leaves.
    return () => undefined;
  }
  return () => rmSync(file, { force: true });
}

/** Removes leftovers of dead backups named by the home's notes and found in `dirs`; returns what went. */
export function removeBackupLeftovers(home: string, dirs: readonly string[] = []): string[] {
  const removed: string[] = [];
  const remove = (p: string) => {
    try {
      rmSync(p, { recursive: true, force: true });
      removed.push(p);
    } catch {
      // not ours to remove (another user's directory): left for its owner
    }
  };
  const notesDir = join(home, NOTES);
  let notes: string[] = [];
  try {
    notes = readdirSync(notesDir);
  } catch {
    // no backup ever ran in this home
  }
  for (const name of notes) {
    const pid = /^(\d+)\.json$/.exec(name)?.[1];
    if (!pid || alive(Number(pid))) continue;
    const file = join(notesDir, name);
    try {
      const note = JSON.parse(readFileSync(file, 'utf8')) as Partial<Note>;
      // Only paths of the shapes a backup makes, so a doctored note cannot make this remove anything else.
      if (typeof note.staging === 'string' && STAGING.test(basename(note.staging))) remove(note.staging);
      if (typeof note.partial === 'string' && PARTIAL.test(basename(note.partial))) remove(note.partial);
    } catch {
      // unreadable note: nothing to learn from it
    }
    try {
      unlinkSync(file);
    } catch {
      // gone already
    }
  }
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = STAGING.exec(name)?.[1] ?? PARTIAL.exec(name)?.[1];
      if (pid && !alive(Number(pid))) remove(join(dir, name));
    }
  }
  return removed;
}
