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
    throw err;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`${file}: expected a JSON object at the top level, found ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}
