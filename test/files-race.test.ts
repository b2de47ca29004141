// The file tools against a real racing process: while a child swaps a workspace directory for a
// symlink to '..' (what a sandboxed exec in another session can do), every file tool is called many
// times on a path through that directory. Confinement is checked first and the open comes after,
// so before the fix some calls read, listed, searched or wrote the home beside the workspace; now
// every open goes beneath its root with no link followed, and none may.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaults } from '../src/config/index.js';
import { fileTools } from '../src/tools/files/index.js';
import { createRegistry } from '../src/tools/registry.js';
import type { ToolContext, ToolResult } from '../src/tools/types.js';
import { tempDir } from './support/proc.js';

const ctx: ToolContext = { sessionKey: 's1', channel: 'test', chatId: 'c1', caller: 'owner' };
const SECRET = 'SECRET-home-config';
/** Calls per tool: the hostile review saw 13 escapes in 92 reads. */
const CALLS = 300;

// Swaps ws/d (a directory) and ws/dl (a link to '..') by renames, as fast as it can, until the
// stop file appears or a bound on the swaps is reached; prints how many swaps it made.
const RACER = `
const fs = require('node:fs');
const [ws, stop] = process.argv.slice(1);
process.chdir(ws);
let n = 0;
for (; n < 20_000_000; n++) {
  if (n % 256 === 0 && fs.existsSync(stop)) break;
  try {
    fs.renameSync('d', 'dd');
    fs.renameSync('dl', 'd');
    fs.renameSync('d', 'dl');
    fs.renameSync('dd', 'd');
  } catch {}
}
process.stdout.write(String(n));
`;

interface Race {
  ws: string;
  home: string;
  run(name: string, input: unknown): Promise<ToolResult>;
  stop(): Promise<number>;
}

function race(t: Test): Race {
  const home = tempDir('pinclaw-race-');
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const ws = join(home, 'workspace');
  mkdirSync(join(ws, 'd'), { recursive: true });
  writeFileSync(join(ws, 'd', 'config.json'), '{"inside": true}\n');
  writeFileSync(join(home, 'config.json'), `{"${SECRET}": true}\n`);
  symlinkSync('..', join(ws, 'dl'));
  const reg = createRegistry(fileTools({ workspace: ws, settings: defaults().files }));
  const stopFile = join(home, 'stop');
  const child = spawn(process.execPath, ['-e', RACER, ws, stopFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  const exited = new Promise<number>((resolve) => child.on('exit', () => resolve(Number(out))));
  const stop = async () => {
    writeFileSync(stopFile, '');
    return exited;
  };
  t.teardown(stop);
  return { ws, home, stop, run: async (name, input) => (await reg.call({ name, input }, ctx)).result };
}

/** The new-N.txt files under a directory, links not followed. */
function newFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? newFiles(join(dir, e.name)) : /^new-\d+\.txt$/.test(e.name) ? [e.name] : []);
}

/** Counts outcomes by kind, for the message of each assertion. */
function tally(results: ToolResult[], escaped: (r: ToolResult) => boolean) {
  return {
    escaped: results.filter(escaped).length,
    refused: results.filter((r) => r.isError).length,
    ok: results.filter((r) => !r.isError && !escaped(r)).length,
  };
}

t.test('read_file, list_dir, grep and glob through a directory swapped for a link never reach the home', async (t) => {
  const r = race(t);
  const reads: ToolResult[] = [];
  const lists: ToolResult[] = [];
  const greps: ToolResult[] = [];
  const globs: ToolResult[] = [];
  for (let i = 0; i < CALLS; i++) {
    reads.push(await r.run('read_file', { path: 'd/config.json' }));
    lists.push(await r.run('list_dir', { path: 'd' }));
    greps.push(await r.run('grep', { pattern: 'SECRET', path: 'd' }));
    globs.push(await r.run('glob', { pattern: 'd/*' }));
  }
  const swaps = await r.stop();
  t.ok(swaps > 0, `the racer swapped ${swaps} times`);

  const read = tally(reads, (x) => x.content.includes(SECRET));
  t.equal(read.escaped, 0, `read_file: ${JSON.stringify(read)} of ${CALLS}`);
  const reached = reads.filter((x) => !x.isError && !x.content.includes('"inside"'));
  t.same(reached, [], 'every read that succeeded read the workspace file');
  const list = tally(lists, (x) => !x.isError && x.content.includes('workspace/'));
  t.equal(list.escaped, 0, `list_dir: ${JSON.stringify(list)} of ${CALLS}`);
  const grep = tally(greps, (x) => !x.isError && !x.content.startsWith('no matches'));
  t.equal(grep.escaped, 0, `grep: ${JSON.stringify(grep)} of ${CALLS}`);
  const glob = tally(globs, (x) => !x.isError && x.content.includes('d/workspace/'));
  t.equal(glob.escaped, 0, `glob: ${JSON.stringify(glob)} of ${CALLS}`);
  // The race was real: some calls met the link (or the gap between renames) and were refused.
  t.ok(read.refused + list.refused > 0, 'some calls met the swapped link');
  for (const x of [...reads, ...lists].filter((y) => y.isError)) {
    t.match(x.content, /refused by rule "no symlink leading out"|no such file or directory/, 'a call that met the link says why');
  }
});

t.test('write_file and edit_file through a directory swapped for a link never write in the home', async (t) => {
  const r = race(t);
  const results: ToolResult[] = [];
  for (let i = 0; i < CALLS; i++) {
    results.push(await r.run('write_file', { path: `d/new-${i}.txt`, content: 'x' }));
    results.push(await r.run('edit_file', { path: 'd/config.json', old_string: SECRET, new_string: 'EDITED' }));
  }
  t.ok((await r.stop()) > 0, 'the racer ran');
  const planted = readdirSync(r.home).filter((n) => n.startsWith('new-') || n.includes('.tmp'));
  t.same(planted, [], 'no file was created in the home');
  t.equal(readFileSync(join(r.home, 'config.json'), 'utf8'), `{"${SECRET}": true}\n`, 'the home config is untouched');
  const written = results.filter((x) => !x.isError && x.content.startsWith('wrote')).length;
  t.ok(written > 0, `${written} writes landed in the workspace`);
  // Under whichever name the racer left the directory; the walk does not follow the link out.
  const inWs = newFiles(r.ws);
  t.equal(inWs.length, written, 'every write that said so is in the workspace');
});

// A root configured inside the workspace is a name a sandboxed exec may replace. Before the fix the
// roots were found again at every call by following links, so after the swap below the read-only
// root "was" the outside directory, and the writable one too: read_file read the secret and
// write_file planted a file beside it.
t.test('a root nested in the workspace swapped for a symlink leads nowhere', async (t) => {
  const home = tempDir('pinclaw-nested-');
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const ws = join(home, 'workspace');
  const outside = join(home, 'outside');
  const other = join(home, 'other');
  mkdirSync(join(ws, 'manuals'), { recursive: true });
  mkdirSync(join(ws, 'shared'));
  mkdirSync(outside);
  mkdirSync(other);
  writeFileSync(join(ws, 'manuals', 'gpio.md'), 'pin 17\n');
  writeFileSync(join(outside, 'secret.txt'), `${SECRET}\n`);
  // A root configured outside, whose owner's link leads into the workspace: the link is the owner's,
  // the directory it reaches is the workspace's and may be swapped too.
  mkdirSync(join(ws, 'data'));
  symlinkSync(join(ws, 'data'), join(home, 'via'));
  const settings = { ...defaults().files, roots: [join(ws, 'shared')], readOnlyRoots: [join(ws, 'manuals'), join(home, 'via')] };
  const reg = createRegistry(fileTools({ workspace: ws, settings }));
  const run = async (name: string, input: unknown) => (await reg.call({ name, input }, ctx)).result;

  t.same(await run('read_file', { path: 'manuals/gpio.md' }), { content: '     1\tpin 17' }, 'the nested root is read while it is a directory');
  t.same(await run('write_file', { path: 'shared/a.txt', content: 'a' }), { content: 'wrote 1 bytes to shared/a.txt (new file)' });

  // What an exec in the workspace can do: both roots become links to directories outside.
  for (const [name, to] of [['manuals', outside], ['shared', other], ['data', outside]] as const) {
    rmSync(join(ws, name), { recursive: true });
    symlinkSync(to, join(ws, name));
  }
  const read = await run('read_file', { path: 'manuals/secret.txt' });
  t.notOk(read.content.includes(SECRET), 'read_file does not read through the swapped root');
  t.same(read, {
    content: `read_file refused by rule "no symlink leading out": manuals/secret.txt is in files.readOnlyRoots[0] (${join(ws, 'manuals')}), which is reached through the symlink ${join(ws, 'manuals')} inside another root; a root is never reached through a link inside another root, since whatever writes there (a sandboxed exec in the workspace) could point it anywhere. Until the link is replaced by the directory, or files.readOnlyRoots[0] names the link's target, that root is out of reach`,
    isError: true,
  });
  const via = await run('read_file', { path: join(home, 'via', 'secret.txt') });
  t.match(via, { content: new RegExp(`^read_file refused by rule "no symlink leading out": .* is in files\\.readOnlyRoots\\[1\\] \\(${home}/via\\), which is reached through the symlink ${ws}/data inside another root`), isError: true }, 'a root reached through a link in the workspace is refused too');
  const absolute = await run('read_file', { path: join(outside, 'secret.txt') });
  t.match(absolute, { content: /^read_file refused by rule "no absolute path outside the roots"/, isError: true }, 'nor by its absolute path');
  const write = await run('write_file', { path: 'shared/planted.txt', content: 'x' });
  t.match(write, { content: /^write_file refused by rule "no symlink leading out": shared\/planted\.txt is in files\.roots\[0\]/, isError: true });
  const writeAbs = await run('write_file', { path: join(other, 'planted.txt'), content: 'x' });
  t.match(writeAbs, { isError: true }, 'nor by the absolute path');
  t.same(readdirSync(other), [], 'nothing was written outside');
  const list = await run('list_dir', { path: outside });
  t.match(list, { isError: true }, 'list_dir does not list the outside either');

  // Put back as a directory, the root works again.
  rmSync(join(ws, 'manuals'));
  mkdirSync(join(ws, 'manuals'));
  writeFileSync(join(ws, 'manuals', 'gpio.md'), 'pin 18\n');
  t.same(await run('read_file', { path: 'manuals/gpio.md' }), { content: '     1\tpin 18' });
});
