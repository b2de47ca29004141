// A JSON-schema subset for tool inputs: type, properties, required, enum, items, min/max, length and
// item counts, and additionalProperties: false. Errors name the field, so the model can correct itself.
//
// The input comes from the model, so it is hostile by assumption: only own properties count (a key
// named `constructor` or `toString` must not find Object.prototype's member and pass as "known"),
// `__proto__` is refused at any depth (an object carrying it is a prototype-pollution attempt, and
// code that copies the input with a spread or Object.assign would act on it), and the error list is
// bounded so a million bad array items cannot become a million messages.
export type JsonSchema = {
  type?: 'object' | 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'null';
  properties?: Record<string, JsonSchema>;
  required?: readonly string[];
  enum?: readonly unknown[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  additionalProperties?: boolean;
  description?: string;
};

/** Errors reported for one input at most; the rest are counted in one closing line. */
export const MAX_ERRORS = 20;
/** A key longer than this is shown cut in an error message. */
const MAX_KEY_SHOWN = 40;
/** Nesting below this is refused before it is walked (no tool schema is nearly this deep). */
export const MAX_DEPTH = 64;

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** `path.key`, or `path["…"]` for keys that are not plain identifiers, cut when long. */
function keyPath(path: string, k: string): string {
  const shown = k.length > MAX_KEY_SHOWN ? `${k.slice(0, MAX_KEY_SHOWN)}…` : k;
  return /^[A-Za-z_$][\w$]*$/.test(shown) ? `${path}.${shown}` : `${path}[${JSON.stringify(shown)}]`;
}

interface Collector {
  errors: string[];
  /** more errors were found than are listed (the walk may also stop early, so no count is given) */
  capped: boolean;
}

function add(c: Collector, msg: string): void {
  if (c.errors.length < MAX_ERRORS) c.errors.push(msg);
  else c.capped = true;
}

/** True when a value nests deeper than `limit` (iterative: a deep value must not overflow the stack). */
function tooDeep(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (d >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child && typeof child === 'object') stack.push([child, d + 1]);
  }
  return false;
}

function check(schema: JsonSchema, value: unknown, path: string, c: Collector): void {
  const t = schema.type;
  if (t) {
    const actual = typeOf(value);
    const ok = t === 'integer' ? typeof value === 'number' && Number.isInteger(value) : t === 'number' ? typeof value === 'number' && Number.isFinite(value) : actual === t;
    if (!ok) return add(c, `${path}: expected ${t}, got ${actual === 'number' && t === 'integer' ? 'a non-integer number' : actual}`);
  }
  if (schema.enum && !schema.enum.some((e) => e === value)) add(c, `${path}: must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) add(c, `${path}: must be >= ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) add(c, `${path}: must be <= ${schema.maximum}`);
  }
  if (typeof value === 'string') {
    if (schema.minLength !== undefined && value.length < schema.minLength) add(c, `${path}: must be at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength) add(c, `${path}: must be at most ${schema.maxLength} characters, got ${value.length}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) add(c, `${path}: must have at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) return add(c, `${path}: must have at most ${schema.maxItems} items, got ${value.length}`);
    if (schema.items) for (let i = 0; i < value.length && !c.capped; i++) check(schema.items, value[i], `${path}[${i}]`, c);
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    for (const r of schema.required ?? []) if (!own(obj, r)) add(c, `${keyPath(path, r)}: required`);
    const props = schema.properties ?? {};
    for (const k of Object.keys(obj)) {
      if (k === '__proto__') {
        add(c, `${keyPath(path, k)}: not allowed (a prototype key)`);
        continue;
      }
      if (own(props, k)) check(props[k]!, obj[k], keyPath(path, k), c);
      else if (schema.additionalProperties === false) add(c, `${keyPath(path, k)}: unknown field`);
      else if (tooDeep(obj[k], MAX_DEPTH)) add(c, `${keyPath(path, k)}: nested deeper than ${MAX_DEPTH} levels`);
      else if (hasProtoKey(obj[k])) add(c, `${keyPath(path, k)}: holds a __proto__ key, which is not allowed`);
    }
  }
}

/** A `__proto__` own key anywhere below (free-form values are passed on to tools as they are). */
function hasProtoKey(value: unknown): boolean {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (!v || typeof v !== 'object') continue;
    if (!Array.isArray(v) && own(v, '__proto__')) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child && typeof child === 'object') stack.push(child);
  }
  return false;
}

export function validateInput(schema: JsonSchema, value: unknown, path = 'input'): string[] {
  const c: Collector = { errors: [], capped: false };
  if (tooDeep(value, MAX_DEPTH)) return [`${path}: nested deeper than ${MAX_DEPTH} levels`];
  check(schema, value, path, c);
  if (c.capped) c.errors.push(`… more errors not listed (the first ${MAX_ERRORS} are shown)`);
  return c.errors;
}
