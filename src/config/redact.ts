// Redaction: every configured secret (decrypted) and anything shaped like a well-known credential is
// replaced by [redacted] before text reaches a log line, an audit row or a tool result. Patterns
// catch keys pinclaw was never told about, e.g. one a tool read from a file.
import { secretSlots } from './schema.js';
import type { PinclawConfig } from './schema.js';

export const REDACTED = '[redacted]';

/** Credential shapes; each match is replaced whole (Bearer keeps its word, so the text still reads). */
const PATTERNS: readonly [RegExp, string][] = [
  [/\bsk-ant-[A-Za-z0-9_-]{8,}/g, REDACTED], // Anthropic
  [/\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{20,}/g, REDACTED], // OpenAI and compatible
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, `$1 ${REDACTED}`], // HTTP Authorization values
  [/\b\d{6,12}:[A-Za-z0-9_-]{30,}/g, REDACTED], // Telegram bot tokens
  [/\bgh[pousr]_[A-Za-z0-9]{30,}/g, REDACTED], // GitHub
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}/g, REDACTED], // Slack
  [/\bAKIA[0-9A-Z]{16}\b/g, REDACTED], // AWS access key ids
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g, REDACTED],
];

/** Shorter values would also match ordinary words and numbers; they are left to the patterns. */
const MIN_SECRET_LENGTH = 4;

export type Redactor = (text: string) => string;

/**
 * A redactor for these secret values and the patterns. A value is also matched in its JSON-escaped
 * form, as audit inputs are stored as JSON.
 */
export function createRedactor(secrets: readonly string[]): Redactor {
  const forms = new Set<string>();
  for (const s of secrets) {
    if (s.length < MIN_SECRET_LENGTH) continue;
    forms.add(s);
    forms.add(JSON.stringify(s).slice(1, -1));
  }
  // Longest first: a secret that contains another is replaced whole, not left half-visible.
  const values = [...forms].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const v of values) if (out.includes(v)) out = out.split(v).join(REDACTED);
    for (const [re, to] of PATTERNS) out = out.replace(re, to);
    return out;
  };
}

/** One-off use; prefer createRedactor when the same secrets are applied many times. */
export function redact(text: string, secrets: readonly string[]): string {
  return createRedactor(secrets)(text);
}

/** Provider keys read from the environment when the config has none (see providers.md). */
const SECRET_ENV = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY'];

/** Every secret the process knows: secret fields of the loaded (decrypted) config and their env fallbacks. */
export function secretValues(config: PinclawConfig, env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const { parent, key } of secretSlots(config)) {
    const value = parent[key];
    if (typeof value === 'string' && value) out.push(value);
  }
  for (const name of SECRET_ENV) {
    const v = env[name];
    if (v) out.push(v);
  }
  return out;
}
