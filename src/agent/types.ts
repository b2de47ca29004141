// The internal message format and the provider contract. Both providers (Anthropic, OpenAI-compatible)
// map to and from these types; nothing else in pinclaw sees a provider's wire format.

export interface TextBlock {
  type: 'text';
  text: string;
}
export interface ImageBlock {
  type: 'image';
  mediaType: string;
  /** base64; stripped before a session is saved */
  data: string;
  /**
   * What the image is and where it is kept ("a snapshot of camera shelf, saved in the workspace as
   * ..."): what stands in its place in the stored session and for a model that takes no images.
   */
  note?: string;
}
export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}
export interface ToolResultBlock {
  type: 'tool_result';
  toolUseId: string;
  content: string;
  isError?: boolean;
}
export type ContentBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock;

export interface Message {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON schema of the input object */
  inputSchema: Record<string, unknown>;
}

export type StopReason = 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence' | 'refusal' | 'other';

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export interface ProviderRequest {
  model: string;
  system: string;
  messages: Message[];
  tools: ToolSpec[];
  maxTokens: number;
  /** Aborts the request (turn cancelled, shutdown). */
  signal?: AbortSignal;
}

export interface ProviderResponse {
  content: ContentBlock[];
  stopReason: StopReason;
  usage: Usage;
  model: string;
  /** which provider/model of a fallback chain answered, e.g. "anthropic/claude-sonnet-5-5" */
  answeredBy?: string;
  /** set when agent.fallback's local model answered because no provider of the chain could be reached: its model name */
  localModel?: string;
}

/** Streaming events a provider emits while a response arrives. */
export type ProviderEvent = { type: 'text_delta'; text: string } | { type: 'retry'; attempt: number; delayMs: number; reason: string };

export interface Provider {
  /** e.g. "anthropic/claude-sonnet-5-5" */
  readonly id: string;
  complete(req: ProviderRequest, onEvent?: (e: ProviderEvent) => void): Promise<ProviderResponse>;
}

/** A provider failure, classified so the retry layer and the fallback chain can decide. */
export class ProviderError extends Error {
  readonly status?: number;
  readonly retryable: boolean;
  /** server-requested delay (retry-after), in milliseconds */
  readonly retryAfterMs?: number;
  readonly providerId: string;
  /**
   * The server was never reached or never answered (DNS failure, connection refused, no route,
   * connect or request timeout): what moves a turn to agent.fallback, the local model. A server
   * that answered (any status) is reachable, whatever it said.
   */
  readonly unreachable: boolean;
  constructor(providerId: string, message: string, opts: { status?: number; retryable: boolean; retryAfterMs?: number; cause?: unknown; unreachable?: boolean }) {
    super(message, { cause: opts.cause });
    this.name = 'ProviderError';
    this.providerId = providerId;
    this.status = opts.status;
    this.retryable = opts.retryable;
    this.retryAfterMs = opts.retryAfterMs;
    this.unreachable = opts.unreachable ?? false;
  }
}
