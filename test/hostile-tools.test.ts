// Hostile tool input: every built-in tool's schema against prototype keys, random JSON, huge strings
// and deep nesting, through the registry's one call path; and grep against patterns that backtrack
// catastrophically. Each case must end in a refusal that names the reason, or a correct answer.
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaults, type PinclawConfig } from '../src/config/schema.js';
import { resolvePaths } from '../src/paths.js';
import { builtinTools } from '../src/tools/builtin.js';
import { fileTools } from '../src/tools/files/index.js';
import { compileSearchRegex } from '../src/tools/files/search-regex.js';
import { createRegistry } from '../src/tools/registry.js';
import type { Tool, ToolContext } from '../src/tools/types.js';
import { MAX_DEPTH, MAX_ERRORS, validateInput, type JsonSchema } from '../src/tools/validate.js';
import { prng } from './support/prng.js';
import { tempDir } from './support/proc.js';

const ctx: ToolContext = { sessionKey: 's', channel: 'cli', chatId: 'c', caller: 'owner' };

function allTools(): Tool[] {
  const home = tempDir();
  const config: PinclawConfig = defaults();
  config.web.search = { ...config.web.search, provider: 'searxng', baseUrl: 'http://127.0.0.1:9' };
  return builtinTools({ config, paths: resolvePaths({ home }, {}), env: {} });
}

/** A valid input for a schema: its required fields with the smallest value of their type. */
function minimalValid(schema: JsonSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of schema.required ?? []) {
    const s = schema.properties![k]!;
    out[k] = s.enum ? s.enum[0] : s.type === 'string' ? 'x'.repeat(Math.max(s.minLength ?? 1, 1)) : s.type === 'integer' || s.type === 'number' ? (s.minimum ?? 1) : s.type === 'boolean' ? false : s.type === 'array' ? [] : {};
  }
  return out;
}

const protoKeys = Object.getOwnPropertyNames(Object.prototype);

t.test('every tool schema refuses every Object.prototype key, and __proto__ outright', async (t) => {
  const tools = allTools();
  t.ok(tools.length >= 12, `${tools.length} tools checked`);
  t.ok(protoKeys.includes('constructor') && protoKeys.includes('__proto__') && protoKeys.includes('toString'));
  for (const tool of tools) {
    const schema = tool.inputSchema;
    t.equal(schema.additionalProperties, false, `${tool.name} closes its schema`);
    t.same(validateInput(schema, minimalValid(schema)), [], `${tool.name}: the minimal input is valid`);
    for (const key of protoKeys) {
      // JSON.parse makes `__proto__` an own property, exactly as a model's arguments arrive.
      const input = JSON.parse(JSON.stringify(minimalValid(schema)).replace(/^\{/, `{${JSON.stringify(key)}:1${Object.keys(minimalValid(schema)).length ? ',' : ''}`));
      t.ok(Object.prototype.hasOwnProperty.call(input, key), `${tool.name}: ${key} is an own key of the input`);
      const errors = validateInput(schema, input);
      const expected = key === '__proto__' ? 'input.__proto__: not allowed (a prototype key)' : `input.${key}: unknown field`;
      t.same(errors, [expected], `${tool.name} refuses ${key}`);
    }
    for (const r of schema.required ?? []) {
      // A required field must be the input's own: `{}` inherits toString, constructor, … but not these.
      const input = minimalValid(schema);
      delete input[r];
      t.same(validateInput(schema, input), [`input.${r}: required`], `${tool.name}: ${r} missing is named`);
    }
  }
});

t.test('a required or known field named like a prototype member is checked as its own', async (t) => {
  const str: JsonSchema = { type: 'string' };
  const schema: JsonSchema = { type: 'object', properties: { toString: str }, required: ['toString', 'valueOf'], additionalProperties: false };
  t.same(validateInput(schema, {}), ['input.toString: required', 'input.valueOf: required']);
  t.same(validateInput(schema, { toString: 5, valueOf: 1 }), ['input.toString: expected string, got number', 'input.valueOf: unknown field']);
  const open: JsonSchema = { type: 'object', properties: {} };
  t.same(validateInput(open, JSON.parse('{"data":{"x":[{"__proto__":{"polluted":1}}]}}')), ['input.data: holds a __proto__ key, which is not allowed']);
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched');
});

/** A random JSON value of bounded size. */
function randomJson(rand: () => number, depth = 0): unknown {
  const r = rand();
  if (depth > 4 || r < 0.35) {
    const k = Math.floor(rand() * 6);
    if (k === 0) return null;
    if (k === 1) return rand() < 0.5;
    if (k === 2) return Math.floor((rand() - 0.5) * 1e6);
    if (k === 3) return (rand() - 0.5) * 1e3;
    return String.fromCharCode(...Array.from({ length: Math.floor(rand() * 12) }, () => 32 + Math.floor(rand() * 0x2f00)));
  }
  if (r < 0.6) return Array.from({ length: Math.floor(rand() * 5) }, () => randomJson(rand, depth + 1));
  const keys = ['path', 'pattern', 'content', 'command', 'url', 'text', 'offset', 'limit', 'query', ...protoKeys];
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(rand() * 5); i > 0; i--) o[keys[Math.floor(rand() * keys.length)]!] = randomJson(rand, depth + 1);
  return JSON.parse(JSON.stringify(o));
}

t.test('random JSON against every schema: errors name the input, or the input conforms', async (t) => {
  const rand = prng(15);
  const tools = allTools();
  let refused = 0;
  let accepted = 0;
  for (let i = 0; i < 400; i++) {
    for (const tool of tools) {
      const value = randomJson(rand);
      const errors = validateInput(tool.inputSchema, value);
      if (errors.length === 0) {
        accepted++;
        // What passed is an object with only the schema's own keys, each required one present.
        const o = value as Record<string, unknown>;
        if (typeof o !== 'object' || o === null || Array.isArray(o)) t.fail(`${tool.name} accepted ${JSON.stringify(value)}`);
        else {
          for (const k of Object.keys(o)) if (!Object.prototype.hasOwnProperty.call(tool.inputSchema.properties, k)) t.fail(`${tool.name} accepted the key ${k}`);
          for (const r of tool.inputSchema.required ?? []) if (!Object.prototype.hasOwnProperty.call(o, r)) t.fail(`${tool.name} accepted without ${r}`);
        }
      } else {
        refused++;
        if (errors.some((e) => !e.startsWith('input') && !e.startsWith('…'))) t.fail(`${tool.name}: an error does not name the field: ${errors.join('; ')}`);
        if (errors.length > MAX_ERRORS + 1) t.fail(`${tool.name}: ${errors.length} errors`);
      }
    }
  }
  t.ok(refused > 0 && accepted > 0, `${refused} refused, ${accepted} accepted`);
});

t.test('huge strings, huge arrays, many keys and deep nesting are refused with the limit named', async (t) => {
  const tools = allTools();
  const huge = 'a'.repeat(10 * 1024 * 1024);
  for (const tool of tools) {
    const schema = tool.inputSchema;
    for (const [k, s] of Object.entries(schema.properties ?? {})) {
      if (s.type !== 'string' || s.maxLength === undefined) continue;
      const errors = validateInput(schema, { ...minimalValid(schema), [k]: huge });
      t.same(errors, [`input.${k}: must be at most ${s.maxLength} characters, got ${huge.length}`], `${tool.name}.${k}: the cap is named`);
    }
  }
  const arraySchema: JsonSchema = { type: 'object', properties: { bytes: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 255 } } } };
  const bad = validateInput(arraySchema, { bytes: Array.from({ length: 1_000_000 }, () => -1) });
  t.equal(bad.length, MAX_ERRORS + 1, 'a million bad items make twenty errors and a closing line');
  t.match(bad.at(-1)!, /more errors not listed/);
  t.same(validateInput({ ...arraySchema, properties: { bytes: { type: 'array', maxItems: 16 } } }, { bytes: new Array(17).fill(0) }), ['input.bytes: must have at most 16 items, got 17']);
  const manyKeys = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
  const keyErrors = validateInput(tools[0]!.inputSchema, manyKeys);
  t.equal(keyErrors.length, MAX_ERRORS + 1);
  t.equal(keyErrors[0], 'input.k0: unknown field');
  const longKey = validateInput(tools[0]!.inputSchema, { ['k'.repeat(100_000)]: 1 });
  t.same(longKey, [`input["${'k'.repeat(40)}…"]: unknown field`], 'a long key is cut in the message');
  // Built iteratively: the validator must not recurse as deep as the value.
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = { a: deep };
  for (const tool of tools) t.same(validateInput(tool.inputSchema, deep), [`input: nested deeper than ${MAX_DEPTH} levels`], `${tool.name}: deep nesting refused`);
  let deepArray: unknown = [];
  for (let i = 0; i < 100_000; i++) deepArray = [deepArray];
  t.same(validateInput(tools[0]!.inputSchema, { x: deepArray }), [`input: nested deeper than ${MAX_DEPTH} levels`]);
});

t.test('limits hold exactly at the bound: maxLength, minLength, maxItems, minimum and maximum accept the limit itself', async (t) => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      text: { type: 'string', minLength: 2, maxLength: 8 },
      bytes: { type: 'array', minItems: 1, maxItems: 4 },
      level: { type: 'integer', minimum: 1, maximum: 5 },
    },
  };
  // Exactly at each limit: valid. A `>=` in place of `>` would refuse the 8-character string.
  t.same(validateInput(schema, { text: 'a'.repeat(8), bytes: [1, 2, 3, 4], level: 5 }), [], 'the upper limits themselves');
  t.same(validateInput(schema, { text: 'ab', bytes: [1], level: 1 }), [], 'the lower limits themselves');
  // One past each: refused, the limit and the value named.
  t.same(validateInput(schema, { text: 'a'.repeat(9), bytes: [1, 2, 3, 4, 5], level: 6 }), [
    'input.text: must be at most 8 characters, got 9',
    'input.bytes: must have at most 4 items, got 5',
    'input.level: must be <= 5',
  ]);
  t.same(validateInput(schema, { text: 'a', bytes: [], level: 0 }), [
    'input.text: must be at least 2 characters',
    'input.bytes: must have at least 1 items',
    'input.level: must be >= 1',
  ]);
  // Every built-in tool's own string caps, at the cap: accepted.
  for (const tool of allTools()) {
    const ts = tool.inputSchema;
    for (const [k, f] of Object.entries(ts.properties ?? {})) {
      if (f.type !== 'string' || f.maxLength === undefined || f.enum) continue;
      t.same(validateInput(ts, { ...minimalValid(ts), [k]: 'a'.repeat(f.maxLength) }), [], `${tool.name}.${k}: ${f.maxLength} characters pass`);
    }
  }
});

t.test('through the registry, hostile input never reaches a tool', async (t) => {
  let ran = 0;
  const tools = allTools().map((tool) => ({ ...tool, execute: async () => ((ran += 1), { content: 'ran' }) }));
  const reg = createRegistry(tools);
  for (const tool of tools) {
    const calls = [JSON.parse(`{"__proto__":{"admin":true}}`), { constructor: 'x' }, { toString: 'y' }, 'a string', 42, null, []];
    for (const input of calls) {
      const r = await reg.call({ name: tool.name, input }, ctx);
      t.equal(r.result.isError, true, `${tool.name} refused ${JSON.stringify(input)}`);
      t.match(r.result.content, new RegExp(`^invalid arguments for ${tool.name}: input`));
    }
  }
  t.equal(ran, 0);
  t.equal(({} as Record<string, unknown>).admin, undefined);
});

t.test('grep: catastrophic patterns give the right answer or a refusal with the reason', async (t) => {
  const ws = tempDir();
  mkdirSync(join(ws, 'd'));
  writeFileSync(join(ws, 'd', 'long.txt'), `${'a'.repeat(50_000)}b\nshort aaa line\n${'a'.repeat(30)}\n`);
  const grep = createRegistry(fileTools({ workspace: ws, settings: defaults().files }));
  const run = (input: Record<string, unknown>) => grep.call({ name: 'grep', input }, ctx).then((r) => r.result);

  // Linear engine (with V8's fallback): exact answers.
  let r = await run({ pattern: '(a+)+$', path: 'd' });
  t.notOk(r.isError, r.content);
  t.match(r.content, /^1 match in 1 file/);
  t.match(r.content, /d\/long\.txt:3:a{30}$/m);
  t.notMatch(r.content, /long\.txt:1:/);
  r = await run({ pattern: '^(a|aa)+$', path: 'd' });
  t.match(r.content, /^1 match in 1 file/);

  // Lookahead cannot run linearly; it is contained in a worker and answers correctly when quick.
  r = await run({ pattern: 'short(?= aaa)', path: 'd' });
  t.match(r.content, /^1 match in 1 file[\s\S]*:2:short aaa line/);

  // A backreference that backtracks exponentially: refused with the reason, and the loop kept serving.
  let ticks = 0;
  const timer = setInterval(() => ticks++, 20);
  r = await run({ pattern: '^(a+)+\\1$', path: 'd' });
  clearInterval(timer);
  t.equal(r.isError, true);
  t.match(r.content, /refused: the pattern \/\^\(a\+\)\+\\1\$\/ did not finish matching within 5000 ms/);
  t.match(r.content, /backreferences or lookaround/);
  t.ok(ticks > 0, `the event loop ran ${ticks} timer ticks while the pattern was matched`);

  // ignore_case cannot use this V8's linear engine either; a harmless pattern still answers.
  r = await run({ pattern: 'SHORT', path: 'd', ignore_case: true });
  t.match(r.content, /^1 match in 1 file/);
});

t.test('the contained matcher equals the linear one on the same patterns', async (t) => {
  const text = ['alpha beta', 'gamma', '', 'beta beta', 'x'.repeat(1000), 'Δelta ünïcode'].join('\n');
  for (const [source, flags] of [['beta', ''], ['^$', ''], ['a$', ''], ['x+', ''], ['ü', ''], ['(?:be)ta', '']] as const) {
    const linear = compileSearchRegex(source, flags);
    t.equal(linear.mode, 'linear');
    // The same pattern behind a lookahead that always holds cannot run linearly: it is contained.
    const contained = compileSearchRegex(`(?=[\\s\\S]*)${source}`, flags);
    t.equal(contained.mode, 'contained');
    t.same(await contained.matchingLines(text, 100), await linear.matchingLines(text, 100), `/${source}/`);
    t.same(await contained.matchingLines(text, 1), (await linear.matchingLines(text, 100)).slice(0, 1), `/${source}/ capped at 1`);
    await contained.close();
  }
  t.throws(() => compileSearchRegex('(', ''), SyntaxError);
});
