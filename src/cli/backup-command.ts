// `pinclaw backup FILE [--include-secrets] [--force]` and `pinclaw restore FILE [--force]` (src/ops/backup.ts).
import { EXIT, UsageError } from '../errors.js';
import { configureNative } from '../native/loader.js';
import { createBackup, restoreBackup, type Progress } from '../ops/backup.js';
import { parseCommandArgs } from './args.js';
import { backupOptions, restoreOptions } from './options.js';
import type { CliContext } from './context.js';

const BACKUP_USAGE = 'pinclaw backup FILE [--include-secrets] [--force]';
const RESTORE_USAGE = 'pinclaw restore FILE [--force]';

/** Below this a backup takes a moment and progress lines would only be noise. */
const PROGRESS_MIN_BYTES = 16 << 20;

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

/** One stderr line per tenth of each phase, for phases large enough to take a while. */
function progressLines(ctx: CliContext, command: string, minBytes = PROGRESS_MIN_BYTES): (p: Progress) => void {
  const shown = new Map<string, number>();
  const label = { database: 'database snapshot', files: 'archiving', reading: 'reading' } as const;
  return (p) => {
    if (p.total < minBytes) return;
    const tenth = Math.floor((p.done / p.total) * 10);
    if ((shown.get(p.phase) ?? -1) >= tenth) return;
    shown.set(p.phase, tenth);
    ctx.err(`${command}: ${label[p.phase]} ${formatBytes(p.done)} of ${formatBytes(p.total)} (${tenth * 10}%)`);
  };
}

function oneFile(positionals: string[], usage: string): string {
  if (positionals.length !== 1) throw new UsageError(`expected one FILE, got ${positionals.length}\nusage: ${usage}`);
  return positionals[0]!;
}

export async function runBackup(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, backupOptions, BACKUP_USAGE);
  const file = oneFile(positionals, BACKUP_USAGE);
  const includeSecrets = values['include-secrets'] === true;
  configureNative({ cacheDir: ctx.paths.cache });
  const r = await createBackup(ctx.paths, file, { includeSecrets, force: values.force === true, onProgress: progressLines(ctx, 'backup') });
  const m = r.manifest;
  if (ctx.json) {
    ctx.out(JSON.stringify({ file: r.file, bytes: r.bytes, skipped: r.skipped, manifest: m }, null, 2));
  } else {
    const ws = m.files.filter((f) => f.path.startsWith('workspace/')).length;
    const what = [
      `pinclaw.db (schema v${m.schemaVersion})`,
      ...(m.files.some((f) => f.path === 'config.json') ? ['config.json'] : []),
      ...(m.includesSecrets ? ['secret.key'] : []),
      ...(m.directories.includes('workspace') ? [`workspace/ (${ws} file${ws === 1 ? '' : 's'})`] : []),
      ...(m.directories.includes('boards') ? ['boards/'] : []),
    ];
    ctx.out(`backup: ${r.file} (${formatBytes(r.bytes)}): ${what.join(', ')}`);
  }
  for (const s of r.skipped) ctx.err(`backup: left out ${s}`);
  if (r.encryptedInBackup.length) {
    ctx.err(`backup: ${ctx.paths.config} holds ${r.encryptedInBackup.join(', ')} in clear; the backup holds them encrypted. The next pinclaw config set encrypts them in the home too (pinclaw doctor warns until then)`);
  }
  if (includeSecrets) {
    if (r.noSecretKey) ctx.err(`backup: there is no ${ctx.paths.secretKey} yet (nothing is encrypted), so the backup holds none`);
    // Loud, on stderr: the file is now as sensitive as the keys themselves.
    else ctx.err('warning: this backup contains the secret key: anyone with the file can read your API keys');
  } else if (r.configHasEncrypted) {
    ctx.err(`backup: the config's secret values stay encrypted in the backup; restoring them needs this home's ${ctx.paths.secretKey}, which is not in it (keep a copy somewhere safe, or back up with --include-secrets)`);
  }
  return EXIT.ok;
}

export async function runRestore(args: string[], ctx: CliContext): Promise<number> {
  const { values, positionals } = parseCommandArgs(args, restoreOptions, RESTORE_USAGE);
  const file = oneFile(positionals, RESTORE_USAGE);
  const r = await restoreBackup(ctx.paths, file, { force: values.force === true, env: ctx.env, onProgress: progressLines(ctx, 'restore') });
  const m = r.manifest;
  if (ctx.json) {
    ctx.out(JSON.stringify({ home: ctx.paths.home, restored: r.restored, keptAside: r.keptAside, notes: r.notes, manifest: { pinclawVersion: m.pinclawVersion, schemaVersion: m.schemaVersion, createdAt: m.createdAt, includesSecrets: m.includesSecrets } }, null, 2));
  } else {
    ctx.out(`restored ${m.files.length} files from a backup of ${m.createdAt} (pinclaw ${m.pinclawVersion}, schema v${m.schemaVersion}) into ${ctx.paths.home}`);
    for (const k of r.keptAside) ctx.out(`kept the previous ${k.was} as ${k.now}`);
  }
  for (const n of r.notes) ctx.err(`restore: ${n}`);
  if (!ctx.json) ctx.out('next: pinclaw doctor');
  return EXIT.ok;
}
