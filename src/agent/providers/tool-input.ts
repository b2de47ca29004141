// A tool call's input arrives as JSON text in fragments. When a reply stops at the output-token
// limit, the last call's JSON may be cut off; such a call is kept, with its input replaced by
// { _incomplete: "<the JSON text that arrived>" }, so the session shows what the model wrote and the
// agent loop can close it with a "cut off" result (it never executes calls of a max_tokens reply).

export const INCOMPLETE_KEY = '_incomplete';

export type ParsedInput = { ok: true; input: Record<string, unknown> } | { ok: false };

/** The input object, or ok: false when the text is not a complete JSON object. Empty text is {}. */
export function parseToolInput(raw: string): ParsedInput {
  if (raw.trim() === '') return { ok: true, input: {} };
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? { ok: true, input: v as Record<string, unknown> } : { ok: false };
  } catch {
    return { ok: false };
  }
}

export function incompleteInput(raw: string): Record<string, unknown> {
  return { [INCOMPLETE_KEY]: raw };
}

/** True for an input that parseToolInput could not complete (see incompleteInput). */
export function isIncompleteInput(input: unknown): boolean {
  return typeof input === 'object' && input !== null && Object.keys(input).length === 1 && typeof (input as Record<string, unknown>)[INCOMPLETE_KEY] === 'string';
}
