// A deterministic mixed-text corpus for the tokenizer tests and benchmark: real text found on disk
// (this repository's sources and docs, translated man pages) interleaved with text generated from
// a seeded PRNG for the cases real text rarely has (scripts, emoji and ZWJ sequences, long
// whitespace and digit runs, contractions in odd cases, lone surrogates, random code points).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { prng } from './prng.js';
export { prng };

export interface Corpus {
  text: string;
  /** UTF-8 bytes (lone surrogates as their 3-byte U+FFFD) by kind of segment */
  bytes: Record<string, number>;
}

export interface CorpusOptions {
  seed?: number;
  minBytes?: number;
  /** Code points the random generators must not produce (see unicode-probe.ts). */
  exclude?: ReadonlySet<number>;
  root?: string;
}

class Gen {
  constructor(readonly random: () => number) {}
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.random() * (hi - lo + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.random() < p;
  }
  from(ranges: readonly (readonly [number, number])[], exclude?: ReadonlySet<number>): string {
    for (;;) {
      const [lo, hi] = this.pick(ranges);
      const cp = this.int(lo, hi);
      if ((cp < 0xd800 || cp > 0xdfff) && !exclude?.has(cp)) return String.fromCodePoint(cp);
    }
  }
}

const SCRIPTS: Record<string, { letters: [number, number][]; digits?: [number, number]; cased?: boolean; spaced?: boolean }> = {
  latin: { letters: [[0x61, 0x7a], [0xe0, 0xff], [0x100, 0x17f], [0x180, 0x24f]], cased: true, spaced: true },
  greek: { letters: [[0x3b1, 0x3c9], [0x1f00, 0x1fbc]], cased: true, spaced: true },
  cyrillic: { letters: [[0x430, 0x44f], [0x450, 0x45f], [0x48a, 0x4ff]], cased: true, spaced: true },
  armenian: { letters: [[0x561, 0x586]], cased: true, spaced: true },
  hebrew: { letters: [[0x5d0, 0x5ea], [0x5b0, 0x5bd]], spaced: true },
  arabic: { letters: [[0x621, 0x64a], [0x64b, 0x652]], digits: [0x660, 0x669], spaced: true },
  devanagari: { letters: [[0x905, 0x939], [0x93e, 0x94d]], digits: [0x966, 0x96f], spaced: true },
  tamil: { letters: [[0xb85, 0xbb9], [0xbbe, 0xbcd]], digits: [0xbe6, 0xbef], spaced: true },
  thai: { letters: [[0xe01, 0xe2e], [0xe30, 0xe3a]], digits: [0xe50, 0xe59] },
  georgian: { letters: [[0x10d0, 0x10fa]], spaced: true },
  ethiopic: { letters: [[0x1200, 0x1248]], spaced: true },
  hangul: { letters: [[0xac00, 0xd7a3]], spaced: true },
  kana: { letters: [[0x3041, 0x3096], [0x30a1, 0x30fa], [0x30fc, 0x30fc]] },
  cjk: { letters: [[0x4e00, 0x9fff], [0x3400, 0x4dbf], [0x20000, 0x2a6df]], digits: [0xff10, 0xff19] },
};
const PUNCT = [',', '.', '!', '?', ';', ':', '—', '–', '…', '«', '»', '“', '”', '„', '、', '。', '「', '」', '（', '）', '¿', '¡', '·', '•', '(', ')', '"', '-'];
const SPACES = [' ', '\t', '\n', '\r\n', '\r', '\u000b', '\u000c', '\u00a0', '\u1680', '\u2000', '\u2009', '\u200a', '\u2028', '\u2029', '\u202f', '\u205f', '\u3000', '\u0085', '\ufeff', '\u180e', '\u200b'];
const SUFFIXES = ['s', 't', 're', 've', 'm', 'll', 'd', 'S', 'T', 'RE', 'Re', 'rE', 'VE', 'vE', 'M', 'LL', 'lL', 'Ll', 'D', 'ſ', 'ſſ', 'x', '', "'", 'st', 'ld', 'mm', 'dd'];
const EMOJI: [number, number][] = [[0x1f300, 0x1f5ff], [0x1f600, 0x1f64f], [0x1f680, 0x1f6ff], [0x1f900, 0x1f9ff], [0x2600, 0x27bf]];

function word(g: Gen, script: (typeof SCRIPTS)[string], exclude?: ReadonlySet<number>): string {
  let w = '';
  const n = g.int(1, 10);
  for (let i = 0; i < n; i++) w += g.from(script.letters, exclude);
  if (script.cased && g.chance(0.2)) w = w[0]!.toUpperCase() + w.slice(1);
  if (script.cased && g.chance(0.05)) w = w.toUpperCase();
  if (g.chance(0.04)) w += g.from([[0x300, 0x36f]]); // a combining mark
  return w;
}

const generators: Record<string, (g: Gen, exclude?: ReadonlySet<number>) => string> = {
  prose(g, exclude) {
    const script = SCRIPTS[g.pick(Object.keys(SCRIPTS))]!;
    const parts: string[] = [];
    for (let i = g.int(20, 200); i > 0; i--) {
      let w = word(g, script, exclude);
      if (script.digits && g.chance(0.05)) w = g.from([script.digits]).repeat(g.int(1, 5));
      parts.push(w);
      if (g.chance(0.15)) parts.push(g.pick(PUNCT));
      parts.push(script.spaced ? (g.chance(0.97) ? ' ' : g.pick(SPACES)) : g.chance(0.1) ? ' ' : '');
    }
    return parts.join('');
  },
  json(g) {
    const value = (depth: number): unknown => {
      const k = g.int(0, depth > 3 ? 3 : 6);
      if (k === 0) return g.int(-1e6, 1e6) / (g.chance(0.5) ? 1 : 1000);
      if (k === 1) return g.pick([true, false, null]);
      if (k <= 3) return generators.prose!(g).slice(0, g.int(0, 60));
      if (k === 4) return Array.from({ length: g.int(0, 5) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: g.int(0, 6) }, () => [g.pick(['id', 'name', 'userId', 'created_at', 'HTTPStatus', 'données', '名前', 'x-y', '$ref']), value(depth + 1)]));
    };
    return JSON.stringify(value(0), null, g.pick([0, 2, '\t']));
  },
  emoji(g) {
    const out: string[] = [];
    for (let i = g.int(10, 80); i > 0; i--) {
      const base = g.from(EMOJI);
      switch (g.int(0, 6)) {
        case 0:
          out.push(base + g.from([[0x1f3fb, 0x1f3ff]])); // skin tone
          break;
        case 1:
          out.push(Array.from({ length: g.int(2, 5) }, () => g.from(EMOJI) + (g.chance(0.5) ? '\ufe0f' : '')).join('\u200d')); // ZWJ sequence
          break;
        case 2:
          out.push(g.from([[0x1f1e6, 0x1f1ff]]) + g.from([[0x1f1e6, 0x1f1ff]])); // flag
          break;
        case 3:
          out.push(`${g.int(0, 9)}\ufe0f\u20e3`); // keycap
          break;
        case 4:
          out.push('\u{1f3f4}\u{e0067}\u{e0062}\u{e0065}\u{e006e}\u{e0067}\u{e007f}'); // tag sequence
          break;
        default:
          out.push(base);
      }
      out.push(g.pick(['', ' ', ' ', '\n', 'ok ', ' the ', '!']));
    }
    return out.join('');
  },
  whitespace(g) {
    const out: string[] = [];
    for (let i = g.int(3, 12); i > 0; i--) {
      const n = g.chance(0.1) ? g.int(200, 3000) : g.int(1, 40);
      let run = '';
      for (let k = 0; k < n; k++) run += g.chance(0.7) ? ' ' : g.pick(SPACES);
      out.push(run, g.pick(['word', 'x', '', '!', '1', 'Ünïcode', '中', "'s", '\u0301', '/']));
    }
    return out.join('');
  },
  digits(g) {
    const out: string[] = [];
    for (let i = g.int(10, 60); i > 0; i--) {
      switch (g.int(0, 5)) {
        case 0:
          out.push(Array.from({ length: g.int(1, 400) }, () => g.int(0, 9)).join(''));
          break;
        case 1:
          out.push(g.int(0, 1e9).toLocaleString('en-US'), (g.random() * 1e4).toFixed(g.int(0, 8)));
          break;
        case 2:
          out.push(g.from([[0x660, 0x669], [0x966, 0x96f], [0xff10, 0xff19], [0x2160, 0x2188], [0xbc, 0xbe], [0xb2, 0xb3], [0x2070, 0x2079]]).repeat(g.int(1, 9)));
          break;
        case 3:
          out.push(`v${g.int(0, 99)}.${g.int(0, 99)}.${g.int(0, 999)}`, `${g.int(1, 31)}/${g.int(1, 12)}/${g.int(1900, 2100)}`);
          break;
        default:
          out.push(`0x${g.int(0, 0x7fffffff).toString(16)}`, `${g.int(0, 999)}px`, `1e${g.int(-30, 30)}`);
      }
      out.push(g.pick([' ', ', ', '\n', '', '-', '+']));
    }
    return out.join('');
  },
  contractions(g, exclude) {
    const out: string[] = [];
    for (let i = g.int(20, 120); i > 0; i--) {
      const script = SCRIPTS[g.pick(['latin', 'latin', 'latin', 'greek', 'cyrillic', 'cjk'])]!;
      let w = g.pick(['it', 'IT', 'they', 'THEY', 'we', 'You', 'don', 'DON', 'ǅem', 'ʰi', 'l', '', 'rock', word(g, script, exclude)]);
      w += g.pick(["'", "'", "'", '’', "''"]) + g.pick(SUFFIXES);
      if (g.chance(0.3)) w += g.pick(['', 'n', "'", 'roll', '.', ' ', '\u0301']);
      out.push(w, g.pick([' ', ' ', '\n', '', ', ']));
    }
    return out.join('');
  },
  surrogates(g) {
    const out: string[] = [];
    for (let i = g.int(20, 100); i > 0; i--) {
      out.push(g.pick(['a', 'word ', ' ', 'Ω', '1', '', '😀', '\n']));
      const hi = String.fromCharCode(g.int(0xd800, 0xdbff));
      const lo = String.fromCharCode(g.int(0xdc00, 0xdfff));
      out.push(g.pick([hi, lo, lo + hi, hi + hi, hi + ' ' + lo, hi + lo]));
    }
    return out.join('');
  },
  codePoints(g, exclude) {
    const ranges: [number, number][] = [[0x80, 0xffff], [0x80, 0xffff], [0x10000, 0x1ffff], [0x20000, 0x3ffff], [0xe0000, 0x10ffff]];
    const out: string[] = [];
    for (let i = g.int(30, 150); i > 0; i--) {
      for (let k = g.int(1, 6); k > 0; k--) out.push(g.from(ranges, exclude));
      out.push(g.pick([' ', '', '\n', 'a', 'A', '1', "'s", '.']));
    }
    return out.join('');
  },
  code(g) {
    const ids = ['value', 'userId', 'HTTPServer', 'parse_json', 'MAX_SIZE', 'i', 'x2', '_private', '$el', 'π', 'naïve', 'getXMLHttpRequest'];
    const ops = [' = ', ' === ', ' && ', '->', '=>', '::', '+=', '<<', ' ? ', ' : ', '...', '?.', '!!', '/*', '*/', '//', '#!', '</div>', '${', '}}'];
    const lines: string[] = [];
    for (let i = g.int(10, 60); i > 0; i--) {
      const indent = g.pick(['', '  ', '    ', '\t', '\t\t', '        ']);
      let line = indent + g.pick(ids) + g.pick(ops) + g.pick(ids);
      if (g.chance(0.3)) line += `(${g.pick(ids)}, ${g.int(0, 1000)})`;
      if (g.chance(0.2)) line += ` // ${generators.prose!(g).slice(0, 40)}`;
      if (g.chance(0.1)) line += ` "https://example.com/${g.pick(ids)}/${g.int(1, 99)}?q=${g.pick(ids)}&n=${g.int(0, 9)}#top"`;
      if (g.chance(0.1)) line += ` '/usr/lib/x86_64-linux-gnu/${g.pick(ids)}.so.${g.int(0, 9)}'`;
      lines.push(line + g.pick([';', '', ' {', '}', ',', ';\r']));
    }
    return lines.join(g.pick(['\n', '\r\n', '\n\n']));
  },
  longPieces(g) {
    const n = g.int(130, 4000);
    switch (g.int(0, 4)) {
      case 0:
        return Buffer.from(Array.from({ length: n }, () => g.int(0, 255))).toString('base64');
      case 1:
        return Array.from({ length: n }, () => String.fromCharCode(g.int(0x61, 0x7a))).join('');
      case 2:
        return g.pick(['=', '-', '=-', '*', '#', '~', '.', '/']).repeat(Math.ceil(n / 2));
      case 3:
        return g.pick(['a', 'ab', 'aab', 'the', 'ー', '中文']).repeat(Math.ceil(n / 3));
      default:
        return Array.from({ length: n / 3 }, () => g.from(SCRIPTS.cjk!.letters)).join('');
    }
  },
  special(g) {
    return g.pick(['<|endoftext|>', '<|fim_prefix|>', 'a<|endofprompt|>b', '<|im_start|>user\n', '<|endoftext|><|endoftext|>']);
  },
};

/** Repository text: sources and docs, in a fixed order. */
function repositoryText(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let entries: string[];
    try {
      entries = readdirSync(dir).sort();
    } catch {
      return;
    }
    for (const name of entries) {
      const p = join(dir, name);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (/\.(ts|mjs|cc|h|md|json|gyp)$/.test(name) && st.size < 200_000) out.push(readFileSync(p, 'utf8'));
    }
  };
  for (const d of ['src', 'docs', 'native', 'scripts', 'bench', 'test', 'boards']) walk(join(root, d));
  for (const f of ['README.md', 'package.json', 'binding.gyp']) {
    try {
      out.push(readFileSync(join(root, f), 'utf8'));
    } catch {
      // optional
    }
  }
  return out;
}

/** Translated man pages (groff source): real prose in many languages and scripts, if installed. */
function manPages(perLanguage: number): string[] {
  const out: string[] = [];
  for (const lang of ['ja', 'ko', 'zh_CN', 'zh_TW', 'ru', 'uk', 'de', 'fr', 'es', 'pl', 'tr', 'pt_BR', 'cs', 'sr']) {
    let got = 0;
    const dir = `/usr/share/man/${lang}/man1`;
    let files: string[];
    try {
      files = readdirSync(dir).filter((f) => f.endsWith('.gz')).sort();
    } catch {
      continue;
    }
    for (const f of files) {
      if (got >= perLanguage) break;
      try {
        const text = gunzipSync(readFileSync(join(dir, f))).toString('utf8');
        out.push(text.slice(0, perLanguage - got));
        got += text.length;
      } catch {
        // a symlink to a missing page, or not gzip: skip it
      }
    }
  }
  return out;
}

export function buildCorpus(opts: CorpusOptions = {}): Corpus {
  const g = new Gen(prng(opts.seed ?? 0x5eed));
  const minBytes = opts.minBytes ?? 1_250_000;
  const bytes: Record<string, number> = {};
  const segments: string[] = [];
  const add = (kind: string, text: string) => {
    segments.push(text);
    bytes[kind] = (bytes[kind] ?? 0) + Buffer.byteLength(text);
  };
  // Real text is capped, so the generated cases stay a large share whatever the disk holds.
  let real = 0;
  for (const text of repositoryText(opts.root ?? process.cwd())) {
    if (real > minBytes * 0.3) break;
    add('repository', text);
    real += Buffer.byteLength(text);
  }
  for (const text of manPages(Math.floor((minBytes * 0.2) / 14))) add('man pages', text);
  // Every BMP code point once (less the excluded), shuffled into small groups.
  const bmp: string[] = [];
  for (let cp = 0x20; cp <= 0xffff; cp++) if ((cp < 0xd800 || cp > 0xdfff) && !opts.exclude?.has(cp)) bmp.push(String.fromCodePoint(cp));
  for (let i = bmp.length - 1; i > 0; i--) {
    const j = g.int(0, i);
    [bmp[i], bmp[j]] = [bmp[j]!, bmp[i]!];
  }
  for (let i = 0; i < bmp.length; ) {
    const n = g.int(1, 8);
    add('every BMP code point', bmp.slice(i, i + n).join('') + g.pick([' ', '', '\n', 'a', '1']));
    i += n;
  }
  const kinds = Object.keys(generators);
  let total = Object.values(bytes).reduce((a, b) => a + b, 0);
  while (total < minBytes) {
    const kind = g.pick(kinds);
    const text = generators[kind]!(g, opts.exclude);
    add(kind, text);
    total += Buffer.byteLength(text);
  }
  // Interleave, so every kind of text also meets every other at its edges.
  for (let i = segments.length - 1; i > 0; i--) {
    const j = g.int(0, i);
    [segments[i], segments[j]] = [segments[j]!, segments[i]!];
  }
  return { text: segments.join(''), bytes };
}
