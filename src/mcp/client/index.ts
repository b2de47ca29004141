// The MCP client's entry, a lazy chunk (scripts/build.mjs): a gateway or `pinclaw mcp` loads it
// only when mcp.servers has an enabled server, so an idle gateway without MCP holds none of it.
import { join } from 'node:path';
import type { PinclawConfig } from '../../config/schema.js';
import { createMcpClient, type McpClient } from './manager.js';

export type { McpClient } from './manager.js';
export { mcpMetricLines } from './metrics.js';
export { mcpCheck } from './doctor.js';
export { checkMcpConfig } from '../config.js';
export { sweepLeftovers } from './leftovers.js';

/** Where running stdio servers are recorded (leftovers.ts): $PINCLAW_HOME/run/mcp. */
export const mcpRunDir = (home: string): string => join(home, 'run', 'mcp');

export function startMcpClient(config: PinclawConfig, o: { workspace: string; home?: string; reserved?: () => readonly string[]; only?: string }): McpClient {
  // A disabled server is listed (state disabled) but never started; `only` starts the one asked for.
  const servers = o.only === undefined ? config.mcp.servers : Object.fromEntries(Object.entries(config.mcp.servers).filter(([name]) => name === o.only).map(([n, s]) => [n, { ...s, enabled: true }]));
  return createMcpClient({ servers, workspace: o.workspace, sandbox: config.sandbox, ...(o.home ? { runDir: mcpRunDir(o.home) } : {}), ...(o.reserved ? { reserved: o.reserved } : {}) });
}
