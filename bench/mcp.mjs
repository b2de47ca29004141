// npm run bench:mcp [-- --rounds N] [--calls N] [--json]
// pinclaw's MCP client against the official TypeScript SDK's (@modelcontextprotocol/sdk, the
// devDependency the tests use too), in the same run, on the same server
// (@modelcontextprotocol/server-everything over stdio, unconfined on both sides so that only the
// clients differ):
//   - the size of each client as a minified bundle (what the lazy chunk would weigh);
//   - a tool call (`echo`) through pinclaw's tool registry (policy, limits, redaction; no audit
//     store) against the same call from the bare SDK client: the ratio of the medians, target <= 1.5;
//   - the RSS each adds to its process: loading the client, and one connected server.
// Each side runs in a process of its own (RSS), alternating across rounds. Prints, never fails.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, calls: { type: 'string', default: '300' }, warmup: { type: 'string', default: '20' }, json: { type: 'boolean', default: false } } });
const note = (msg) => process.stderr.write(`${msg}\n`);
const TARGET = 1.5;

const out = join(root, 'dist', '.bench');
mkdirSync(out, { recursive: true });
const bundles = {
  sdk: { file: join(out, 'mcp-sdk.mjs'), contents: "export { Client } from '@modelcontextprotocol/sdk/client/index.js';\nexport { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';" },
  pinclaw: {
    file: join(out, 'mcp-pinclaw.mjs'),
    contents: [
      "export { createMcpClient } from './src/mcp/client/manager.ts';",
      "export { createRegistry } from './src/tools/registry.ts';",
      "export { createPolicy } from './src/tools/policy.ts';",
      "export { defaults } from './src/config/schema.ts';",
    ].join('\n'),
  },
};
// The minified size of each client alone, as a chunk holds it (pinclaw's: its own modules; the
// modules of the bundle it uses, such as the logger, are not counted, as the chunk shares them).
const sizes = {};
for (const [name, entry] of Object.entries({ sdk: bundles.sdk.contents, pinclaw: "export { startMcpClient } from './src/mcp/client/index.ts';" })) {
  const r = await build({ stdin: { contents: entry, resolveDir: root, loader: 'ts', sourcefile: `${name}.ts` }, bundle: true, minify: true, write: false, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'silent', metafile: true });
  const own = Object.entries(r.metafile.outputs)[0][1].inputs;
  const counted = name === 'pinclaw' ? Object.entries(own).filter(([p]) => p.startsWith('src/mcp/')).reduce((n, [, v]) => n + v.bytesInOutput, 0) : r.outputFiles[0].contents.length;
  sizes[name] = counted;
}
for (const b of Object.values(bundles)) {
  await build({ stdin: { contents: b.contents, resolveDir: root, loader: 'ts', sourcefile: 'entry.ts' }, outfile: b.file, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'warning' });
}

const serverJs = realpathSync(join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'));
const workspace = mkdtempSync(join(tmpdir(), 'pinclaw-bench-mcp-'));
const results = { sdk: [], pinclaw: [] };
try {
  for (let round = 0; round < Number(values.rounds); round++) {
    const order = round % 2 ? ['pinclaw', 'sdk'] : ['sdk', 'pinclaw'];
    for (const v of order) {
      const line = execFileSync(process.execPath, ['--expose-gc', join(root, 'bench', 'support', 'mcp-child.mjs'), v, bundles[v].file, serverJs, values.calls, values.warmup], { encoding: 'utf8', env: { ...process.env, BENCH_WORKSPACE: workspace } });
      const r = JSON.parse(line.trim().split('\n').at(-1));
      results[v].push(r);
      note(`round ${round + 1} ${v}: median ${r.medianMs.toFixed(3)} ms, load +${(r.loadBytes / 1048576).toFixed(1)} MiB, connected server +${(r.connectedBytes / 1048576).toFixed(1)} MiB`);
    }
  }
} finally {
  rmSync(workspace, { recursive: true, force: true });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = Object.fromEntries(Object.entries(results).map(([v, rs]) => [v, {
  clientBytes: sizes[v],
  medianMs: median(rs.map((r) => r.medianMs)),
  loadBytes: median(rs.map((r) => r.loadBytes)),
  connectedBytes: median(rs.map((r) => r.connectedBytes)),
}]));
const ratio = summary.pinclaw.medianMs / summary.sdk.medianMs;
if (values.json) process.stdout.write(`${JSON.stringify({ ...summary, ratio, target: TARGET })}\n`);
else {
  const kib = (b) => `${(b / 1024).toFixed(0)} KiB`;
  const mib = (b) => `${(b / 1048576).toFixed(1)} MiB`;
  console.log('client                  bundle     load RSS   +1 server RSS  median call');
  for (const [v, s] of Object.entries(summary)) console.log(`${v.padEnd(22)}  ${kib(s.clientBytes).padStart(8)}  ${mib(s.loadBytes).padStart(9)}  ${mib(s.connectedBytes).padStart(13)}  ${s.medianMs.toFixed(3)} ms`);
  console.log(`pinclaw (registry) / bare SDK at the median: ${ratio.toFixed(2)}x (target <= ${TARGET}x): ${ratio <= TARGET ? 'met' : 'not met'}`);
}
