// One side of bench/mcp.mjs, in a process of its own so that its RSS is its own: loads a client
// (the bare official SDK client (@modelcontextprotocol/sdk), or pinclaw's MCP client behind its tool registry), connects it to
// server-everything over stdio, and times `echo` calls. Prints one JSON line.
//   node --expose-gc mcp-child.mjs sdk|pinclaw BUNDLE SERVER_JS CALLS WARMUP
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const [variant, bundle, serverJs, callsText, warmupText] = process.argv.slice(2);
const calls = Number(callsText);
const warmup = Number(warmupText);
const rss = () => {
  globalThis.gc();
  globalThis.gc();
  return process.memoryUsage().rss;
};

const before = rss();
const m = await import(pathToFileURL(bundle).href);
const loaded = rss();
let call;
let close;
if (variant === 'sdk') {
  const client = new m.Client({ name: 'bench', version: '1.0.0' });
  await client.connect(new m.StdioClientTransport({ command: process.execPath, args: [serverJs, 'stdio'], stderr: 'ignore' }));
  call = (i) => client.callTool({ name: 'echo', arguments: { message: `m${i}` } });
  close = () => client.close();
} else {
  const sandbox = m.defaults().sandbox;
  const server = { enabled: true, command: process.execPath, args: [serverJs, 'stdio'], env: {}, headers: {}, tools: ['*'], callTimeoutMs: 60000, listTimeoutMs: 10000, maxResultBytes: 65536, sandbox: false, network: false, paths: [], writePaths: [] };
  const client = m.createMcpClient({ servers: { every: server }, workspace: process.env.BENCH_WORKSPACE, sandbox });
  await client.ready();
  const registry = m.createRegistry([], { sources: [client], policy: m.createPolicy(m.defaults().tools) });
  const ctx = { sessionKey: 'bench', channel: 'cli', chatId: 'local', caller: 'owner' };
  call = async (i) => {
    const r = await registry.call({ name: 'every__echo', input: { message: `m${i}` } }, ctx);
    if (r.outcome !== 'ok') throw new Error(r.result.content);
  };
  close = () => client.close();
}
for (let i = 0; i < warmup; i++) await call(i);
const connected = rss();
const times = [];
for (let i = 0; i < calls; i++) {
  const t0 = performance.now();
  await call(i);
  times.push(performance.now() - t0);
}
await close();
times.sort((a, b) => a - b);
process.stdout.write(`${JSON.stringify({ variant, loadBytes: loaded - before, connectedBytes: connected - loaded, medianMs: times[Math.floor(times.length / 2)], p99Ms: times[Math.floor(times.length * 0.99)] })}\n`);
