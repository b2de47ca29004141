// Glob matching: the shell rules case by case, the limits, hostile patterns, and a randomized
// comparison with the former regex compiler where that one is right.
import t from 'tap';
import { compileGlob, MAX_ALTERNATIVES, MAX_BRACE_DEPTH, MAX_PATTERN_CHARS } from '../src/tools/files/pattern.js';
import { compileGlob as regexGlob } from './support/glob-regex-reference.js';
import { prng } from './support/prng.js';

const m = (p: string, path: string) => compileGlob(p).match(path);

t.test('the shell rules', async (t) => {
  const table: [pattern: string, path: string, expected: boolean][] = [
    ['*.ts', 'a.ts', true], ['*.ts', 'src/a.ts', false], ['?.ts', 'ab.ts', false], ['??.ts', 'ab.ts', true],
    ['**/*.ts', 'a.ts', true], ['**/*.ts', 'x/y/z/a.ts', true], ['**/*.ts', '.h/a.ts', false], ['**/*.ts', 'x/.a.ts', false],
    ['src/**', 'src/a/b', true], ['src/**', 'src/', true], ['src/**', 'src', true], ['src/**', 'other/a', false], ['a/**/b', 'a/b', true], ['a/**/b', 'a/x/y/b', true],
    ['.*', '.gitignore', true], ['*', '.gitignore', false], ['*.txt', '.txt', false], ['**/.env', 'app/.env', true], ['.env', '.env', true],
    ['[abc].md', 'b.md', true], ['[abc].md', 'd.md', false], ['[!abc].md', 'd.md', true], ['[^abc].md', 'a.md', false], ['f[0-9].txt', 'f7.txt', true],
    ['f[0-9].txt', 'fx.txt', false], ['[]a].md', '].md', true], ['[a-].md', '-.md', true], ['[.]x', '.x', false], ['[z-a]', 'm', true],
    ['\\*.md', '*.md', true], ['\\*.md', 'a.md', false], ['a\\{b}', 'a{b}', true], ['a{b', 'a{b', true], ['a[b', 'a[b', true],
    ['a+b(c).txt', 'a+b(c).txt', true], ['a.txt', 'abtxt', false], ['$^.|', '$^.|', true],
    ['src/{a,b}?.json', 'src/b1.json', true], ['src/{a,b}?.json', 'src/c1.json', false], ['{a,b/c}/x', 'b/c/x', true], ['{a,b/c}/x', 'b/x', false],
    ['{a,{b,c}d}', 'cd', true], ['{a,{b,c}d}', 'c', false], ['{a}', 'a', true], ['x{,y}z', 'xz', true], ['x{,y}z', 'xyz', true],
    // The three bugs of the regex compiler:
    ['{.a,.b}', '.a', true], ['{.a,.b}', '.b', true], ['{.a,b}', 'b', true], ['{*,.x}', '.x', true], ['{*,.x}', '.y', false],
    ['{**,x}/y.ts', 'p/q/y.ts', true], ['src/{**/,}*.ts', 'src/a/b/c.ts', true], ['src/{**/,}*.ts', 'src/c.ts', true],
    ['é/😀?', 'é/😀x', true], ['?', '😀', true],
  ];
  for (const [p, path, want] of table) t.equal(m(p, path), want, `${p} ${want ? 'matches' : 'does not match'} ${path}`);
});

t.test('how deep a walk must go, and whether hidden directories matter', async (t) => {
  t.equal(compileGlob('*.md').maxDepth, 1);
  t.equal(compileGlob('notes/*.md').maxDepth, 2);
  t.equal(compileGlob('{a,b/c}').maxDepth, 2, 'an alternative with a slash counts its segments');
  t.equal(compileGlob('{a,b/**}').maxDepth, Infinity, '** inside braces is **');
  t.equal(compileGlob('**/x').maxDepth, Infinity);
  t.same(compileGlob('src/{a,b/c}/*.ts').segments, ['src', '{a,b/c}', '*.ts']);
  t.equal(compileGlob('**/*.ts').dotted, false);
  t.equal(compileGlob('{x,.git}/*').dotted, true);
});

t.test('limits, each named', async (t) => {
  t.throws(() => compileGlob('a'.repeat(MAX_PATTERN_CHARS + 1)), { name: 'Refused', message: /glob pattern limits.*1001 characters long; at most 1000/ });
  const nested = `${'{a,'.repeat(MAX_BRACE_DEPTH + 1)}b${'}'.repeat(MAX_BRACE_DEPTH + 1)}`;
  t.throws(() => compileGlob(nested), { message: /nests braces more than 10 deep/ });
  t.ok(m(`${'{a,'.repeat(MAX_BRACE_DEPTH)}b${'}'.repeat(MAX_BRACE_DEPTH)}`, 'b'), 'ten levels are fine');
  t.throws(() => compileGlob('{a,b}'.repeat(11)), { message: new RegExp(`more than ${MAX_ALTERNATIVES} alternatives`) });
  t.ok(m('{a,b}'.repeat(10), 'ab'.repeat(5)), '1024 alternatives are fine');
});

t.test('hostile patterns answer, and answer right', async (t) => {
  const name = 'a'.repeat(10_000);
  t.notOk(m(`${'*a'.repeat(10)}*b`, name));
  t.ok(m(`${'*a'.repeat(10)}*`, name));
  t.ok(m(`${'*a'.repeat(10)}*b`, `${name}b`));
  t.ok(m(`${'**/'.repeat(50)}x`, `${'d/'.repeat(200)}x`));
  t.notOk(m(`${'**/'.repeat(50)}x`, `${'d/'.repeat(200)}y`));
  t.ok(m('?'.repeat(1000), 'q'.repeat(1000)));
  t.notOk(m('?'.repeat(1000), 'q'.repeat(999)));
  t.ok(m(`${'*'.repeat(999)}z`, `${'y'.repeat(5000)}z`));
});

t.test('random brace-free patterns agree with the regex compiler', async (t) => {
  const rand = prng(9);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const parts = ['a', 'b', '.', '*', '?', '/', '[ab]', '[!a]', '**/', 'ab'];
  const chars = ['a', 'b', '.', '/', 'c'];
  let matched = 0;
  let checked = 0;
  for (let i = 0; i < 3000; i++) {
    const p = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => pick(parts)).join('');
    if (p.startsWith('/') || p.split('/').includes('..')) continue;
    // A trailing `**` may match zero segments here (`x/**` matches `x`, as `a/**/b` matches `a/b`);
    // the regex compiler required one more level. Those patterns are compared in the table above.
    if (p.split('/').filter((seg) => seg !== '' && seg !== '.').at(-1) === '**') continue;
    const reference = regexGlob(p).regex;
    const ours = compileGlob(p);
    for (let j = 0; j < 20; j++) {
      const path = Array.from({ length: 1 + Math.floor(rand() * 8) }, () => pick(chars)).join('');
      if (path.startsWith('/') || path.endsWith('/') || path.includes('//')) continue;
      checked++;
      const want = reference.test(path);
      if (ours.match(path) !== want) t.fail(`${p} on ${path}: expected ${want}`);
      if (want) matched++;
    }
  }
  t.ok(checked > 10_000 && matched > 500, `${checked} pairs compared, ${matched} matches among them`);
});
