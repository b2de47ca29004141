// What the agent loop needs from tools: their specs, and a way to run one call. The registry,
// policy and audit of the tools capability sit behind this interface.
import type { ImageBlock, ToolSpec } from '../agent/types.js';
import type { JsonSchema } from './validate.js';

/** What the owner is asked before a tool that needs confirmation runs. */
export interface ConfirmRequest {
  tool: string;
  /** the call's arguments, secrets redacted */
  input: unknown;
  /** the tool and its arguments in one line, cut at 200 characters, for the question */
  summary: string;
  channel: string;
  chatId: string;
  /** why the owner is asked this time, when there is more to it than the tool (a message too old to act on) */
  reason?: string;
  /** the turn's abort: a stopped turn stops waiting for the answer and the question is withdrawn */
  signal?: AbortSignal;
}

/**
 * Who is asking, set by the runtime from the message being handled, never from model arguments:
 * policy decisions and cross-chat rights depend on it.
 */
export interface ToolContext {
  sessionKey: string;
  channel: string;
  chatId: string;
  /** the sender of the message the turn answers (e.g. 'owner' on the CLI) */
  caller?: string;
  /** the board profile in use, when the hardware capability knows one */
  board?: string;
  /**
   * When the message the turn answers was received (ms since the epoch; the oldest of a burst). A
   * physical action asked for longer ago than tools.physicalMaxAgeSeconds needs a fresh confirmation.
   * Unset for calls that answer no message (`pinclaw tool run`).
   */
  receivedAt?: number;
  /**
   * The turn's identity, the same on each attempt of it (the id of the oldest message it answers):
   * a hook's veto of a physical action holds for every retry of the turn.
   */
  turnId?: string;
  signal?: AbortSignal;
  /** Asks the owner through the channel the request came from; absent when that channel cannot ask. */
  confirm?: (request: ConfirmRequest) => Promise<boolean>;
  /** Output of a long-running tool (exec) as it arrives, for channels that show progress; the result still holds it. */
  onOutput?: (stream: 'stdout' | 'stderr', text: string) => void;
  /**
   * The tool set the turn runs with (the governed registry, or a sub-agent's share of it): what
   * spawn offers a sub-agent. Lent by the caller, so no tool holds a reference to its own registry.
   */
  tools?: ToolSet;
  /** Records and delivers a message to a chat (the conductor's send); absent where no conductor runs. */
  send?: SendMessage;
}

/** What the conductor records and delivers; `Conductor.send` has this shape. */
export type SendMessage = (m: { channel: string; chatId: string; text: string; sessionKey?: string }) => { id: number };

export interface ToolResult {
  content: string;
  isError?: boolean;
  /** A physical action (a GPIO line driven, an I2C register written): what changed, for the audit row. */
  physical?: { device: string; before?: unknown; after?: unknown; [k: string]: unknown };
  /**
   * Images the model sees in the same turn (a camera snapshot), after the tool results. Never in
   * the audit row nor the stored session (their note stands there instead).
   */
  images?: ImageBlock[];
}

export interface Tool {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  /**
   * Changes nothing anywhere (it only reads): audited with one row written when the call ends
   * instead of one before it runs and its close after. A crash mid-call then leaves no row, and
   * nothing was changed. remote_tool counts as one: the board that runs the call audits it first.
   */
  readOnly?: boolean;
  /** Tools that touch shared state (hardware, files) run one at a time, in the model's order. */
  sequential?: boolean;
  /** The owner must say yes before each call (tools.confirm in the config can add more). */
  requiresConfirmation?: boolean;
  /**
   * Acts on the physical world (gpio_write, i2c_write): allowed without asking only in the owner's
   * chats (the CLI and tools.controlChats); anywhere else the owner confirms each call.
   */
  physical?: boolean;
  /**
   * Looks at or listens to the place (camera_snapshot): like a physical action, allowed without
   * asking only in the owner's chats (the CLI and tools.controlChats); anywhere else the owner
   * confirms each call. Audited before it runs, as it is not readOnly.
   */
  privacy?: boolean;
  /**
   * Why the tool cannot run on this machine now (no GPIO chip, no I2C bus, permission denied), with
   * the fix; undefined when it can. Such a tool is still listed and a call answers this reason, but
   * it is not offered to the model as callable. Asked at each listing and call: the reason may pass.
   */
  unavailable?(): string | undefined;
  /**
   * The MCP server (mcp.servers.<name>) behind this tool: an outside party, so the policy allows it
   * only in the owner's chats unless an allow list names it (src/tools/policy.ts).
   */
  mcpServer?: string;
  /** the tool's own name on that server */
  mcpTool?: string;
  /** Overrides tools.timeoutMs for this tool (tools.limits in the config overrides both). */
  timeoutMs?: number;
  /** Overrides tools.maxOutputBytes for this tool (tools.limits in the config overrides both). */
  maxOutputBytes?: number;
  /**
   * For tools that can act on another chat (send_message): the chat a valid input targets, or
   * undefined for the caller's own chat. Policy allows another chat only from a control chat.
   */
  targetChat?(input: unknown): { channel: string; chatId: string } | undefined;
  execute(input: unknown, ctx: ToolContext): Promise<ToolResult>;
}

/** One call as the model (or `pinclaw tool run`) makes it. */
export interface ToolCall {
  id?: string;
  name: string;
  input: unknown;
}

/** Tools that come and go while the process runs (an MCP server's): the registry asks at each use. */
export interface ToolSource {
  tools(): readonly Tool[];
}

export interface ToolSet {
  /** The tools offered in this context; a registry leaves out those its policy denies there. */
  specs(ctx?: ToolContext): ToolSpec[];
  get(name: string, ctx?: ToolContext): Tool | undefined;
  /**
   * The governed path (validation, policy, limits, redaction, audit). Plain sets have none, and
   * the loop validates and executes the call itself.
   */
  run?(call: ToolCall, ctx: ToolContext): Promise<ToolResult>;
}

export function toolSet(tools: readonly Tool[]): ToolSet {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return {
    specs: () => tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema as Record<string, unknown> })),
    get: (name) => byName.get(name),
  };
}
