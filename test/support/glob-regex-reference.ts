// The glob compiler pinclaw used before src/tools/files/pattern.ts: patterns as backtracking regular
// expressions. Kept only as a reference for randomized tests on small brace-free patterns, where it
// is correct (it hangs on hostile patterns and mishandles dot names inside braces).
//
// Glob patterns as regular expressions (Node 20 has no fs.glob). The usual shell rules: `*` and `?`
// stay within one path segment, `**` as a whole segment spans any number of them, `[abc]`/`[!abc]`
// are classes, `{a,b}` alternatives. As in the shell, wildcards do not match a name that starts with
// a dot unless the pattern segment itself does, which keeps `.git` out of `**/*`.

/** Splits at '/' outside braces, so `{src,test/unit}/*.ts` keeps its alternatives whole. */
function splitSegments(pattern: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of pattern) {
    if (ch === '{') depth++;
    else if (ch === '}' && depth > 0) depth--;
    if (ch === '/' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.filter((s, i) => s !== '' || i === 0).filter((s) => s !== '.');
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The regex text of one segment (or of a brace alternative, which may hold '/'). */
function segmentSource(seg: string): string {
  let re = '';
  for (let i = 0; i < seg.length; i++) {
    const ch = seg[i]!;
    if (ch === '\\' && i + 1 < seg.length) re += escapeRe(seg[++i]!);
    else if (ch === '*') {
      while (seg[i + 1] === '*') i++;
      re += '[^/]*';
    } else if (ch === '?') re += '[^/]';
    else if (ch === '[') {
      const close = seg.indexOf(']', i + 2);
      if (close === -1) {
        re += '\\[';
        continue;
      }
      let body = seg.slice(i + 1, close);
      const negate = body[0] === '!' || body[0] === '^';
      if (negate) body = body.slice(1);
      re += `[${negate ? '^/' : ''}${body.replace(/[\\\]^]/g, '\\$&')}]`;
      i = close;
    } else if (ch === '{') {
      let depth = 0;
      let j = i;
      for (; j < seg.length; j++) {
        if (seg[j] === '{') depth++;
        else if (seg[j] === '}' && --depth === 0) break;
      }
      if (j >= seg.length) {
        re += '\\{';
        continue;
      }
      re += `(?:${splitAlternatives(seg.slice(i + 1, j)).map(alternativeSource).join('|')})`;
      i = j;
    } else re += escapeRe(ch);
  }
  return re;
}

/** An alternative may span segments (`{a,b/c}`), each with its own dot rule. */
function alternativeSource(alt: string): string {
  return alt.split('/').map((s) => segmentSource(s)).join('/');
}

function splitAlternatives(body: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of body) {
    if (ch === '{') depth++;
    else if (ch === '}') depth--;
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out;
}

/** A segment may match a dot name only when it starts with a literal dot itself. */
const noDot = (seg: string) => (seg.startsWith('.') ? '' : '(?!\\.)');

export interface CompiledGlob {
  regex: RegExp;
  segments: string[];
  /** a `**` segment: matches may lie at any depth */
  deep: boolean;
  /** a segment starts with '.': hidden directories may hold matches */
  dotted: boolean;
}

/** Compiles a relative pattern; matched against '/'-separated paths relative to the search base. */
export function compileGlob(pattern: string): CompiledGlob {
  const segments = splitSegments(pattern);
  let re = '^';
  segments.forEach((seg, i) => {
    const last = i === segments.length - 1;
    if (seg === '**') {
      // Zero or more whole segments; as the last one, everything beneath.
      re += last ? '(?:(?!\\.)[^/]+(?:/(?!\\.)[^/]+)*)?' : '(?:(?!\\.)[^/]+/)*';
      return;
    }
    re += noDot(seg) + segmentSource(seg) + (last ? '' : '/');
  });
  return { regex: new RegExp(`${re}$`), segments, deep: segments.includes('**'), dotted: segments.some((s) => s.startsWith('.') && s !== '..') };
}

/** True when a segment holds no wildcard, so it names one entry. */
export function isLiteral(seg: string): boolean {
  return !/[*?[{\\]/.test(seg);
}
