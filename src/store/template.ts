// A new home's database as a copy of the one the build made (scripts/store-template.mjs: every
// migration applied to an empty file, compacted), instead of running the migrations at the first
// start: they were 4-5 ms of a first gateway start's ~70 on the development machine, SQLite parsing
// each table, index, trigger and FTS5 table it creates. Only the single executable carries the
// template; a dev tree runs the migrations. Whatever the template holds, openDatabase's migrate()
// runs after it, so an older template is brought up to date like any older database.
import { closeSync, fsyncSync, linkSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { isSea, seaBinaryAsset } from '../native/sea.js';

export const STORE_TEMPLATE_KEY = 'store/pinclaw.db';

/** The executable's template, or undefined (a dev tree, or an executable without one). */
export function storeTemplate(): Uint8Array | undefined {
  if (!isSea()) return undefined;
  try {
    return seaBinaryAsset(STORE_TEMPLATE_KEY).bytes;
  } catch {
    return undefined; // the migrations make the database as before
  }
}

/**
 * Creates `file` with `bytes` unless it exists: written and flushed under a temporary name, then
 * linked to the name, which fails if another process created it meanwhile (its database is kept).
 * So the name only ever shows a whole copy; after a power cut it is that or absent. True when this
 * call created it.
 */
export function placeTemplate(file: string, bytes: Uint8Array): boolean {
  const tmp = `${file}.${process.pid}.new`;
  rmSync(tmp, { force: true }); // left by a dead process that had this pid
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    try {
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // already gone
    }
  }
}
