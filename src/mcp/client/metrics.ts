// The MCP servers' lines of /metrics (src/ops/metrics.ts asks for them through LiveFigures.extra).
import type { labels as Labels, line as Line } from '../../prometheus.js';
import type { McpServerStatus } from '../types.js';

export function mcpMetricLines(status: readonly McpServerStatus[], line: typeof Line, labels: typeof Labels): string[] {
  return [
    line('pinclaw_mcp_server_up', 'whether the MCP server is up (1) or not (0: starting, down, disabled), with its state', 'gauge', status.map((m) => [labels({ server: m.name, state: m.state }), m.state === 'up' ? 1 : 0])),
    line('pinclaw_mcp_server_tools', 'tools of the MCP server offered to the agent', 'gauge', status.map((m) => [labels({ server: m.name }), m.tools])),
    line('pinclaw_mcp_server_starts_total', 'starts of the MCP server since the gateway started (restarts after it died included)', 'counter', status.map((m) => [labels({ server: m.name }), m.starts])),
    line('pinclaw_mcp_calls_total', 'tool calls sent to the MCP server, by outcome (failed: an error result or no answer)', 'counter', status.flatMap((m): [string, number][] => [[labels({ server: m.name, outcome: 'ok' }), m.calls - m.failedCalls], [labels({ server: m.name, outcome: 'failed' }), m.failedCalls]])),
  ];
}
