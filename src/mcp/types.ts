// What the MCP client and server share, and what the rest of pinclaw (doctor, /metrics, the
// dashboard, the CLI) sees of the client without loading it: a leaf, types only.
import type { PinclawConfig } from '../config/schema.js';

export type JsonObject = { [key: string]: unknown };

export type McpServerConfig = PinclawConfig['mcp']['servers'][string];

/** The revision this client asks for first, then the older ones it accepts from a server. */
export const PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;

export type ServerState = 'starting' | 'up' | 'down' | 'disabled';

/** One configured server as doctor, /metrics and the dashboard show it. */
export interface McpServerStatus {
  name: string;
  transport: 'stdio' | 'http';
  state: ServerState;
  /** the revision agreed on, once up */
  protocolVersion?: string;
  /** the server's own name and version (serverInfo) */
  serverInfo?: string;
  /** tools offered to the agent (after the tools allow-list) */
  tools: number;
  /** resources it lists, when it offers resources */
  resources?: number;
  /** prompts it lists, when it offers prompts */
  prompts?: number;
  /** why it is down (names the server, with its last stderr lines) */
  error?: string;
  /** starts so far (the first included) */
  starts: number;
  calls: number;
  failedCalls: number;
  /** how sandboxed: bubblewrap, landlock, none (unconfined), or http */
  sandbox?: string;
}
