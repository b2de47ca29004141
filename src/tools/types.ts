// What the agent loop needs from tools: their specs, and a way to run one call. The registry,
// policy and audit of the tools capability sit behind this interface.
import type { ToolSpec } from '../agent/types.js';
import type { JsonSchema } from './validate.js';

export interface ToolContext {
  sessionKey: string;
  channel: string;
  chatId: string;
  signal?: AbortSignal;
}

export interface ToolResult {
  content: string;
  isError?: boolean;
}

export interface Tool {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  /** Tools that touch shared state (hardware, files) run one at a time, in the model's order. */
  sequential?: boolean;
  execute(input: unknown, ctx: ToolContext): Promise<ToolResult>;
}

export interface ToolSet {
  specs(): ToolSpec[];
  get(name: string): Tool | undefined;
}

export function toolSet(tools: readonly Tool[]): ToolSet {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return {
    specs: () => tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as Record<string, unknown> })),
    get: (name) => byName.get(name),
  };
}
