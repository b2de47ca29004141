// Export and import of the memory as JSON lines: every chunk with its source, times and vector (with
// the embedder that made it), so an export imported into an empty home and exported again gives the
// same bytes. Import keeps ids where they are free and skips chunks already present (same id and text).
import { createWriteStream, readFileSync } from 'node:fs';
import { once } from 'node:events';
import type { Db } from '../store/db.js';
import { sql } from '../store/statements.js';
import { allChunkRows, getChunkRow, hashText, vectorOf } from './store.js';

export interface ExportLine {
  id: number;
  text: string;
  kind: string;
  file: string | null;
  lineStart: number | null;
  lineEnd: number | null;
  session: string | null;
  createdAt: number;
  updatedAt: number;
  embedder: string | null;
  /** the vector's float32 bytes, base64 */
  vector: string | null;
}

export async function exportMemory(db: Db, file: string): Promise<number> {
  const out = createWriteStream(file, { mode: 0o600 });
  let n = 0;
  for (const r of allChunkRows(db)) {
    const v = vectorOf(r);
    const line: ExportLine = {
      id: r.id, text: r.text, kind: r.kind, file: r.file, lineStart: r.line_start, lineEnd: r.line_end, session: r.session,
      createdAt: r.created_at, updatedAt: r.updated_at, embedder: v ? r.embedder : null, vector: v ? Buffer.from(v.buffer).toString('base64') : null,
    };
    if (!out.write(`${JSON.stringify(line)}\n`)) await once(out, 'drain');
    n++;
  }
  out.end();
  await once(out, 'finish');
  return n;
}

export class ImportError extends Error {}

function parseLine(text: string, n: number): ExportLine {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new ImportError(`line ${n}: not JSON`);
  }
  const o = v as Partial<ExportLine>;
  const fail = (what: string) => new ImportError(`line ${n}: ${what}`);
  if (!o || typeof o !== 'object') throw fail('expected an object');
  if (typeof o.text !== 'string' || o.text.trim() === '') throw fail('text: expected a non-empty string');
  if (typeof o.kind !== 'string' || o.kind === '') throw fail('kind: expected a string');
  if (!Number.isInteger(o.id) || o.id! < 1) throw fail('id: expected a positive integer');
  if (!Number.isFinite(o.createdAt) || !Number.isFinite(o.updatedAt)) throw fail('createdAt/updatedAt: expected times in ms');
  if (o.file !== null && typeof o.file !== 'string') throw fail('file: expected a path or null');
  if ((o.vector === null) !== (o.embedder === null) || (o.vector !== null && (typeof o.vector !== 'string' || typeof o.embedder !== 'string'))) throw fail('vector and embedder: both or neither');
  return { id: o.id!, text: o.text, kind: o.kind, file: o.file ?? null, lineStart: o.lineStart ?? null, lineEnd: o.lineEnd ?? null, session: o.session ?? null, createdAt: o.createdAt!, updatedAt: o.updatedAt!, embedder: o.embedder ?? null, vector: o.vector ?? null };
}

/** Reads the whole file first: a bad line anywhere imports nothing. */
export function importMemory(db: Db, file: string): { imported: number; skipped: number; renumbered: number } {
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l.trim() !== '').map((l, i) => parseLine(l, i + 1));
  const insert = sql(db,
    `insert into memory_chunks (id, text, kind, file, line_start, line_end, session, hash, embedder, dims, embedding, created_at, updated_at)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  let imported = 0;
  let skipped = 0;
  let renumbered = 0;
  db.transaction(() => {
    for (const l of lines) {
      const existing = getChunkRow(db, l.id);
      if (existing && existing.text === l.text) {
        skipped++;
        continue;
      }
      const bytes = l.vector ? Buffer.from(l.vector, 'base64') : null;
      if (bytes && bytes.length % 4 !== 0) throw new ImportError(`chunk ${l.id}: the vector is not float32 data`);
      insert.run(existing ? null : l.id, l.text, l.kind, l.file, l.lineStart, l.lineEnd, l.session, hashText(l.text), l.embedder, bytes ? bytes.length / 4 : null, bytes, l.createdAt, l.updatedAt);
      if (existing) renumbered++;
      imported++;
    }
  })();
  return { imported, skipped, renumbered };
}
