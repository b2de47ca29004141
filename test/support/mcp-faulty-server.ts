// A stdio MCP server that misbehaves on purpose, for the faults no well-made server shows: run as
// `node mcp-faulty-server.ts MODE` (Node strips the types). It speaks newline-delimited JSON-RPC
// like any stdio server; MODE picks the fault:
//   ok         a working server: tools echo, sleep, die (exits in the middle of the call), big
//              (a result of `bytes` bytes), add-tool (adds a tool and sends tools/list_changed)
//   no-list    never answers tools/list
//   many       200 tools, 50 per tools/list page; 120 resources, 50 per resources/list page, and
//              a resource template (the only mode that declares resources)
//   garbage    a line of non-JSON before every answer
//   old        answers initialize with 2024-11-05 whatever it was asked
//   future     answers initialize with a revision nobody speaks
//   crash      writes to stderr and exits 3 at once
//   grandchild starts a `sleep` child (in its process group) and otherwise works like ok
//   stubborn   works like ok, but stays up when its stdin ends (only a signal ends it)
//   files      tools echo, read-file and write-file ({path, text}): what the sandbox lets it touch;
//              with FAULTY_SLEEP set it also starts a `sleep` child, as grandchild does
// Every start appends a line to $FAULTY_STARTS when set, so a test can count restarts.
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const mode = process.argv[2] ?? 'ok';
if (process.env.FAULTY_STARTS) appendFileSync(process.env.FAULTY_STARTS, `${process.pid}\n`);

if (mode === 'crash') {
  process.stderr.write('faulty: cannot open /nonexistent/config.yaml\n');
  process.exit(3);
}
if (mode === 'stubborn') setInterval(() => undefined, 1 << 30);
if (mode === 'grandchild' || (mode === 'files' && process.env.FAULTY_SLEEP)) {
  const child = spawn('sleep', [process.env.FAULTY_SLEEP ?? '1000'], { stdio: 'ignore' });
  process.stderr.write(`faulty: grandchild ${child.pid}\n`);
}

type Msg = { jsonrpc: '2.0'; id?: number | string; method?: string; params?: Record<string, unknown> };

const schema = { type: 'object', properties: { message: { type: 'string' }, ms: { type: 'number' }, bytes: { type: 'number' }, path: { type: 'string' }, text: { type: 'string' } } };
const tools: { name: string; description: string; inputSchema: object }[] = mode === 'many'
  ? Array.from({ length: 200 }, (_, i) => ({ name: `tool_${i}`, description: `tool number ${i}`, inputSchema: { type: 'object' } }))
  : (mode === 'files' ? ['echo', 'read-file', 'write-file'] : ['echo', 'sleep', 'die', 'big', 'add-tool']).map((name) => ({ name, description: `the ${name} tool`, inputSchema: schema }));

/** What happened, as text: the content, "written", or the error's code. */
function attempt(f: () => string): string {
  try {
    return f();
  } catch (err) {
    return `error ${(err as NodeJS.ErrnoException).code ?? String(err)}`;
  }
}
// A tool the model could not call (its arguments are not an object): the client must skip it.
if (mode === 'ok') tools.push({ name: 'bad-schema', description: 'arguments are a string', inputSchema: { type: 'string' } });

function send(m: object): void {
  if (mode === 'garbage') process.stdout.write('this is not JSON {\n');
  process.stdout.write(`${JSON.stringify(m)}\n`);
}

function answer(id: number | string, result: unknown): void {
  send({ jsonrpc: '2.0', id, result });
}

const text = (t: string) => ({ content: [{ type: 'text', text: t }] });

function call(id: number | string, name: string, args: Record<string, unknown>): void {
  switch (name) {
    case 'echo':
      answer(id, text(`echo: ${String(args.message)}`));
      return;
    case 'sleep':
      setTimeout(() => answer(id, text('slept')), Number(args.ms ?? 1000));
      return;
    case 'die':
      process.stderr.write('faulty: segmentation fault in the frobnicator\n');
      process.exit(7);
      return;
    case 'read-file':
      answer(id, text(attempt(() => `content ${readFileSync(String(args.path), 'utf8')}`)));
      return;
    case 'write-file':
      answer(id, text(attempt(() => (writeFileSync(String(args.path), String(args.text ?? 'x')), 'written'))));
      return;
    case 'big':
      answer(id, text('x'.repeat(Number(args.bytes ?? 10 * 1024 * 1024))));
      return;
    case 'add-tool':
      tools.push({ name: `added_${tools.length}`, description: 'added later', inputSchema: { type: 'object' } });
      answer(id, text('added'));
      send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
      return;
    default:
      if (name.startsWith('tool_') || name.startsWith('added_')) answer(id, text(name));
      else send({ jsonrpc: '2.0', id, error: { code: -32602, message: `unknown tool ${name}` } });
  }
}

const PAGE = 50;
createInterface({ input: process.stdin }).on('line', (line) => {
  let m: Msg;
  try {
    m = JSON.parse(line) as Msg;
  } catch {
    return;
  }
  if (m.id === undefined || !m.method) return;
  switch (m.method) {
    case 'initialize': {
      const version = mode === 'old' ? '2024-11-05' : mode === 'future' ? '2099-01-01' : String(m.params?.protocolVersion);
      const resources = mode === 'many' ? { resources: {} } : {};
      answer(m.id, { protocolVersion: version, capabilities: { tools: { listChanged: true }, ...resources }, serverInfo: { name: `faulty-${mode}`, version: '1.0.0' } });
      return;
    }
    case 'resources/list': {
      const start = typeof m.params?.cursor === 'string' ? Number(m.params.cursor) : 0;
      const page = Array.from({ length: Math.max(0, Math.min(PAGE, 120 - start)) }, (_, i) => ({ uri: `test://r/${start + i}`, name: `r${start + i}` }));
      answer(m.id, { resources: page, ...(start + PAGE < 120 ? { nextCursor: String(start + PAGE) } : {}) });
      return;
    }
    case 'resources/templates/list':
      answer(m.id, { resourceTemplates: [{ uriTemplate: 'test://r/{n}', name: 'numbered' }] });
      return;
    case 'tools/list': {
      if (mode === 'no-list') return;
      const start = typeof m.params?.cursor === 'string' ? Number(m.params.cursor) : 0;
      const page = mode === 'many' ? tools.slice(start, start + PAGE) : tools;
      const next = mode === 'many' && start + PAGE < tools.length ? { nextCursor: String(start + PAGE) } : {};
      answer(m.id, { tools: page, ...next });
      return;
    }
    case 'tools/call':
      call(m.id, String(m.params?.name), (m.params?.arguments ?? {}) as Record<string, unknown>);
      return;
    case 'ping':
      answer(m.id, {});
      return;
    default:
      send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: `no ${m.method}` } });
  }
});
// Stays up on stdin's end like many real servers do not: close must still get rid of it.
process.on('SIGTERM', () => {
  if (mode === 'grandchild') return; // ignores SIGTERM: the SIGKILL 2 s later has to do it
  process.exit(0);
});
