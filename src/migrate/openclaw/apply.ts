// Writes a plan, after it has been printed: each piece atomically (a file through a temporary file
// and a rename, a skill through a hidden folder renamed into place, the sessions and jobs in one
// transaction, the config last through the path `pinclaw config set` takes, which encrypts its
// secrets). A failure midway leaves each piece as it was or as planned, never half written, and a
// second run brings what is missing.
import { cpSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { writeConfigFile } from '../../config/write.js';
import { writeFileAtomic } from '../../fsutil.js';
import { DISABLED_MARKER } from '../../skills/state.js';
import type { Db } from '../../store/db.js';
import type { Paths } from '../../paths.js';
import type { Plan } from './plan.js';

function writeSkill(from: string, to: string): void {
  // A name starting with a dot: skipped by the prompt's skill list while it is being written.
  const tmp = join(dirname(to), `.${process.pid}.migrate.tmp`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(dirname(to), { recursive: true });
  try {
    // Symlinks are left out (one could point anywhere), as plan.ts's comparison leaves them out.
    cpSync(from, tmp, { recursive: true, filter: (src) => !lstatSync(src).isSymbolicLink() && basename(src) !== DISABLED_MARKER });
    // Installed disabled: the owner reads it and turns it on (pinclaw skills enable NAME).
    writeFileSync(join(tmp, DISABLED_MARKER), '');
    renameSync(tmp, to);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

export function applyFiles(plan: Plan): void {
  for (const s of plan.skills) writeSkill(s.from, s.to);
  for (const f of plan.files) {
    mkdirSync(dirname(f.to), { recursive: true });
    writeFileAtomic(f.to, readFileSync(f.from), 0o644);
  }
}

export function applyStore(plan: Plan, db: Db, now: number): void {
  if (!plan.jobs.length && !plan.sessions.length) return;
  db.transaction(() => {
    const session = db.prepare(`insert into sessions (key, messages, meta, created_at, updated_at) values (?, ?, '{}', ?, ?) on conflict (key) do nothing`);
    for (const s of plan.sessions) session.run(s.key, JSON.stringify(s.messages), now, now);
    const job = db.prepare(
      `insert into cron_jobs (kind, expr, tz, every_ms, at_ms, anchor_at, message, session_key, channel, chat_id, state, next_run_at, created_by, created_at, updated_at)
       values (@kind, @expr, @tz, @every_ms, @at_ms, @anchor_at, @message, @session_key, @channel, @chat_id, @state, @next_run_at, @created_by, @now, @now)`,
    );
    const defaults = db.prepare(`update cron_jobs set session_key = case when session_key = '' then 'cron:' || id else session_key end, chat_id = case when chat_id = '' then cast(id as text) else chat_id end where id = ?`);
    for (const j of plan.jobs) defaults.run(Number(job.run({ ...j.row, now }).lastInsertRowid));
  })();
}

export function applyConfig(plan: Plan, paths: Paths): string[] {
  return plan.config ? writeConfigFile({ config: paths.config, secretKey: paths.secretKey }, plan.config) : [];
}
