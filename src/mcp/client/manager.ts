// The configured MCP servers as one tool source of the registry. Each server is started at once
// (in the background: the gateway does not wait for it), its tools listed and offered as
// `<server>__<tool>`. A server that fails or dies is marked down with why (its last stderr lines);
// a call to one of its tools starts it again once its backoff has passed (1 s, doubling to 5 min)
// and fetches its list again. A server's own list_changed notifications (tools, resources, prompts)
// refresh that list. A server that offers resources gets one more tool, `<server>__read_resource`
// (resource-tool.ts). Closing kills every server's process group and waits until each is reaped.
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { SandboxSettings } from '../../sandbox/types.js';
import type { Tool } from '../../tools/types.js';
import type { McpServerConfig, McpServerStatus, ServerState } from '../types.js';
import { getPrompt, listPrompts, listResources, listResourceTemplates, readResource, type PromptMessage, type RemotePrompt, type RemoteResource, type RemoteResourceTemplate, type ResourceContents } from './catalog.js';
import { McpConnection, progressCapMs, type RemoteTool } from './connection.js';
import type { ProgressParams } from './jsonrpc.js';
import { HttpTransport } from './http.js';
import { stdioLaunch } from './launch.js';
import { recordServer } from './leftovers.js';
import { toolNames } from './names.js';
import { resourceTool } from './resource-tool.js';
import { resultText } from './result.js';
import { StdioTransport } from './stdio.js';
import { defineTool, type ObjectSchema } from '../../tools/define.js';

const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 5 * 60_000;
/** The longest tool description offered to the model; servers write essays. */
const MAX_DESCRIPTION = 1024;

export interface McpClientOptions {
  servers: Readonly<Record<string, McpServerConfig>>;
  workspace: string;
  sandbox: SandboxSettings;
  /** where each running stdio server is recorded, so that a next gateway can end what a killed one leaked (leftovers.ts) */
  runDir?: string;
  /** names already used by pinclaw's own tools (asked when names are given): an MCP tool never takes one */
  reserved?: () => readonly string[];
  now?: () => number;
}

interface Entry {
  name: string;
  config: McpServerConfig;
  state: ServerState;
  conn?: McpConnection;
  /** the connection being set up or up: what close() ends, even mid-start */
  live?: McpConnection;
  stdio?: StdioTransport;
  starting?: Promise<McpConnection>;
  remote: RemoteTool[];
  tools: Tool[];
  /** what resources/list and resources/templates/list gave, when the server offers resources */
  resources?: { list: RemoteResource[]; templates: RemoteResourceTemplate[] };
  /** what prompts/list gave, when the server offers prompts */
  prompts?: RemotePrompt[];
  /** `<server>__read_resource`, when the server offers resources */
  resourceTool?: Tool;
  error?: string;
  protocolVersion?: string;
  serverInfo?: string;
  sandbox?: string;
  starts: number;
  calls: number;
  failedCalls: number;
  backoffMs: number;
  nextStartAt: number;
}

export interface McpClient {
  /** The tools of every server, as the registry offers them (ToolSource). */
  tools(): readonly Tool[];
  status(): McpServerStatus[];
  /** Resolves once every enabled server has started or failed to (the CLI waits for this). */
  ready(): Promise<void>;
  /** The registry's name of a server's tool (`home__light_on`), once the server is up. */
  toolName(server: string, tool: string): string | undefined;
  /** A server's tools as it names them, fetched now (`pinclaw mcp tools NAME`). */
  remoteTools(server: string): Promise<RemoteTool[]>;
  /** A server's resources and resource templates, fetched now (`pinclaw mcp resources NAME`). */
  resources(server: string): Promise<{ resources: RemoteResource[]; templates: RemoteResourceTemplate[] }>;
  /** resources/read for the owner (`pinclaw mcp read NAME URI`): the contents as the server sent them. */
  readResource(server: string, uri: string): Promise<ResourceContents[]>;
  /** A server's prompts, fetched now (`pinclaw mcp prompts NAME`). */
  prompts(server: string): Promise<RemotePrompt[]>;
  /** prompts/get (`pinclaw mcp prompt NAME PROMPT [JSON]`). */
  getPrompt(server: string, prompt: string, args: Record<string, string>): Promise<{ description?: string; messages: PromptMessage[] }>;
  /** Stops every server (SIGTERM, SIGKILL after 2 s) and waits until each is gone. */
  close(): Promise<void>;
}

/** A progress notification as one line: `progress 2/5: message`. */
export function progressLine(p: ProgressParams): string {
  return `progress ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? `: ${p.message}` : ''}`;
}

function allowed(config: McpServerConfig, tool: string): boolean {
  return config.tools.includes('*') || config.tools.includes(tool);
}

export function createMcpClient(o: McpClientOptions): McpClient {
  const now = o.now ?? Date.now;
  let closed = false;
  const entries: Entry[] = Object.entries(o.servers).map(([name, config]) => ({
    name, config, state: config.enabled ? 'starting' : 'disabled', remote: [], tools: [], starts: 0, calls: 0, failedCalls: 0, backoffMs: BACKOFF_MIN_MS, nextStartAt: 0,
  }));
  let all: Tool[] = [];

  /** Names for every server's tools, in config order, so that they do not depend on which started first. */
  function rename(): void {
    const taken = new Set(o.reserved?.() ?? []);
    for (const e of entries) {
      const offered = e.remote.filter((t) => allowed(e.config, t.name));
      const names = toolNames(e.name, offered.map((t) => t.name), taken);
      e.tools = offered.map((t, i) => toolFor(e, t, names[i]!));
      e.resourceTool = e.resources ? resourceTool({ server: e.name, name: toolNames(e.name, ['read_resource'], taken)[0]!, config: e.config, ...e.resources, read: (uri, signal) => readVia(e, uri, signal) }) : undefined;
    }
    all = entries.flatMap((e) => (e.resourceTool ? [...e.tools, e.resourceTool] : e.tools));
  }

  /** resources/read for the model's tool: counted like a tool call. */
  async function readVia(e: Entry, uri: string, signal?: AbortSignal): Promise<ResourceContents[]> {
    e.calls++;
    try {
      return await readResource(await up(e), uri, e.config.callTimeoutMs, signal);
    } catch (err) {
      e.failedCalls++;
      throw err;
    }
  }

  /** The resource and prompt lists, for a server that offers them; a failure leaves them empty, logged. */
  async function listCatalog(e: Entry, conn: McpConnection, which: 'resources' | 'prompts'): Promise<void> {
    if (!conn.handshake?.[which]) {
      // A restarted server may no longer offer what it did.
      if (which === 'resources') delete e.resources;
      else delete e.prompts;
      return;
    }
    try {
      if (which === 'resources') {
        const [list, templates] = await Promise.all([listResources(conn, e.config.listTimeoutMs), listResourceTemplates(conn, e.config.listTimeoutMs)]);
        e.resources = { list, templates };
      } else {
        e.prompts = await listPrompts(conn, e.config.listTimeoutMs);
      }
    } catch (err) {
      if (which === 'resources') e.resources ??= { list: [], templates: [] };
      if (!closed && !conn.rpc.closed) log.warn(`MCP server ${e.name}: cannot list its ${which}: ${errorMessage(err)}`);
    }
  }

  function markDown(e: Entry, reason: string): void {
    if (closed) return;
    e.state = 'down';
    e.error = reason;
    e.conn = undefined;
    e.stdio = undefined;
    e.nextStartAt = now() + e.backoffMs;
    e.backoffMs = Math.min(e.backoffMs * 2, BACKOFF_MAX_MS);
    log.warn(`${reason}; it is started again on its next call (not before ${Math.round((e.nextStartAt - now()) / 1000)} s)`);
  }

  async function connect(e: Entry): Promise<McpConnection> {
    e.state = 'starting';
    e.starts++;
    const c = e.config;
    let conn: McpConnection;
    let release = (): void => undefined;
    if (c.url) {
      const http = new HttpTransport(e.name, { url: c.url, headers: c.headers });
      conn = new McpConnection(e.name, http);
      e.live = conn;
      e.sandbox = 'http';
      await conn.initialize(c.listTimeoutMs, (v) => (http.protocolVersion = v)).catch(async (err: unknown) => {
        await conn.close();
        throw err;
      });
    } else {
      const l = await stdioLaunch(e.name, c, { workspace: o.workspace, sandbox: o.sandbox });
      release = l.release;
      e.sandbox = l.sandbox;
      let unrecord = (): void => undefined;
      const runDir = o.runDir;
      let stdio: StdioTransport;
      try {
        stdio = new StdioTransport(e.name, l.launch, runDir ? {
          onStarted: (pid) => (unrecord = recordServer(runDir, e.name, l.token, pid)),
          onGone: () => unrecord(),
        } : {});
      } catch (err) {
        // The addon refused the options (a rule it cannot build): nothing runs, the $TMPDIR goes.
        l.release();
        throw new Error(`MCP server ${e.name} cannot start: ${errorMessage(err)}`);
      }
      e.stdio = stdio;
      conn = new McpConnection(e.name, stdio);
      e.live = conn;
      try {
        await conn.initialize(c.listTimeoutMs);
      } catch (err) {
        // The process's exit, when it died at start, says more than the request's failure; read
        // before close() replaces it with "closed".
        const why = conn.rpc.closed ?? errorMessage(err);
        await conn.close();
        release();
        throw new Error(`${why}${why.includes('stderr') ? '' : stdio.lastStderr()}`);
      }
    }
    conn.rpc.onClose = (reason) => {
      release();
      if (e.conn === conn) markDown(e, reason);
    };
    conn.onListChanged = (list) => void refresh(e, conn, list);
    try {
      const listed = await conn.listTools(c.listTimeoutMs);
      if (listed.skipped.length) log.warn(`MCP server ${e.name}: tools not offered: ${listed.skipped.slice(0, 10).join(', ')}${listed.skipped.length > 10 ? ` and ${listed.skipped.length - 10} more` : ''}`);
      e.remote = listed.tools;
      await Promise.all([listCatalog(e, conn, 'resources'), listCatalog(e, conn, 'prompts')]);
      // listCatalog keeps going without a list; a server that died meanwhile is not up.
      if (conn.rpc.closed !== undefined) throw new Error(conn.rpc.closed);
    } catch (err) {
      await conn.close();
      release();
      throw err;
    }
    if (closed) {
      await conn.close();
      throw new Error(`MCP server ${e.name}: pinclaw is stopping`);
    }
    e.conn = conn;
    e.state = 'up';
    e.error = undefined;
    e.backoffMs = BACKOFF_MIN_MS;
    e.protocolVersion = conn.handshake?.protocolVersion;
    e.serverInfo = conn.handshake?.serverInfo;
    rename();
    log.info(`MCP server ${e.name}: up (${e.serverInfo}, protocol ${e.protocolVersion}, ${e.tools.length} tools${e.resources ? `, ${e.resources.list.length} resources` : ''}${e.prompts ? `, ${e.prompts.length} prompts` : ''}, ${e.sandbox})`);
    return conn;
  }

  async function refresh(e: Entry, conn: McpConnection, list: 'tools' | 'resources' | 'prompts'): Promise<void> {
    // A notification that comes while the server is still starting is covered by the listing then.
    if (e.conn !== conn) return;
    if (list !== 'tools') {
      await listCatalog(e, conn, list);
      if (e.conn !== conn) return;
      rename();
      log.info(`MCP server ${e.name}: its ${list} list changed (${list === 'resources' ? e.resources?.list.length ?? 0 : e.prompts?.length ?? 0} ${list})`);
      return;
    }
    try {
      const listed = await conn.listTools(e.config.listTimeoutMs);
      if (e.conn !== conn) return;
      e.remote = listed.tools;
      rename();
      log.info(`MCP server ${e.name}: its tool list changed (${e.tools.length} tools)`);
    } catch (err) {
      // A connection closed meanwhile (stopping, or the server died) says so on its own.
      if (e.conn === conn && !closed) log.warn(`MCP server ${e.name}: cannot refresh its tool list: ${errorMessage(err)}`);
    }
  }

  function start(e: Entry): Promise<McpConnection> {
    e.starting ??= connect(e).catch((err: unknown) => {
      markDown(e, errorMessage(err).startsWith('MCP server') ? errorMessage(err) : `MCP server ${e.name}: ${errorMessage(err)}`);
      throw new Error(e.error);
    }).finally(() => {
      e.starting = undefined;
    });
    return e.starting;
  }

  /** The live connection, starting the server again when it is down and its backoff has passed. */
  function up(e: Entry): Promise<McpConnection> {
    if (closed) return Promise.reject(new Error(`MCP server ${e.name}: pinclaw is stopping`));
    if (e.state === 'disabled') return Promise.reject(new Error(`MCP server ${e.name} is disabled (mcp.servers.${e.name}.enabled)`));
    if (e.conn && e.state === 'up') return Promise.resolve(e.conn);
    if (e.starting) return e.starting;
    if (now() < e.nextStartAt) {
      return Promise.reject(new Error(`${e.error ?? `MCP server ${e.name} is down`}; it is down, next start in ${Math.ceil((e.nextStartAt - now()) / 1000)} s`));
    }
    return start(e);
  }

  function toolFor(e: Entry, t: RemoteTool, name: string): Tool {
    const desc = t.description ?? t.title ?? '';
    return defineTool({
      name,
      description: `[MCP server ${e.name}] ${desc.length > MAX_DESCRIPTION ? `${desc.slice(0, MAX_DESCRIPTION)}…` : desc}`,
      // The server's schema, as it sent it: known only at run time, so the input is its fields by name.
      inputSchema: t.inputSchema as ObjectSchema,
      mcpServer: e.name,
      mcpTool: t.name,
      // The registry's limits: a start may come before the call, and the frame around the result.
      // Progress extends a call up to progressCapMs (connection.ts); the registry must not cut it first.
      timeoutMs: progressCapMs(e.config.callTimeoutMs) + e.config.listTimeoutMs,
      maxOutputBytes: e.config.maxResultBytes + 1024,
      async execute(input, ctx) {
        e.calls++;
        try {
          const conn = await up(e);
          // Progress reaches the caller as tool output (the registry redacts it; a channel shows it).
          const onProgress = ctx.onOutput ? (p: ProgressParams) => ctx.onOutput!('stderr', `${progressLine(p)}\n`) : undefined;
          const r = await conn.callTool(t.name, input, e.config.callTimeoutMs, ctx.signal, onProgress);
          if (r.isError) e.failedCalls++;
          return { content: resultText(e.name, t.name, r, e.config.maxResultBytes), ...(r.isError ? { isError: true } : {}) };
        } catch (err) {
          e.failedCalls++;
          let msg = errorMessage(err);
          const dead = e.conn?.rpc.closed;
          if (dead !== undefined) msg = dead;
          const stderr = e.stdio && !msg.includes('stderr') ? e.stdio.lastStderr() : '';
          return { content: `${msg.startsWith('MCP server') ? msg : `MCP server ${e.name}: ${msg}`}${stderr}`, isError: true };
        }
      },
    });
  }

  function entry(server: string): Entry {
    const e = entries.find((x) => x.name === server);
    if (!e) throw new Error(`no MCP server '${server}' in mcp.servers (configured: ${entries.map((x) => x.name).join(', ') || 'none'})`);
    return e;
  }

  const starts = entries.filter((e) => e.state === 'starting').map((e) => start(e).then(() => undefined, () => undefined));
  const readyAll = Promise.all(starts).then(() => undefined);

  return {
    tools: () => {
      // A server that never came up has no tools to call it by: it is tried again at listing.
      for (const e of entries) if (e.state === 'down' && !e.starting && e.remote.length === 0 && now() >= e.nextStartAt && !closed) void start(e).catch(() => undefined);
      return all;
    },
    status: () => entries.map((e) => ({
      name: e.name,
      transport: e.config.url ? 'http' : 'stdio',
      state: e.state,
      tools: e.tools.length,
      ...(e.resources ? { resources: e.resources.list.length } : {}),
      ...(e.prompts ? { prompts: e.prompts.length } : {}),
      starts: e.starts,
      calls: e.calls,
      failedCalls: e.failedCalls,
      ...(e.protocolVersion ? { protocolVersion: e.protocolVersion } : {}),
      ...(e.serverInfo ? { serverInfo: e.serverInfo } : {}),
      ...(e.error && e.state !== 'up' ? { error: e.error } : {}),
      ...(e.sandbox ? { sandbox: e.sandbox } : {}),
    })),
    ready: () => readyAll,
    toolName: (server, tool) => entries.find((e) => e.name === server)?.tools.find((t) => t.mcpTool === tool)?.name,
    async remoteTools(server) {
      const e = entry(server);
      const conn = await up(e);
      const listed = await conn.listTools(e.config.listTimeoutMs);
      return listed.tools;
    },
    async resources(server) {
      const e = entry(server);
      const conn = await up(e);
      const [resources, templates] = await Promise.all([listResources(conn, e.config.listTimeoutMs), listResourceTemplates(conn, e.config.listTimeoutMs)]);
      return { resources, templates };
    },
    async readResource(server, uri) {
      const e = entry(server);
      return readResource(await up(e), uri, e.config.callTimeoutMs);
    },
    async prompts(server) {
      const e = entry(server);
      return listPrompts(await up(e), e.config.listTimeoutMs);
    },
    async getPrompt(server, prompt, args) {
      const e = entry(server);
      return getPrompt(await up(e), prompt, args, e.config.callTimeoutMs);
    },
    async close() {
      closed = true;
      await Promise.all(entries.map(async (e) => {
        const conn = e.live;
        e.conn = undefined;
        e.live = undefined;
        if (e.state !== 'disabled') e.state = 'down';
        await conn?.close();
        // A start under way fails now that its connection is closed; it closes what it opened.
        await e.starting?.catch(() => undefined);
      }));
    },
  };
}
