// `pinclaw migrate openclaw [--from DIR] [--dry-run] [--include-secrets]` (src/migrate/openclaw/):
// reads an OpenClaw home of either era, prints what it will bring, what it will not and why, then
// writes it (not with --dry-run). The OpenClaw home is only read; a second run writes nothing. In
// the bundle this is the lazy chunk 'migrate' with the json5 parser: run once, by the owner.
import { existsSync } from 'node:fs';
import { loadConfig } from '../config/index.js';
import { EXIT, PinclawError, UsageError, errorMessage } from '../errors.js';
import { configureNative } from '../native/loader.js';
import type { Db } from '../store/db.js';
import { openStore } from '../setup/process.js';
import { applyConfig, applyFiles, applyStore } from '../migrate/openclaw/apply.js';
import { locateHome } from '../migrate/openclaw/locate.js';
import { makePlan, writes, type PinclawSide, type Plan } from '../migrate/openclaw/plan.js';
import { planLines } from '../migrate/openclaw/print.js';
import { readHome } from '../migrate/openclaw/read-home.js';
import { openCopy } from '../migrate/openclaw/read-sqlite.js';
import { parseCommandArgs } from './args.js';
import { migrateOptions } from './options.js';
import type { CliContext } from './context.js';

const USAGE = 'pinclaw migrate openclaw [--from DIR] [--dry-run] [--include-secrets] [--json]';

export async function runMigrate(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, migrateOptions, USAGE);
  if (positionals[0] !== 'openclaw') throw new UsageError(`migrate: ${positionals[0] === undefined ? 'say from what' : `unknown source '${positionals[0]}'`} (known: openclaw)\nusage: ${USAGE}`);
  if (positionals.length > 1) throw new UsageError(`migrate: unexpected argument '${positionals[1]}'\nusage: ${USAGE}`);
  // pinclaw's own config first: a config pinclaw cannot read stops here, before anything is read or written.
  const config = loadConfig(ctx.paths, ctx.env);
  configureNative({ cacheDir: ctx.paths.cache, enabled: config.native.enabled });
  const dir = locateHome(values.from, ctx.env);
  const home = readHome(dir, ctx.env);
  const now = Date.now();
  const tz = config.agent.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;

  // What pinclaw holds is looked up in its database: a dry run reads a read-only copy (even a
  // read-only connection leaves a -wal and -shm beside a WAL database, and a dry run must not create
  // or change a file of the home); a real run opens it as every command does, when it exists.
  const dry = values['dry-run'] === true;
  const hasDb = existsSync(ctx.paths.database);
  const copy = dry && hasDb ? openCopy(ctx.paths.database) : undefined;
  let db: Db | undefined = !dry && hasDb ? openStore(ctx, config) : undefined;
  try {
    const reader = copy?.db ?? db;
    const row = (q: string, v: string): Record<string, unknown> | undefined => {
      try {
        return reader?.prepare(q).get(v) as Record<string, unknown> | undefined;
      } catch {
        return undefined; // a database from before the table existed
      }
    };
    const side: PinclawSide = {
      paths: ctx.paths,
      sessionMessages: (key) => row('select messages from sessions where key = ?', key)?.messages as string | undefined,
      jobExists: (by) => row('select 1 as x from cron_jobs where created_by = ?', by) !== undefined,
    };
    const plan = await makePlan(home, side, { includeSecrets: values['include-secrets'] === true, tz, now });
    copy?.close();
    return report(plan, { dir, era: home.era, version: home.version }, dry, ctx, () => {
      // The database is opened before the first write: one that cannot be opened (the addon, the
      // disk) stops the migration with nothing written rather than after the files.
      if (plan.jobs.length || plan.sessions.length) db ??= openStore(ctx, config);
      applyFiles(plan);
      if (db) applyStore(plan, db, now);
      return applyConfig(plan, ctx.paths);
    });
  } finally {
    if (copy?.db.open) copy.close();
    db?.close();
  }
}

/** Prints the plan, then writes it (unless a dry run or nothing to write) and says what was written. */
function report(plan: Plan, src: { dir: string; era: string; version?: string }, dry: boolean, ctx: CliContext, apply: () => string[]): number {
  const n = writes(plan);
  if (ctx.json) {
    ctx.out(JSON.stringify({
      source: src.dir, era: src.era, version: src.version ?? null, dryRun: dry,
      bring: { config: plan.configSet.map((c) => ({ key: c.key, from: c.from })), files: plan.files.map((f) => f.to), skills: plan.skills.map((s) => s.name), jobs: plan.jobs.map((j) => j.row.created_by), sessions: plan.sessions.map((s) => s.key) },
      already: plan.already, notMapped: plan.notMapped, notes: plan.notes, problems: plan.problems,
    }, null, 2));
  } else {
    for (const line of planLines(plan, src.dir, src.era, src.version)) ctx.out(line);
    ctx.out('');
  }
  const exit = plan.problems.length ? EXIT.failure : EXIT.ok;
  if (dry) {
    if (!ctx.json) ctx.out(`dry run: nothing written (${n} item${n === 1 ? '' : 's'} would be)`);
    return exit;
  }
  if (n === 0) {
    if (!ctx.json) ctx.out('nothing to write: pinclaw already has everything that can be brought');
    return exit;
  }
  let encrypted: string[];
  try {
    encrypted = apply();
  } catch (err) {
    if (err instanceof PinclawError) throw err;
    throw new PinclawError(`the migration stopped while writing: ${errorMessage(err)}; each piece is written whole or not at all, so pinclaw's home holds what it held plus what was done before this; fix the cause and run again (what is already here is not brought twice)`);
  }
  if (!ctx.json) {
    ctx.out(`written: ${n} item${n === 1 ? '' : 's'}${encrypted.length ? `; secrets stored encrypted: ${encrypted.join(', ')}` : ''}`);
    if (plan.configSet.length) ctx.out('a running gateway takes the config changes at its next start (pinclaw service restart, or stop and start it)');
  }
  if (plan.problems.length) ctx.err(`some of the OpenClaw home could not be read (listed above); fix those files and run again`);
  return exit;
}
