// The MCP server's methods over JSON-RPC 2.0, independent of the transport: one incoming line in, the
// line to answer with (or none, for a notification) out.
//
// Hand-written, not the SDK: the official server (@modelcontextprotocol/sdk 1.x McpServer with its
// stdio transport, measured with esbuild --minify) is 370 KB and takes 64 ms and 10 MiB of RSS to load
// on an x64 dev box; v2 (@modelcontextprotocol/server 2.4.0) brings zod 4 and its core package too.
// The part of the protocol a tool server needs (initialize, ping, tools/list, tools/call,
// cancellation) is this file, a few KB: `ssh pi@host pinclaw mcp serve` starts for every client
// session on a board with little to spare.
import { errorMessage } from '../../errors.js';
import { log } from '../../log.js';
import type { ExposedTools } from './exposed.js';
import { isObject, negotiateVersion, RPC, RpcFailure, type RequestId, type RpcResponse } from './protocol.js';

export interface ServerInfo {
  name: string;
  version: string;
}

export interface McpServer {
  /** The answer to one line of input (a message or a batch), or undefined when none is due. */
  handleLine(line: string): Promise<string | undefined>;
  /** Aborts the calls in flight (the client went away) and resolves when they have all ended. */
  shutdown(): Promise<void>;
}

/** Thrown by a method whose request gets no answer. */
class Unanswered extends Error {}

const rpcError = (id: RequestId | null, code: number, message: string): RpcResponse => ({ jsonrpc: '2.0', id, error: { code, message } });

const isId = (v: unknown): v is RequestId => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

export function createMcpServer(tools: ExposedTools, info: ServerInfo): McpServer {
  /** Calls in flight by request id: notifications/cancelled aborts one, shutdown all. */
  const inFlight = new Map<RequestId, { abort: AbortController; done: Promise<unknown> }>();
  let version: string | undefined;

  async function method(name: string, params: Record<string, unknown>, id: RequestId): Promise<Record<string, unknown>> {
    switch (name) {
      case 'initialize': {
        if (typeof params.protocolVersion !== 'string') throw new RpcFailure(RPC.invalidParams, 'initialize: params.protocolVersion must be a string, e.g. "2025-11-25"');
        version = negotiateVersion(params.protocolVersion);
        const client = isObject(params.clientInfo) ? `${String(params.clientInfo.name)} ${String(params.clientInfo.version)}` : 'an unnamed client';
        log.info(`mcp serve: ${client} asked for revision ${params.protocolVersion}, answering ${version}`);
        return {
          protocolVersion: version,
          // The tool list changes only with the config, which a running server does not re-read.
          capabilities: { tools: { listChanged: false } },
          serverInfo: info,
          instructions: "The tools of a pinclaw board. Each call passes the board's tool policy (channel mcp) and is audited; a refusal names the rule.",
        };
      }
      case 'ping':
        return {};
      case 'tools/list':
        // One page: a board has tens of tools, not thousands; no nextCursor means the list is whole.
        return {
          tools: tools.list().map((t) => ({
            name: t.name,
            description: t.description,
            inputSchema: t.inputSchema,
            ...(t.readOnly ? { annotations: { readOnlyHint: true } } : {}),
          })),
        };
      case 'tools/call': {
        if (typeof params.name !== 'string') throw new RpcFailure(RPC.invalidParams, 'tools/call: params.name must be the tool name (a string)');
        if (params.arguments !== undefined && !isObject(params.arguments)) throw new RpcFailure(RPC.invalidParams, 'tools/call: params.arguments must be an object');
        const abort = new AbortController();
        const running = tools.call(params.name, params.arguments ?? {}, abort.signal);
        inFlight.set(id, { abort, done: running.catch(() => undefined) });
        try {
          const outcome = await running;
          // Spec (utilities, cancellation): no answer to a request the client cancelled; nor to
          // one aborted because the client went away.
          if (abort.signal.aborted) throw new Unanswered();
          if (!outcome) throw new RpcFailure(RPC.invalidParams, `Unknown tool: ${params.name}`);
          return { content: [{ type: 'text', text: outcome.text }], isError: outcome.isError };
        } finally {
          inFlight.delete(id);
        }
      }
      default:
        throw new RpcFailure(RPC.methodNotFound, `Method not found: ${name} (this server offers initialize, ping, tools/list, tools/call)`);
    }
  }

  function notification(name: string, params: Record<string, unknown>): void {
    if (name === 'notifications/cancelled' && isId(params.requestId)) {
      inFlight.get(params.requestId)?.abort.abort(new Error(typeof params.reason === 'string' ? `cancelled by the client: ${params.reason}` : 'cancelled by the client'));
    }
    // notifications/initialized and the others need nothing from a tool server.
  }

  /** One message of the input; undefined when it needs no answer. */
  async function handleMessage(msg: unknown): Promise<RpcResponse | undefined> {
    if (!isObject(msg) || msg.jsonrpc !== '2.0') return rpcError(isObject(msg) && isId(msg.id) ? msg.id : null, RPC.invalidRequest, 'Invalid Request: expected a JSON-RPC 2.0 object ({"jsonrpc":"2.0","id":1,"method":"..."})');
    // A response to a request of ours: the server sends none, so there is nothing to match it with.
    if (msg.method === undefined && ('result' in msg || 'error' in msg)) return undefined;
    if (typeof msg.method !== 'string') return rpcError(isId(msg.id) ? msg.id : null, RPC.invalidRequest, 'Invalid Request: method must be a string');
    if (msg.params !== undefined && !isObject(msg.params)) {
      return 'id' in msg ? rpcError(isId(msg.id) ? msg.id : null, RPC.invalidParams, `${msg.method}: params must be an object`) : undefined;
    }
    const params = msg.params ?? {};
    if (!('id' in msg)) {
      notification(msg.method, params);
      return undefined;
    }
    if (!isId(msg.id)) return rpcError(null, RPC.invalidRequest, 'Invalid Request: id must be a string or a number');
    const id = msg.id;
    try {
      return { jsonrpc: '2.0', id, result: await method(msg.method, params, id) };
    } catch (err) {
      if (err instanceof Unanswered) return undefined;
      if (err instanceof RpcFailure) return rpcError(id, err.code, err.message);
      log.error(`mcp serve: ${msg.method} failed: ${errorMessage(err)}`);
      return rpcError(id, RPC.internalError, `Internal error: ${errorMessage(err)}`);
    }
  }

  return {
    async handleLine(line) {
      let msg: unknown;
      try {
        msg = JSON.parse(line);
      } catch (err) {
        return JSON.stringify(rpcError(null, RPC.parseError, `Parse error: the line is not JSON (${errorMessage(err)})`));
      }
      // A batch (JSON-RPC 2.0 section 6; MCP 2025-03-26 requires receiving them, later revisions dropped them).
      if (Array.isArray(msg)) {
        if (msg.length === 0) return JSON.stringify(rpcError(null, RPC.invalidRequest, 'Invalid Request: an empty batch'));
        const answers = (await Promise.all(msg.map(handleMessage))).filter((a) => a !== undefined);
        return answers.length ? JSON.stringify(answers) : undefined;
      }
      const answer = await handleMessage(msg);
      return answer && JSON.stringify(answer);
    },

    async shutdown() {
      for (const c of inFlight.values()) c.abort.abort(new Error('the MCP client went away'));
      await Promise.all([...inFlight.values()].map((c) => c.done));
    },
  };
}
