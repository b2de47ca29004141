// The workspace file tools on real temporary directories, called through the registry as the model
// calls them: normal behaviour, confinement (`..`, absolute paths, symlinks out for reads and writes,
// read-only roots), caps with their notes, schema violations, and file-system errors as results.
import t, { type Test } from 'tap';
import { chmodSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { defaults } from '../src/config/index.js';
import { resolvePaths } from '../src/paths.js';
import { tryLockHome } from '../src/store/home-lock.js';
import { builtinTools } from '../src/tools/builtin.js';
import { ConfigError } from '../src/errors.js';
import { compileGlob } from '../src/tools/files/pattern.js';
import { fileTools, type FilesSettings } from '../src/tools/files/index.js';
import { readFileTool } from '../src/tools/files/read_file.js';
import { createPolicy } from '../src/tools/policy.js';
import { createRegistry } from '../src/tools/registry.js';
import type { ToolContext, ToolResult } from '../src/tools/types.js';
import { lockFromChild } from './support/lock-child.js';
import { cleanEnv, runPinclawAsync, tempDir } from './support/proc.js';

const ctx: ToolContext = { sessionKey: 's1', channel: 'test', chatId: 'c1', caller: 'owner' };

interface Fixture {
  dir: string;
  ws: string;
  outside: string;
  run(name: string, input: unknown): Promise<ToolResult>;
}

/** A workspace and, beside it, a directory the tools must never reach. */
function fixture(t: Test, files: Partial<FilesSettings> = {}): Fixture {
  const dir = tempDir('pinclaw-files-');
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const ws = join(dir, 'workspace');
  const outside = join(dir, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'top secret\n');
  const reg = createRegistry(fileTools({ workspace: ws, settings: { ...defaults().files, ...files } }));
  return { dir, ws, outside, run: async (name, input) => (await reg.call({ name, input }, ctx)).result };
}

const lines = (n: number, make: (i: number) => string) => Array.from({ length: n }, (_, i) => make(i + 1)).join('\n') + '\n';

t.test('read_file: numbered lines, offset and limit, where to continue', async (t) => {
  const f = fixture(t);
  writeFileSync(join(f.ws, 'poem.txt'), 'one\ntwo\nthree\nfour\nfive');
  t.same(await f.run('read_file', { path: 'poem.txt' }), { content: '     1\tone\n     2\ttwo\n     3\tthree\n     4\tfour\n     5\tfive' }, 'cat -n format; a last line without newline counts');
  t.same(await f.run('read_file', { path: 'poem.txt', offset: 2, limit: 2 }), { content: '     2\ttwo\n     3\tthree\n[lines 2-3 shown; more follow: continue with offset=4]' });
  t.same(await f.run('read_file', { path: 'poem.txt', offset: 4, limit: 2 }), { content: '     4\tfour\n     5\tfive' }, 'no note when the end is reached');
  t.same(await f.run('read_file', { path: 'poem.txt', offset: 9 }), { content: '(poem.txt has 5 lines; offset 9 is past the end)' });

  writeFileSync(join(f.ws, 'empty.txt'), '');
  t.same(await f.run('read_file', { path: 'empty.txt' }), { content: '(empty.txt is empty)' });
  writeFileSync(join(f.ws, 'nl.txt'), 'a\n\nb\n');
  t.equal((await f.run('read_file', { path: 'nl.txt' })).content, '     1\ta\n     2\t\n     3\tb', 'a final newline adds no empty line; inner empty lines stay');

  mkdirSync(join(f.ws, 'sub'));
  writeFileSync(join(f.ws, 'sub', 'deep.md'), 'é ü 雪\n');
  t.same(await f.run('read_file', { path: 'sub/../sub/deep.md' }), { content: '     1\té ü 雪' }, "'..' that stays inside is fine");
  t.same(await f.run('read_file', { path: join(f.ws, 'sub', 'deep.md') }), { content: '     1\té ü 雪' }, 'an absolute path inside the workspace is fine');
  t.same(await f.run('read_file', { path: 'sub' }), { content: 'read_file sub: is a directory; list it with list_dir', isError: true });
  t.same(await f.run('read_file', { path: 'missing.txt' }), { content: 'read_file missing.txt: no such file or directory', isError: true });
});

t.test('read_file: binary files are refused, bytes are capped at files.maxReadBytes', async (t) => {
  const f = fixture(t, { maxReadBytes: 1024 });
  writeFileSync(join(f.ws, 'image.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
  t.same(await f.run('read_file', { path: 'image.png' }), {
    content: 'read_file refused by rule "text files only": image.png looks binary (it has a NUL byte in its first 8 KB); read_file shows text only',
    isError: true,
  });

  // 100 lines of 40 characters: each numbered line is 48 bytes with its newline, so 21 fit in 1024.
  writeFileSync(join(f.ws, 'long.txt'), lines(100, (i) => `line ${String(i).padStart(3, '0')} ${'x'.repeat(31)}`));
  const r = await f.run('read_file', { path: 'long.txt' });
  const shown = r.content.split('\n');
  t.equal(shown.length, 22);
  t.equal(shown[20], `    21\tline 021 ${'x'.repeat(31)}`);
  t.equal(shown[21], '[lines 1-21 shown, stopped at files.maxReadBytes (1024 bytes); continue with offset=22]');
  t.ok(Buffer.byteLength(shown.slice(0, 21).join('\n')) <= 1024, 'the lines shown stay within the cap');
  const next = await f.run('read_file', { path: 'long.txt', offset: 22, limit: 3 });
  t.equal(next.content.split('\n')[0], `    22\tline 022 ${'x'.repeat(31)}`, 'continuing where the note said');

  writeFileSync(join(f.ws, 'one-line.min.js'), `${'ab'.repeat(2000)}\nshort\n`);
  const cut = await f.run('read_file', { path: 'one-line.min.js' });
  t.match(cut.content, /^ {5}1\t(ab)+a?\n\[line 1 is longer than files\.maxReadBytes \(1024 bytes\); only its start is shown; the next line is offset=2\]$/);
  t.ok(Buffer.byteLength(cut.content.split('\n')[0]!) <= 1024);
});

t.test('write_file: parents created, atomic, size reported, mode kept, capped', async (t) => {
  const f = fixture(t, { maxWriteBytes: 64 });
  t.same(await f.run('write_file', { path: 'notes/2025/today.md', content: 'hello\nwörld\n' }), { content: 'wrote 13 bytes to notes/2025/today.md (new file)' });
  t.equal(readFileSync(join(f.ws, 'notes/2025/today.md'), 'utf8'), 'hello\nwörld\n');
  t.equal(statSync(join(f.ws, 'notes/2025/today.md')).mode & 0o777, 0o644);

  chmodSync(join(f.ws, 'notes/2025/today.md'), 0o600);
  t.same(await f.run('write_file', { path: 'notes/2025/today.md', content: 'bye' }), { content: 'wrote 3 bytes to notes/2025/today.md (replaced 13 bytes)' });
  t.equal(readFileSync(join(f.ws, 'notes/2025/today.md'), 'utf8'), 'bye');
  t.equal(statSync(join(f.ws, 'notes/2025/today.md')).mode & 0o777, 0o600, 'a replaced file keeps its mode');
  t.same(readdirSync(join(f.ws, 'notes/2025')), ['today.md'], 'no temporary file is left behind');

  const big = await f.run('write_file', { path: 'big.txt', content: 'x'.repeat(65) });
  t.same(big, { content: 'write_file refused by rule "files.maxWriteBytes": the content is 65 bytes, more than files.maxWriteBytes (64)', isError: true });
  t.notOk(existsSync(join(f.ws, 'big.txt')));
  t.same(await f.run('write_file', { path: 'notes', content: 'x' }), { content: 'write_file notes: is a directory', isError: true });

  // edit_file rewrites the whole file, so the same cap holds before and after the edit.
  writeFileSync(join(f.ws, 'sixty.txt'), 'y'.repeat(60));
  t.same(await f.run('edit_file', { path: 'sixty.txt', old_string: 'y', new_string: 'yy', replace_all: true }), { content: 'edit_file refused by rule "files.maxWriteBytes": the edited file would be 120 bytes, more than files.maxWriteBytes (64)', isError: true });
  t.equal(readFileSync(join(f.ws, 'sixty.txt'), 'utf8'), 'y'.repeat(60));
  writeFileSync(join(f.ws, 'hundred.txt'), 'z'.repeat(100));
  t.same(await f.run('edit_file', { path: 'hundred.txt', old_string: 'zz', new_string: 'z', replace_all: true }), { content: 'edit_file refused by rule "files.maxWriteBytes": hundred.txt is 100 bytes, more than files.maxWriteBytes (64)', isError: true });
});

t.test('edit_file: exactly one match, or replace_all; counts in the errors', async (t) => {
  const f = fixture(t);
  const file = join(f.ws, 'config.ini');
  writeFileSync(file, 'name = pi\nport = 80\nport = 81\n# port\n');
  t.same(await f.run('edit_file', { path: 'config.ini', old_string: 'name = pi', new_string: 'name = $& and $1' }), { content: 'edited config.ini: replaced 1 occurrence (line 1)' });
  t.equal(readFileSync(file, 'utf8'), 'name = $& and $1\nport = 80\nport = 81\n# port\n', 'replacement text is taken literally');

  const several = await f.run('edit_file', { path: 'config.ini', old_string: 'port', new_string: 'socket' });
  t.same(several, { content: 'edit_file config.ini: old_string was found 3 times (lines 2, 3, 4); it must match exactly once: include more surrounding text to make it unique, or set replace_all', isError: true });
  const none = await f.run('edit_file', { path: 'config.ini', old_string: 'port = 8080', new_string: 'x' });
  t.same(none, { content: 'edit_file config.ini: old_string was found 0 times; it must match exactly, whitespace and indentation included (read the file again to see its current text)', isError: true });
  t.equal(readFileSync(file, 'utf8'), 'name = $& and $1\nport = 80\nport = 81\n# port\n', 'a refused edit changes nothing');

  t.same(await f.run('edit_file', { path: 'config.ini', old_string: 'port = 81\n', new_string: '' }), { content: 'edited config.ini: replaced 1 occurrence (line 3)' }, 'context makes it unique; new_string may be empty');
  t.same(await f.run('edit_file', { path: 'config.ini', old_string: 'port', new_string: 'socket', replace_all: true }), { content: 'edited config.ini: replaced 2 occurrences (lines 2, 3)' });
  t.equal(readFileSync(file, 'utf8'), 'name = $& and $1\nsocket = 80\n# socket\n');

  t.same(await f.run('edit_file', { path: 'config.ini', old_string: 'a', new_string: 'a' }), { content: 'edit_file: old_string and new_string are the same; nothing to change', isError: true });
  t.same(await f.run('edit_file', { path: 'nope.ini', old_string: 'a', new_string: 'b' }), { content: 'edit_file nope.ini: no such file; create it with write_file', isError: true });
  writeFileSync(join(f.ws, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  t.match(await f.run('edit_file', { path: 'latin1.txt', old_string: 'caf', new_string: 'CAF' }), { content: /^edit_file refused by rule "text files only": latin1\.txt is not valid UTF-8/, isError: true });
  t.same(readFileSync(join(f.ws, 'latin1.txt')), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
});

t.test('list_dir: type and size, directories first, symlinks say where they lead', async (t) => {
  const f = fixture(t, { maxResults: 4 });
  writeFileSync(join(f.ws, 'b.txt'), '12345');
  writeFileSync(join(f.ws, 'a.md'), '');
  mkdirSync(join(f.ws, 'zdir'));
  mkdirSync(join(f.ws, 'adir'));
  symlinkSync('b.txt', join(f.ws, 'c-link'));
  symlinkSync(f.outside, join(f.ws, 'd-out'));
  const r = await f.run('list_dir', {});
  t.equal(r.content, [
    '.: 2 directories, 2 files, 2 links; the first 4 are shown (files.maxResults)',
    'dir   adir/',
    'dir   zdir/',
    'file  a.md (0 bytes)',
    'file  b.txt (5 bytes)',
  ].join('\n'));
  const f2 = fixture(t);
  symlinkSync(f2.outside, join(f2.ws, 'out'));
  symlinkSync('missing', join(f2.ws, 'broken'));
  writeFileSync(join(f2.ws, 'x'), 'abc');
  symlinkSync('x', join(f2.ws, 'in'));
  t.equal((await f2.run('list_dir', { path: '.' })).content, [
    '.: 1 file, 3 links',
    'link  broken -> missing (dangling)',
    'link  in -> x (3 bytes)',
    `link  out -> ${f2.outside} (leads outside the roots; the file tools will not follow it)`,
    'file  x (3 bytes)',
  ].join('\n'));
  mkdirSync(join(f2.ws, 'empty'));
  t.same(await f2.run('list_dir', { path: 'empty' }), { content: 'empty: empty directory' });
  t.same(await f2.run('list_dir', { path: 'x' }), { content: 'list_dir x: not a directory; read it with read_file', isError: true });
});

t.test('glob patterns compile to the shell rules', async (t) => {
  const m = (p: string, path: string) => compileGlob(p).match(path);
  t.ok(m('**/*.ts', 'a.ts') && m('**/*.ts', 'src/x/a.ts'));
  t.notOk(m('*.ts', 'src/a.ts'), '* stays within a segment');
  t.notOk(m('**/*.ts', '.hidden/a.ts') || m('**/*.ts', 'src/.a.ts'), 'wildcards skip dot names');
  t.ok(m('**/.env', 'app/.env') && m('.*', '.gitignore'));
  t.ok(m('src/{a,b}?.json', 'src/b1.json') && !m('src/{a,b}?.json', 'src/c1.json'));
  t.ok(m('[!x]*.md', 'a.md') && !m('[!x]*.md', 'x.md') && m('file[0-9].txt', 'file7.txt'));
  t.ok(m('docs/**', 'docs/a/b.md') && !m('docs/**', 'other/a.md'));
  t.ok(m('a+b(c).txt', 'a+b(c).txt') && !m('a.txt', 'abtxt'), 'regex characters are literal');
});

t.test('glob: matches sorted and relative, symlinked directories followed only inside', async (t) => {
  const f = fixture(t);
  for (const p of ['src/a.ts', 'src/lib/b.ts', 'src/lib/c.js', 'test/a.test.ts', 'top.ts', '.hidden/h.ts', 'notes/x.md']) {
    mkdirSync(join(f.ws, p, '..'), { recursive: true });
    writeFileSync(join(f.ws, p), p);
  }
  writeFileSync(join(f.outside, 'leak.ts'), 'outside');
  symlinkSync(f.outside, join(f.ws, 'src', 'out-link'));
  symlinkSync(join(f.ws, 'notes'), join(f.ws, 'src', 'notes-link'));
  symlinkSync(join(f.ws, 'src'), join(f.ws, 'src', 'lib', 'loop'));

  const all = await f.run('glob', { pattern: '**/*.ts' });
  t.equal(all.content, [
    '4 paths match **/*.ts under .:',
    'src/a.ts',
    'src/lib/b.ts',
    'test/a.test.ts',
    'top.ts',
    '[1 symlink leading outside the roots not followed]',
  ].join('\n'), 'the link out is not followed, the loop back to src is not entered again, .hidden is skipped');
  t.equal((await f.run('glob', { pattern: '*.ts' })).content, '1 path matches *.ts under .:\ntop.ts');
  t.equal((await f.run('glob', { pattern: 'src/*' })).content, [
    '3 paths match src/* under .:', 'src/a.ts', 'src/lib/', 'src/notes-link/', '[1 symlink leading outside the roots not followed]',
  ].join('\n'), 'directories end in /; a link inside the roots is listed');
  t.equal((await f.run('glob', { pattern: '**/*.md', path: 'src' })).content, '1 path matches **/*.md under src:\nsrc/notes-link/x.md\n[1 symlink leading outside the roots not followed]');
  t.equal((await f.run('glob', { pattern: '.hidden/*' })).content, '1 path matches .hidden/* under .:\n.hidden/h.ts');
  t.same(await f.run('glob', { pattern: 'nothing/*.py' }), { content: 'no paths match nothing/*.py under .' });

  t.same(await f.run('glob', { pattern: 'src/out-link/*.ts' }), {
    content: `glob refused by rule "no symlink leading out": ${join(f.ws, 'src', 'out-link')} resolves through a symlink to ${f.outside}, outside the roots; the file tools reach only the workspace, files.roots and files.readOnlyRoots`,
    isError: true,
  });
  t.match(await f.run('glob', { pattern: '../outside/*' }), { content: /^glob refused by rule "no '\.\.' escape"/, isError: true });
  t.match(await f.run('glob', { pattern: '/etc/*' }), { content: /^glob refused by rule "no absolute path outside the roots"/, isError: true });
  t.match(await f.run('glob', { pattern: '*', path: '..' }), { content: /^glob refused by rule "no '\.\.' escape": \.\. leads out of the workspace/, isError: true });
});

t.test('glob: results capped at files.maxResults with a note', async (t) => {
  const f = fixture(t, { maxResults: 3 });
  for (let i = 0; i < 10; i++) writeFileSync(join(f.ws, `f${i}.txt`), '');
  t.equal((await f.run('glob', { pattern: '*.txt' })).content, 'the first 3 of 10 paths matching *.txt under . (files.maxResults); narrow the pattern or path:\nf0.txt\nf1.txt\nf2.txt');
});

t.test('grep: regex or literal, glob filter, file:line:text, skips and caps', async (t) => {
  const f = fixture(t, { maxSearchBytes: 2048 });
  mkdirSync(join(f.ws, 'src'));
  mkdirSync(join(f.ws, 'node_modules', 'dep'), { recursive: true });
  mkdirSync(join(f.ws, '.git'));
  writeFileSync(join(f.ws, 'src', 'a.ts'), 'const port = 80;\n// TEMP value\nexport const host = "pi";\n');
  writeFileSync(join(f.ws, 'src', 'b.md'), 'The port is (80).\r\n');
  writeFileSync(join(f.ws, 'node_modules', 'dep', 'index.js'), 'port');
  writeFileSync(join(f.ws, '.git', 'config'), 'port');
  writeFileSync(join(f.ws, 'blob.bin'), Buffer.from('port\0port'));
  writeFileSync(join(f.ws, 'huge.log'), 'port\n'.repeat(1000));
  symlinkSync(join(f.outside, 'secret.txt'), join(f.ws, 'secret-link.txt'));
  writeFileSync(join(f.outside, 'secret.txt'), 'port of the outside\n');

  t.equal((await f.run('grep', { pattern: 'port\\b' })).content, [
    '3 matches in 2 files for /port\\b/ under .:',
    'src/a.ts:1:const port = 80;',
    'src/a.ts:3:export const host = "pi";',
    'src/b.md:1:The port is (80).',
    '[1 binary file skipped; 1 file larger than files.maxSearchBytes (2048 bytes) skipped]',
    '[1 symlink leading outside the roots not followed]',
  ].join('\n'), 'node_modules, hidden entries, the binary, the huge file and the link out are not searched');
  t.equal((await f.run('grep', { pattern: '(80)', literal: true })).content, '1 match in 1 file for "(80)" under .:\nsrc/b.md:1:The port is (80).\n[1 binary file skipped; 1 file larger than files.maxSearchBytes (2048 bytes) skipped]\n[1 symlink leading outside the roots not followed]');
  t.equal((await f.run('grep', { pattern: 'temp', ignore_case: true, glob: '*.ts' })).content, '1 match in 1 file for /temp/ (ignoring case) under . in files matching *.ts:\nsrc/a.ts:2:// TEMP value\n[1 symlink leading outside the roots not followed]');
  t.equal((await f.run('grep', { pattern: 'port', glob: 'src/*.md' })).content, '1 match in 1 file for /port/ under . in files matching src/*.md:\nsrc/b.md:1:The port is (80).\n[1 symlink leading outside the roots not followed]');
  t.equal((await f.run('grep', { pattern: 'host', path: 'src/a.ts' })).content, '1 match in 1 file for /host/ under src/a.ts:\nsrc/a.ts:3:export const host = "pi";', 'a single file');
  t.equal((await f.run('grep', { pattern: 'port', path: '.git' })).content, '1 match in 1 file for /port/ under .git:\n.git/config:1:port', 'a hidden directory named by path is searched');
  t.same(await f.run('grep', { pattern: 'nowhere' , path: 'src' }), { content: 'no matches for /nowhere/ under src' });
  t.match(await f.run('grep', { pattern: 'a(b' }), { content: /^grep: invalid regular expression: .*; set literal to search for the text as it is$/, isError: true });
  t.match(await f.run('grep', { pattern: 'port', path: 'secret-link.txt' }), { content: /^grep refused by rule "no symlink leading out"/, isError: true });

  // A FIFO would block a read forever: read_file refuses it, grep passes it by.
  execFileSync('mkfifo', [join(f.ws, 'src', 'pipe')]);
  t.same(await f.run('read_file', { path: 'src/pipe' }), { content: 'read_file refused by rule "regular files only": src/pipe is not a regular file', isError: true });
  t.same(await f.run('write_file', { path: 'src/pipe', content: 'x' }), { content: 'write_file refused by rule "regular files only": src/pipe exists and is not a regular file', isError: true });
  t.equal((await f.run('grep', { pattern: 'host', path: 'src' })).content, '1 match in 1 file for /host/ under src:\nsrc/a.ts:3:export const host = "pi";');

  const capped = fixture(t, { maxResults: 2 });
  writeFileSync(join(capped.ws, 'many.txt'), 'hit\n'.repeat(5));
  t.equal((await capped.run('grep', { pattern: 'hit' })).content, 'stopped at 2 matches (files.maxResults) for /hit/ under .; narrow the pattern, path or glob:\nmany.txt:1:hit\nmany.txt:2:hit');
});

t.test('confinement: `..`, absolute paths and symlinks that lead out are refused, naming the rule', async (t) => {
  const f = fixture(t);
  const secret = join(f.outside, 'secret.txt');
  const outsideRule = 'the file tools reach only the workspace, files.roots and files.readOnlyRoots';
  t.same(await f.run('read_file', { path: '../outside/secret.txt' }), { content: `read_file refused by rule "no '..' escape": ../outside/secret.txt leads out of the workspace through '..'; ${outsideRule}`, isError: true });
  t.same(await f.run('read_file', { path: secret }), { content: `read_file refused by rule "no absolute path outside the roots": ${secret} is outside the workspace and the configured roots; ${outsideRule}`, isError: true });
  t.match(await f.run('list_dir', { path: '/etc' }), { content: /^list_dir refused by rule "no absolute path outside the roots"/, isError: true });
  t.match(await f.run('write_file', { path: 'a/../../escape.txt', content: 'x' }), { content: /^write_file refused by rule "no '\.\.' escape"/, isError: true });
  t.notOk(existsSync(join(f.dir, 'escape.txt')));

  // Reading through a symlinked file and a symlinked directory.
  symlinkSync(secret, join(f.ws, 'innocent.txt'));
  symlinkSync(f.outside, join(f.ws, 'docs'));
  t.same(await f.run('read_file', { path: 'innocent.txt' }), { content: `read_file refused by rule "no symlink leading out": innocent.txt resolves through a symlink to ${secret}, outside the roots; ${outsideRule}`, isError: true });
  t.match(await f.run('read_file', { path: 'docs/secret.txt' }), { content: /^read_file refused by rule "no symlink leading out": docs\/secret\.txt resolves through a symlink to /, isError: true });

  // Writing through them: an existing file, a new file in a linked directory, a dangling link.
  t.match(await f.run('write_file', { path: 'innocent.txt', content: 'owned' }), { content: /^write_file refused by rule "no symlink leading out"/, isError: true });
  t.match(await f.run('edit_file', { path: 'innocent.txt', old_string: 'top', new_string: 'no' }), { content: /^edit_file refused by rule "no symlink leading out"/, isError: true });
  t.equal(readFileSync(secret, 'utf8'), 'top secret\n', 'the target is untouched');
  t.match(await f.run('write_file', { path: 'docs/new/planted.txt', content: 'x' }), { content: /^write_file refused by rule "no symlink leading out"/, isError: true });
  t.notOk(existsSync(join(f.outside, 'new')), 'no directory was created outside');
  symlinkSync(join(f.outside, 'not-yet.txt'), join(f.ws, 'dangling.txt'));
  t.match(await f.run('write_file', { path: 'dangling.txt', content: 'x' }), { content: /^write_file refused by rule "no symlink leading out": dangling\.txt resolves through a symlink to .*not-yet\.txt/, isError: true });
  t.notOk(existsSync(join(f.outside, 'not-yet.txt')), 'a dangling link does not create its target');
  symlinkSync('../outside', join(f.ws, 'rel-link'));
  t.match(await f.run('write_file', { path: 'rel-link/x.txt', content: 'x' }), { content: /^write_file refused by rule "no symlink leading out"/, isError: true }, 'relative link targets too');

  // A link that stays inside is fine, for reads and writes (the link itself stays a link).
  writeFileSync(join(f.ws, 'real.txt'), 'inside\n');
  symlinkSync('real.txt', join(f.ws, 'alias.txt'));
  t.same(await f.run('read_file', { path: 'alias.txt' }), { content: '     1\tinside' });
  t.same(await f.run('write_file', { path: 'alias.txt', content: 'changed\n' }), { content: 'wrote 8 bytes to real.txt (replaced 7 bytes)' }, 'outputs name the real file');
  t.equal(readFileSync(join(f.ws, 'real.txt'), 'utf8'), 'changed\n');
  symlinkSync('later.txt', join(f.ws, 'to-later.txt'));
  t.same(await f.run('write_file', { path: 'to-later.txt', content: 'ok' }), { content: 'wrote 2 bytes to later.txt (new file)' }, 'a dangling link inside creates its target inside');
});

t.test('files.roots are read-write, files.readOnlyRoots read-only; bad roots are configuration errors', async (t) => {
  const base = tempDir('pinclaw-roots-');
  t.teardown(() => rmSync(base, { recursive: true, force: true }));
  const shared = join(base, 'shared');
  const manuals = join(base, 'manuals');
  mkdirSync(shared);
  mkdirSync(manuals);
  writeFileSync(join(manuals, 'gpio.md'), 'pin 17\n');
  const f = fixture(t, { roots: [shared], readOnlyRoots: [manuals] });
  t.same(await f.run('write_file', { path: join(shared, 'out.txt'), content: 'hi' }), { content: `wrote 2 bytes to ${join(shared, 'out.txt')} (new file)` }, 'paths outside the workspace are shown absolute');
  t.same(await f.run('read_file', { path: join(manuals, 'gpio.md') }), { content: '     1\tpin 17' });
  t.same(await f.run('write_file', { path: join(manuals, 'gpio.md'), content: 'x' }), {
    content: `write_file refused by rule "read-only root": ${join(manuals, 'gpio.md')} is in files.readOnlyRoots, where the file tools may read but not write`,
    isError: true,
  });
  t.match(await f.run('edit_file', { path: join(manuals, 'gpio.md'), old_string: '17', new_string: '18' }), { content: /^edit_file refused by rule "read-only root"/ });
  t.equal(readFileSync(join(manuals, 'gpio.md'), 'utf8'), 'pin 17\n');
  symlinkSync(manuals, join(f.ws, 'manuals'));
  t.same(await f.run('read_file', { path: 'manuals/gpio.md' }), { content: '     1\tpin 17' }, 'a link into a root may be followed');
  t.match(await f.run('write_file', { path: 'manuals/new.md', content: 'x' }), { content: /^write_file refused by rule "read-only root"/ });

  const narrow = tempDir('pinclaw-narrow-');
  t.teardown(() => rmSync(narrow, { recursive: true, force: true }));
  mkdirSync(join(narrow, 'ref'));
  const reg = createRegistry(fileTools({ workspace: narrow, settings: { ...defaults().files, readOnlyRoots: [join(narrow, 'ref')] } }));
  const w = await reg.call({ name: 'write_file', input: { path: 'ref/a.txt', content: 'x' } }, ctx);
  t.match(w.result.content, /^write_file refused by rule "read-only root": ref\/a\.txt/, 'a read-only root inside the workspace narrows it');
  const ok = await reg.call({ name: 'write_file', input: { path: 'elsewhere.txt', content: 'x' } }, ctx);
  t.equal(ok.outcome, 'ok');

  t.throws(() => fileTools({ workspace: base, settings: { ...defaults().files, roots: ['relative/dir'] } }), new ConfigError('files.roots[0]: expected an absolute path, found "relative/dir"'));
  t.throws(() => fileTools({ workspace: base, settings: { ...defaults().files, readOnlyRoots: ['/tmp', '/'] } }), { name: 'ConfigError', message: "files.readOnlyRoots[1]: '/' would give the file tools every file on the machine" });
});

t.test('schema violations stop a call before it runs, naming the field', async (t) => {
  const f = fixture(t);
  t.same(await f.run('read_file', { path: 5 }), { content: 'invalid arguments for read_file: input.path: expected string, got number', isError: true });
  t.same(await f.run('read_file', { path: 'a', offset: 0 }), { content: 'invalid arguments for read_file: input.offset: must be >= 1', isError: true });
  t.same(await f.run('edit_file', { path: 'a', old_string: '' }), { content: 'invalid arguments for edit_file: input.new_string: required; input.old_string: must be at least 1 characters', isError: true });
  t.same(await f.run('write_file', { path: 'a', content: 'x', mode: 0o777 }), { content: 'invalid arguments for write_file: input.mode: unknown field', isError: true });
  t.same(await f.run('grep', { pattern: 'x', literal: 'yes' }), { content: 'invalid arguments for grep: input.literal: expected boolean, got string', isError: true });
  t.same(await f.run('glob', {}), { content: 'invalid arguments for glob: input.pattern: required', isError: true });
  t.notOk(existsSync(join(f.ws, 'a')));
});

t.test('file-system errors and unexpected throws become error results', async (t) => {
  const f = fixture(t);
  writeFileSync(join(f.ws, 'plain.txt'), 'x');
  t.same(await f.run('write_file', { path: 'plain.txt/child.txt', content: 'x' }), { content: 'write_file plain.txt/child.txt: a part of the path is not a directory', isError: true });
  t.same(await f.run('read_file', { path: 'plain.txt/child.txt' }), { content: 'read_file plain.txt/child.txt: a part of the path is not a directory', isError: true });
  symlinkSync('loop-b', join(f.ws, 'loop-a'));
  symlinkSync('loop-a', join(f.ws, 'loop-b'));
  t.same(await f.run('read_file', { path: 'loop-a' }), { content: 'read_file loop-a: too many levels of symbolic links', isError: true });
  t.same(await f.run('write_file', { path: 'loop-a', content: 'x' }), { content: 'write_file loop-a: too many levels of symbolic links', isError: true });

  const broken = readFileTool({
    confinement: { workspace: f.ws, snapshot: () => Promise.reject(new Error('unused')), resolve: () => Promise.reject(new Error('disk on fire')) },
    settings: defaults().files,
  });
  const reg = createRegistry([broken]);
  const r = await reg.call({ name: 'read_file', input: { path: 'x' } }, ctx);
  t.same(r.result, { content: 'read_file failed: disk on fire', isError: true });
  t.equal(r.outcome, 'error');
});

t.test('policy: minimal reads, standard also writes; writers run in order', async (t) => {
  const tools = fileTools({ workspace: '/nonexistent/ws', settings: defaults().files });
  const minimal = createPolicy({ ...defaults().tools, profile: 'minimal' });
  const standard = createPolicy({ ...defaults().tools, profile: 'standard' });
  const verdict = (p: typeof minimal) => Object.fromEntries(tools.map((tool) => [tool.name, p.check(tool, ctx).allowed]));
  t.same(verdict(minimal), { read_file: true, write_file: false, edit_file: false, list_dir: true, glob: true, grep: true });
  t.same(verdict(standard), { read_file: true, write_file: true, edit_file: true, list_dir: true, glob: true, grep: true });
  t.same(tools.filter((tool) => tool.sequential).map((tool) => tool.name), ['write_file', 'edit_file']);
});

t.test('pinclaw tool run read_file through the real CLI', async (t) => {
  const home = tempDir();
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  mkdirSync(join(home, 'workspace'));
  writeFileSync(join(home, 'workspace', 'notes.md'), '# Pi\nGPIO 17 drives the fan\n');
  const env = cleanEnv({ PINCLAW_HOME: home });
  const ok = await runPinclawAsync(['tool', 'run', 'read_file', JSON.stringify({ path: 'notes.md', offset: 2 })], { env });
  t.equal(ok.code, 0, ok.stderr);
  t.equal(ok.stdout, '     2\tGPIO 17 drives the fan\n');
  const out = await runPinclawAsync(['tool', 'run', 'read_file', '{"path":"../config.json"}'], { env });
  t.equal(out.code, 1);
  t.equal(out.stderr, `pinclaw: read_file refused by rule "no '..' escape": ../config.json leads out of the workspace through '..'; the file tools reach only the workspace, files.roots and files.readOnlyRoots\n`);
  const bad = await runPinclawAsync(['tool', 'run', 'read_file', '{"path":"notes.md","limit":0}'], { env });
  t.equal(bad.code, 1);
  t.equal(bad.stderr, 'pinclaw: invalid arguments for read_file: input.limit: must be >= 1\n');
  const badRoot = await runPinclawAsync(['tool', 'run', 'read_file', '{"path":"notes.md"}'], { env: { ...env, PINCLAW_FILES_ROOTS: '["rel"]' } });
  t.equal(badRoot.code, 78, 'a relative root is a configuration error');
  t.match(badRoot.stderr, /files\.roots\[0\]: expected an absolute path, found "rel"/);
});

// POSIX locks belong to the process: closing any descriptor of gateway.lock drops the gateway's lock
// on its home, and a second gateway could start. Before the fix, a root holding the home let
// read_file (and grep, edit_file) open and close it, and write_file rename a new file over it; after
// each, a second process took the lock.
t.test("a root holding the home: the files pinclaw holds locks on are never opened or replaced", async (t) => {
  const home = tempDir('pinclaw-lockroot-');
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const paths = resolvePaths({ home }, {});
  mkdirSync(paths.workspace);
  const mine = tryLockHome(paths.lock);
  if (!('held' in mine)) throw new Error('the lock of a new home is free');
  t.teardown(() => mine.held.release());
  t.equal(lockFromChild(paths.lock).outcome, 'busy', 'a second locker is refused to begin with');
  linkSync(paths.lock, join(paths.workspace, 'alias'));

  const config = defaults();
  config.files.roots = [home];
  const reg = createRegistry(builtinTools({ config, paths, env: {} }));
  const run = async (name: string, input: unknown) => (await reg.call({ name, input }, ctx)).result;
  const why = `is the gateway's lock on its home (one gateway per home); pinclaw holds a lock on it, and opening it from this process would drop that lock (a POSIX lock goes with the close of any descriptor of the file), so the file tools leave it alone`;

  t.same(await run('read_file', { path: paths.lock }), { content: `read_file refused by rule "pinclaw's own lock": ${paths.lock} ${why}`, isError: true });
  t.equal(lockFromChild(paths.lock).outcome, 'busy', 'after read_file the lock is still held');
  t.same(await run('read_file', { path: 'alias' }), { content: `read_file refused by rule "pinclaw's own lock": alias ${why}`, isError: true }, 'a hard link is the same file');
  t.equal(lockFromChild(paths.lock).outcome, 'busy', 'after read_file of a hard link too');
  t.match(await run('grep', { pattern: 'x', path: home }), { content: /^no matches .*\n\[2 entries unreadable or dangling\]$/ }, 'grep counts it unreadable');
  t.equal(lockFromChild(paths.lock).outcome, 'busy', 'after grep');
  t.match(await run('edit_file', { path: paths.lock, old_string: 'a', new_string: 'b' }), { content: /^edit_file refused by rule "pinclaw's own lock"/, isError: true });
  t.equal(lockFromChild(paths.lock).outcome, 'busy', 'after edit_file');
  t.same(await run('write_file', { path: paths.lock, content: 'x' }), { content: `write_file refused by rule "pinclaw's own lock": ${paths.lock} ${why}`, isError: true });
  t.equal(lockFromChild(paths.lock).outcome, 'busy', 'after write_file');
  t.match(await run('list_dir', { path: home }), { content: /file {2}gateway\.lock \(0 bytes\)/ }, 'list_dir still shows it: a listing opens nothing');
});
