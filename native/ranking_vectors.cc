// Vector arithmetic for the ranking index. GCC vector extensions give SSE on x64 (AVX2 when the CPU
// has it, chosen at run time) and NEON on arm64 without intrinsics; binding.gyp compiles with
// -ffp-contract=off so a multiply and the following add are never fused, which keeps the results
// identical to the TypeScript reference.
#include "ranking_vectors.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace pinclaw {
namespace ranking {

namespace {
typedef float v4f __attribute__((vector_size(16)));
constexpr size_t kLanes = 16;

inline v4f Load(const float* p) {
  v4f v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

float DotF32x4(const float* a, const float* b, size_t paddedDims) {
  v4f s0 = {0, 0, 0, 0}, s1 = s0, s2 = s0, s3 = s0;
  for (size_t i = 0; i < paddedDims; i += kLanes) {
    s0 = s0 + Load(a + i) * Load(b + i);
    s1 = s1 + Load(a + i + 4) * Load(b + i + 4);
    s2 = s2 + Load(a + i + 8) * Load(b + i + 8);
    s3 = s3 + Load(a + i + 12) * Load(b + i + 12);
  }
  v4f s = (s0 + s1) + (s2 + s3);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

#if defined(__x86_64__)
typedef float v8f __attribute__((vector_size(32)));

// The same sixteen lanes in two 8-wide registers (lanes 0-7 and 8-15), folded in the same order:
// bit-identical to DotF32x4, twice the width. Only multiplies and adds, never FMA (no "fma" target).
__attribute__((target("avx2"))) float DotF32x8(const float* a, const float* b, size_t paddedDims) {
  v8f lo = {0, 0, 0, 0, 0, 0, 0, 0}, hi = lo;
  for (size_t i = 0; i < paddedDims; i += kLanes) {
    v8f a0, a1, b0, b1;
    std::memcpy(&a0, a + i, sizeof a0);
    std::memcpy(&a1, a + i + 8, sizeof a1);
    std::memcpy(&b0, b + i, sizeof b0);
    std::memcpy(&b1, b + i + 8, sizeof b1);
    lo = lo + a0 * b0;
    hi = hi + a1 * b1;
  }
  v4f s0 = {lo[0], lo[1], lo[2], lo[3]}, s1 = {lo[4], lo[5], lo[6], lo[7]};
  v4f s2 = {hi[0], hi[1], hi[2], hi[3]}, s3 = {hi[4], hi[5], hi[6], hi[7]};
  v4f s = (s0 + s1) + (s2 + s3);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

using DotFn = float (*)(const float*, const float*, size_t);
DotFn PickDot() {
  __builtin_cpu_init();  // may run before the constructor that would otherwise initialize it
  return __builtin_cpu_supports("avx2") ? DotF32x8 : DotF32x4;
}
#endif

}  // namespace

float DotF32(const float* a, const float* b, size_t paddedDims) {
#if defined(__x86_64__)
  static const DotFn dot = PickDot();
  return dot(a, b, paddedDims);
#else
  return DotF32x4(a, b, paddedDims);
#endif
}

// Integer sums are exact in any order, so any summation order gives the reference's result. GCC
// does not vectorize the plain loop at -O2 (a tenth of the speed), hence the intrinsics.
namespace {
#if defined(__x86_64__)
__attribute__((target("avx2"))) int32_t DotI8x16(const int8_t* a, const int8_t* b, size_t paddedDims) {
  __m256i acc = _mm256_setzero_si256();
  for (size_t i = 0; i < paddedDims; i += kLanes) {
    __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    acc = _mm256_add_epi32(acc, _mm256_madd_epi16(x, y));
  }
  __m128i s = _mm_add_epi32(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
  int32_t lanes[4];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes), s);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}
#endif
}  // namespace

int32_t DotI8(const int8_t* a, const int8_t* b, size_t paddedDims) {
#if defined(__x86_64__)
  static const bool avx2 = (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));
  if (avx2) return DotI8x16(a, b, paddedDims);
#endif
#if defined(__SSE2__)
  __m128i acc0 = _mm_setzero_si128(), acc1 = _mm_setzero_si128();
  for (size_t i = 0; i < paddedDims; i += kLanes) {
    __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
    __m128i y = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    // SSE2 has no sign extension: unpack each byte into both halves of a word, shift back down.
    __m128i xl = _mm_srai_epi16(_mm_unpacklo_epi8(x, x), 8), xh = _mm_srai_epi16(_mm_unpackhi_epi8(x, x), 8);
    __m128i yl = _mm_srai_epi16(_mm_unpacklo_epi8(y, y), 8), yh = _mm_srai_epi16(_mm_unpackhi_epi8(y, y), 8);
    acc0 = _mm_add_epi32(acc0, _mm_madd_epi16(xl, yl));
    acc1 = _mm_add_epi32(acc1, _mm_madd_epi16(xh, yh));
  }
  int32_t lanes[4];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lanes), _mm_add_epi32(acc0, acc1));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
#elif defined(__ARM_NEON)
  int32x4_t acc = vdupq_n_s32(0);
  for (size_t i = 0; i < paddedDims; i += kLanes) {
    int8x16_t x = vld1q_s8(a + i), y = vld1q_s8(b + i);
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x), vget_low_s8(y)));
    acc = vpadalq_s16(acc, vmull_s8(vget_high_s8(x), vget_high_s8(y)));
  }
  return vaddvq_s32(acc);
#else
  int32_t sum = 0;
  for (size_t i = 0; i < paddedDims; i++) sum += int32_t(a[i]) * int32_t(b[i]);
  return sum;
#endif
}

void QuantizeI8(const float* v, size_t dims, int8_t* out) {
  double maxAbs = 0;
  for (size_t i = 0; i < dims; i++) maxAbs = std::fmax(maxAbs, std::fabs(double(v[i])));
  double scale = 127.0 / maxAbs;
  for (size_t i = 0; i < dims; i++) {
    double x = double(v[i]);
    double q = std::floor(std::fabs(x) * scale + 0.5);
    if (q > 127) q = 127;
    out[i] = int8_t(x < 0 ? -q : q);
  }
}

void VectorStore::Reset(uint32_t dims, Quantization q) {
  dims_ = dims;
  stride_ = (size_t(dims) + kLanes - 1) / kLanes * kLanes;
  q_ = q;
  f32_.clear();
  i8_.clear();
  norm_.clear();
  owner_.clear();
  free_.clear();
  quantized_.clear();
}

void VectorStore::ComputeNorm(uint32_t slot) {
  double sum = 0;
  if (q_ == Quantization::F32) {
    const float* r = f32_.data() + slot * stride_;
    for (size_t i = 0; i < dims_; i++) sum += double(r[i]) * double(r[i]);
    norm_[slot] = std::sqrt(sum);
  } else {
    const int8_t* r = i8_.data() + slot * stride_;
    int64_t s = 0;
    for (size_t i = 0; i < dims_; i++) s += int64_t(r[i]) * r[i];
    norm_[slot] = double(s);
  }
}

uint32_t VectorStore::AllocateRaw(const void* raw, uint32_t doc) {
  uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
  } else {
    slot = uint32_t(owner_.size());
    owner_.push_back(kNoOwner);
    norm_.push_back(0);
    if (q_ == Quantization::F32) f32_.resize(f32_.size() + stride_, 0.0f);
    else i8_.resize(i8_.size() + stride_, 0);
  }
  if (q_ == Quantization::F32) std::memcpy(f32_.data() + slot * stride_, raw, dims_ * sizeof(float));
  else std::memcpy(i8_.data() + slot * stride_, raw, dims_);
  owner_[slot] = doc;
  ComputeNorm(slot);
  return slot;
}

void VectorStore::Reserve(size_t more) {
  if (more <= free_.size()) return;
  size_t slots = owner_.size() + more - free_.size();
  if (slots <= owner_.capacity()) return;
  slots = std::max(slots, owner_.capacity() * 2);  // small batches still grow geometrically
  owner_.reserve(slots);
  norm_.reserve(slots);
  if (q_ == Quantization::F32) f32_.reserve(slots * stride_);
  else i8_.reserve(slots * stride_);
}

uint32_t VectorStore::Allocate(const float* v, uint32_t doc) {
  if (q_ == Quantization::F32) return AllocateRaw(v, doc);
  quantized_.resize(dims_);
  QuantizeI8(v, dims_, quantized_.data());
  return AllocateRaw(quantized_.data(), doc);
}

void VectorStore::Free(uint32_t slot) {
  owner_[slot] = kNoOwner;
  free_.push_back(slot);
}

std::vector<uint32_t> VectorStore::Compact() {
  std::vector<uint32_t> moved(owner_.size(), kNoOwner);
  uint32_t to = 0;
  for (uint32_t from = 0; from < owner_.size(); from++) {
    if (owner_[from] == kNoOwner) continue;
    if (to != from) {
      owner_[to] = owner_[from];
      norm_[to] = norm_[from];
      if (q_ == Quantization::F32) std::memmove(&f32_[to * stride_], &f32_[from * stride_], stride_ * sizeof(float));
      else std::memmove(&i8_[to * stride_], &i8_[from * stride_], stride_);
    }
    moved[from] = to++;
  }
  owner_.resize(to);
  norm_.resize(to);
  free_.clear();
  if (q_ == Quantization::F32) f32_.resize(to * stride_);
  else i8_.resize(to * stride_);
  owner_.shrink_to_fit();
  norm_.shrink_to_fit();
  f32_.shrink_to_fit();
  i8_.shrink_to_fit();
  free_.shrink_to_fit();
  return moved;
}

void VectorStore::Prepare(const float* v, PreparedVector& out) const {
  if (q_ == Quantization::F32) {
    out.f32.assign(stride_, 0.0f);
    std::memcpy(out.f32.data(), v, dims_ * sizeof(float));
    double sum = 0;
    for (size_t i = 0; i < dims_; i++) sum += double(v[i]) * double(v[i]);
    out.norm = std::sqrt(sum);
  } else {
    out.i8.assign(stride_, 0);
    QuantizeI8(v, dims_, out.i8.data());
    int64_t s = 0;
    for (size_t i = 0; i < dims_; i++) s += int64_t(out.i8[i]) * out.i8[i];
    out.norm = double(s);
  }
}

double VectorStore::Cosine(const PreparedVector& q, uint32_t slot) const {
  if (q_ == Quantization::F32) {
    float dot = DotF32(q.f32.data(), f32_.data() + slot * stride_, stride_);
    return double(dot) / (q.norm * norm_[slot]);
  }
  int32_t dot = DotI8(q.i8.data(), i8_.data() + slot * stride_, stride_);
  return double(dot) / std::sqrt(q.norm * norm_[slot]);
}

double VectorStore::Cosine(uint32_t a, uint32_t b) const {
  if (q_ == Quantization::F32) {
    float dot = DotF32(f32_.data() + a * stride_, f32_.data() + b * stride_, stride_);
    return double(dot) / (norm_[a] * norm_[b]);
  }
  int32_t dot = DotI8(i8_.data() + a * stride_, i8_.data() + b * stride_, stride_);
  return double(dot) / std::sqrt(norm_[a] * norm_[b]);
}

const void* VectorStore::Raw(uint32_t slot) const {
  if (q_ == Quantization::F32) return f32_.data() + slot * stride_;
  return i8_.data() + slot * stride_;
}

size_t VectorStore::MemoryBytes() const {
  return f32_.capacity() * sizeof(float) + i8_.capacity() + norm_.capacity() * sizeof(double) +
         owner_.capacity() * sizeof(uint32_t) + free_.capacity() * sizeof(uint32_t);
}

}  // namespace ranking
}  // namespace pinclaw
