// The serialized form (docs/ranking.md, "Serialized form") for the reference: the same bytes as
// native/ranking_persist.cc writes, and the same checks, in the same order, when reading. The HNSW
// section the addon may append is checked for framing and skipped: the reference is always exact.
// Postings are stored term by term (terms in code point order, documents by ordinal), which is how
// the addon holds them in memory, so that it can load a list by copying it.
import { crc32, loadError, Reader, Writer } from './ranking-codec.js';
import { validateOptions } from './ranking-input.js';
import { compareIds } from './ranking-text.js';
import { normF32, normI8, type PreparedVector } from './ranking-vectors.js';
import type { ResolvedRankingOptions } from './ranking-types.js';

export interface StoredDoc {
  id: string;
  kind: string;
  session: string;
  time: number;
  /** term → frequency */
  terms: Map<string, number>;
  prepared: PreparedVector | null;
}

const MAGIC = [0x50, 0x43, 0x52, 0x49]; // "PCRI"
// 2: terms in code point order with their postings (varints), instead of per-document term lists.
const VERSION = 2;
const HEADER_BYTES = 24;

function rawBytes(o: ResolvedRankingOptions): number {
  return o.quantization === 'f32' ? o.dimensions * 4 : o.dimensions;
}

function vectorBytes(p: PreparedVector): Uint8Array {
  const v = p.f32 ?? p.i8!;
  return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
}

export function encodeIndex(options: ResolvedRankingOptions, docs: Iterable<StoredDoc>): Buffer {
  const sorted = [...docs].sort((a, b) => compareIds(a.id, b.id));
  const kinds = new Map<string, number>();
  const sessions = new Map<string, number>();
  const number = (m: Map<string, number>, s: string): void => {
    if (!m.has(s)) m.set(s, m.size);
  };
  // term → [ordinal, tf, ordinal, tf, ...], ordinals ascending
  const postings = new Map<string, number[]>();
  sorted.forEach((d, ordinal) => {
    number(kinds, d.kind);
    number(sessions, d.session);
    for (const [t, tf] of d.terms) {
      let p = postings.get(t);
      if (!p) postings.set(t, (p = []));
      p.push(ordinal, tf);
    }
  });
  const w = new Writer(HEADER_BYTES);
  w.u32(options.dimensions);
  w.u8(options.quantization === 'f32' ? 0 : 1);
  w.u8(0);
  w.u8(0);
  w.u8(0);
  w.f64(options.k1);
  w.f64(options.b);
  w.u32(options.hnswThreshold);
  w.u32(options.connectivity);
  w.u32(options.expansionAdd);
  w.u32(options.expansionSearch);
  for (const m of [kinds, sessions]) {
    w.u32(m.size);
    for (const s of m.keys()) w.str(s);
  }
  w.u32(sorted.length);
  for (const d of sorted) {
    w.str(d.id);
    w.u32(kinds.get(d.kind)!);
    w.u32(sessions.get(d.session)!);
    w.f64(d.time);
    w.u8(d.prepared ? 1 : 0);
    if (d.prepared) w.bytes(vectorBytes(d.prepared));
  }
  const terms = [...postings.keys()].sort(compareIds);
  w.u32(terms.length);
  for (const t of terms) {
    const p = postings.get(t)!;
    w.str(t);
    w.u32(p.length / 2);
    const at = w.pos;
    w.u32(0);
    // varint(gap * 2 + (tf > 1)), then varint(tf) when tf > 1; the first gap counts from -1.
    let prev = -1;
    for (let i = 0; i < p.length; i += 2) {
      const ordinal = p[i]!;
      const tf = p[i + 1]!;
      w.varint((ordinal - prev) * 2 + (tf > 1 ? 1 : 0));
      if (tf > 1) w.varint(tf);
      prev = ordinal;
    }
    w.patchU32(at, w.pos - at - 4);
  }
  w.u8(0); // no HNSW section
  const out = w.finish();
  const body = out.subarray(HEADER_BYTES);
  out.set(MAGIC, 0);
  out.writeUInt32LE(VERSION, 4);
  out.writeBigUInt64LE(BigInt(body.length), 8);
  out.writeUInt32LE(crc32(body), 16);
  out.writeUInt32LE(0, 20);
  return out;
}

function readNames(r: Reader, what: string, allowEmpty: boolean): string[] {
  const n = r.count(4, what);
  const names: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const s = r.str(what);
    if (s === null) throw loadError(`invalid UTF-8 in ${what}`);
    if (!allowEmpty && s === '') throw loadError(`empty ${what}`);
    if (seen.has(s)) throw loadError(`duplicate ${what}`);
    seen.add(s);
    names.push(s);
  }
  return names;
}

function readVector(bytes: Uint8Array, o: ResolvedRankingOptions, what: string): PreparedVector {
  // Copied: the stored vector must not alias the caller's buffer.
  const copy = new Uint8Array(bytes);
  if (o.quantization === 'f32') {
    const f32 = new Float32Array(copy.buffer, 0, o.dimensions);
    let sum = 0;
    for (let i = 0; i < f32.length; i++) {
      if (!Number.isFinite(f32[i]!)) throw loadError(`non-finite component in ${what}`);
      sum += f32[i]! * f32[i]!;
    }
    if (sum === 0) throw loadError(`zero-length ${what}`);
    return { f32, i8: null, norm: normF32(f32, o.dimensions) };
  }
  const i8 = new Int8Array(copy.buffer, 0, o.dimensions);
  const norm = normI8(i8, o.dimensions);
  if (norm === 0) throw loadError(`zero-length ${what}`);
  return { f32: null, i8, norm };
}

export function decodeIndex(data: Uint8Array): { options: ResolvedRankingOptions; docs: StoredDoc[] } {
  const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  if (buf.length < HEADER_BYTES || MAGIC.some((b, i) => buf[i] !== b)) throw loadError('not a serialized ranking index');
  const version = buf.readUInt32LE(4);
  if (version !== VERSION) throw loadError(`unsupported format version ${version}`);
  if (buf.readBigUInt64LE(8) !== BigInt(buf.length - HEADER_BYTES)) throw loadError('length mismatch (truncated or padded buffer)');
  const body = buf.subarray(HEADER_BYTES);
  if (crc32(body) !== buf.readUInt32LE(16)) throw loadError('checksum mismatch (the buffer is corrupt)');

  const r = new Reader(body);
  const dimensions = r.u32('options');
  const q = r.u8('options');
  r.skip(3, 'options');
  const k1 = r.f64('options');
  const b = r.f64('options');
  const hnswThreshold = r.u32('options');
  const connectivity = r.u32('options');
  const expansionAdd = r.u32('options');
  const expansionSearch = r.u32('options');
  if (q > 1) throw new RangeError("ranking: cannot load: quantization must be 'f32' or 'i8'");
  const options: ResolvedRankingOptions = { dimensions, quantization: q === 0 ? 'f32' : 'i8', k1, b, hnswThreshold, connectivity, expansionAdd, expansionSearch };
  validateOptions(options, 'cannot load: ');

  const kinds = readNames(r, 'kind', true);
  const sessions = readNames(r, 'session', true);
  const raw = rawBytes(options);
  const docCount = r.count(4 + 4 + 4 + 8 + 1, 'document count');
  const docs: StoredDoc[] = [];
  const ids = new Set<string>();
  for (let i = 0; i < docCount; i++) {
    const id = r.str('document id');
    if (id === null || id === '') throw loadError('invalid document id');
    if (ids.has(id)) throw loadError('duplicate document id');
    ids.add(id);
    const kind = r.u32('document kind');
    const session = r.u32('document session');
    if (kind >= kinds.length || session >= sessions.length) r.fail('document kind or session');
    const time = r.f64('document time');
    if (!Number.isFinite(time)) throw loadError('non-finite document time');
    const hasVector = r.u8('document vector flag');
    if (hasVector > 1) r.fail('document vector flag');
    let prepared: PreparedVector | null = null;
    if (hasVector) {
      if (dimensions === 0) r.fail('document vector without dimensions');
      prepared = readVector(r.skip(raw, 'document vector'), options, 'document vector');
    }
    docs.push({ id, kind: kinds[kind]!, session: sessions[session]!, time, terms: new Map(), prepared });
  }
  const termCount = r.count(4 + 1 + 4 + 4 + 1, 'term count');
  const terms = new Set<string>();
  const lengths = new Float64Array(docCount);
  for (let i = 0; i < termCount; i++) {
    const t = r.str('term');
    if (t === null) throw loadError('invalid UTF-8 in term');
    if (t === '') throw loadError('empty term');
    if (terms.has(t)) throw loadError('duplicate term');
    terms.add(t);
    const df = r.count(1, 'term postings');
    const bytes = r.u32('term postings');
    if (df === 0 || bytes > r.left) r.fail('term postings');
    const start = r.pos;
    let prev = -1;
    for (let j = 0; j < df; j++) {
      const v = r.varint('term postings');
      const gap = Math.floor(v / 2);
      const doc = prev + gap;
      if (gap === 0 || doc >= docCount) r.fail('term postings');
      let tf = 1;
      if (v % 2 === 1) {
        tf = r.varint('term postings');
        if (tf < 2 || tf > 0xffffffff) r.fail('term postings');
      }
      lengths[doc] = lengths[doc]! + tf;
      if (lengths[doc]! > 0xffffffff) r.fail('term postings');
      docs[doc]!.terms.set(t, tf);
      prev = doc;
    }
    if (r.pos - start !== bytes) r.fail('term postings');
  }
  const hasGraph = r.u8('graph flag');
  if (hasGraph > 1) r.fail('graph flag');
  if (hasGraph) {
    const nodes = r.count(4, 'graph node count');
    const refs: number[] = [];
    for (let g = 0; g < nodes; g++) refs.push(r.u32('graph node'));
    const tombCount = r.count(raw || 1, 'graph tombstone count');
    if (dimensions === 0 && nodes) r.fail('graph without dimensions');
    for (let t = 0; t < tombCount; t++) readVector(r.skip(raw, 'graph tombstone vector'), options, 'graph tombstone vector');
    const graphLen = r.u64('graph length');
    if (graphLen > r.left) r.fail('graph length');
    r.skip(graphLen, 'graph');
    const vectors = docs.reduce((n, d) => n + (d.prepared ? 1 : 0), 0);
    const corrupt = () => loadError('HNSW graph is corrupt (node references)');
    if (nodes !== vectors + tombCount) throw corrupt();
    const used = new Uint8Array(docCount + tombCount);
    for (const ref of refs) {
      const valid = ref < docCount ? docs[ref]!.prepared !== null : ref - docCount < tombCount;
      if (!valid || used[ref]) throw corrupt();
      used[ref] = 1;
    }
  }
  if (r.left !== 0) r.fail('trailing bytes');
  return { options, docs };
}
