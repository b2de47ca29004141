// The MCP client against servers written by others (@modelcontextprotocol/server-everything over
// stdio, in bubblewrap, and over Streamable HTTP on 127.0.0.1) and against test/support's faulty
// server for what well-made servers never do. Calls go through the registry, the governed path.
import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaults } from '../src/config/schema.js';
import { createMcpClient, type McpClient } from '../src/mcp/client/manager.js';
import type { McpServerConfig } from '../src/mcp/types.js';
import { createPolicy } from '../src/tools/policy.js';
import { createRegistry } from '../src/tools/registry.js';
import type { Tool, ToolContext } from '../src/tools/types.js';
import { freePort } from './support/free-port.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const faulty = join(here, 'support', 'mcp-faulty-server.ts');
const everything = realpathSync(join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'));
const nodeModules = realpathSync(join(root, 'node_modules'));
const owner: ToolContext = { sessionKey: 'cli:test', channel: 'cli', chatId: 'local', caller: 'owner' };

function server(o: Partial<McpServerConfig>): McpServerConfig {
  return { enabled: true, args: [], env: {}, headers: {}, tools: ['*'], callTimeoutMs: 60000, listTimeoutMs: 10000, maxResultBytes: 65536, sandbox: false, network: false, paths: [], writePaths: [], ...o };
}

/** The faulty server in MODE, unconfined (the sandbox has its own tests below). */
function faultyServer(mode: string, o: Partial<McpServerConfig> = {}): McpServerConfig {
  return server({ command: process.execPath, args: [faulty, mode], ...o });
}

function workspace(t: Test): string {
  const dir = mkdtempSync(join(tmpdir(), 'pinclaw-mcp-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function client(t: Test, servers: Record<string, McpServerConfig>, o: { now?: () => number; reserved?: string[] } = {}): McpClient {
  const c = createMcpClient({ servers, workspace: workspace(t), sandbox: defaults().sandbox, ...(o.now ? { now: o.now } : {}), ...(o.reserved ? { reserved: () => o.reserved! } : {}) });
  t.teardown(() => c.close());
  return c;
}

function registryOf(c: McpClient, fixed: Tool[] = [], controlChats: string[] = []) {
  return createRegistry(fixed, { sources: [c], policy: createPolicy({ ...defaults().tools, controlChats }) });
}

/** Processes whose command line holds `marker` (read from /proc; vanished ones skipped). */
function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      // A zombie has an empty cmdline; a reaped process is gone. Either way not running.
      if (cmd.includes(marker)) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

t.test('server-everything over stdio in bubblewrap: handshake, tools, a call through the registry', async (t) => {
  const c = client(t, { every: server({ command: '/usr/bin/node', args: [everything, 'stdio'], sandbox: true, paths: [nodeModules] }) });
  await c.ready();
  const [s] = c.status();
  t.equal(s!.state, 'up', s!.error ?? 'up');
  t.equal(s!.protocolVersion, '2025-11-25', 'the newest revision is agreed with a current server');
  t.match(s!.sandbox, /^bubblewrap/);
  const reg = registryOf(c);
  const names = reg.specs(owner).map((x) => x.name);
  t.ok(names.includes('every__echo') && names.includes('every__get-sum'), 'its tools are offered as <server>__<tool>');
  const r = await reg.call({ name: 'every__get-sum', input: { a: 2, b: 40 } }, owner);
  t.equal(r.outcome, 'ok', r.result.content);
  t.match(r.result.content, /42/);
  t.match(r.result.content, /^<untrusted-data source="MCP server every, tool get-sum">/, 'the result is framed as outside data');
  // The sandbox: the server sees only its own clean environment, not the gateway's.
  process.env.PINCLAW_TEST_SECRET = 'must-not-leak';
  const env = await reg.call({ name: 'every__get-env', input: {} }, owner);
  delete process.env.PINCLAW_TEST_SECRET;
  t.notMatch(env.result.content, /must-not-leak/, "pinclaw's environment does not reach the server");
  t.match(env.result.content, /"TMPDIR": "\/tmp\/pinclaw-exec-/);
});

t.test('policy: an MCP tool runs in the owner\'s chats only, unless an allow list names it', async (t) => {
  const c = client(t, { f: faultyServer('ok') });
  await c.ready();
  const telegram: ToolContext = { sessionKey: 'tg:1', channel: 'telegram', chatId: '1' };
  const denied = await registryOf(c).call({ name: 'f__echo', input: { message: 'x' } }, telegram);
  t.equal(denied.outcome, 'denied');
  t.match(denied.result.content, /run only in the owner's chats.*f__\*/);
  t.notOk(registryOf(c).specs(telegram).some((s) => s.name.startsWith('f__')), 'not even offered there');
  const control = await registryOf(c, [], ['telegram:1']).call({ name: 'f__echo', input: { message: 'x' } }, telegram);
  t.equal(control.outcome, 'ok', 'a control chat is the owner\'s');
  const allowed = createRegistry([], { sources: [c], policy: createPolicy({ ...defaults().tools, allow: ['f__*'] }) });
  t.equal((await allowed.call({ name: 'f__echo', input: { message: 'x' } }, telegram)).outcome, 'ok', 'tools.allow f__* grants it');
  const minimal = createRegistry([], { sources: [c], policy: createPolicy({ ...defaults().tools, profile: 'minimal' }) });
  t.equal((await minimal.call({ name: 'f__echo', input: { message: 'x' } }, owner)).outcome, 'denied', 'profile minimal allows none');
});

t.test('a server that dies mid-call: that call fails naming it with its stderr, it is down, the next call starts it again', async (t) => {
  let clock = 1_000_000;
  const dir = workspace(t);
  const starts = join(dir, 'starts');
  const c = client(t, { f: faultyServer('ok', { env: { FAULTY_STARTS: starts } }) }, { now: () => clock });
  await c.ready();
  const reg = registryOf(c);
  const r = await reg.call({ name: 'f__die', input: {} }, owner);
  t.equal(r.outcome, 'error');
  t.match(r.result.content, /MCP server f exited \(code 7\).*segmentation fault in the frobnicator/);
  t.equal(c.status()[0]!.state, 'down');
  const soon = await reg.call({ name: 'f__echo', input: { message: 'a' } }, owner);
  t.match(soon.result.content, /down, next start in 1 s/, 'within the backoff it is not started');
  clock += 1500;
  const again = await reg.call({ name: 'f__echo', input: { message: 'back' } }, owner);
  t.equal(again.outcome, 'ok', again.result.content);
  t.match(again.result.content, /echo: back/);
  t.equal(readFileSync(starts, 'utf8').trim().split('\n').length, 2, 'started again once');
  t.equal(c.status()[0]!.starts, 2);
});

t.test('a server that never answers tools/list: down after listTimeoutMs, naming the server and the key', async (t) => {
  const c = client(t, { slow: faultyServer('no-list', { listTimeoutMs: 2000 }) });
  await c.ready();
  const [s] = c.status();
  t.equal(s!.state, 'down');
  t.match(s!.error, /MCP server slow: no answer to tools\/list within 2000 ms \(mcp\.servers\.slow\.listTimeoutMs\)/);
  t.same(c.tools(), []);
});

t.test('200 tools over 4 pages; a tool with an object-less schema is skipped', async (t) => {
  const c = client(t, { many: faultyServer('many'), ok: faultyServer('ok') });
  await c.ready();
  t.equal(c.status()[0]!.tools, 200, 'every page is read');
  const names = c.tools().map((x) => x.name);
  t.ok(names.includes('many__tool_199'));
  t.notOk(names.includes('ok__bad-schema'), 'a tool whose arguments are not an object is not offered');
});

t.test('a 10 MB result is read and cut to maxResultBytes; the call timeout is callTimeoutMs', async (t) => {
  const c = client(t, { b: faultyServer('ok', { maxResultBytes: 4096 }), f: faultyServer('ok', { callTimeoutMs: 300 }) });
  await c.ready();
  const reg = registryOf(c);
  const big = await reg.call({ name: 'b__big', input: { bytes: 10 * 1024 * 1024 } }, owner);
  t.equal(big.outcome, 'ok');
  t.ok(Buffer.byteLength(big.result.content) < 4096 + 600, `capped (${Buffer.byteLength(big.result.content)} bytes)`);
  t.match(big.result.content, /10481664 more bytes cut/);
  const slow = await reg.call({ name: 'f__sleep', input: { ms: 5000 } }, owner);
  t.equal(slow.outcome, 'error');
  t.match(slow.result.content, /MCP server f: no answer to tools\/call within 300 ms \(mcp\.servers\.f\.callTimeoutMs\)/);
  t.equal(c.status()[1]!.state, 'up', 'a slow call does not take the server down');
  t.equal((await reg.call({ name: 'f__echo', input: { message: 'still' } }, owner)).outcome, 'ok');
});

t.test('invalid JSON lines are skipped; an old revision is accepted, an unknown one refused; a crash at start is named', async (t) => {
  const c = client(t, { garbage: faultyServer('garbage'), old: faultyServer('old'), future: faultyServer('future'), crash: faultyServer('crash'), missing: server({ command: 'no-such-mcp-server' }) });
  await c.ready();
  const [garbage, old, future, crash, missing] = c.status();
  t.equal(garbage!.state, 'up', garbage!.error ?? '');
  t.equal((await registryOf(c).call({ name: 'garbage__echo', input: { message: 'g' } }, owner)).outcome, 'ok');
  t.equal(old!.state, 'up');
  t.equal(old!.protocolVersion, '2024-11-05', 'a server that speaks only 2024-11-05 is used with it');
  t.equal(future!.state, 'down');
  t.match(future!.error, /MCP server future speaks protocol revision 2099-01-01; pinclaw speaks 2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05/);
  t.match(crash!.error, /MCP server crash exited \(code 3\).*cannot open \/nonexistent\/config\.yaml/);
  t.match(missing!.error, /MCP server missing: command 'no-such-mcp-server' is not installed/);
});

t.test('tools/list_changed refreshes the list; names are deterministic and never take a built-in\'s', async (t) => {
  const c = client(t, { f: faultyServer('ok') }, { reserved: ['f__echo'] });
  await c.ready();
  const names = c.tools().map((x) => x.name);
  t.notOk(names.includes('f__echo'), 'the reserved name is not taken');
  const echo = c.tools().find((x) => x.mcpTool === 'echo')!;
  t.match(echo.name, /^f__echo_[0-9a-f]{6}$/, 'a hash suffix instead');
  const reg = registryOf(c);
  await reg.call({ name: 'f__add-tool', input: {} }, owner);
  for (let i = 0; i < 100 && !c.tools().some((x) => x.name === 'f__added_6'); i++) await new Promise((r) => setTimeout(r, 20));
  t.ok(c.tools().some((x) => x.name === 'f__added_6'), 'the new tool is listed after list_changed');
  const again = client(t, { f: faultyServer('ok') }, { reserved: ['f__echo'] });
  await again.ready();
  t.equal(again.tools().find((x) => x.mcpTool === 'echo')!.name, echo.name, 'the same config gives the same names');
});

t.test('close kills the group (SIGTERM, then SIGKILL) and reaps it: a grandchild that ignores SIGTERM goes too', async (t) => {
  const marker = `1000.${process.pid}${Date.now() % 100000}`;
  const c = createMcpClient({ servers: { g: faultyServer('grandchild', { env: { FAULTY_SLEEP: marker } }) }, workspace: workspace(t), sandbox: defaults().sandbox });
  await c.ready();
  t.equal(c.status()[0]!.state, 'up');
  t.equal(processesWith(marker).length, 1, 'the grandchild runs');
  await c.close();
  t.same(processesWith(marker), [], 'no process of it is left after close');
});

t.test('100 start/stop cycles leave no process', async (t) => {
  const dir = workspace(t);
  const marker = `mcp-cycle-${process.pid}-${Date.now()}`;
  for (let i = 0; i < 100; i++) {
    const c = createMcpClient({ servers: { s: faultyServer('ok', { args: [faulty, 'ok', marker] }) }, workspace: dir, sandbox: defaults().sandbox });
    // Half stopped while still starting, half once up.
    if (i % 2) await c.ready();
    await c.close();
  }
  t.same(processesWith(marker), [], 'no server process left after 100 cycles');
});


t.test('server-everything over Streamable HTTP on 127.0.0.1: session, protocol header, SSE answers', async (t) => {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [everything, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('listening')) resolve();
    });
    child.once('exit', () => reject(new Error(`server-everything exited: ${err}`)));
  });
  const c = client(t, { web: server({ url: `http://127.0.0.1:${port}/mcp` }) });
  await c.ready();
  const [s] = c.status();
  t.equal(s!.state, 'up', s!.error ?? '');
  t.equal(s!.transport, 'http');
  t.equal(s!.protocolVersion, '2025-11-25');
  const reg = registryOf(c);
  const r = await reg.call({ name: 'web__echo', input: { message: 'over http' } }, owner);
  t.equal(r.outcome, 'ok', r.result.content);
  t.match(r.result.content, /Echo: over http/);
  const sum = await reg.call({ name: 'web__get-sum', input: { a: 1, b: 2 } }, owner);
  t.match(sum.result.content, /3/);
  await c.close();
});

t.test('an HTTP server that is not there: down, naming the server and the address', async (t) => {
  const port = await freePort();
  const c = client(t, { gone: server({ url: `http://127.0.0.1:${port}/mcp`, listTimeoutMs: 2000 }) });
  await c.ready();
  t.equal(c.status()[0]!.state, 'down');
  t.match(c.status()[0]!.error, new RegExp(`MCP server gone: cannot reach http://127\\.0\\.0\\.1:${port}/mcp`));
});

t.test('an HTTP server that never answers a call: the call times out and its request is let go at once', async (t) => {
  const { createServer: createHttp } = await import('node:http');
  let hungClosed: () => void = () => undefined;
  const hungGone = new Promise<void>((resolve) => (hungClosed = resolve));
  const srv = createHttp((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const m = JSON.parse(body) as { id?: number; method: string };
      if (m.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      // tools/call is never answered: the response stays open until the client lets go.
      if (m.method === 'tools/call') {
        res.on('close', () => hungClosed());
        return;
      }
      const result = m.method === 'initialize'
        ? { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'hang', version: '1' } }
        : { tools: [{ name: 'wait', inputSchema: { type: 'object' } }] };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: m.id, result }));
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  t.teardown(() => srv.close());
  const port = (srv.address() as { port: number }).port;
  const c = client(t, { hang: server({ url: `http://127.0.0.1:${port}/mcp`, callTimeoutMs: 300 }) });
  await c.ready();
  t.equal(c.status()[0]!.protocolVersion, '2025-06-18', 'an older revision over HTTP');
  const r = await registryOf(c).call({ name: 'hang__wait', input: {} }, owner);
  t.match(r.result.content, /MCP server hang: no answer to tools\/call within 300 ms \(mcp\.servers\.hang\.callTimeoutMs\)/);
  // Not at close (the teardown): while the client is still open, the hung request is already closed.
  await hungGone;
  t.equal(c.status()[0]!.state, 'up', 'the client is still open and the server up');
});

t.test('in bubblewrap too: 10 start/stop cycles of a server that ignores SIGTERM and has a child leave no process', async (t) => {
  const dir = workspace(t);
  // node_modules: tap's process tracking puts an --import of its own into every child's NODE_OPTIONS.
  const marker = `1000.${process.pid}${(Date.now() + 7) % 100000}`;
  for (let i = 0; i < 10; i++) {
    const c = createMcpClient({ servers: { g: faultyServer('grandchild', { sandbox: true, paths: [realpathSync(here), nodeModules], env: { FAULTY_SLEEP: marker } }) }, workspace: dir, sandbox: defaults().sandbox });
    await c.ready();
    const [s] = c.status();
    t.equal(s!.state, 'up', s!.error ?? `cycle ${i}`);
    if (i === 0) t.match(s!.sandbox, /^bubblewrap/);
    await c.close();
  }
  t.same(processesWith(marker), [], 'no process of the server or its child is left');
});

// Landlock, for hosts where bubblewrap does not work (containers, restricted user namespaces):
// sandbox.backend landlock asks for it here, where both are present. The repository is among the
// server's paths: Node reads its package.json for the module type of the .ts server, and Landlock
// answers EACCES (not ENOENT, as bubblewrap's missing mount does), which Node does not pass over.
const landlockHere = await (async () => {
  const { detectSandbox } = await import('../src/sandbox/detect.js');
  const s = await detectSandbox();
  return s.landlock.abi >= 1 ? false : `no Landlock here: ${s.landlock.reason}`;
})();

t.test('under Landlock: its tools work; it cannot read $PINCLAW_HOME/secret.key nor write outside the workspace and its $TMPDIR', { skip: landlockHere }, async (t) => {
  const home = workspace(t);
  const ws = join(home, 'workspace');
  mkdirSync(ws);
  writeFileSync(join(home, 'secret.key'), 'the-secret-key');
  writeFileSync(join(ws, 'note.txt'), 'a note');
  const sandbox = { ...defaults().sandbox, backend: 'landlock' as const };
  const c = createMcpClient({ servers: { box: faultyServer('files', { sandbox: true, paths: [realpathSync(root)] }) }, workspace: ws, sandbox });
  t.teardown(() => c.close());
  await c.ready();
  const [s] = c.status();
  t.equal(s!.state, 'up', s!.error ?? 'up');
  t.match(s!.sandbox, /^landlock ABI \d+ \+ seccomp \(no network\)$/);
  const reg = registryOf(c);
  const call = async (tool: string, input: Record<string, unknown>) => (await reg.call({ name: `box__${tool}`, input }, owner)).result.content;
  t.match(await call('echo', { message: 'through the pipe' }), /echo: through the pipe/, 'requests reach it on its stdin pipe, answers come back');
  t.match(await call('read-file', { path: join(ws, 'note.txt') }), /content a note/, 'the workspace is readable');
  t.match(await call('read-file', { path: join(home, 'secret.key') }), /error EACCES/, 'secret.key is not');
  t.notMatch(await call('read-file', { path: join(home, 'secret.key') }), /the-secret-key/);
  t.match(await call('write-file', { path: join(ws, 'out.txt'), text: 'mine' }), /written/);
  t.equal(readFileSync(join(ws, 'out.txt'), 'utf8'), 'mine', 'the workspace is writable');
  t.match(await call('write-file', { path: join(home, 'planted.txt') }), /error EACCES/, 'the home around the workspace is not');
  t.match(await call('write-file', { path: join(tmpdir(), `pinclaw-planted-${process.pid}`) }), /error EACCES/, 'nor /tmp outside its own $TMPDIR');
  t.notOk(existsSync(join(home, 'planted.txt')));
  t.match(await call('write-file', { path: '/etc/pinclaw-planted' }), /error EACCES|error EROFS/, 'nor the system');
});

t.test('under Landlock too: 10 start/stop cycles of a server that ignores SIGTERM and has a child leave no process', { skip: landlockHere }, async (t) => {
  const dir = workspace(t);
  const marker = `1000.${process.pid}${(Date.now() + 11) % 100000}`;
  const sandbox = { ...defaults().sandbox, backend: 'landlock' as const };
  for (let i = 0; i < 10; i++) {
    const c = createMcpClient({ servers: { g: faultyServer('grandchild', { sandbox: true, paths: [realpathSync(root)], env: { FAULTY_SLEEP: marker } }) }, workspace: dir, sandbox });
    await c.ready();
    const [s] = c.status();
    t.equal(s!.state, 'up', s!.error ?? `cycle ${i}`);
    if (i === 0) t.match(s!.sandbox, /^landlock/);
    if (i === 0) t.equal(processesWith(marker).length, 1, 'its child runs');
    await c.close();
  }
  t.same(processesWith(marker), [], 'no process of the server or its child is left');
});

t.test('under Landlock, a server that dies mid-call is named with its stderr and started again', { skip: landlockHere }, async (t) => {
  const sandbox = { ...defaults().sandbox, backend: 'landlock' as const };
  let clock = 0;
  const c = createMcpClient({ servers: { d: faultyServer('ok', { sandbox: true, paths: [realpathSync(root)] }) }, workspace: workspace(t), sandbox, now: () => clock });
  t.teardown(() => c.close());
  await c.ready();
  const reg = registryOf(c);
  const died = await reg.call({ name: 'd__die', input: {} }, owner);
  t.match(died.result.content, /MCP server d exited \(code 7\).*segmentation fault in the frobnicator/);
  t.equal(c.status()[0]!.state, 'down');
  clock += 60_000;
  const again = await reg.call({ name: 'd__echo', input: { message: 'back' } }, owner);
  t.match(again.result.content, /echo: back/, 'started again under Landlock on the next call');
});
