// doctor's look at mcp.servers: the config checks, then each enabled server started, listed and
// stopped as the gateway would (sandbox included), so "ok" means the gateway will get its tools.
import type { PinclawConfig } from '../../config/schema.js';
import { errorMessage } from '../../errors.js';
import { checkMcpConfig } from '../config.js';
import { createMcpClient } from './manager.js';

export interface McpCheck {
  name: string;
  state: 'ok' | 'warn' | 'fail';
  detail: string;
}

export async function mcpCheck(config: PinclawConfig, workspace: string): Promise<McpCheck> {
  try {
    checkMcpConfig(config);
  } catch (err) {
    return { name: 'mcp', state: 'fail', detail: errorMessage(err) };
  }
  const client = createMcpClient({ servers: config.mcp.servers, workspace, sandbox: config.sandbox });
  try {
    await client.ready();
    const status = client.status();
    const lines = status.map((s) => (s.state === 'up' ? `${s.name}: up, ${s.tools} tools (${s.serverInfo}, protocol ${s.protocolVersion}, ${s.sandbox})` : s.state === 'disabled' ? `${s.name}: disabled` : `${s.name}: down: ${s.error}`));
    // A server that is down fails none of pinclaw's own work: its tools are missing, the rest runs.
    return { name: 'mcp', state: status.some((s) => s.state === 'down') ? 'warn' : 'ok', detail: lines.join('; ') };
  } finally {
    await client.close();
  }
}
