// One MCP session over a transport: the initialize handshake (pinclaw asks for the newest revision
// and accepts an older one the server answers with, if it is one pinclaw speaks), the tool list
// page by page, and tool calls. Field names as the spec (modelcontextprotocol.io/specification)
// and the official SDK's schemas spell them. Resources and prompts live in catalog.ts.
import { pinclawVersion } from '../../version.js';
import { PROTOCOL_VERSIONS, type JsonObject } from '../types.js';
import { RpcSession, type ProgressParams, type Transport } from './jsonrpc.js';

export interface RemoteTool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonObject;
}

export interface CallToolResult {
  content: unknown[];
  structuredContent?: unknown;
  isError?: boolean;
}

export interface Handshake {
  protocolVersion: string;
  serverInfo: string;
  listChanged: boolean;
  /** the server declared the resources capability: resources/* may be asked */
  resources: boolean;
  /** the server declared the prompts capability: prompts/* may be asked */
  prompts: boolean;
}

/** Pages of a list read at most; a server whose cursors never end is cut off here. */
export const MAX_PAGES = 100;

/**
 * The longest a tool call may take however often it reports progress, given callTimeoutMs: ten
 * times it, at least callTimeoutMs and at most 600000 ms unless callTimeoutMs itself is larger.
 * Progress restarts callTimeoutMs, so a server that reports every few seconds could otherwise hold
 * a turn (and the agent's reply) open for good.
 */
export function progressCapMs(callTimeoutMs: number): number {
  return Math.max(callTimeoutMs, Math.min(10 * callTimeoutMs, 600_000));
}
/** Tools kept from one server at most (a model cannot use thousands anyway). */
export const MAX_TOOLS = 1000;

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export class McpConnection {
  readonly rpc: RpcSession;
  handshake: Handshake | undefined;
  /** Told when the server says one of its lists changed (`tools`, `resources` or `prompts`). */
  onListChanged?: (list: 'tools' | 'resources' | 'prompts') => void;

  constructor(readonly server: string, readonly transport: Transport) {
    this.rpc = new RpcSession(transport, server);
    this.rpc.onNotification = (method) => {
      const m = /^notifications\/(tools|resources|prompts)\/list_changed$/.exec(method);
      if (m) this.onListChanged?.(m[1] as 'tools' | 'resources' | 'prompts');
    };
  }

  async initialize(timeoutMs: number, onVersion?: (version: string) => void): Promise<Handshake> {
    const result = await this.rpc.request('initialize', {
      protocolVersion: PROTOCOL_VERSIONS[0],
      // pinclaw offers the server nothing back (no sampling, roots or elicitation).
      capabilities: {},
      clientInfo: { name: 'pinclaw', version: pinclawVersion() },
    }, timeoutMs).catch((err: Error) => {
      throw new Error(err.message.replace(/within (\d+) ms$/, `within $1 ms (mcp.servers.${this.server}.listTimeoutMs)`));
    });
    if (!isObject(result) || typeof result.protocolVersion !== 'string') {
      throw new Error(`MCP server ${this.server}: its answer to initialize has no protocolVersion`);
    }
    const version = result.protocolVersion;
    if (!(PROTOCOL_VERSIONS as readonly string[]).includes(version)) {
      throw new Error(`MCP server ${this.server} speaks protocol revision ${version}; pinclaw speaks ${PROTOCOL_VERSIONS.join(', ')}`);
    }
    onVersion?.(version);
    const caps = isObject(result.capabilities) ? result.capabilities : {};
    const info = isObject(result.serverInfo) ? result.serverInfo : {};
    this.handshake = {
      protocolVersion: version,
      serverInfo: `${typeof info.name === 'string' ? info.name : '?'} ${typeof info.version === 'string' ? info.version : ''}`.trim(),
      listChanged: isObject(caps.tools) && caps.tools.listChanged === true,
      resources: isObject(caps.resources),
      prompts: isObject(caps.prompts),
    };
    await this.rpc.notify('notifications/initialized');
    return this.handshake;
  }

  /** Every tool, following nextCursor; `timeoutMs` bounds the whole listing. */
  async listTools(timeoutMs: number): Promise<{ tools: RemoteTool[]; skipped: string[] }> {
    const deadline = Date.now() + timeoutMs;
    const tools: RemoteTool[] = [];
    const skipped: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`MCP server ${this.server}: no answer to tools/list within ${timeoutMs} ms (mcp.servers.${this.server}.listTimeoutMs)`);
      const result = await this.rpc.request('tools/list', cursor === undefined ? undefined : { cursor }, left).catch((err: Error) => {
        throw new Error(err.message.replace(`within ${left} ms`, `within ${timeoutMs} ms (mcp.servers.${this.server}.listTimeoutMs)`));
      });
      if (!isObject(result) || !Array.isArray(result.tools)) throw new Error(`MCP server ${this.server}: its answer to tools/list has no tools array`);
      for (const t of result.tools) {
        if (!isObject(t) || typeof t.name !== 'string' || !t.name) {
          skipped.push('a tool without a name');
          continue;
        }
        // The model can call only a tool whose arguments are an object.
        if (!isObject(t.inputSchema) || t.inputSchema.type !== 'object') {
          skipped.push(`${t.name} (its inputSchema is not of type object)`);
          continue;
        }
        if (tools.length >= MAX_TOOLS) {
          skipped.push(`${t.name} (over ${MAX_TOOLS} tools)`);
          continue;
        }
        tools.push({
          name: t.name,
          ...(typeof t.title === 'string' ? { title: t.title } : {}),
          ...(typeof t.description === 'string' ? { description: t.description } : {}),
          inputSchema: t.inputSchema,
        });
      }
      cursor = typeof result.nextCursor === 'string' && result.nextCursor ? result.nextCursor : undefined;
      if (cursor === undefined) return { tools, skipped };
    }
    skipped.push(`pages after the first ${MAX_PAGES}`);
    return { tools, skipped };
  }

  /**
   * Calls a tool, asking for progress: each `notifications/progress` starts `timeoutMs` again (up
   * to progressCapMs) and is handed to `onProgress`.
   */
  async callTool(name: string, args: unknown, timeoutMs: number, signal?: AbortSignal, onProgress?: (p: ProgressParams) => void): Promise<CallToolResult> {
    const progress = { hardCapMs: progressCapMs(timeoutMs), ...(onProgress ? { onProgress } : {}) };
    const result = await this.rpc.request('tools/call', { name, arguments: isObject(args) ? args : {} }, timeoutMs, signal, progress).catch((err: Error) => {
      throw new Error(err.message.replace(/within (\d+) ms/, `within $1 ms (mcp.servers.${this.server}.callTimeoutMs)`).replace(/after (\d+) ms, the most/, `after $1 ms (10 × mcp.servers.${this.server}.callTimeoutMs, at most 600000), the most`));
    });
    if (!isObject(result)) throw new Error(`MCP server ${this.server}: its answer to tools/call ${name} is not an object`);
    return {
      content: Array.isArray(result.content) ? result.content : [],
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
      ...(result.isError === true ? { isError: true } : {}),
    };
  }

  close(): Promise<void> {
    return this.rpc.close();
  }
}
