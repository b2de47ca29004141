// The MCP client's resources, prompts, progress and list changes, against
// @modelcontextprotocol/server-everything (written by others) over stdio and over Streamable HTTP on
// 127.0.0.1, and against test/support's faulty server for paging and a server without resources.
// The model's calls go through the registry, the governed path.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaults } from '../src/config/schema.js';
import { createMcpClient, type McpClient } from '../src/mcp/client/manager.js';
import type { McpServerConfig } from '../src/mcp/types.js';
import { createPolicy } from '../src/tools/policy.js';
import { createRegistry } from '../src/tools/registry.js';
import type { ToolContext } from '../src/tools/types.js';
import { freePort } from './support/free-port.js';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');
const faulty = join(here, 'support', 'mcp-faulty-server.ts');
const everything = realpathSync(join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'));
const owner: ToolContext = { sessionKey: 'cli:test', channel: 'cli', chatId: 'local', caller: 'owner' };
const telegram: ToolContext = { sessionKey: 'tg:1', channel: 'telegram', chatId: '1' };

function server(o: Partial<McpServerConfig>): McpServerConfig {
  return { enabled: true, args: [], env: {}, headers: {}, tools: ['*'], callTimeoutMs: 60000, listTimeoutMs: 10000, maxResultBytes: 65536, sandbox: false, network: false, paths: [], writePaths: [], ...o };
}

function client(t: Test, servers: Record<string, McpServerConfig>): McpClient {
  const dir = mkdtempSync(join(tmpdir(), 'pinclaw-mcp-'));
  const c = createMcpClient({ servers, workspace: dir, sandbox: defaults().sandbox });
  t.teardown(async () => {
    await c.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return c;
}

function registryOf(c: McpClient, allow: string[] = []) {
  return createRegistry([], { sources: [c], policy: createPolicy({ ...defaults().tools, allow }) });
}


/** server-everything's Streamable HTTP server on 127.0.0.1, stopped at the end of the test. */
async function everythingOverHttp(t: Test): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, [everything, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      if (err.includes('listening')) resolve();
    });
    child.once('exit', () => reject(new Error(`server-everything exited: ${err}`)));
  });
  return `http://127.0.0.1:${port}/mcp`;
}

/** The same config for both transports: server-everything over stdio or at `url`. */
const transports: [string, (t: Test, o?: Partial<McpServerConfig>) => Promise<McpServerConfig>][] = [
  ['stdio', async (_t, o = {}) => server({ command: process.execPath, args: [everything, 'stdio'], ...o })],
  ['Streamable HTTP', async (t, o = {}) => server({ url: await everythingOverHttp(t), ...o })],
];

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!check()) throw new Error(`never happened: ${what}`);
}

for (const [transport, config] of transports) {
  t.test(`server-everything over ${transport}: resources listed and read (text and blob), for the owner and through the registry`, async (t) => {
    const c = client(t, { every: await config(t) });
    await c.ready();
    const [s] = c.status();
    t.equal(s!.state, 'up', s!.error ?? '');
    t.ok((s!.resources ?? 0) >= 7, `its static documents are listed (${s!.resources})`);
    const { resources, templates } = await c.resources('every');
    t.ok(resources.some((r) => r.uri === 'demo://resource/static/document/features.md' && r.mimeType === 'text/markdown'), 'a static document, with its MIME type');
    t.same(templates.map((x) => x.uriTemplate).sort(), ['demo://resource/dynamic/blob/{resourceId}', 'demo://resource/dynamic/text/{resourceId}']);

    const [text] = await c.readResource('every', 'demo://resource/dynamic/text/1');
    t.match(text, { uri: 'demo://resource/dynamic/text/1', mimeType: 'text/plain', text: /^Resource 1: This is a plaintext resource/ });
    const [blob] = await c.readResource('every', 'demo://resource/dynamic/blob/2');
    t.equal(blob!.text, undefined);
    t.match(Buffer.from(blob!.blob!, 'base64').toString(), /^Resource 2: This is a base64 blob/, 'a blob arrives as base64');

    const reg = registryOf(c);
    const tool = reg.specs(owner).find((x) => x.name === 'every__read_resource');
    t.ok(tool, 'one resource tool for the server');
    t.match(tool!.description, /demo:\/\/resource\/static\/document\//, 'its description names some resources');
    t.ok(tool!.description.length < 700, `and stays short (${tool!.description.length} chars)`);
    const read = await reg.call({ name: 'every__read_resource', input: { uri: 'demo://resource/dynamic/blob/3' } }, owner);
    t.equal(read.outcome, 'ok', read.result.content);
    t.match(read.result.content, /^<untrusted-data source="MCP server every, resource demo:\/\/resource\/dynamic\/blob\/3">/, 'framed as outside data');
    t.match(read.result.content, /Resource 3: This is a base64 blob/, 'a text/plain blob is decoded for the model');
    const all = await reg.call({ name: 'every__read_resource', input: {} }, owner);
    t.match(all.result.content, /demo:\/\/resource\/static\/document\/structure\.md/);
    t.match(all.result.content, /demo:\/\/resource\/dynamic\/text\/\{resourceId\}  \(template\)/, 'without a uri: every resource and template');
    const missing = await reg.call({ name: 'every__read_resource', input: { uri: 'demo://resource/dynamic/text/0' } }, owner);
    t.equal(missing.outcome, 'error');
    t.match(missing.result.content, /MCP server every: resources\/read failed: .*Unknown resource: demo:\/\/resource\/dynamic\/text\/0/);
  });

  t.test(`server-everything over ${transport}: prompts listed and got with arguments`, async (t) => {
    const c = client(t, { every: await config(t) });
    await c.ready();
    t.equal(c.status()[0]!.prompts, 4);
    const prompts = await c.prompts('every');
    t.match(prompts.find((p) => p.name === 'args-prompt'), { arguments: [{ name: 'city', required: true }, { name: 'state' }] });
    t.notOk(prompts.find((p) => p.name === 'args-prompt')!.arguments[1]!.required, 'state is optional');
    const got = await c.getPrompt('every', 'args-prompt', { city: 'Oslo', state: 'Viken' });
    t.same(got.messages, [{ role: 'user', content: { type: 'text', text: "What's weather in Oslo, Viken?" } }]);
    await t.rejects(c.getPrompt('every', 'args-prompt', {}), /MCP server every: prompts\/get failed: .*city/, 'a missing required argument: the server says which');
  });

  t.test(`server-everything over ${transport}: progress restarts callTimeoutMs and reaches the caller as tool output`, async (t) => {
    // Six steps of 0.5 s: 3 s in all, twice callTimeoutMs, but never 1.5 s without progress.
    const c = client(t, { every: await config(t, { callTimeoutMs: 1500 }) });
    await c.ready();
    const output: string[] = [];
    const ctx: ToolContext = { ...owner, onOutput: (_stream, text) => output.push(text) };
    const r = await registryOf(c).call({ name: 'every__trigger-long-running-operation', input: { duration: 3, steps: 6 } }, ctx);
    t.equal(r.outcome, 'ok', r.result.content);
    t.match(r.result.content, /Long running operation completed\. Duration: 3 seconds, Steps: 6/);
    t.same(output, ['progress 1/6\n', 'progress 2/6\n', 'progress 3/6\n', 'progress 4/6\n', 'progress 5/6\n', 'progress 6/6\n']);
  });

  t.test(`server-everything over ${transport}: a new resource (resources/list_changed) refreshes the list and the tool's description`, async (t) => {
    const c = client(t, { every: await config(t) });
    await c.ready();
    const before = c.status()[0]!.resources!;
    const reg = registryOf(c);
    // gzip-file-as-resource registers a session resource, and the server says its list changed.
    const r = await reg.call({ name: 'every__gzip-file-as-resource', input: { name: 'hello.gz', data: 'data:text/plain;base64,aGVsbG8gd29ybGQ=' } }, owner);
    t.equal(r.outcome, 'ok', r.result.content);
    await until('the resource list refreshed', () => c.status()[0]!.resources === before + 1);
    const all = await reg.call({ name: 'every__read_resource', input: {} }, owner);
    t.match(all.result.content, /demo:\/\/resource\/session\/hello\.gz/, 'the new resource is listed');
    const read = await reg.call({ name: 'every__read_resource', input: { uri: 'demo://resource/session/hello.gz' } }, owner);
    t.match(read.result.content, /application\/gzip, \d+ bytes of binary data, base64\]\nH4sI/, 'a binary blob reaches the model as base64, labelled');
  });
}

t.test('progress cannot keep a call alive forever: the hard cap of 10 × callTimeoutMs', async (t) => {
  // Progress every 0.2 s for 10 s; callTimeoutMs 500 gives a hard cap of 5000 ms.
  const c = client(t, { every: server({ command: process.execPath, args: [everything, 'stdio'], callTimeoutMs: 500 }) });
  await c.ready();
  let progress = 0;
  const r = await registryOf(c).call({ name: 'every__trigger-long-running-operation', input: { duration: 10, steps: 50 } }, { ...owner, onOutput: () => progress++ });
  t.equal(r.outcome, 'error');
  t.match(r.result.content, /MCP server every: tools\/call still unanswered after 5000 ms \(10 × mcp\.servers\.every\.callTimeoutMs, at most 600000\), the most a call may take even while it reports progress/);
  t.ok(progress > 5, `progress came meanwhile (${progress} notifications)`);
  t.equal(c.status()[0]!.state, 'up', 'the server stays up');
});

t.test('a call that stops reporting progress times out callTimeoutMs after its last progress', async (t) => {
  // One step of 2 s: no progress at all within callTimeoutMs.
  const c = client(t, { every: server({ command: process.execPath, args: [everything, 'stdio'], callTimeoutMs: 700 }) });
  await c.ready();
  const r = await registryOf(c).call({ name: 'every__trigger-long-running-operation', input: { duration: 2, steps: 1 } }, owner);
  t.match(r.result.content, /MCP server every: no answer to tools\/call within 700 ms \(mcp\.servers\.every\.callTimeoutMs\)/);
});

t.test('the resource tool is an MCP tool to the policy: owner\'s chats only unless an allow list names the server', async (t) => {
  const c = client(t, { every: server({ command: process.execPath, args: [everything, 'stdio'] }) });
  await c.ready();
  const denied = await registryOf(c).call({ name: 'every__read_resource', input: { uri: 'demo://resource/dynamic/text/1' } }, telegram);
  t.equal(denied.outcome, 'denied');
  t.match(denied.result.content, /run only in the owner's chats.*every__\*/);
  t.notOk(registryOf(c).specs(telegram).some((s) => s.name === 'every__read_resource'), 'not offered there');
  const allowed = await registryOf(c, ['every__*']).call({ name: 'every__read_resource', input: { uri: 'demo://resource/dynamic/text/1' } }, telegram);
  t.equal(allowed.outcome, 'ok', 'every__* grants it with the tools');
  const capped = client(t, { small: server({ command: process.execPath, args: [everything, 'stdio'], maxResultBytes: 512 }) });
  await capped.ready();
  const big = await registryOf(capped).call({ name: 'small__read_resource', input: { uri: 'demo://resource/static/document/structure.md' } }, owner);
  t.equal(big.outcome, 'ok');
  t.match(big.result.content, /more bytes cut: mcp\.servers\.<name>\.maxResultBytes/, 'a resource is capped like a tool result');
  t.ok(Buffer.byteLength(big.result.content) < 512 + 600, `capped (${Buffer.byteLength(big.result.content)} bytes)`);
});

t.test('paging: resources/list follows nextCursor; a server without resources or prompts is not asked, and says so', async (t) => {
  const c = client(t, { many: server({ command: process.execPath, args: [faulty, 'many'] }), plain: server({ command: process.execPath, args: [faulty, 'ok'] }) });
  await c.ready();
  const { resources, templates } = await c.resources('many');
  t.equal(resources.length, 120, 'all three pages');
  t.equal(resources[119]!.uri, 'test://r/119');
  t.same(templates, [{ uriTemplate: 'test://r/{n}', name: 'numbered' }]);
  t.equal(c.status()[0]!.resources, 120);
  t.equal(c.status()[1]!.resources, undefined, 'no resources count for a server without them');
  t.notOk(c.tools().some((x) => x.name === 'plain__read_resource'), 'and no resource tool');
  await t.rejects(c.resources('plain'), /^MCP server plain offers no resources \(its initialize answer declares no resources capability\)$/);
  await t.rejects(c.prompts('plain'), /MCP server plain offers no prompts/);
  await t.rejects(c.readResource('plain', 'x://y'), /MCP server plain offers no resources/);
});
