// Vector storage and cosine similarity for the ranking index. The arithmetic is specified to the
// last bit (docs/ranking.md, "Vectors") so that src/native/ranking-vectors.ts reproduces it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pinclaw {
namespace ranking {

enum class Quantization : uint8_t { F32 = 0, I8 = 1 };

constexpr uint32_t kNoOwner = 0xFFFFFFFFu;

// Sixteen float32 lanes, elements i with i % 16 == j summed into lane j, lanes folded pairwise.
float DotF32(const float* a, const float* b, size_t paddedDims);
int32_t DotI8(const int8_t* a, const int8_t* b, size_t paddedDims);
// Round half away from zero of x * 127 / max|x|: symmetric, so -v quantizes to -(quantized v).
void QuantizeI8(const float* v, size_t dims, int8_t* out);

// A query prepared once for many comparisons.
struct PreparedVector {
  std::vector<float> f32;
  std::vector<int8_t> i8;
  double norm = 0;  // f32: sqrt of the sum of squares in double; i8: the integer sum of squares
};

class VectorStore {
 public:
  VectorStore(uint32_t dims, Quantization q) { Reset(dims, q); }
  void Reset(uint32_t dims, Quantization q);

  uint32_t dims() const { return dims_; }
  size_t stride() const { return stride_; }
  Quantization quantization() const { return q_; }
  size_t slots() const { return owner_.size(); }
  uint32_t owner(uint32_t slot) const { return owner_[slot]; }
  void set_owner(uint32_t slot, uint32_t doc) { owner_[slot] = doc; }

  // Room for `more` vectors, so that a large batch grows the rows once, to the size it needs,
  // instead of doubling (a doubling copies the rows and may leave half the capacity unused).
  void Reserve(size_t more);
  // Copies (or quantizes) v; reuses a free slot when there is one.
  uint32_t Allocate(const float* v, uint32_t doc);
  void Free(uint32_t slot);
  size_t free_slots() const { return free_.size(); }
  // Moves the vectors down over the free slots and gives the memory back; returns each old
  // slot's new slot (kNoOwner for a free one). Slots are HNSW keys: only without a graph.
  std::vector<uint32_t> Compact();
  void Prepare(const float* v, PreparedVector& out) const;
  double Cosine(const PreparedVector& q, uint32_t slot) const;
  double Cosine(uint32_t a, uint32_t b) const;
  // The stored form, for serialization: dims floats or dims int8 values.
  const void* Raw(uint32_t slot) const;
  size_t RawBytes() const { return q_ == Quantization::F32 ? dims_ * sizeof(float) : dims_; }
  // Stores an already quantized or raw row as read back from a serialized index.
  uint32_t AllocateRaw(const void* raw, uint32_t doc);
  size_t MemoryBytes() const;

 private:
  void ComputeNorm(uint32_t slot);

  uint32_t dims_ = 0;
  size_t stride_ = 0;
  Quantization q_ = Quantization::F32;
  std::vector<float> f32_;
  std::vector<int8_t> i8_;
  std::vector<double> norm_;
  std::vector<uint32_t> owner_;
  std::vector<uint32_t> free_;
  std::vector<int8_t> quantized_;  // scratch for Allocate
};

}  // namespace ranking
}  // namespace pinclaw
