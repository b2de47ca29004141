// `pinclaw mcp list | tools NAME | call NAME TOOL [JSON]`: the owner's look at the MCP servers of
// mcp.servers. A call takes the registry's governed path (policy, limits, redaction, audit) as the
// owner on the 'cli' channel, like `pinclaw tool run`. Each subcommand is one entry of SUBCOMMANDS.
import { loadConfig } from '../config/index.js';
import { EXIT, UsageError } from '../errors.js';
import { checkMcpConfig } from '../mcp/config.js';
import type { McpClient } from '../mcp/client/index.js';
import { startMcpClient } from '../mcp/client/index.js';
import type { ToolContext } from '../tools/types.js';
import { parseCommandArgs } from './args.js';
import { cliConfirm } from './confirm.js';
import type { CliContext } from './context.js';
import { openToolProcess } from './tool-process.js';

export const MCP_USAGE = 'pinclaw mcp list | tools NAME | call NAME TOOL [JSON] | serve';

type Subcommand = (rest: string[], ctx: CliContext) => Promise<number>;

function configured(ctx: CliContext): ReturnType<typeof loadConfig> {
  const config = loadConfig(ctx.paths, ctx.env);
  checkMcpConfig(config);
  return config;
}

function serverName(config: ReturnType<typeof loadConfig>, name: string | undefined, usage: string): string {
  if (!name) throw new UsageError(`usage: ${usage}`);
  const names = Object.keys(config.mcp.servers);
  if (!names.includes(name)) throw new UsageError(`no MCP server '${name}' in mcp.servers (configured: ${names.join(', ') || 'none'}; add one with pinclaw config set mcp.servers.${name} '{"command":"..."}')`);
  return name;
}

async function withClient<T>(client: McpClient, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } finally {
    await client.close();
  }
}

const list: Subcommand = async (rest, ctx) => {
  if (rest.length) throw new UsageError(`unexpected argument '${rest[0]}'\nusage: pinclaw mcp list`);
  const config = configured(ctx);
  const client = startMcpClient(config, { workspace: ctx.paths.workspace, home: ctx.paths.home });
  const status = await withClient(client, async () => {
    await client.ready();
    return client.status();
  });
  if (ctx.json) ctx.out(JSON.stringify(status, null, 2));
  else if (!status.length) ctx.out('no MCP server is configured (mcp.servers; docs/mcp.md)');
  else {
    for (const s of status) {
      const what = s.state === 'up' ? `up, ${s.tools} tools, ${s.serverInfo}, protocol ${s.protocolVersion}, ${s.sandbox}` : s.state === 'disabled' ? 'disabled' : `down: ${s.error}`;
      ctx.out(`${s.name} (${s.transport}): ${what}`);
    }
  }
  return status.some((s) => s.state === 'down') ? EXIT.failure : EXIT.ok;
};

const tools: Subcommand = async (rest, ctx) => {
  const config = configured(ctx);
  const name = serverName(config, rest[0], 'pinclaw mcp tools NAME');
  const client = startMcpClient(config, { workspace: ctx.paths.workspace, home: ctx.paths.home, only: name });
  const listed = await withClient(client, async () => {
    await client.ready();
    const err = client.status()[0]?.error;
    if (err) throw new Error(err);
    return (await client.remoteTools(name)).map((t) => ({ tool: t.name, name: client.toolName(name, t.name) ?? null, description: t.description ?? '', inputSchema: t.inputSchema }));
  });
  if (ctx.json) ctx.out(JSON.stringify(listed, null, 2));
  else {
    for (const t of listed) ctx.out(`${t.name ?? `${t.tool} (not offered: mcp.servers.${name}.tools)`}\n  ${t.description.split('\n')[0]}`);
  }
  return EXIT.ok;
};

const call: Subcommand = async (rest, ctx) => {
  const usage = 'pinclaw mcp call NAME TOOL [JSON]';
  if (rest.length < 2 || rest.length > 3) throw new UsageError(`usage: ${usage}`);
  let input: unknown = {};
  if (rest[2] !== undefined) {
    try {
      input = JSON.parse(rest[2]) as unknown;
    } catch (err) {
      throw new UsageError(`the tool input must be JSON, e.g. '{"message":"hi"}': ${(err as Error).message}\nusage: ${usage}`);
    }
  }
  let client: McpClient | undefined;
  const tp = await openToolProcess(ctx, {
    toolSources: (config) => {
      checkMcpConfig(config);
      const name = serverName(config, rest[0], usage);
      client = startMcpClient(config, { workspace: ctx.paths.workspace, home: ctx.paths.home, only: name });
      return [client];
    },
  });
  try {
    await client!.ready();
    const err = client!.status()[0]?.error;
    if (err) {
      ctx.err(`pinclaw: ${err}`);
      return EXIT.failure;
    }
    const toolName = client!.toolName(rest[0]!, rest[1]!) ?? rest[1]!;
    const toolCtx: ToolContext = { sessionKey: 'cli:mcp', channel: 'cli', chatId: 'local', caller: 'owner', confirm: cliConfirm(ctx) };
    const report = await tp.registry.call({ name: toolName, input }, toolCtx);
    if (ctx.json) ctx.out(JSON.stringify({ tool: toolName, outcome: report.outcome, rule: report.rule ?? null, content: report.result.content, auditId: report.auditId ?? null }));
    else if (report.outcome === 'ok') ctx.out(report.result.content);
    else ctx.err(`pinclaw: ${report.result.content}`);
    return report.outcome === 'ok' ? EXIT.ok : EXIT.failure;
  } finally {
    await client?.close();
    tp.close();
  }
};

/** One entry per subcommand (`serve` joins here). */
export const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = { list, tools, call };

export async function runMcp(args: string[], ctx: CliContext): Promise<number> {
  const { positionals } = parseCommandArgs(args, {}, MCP_USAGE);
  const [sub, ...rest] = positionals;
  const run = sub === undefined ? undefined : SUBCOMMANDS[sub];
  if (!run) throw new UsageError(`usage: ${MCP_USAGE}`);
  return run(rest[0] === '--' ? rest.slice(1) : rest, ctx);
}
