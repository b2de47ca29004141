// OpenClaw's openclaw.json (and cron/jobs.json, auth-profiles.json) are JSON5: comments and trailing
// commas are normal there. The json5 package is the parser made for it; it is in this lazy chunk
// only. A file it cannot read (cut off by a crash mid-write, edited by hand) is an error naming the
// file, line and column, never a guess at what it held.
import JSON5 from 'json5';
import { readFileSync } from 'node:fs';

export type Json5Read = { ok: true; value: unknown } | { ok: false; problem: string };

export function readJson5File(file: string): Json5Read {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { ok: false, problem: `${file}: cannot read it (${(err as NodeJS.ErrnoException).code ?? String(err)})` };
  }
  try {
    return { ok: true, value: JSON5.parse(text) as unknown };
  } catch (err) {
    const e = err as { lineNumber?: number; columnNumber?: number; message?: string };
    const where = e.lineNumber !== undefined ? `${file}:${e.lineNumber}:${e.columnNumber ?? 0}` : file;
    // json5's message repeats the position ("JSON5: invalid end of input at 3:1"): kept, it says what.
    return { ok: false, problem: `${where}: not valid JSON5 (${e.message ?? String(err)}); the file looks cut off or mis-edited` };
  }
}
