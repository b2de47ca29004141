// Markdown into chunks of about `target` tokens that overlap by about `overlap`, cut on heading and
// paragraph boundaries where they fall, then on lines, then on words; each chunk keeps the 1-based
// line range it came from, which is what a search result cites.

export interface ChunkOptions {
  /** tokens in a chunk, about (a block larger than this is cut) */
  target: number;
  /** tokens repeated from the end of one chunk at the start of the next */
  overlap: number;
  count: (text: string) => number;
}

export interface TextChunk {
  text: string;
  lineStart: number;
  lineEnd: number;
}

interface Unit {
  text: string;
  line: number;
  lastLine: number;
  tokens: number;
  /** a heading, or the first line after a blank line: a good place to start a chunk */
  boundary: boolean;
}

/** Lines, with long lines cut at word boundaries into pieces of at most `target` tokens. */
function units(text: string, o: ChunkOptions): Unit[] {
  const out: Unit[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let afterBlank = true;
  let inFence = false;
  lines.forEach((line, i) => {
    const n = i + 1;
    if (line.trim() === '') {
      afterBlank = true;
      return;
    }
    const fence = /^\s*(```|~~~)/.test(line);
    const heading = !inFence && /^#{1,6}\s/.test(line);
    const boundary = heading || (afterBlank && !inFence);
    if (fence) inFence = !inFence;
    afterBlank = false;
    const tokens = o.count(line);
    if (tokens <= o.target) {
      out.push({ text: line, line: n, lastLine: n, tokens, boundary });
      return;
    }
    // A line longer than a chunk (a pasted log, a minified blob): cut between words.
    let piece = '';
    let first = true;
    for (const word of line.split(/(?<=\s)/)) {
      if (piece && o.count(piece + word) > o.target) {
        out.push({ text: piece, line: n, lastLine: n, tokens: o.count(piece), boundary: first && boundary });
        piece = '';
        first = false;
      }
      piece += word;
    }
    if (piece.trim()) out.push({ text: piece, line: n, lastLine: n, tokens: o.count(piece), boundary: first && boundary });
  });
  return out;
}

export function chunkMarkdown(text: string, o: ChunkOptions): TextChunk[] {
  if (o.overlap >= o.target) throw new RangeError(`chunk overlap (${o.overlap}) must be smaller than the chunk size (${o.target})`);
  const all = units(text, o);
  const chunks: TextChunk[] = [];
  let start = 0;
  while (start < all.length) {
    let end = start;
    let tokens = 0;
    // Fill up to the target; then, if the chunk can end earlier on a boundary without getting too
    // small, end there so the next chunk starts at a heading or a paragraph.
    while (end < all.length && (end === start || tokens + all[end]!.tokens <= o.target)) tokens += all[end++]!.tokens;
    if (end < all.length && !all[end]!.boundary) {
      let b = end - 1;
      let t = tokens;
      while (b > start && !all[b]!.boundary) t -= all[b--]!.tokens;
      if (b > start && t - all[b]!.tokens >= o.target / 2) end = b;
    }
    const part = all.slice(start, end);
    chunks.push({ text: joinUnits(part), lineStart: part[0]!.line, lineEnd: part.at(-1)!.lastLine });
    if (end >= all.length) break;
    // The next chunk begins with the last units of this one, up to `overlap` tokens, but always
    // moves forward by at least one unit.
    let next = end;
    let carried = 0;
    while (next - 1 > start && carried + all[next - 1]!.tokens <= o.overlap) carried += all[--next]!.tokens;
    start = next;
  }
  return chunks;
}

/** Units of one line are rejoined without a break; lines with a newline, keeping paragraph breaks. */
function joinUnits(part: Unit[]): string {
  let s = '';
  part.forEach((u, i) => {
    if (i > 0) s += u.line === part[i - 1]!.line ? '' : u.boundary && !/^#/.test(u.text) ? '\n\n' : '\n';
    s += u.text;
  });
  return s.trim();
}
