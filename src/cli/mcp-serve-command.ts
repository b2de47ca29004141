// `pinclaw mcp serve`: this board's tools for an MCP client over stdio, e.g. a desktop client that
// runs `ssh pi@host pinclaw mcp serve`. The tools are those of mcp.serve.tools (default: the
// read-only ones), each call judged by the registry as channel mcp and audited (src/mcp/server/).
// Runs until the client closes stdin (exit 0), or SIGINT/SIGTERM.
import { EXIT, UsageError } from '../errors.js';
import { log } from '../log.js';
import { exposedTools, MCP_CHANNEL, MCP_CHAT, MCP_SESSION } from '../mcp/server/exposed.js';
import { createMcpServer } from '../mcp/server/server.js';
import { serveStdio, type StdioStreams } from '../mcp/server/stdio.js';
import { insertAudit } from '../store/audit.js';
import { pinclawVersion } from '../version.js';
import { parseCommandArgs } from './args.js';
import type { CliContext } from './context.js';
import { openToolProcess } from '../setup/tool-process.js';

const USAGE = 'pinclaw mcp serve';

export async function runMcpServe(args: string[], ctx: CliContext, streams: StdioStreams = { input: process.stdin, output: process.stdout }): Promise<number> {
  const { positionals } = parseCommandArgs(args, {}, USAGE);
  if (positionals.length) throw new UsageError(`unexpected argument '${positionals[0]}'\nusage: ${USAGE}`);

  const tp = await openToolProcess(ctx);
  // A signal ends the session like the end of stdin: calls aborted, audit rows written, store closed.
  const stop = () => streams.input.destroy();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const names = tp.config.mcp.serve.tools;
    const registered = new Set(tp.registry.list({ sessionKey: MCP_SESSION, channel: MCP_CHANNEL, chatId: MCP_CHAT }).map((l) => l.tool.name));
    // A name that matches no tool serves nothing; said on stderr (stdout is the protocol's), not fatal:
    // a hardware tool is missing on a machine without the hardware, and the rest still works.
    for (const n of names ?? []) {
      if (n !== '*' && !registered.has(n)) log.warn(`mcp.serve.tools names '${n}', which is no tool here; tools: ${[...registered].join(', ')}`);
    }
    const tools = exposedTools({ registry: tp.registry, names, audit: (row) => insertAudit(tp.db, row), redact: tp.redact });
    const server = createMcpServer(tools, { name: 'pinclaw', version: pinclawVersion() });
    log.info(`mcp serve: serving ${tools.list().map((t) => t.name).join(', ') || 'no tools'} on stdio`);
    await serveStdio(server, streams);
    return EXIT.ok;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    tp.close();
  }
}
