// `pinclaw backup` / `pinclaw restore`: the whole state of a home in one file, taken while the gateway
// runs, and put back only into a home that holds nothing (or, with force, with everything it held
// kept aside).
//
// The file is a gzip-compressed tar (src/archive.ts) whose first entry is manifest.json: the
// pinclaw version, the database's schema version, when it was made, and every file with its size and
// SHA-256. The manifest comes first so that restore can refuse a backup it cannot use (a newer schema,
// a foreign file) after reading a few KiB and before touching anything; for its checksums to be known
// up front, everything is first copied to a staging directory next to the output: the database
// through SQLite's online backup API (a consistent snapshot even while the gateway writes), the
// workspace file by file, so what is hashed is exactly what is archived.
//
// One job per file in src/ops/backup/: manifest.ts (the format and its check), create.ts (backup),
// restore.ts (restore), processes.ts (who holds the database open). This file is what the CLI and
// the updater import.
export { BACKUP_FORMAT, BACKUP_FORMAT_VERSION, knownSchemaVersion, readManifest, type BackupManifest, type ManifestFile, type Progress } from './backup/manifest.js';
export { createBackup, type BackupOptions, type BackupResult } from './backup/create.js';
export { restoreBackup, type RestoreOptions, type RestoreResult } from './backup/restore.js';
export { processesUsing } from './backup/processes.js';
