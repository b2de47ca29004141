// The backup file's manifest: its format, what a home's parts are called in it, and the check
// that a backup is one this pinclaw can restore, read from its first entry alone.
import { join, relative, sep } from 'node:path';
import { PinclawError, errorMessage } from '../../errors.js';
import type { Paths } from '../../paths.js';
import { openPlainDatabase, type Db } from '../../store/db.js';
import { migrations } from '../../store/schema.js';
import { pinclawVersion } from '../../version.js';
import { ArchiveError, StopReading, readTarGz } from '../../archive.js';

export const BACKUP_FORMAT = 'pinclaw-backup';
export const BACKUP_FORMAT_VERSION = 1;
export const MANIFEST = 'manifest.json';
/** An encrypted value in config text (src/config/secrets.ts writes "enc:v1:…"). */
export const ENCRYPTED_VALUE = /"enc:v\d+:/;

export interface ManifestFile {
  path: string;
  size: number;
  sha256: string;
}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  formatVersion: number;
  pinclawVersion: string;
  /** the database's schema_migrations max(version) */
  schemaVersion: number;
  createdAt: string;
  /** secret.key is in the backup */
  includesSecrets: boolean;
  files: ManifestFile[];
  directories: string[];
}

export interface Progress {
  phase: 'database' | 'files' | 'reading';
  done: number;
  total: number;
}

/** The newest schema this pinclaw knows. */
export function knownSchemaVersion(): number {
  return Math.max(0, ...migrations.map((m) => m.version));
}

/** Backup copies and checks must not change what they look at: no WAL switch, no migrations. */
export const openPlain = (file: string, readonly: boolean): Db => openPlainDatabase(file, { readonly });

export function schemaVersionOf(db: Db): number {
  const table = db.prepare(`select 1 from sqlite_master where type = 'table' and name = 'schema_migrations'`).get();
  if (!table) return 0;
  return (db.prepare('select max(version) as v from schema_migrations').get() as { v: number | null }).v ?? 0;
}

export function quickCheck(db: Db): string {
  const rows = db.pragma('quick_check') as { quick_check: string }[];
  return rows.map((r) => r.quick_check).join('; ');
}

/** The parts of a home a backup holds, by their name in the archive. */
export function homeParts(paths: Paths) {
  return {
    database: paths.database,
    config: paths.config,
    secretKey: paths.secretKey,
    workspace: paths.workspace,
    boards: join(paths.home, 'boards'),
  };
}

export const within = (dir: string, p: string) => p === dir || p.startsWith(dir + sep);


export const SAFE_SEGMENT = /^[^/\0]+$/;

/** Only the parts of a home, only relative paths without '.' or '..' segments. */
export function allowedPath(p: string, type: 'file' | 'dir'): boolean {
  const segs = p.split('/');
  if (segs.some((s) => !SAFE_SEGMENT.test(s) || s === '.' || s === '..')) return false;
  if (type === 'file' && segs.length === 1) return ['pinclaw.db', 'config.json', 'secret.key'].includes(p);
  return segs[0] === 'workspace' || segs[0] === 'boards';
}

export function checkManifest(value: unknown): BackupManifest {
  const bad = (why: string): never => {
    throw new ArchiveError(`its manifest is not valid: ${why}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('not an object');
  const m = value as Record<string, unknown>;
  if (m.format !== BACKUP_FORMAT) return bad(`format is ${JSON.stringify(m.format)}, not "${BACKUP_FORMAT}"`);
  if (typeof m.formatVersion !== 'number' || !Number.isInteger(m.formatVersion)) return bad('formatVersion is missing');
  if (m.formatVersion > BACKUP_FORMAT_VERSION) {
    throw new PinclawError(`the backup has format version ${m.formatVersion}, made by pinclaw ${String(m.pinclawVersion)}; this pinclaw (${pinclawVersion()}) reads version ${BACKUP_FORMAT_VERSION}: restore it with a newer pinclaw`);
  }
  if (typeof m.schemaVersion !== 'number' || !Number.isInteger(m.schemaVersion) || m.schemaVersion < 0) return bad('schemaVersion is missing');
  if (typeof m.pinclawVersion !== 'string' || typeof m.createdAt !== 'string' || typeof m.includesSecrets !== 'boolean') return bad('pinclawVersion, createdAt or includesSecrets is missing');
  if (!Array.isArray(m.files) || !Array.isArray(m.directories)) return bad('files or directories is missing');
  const seen = new Set<string>();
  for (const f of m.files as unknown[]) {
    const e = f as Partial<ManifestFile>;
    if (typeof e?.path !== 'string' || typeof e.size !== 'number' || !Number.isSafeInteger(e.size) || e.size < 0 || typeof e.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(e.sha256)) return bad(`a file entry is malformed: ${JSON.stringify(f)}`);
    if (!allowedPath(e.path, 'file')) return bad(`${JSON.stringify(e.path)} is not a part of a pinclaw home`);
    if (seen.has(e.path)) return bad(`${e.path} is listed twice`);
    seen.add(e.path);
  }
  for (const d of m.directories as unknown[]) {
    if (typeof d !== 'string' || !allowedPath(d, 'dir')) return bad(`${JSON.stringify(d)} is not a directory of a pinclaw home`);
    if (seen.has(d)) return bad(`${d} is listed twice`);
    seen.add(d);
  }
  if (!seen.has('pinclaw.db')) return bad('it holds no pinclaw.db');
  return m as unknown as BackupManifest;
}

/** Reads only the manifest at the start of a backup. */
export async function readManifest(file: string): Promise<BackupManifest> {
  let text: string | undefined;
  await readTarGz(file, (h) => {
    if (h.path !== MANIFEST || h.type !== 'file') throw new ArchiveError(`it is not a pinclaw backup (it does not start with ${MANIFEST})`);
    if (h.size > 16 << 20) throw new ArchiveError(`its ${MANIFEST} is implausibly large (${h.size} bytes)`);
    const parts: Buffer[] = [];
    return {
      data: (c) => void parts.push(Buffer.from(c)),
      end: () => {
        text = Buffer.concat(parts).toString('utf8');
        throw new StopReading();
      },
    };
  });
  if (text === undefined) throw new ArchiveError(`${file} cannot be used: it is empty`);
  try {
    return checkManifest(JSON.parse(text));
  } catch (err) {
    if (err instanceof ArchiveError) throw new ArchiveError(`${file} cannot be used: ${err.message}`);
    if (err instanceof PinclawError) throw err;
    throw new ArchiveError(`${file} cannot be used: its ${MANIFEST} is not JSON (${errorMessage(err)})`);
  }
}
