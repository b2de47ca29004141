// Argument handling shared by both backends. `prepareDoc`/`prepareQuery` fold text and turn number
// arrays into Float32Array before either backend sees them. The `parse*` functions are the
// reference's argument checks: the same checks, in the same order, with the same messages, as
// native/ranking.cc, so a bad argument fails alike on both backends.
import { foldText, wellFormed } from './ranking-text.js';
import { DEFAULT_OPTIONS, type Fusion, type ResolvedRankingOptions } from './ranking-types.js';

export const MAX_DIMENSIONS = 65536;

// With the codes native/js_error.h gives the addon's argument errors (Node's own codes).
export function typeFail(message: string): never {
  throw Object.assign(new TypeError(`ranking: ${message}`), { code: 'ERR_INVALID_ARG_TYPE' });
}
export function rangeFail(message: string): never {
  throw Object.assign(new RangeError(`ranking: ${message}`), { code: 'ERR_OUT_OF_RANGE' });
}

type Bag = Record<string, unknown>;
const present = (o: Bag, key: string): boolean => o[key] !== undefined && o[key] !== null;
const isObject = (v: unknown): v is Bag => typeof v === 'object' && v !== null;

function toFloat32(v: unknown): unknown {
  if (!Array.isArray(v)) return v;
  return Float32Array.from(v as unknown[], (x) => (typeof x === 'number' ? x : NaN));
}

/** Folds the text and converts the vector; anything of the wrong type is left for the backend to reject. */
export function prepareDoc(doc: unknown): unknown {
  if (!isObject(doc) || Array.isArray(doc)) return doc;
  const out: Bag = { ...doc };
  if (typeof out.text === 'string') out.text = foldText(out.text);
  if (present(out, 'vector')) out.vector = toFloat32(out.vector);
  return out;
}

export function prepareQuery(query: unknown): unknown {
  if (!isObject(query) || Array.isArray(query)) return query;
  const out: Bag = { ...query };
  if (typeof out.text === 'string') out.text = foldText(out.text);
  if (present(out, 'vector')) out.vector = toFloat32(out.vector);
  return out;
}

function intOption(o: Bag, key: string, dflt: number, lo: number, hi: number, msg: string): number {
  if (!present(o, key)) return dflt;
  const x = o[key];
  if (typeof x !== 'number' || !Number.isInteger(x) || x < lo || x > hi) rangeFail(msg);
  return x;
}

function numOption(o: Bag, key: string, dflt: number, msg: string): number {
  if (!present(o, key)) return dflt;
  const x = o[key];
  if (typeof x !== 'number') rangeFail(msg);
  return x;
}

export function validateOptions(o: ResolvedRankingOptions, prefix = ''): void {
  const fail = (m: string): never => rangeFail(prefix + m);
  if (!(Number.isInteger(o.dimensions) && o.dimensions >= 0 && o.dimensions <= MAX_DIMENSIONS)) fail('dimensions must be an integer from 0 to 65536');
  if (o.quantization !== 'f32' && o.quantization !== 'i8') fail("quantization must be 'f32' or 'i8'");
  if (!Number.isFinite(o.k1) || o.k1 < 0) fail('k1 must be a finite number >= 0');
  if (!(o.b >= 0 && o.b <= 1)) fail('b must be a number from 0 to 1');
  if (o.connectivity < 2 || o.connectivity > 64) fail('connectivity must be an integer from 2 to 64');
  if (o.expansionAdd < 1 || o.expansionAdd > 4096) fail('expansionAdd must be an integer from 1 to 4096');
  if (o.expansionSearch < 1 || o.expansionSearch > 4096) fail('expansionSearch must be an integer from 1 to 4096');
}

export function parseOptions(value: unknown): ResolvedRankingOptions {
  if (value === undefined || value === null) return { ...DEFAULT_OPTIONS };
  if (!isObject(value) || Array.isArray(value)) typeFail('options must be an object');
  const o = value;
  const d = DEFAULT_OPTIONS;
  const dimensions = intOption(o, 'dimensions', d.dimensions, 0, MAX_DIMENSIONS, 'dimensions must be an integer from 0 to 65536');
  let quantization = d.quantization;
  if (present(o, 'quantization')) {
    if (o.quantization !== 'f32' && o.quantization !== 'i8') rangeFail("quantization must be 'f32' or 'i8'");
    quantization = o.quantization;
  }
  const k1 = numOption(o, 'k1', d.k1, 'k1 must be a finite number >= 0');
  if (!Number.isFinite(k1) || k1 < 0) rangeFail('k1 must be a finite number >= 0');
  const b = numOption(o, 'b', d.b, 'b must be a number from 0 to 1');
  if (!(b >= 0 && b <= 1)) rangeFail('b must be a number from 0 to 1');
  return {
    dimensions,
    quantization,
    k1,
    b,
    hnswThreshold: intOption(o, 'hnswThreshold', d.hnswThreshold, 0, 4294967295, 'hnswThreshold must be an integer from 0 to 4294967295'),
    connectivity: intOption(o, 'connectivity', d.connectivity, 2, 64, 'connectivity must be an integer from 2 to 64'),
    expansionAdd: intOption(o, 'expansionAdd', d.expansionAdd, 1, 4096, 'expansionAdd must be an integer from 1 to 4096'),
    expansionSearch: intOption(o, 'expansionSearch', d.expansionSearch, 1, 4096, 'expansionSearch must be an integer from 1 to 4096'),
  };
}

const rawText = new TextDecoder('utf-8');

/** A string, or bytes decoded with U+FFFD for invalid sequences, as the addon decodes them. */
function textValue(v: unknown): string | null {
  if (typeof v === 'string') return wellFormed(v);
  if (v instanceof Uint8Array) return rawText.decode(v);
  return null;
}

export interface ParsedDoc {
  id: string;
  text: string;
  vector: Float32Array | null;
  kind: string;
  session: string;
  time: number;
}

function stringProp(o: Bag, key: string, who: string): string {
  if (!present(o, key)) return '';
  const v = o[key];
  if (typeof v !== 'string') typeFail(`${who}: ${key} must be a string`);
  return wellFormed(v);
}

export function parseDoc(value: unknown): ParsedDoc {
  if (!isObject(value) || Array.isArray(value)) typeFail('document must be an object');
  const o = value;
  if (typeof o.id !== 'string' || o.id === '') typeFail('document id must be a non-empty string');
  const id = wellFormed(o.id);
  const who = `document '${id}'`;
  const text = textValue(o.text);
  if (text === null) typeFail(`${who}: text must be a string`);
  let vector: Float32Array | null = null;
  if (present(o, 'vector')) {
    if (!(o.vector instanceof Float32Array)) typeFail(`${who}: vector must be a Float32Array or an array of numbers`);
    vector = o.vector;
  }
  const kind = stringProp(o, 'kind', who);
  const session = stringProp(o, 'session', who);
  let time = 0;
  if (present(o, 'time')) {
    if (typeof o.time !== 'number') typeFail(`${who}: time must be a finite number`);
    time = o.time;
  }
  return { id, text, vector, kind, session, time };
}

export function parseId(value: unknown): string {
  if (typeof value !== 'string') typeFail('document id must be a string');
  return wellFormed(value);
}

/** The checks every vector goes through; `what` begins the message ("query vector", "document 'x': vector"). */
export function checkVector(v: Float32Array, dims: number, what: string): void {
  if (v.length !== dims) rangeFail(`${what} has ${v.length} dimensions, the index has ${dims}`);
  let sum = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    if (!Number.isFinite(x)) rangeFail(`${what} component ${i} is ${String(x)}`);
    sum += x * x;
  }
  if (sum === 0) rangeFail(`${what} has zero length`);
}

export interface ParsedFilter {
  kinds: string[] | null;
  sessions: string[] | null;
  since: number;
  until: number;
}

export interface ParsedQuery {
  text: string;
  vector: Float32Array | null;
  k: number;
  fusion: Fusion;
  wVector: number;
  wKeyword: number;
  rrfK: number;
  /** 0: the default, max(4k, 50) */
  candidates: number;
  filter: ParsedFilter;
}

function nameList(v: unknown, msg: string): string[] {
  if (typeof v === 'string') return [wellFormed(v)];
  if (!Array.isArray(v)) typeFail(msg);
  return v.map((e: unknown) => (typeof e === 'string' ? wellFormed(e) : typeFail(msg)));
}

export function parseQuery(value: unknown): ParsedQuery {
  if (!isObject(value) || Array.isArray(value)) typeFail('query must be an object');
  const o = value;
  let text = '';
  if (present(o, 'text')) {
    const t = textValue(o.text);
    if (t === null) typeFail('query text must be a string');
    text = t;
  }
  let vector: Float32Array | null = null;
  if (present(o, 'vector')) {
    if (!(o.vector instanceof Float32Array)) typeFail('query vector must be a Float32Array or an array of numbers');
    vector = o.vector;
  }
  const k = intOption(o, 'k', 10, 1, 10000, 'k must be an integer from 1 to 10000');
  let fusion: Fusion = 'weighted';
  if (present(o, 'fusion')) {
    if (o.fusion !== 'weighted' && o.fusion !== 'rrf') rangeFail("fusion must be 'weighted' or 'rrf'");
    fusion = o.fusion;
  }
  let wVector = 0.7;
  let wKeyword = 0.3;
  if (present(o, 'weights')) {
    const msg = 'weights must be finite numbers >= 0, not both 0';
    if (!isObject(o.weights)) rangeFail(msg);
    wVector = numOption(o.weights, 'vector', 0.7, msg);
    wKeyword = numOption(o.weights, 'keyword', 0.3, msg);
    if (!Number.isFinite(wVector) || !Number.isFinite(wKeyword) || wVector < 0 || wKeyword < 0 || wVector + wKeyword === 0) rangeFail(msg);
  }
  const rrfK = numOption(o, 'rrfK', 60, 'rrfK must be a finite number >= 0');
  if (!Number.isFinite(rrfK) || rrfK < 0) rangeFail('rrfK must be a finite number >= 0');
  const candidates = intOption(o, 'candidates', 0, 1, 100000, 'candidates must be an integer from 1 to 100000');
  const filter: ParsedFilter = { kinds: null, sessions: null, since: -Infinity, until: Infinity };
  if (present(o, 'filter')) {
    const f = o.filter;
    if (!isObject(f) || Array.isArray(f)) typeFail('filter must be an object');
    if (present(f, 'kind')) filter.kinds = nameList(f.kind, 'filter.kind must be a string or an array of strings');
    if (present(f, 'session')) filter.sessions = nameList(f.session, 'filter.session must be a string or an array of strings');
    filter.since = numOption(f, 'since', -Infinity, 'filter.since must be a finite number');
    if (present(f, 'since') && !Number.isFinite(filter.since)) rangeFail('filter.since must be a finite number');
    filter.until = numOption(f, 'until', Infinity, 'filter.until must be a finite number');
    if (present(f, 'until') && !Number.isFinite(filter.until)) rangeFail('filter.until must be a finite number');
  }
  return { text, vector, k, fusion, wVector, wKeyword, rrfK, candidates, filter };
}
