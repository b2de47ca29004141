// JSON text → raw config object, with syntax errors pointing at file:line:column. V8 words its
// messages differently across versions ("at position N", "(line L column C)", or only the
// offending token), so the location is taken from the message when it has one and found by a
// small scanner when it does not.
import { ConfigError } from '../errors.js';
import { describeValue } from './validate.js';

function lineColumn(text: string, pos: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(pos, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

/** Offset of the first JSON syntax error in `text`, or text.length when the input ends early. */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string) => {
    for (const ch of word) {
      if (text[i] !== ch) fail();
      i++;
    }
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail();
      const c = text[i]!;
      if (c === '"') return void i++;
      if (c < ' ') fail();
      if (c === '\\') {
        i++;
        if (text[i] === 'u') {
          i++;
          for (let k = 0; k < 4; k++, i++) if (!/[0-9a-fA-F]/.test(text[i] ?? '')) fail();
        } else if (text[i] !== undefined && '"\\/bfnrt'.includes(text[i]!)) i++;
        else fail();
      } else i++;
    }
  };
  const digits = () => {
    const start = i;
    while (i < text.length && text[i]! >= '0' && text[i]! <= '9') i++;
    if (i === start) fail();
  };
  const number = () => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else digits();
    if (text[i] === '.') {
      i++;
      digits();
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      digits();
    }
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail();
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail();
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    fail();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
  } catch (at) {
    if (typeof at === 'number') return at;
    throw at;
  }
  return text.length;
}

function syntaxError(err: SyntaxError, text: string, file: string): ConfigError {
  const msg = err.message;
  let where: { line: number; column: number };
  const lc = /line (\d+) column (\d+)/.exec(msg);
  const pos = /at position (\d+)/.exec(msg);
  if (lc) where = { line: Number(lc[1]), column: Number(lc[2]) };
  else if (pos) where = lineColumn(text, Number(pos[1]));
  else if (/end of JSON input/.test(msg)) where = lineColumn(text, text.length);
  else where = lineColumn(text, jsonErrorOffset(text));
  // The quoted excerpt V8 appends can hold the whole file, secrets included; the location replaces it.
  const reason = msg
    .replace(/, (?:\.\.\.)?".*" is not valid JSON$/s, '')
    .replace(/\s*\(line \d+ column \d+\)/, '')
    .replace(/\s*in JSON at position \d+.*$/s, '')
    .replace(/\s*at position \d+.*$/s, '');
  return new ConfigError(`${file}:${where.line}:${where.column}: invalid JSON: ${reason}`);
}

/** Parses config file text; the top level must be a JSON object. */
export function parseConfigText(text: string, file: string): Record<string, unknown> {
  // Editors on some systems save a byte-order mark that JSON.parse rejects.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    if (err instanceof SyntaxError) throw syntaxError(err, body, file);
    // V8 may run out of stack on deep nesting; the owner gets the same message as below.
    if (err instanceof RangeError) throw tooDeep(file);
    throw err;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${file}: expected a JSON object at the top level, found ${describeValue(value)}`);
  }
  const deep = deepestPath(value);
  if (deep) throw tooDeep(file, deep);
  return value as Record<string, unknown>;
}

/**
 * No pinclaw setting is nested more than a few levels; a file nested deeper is damaged or hostile,
 * and the recursive code after parsing (validation, structuredClone, JSON.stringify on `config set`)
 * would run out of stack on it with a RangeError instead of a message.
 */
export const MAX_CONFIG_DEPTH = 32;

function tooDeep(file: string, path?: string): ConfigError {
  return new ConfigError(`${file}: nested more than ${MAX_CONFIG_DEPTH} levels deep${path ? ` at ${path}` : ''}; no pinclaw setting is, so the file is damaged: fix it, or move it aside and run \`pinclaw onboard\``);
}

/** The path of the first value nested deeper than MAX_CONFIG_DEPTH, or undefined; iterative, so any depth is safe. */
function deepestPath(root: object): string | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: root, path: '', depth: 0 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_CONFIG_DEPTH) return path;
    const entries = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v] as const) : Object.entries(value).map(([k, v]) => [path ? `.${k}` : k, v] as const);
    for (const [seg, v] of entries) if (typeof v === 'object' && v !== null) stack.push({ value: v, path: `${path}${seg}`, depth: depth + 1 });
  }
  return undefined;
}
