// The configuration schema: one declarative tree that validation, environment overrides, `config
// get/set` and the docs all read, so a new key is described once and every consumer follows.
// PinclawConfig is inferred from the tree for the same reason: adding a section to `sections`
// below is the whole change.

interface FieldBase {
  description: string;
  /** Set on values that must never be echoed back (tokens, keys). */
  secret?: true;
}

export interface StringField extends FieldBase { kind: 'string'; default?: string }
export interface IntegerField extends FieldBase { kind: 'integer'; min?: number; max?: number; default?: number }
export interface NumberField extends FieldBase { kind: 'number'; min?: number; max?: number; default?: number }
export interface BooleanField extends FieldBase { kind: 'boolean'; default?: boolean }
export interface EnumField extends FieldBase { kind: 'enum'; values: readonly string[]; default?: string }
export interface ObjectField extends FieldBase { kind: 'object'; fields: Readonly<Record<string, Field>>; default?: Record<string, unknown> }
export interface ArrayField extends FieldBase { kind: 'array'; items: Field; default?: unknown[] }

export type Field = StringField | IntegerField | NumberField | BooleanField | EnumField | ObjectField | ArrayField;
export type FieldKind = Field['kind'];

const sections = {
  gateway: {
    kind: 'object',
    description: 'the HTTP gateway',
    fields: {
      host: { kind: 'string', default: '127.0.0.1', description: 'address the gateway binds' },
      port: { kind: 'integer', min: 0, max: 65535, default: 7420, description: 'TCP port the gateway listens on (0 picks a free port)' },
      token: { kind: 'string', secret: true, description: 'bearer token for /api routes and /metrics; without one they answer 401' },
    },
  },
  log: {
    kind: 'object',
    description: 'logging',
    fields: {
      level: { kind: 'enum', values: ['debug', 'info', 'warn', 'error'], default: 'info', description: 'least severe level that is written' },
    },
  },
  store: {
    kind: 'object',
    description: 'the SQLite store',
    fields: {
      busyTimeoutMs: { kind: 'integer', min: 0, default: 5000, description: 'how long a write waits for a locked database, in milliseconds' },
    },
  },
  native: {
    kind: 'object',
    description: 'native addons',
    fields: {
      enabled: { kind: 'boolean', default: true, description: 'false forces the pure-TypeScript fallbacks' },
    },
  },
} as const satisfies Record<string, Field>;

export const schema: ObjectField = { kind: 'object', description: 'pinclaw configuration', fields: sections };

// Type inference from the tree. Objects are always materialised by validation (missing sections
// become {} and get their defaults), so only leaves without a default are optional.
type Simplify<T> = { [K in keyof T]: T[K] } & {};
type Present<F> = F extends { kind: 'object' } ? true : F extends { default: unknown } ? true : false;
type InferFields<Fs> = Simplify<
  { -readonly [K in keyof Fs as Present<Fs[K]> extends true ? K : never]: Infer<Fs[K]> } & {
    -readonly [K in keyof Fs as Present<Fs[K]> extends true ? never : K]?: Infer<Fs[K]>;
  }
>;
type Infer<F> = F extends { kind: 'string' } ? string
  : F extends { kind: 'integer' | 'number' } ? number
  : F extends { kind: 'boolean' } ? boolean
  : F extends { kind: 'enum'; values: readonly (infer V)[] } ? V
  : F extends { kind: 'object'; fields: infer Fs } ? InferFields<Fs>
  : F extends { kind: 'array'; items: infer I } ? Infer<I>[]
  : never;

export type PinclawConfig = InferFields<typeof sections>;

/** The field at a dot path ("gateway.port"), or undefined when the schema has no such key. */
export function fieldAt(path: string): Field | undefined {
  let field: Field = schema;
  for (const seg of path.split('.')) {
    if (field.kind !== 'object' || !Object.hasOwn(field.fields, seg)) return undefined;
    field = field.fields[seg]!;
  }
  return field;
}

export interface Leaf {
  path: string;
  field: Exclude<Field, ObjectField>;
}

/** Every non-object field with its dot path, in schema order. */
export function leaves(field: Field = schema, prefix = ''): Leaf[] {
  if (field.kind !== 'object') return [{ path: prefix, field }];
  return Object.entries(field.fields).flatMap(([k, f]) => leaves(f, prefix ? `${prefix}.${k}` : k));
}

function defaultOf(field: Field): unknown {
  if (field.default !== undefined) return structuredClone(field.default);
  if (field.kind !== 'object') return undefined;
  const out: Record<string, unknown> = {};
  for (const [k, f] of Object.entries(field.fields)) {
    const v = defaultOf(f);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** A fresh configuration holding only defaults. */
export function defaults(): PinclawConfig {
  return defaultOf(schema) as PinclawConfig;
}
