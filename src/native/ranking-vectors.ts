// Vector arithmetic of the ranking index, reproducing native/ranking_vectors.cc bit for bit: the
// addon sums float32 products in sixteen SIMD lanes, so this does the same with Math.fround after
// every operation (a double holds a float32 product exactly, and rounding a double sum to float32
// gives the float32 sum), then folds the lanes in the same order.

const fr = Math.fround;

export function dotF32(a: Float32Array, b: Float32Array, dims: number): number {
  let l0 = 0, l1 = 0, l2 = 0, l3 = 0, l4 = 0, l5 = 0, l6 = 0, l7 = 0; // prettier-ignore
  let l8 = 0, l9 = 0, l10 = 0, l11 = 0, l12 = 0, l13 = 0, l14 = 0, l15 = 0; // prettier-ignore
  const end = dims - (dims % 16);
  let i = 0;
  for (; i < end; i += 16) {
    l0 = fr(l0 + fr(a[i]! * b[i]!));
    l1 = fr(l1 + fr(a[i + 1]! * b[i + 1]!));
    l2 = fr(l2 + fr(a[i + 2]! * b[i + 2]!));
    l3 = fr(l3 + fr(a[i + 3]! * b[i + 3]!));
    l4 = fr(l4 + fr(a[i + 4]! * b[i + 4]!));
    l5 = fr(l5 + fr(a[i + 5]! * b[i + 5]!));
    l6 = fr(l6 + fr(a[i + 6]! * b[i + 6]!));
    l7 = fr(l7 + fr(a[i + 7]! * b[i + 7]!));
    l8 = fr(l8 + fr(a[i + 8]! * b[i + 8]!));
    l9 = fr(l9 + fr(a[i + 9]! * b[i + 9]!));
    l10 = fr(l10 + fr(a[i + 10]! * b[i + 10]!));
    l11 = fr(l11 + fr(a[i + 11]! * b[i + 11]!));
    l12 = fr(l12 + fr(a[i + 12]! * b[i + 12]!));
    l13 = fr(l13 + fr(a[i + 13]! * b[i + 13]!));
    l14 = fr(l14 + fr(a[i + 14]! * b[i + 14]!));
    l15 = fr(l15 + fr(a[i + 15]! * b[i + 15]!));
  }
  if (i < dims) {
    // The addon pads rows with zeros to a multiple of 16; adding 0 leaves a lane unchanged.
    const lanes = [l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, l10, l11, l12, l13, l14, l15];
    for (let j = 0; i < dims; i++, j++) lanes[j] = fr(lanes[j]! + fr(a[i]! * b[i]!));
    [l0, l1, l2, l3, l4, l5, l6, l7, l8, l9, l10, l11, l12, l13, l14, l15] = lanes as [number, number, number, number, number, number, number, number, number, number, number, number, number, number, number, number];
  }
  const s0 = fr(fr(l0 + l4) + fr(l8 + l12));
  const s1 = fr(fr(l1 + l5) + fr(l9 + l13));
  const s2 = fr(fr(l2 + l6) + fr(l10 + l14));
  const s3 = fr(fr(l3 + l7) + fr(l11 + l15));
  return fr(fr(s0 + s1) + fr(s2 + s3));
}

export function dotI8(a: Int8Array, b: Int8Array, dims: number): number {
  let sum = 0;
  for (let i = 0; i < dims; i++) sum += a[i]! * b[i]!;
  return sum;
}

/** sqrt of the sum of squares, summed in order in double precision. */
export function normF32(v: Float32Array, dims: number): number {
  let sum = 0;
  for (let i = 0; i < dims; i++) sum += v[i]! * v[i]!;
  return Math.sqrt(sum);
}

/** The exact integer sum of squares (cosine divides by the square root of a product of two). */
export function normI8(v: Int8Array, dims: number): number {
  let sum = 0;
  for (let i = 0; i < dims; i++) sum += v[i]! * v[i]!;
  return sum;
}

/** Round half away from zero of x * 127 / max|x|. */
export function quantizeI8(v: Float32Array, dims: number): Int8Array {
  let maxAbs = 0;
  for (let i = 0; i < dims; i++) maxAbs = Math.max(maxAbs, Math.abs(v[i]!));
  const scale = 127 / maxAbs;
  const out = new Int8Array(dims);
  for (let i = 0; i < dims; i++) {
    const x = v[i]!;
    const q = Math.min(Math.floor(Math.abs(x) * scale + 0.5), 127);
    out[i] = x < 0 ? -q : q;
  }
  return out;
}

/** A stored vector or a prepared query: the (possibly quantized) values and their norm. */
export interface PreparedVector {
  f32: Float32Array | null;
  i8: Int8Array | null;
  norm: number;
}

export function prepare(v: Float32Array, dims: number, quantization: 'f32' | 'i8'): PreparedVector {
  if (quantization === 'f32') {
    const f32 = Float32Array.from(v.subarray(0, dims));
    return { f32, i8: null, norm: normF32(f32, dims) };
  }
  const i8 = quantizeI8(v, dims);
  return { f32: null, i8, norm: normI8(i8, dims) };
}

export function cosine(q: PreparedVector, d: PreparedVector, dims: number): number {
  if (q.f32 && d.f32) return dotF32(q.f32, d.f32, dims) / (q.norm * d.norm);
  return dotI8(q.i8!, d.i8!, dims) / Math.sqrt(q.norm * d.norm);
}
