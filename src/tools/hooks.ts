// What the registry asks of command hooks (src/hooks/ implements it; this layer only knows the shape).
import type { Tool, ToolContext, ToolResult } from './types.js';

/** PreToolUse's verdict: refused, or go on (with the owner asked first, or a rewritten input). */
export type BeforeTool =
  | { block: string; rule: string }
  | { ask?: string; input?: unknown; context?: string };

/** PostToolUse's verdict: the result withheld, or context added to it. */
export interface AfterTool {
  block?: { reason: string; rule: string };
  context?: string;
}

export interface ToolHooks {
  /** Never throws: a hook that fails is judged by its onFailure here. */
  before(tool: Tool, input: unknown, ctx: ToolContext): Promise<BeforeTool>;
  after(tool: Tool, input: unknown, result: ToolResult, ctx: ToolContext): Promise<AfterTool>;
}
