// The front matter of a SKILL.md: the `key: value` lines between two `---` lines at the top. Hand-
// written rather than a YAML library because skills use a small subset and the prompt builder runs
// on every turn of a small board: plain, 'single'- and "double"-quoted scalars, and the block
// scalars `|` (literal) and `>` (folded) with chomping (`-`, `+`) and an explicit indentation digit,
// as YAML 1.2 defines them. Anything else (flow collections, anchors, nested maps) is skipped for
// its key, never an error: a skill with odd front matter still loads with its directory's name.
const MAX_LINES = 2000;

export function frontMatter(text: string): Record<string, string> {
  const lines = text.split(/\r?\n/, MAX_LINES + 2);
  if (lines[0]?.trimEnd() !== '---') return {};
  const end = lines.indexOf('---', 1);
  const body = lines.slice(1, end < 0 ? lines.length : end);
  // Without its closing line this is not front matter (as in every static site generator).
  if (end < 0) return {};
  const out: Record<string, string> = {};
  for (let i = 0; i < body.length; i++) {
    const m = /^([A-Za-z_][\w-]*)\s*:(?:\s+(.*))?$/.exec(body[i]!);
    if (!m) continue;
    const key = m[1]!;
    const rest = (m[2] ?? '').trim();
    const block = /^([|>])([1-9])?([+-])?([1-9])?(?:\s+#.*)?$/.exec(rest);
    if (block) {
      const indicator = block[2] ?? block[4];
      const { value, next } = blockScalar(body, i + 1, block[1] === '>', block[3] as '+' | '-' | undefined, indicator ? Number(indicator) : undefined);
      out[key] = value;
      i = next - 1;
      continue;
    }
    const scalar = flowScalar(rest);
    if (scalar !== undefined) out[key] = scalar;
  }
  return out;
}

/** A plain or quoted scalar on one line; undefined for what this reader does not handle. */
function flowScalar(s: string): string | undefined {
  if (s.startsWith('"')) {
    const m = /^"((?:[^"\\]|\\.)*)"\s*(?:#.*)?$/.exec(s);
    if (!m) return undefined;
    return m[1]!.replace(/\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)/g, (_e, c: string) => {
      if (c[0] === 'u' || c[0] === 'x') return String.fromCharCode(parseInt(c.slice(1), 16));
      return ({ n: '\n', t: '\t', r: '\r', '0': '\0', '"': '"', '\\': '\\', '/': '/', ' ': ' ' } as Record<string, string>)[c] ?? c;
    });
  }
  if (s.startsWith("'")) {
    const m = /^'((?:[^']|'')*)'\s*(?:#.*)?$/.exec(s);
    return m ? m[1]!.replace(/''/g, "'") : undefined;
  }
  if (/^[[{&*!|>%@`]/.test(s)) return undefined;
  // A comment needs a space before its '#'.
  return s.replace(/\s+#.*$/, '');
}

function blockScalar(lines: string[], from: number, folded: boolean, chomp: '+' | '-' | undefined, explicit: number | undefined): { value: string; next: number } {
  let indent = explicit;
  const content: string[] = [];
  let i = from;
  for (; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.trim() === '') {
      content.push('');
      continue;
    }
    const lead = line.length - line.trimStart().length;
    indent ??= lead;
    if (lead < indent || indent === 0) break;
    content.push(line.slice(indent));
  }
  // Trailing blank lines belong to the chomping, not to the text.
  let trailing = 0;
  while (content.length && content[content.length - 1] === '') {
    content.pop();
    trailing++;
  }
  let text: string;
  if (!folded) text = content.join('\n');
  else {
    // Folding: neighbouring lines are joined by a space, each blank line between them becomes a
    // newline, and lines that start with white space ("more indented") keep their line breaks.
    text = '';
    let blanks = 0;
    let prev: 'normal' | 'more' | undefined;
    for (const line of content) {
      if (line === '') {
        blanks++;
        continue;
      }
      const kind = /^[ \t]/.test(line) ? 'more' : 'normal';
      if (prev === undefined) text += '\n'.repeat(blanks);
      else if (prev === 'normal' && kind === 'normal') text += blanks ? '\n'.repeat(blanks) : ' ';
      else text += '\n'.repeat(blanks + 1);
      text += line;
      blanks = 0;
      prev = kind;
    }
  }
  if (content.length === 0) return { value: '', next: i };
  if (chomp === '-') return { value: text, next: i };
  if (chomp === '+') return { value: `${text}\n${'\n'.repeat(trailing)}`, next: i };
  return { value: `${text}\n`, next: i };
}
