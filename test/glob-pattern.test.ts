// Glob matching: the shell rules case by case, what a walk learns from a pattern, the limits,
// hostile patterns (right answers, never times), randomized comparisons with the two former
// matchers where they are right, and the glob and grep tools walking with a pattern.
import t from 'tap';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaults } from '../src/config/index.js';
import { fileTools } from '../src/tools/files/index.js';
import { compileGlob, MAX_BRACE_DEPTH, MAX_PATTERN_CHARS } from '../src/tools/files/pattern.js';
import { createRegistry } from '../src/tools/registry.js';
import { compileGlob as expandGlob } from './support/glob-expand-reference.js';
import { compileGlob as regexGlob } from './support/glob-regex-reference.js';
import { tempDir } from './support/proc.js';
import { prng } from './support/prng.js';

const m = (p: string, path: string) => compileGlob(p).match(path);

t.test('the shell rules', async (t) => {
  const table: [pattern: string, path: string, expected: boolean][] = [
    // * and ? within a segment, ** across segments
    ['*.ts', 'a.ts', true], ['*.ts', 'src/a.ts', false], ['?.ts', 'ab.ts', false], ['??.ts', 'ab.ts', true], ['a*b', 'a/b', false], ['a?b', 'a/b', false],
    ['**/*.ts', 'a.ts', true], ['**/*.ts', 'x/y/z/a.ts', true], ['src/**', 'src/a/b', true], ['src/**', 'src/', true], ['src/**', 'src', true],
    ['src/**', 'other/a', false], ['a/**/b', 'a/b', true], ['a/**/b', 'a/x/y/b', true], ['a/**/b', 'a/x/y/c', false], ['**', 'a/b/c', true],
    // ** only as a whole segment; otherwise it is *
    ['a**b', 'axyb', true], ['a**b', 'ax/yb', false], ['***/x', 'p/x', true], ['***/x', 'p/q/x', false], ['\\*\\*/x', '**/x', true], ['\\*\\*/x', 'p/x', false],
    // the dot rule
    ['.*', '.gitignore', true], ['*', '.gitignore', false], ['*.txt', '.txt', false], ['?foo', '.foo', false], ['[.]x', '.x', false],
    ['**/.env', 'app/.env', true], ['**/.env', '.env', true], ['.env', '.env', true], ['\\.env', '.env', true],
    ['**/*.ts', '.h/a.ts', false], ['**/*.ts', 'x/.a.ts', false], ['**/x', '.git/x', false], ['.git/**/x', '.git/a/x', true], ['**/.git/x', 'a/.git/x', true],
    // classes
    ['[abc].md', 'b.md', true], ['[abc].md', 'd.md', false], ['[!abc].md', 'd.md', true], ['[^abc].md', 'a.md', false], ['f[0-9].txt', 'f7.txt', true],
    ['f[0-9].txt', 'fx.txt', false], ['[]a].md', '].md', true], ['[a-].md', '-.md', true], ['[z-a]', 'm', true], ['[\\]]', ']', true], ['x[!a]y', 'x/y', false],
    // escapes, and unbalanced braces and brackets as literals
    ['\\*.md', '*.md', true], ['\\*.md', 'a.md', false], ['a\\{b}', 'a{b}', true], ['a{b', 'a{b', true], ['a[b', 'a[b', true], ['a}b', 'a}b', true],
    ['{a,b', '{a,b', true], ['{a,b', 'a', false], ['a,b', 'a,b', true], ['\\{a,b\\}', '{a,b}', true], ['\\{a,b\\}', 'a', false], ['a\\', 'a\\', true],
    ['[a{b,c}]', '[ab]', true], ['[a{b,c}]', 'a', false], ['[a{b,c}]', 'b', false], // a class does not reach across brace syntax, unlike bash
    ['a+b(c).txt', 'a+b(c).txt', true], ['a.txt', 'abtxt', false], ['$^.|', '$^.|', true], ['é/😀?', 'é/😀x', true], ['?', '😀', true],
    // alternatives
    ['src/{a,b}?.json', 'src/b1.json', true], ['src/{a,b}?.json', 'src/c1.json', false], ['{a,b/c}/x', 'b/c/x', true], ['{a,b/c}/x', 'b/x', false],
    ['{a,{b,c}d}', 'cd', true], ['{a,{b,c}d}', 'c', false], ['{a,{b,{c,d}}}x', 'dx', true], ['{a}', 'a', true], ['x{,y}z', 'xz', true], ['x{,y}z', 'xyz', true],
    ['{a\\,b,c}', 'a,b', true], ['{a\\,b,c}', 'c', true], ['{a\\,b,c}', 'a', false], ['*.{ts,tsx}', 'x.tsx', true], ['*.{ts,tsx}', 'x.js', false],
    // empty and '.' segments are dropped; a leading '/' is absolute and matches no relative path
    ['./src/*.ts', 'src/a.ts', true], ['src//a', 'src/a', true], ['a/./b', 'a/b', true], ['a/{.,x}/b', 'a/b', true], ['a/{.,x}/b', 'a/x/b', true], ['/a', 'a', false],
    // the three bugs of the regex compiler: the dot rule inside braces, ** inside braces
    ['{.a,.b}', '.a', true], ['{.a,.b}', '.b', true], ['{.a,.b}', 'a', false], ['{.a,b}', 'b', true], ['{*,.x}', '.x', true], ['{*,.x}', '.y', false],
    ['x/{.a,b}/y', 'x/.a/y', true], ['**/{.env,x}', 'app/.env', true], ['{.*,*}', '.x', true],
    ['{**,x}/y.ts', 'p/q/y.ts', true], ['src/{**/,}*.ts', 'src/a/b/c.ts', true], ['src/{**/,}*.ts', 'src/c.ts', true], ['a/{**}/b', 'a/x/y/b', true],
    ['{a,**}/z', 'p/q/z', true], ['{a,**}/z', '.p/z', false], ['{a,}**/x', 'p/q/x', true], ['{a,}**/x', '.p/q/x', false], ['{a,}**/x', 'ap/x', true],
  ];
  for (const [p, path, want] of table) t.equal(m(p, path), want, `${p} ${want ? 'matches' : 'does not match'} ${path}`);
});

t.test('how deep a walk must go, and whether hidden directories matter', async (t) => {
  const depth: [string, number][] = [
    ['*.md', 1], ['notes/*.md', 2], ['{a,b/c}', 2], ['a/{b,c/d}/e', 4], ['./src/*.ts', 2], ['a/./b', 2], ['a**b/c', 2], ['{x,y}', 1],
    ['**/x', Infinity], ['src/**', Infinity], ['{a,b/**}', Infinity], ['{a,}**/x', Infinity],
  ];
  for (const [p, want] of depth) {
    t.equal(compileGlob(p).maxDepth, want, `${p} spans at most ${want} segments`);
    t.equal(compileGlob(p).deep, want === Infinity, `${p} is ${want === Infinity ? '' : 'not '}deep`);
  }
  t.same(compileGlob('src/{a,b/c}/*.ts').segments, ['src', '{a,b/c}', '*.ts']);
  t.same(compileGlob('./src//x').segments, ['src', 'x']);
  t.same(compileGlob('a{b/c').segments, ['a{b', 'c'], 'an unbalanced brace does not hold the slash');
  t.equal(compileGlob('**/*.ts').dotted, false);
  t.equal(compileGlob('./**/*.ts').dotted, false, "a dropped '.' segment does not make hidden directories worth walking");
  t.equal(compileGlob('{x,.git}/*').dotted, true);
  t.equal(compileGlob('\\.env').dotted, true);
});

t.test('limits, each named with its value', async (t) => {
  t.throws(() => compileGlob('a'.repeat(MAX_PATTERN_CHARS + 1)), { name: 'Refused', message: /glob pattern limits.*1001 characters long; at most 1000/ });
  t.ok(m('a'.repeat(MAX_PATTERN_CHARS), 'a'.repeat(MAX_PATTERN_CHARS)), '1000 characters are fine');
  const nested = (n: number) => `${'{a,'.repeat(n)}b${'}'.repeat(n)}`;
  t.throws(() => compileGlob(nested(MAX_BRACE_DEPTH + 1)), { name: 'Refused', message: /glob pattern limits.*braces nest more than 10 deep \(level 11 opens at character 31\)/ });
  t.ok(m(nested(MAX_BRACE_DEPTH), 'b'), 'ten levels are fine');
  t.ok(m(`${'{'.repeat(50)}a`, `${'{'.repeat(50)}a`), 'unbalanced braces nest nothing: they are literal');
  // No limit on alternatives: braces are not expanded.
  const many = '{a,b}'.repeat(MAX_PATTERN_CHARS / 5);
  t.ok(m(many, 'ab'.repeat(100)), '2^200 alternatives');
  t.notOk(m(many, `${'ab'.repeat(99)}c`));
});

t.test('hostile patterns answer, and answer right', async (t) => {
  const name = 'a'.repeat(10_000);
  t.notOk(m(`${'*a'.repeat(10)}*b`, name), 'the 28 s backtracking case');
  t.ok(m(`${'*a'.repeat(10)}*`, name));
  t.ok(m(`${'*a'.repeat(10)}*b`, `${name}b`));
  t.ok(m(`${'**/'.repeat(50)}x`, `${'d/'.repeat(200)}x`));
  t.notOk(m(`${'**/'.repeat(50)}x`, `${'d/'.repeat(200)}y`));
  const nested = `${'{a,'.repeat(MAX_BRACE_DEPTH)}a${'}'.repeat(MAX_BRACE_DEPTH)}`;
  t.ok(m(nested, 'a'));
  t.notOk(m(nested, 'aa'));
  t.ok(m('?'.repeat(1000), 'q'.repeat(1000)));
  t.notOk(m('?'.repeat(1000), 'q'.repeat(999)));
  t.notOk(m('?'.repeat(1000), 'q'.repeat(1001)));
  t.ok(m(`${'*'.repeat(999)}z`, `${'y'.repeat(5000)}z`));
  // The case that took the brace-expanding matcher 11 s: 1,024 alternatives, each a table of ** × names.
  const segs = Array.from({ length: 16 }, () => 'a'.repeat(255)).join('/');
  const expanded = `${'{a,b}'.repeat(10)}/${'**/*a*a/'.repeat(118)}`;
  t.notOk(m(`${expanded}b`, `${'ab'.repeat(5)}/${segs}`));
  t.ok(m(`${expanded}b`, `${'ab'.repeat(5)}/${'aa/'.repeat(118)}b`));
  t.notOk(m(`${expanded}b`, `${'ab'.repeat(5)}/${'aa/'.repeat(117)}b`), 'each *a*a takes a name');
  t.ok(m('{*,**}/'.repeat(142).slice(0, -1), segs));
});

t.test('many different state sets (past the cache bound) still give the right answers', async (t) => {
  // `*a` then 20 `?`: the name's 21st character from the end is 'a'. A DFA for it needs 2^21
  // states, far past what the matcher caches, so most steps run uncached.
  const glob = compileGlob(`*a${'?'.repeat(20)}`);
  const rand = prng(5);
  let wrong = 0;
  let hits = 0;
  for (let i = 0; i < 60; i++) {
    const path = Array.from({ length: 1500 + Math.floor(rand() * 100) }, () => (rand() < 0.5 ? 'a' : 'b')).join('');
    const want = path[path.length - 21] === 'a';
    if (want) hits++;
    if (glob.match(path) !== want) wrong++;
  }
  t.equal(wrong, 0, `60 paths, ${hits} of them matching`);
  t.ok(hits > 10 && hits < 50, 'both answers were checked');
});

const rand = prng(9);
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
const randomPath = (chars: readonly string[], max: number) => Array.from({ length: Math.floor(rand() * (max + 1)) }, () => pick(chars)).join('');

t.test('random brace-free patterns agree with the regex compiler', async (t) => {
  const parts = ['a', 'b', '.', '*', '?', '/', '[ab]', '[!a]', '**/', 'ab'];
  const chars = ['a', 'b', '.', '/', 'c'];
  let matched = 0;
  let checked = 0;
  for (let i = 0; i < 3000; i++) {
    const p = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => pick(parts)).join('');
    if (p.startsWith('/')) continue;
    // A trailing `**` may match zero segments here (`x/**` matches `x`, as `a/**/b` matches `a/b`);
    // the regex compiler required one more level. Those patterns are compared in the table above.
    if (p.split('/').filter((seg) => seg !== '' && seg !== '.').at(-1) === '**') continue;
    const reference = regexGlob(p).regex;
    const ours = compileGlob(p);
    for (let j = 0; j < 20; j++) {
      const path = randomPath(chars, 8);
      if (path === '' || path.startsWith('/') || path.endsWith('/') || path.includes('//')) continue;
      checked++;
      const want = reference.test(path);
      if (ours.match(path) !== want) t.fail(`${p} on ${path}: expected ${want}`);
      if (want) matched++;
    }
  }
  t.ok(checked > 10_000 && matched > 500, `${checked} pairs compared, ${matched} matches among them`);
});

t.test('random patterns with braces agree with the brace-expanding matcher', async (t) => {
  const parts = [
    'a', 'b', '.', '*', '*', '?', '/', '[ab]', '[!a]', '[.]', '**', '{', '}', ',', '[', ']', '{a,b}', '{,.}', '{**,a}', '{/,}', '\\.', '\\*',
    'ab', '{.a,b/c}', '{a,{b,.}*}', 'é', '😀', '[a-c]', '[]a]', '[\\]]', '\\{', '\\,', '{a,\\}}', '{.,..}', '{[a],b}', '\\',
  ];
  const chars = ['a', 'b', '.', '/', 'c', '*', 'é', '😀', '{', '}', ',', '[', ']', '\\'];
  let matched = 0;
  let checked = 0;
  for (let i = 0; i < 3000; i++) {
    const p = Array.from({ length: 1 + Math.floor(rand() * 7) }, () => pick(parts)).join('');
    // A class across brace syntax is the one place the two differ by design (see the table).
    if (/\[[!^]?\]?[^\]]*[{},]/.test(p)) continue;
    const reference = expandGlob(p);
    const ours = compileGlob(p);
    if (ours.maxDepth !== reference.maxDepth) t.fail(`${p}: maxDepth ${ours.maxDepth}, expected ${reference.maxDepth}`);
    if (ours.dotted !== reference.dotted) t.fail(`${p}: dotted ${ours.dotted}, expected ${reference.dotted}`);
    for (let j = 0; j < 30; j++) {
      const path = randomPath(chars, 8);
      checked++;
      const want = reference.match(path);
      if (ours.match(path) !== want) t.fail(`${p} on ${path}: expected ${want}`);
      if (want) matched++;
    }
  }
  t.ok(checked > 60_000 && matched > 1000, `${checked} pairs compared, ${matched} matches among them`);
});

t.test('the glob and grep tools walk as deep as the pattern reaches, and refuse past a limit', async (t) => {
  const dir = tempDir('pinclaw-glob-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const p of ['src/a/1.ts', 'src/b/c/2.ts', 'src/b/3.ts', 'src/d/e/f/4.ts', '.a/x.md', '.b/y.md', '.c/z.md']) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), 'needle\n');
  }
  const reg = createRegistry(fileTools({ workspace: dir, settings: defaults().files }));
  const run = async (name: string, input: unknown) => (await reg.call({ name, input }, { sessionKey: 's', channel: 'test', chatId: 'c', caller: 'owner' })).result;

  t.equal((await run('glob', { pattern: 'src/{a,b/c}/*.ts' })).content, '2 paths match src/{a,b/c}/*.ts under .:\nsrc/a/1.ts\nsrc/b/c/2.ts', 'an alternative with a slash is walked to its depth');
  t.equal((await run('glob', { pattern: 'src/{**,x}/4.ts' })).content, '1 path matches src/{**,x}/4.ts under .:\nsrc/d/e/f/4.ts', '** inside braces walks all the way');
  t.equal((await run('glob', { pattern: '{.a,.b}/*' })).content, '2 paths match {.a,.b}/* under .:\n.a/x.md\n.b/y.md', 'dot names inside braces');
  t.equal((await run('glob', { pattern: './src/*/3.ts' })).content, '1 path matches ./src/*/3.ts under .:\nsrc/b/3.ts');
  t.equal((await run('grep', { pattern: 'needle', glob: 'src/{b/c,d/**}/*.ts' })).content, '2 matches in 2 files for /needle/ under . in files matching src/{b/c,d/**}/*.ts:\nsrc/b/c/2.ts:1:needle\nsrc/d/e/f/4.ts:1:needle');

  const deep = `${'{a,'.repeat(MAX_BRACE_DEPTH + 1)}b${'}'.repeat(MAX_BRACE_DEPTH + 1)}`;
  t.same(await run('glob', { pattern: deep }), {
    content: 'glob refused by rule "glob pattern limits": braces nest more than 10 deep (level 11 opens at character 31); write several simpler patterns',
    isError: true,
  });
  t.match(await run('grep', { pattern: 'x', glob: deep }), { content: /^grep refused by rule "glob pattern limits": braces nest more than 10 deep/, isError: true });
});
