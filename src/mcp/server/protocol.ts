// The JSON-RPC 2.0 and MCP constants the server answers with, as the MCP specification names them
// (modelcontextprotocol.io/specification, and the SDK's types.ts): kept apart so the transport and
// the method handlers share one spelling.

/** The newest revision first: a client asking for one of these gets it, any other gets the newest. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const LATEST_PROTOCOL_VERSION = SUPPORTED_PROTOCOL_VERSIONS[0];

/** JSON-RPC 2.0 error codes (section 5.1). */
export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

export type RequestId = string | number;

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type RpcResponse =
  | { jsonrpc: '2.0'; id: RequestId; result: Record<string, unknown> }
  | { jsonrpc: '2.0'; id: RequestId | null; error: RpcError };

/** Thrown by a method handler: becomes the request's JSON-RPC error. */
export class RpcFailure extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/** The revision answered to an initialize that asks for `requested` (spec: lifecycle, version negotiation). */
export function negotiateVersion(requested: string): string {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(requested) ? requested : LATEST_PROTOCOL_VERSION;
}

export { isObject } from '../../is-object.js';
