// `pinclaw mcp serve` driven by the official TypeScript SDK's client: the real CLI spawned over stdio
// with a temp home (tools listed, called, refused, audited in the real SQLite file, old revisions,
// garbage lines, the end of stdin). The physical-action rule needs a GPIO chip this machine lacks, so
// those calls go to the same server code in-process, with the in-memory chip behind the GPIO backend
// interface, still through the SDK's client.
import t, { type Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { loadConfig } from '../src/config/index.js';
import { loadBoardRegistry } from '../src/hardware/boards/registry.js';
import { createGpioService } from '../src/hardware/gpio/service.js';
import { gpioTools } from '../src/hardware/gpio/tools.js';
import { exposedTools, servedByDefault } from '../src/mcp/server/exposed.js';
import { createMcpServer } from '../src/mcp/server/server.js';
import { serveStdio } from '../src/mcp/server/stdio.js';
import { resolvePaths } from '../src/paths.js';
import { insertAudit, queryAudit } from '../src/store/audit.js';
import { openDatabase } from '../src/store/db.js';
import { configuredRegistry } from '../src/setup/registry.js';
import { fakeGpioChip } from './support/fake-gpio-chip.js';
import { bundle, cleanEnv, tempDir } from './support/proc.js';

function home(config: Record<string, unknown>): string {
  const dir = tempDir('pinclaw-mcp-serve-');
  writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
  mkdirSync(join(dir, 'workspace'), { recursive: true });
  return dir;
}

/** The SDK's client on the real CLI; stderr kept for the messages of failed assertions. */
async function connect(dir: string, version?: string) {
  const transport = new StdioClientTransport({ command: process.execPath, args: [bundle, '--home', dir, 'mcp', 'serve'], env: cleanEnv() as Record<string, string>, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const client = new Client({ name: 'pinclaw-test', version: '1.0.0' });
  if (version) {
    // The SDK always asks for its newest revision; a client of an older SDK asks for its own.
    const send = transport.send.bind(transport);
    transport.send = (msg: JSONRPCMessage) => {
      if ('method' in msg && msg.method === 'initialize' && msg.params) msg = { ...msg, params: { ...msg.params, protocolVersion: version } };
      return send(msg);
    };
  }
  // Every message the server sends, as the client received it (connect sets onmessage before start).
  const received: JSONRPCMessage[] = [];
  const start = transport.start.bind(transport);
  transport.start = () => {
    const on = transport.onmessage;
    transport.onmessage = (m: JSONRPCMessage) => {
      received.push(m);
      on?.(m);
    };
    return start();
  };
  await client.connect(transport);
  return { client, transport, received, stderr: () => stderr };
}

const text = (r: Awaited<ReturnType<Client['callTool']>>) => (r.content as { type: string; text: string }[]).map((c) => c.text).join('');

t.test('the SDK client lists and calls the read-only tools; others are refused and every call is audited as channel mcp', async (t) => {
  const dir = home({});
  const { client, stderr } = await connect(dir);
  t.teardown(() => client.close());
  t.equal(client.getServerVersion()?.name, 'pinclaw');
  const { tools } = await client.listTools();
  const names = tools.map((x) => x.name);
  t.ok(names.includes('current_time') && names.includes('read_file') && names.includes('memory_search'), `the read-only tools are listed: ${names.join(', ')}`);
  for (const n of ['write_file', 'exec', 'send_message', 'memory_store', 'cron_add']) t.notOk(names.includes(n), `${n} (not read-only) is not listed`);
  const time = tools.find((x) => x.name === 'current_time')!;
  t.equal(time.inputSchema.type, 'object');
  t.ok(time.inputSchema.properties && 'timezone' in time.inputSchema.properties, 'the inputSchema is the tool\'s own');
  t.equal(time.annotations?.readOnlyHint, true);

  const now = await client.callTool({ name: 'current_time', arguments: { timezone: 'UTC' } });
  t.notOk(now.isError, `current_time runs: ${text(now)} ${stderr()}`);
  t.match(text(now), /ISO 8601 UTC: \d{4}-\d\d-\d\dT/);

  writeFileSync(join(dir, 'workspace', 'note.txt'), 'the greenhouse fan is on GPIO18\n');
  const read = await client.callTool({ name: 'read_file', arguments: { path: 'note.txt' } });
  t.notOk(read.isError);
  t.match(text(read), 'the greenhouse fan is on GPIO18');

  const bad = await client.callTool({ name: 'current_time', arguments: { timezone: 42 } });
  t.equal(bad.isError, true, 'arguments the schema refuses: a tool error');
  t.match(text(bad), /invalid arguments for current_time/);

  const write = await client.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'no' } });
  t.equal(write.isError, true, 'a tool outside mcp.serve.tools is refused');
  t.match(text(write), /write_file refused: .*mcp\.serve\.tools/);

  await t.rejects(client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool: no_such_tool/, 'a name no tool has: a protocol error');
  await client.ping();
  await client.close();

  const db = openDatabase(join(dir, 'pinclaw.db'), { readonly: true });
  t.teardown(() => db.close());
  const rows = queryAudit(db);
  const of = (tool: string) => rows.filter((r) => r.tool === tool);
  t.ok(rows.length >= 5, `one row per call: ${JSON.stringify(rows.map((r) => [r.tool, r.outcome]))}`);
  for (const r of rows) t.same([r.channel, r.chat_id, r.caller], ['mcp', 'stdio', 'mcp-client'], `${r.tool}: channel mcp`);
  t.same(of('current_time').map((r) => r.outcome).sort(), ['error', 'ok']);
  t.equal(of('read_file')[0]?.outcome, 'ok');
  t.same(of('write_file').map((r) => [r.outcome, r.rule]), [['denied', 'mcp.serve.tools']]);
  t.equal(of('no_such_tool').length, 1, 'the unknown name is audited as the registry audits it');
});

t.test('mcp.serve.tools names the tools; policy still decides as channel mcp', async (t) => {
  const dir = home({ mcp: { serve: { tools: ['current_time', 'write_file', 'spawn'] } }, tools: { overrides: [{ channel: 'mcp', deny: ['write_file'] }] } });
  const { client } = await connect(dir);
  t.teardown(() => client.close());
  const { tools } = await client.listTools();
  t.same(tools.map((x) => x.name), ['current_time'], 'what policy denies as channel mcp is not listed (write_file by the override, spawn by the profile)');
  const write = await client.callTool({ name: 'write_file', arguments: { path: 'x.txt', content: 'no' } });
  t.equal(write.isError, true);
  t.match(text(write), /channel mcp override denies write_file \(tools\.overrides\[0\]\.deny\)/);
  const list = await client.callTool({ name: 'list_dir', arguments: {} });
  t.match(text(list), /list_dir refused: list_dir is not in mcp\.serve\.tools/, 'a read-only tool the list leaves out is refused too');
});

t.test('an older client: revision 2024-11-05 is negotiated; an unknown one gets the newest', async (t) => {
  const dir = home({});
  const old = await connect(dir, '2024-11-05');
  const init = old.received.find((m) => 'result' in m && 'protocolVersion' in m.result) as { result: { protocolVersion: string } } | undefined;
  t.equal(init?.result.protocolVersion, '2024-11-05', 'the server answers the revision the client asked for');
  t.ok((await old.client.listTools()).tools.length > 0, 'and it works on it');
  await old.client.close();
});

/** The server spawned bare: raw lines in, answers out (what the SDK client never sends). */
function raw(dir: string) {
  const child = spawn(process.execPath, [bundle, '--home', dir, 'mcp', 'serve'], { env: cleanEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) => child.on('exit', (code, signal) => res({ code, signal })));
  const answers = () => out.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
  async function waitFor(n: number): Promise<Record<string, unknown>[]> {
    for (let i = 0; i < 300 && answers().length < n; i++) await new Promise((r) => setTimeout(r, 50));
    return answers();
  }
  return { child, waitFor, exited, stderr: () => err, stdout: () => out };
}

t.test('garbage lines get a parse error and the server goes on; the end of stdin exits 0', async (t) => {
  const dir = home({});
  const s = raw(dir);
  s.child.stdin.write('this is not json\n');
  s.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}\n');
  const first = await s.waitFor(2);
  const parse = first.find((a) => a.id === null) as { error: { code: number; message: string } } | undefined;
  t.equal(parse?.error.code, -32700, `a parse error for the garbage line: ${s.stdout()} ${s.stderr()}`);
  const init = first.find((a) => a.id === 1) as { result: { protocolVersion: string } } | undefined;
  t.equal(init?.result.protocolVersion, '2025-11-25', 'a revision it does not know: the newest');
  s.child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  s.child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"resources/list"}\n');
  s.child.stdin.write('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}\n');
  s.child.stdin.write('[1]\n');
  s.child.stdin.write('{"jsonrpc":"2.0","id":4,"method":"ping"}\n');
  const all = await s.waitFor(6);
  const byId = (id: number) => all.find((a) => a.id === id) as { error?: { code: number; message: string }; result?: unknown } | undefined;
  t.equal(byId(2)?.error?.code, -32601, 'an unknown method: method not found');
  t.equal(byId(3)?.error?.code, -32602, 'a call without a name: invalid params');
  t.match(byId(3)?.error?.message, /params\.name/);
  t.ok(all.some((a) => Array.isArray(a) && (a as { error: { code: number } }[])[0]?.error.code === -32600), 'a batch of a non-message: invalid request, in a batch answer');
  t.same(byId(4)?.result, {}, 'and it still answers a ping');
  t.equal(all.length, 6, 'no answer to the notification');
  s.child.stdin.end();
  const end = await s.exited;
  t.same(end, { code: 0, signal: null }, `the end of stdin ends the process cleanly: ${s.stderr()}`);
  t.notMatch(s.stdout(), /^(?!\{|\[).+$/m, 'stdout holds protocol messages only');
});

/** The SDK client over a pair of in-process streams, to the server code the CLI runs. */
function streamTransport(toServer: PassThrough, fromServer: PassThrough): Transport {
  let buffered = '';
  const tr: Transport = {
    async start() {
      fromServer.setEncoding('utf8');
      fromServer.on('data', (chunk: string) => {
        buffered += chunk;
        for (let nl = buffered.indexOf('\n'); nl !== -1; nl = buffered.indexOf('\n')) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line) tr.onmessage?.(JSON.parse(line) as JSONRPCMessage);
        }
      });
    },
    async send(msg) {
      toServer.write(JSON.stringify(msg) + '\n');
    },
    async close() {
      toServer.end();
      tr.onclose?.();
    },
  };
  return tr;
}

async function gpioServer(t: Test, config: Record<string, unknown>) {
  const dir = home({ hardware: { lines: [{ name: 'relay', line: 'GPIO17', direction: 'output' }] }, mcp: { serve: { tools: ['gpio_write', 'current_time'] } }, ...config });
  const paths = resolvePaths({ home: dir });
  const cfg = loadConfig(paths, {});
  const chip = fakeGpioChip();
  const board = loadBoardRegistry().get('rpi-3b')!.profile;
  const gpio = createGpioService({ backend: chip.backend, board, reserved: new Map(), hardware: cfg.hardware });
  gpio.claimOutputs();
  const db = openDatabase(paths.database);
  const { registry, redact } = configuredRegistry({ config: cfg, paths, env: {}, db, extraTools: gpioTools({ gpio, confirm: cfg.hardware.confirm, boardInfo: () => board.name }) });
  const toServer = new PassThrough();
  const fromServer = new PassThrough();
  const server = createMcpServer(exposedTools({ registry, names: cfg.mcp.serve.tools, audit: (row) => insertAudit(db, row), redact }), { name: 'pinclaw', version: 'test' });
  const served = serveStdio(server, { input: toServer, output: fromServer });
  const client = new Client({ name: 'pinclaw-test', version: '1.0.0' });
  await client.connect(streamTransport(toServer, fromServer));
  t.teardown(async () => {
    await served;
    gpio.close();
    db.close();
  });
  return { client, chip, db, served };
}

t.test('a physical action over MCP is refused unless mcp:stdio is a control chat', async (t) => {
  const off = await gpioServer(t, {});
  const { tools } = await off.client.listTools();
  t.same(tools.map((x) => x.name).sort(), ['current_time', 'gpio_write'], 'exposed by mcp.serve.tools');
  const refused = await off.client.callTool({ name: 'gpio_write', arguments: { line: 'relay', value: 1 } });
  t.equal(refused.isError, true);
  t.match(text(refused), /gpio_write refused: it needs the owner's confirmation \(physical action outside the owner's chats \(tools\.controlChats\)\) and channel mcp has no way to ask/);
  t.equal(off.chip.lines[17]!.value, 0, 'the relay did not switch');
  await off.client.close();
  await off.served;
  const row = queryAudit(off.db, { tool: 'gpio_write' });
  t.same(row.map((r) => [r.channel, r.chat_id, r.outcome]), [['mcp', 'stdio', 'denied']]);
  t.match(row[0]?.rule, /tools\.controlChats/);

  const on = await gpioServer(t, { tools: { controlChats: ['cli:local', 'mcp:stdio'] } });
  const done = await on.client.callTool({ name: 'gpio_write', arguments: { line: 'relay', value: 1 } });
  t.notOk(done.isError, `from a control chat it runs: ${text(done)}`);
  t.equal(on.chip.lines[17]!.value, 1, 'the relay switched');
  await on.client.close();
  await on.served;
  const rows = queryAudit(on.db, { tool: 'gpio_write' });
  t.same(rows.map((r) => [r.channel, r.outcome]), [['mcp', 'ok']]);
  t.match(rows[0]?.physical, /relay|GPIO17/, 'the audit row says what changed');
});

t.test('served by default: the read-only tools, but not remote_tool (a call of any tool on another board)', async (t) => {
  const tool = (name: string, readOnly: boolean) => ({ name, description: name, inputSchema: { type: 'object' as const }, readOnly, execute: async () => ({ content: '' }) });
  t.equal(servedByDefault(tool('current_time', true)), true);
  t.equal(servedByDefault(tool('write_file', false)), false);
  t.equal(servedByDefault(tool('remote_tool', true)), false);
});

t.test('SIGTERM ends the session like the end of stdin: exit 0, the audit rows written', async (t) => {
  const dir = home({});
  const s = raw(dir);
  s.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"current_time","arguments":{}}}\n');
  const answers = await s.waitFor(1);
  t.equal((answers[0] as { result?: { isError: boolean } }).result?.isError, false, `the call ran: ${s.stdout()} ${s.stderr()}`);
  s.child.kill('SIGTERM');
  t.same(await s.exited, { code: 0, signal: null }, `a clean exit: ${s.stderr()}`);
  const db = openDatabase(join(dir, 'pinclaw.db'), { readonly: true });
  t.teardown(() => db.close());
  t.same(queryAudit(db, { tool: 'current_time' }).map((r) => [r.channel, r.outcome]), [['mcp', 'ok']]);
});

t.test('notifications/cancelled stops a call in flight, which then gets no answer', async (t) => {
  const dir = home({ mcp: { serve: { tools: ['exec'] } }, tools: { allow: ['exec'] } });
  const s = raw(dir);
  s.child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec","arguments":{"command":"sleep 60"}}}\n');
  await new Promise((r) => setTimeout(r, 500));
  s.child.stdin.write('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"the user pressed stop"}}\n');
  s.child.stdin.write('{"jsonrpc":"2.0","id":2,"method":"ping"}\n');
  const answers = await s.waitFor(1);
  t.same(answers, [{ jsonrpc: '2.0', id: 2, result: {} }], `only the ping is answered: ${s.stderr()}`);
  s.child.stdin.end();
  // The sleep was stopped: the process would otherwise wait 60 s for it (the test's timeout says so).
  t.same(await s.exited, { code: 0, signal: null });
  t.equal(s.stdout().trim().split('\n').length, 1, 'and the cancelled call got no answer later either');
  const db = openDatabase(join(dir, 'pinclaw.db'), { readonly: true });
  t.teardown(() => db.close());
  const rows = queryAudit(db, { tool: 'exec' });
  t.equal(rows.length, 1);
  t.equal(rows[0]?.outcome, 'error', `the call ended as stopped: ${rows[0]?.detail ?? ''}`);
});
