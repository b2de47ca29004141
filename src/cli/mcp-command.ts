// `pinclaw mcp list | tools NAME | call NAME TOOL [JSON] | resources NAME | read NAME URI |
// prompts NAME | prompt NAME PROMPT [JSON]`: the owner's look at the MCP servers of mcp.servers. A
// call takes the registry's governed path (policy, limits, redaction, audit) as the owner on the
// 'cli' channel, like `pinclaw tool run`, its progress on stderr. Reading a resource or getting a
// prompt is the owner's own look, not the model's, so it prints what the server sent. Each
// subcommand is one entry of SUBCOMMANDS.
import { loadConfig } from '../config/index.js';
import { EXIT, UsageError } from '../errors.js';
import { checkMcpConfig } from '../mcp/config.js';
import type { McpClient } from '../mcp/client/index.js';
import { startMcpClient } from '../mcp/client/index.js';
import { contentsText } from '../mcp/client/result.js';
import type { ToolContext } from '../tools/types.js';
import { parseCommandArgs } from './args.js';
import { cliConfirm } from './confirm.js';
import type { CliContext } from './context.js';
import { openToolProcess } from '../setup/tool-process.js';

export const MCP_USAGE = 'pinclaw mcp list | tools NAME | call NAME TOOL [JSON] | resources NAME | read NAME URI | prompts NAME | prompt NAME PROMPT [JSON] | serve';

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
      const what = s.state === 'up' ? `up, ${s.tools} tools${s.resources !== undefined ? `, ${s.resources} resources` : ''}${s.prompts !== undefined ? `, ${s.prompts} prompts` : ''}, ${s.serverInfo}, protocol ${s.protocolVersion}, ${s.sandbox}` : s.state === 'disabled' ? 'disabled' : `down: ${s.error}`;
      ctx.out(`${s.name} (${s.transport}): ${what}`);
    }
  }
  return status.some((s) => s.state === 'down') ? EXIT.failure : EXIT.ok;
};

/** Starts server `rest[0]` alone, runs `fn` once it is up (or fails with why it is not), stops it. */
async function withServer<T>(ctx: CliContext, rest: string[], usage: string, fn: (client: McpClient, name: string) => Promise<T>): Promise<T> {
  const config = configured(ctx);
  const name = serverName(config, rest[0], usage);
  const client = startMcpClient(config, { workspace: ctx.paths.workspace, home: ctx.paths.home, only: name });
  return withClient(client, async () => {
    await client.ready();
    const err = client.status()[0]?.error;
    if (err) throw new Error(err);
    return fn(client, name);
  });
}

/** An optional JSON object argument, or a usage error saying what was wrong. */
function jsonArg(text: string | undefined, what: string, example: string, usage: string): unknown {
  if (text === undefined) return {};
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${what} must be JSON, e.g. '${example}': ${(err as Error).message}\nusage: ${usage}`);
  }
}

function arity(rest: string[], min: number, max: number, usage: string): void {
  if (rest.length < min || rest.length > max) throw new UsageError(`usage: ${usage}`);
}

const tools: Subcommand = async (rest, ctx) => {
  const listed = await withServer(ctx, rest, 'pinclaw mcp tools NAME', async (client, name) =>
    (await client.remoteTools(name)).map((t) => ({ tool: t.name, name: client.toolName(name, t.name) ?? null, description: t.description ?? '', inputSchema: t.inputSchema })));
  const name = rest[0]!;
  if (ctx.json) ctx.out(JSON.stringify(listed, null, 2));
  else {
    for (const t of listed) ctx.out(`${t.name ?? `${t.tool} (not offered: mcp.servers.${name}.tools)`}\n  ${t.description.split('\n')[0]}`);
  }
  return EXIT.ok;
};

const call: Subcommand = async (rest, ctx) => {
  const usage = 'pinclaw mcp call NAME TOOL [JSON]';
  arity(rest, 2, 3, usage);
  const input = jsonArg(rest[2], 'the tool input', '{"message":"hi"}', usage);
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
    // The server's progress (notifications/progress), redacted by the registry, on stderr.
    const onOutput = (_stream: 'stdout' | 'stderr', text: string): void => ctx.err(`pinclaw: ${toolName}: ${text.trimEnd()}`);
    const toolCtx: ToolContext = { sessionKey: 'cli:mcp', channel: 'cli', chatId: 'local', caller: 'owner', confirm: cliConfirm(ctx), onOutput };
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

const resources: Subcommand = async (rest, ctx) => {
  const usage = 'pinclaw mcp resources NAME';
  arity(rest, 1, 1, usage);
  const listed = await withServer(ctx, rest, usage, (client, name) => client.resources(name));
  if (ctx.json) ctx.out(JSON.stringify(listed, null, 2));
  else {
    for (const r of listed.resources) ctx.out(`${r.uri}\n  ${r.title ?? r.name}${r.mimeType ? ` (${r.mimeType})` : ''}${r.description ? `: ${r.description.split('\n')[0]}` : ''}`);
    for (const t of listed.templates) ctx.out(`${t.uriTemplate} (template)\n  ${t.title ?? t.name}${t.mimeType ? ` (${t.mimeType})` : ''}${t.description ? `: ${t.description.split('\n')[0]}` : ''}`);
    if (!listed.resources.length && !listed.templates.length) ctx.out(`MCP server ${rest[0]} lists no resources now`);
  }
  return EXIT.ok;
};

const read: Subcommand = async (rest, ctx) => {
  const usage = 'pinclaw mcp read NAME URI';
  arity(rest, 2, 2, usage);
  const contents = await withServer(ctx, rest, usage, (client, name) => client.readResource(name, rest[1]!));
  if (ctx.json) ctx.out(JSON.stringify(contents, null, 2));
  else for (const c of contents) ctx.out(contentsText(c));
  return EXIT.ok;
};

const prompts: Subcommand = async (rest, ctx) => {
  const usage = 'pinclaw mcp prompts NAME';
  arity(rest, 1, 1, usage);
  const listed = await withServer(ctx, rest, usage, (client, name) => client.prompts(name));
  if (ctx.json) ctx.out(JSON.stringify(listed, null, 2));
  else {
    for (const p of listed) {
      const args = p.arguments.map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ');
      ctx.out(`${p.name}${args ? ` ${args}` : ''}\n  ${(p.description ?? p.title ?? '').split('\n')[0]}`);
    }
    if (!listed.length) ctx.out(`MCP server ${rest[0]} lists no prompts now`);
  }
  return EXIT.ok;
};

const prompt: Subcommand = async (rest, ctx) => {
  const usage = 'pinclaw mcp prompt NAME PROMPT [JSON]';
  arity(rest, 2, 3, usage);
  const input = jsonArg(rest[2], 'the prompt arguments', '{"city":"Oslo"}', usage);
  // The spec's prompt arguments are strings: a number or boolean is turned into one, anything else refused.
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new UsageError(`the prompt arguments must be a JSON object, e.g. '{"city":"Oslo"}'\nusage: ${usage}`);
  const args: Record<string, string> = {};
  for (const [k, v] of Object.entries(input)) {
    if (typeof v === 'object' && v !== null) throw new UsageError(`prompt argument '${k}' must be a string, not ${Array.isArray(v) ? 'an array' : 'an object'}\nusage: ${usage}`);
    args[k] = String(v);
  }
  const got = await withServer(ctx, rest, usage, (client, name) => client.getPrompt(name, rest[1]!, args));
  if (ctx.json) ctx.out(JSON.stringify(got, null, 2));
  else {
    if (got.description) ctx.out(`# ${got.description}`);
    for (const m of got.messages) ctx.out(`${m.role}: ${messageText(m.content)}`);
  }
  return EXIT.ok;
};

/** A prompt message's content block as the owner reads it. */
function messageText(content: unknown): string {
  if (typeof content !== 'object' || content === null) return JSON.stringify(content) ?? '';
  const c = content as Record<string, unknown>;
  if (c.type === 'text' && typeof c.text === 'string') return c.text;
  if (c.type === 'resource' && typeof c.resource === 'object' && c.resource !== null) {
    const r = c.resource as Record<string, unknown>;
    return contentsText({ uri: String(r.uri), ...(typeof r.mimeType === 'string' ? { mimeType: r.mimeType } : {}), ...(typeof r.text === 'string' ? { text: r.text } : {}), ...(typeof r.blob === 'string' ? { blob: r.blob } : {}) });
  }
  return JSON.stringify(content);
}

/** One entry per subcommand (`serve` joins here). */
export const SUBCOMMANDS: Readonly<Record<string, Subcommand>> = { list, tools, call, resources, read, prompts, prompt };

export async function runMcp(args: string[], ctx: CliContext): Promise<number> {
  const { positionals } = parseCommandArgs(args, {}, MCP_USAGE);
  const [sub, ...rest] = positionals;
  const run = sub === undefined ? undefined : SUBCOMMANDS[sub];
  if (!run) throw new UsageError(`usage: ${MCP_USAGE}`);
  return run(rest[0] === '--' ? rest.slice(1) : rest, ctx);
}
