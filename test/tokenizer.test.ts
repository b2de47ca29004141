// The BPE tokenizer: the addon, tiktoken (the yardstick) and the TypeScript reference give the same
// token ids on a generated ≥1 MB corpus of mixed text; bad input has defined results; the async
// path runs on the thread pool; random input neither crashes the addon nor leaks; the CLI counts.
import t, { type Test } from 'tap';
import { createHook } from 'node:async_hooks';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { get_encoding, type Tiktoken } from 'tiktoken';
import { loadAddon } from '../src/native/loader.js';
import { ASYNC_THRESHOLD, getTokenizer, releaseTokenizers, type TokenizerAddon, type TokenizerInput } from '../src/native/tokenizer.js';
import { loadEncodingData, parseEncodingData } from '../src/native/tokenizer-data.js';
import { ENCODINGS, type EncodingName, UnknownEncodingError } from '../src/native/tokenizer-encodings.js';
import { CLAUDE_TOKEN_FACTOR, estimateClaudeTokens } from '../src/native/token-estimate.js';
import { parseRanks, ReferenceTokenizer, wellFormed } from '../src/native/tokenizer-reference.js';
import { Splitter } from '../src/native/tokenizer-split.js';
import { releaseCaches } from '../src/release.js';
import { cleanEnv, runPinclaw, tempDir } from './support/proc.js';
import { buildCorpus, prng } from './support/tokenizer-corpus.js';
import { classDifferences } from './support/unicode-probe.js';

const addon = loadAddon<TokenizerAddon>('pinclaw');
const loose = addon as unknown as Record<string, (...args: unknown[]) => unknown>;

const tiktoken = new Map<EncodingName, Tiktoken>();
const tk = (name: EncodingName) => {
  let e = tiktoken.get(name);
  if (!e) tiktoken.set(name, (e = get_encoding(name)));
  return e;
};
t.teardown(() => {
  for (const e of tiktoken.values()) e.free();
});
/** tiktoken's ids; bytes go through TextDecoder, as tiktoken only takes strings. */
const expected = (name: EncodingName, text: TokenizerInput) => tk(name).encode_ordinary(typeof text === 'string' ? text : new TextDecoder().decode(text));

const references = new Map<EncodingName, ReferenceTokenizer>();
const reference = (name: EncodingName) => {
  let r = references.get(name);
  if (!r) references.set(name, (r = new ReferenceTokenizer(loadEncodingData(name))));
  return r;
};

/** Asserts two id sequences are equal; on a difference, shows where and the text around it. */
function sameIds(t: Test, name: EncodingName, got: ArrayLike<number>, want: ArrayLike<number>, what: string): void {
  const n = Math.max(got.length, want.length);
  let i = 0;
  while (i < n && got[i] === want[i]) i++;
  if (i === n) {
    t.pass(`${what}: all ${n} ids identical`);
    return;
  }
  const around = Array.from(want).slice(Math.max(0, i - 8), i + 8);
  t.fail(`${what}: first difference at id ${i} of ${want.length} (got ${got.length})`, {
    got: Array.from(got).slice(Math.max(0, i - 8), i + 8),
    want: around,
    text: new TextDecoder().decode(tk(name).decode(Uint32Array.from(around))),
  });
}

// Runs first, while cl100k_base is still unloaded in this process.
t.test('bad rank data is refused with the reason, and a good load still works after it', async (t) => {
  t.throws(() => addon.tokenizerLoad('cl100k_base', '! 0 not*base64'), /cl100k_base rank data: line 1: token 1 is not base64/);
  t.throws(() => addon.tokenizerLoad('cl100k_base', '! 0 QQ== Qg=='), /no token for the single byte 0x00/);
  t.throws(() => addon.tokenizerLoad('cl100k_base', '! 0 QQ== QQ=='), /token of rank 1 repeats the token of rank 0/);
  t.throws(() => addon.tokenizerLoad('cl100k_base', '! x QQ=='), /line 1: first rank is not a number/);
  // Padding only at the end of the last quad ("xx==" or "xxx="), and a token of 1 to 255 bytes.
  for (const bad of ['QQ=A', 'Q===', '=QQQ', 'QQ==QUJD', 'QQ*=', 'QUJ', 'QQ = ']) {
    t.throws(() => addon.tokenizerLoad('cl100k_base', `! 0 ${bad}`), /line 1: token 1 is not base64/, `${JSON.stringify(bad)} is not base64`);
  }
  t.throws(() => addon.tokenizerLoad('cl100k_base', `! 0 ${Buffer.alloc(256, 0x61).toString('base64')}`), /line 1: token of rank 0 has more than 255 bytes; 1 to 255 are supported/);
  // Tokens of every length from 2 to 255 bytes (so every padding): each word that is one of them is
  // one piece and one id, its rank.
  const byteTokens = Array.from({ length: 256 }, (_, b) => Buffer.from([b]).toString('base64'));
  const words = Array.from({ length: 254 }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(i + 2));
  addon.tokenizerLoad('cl100k_base', `! 0 ${byteTokens.join(' ')} ${words.map((w) => Buffer.from(w).toString('base64')).join(' ')}`);
  t.same(words.map((w) => [...addon.tokenEncode('cl100k_base', w)]), words.map((_, i) => [256 + i]), 'a token of each length is one id, its rank');
  addon.tokenizerUnload!('cl100k_base');
  t.throws(() => addon.tokenizerLoad('p50k_base', '! 0 QQ=='), /unknown encoding 'p50k_base'; known: o200k_base, cl100k_base/);
  t.notOk(addon.tokenizerInfo().loaded.includes('cl100k_base'), 'a failed load leaves the encoding unloaded');
  t.throws(() => addon.tokenCount('cl100k_base', 'x'), /encoding cl100k_base is not loaded; call tokenizerLoad first/);
  t.throws(() => parseRanks('! 0 QQ=='), /no token for the single byte 0x00/, 'the reference checks the same');
  t.throws(() => parseRanks('! 0 @@@@'), /line 1: token 1 is not base64/);
  // The merge keeps a rank and a 7-bit position in one 32-bit lane: the largest rank it can hold is
  // 2^23 - 1, and a larger one is refused rather than merged wrongly.
  t.throws(() => addon.tokenizerLoad('cl100k_base', '! 8388608 QQ=='), /line 1: rank out of range \(at most 8388607\)/);
  const bytes = Array.from({ length: 256 }, (_, b) => Buffer.from([b]).toString('base64')).join(' ');
  const top = 8388607;
  addon.tokenizerLoad('cl100k_base', `! ${top - 257} ${bytes} ${Buffer.from('ab').toString('base64')} ${Buffer.from('aba').toString('base64')}`);
  t.same([...addon.tokenEncode('cl100k_base', 'ababa')], [top - 1, top], 'the largest ranks merge: ab + aba');
  const long = ` ${'ab'.repeat(70)}`;  // one piece of 141 bytes: the long pieces' merge
  t.same([...addon.tokenEncode('cl100k_base', long)], [top - 257 + 0x20, ...Array<number>(70).fill(top - 1)], 'and in a long piece');
  addon.tokenizerUnload!('cl100k_base');
  const data = loadEncodingData('cl100k_base');
  const file = JSON.stringify({ pat_str: '\\s+', special_tokens: {}, bpe_ranks: data.ranks });
  t.throws(() => parseEncodingData('cl100k_base', file, 'test.json'), /test\.json: its pre-tokenizer pattern is not the one pinclaw implements for cl100k_base/);
  t.throws(() => parseEncodingData('cl100k_base', '{', 'test.json'), /test\.json: not JSON/);
  addon.tokenizerLoad('cl100k_base', data.ranks);
  t.ok(addon.tokenizerInfo().loaded.includes('cl100k_base'));
  t.equal(addon.tokenCount('cl100k_base', 'hello world'), 2);
});

t.test("character classes differ from tiktoken's only where Unicode itself changed", async (t) => {
  t.equal(addon.tokenizerInfo().unicodeVersion, process.versions.unicode, 'the table was generated from the Node that runs the tests');
  const diffs = classDifferences();
  const changed = diffs.filter((d) => !d.newSinceTiktoken);
  // U+0295 LATIN LETTER PHARYNGEAL VOICED FRICATIVE moved from Ll to Lo in Unicode 17.
  t.same(
    changed.map((d) => [d.codePoint, d.classes]),
    [[0x295, ['upperish']]],
    "apart from code points new since tiktoken's Unicode, only U+0295 changed class",
  );
  t.ok(diffs.length < 6000, `${diffs.length} code points differ, all listed in docs/tokenizer.md terms`);
});

t.test('addon, tiktoken and the TypeScript reference agree on a ≥1 MB mixed corpus', async (t) => {
  const exclude = new Set(classDifferences().map((d) => d.codePoint));
  const corpus = buildCorpus({ seed: 20240601, minBytes: 1_250_000, exclude });
  const size = Buffer.byteLength(corpus.text);
  t.ok(size >= 1_000_000, `corpus is ${(size / 1e6).toFixed(2)} MB: ${JSON.stringify(corpus.bytes)}`);
  for (const kind of ['repository', 'every BMP code point', 'whitespace', 'digits', 'emoji', 'contractions', 'surrogates', 'codePoints', 'longPieces', 'prose', 'json', 'code']) {
    t.ok((corpus.bytes[kind] ?? 0) > 0, `the corpus has ${kind}`);
  }
  t.match(corpus.text, /<\|endoftext\|>/, 'special-token text is in it, counted as plain text');
  t.match(corpus.text, /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/, 'lone surrogates are in it');
  for (const name of ENCODINGS) {
    const want = expected(name, corpus.text);
    const tokenizer = getTokenizer(name);
    t.equal(tokenizer.implementation, 'native');
    const got = tokenizer.encode(corpus.text);
    sameIds(t, name, got, want, `${name}: addon vs tiktoken`);
    sameIds(t, name, reference(name).encode(corpus.text), want, `${name}: reference vs tiktoken`);
    t.equal(tokenizer.count(corpus.text), want.length, `${name}: addon count equals the number of ids`);
    t.equal(reference(name).count(corpus.text), want.length, `${name}: reference count equals the number of ids`);
    const bytes = Buffer.from(corpus.text, 'utf8');
    t.equal(tokenizer.count(bytes), want.length, `${name}: the same text as UTF-8 bytes counts the same`);
  }
  const o200k = expected('o200k_base', corpus.text).length;
  t.equal(estimateClaudeTokens(corpus.text), Math.ceil(o200k * CLAUDE_TOKEN_FACTOR), 'the Claude estimate scales the exact o200k_base count');
});

t.test('count equals encode().length on slices of every size', async (t) => {
  const corpus = buildCorpus({ seed: 7, minBytes: 200_000 }).text;
  const random = prng(99);
  let checked = 0;
  for (const name of ENCODINGS) {
    for (let i = 0; i < 400; i++) {
      const start = Math.floor(random() * corpus.length);
      const text = corpus.slice(start, start + Math.floor(random() ** 3 * 5000));
      const n = addon.tokenCount(name, text);
      if (n !== addon.tokenEncode(name, text).length || n !== reference(name).count(text)) {
        t.fail(`${name}: count ${n} disagrees for ${JSON.stringify(text.slice(0, 80))}`);
      }
      checked++;
    }
  }
  t.pass(`${checked} slices`);
  t.equal(addon.tokenCount('o200k_base', ''), 0, 'empty text has no tokens');
  t.same(Array.from(addon.tokenEncode('o200k_base', new Uint8Array(0))), []);
});

// The native merge keeps recently merged pieces per thread (native/tokenizer_cache.h) and scans
// ranks a lane at a time: pieces that repeat, under both encodings in turn, at every length around
// the lane width, the cache's 54-byte limit and the 128-byte switch to the heap merge.
t.test('randomized odd Unicode with repeating pieces: addon = tiktoken = reference', async (t) => {
  const random = prng(4242);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const cp = (lo: number, hi: number) => String.fromCodePoint(lo + int(hi - lo + 1));
  const atoms: (() => string)[] = [
    () => cp(0x61, 0x7a) + (random() < 0.3 ? cp(0x300, 0x36f) : ''), // combining marks
    () => cp(0x4e00, 0x9fff), // CJK
    () => cp(0xac00, 0xd7a3), // Hangul
    () => cp(0x1f600, 0x1f64f) + '\u200d' + cp(0x1f466, 0x1f469) + (random() < 0.5 ? '\ufe0f' : ''), // emoji ZWJ
    () => cp(0x30, 0x39).repeat(1 + int(7)), // digit runs
    () => pick([' ', '\t', '\n', '\u3000', '\u00a0', '\r\n']).repeat(1 + int(6)), // whitespace runs
    () => pick(['\ud800', '\udfff', '\ud83d']), // lone surrogates
    () => pick(["'s", "'LL", "’re", "'ſ"]),
    () => cp(0x430, 0x44f),
  ];
  // A vocabulary of "words" of 1 to 60 atoms, reused so that pieces repeat.
  const words = Array.from({ length: 300 }, () => Array.from({ length: 1 + int(int(60) + 1) }, () => pick(atoms)()).join(''));
  let compared = 0;
  for (let round = 0; round < 60; round++) {
    const parts: string[] = [];
    for (let n = 50 + int(200); n > 0; n--) parts.push(pick(words), pick(['', ' ', ' ', '\n', '. ']));
    const text = parts.join('');
    for (const name of ENCODINGS) {
      const want = expected(name, text);
      const got = addon.tokenEncode(name, text);
      if (want.length !== got.length || want.some((id, k) => id !== got[k])) sameIds(t, name, got, want, `${name}: round ${round} addon vs tiktoken`);
      else compared++;
      if (addon.tokenCount(name, text) !== want.length) t.fail(`${name}: round ${round}: count differs from tiktoken's`);
      if (round % 10 === 0) sameIds(t, name, reference(name).encode(text), want, `${name}: round ${round} reference vs tiktoken`);
    }
  }
  t.equal(compared, 60 * ENCODINGS.length, 'every round equal to tiktoken under both encodings');
});

// Texts of 64 Ki units and more are cut into segments encoded on threads (native/tokenizer_parallel.cc),
// at points that must be piece boundaries whatever precedes them; a string's segments are converted
// to UTF-8 on their threads. Checked three ways: every cut is a boundary of the reference
// pre-tokenizer (in UTF-16 units of a string, bytes of a Uint8Array); the segments encoded one by
// one give tiktoken's ids for the whole; and the threaded path itself equals tiktoken on texts
// around its threshold, with the cut at the first and the last place it may be, and with none.
t.test('large texts are cut at piece boundaries and encoded on threads: addon = tiktoken', async (t) => {
  const splitPoints = (text: TokenizerInput, parts: number) => addon.tokenizerSplitPoints!(text, parts);
  const exclude = new Set(classDifferences().map((d) => d.codePoint));
  const raw = buildCorpus({ seed: 20240601, minBytes: 1_250_000, exclude }).text;
  const text = wellFormed(raw);
  const bytes = Buffer.from(text, 'utf8');
  const increasing = (ps: number[], size: number) => ps.every((p, i) => p > 0 && p < size && (i === 0 || p > ps[i - 1]!));
  const points = splitPoints(raw, 256);
  const bytePoints = splitPoints(bytes, 256);
  t.ok(points.length >= 200 && bytePoints.length >= 200, `${points.length} and ${bytePoints.length} of 255 cuts found in the corpus as a string and as bytes`);
  t.ok(increasing(points, text.length) && increasing(bytePoints, bytes.length), 'cuts are increasing offsets inside the text');
  t.same(splitPoints(text, 256), points, 'lone surrogates do not move the cuts (they are never next to one)');
  for (const name of ENCODINGS) {
    const units = new Set<number>();
    const octets = new Set<number>();
    let at = 0;
    let atByte = 0;
    for (const piece of new Splitter(name).pieces(text)) {
      units.add((at += piece.length));
      octets.add((atByte += Buffer.byteLength(piece)));
    }
    t.same(points.filter((p) => !units.has(p)), [], `${name}: all ${points.length} cuts of the string are piece boundaries of the reference pre-tokenizer`);
    t.same(bytePoints.filter((p) => !octets.has(p)), [], `${name}: all ${bytePoints.length} cuts of the bytes are piece boundaries too`);
    const want = expected(name, text);
    const ids: number[] = [];
    [0, ...points].forEach((p, i) => ids.push(...addon.tokenEncode(name, raw.slice(p, points[i] ?? raw.length))));
    sameIds(t, name, ids, want, `${name}: the ${points.length + 1} string segments encoded one by one vs tiktoken on the whole`);
    ids.length = 0;
    [0, ...bytePoints].forEach((p, i) => ids.push(...addon.tokenEncode(name, bytes.subarray(p, bytePoints[i] ?? bytes.length))));
    sameIds(t, name, ids, want, `${name}: the ${bytePoints.length + 1} byte segments encoded one by one vs tiktoken on the whole`);
  }

  const threads = addon.tokenizerInfo().encodeThreads ?? 1;
  t.ok(threads >= 1 && threads <= 4, `a large text is encoded on ${threads} thread(s)`);
  if (threads >= 2) t.ok(splitPoints(raw, threads).length > 0, 'the corpus is cut for the threads, so the corpus test above ran the threaded path');

  // No cut inside: digits, spaces and punctuation (no letter, no newline), exactly n units (ASCII:
  // as many bytes), so the cases below are the same as a string and as bytes.
  const filler = (n: number) => '12, '.repeat(Math.floor(n / 4)) + '.'.repeat(n % 4);
  const half = 32 * 1024;
  const cases: [string, string, number[]][] = [
    ['cut exactly at the half, before a space', filler(half - 1) + 'a ' + filler(half - 1), [half]],
    ['cut at the last unit', filler(2 * half - 2) + 'a!', [2 * half - 1]],
    ['cut after a newline, before a digit', filler(half) + '\n7' + filler(half - 2), [half + 1]],
    ['no cut before an apostrophe (a contraction may follow)', filler(half) + "\nIt's" + filler(half), [half + 5]],
    ['a cut only before the half: none', filler(half - 2) + 'a ' + filler(half), []],
    ['no place to cut', filler(100_003), []],
    ['one unit short of the threshold', filler(half - 1) + 'a ' + filler(half - 2), [half]],
  ];
  for (const [what, input, want] of cases) {
    // Two parts, as on a two-core machine.
    t.same(splitPoints(input, 2), want, `${what}: cut at ${JSON.stringify(want)}`);
    for (const name of ENCODINGS) {
      const ids = expected(name, input);
      sameIds(t, name, addon.tokenEncode(name, input), ids, `${name}: ${what} (${input.length} units), string`);
      sameIds(t, name, addon.tokenEncode(name, Buffer.from(input)), ids, `${name}: ${what}, bytes`);
      t.equal(addon.tokenCount(name, input), ids.length, `${name}: ${what}: count`);
    }
  }
  // Slices of the corpus around the threshold at random starts: strings (lone surrogates
  // included, converted on the threads), and bytes (cut mid-character too: the addon repairs as
  // TextDecoder does, and tiktoken gets the decoded text).
  const random = prng(2911);
  for (const size of [65535, 65536, 65537, 98304, 131073, 262147]) {
    const start = Math.floor(random() * (bytes.length - size));
    const slice = bytes.subarray(start, start + size);
    const str = raw.slice(start % (raw.length - size), (start % (raw.length - size)) + size);
    for (const name of ENCODINGS) {
      sameIds(t, name, addon.tokenEncode(name, slice), expected(name, slice), `${name}: ${size} bytes of the corpus from ${start}`);
      t.equal(addon.tokenCount(name, slice), expected(name, slice).length, `${name}: ${size} bytes from ${start}: count`);
      sameIds(t, name, addon.tokenEncode(name, str), expected(name, str), `${name}: ${size} units of the corpus string`);
      t.equal(addon.tokenCount(name, str), expected(name, str).length, `${name}: ${size} units of the corpus string: count`);
    }
  }
});

t.test('inputs above 64 KB are counted on the thread pool', async (t) => {
  const works: string[] = [];
  const hook = createHook({
    init(_id, type) {
      if (type === 'pinclaw:tokenCount') works.push(type);
    },
  }).enable();
  t.teardown(() => hook.disable());
  const tokenizer = getTokenizer('o200k_base');
  const big = buildCorpus({ seed: 3, minBytes: 300_000 }).text;
  t.ok(big.length > ASYNC_THRESHOLD);
  const pending = tokenizer.countAsync(big);
  t.equal(works.length, 1, 'one async work item queued');
  t.equal(await pending, tokenizer.count(big), 'same count as the synchronous path');
  t.equal(await tokenizer.countAsync(Buffer.from(big)), tokenizer.count(big), 'bytes too');
  t.equal(works.length, 2);
  const small = big.slice(0, 1000);
  t.equal(await tokenizer.countAsync(small), tokenizer.count(small));
  t.equal(works.length, 2, 'small inputs are counted in place');
  // The buffer may change while the worker counts: it works on its own copy.
  const bytes = Buffer.from(big);
  const counting = addon.tokenCountAsync('o200k_base', bytes);
  bytes.fill(0x20);
  t.equal(await counting, tokenizer.count(big));
  await t.rejects(Promise.resolve().then(() => addon.tokenCountAsync('o200k_base', 5 as unknown as string)), /text must be a string or a Uint8Array/);
  const ref = reference('o200k_base');
  t.equal(await ref.countAsync(big), tokenizer.count(big), 'the reference has an async path too (it yields between slices)');
});

t.test('lone surrogates are U+FFFD, as in tiktoken', async (t) => {
  const cases = ['a\ud800b', '\udc00', 'x\udc00\ud800y', '\ud83d', 'end\ud83d', "it'\ud800s", '\ud800\ud800 \udfff\udfff', '😀\ud800😀'];
  for (const name of ENCODINGS) {
    for (const text of cases) {
      const want = expected(name, text);
      sameIds(t, name, addon.tokenEncode(name, text), want, `${name} ${JSON.stringify(text)}`);
      t.same(reference(name).encode(text), Array.from(want));
      t.same(Array.from(addon.tokenEncode(name, text)), Array.from(addon.tokenEncode(name, text.replace(/[\ud800-\udfff]/gu, '\ufffd'))), 'same as writing U+FFFD');
    }
  }
});

// A string below 64 Ki units reaches C++ as UTF-16 and is converted there (native/tokenizer_utf8.cc),
// four ASCII units at a time where it can: every mix of ASCII and non-ASCII (2-, 3- and 4-byte
// UTF-8, lone surrogates) at every offset around the four-unit blocks gives the ids of its UTF-8
// bytes and tiktoken's ids.
t.test('short strings are converted to UTF-8 as TextEncoder does, at every offset', async (t) => {
  const others = ['é', 'ж', '中', '😀', '\ud800', '\udfff', '\ud83d', '\u3000', '\n', '٣'];
  const texts: string[] = ['', 'a', ' ', '7', '\ud800', 'abcd', 'abcdefgh', 'hello world  \t\n', '1234567890'];
  for (const other of others) {
    for (let before = 0; before <= 9; before++) {
      for (const after of [0, 1, 3, 4, 5, 8]) texts.push('the quick '.slice(0, before) + other + 'brown fox '.slice(0, after));
    }
  }
  const random = prng(17);
  for (let i = 0; i < 200; i++) {
    texts.push(Array.from({ length: Math.floor(random() * 40) }, () => (random() < 0.7 ? String.fromCharCode(0x20 + Math.floor(random() * 95)) : others[Math.floor(random() * others.length)]!)).join(''));
  }
  for (const name of ENCODINGS) {
    let bad = 0;
    for (const text of texts) {
      const want = expected(name, text);
      const got = addon.tokenEncode(name, text);
      const bytes = new TextEncoder().encode(text);
      if (want.length !== got.length || want.some((id, k) => id !== got[k]) || addon.tokenCount(name, text) !== want.length || addon.tokenCount(name, bytes) !== want.length) {
        bad++;
        sameIds(t, name, got, want, `${name} ${JSON.stringify(text)}`);
      }
    }
    t.equal(bad, 0, `${name}: ${texts.length} short strings give tiktoken's ids, as strings and as their TextEncoder bytes`);
  }
});

t.test('invalid UTF-8 bytes are read as TextDecoder reads them', async (t) => {
  const cases: number[][] = [
    [0xff],
    [0x61, 0x80, 0x62],
    [0xc0, 0x80], // overlong NUL
    [0xe0, 0x80, 0x80], // overlong
    [0xed, 0xa0, 0x80], // an encoded surrogate
    [0xf4, 0x90, 0x80, 0x80], // above U+10FFFF
    [0xe2, 0x82], // truncated at the end
    [0xf0, 0x9f, 0x98, 0x41], // truncated in the middle
    [0x27, 0xc5], // an apostrophe and half an ſ
    [0x20, 0xc3, 0x20, 0xa9, 0xc3, 0xa9],
  ];
  for (const name of ENCODINGS) {
    for (const c of cases) {
      const bytes = Uint8Array.from(c);
      const want = expected(name, bytes);
      sameIds(t, name, addon.tokenEncode(name, bytes), want, `${name} [${c.map((b) => b.toString(16)).join(' ')}]`);
      t.equal(addon.tokenCount(name, bytes), want.length);
      t.same(reference(name).encode(bytes), Array.from(want));
    }
  }
});

t.test('a quiet process frees the rank tables; the next count loads them again', async (t) => {
  const anon = () => Number(/^RssAnon:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]) / 1024;
  const text = 'The quick brown fox jumps over the lazy dog. '.repeat(50);
  const tok = getTokenizer('cl100k_base');
  const expected = tk('cl100k_base').encode_ordinary(text).length;
  t.equal(tok.count(text), expected);
  t.ok(addon.tokenizerInfo().loaded.includes('cl100k_base'));
  const loaded = anon();
  t.ok(releaseCaches().includes('tokenizer'), 'registered with the release of a quiet gateway');
  t.notOk(addon.tokenizerInfo().loaded.includes('cl100k_base'), 'the table is gone');
  (addon as unknown as { trimMemory(): boolean }).trimMemory();
  t.ok(anon() < loaded - 2, `RssAnon ${loaded.toFixed(1)} -> ${anon().toFixed(1)} MiB once the allocator gave it back`);
  t.throws(() => addon.tokenCount('cl100k_base', text), /cl100k_base is not loaded; call tokenizerLoad first/, 'the addon itself says so');
  t.equal(tok.count(text), expected, 'a tokenizer obtained before loads it again on its next count');
  t.same(Array.from(tok.encode(text)), tk('cl100k_base').encode_ordinary(text).slice(0));
  t.equal(await tok.countAsync(text), expected);
  // A count running on the thread pool keeps the table it started with.
  const big = text.repeat(60);
  t.ok(big.length > ASYNC_THRESHOLD);
  const running = addon.tokenCountAsync('cl100k_base', big);
  t.equal(addon.tokenizerUnload!('cl100k_base'), true);
  t.equal(addon.tokenizerUnload!('cl100k_base'), false, 'unloading twice: it was not loaded');
  t.equal(await running, tk('cl100k_base').encode_ordinary(big).length, 'the count in flight finished on its own reference');
  releaseTokenizers();
  t.equal(await tok.countAsync(big), tk('cl100k_base').encode_ordinary(big).length, 'and the async path reloads too');
  t.throws(() => addon.tokenizerUnload!('p50k_base'), /unknown encoding 'p50k_base'/);
  // The tests below use the addon directly, with both tables loaded.
  for (const e of ENCODINGS) getTokenizer(e).count('x');
});

t.test('unknown encodings and wrong arguments are errors that say what is wrong', async (t) => {
  t.throws(() => getTokenizer('gpt2'), UnknownEncodingError);
  t.throws(() => getTokenizer('gpt2'), /unknown encoding 'gpt2'; known: o200k_base, cl100k_base/);
  t.throws(() => addon.tokenCount('nope', 'x'), /unknown encoding 'nope'/);
  t.throws(() => loose.tokenCount!(1, 'x'), /encoding must be a string/);
  t.throws(() => loose.tokenCount!('o200k_base', 42), /tokenCount\(encoding: string, text: string \| Uint8Array\): text must be a string or a Uint8Array/);
  t.throws(() => loose.tokenEncode!('o200k_base', new Uint16Array(4)), /text must be a string or a Uint8Array/);
  t.throws(() => loose.tokenCount!('o200k_base'), /tokenCount\(encoding: string, text: string \| Uint8Array\)/);
  t.throws(() => loose.tokenizerLoad!('o200k_base', 5), /tokenizerLoad\(encoding: string, ranks: string\)/);
});

t.test('fuzz: random bytes and strings never crash the addon, and memory stays bounded', async (t) => {
  const { setFlagsFromString } = await import('node:v8');
  const { runInNewContext } = await import('node:vm');
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const random = prng(1234);
  const int = (n: number) => Math.floor(random() * n);
  const interesting = [0x20, 0x27, 0x0a, 0x0d, 0x09, 0x30, 0x41, 0x61, 0x73, 0x53, 0x17f, 0x301, 0xa0, 0x85, 0x3000, 0x4e00, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xfffd, 0xfeff, 0x200d];
  const randomString = () => {
    const units: number[] = [];
    for (let n = int(300); n > 0; n--) units.push(random() < 0.5 ? interesting[int(interesting.length)]! : int(0x10000));
    return String.fromCharCode(...units);
  };
  const randomBytes = () => {
    const b = new Uint8Array(int(600));
    for (let i = 0; i < b.length; i++) b[i] = random() < 0.3 ? [0x20, 0x27, 0x61, 0xc3, 0xe2, 0xf0, 0x80, 0xbf][int(8)]! : int(256);
    return b;
  };
  const round = async (iterations: number, compare: boolean) => {
    let mismatches = 0;
    for (let i = 0; i < iterations; i++) {
      const input: TokenizerInput = i % 2 ? randomString() : randomBytes();
      const name = ENCODINGS[i % 2]!;
      const ids = addon.tokenEncode(name, input);
      if (addon.tokenCount(name, input) !== ids.length) mismatches++;
      if (compare && i % 5 === 0) {
        const want = expected(name, input);
        if (want.length !== ids.length || want.some((id, k) => id !== ids[k])) mismatches++;
      }
      if (i % 50 === 0 && (await addon.tokenCountAsync(name, input)) !== ids.length) mismatches++;
    }
    return mismatches;
  };
  t.equal(await round(3000, true), 0, 'random input: count = encode().length = tiktoken');
  const rss = () => {
    gc();
    return process.memoryUsage().rss / 1048576;
  };
  const before = rss();
  t.equal(await round(20_000, false), 0);
  const after = rss();
  t.ok(after - before < 64, `RSS ${before.toFixed(0)} MiB → ${after.toFixed(0)} MiB over 20,000 random inputs`);
});

t.test('pinclaw tokens', async (t) => {
  const home = tempDir();
  const env = cleanEnv({ PINCLAW_HOME: home });
  const ok = (args: string[], input?: string) => {
    const r = runPinclaw(args, { env, input });
    t.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
    return r;
  };
  t.equal(ok(['tokens', '-'], 'hello world').stdout, '2\n');
  t.equal(ok(['tokens'], 'hello world\n').stdout, '3\n', 'stdin is the default');
  t.same(JSON.parse(ok(['--json', 'tokens', '-'], 'hello world').stdout), { encoding: 'o200k_base', tokens: 2 });
  const file = join(tempDir(), 'big.txt');
  const text = wellFormed(buildCorpus({ seed: 11, minBytes: 150_000 }).text);
  writeFileSync(file, text);
  for (const name of ENCODINGS) {
    const r = ok(['tokens', '--encoding', name, file]);
    t.equal(Number(r.stdout), expected(name, readFileSync(file, 'utf8')).length, `${name}: a 150 KB file, counted off the main thread`);
    t.equal(r.stderr, '');
  }
  const bad = join(tempDir(), 'bad.txt');
  writeFileSync(bad, Buffer.from([0x68, 0x69, 0xff, 0x20, 0xc3]));
  const b = ok(['tokens', bad]);
  t.equal(Number(b.stdout), expected('o200k_base', readFileSync(bad)).length);
  t.match(b.stderr, /bad\.txt is not valid UTF-8; each invalid sequence was counted as U\+FFFD/);

  const unknown = runPinclaw(['tokens', '--encoding', 'r50k_base', '-'], { env, input: 'x' });
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /unknown encoding 'r50k_base'; known: o200k_base, cl100k_base/);
  const missing = runPinclaw(['tokens', join(home, 'nope.txt')], { env });
  t.equal(missing.code, 1);
  t.match(missing.stderr, /cannot read .*nope\.txt: no such file/);
  t.equal(runPinclaw(['tokens', 'a', 'b'], { env }).code, 2, 'one file at most');

  const fallback = runPinclaw(['tokens', file], { env: cleanEnv({ PINCLAW_HOME: home, PINCLAW_NATIVE_ENABLED: 'false' }) });
  t.equal(fallback.code, 0);
  t.equal(Number(fallback.stdout), expected('o200k_base', text).length, 'without the addon the reference gives the same count');
  t.match(fallback.stderr, /counting tokens with the TypeScript reference/);
});
