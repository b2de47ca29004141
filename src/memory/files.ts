// The memory files of the workspace: MEMORY.md (never decays) and the daily notes
// memory/YYYY-MM-DD.md; other Markdown files under memory/ are indexed as notes. Read strictly as
// UTF-8: a file that is not is reported and left as it was indexed before, never half-read.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface MemoryFile {
  /** relative to the workspace, with forward slashes */
  path: string;
  kind: 'file' | 'daily';
  /** a daily note's day (ms epoch at 00:00 UTC); the file's mtime otherwise */
  time: number;
}

const DAILY = /^(\d{4})-(\d{2})-(\d{2})\.md$/;

export function memoryFiles(workspace: string): MemoryFile[] {
  const out: MemoryFile[] = [];
  const top = join(workspace, 'MEMORY.md');
  try {
    out.push({ path: 'MEMORY.md', kind: 'file', time: statSync(top).mtimeMs });
  } catch {
    // no MEMORY.md yet
  }
  let names: string[] = [];
  try {
    names = readdirSync(join(workspace, 'memory'));
  } catch {
    // no memory/ folder yet
  }
  for (const name of names.sort()) {
    if (!name.endsWith('.md')) continue;
    const m = DAILY.exec(name);
    const day = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : NaN;
    if (m && Number.isFinite(day)) out.push({ path: `memory/${name}`, kind: 'daily', time: day });
    else {
      try {
        const st = statSync(join(workspace, 'memory', name));
        if (st.isFile()) out.push({ path: `memory/${name}`, kind: 'file', time: st.mtimeMs });
      } catch {
        // gone since the listing
      }
    }
  }
  return out;
}

export class NotUtf8Error extends Error {}

const strict = new TextDecoder('utf-8', { fatal: true });

export function readMemoryFile(workspace: string, path: string): string {
  const bytes = readFileSync(join(workspace, path));
  try {
    return strict.decode(bytes).replace(/^\uFEFF/, '');
  } catch {
    throw new NotUtf8Error(`${path} is not UTF-8 text; it is left as it was indexed before (save it as UTF-8 to index it)`);
  }
}
