// The memory's local embedder (docs/memory-embedder.md): SIF-weighted averages of int8 word vectors
// with a typo correction and hashed character n-gram vectors for unknown words. The computation is
// specified by src/memory/embedders/local-reference.ts and must stay equal to it (same double
// operations in the same order); embed.cc exposes it to JavaScript. Nothing here knows N-API.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pinclaw {
namespace embed {

// Borrows the bytes of the data file built by scripts/embedder-assets.mjs: they must outlive the
// model. Immutable once loaded, so any number of threads may embed concurrently.
class Model {
 public:
  // Checks the header and builds the word table. Returns "" on success, otherwise what is wrong.
  std::string Load(const uint8_t* data, size_t size);
  // Embeds text already prepared by prepareText (local-reference.ts): writes dims() floats.
  void Embed(std::string_view prepared, float* out) const;

  uint32_t dims() const { return dims_; }
  uint32_t words() const { return words_; }
  uint32_t buckets() const { return buckets_; }
  uint32_t min_gram() const { return min_gram_; }
  uint32_t max_gram() const { return max_gram_; }
  uint32_t format() const { return format_; }

 private:
  static constexpr int32_t kNone = -1;
  int32_t Find(const char* s, size_t n) const;
  void AddWord(int32_t index, double* acc) const;
  void AddUnknown(std::string_view term, double* acc) const;
  int32_t Correct(std::string_view term) const;
  void AddGrams(std::string_view term, double* acc) const;

  const uint8_t* data_ = nullptr;
  const uint8_t* vectors_ = nullptr;
  const uint8_t* bucket_vectors_ = nullptr;
  const char* word_text_ = nullptr;
  uint32_t format_ = 0, dims_ = 0, words_ = 0, buckets_ = 0, min_gram_ = 0, max_gram_ = 0;
  double unknown_scale_ = 0;
  std::vector<float> pc_;
  // Word i is word_text_[offsets_[i], offsets_[i + 1] - 1) (the '\n' separator excluded).
  std::vector<uint32_t> offsets_;
  // Open addressing with linear probing, at most half full: word index + 1, 0 = empty.
  std::vector<uint32_t> slots_;
  std::vector<uint64_t> filter_;  // one bit per hash value of every word
  uint64_t filter_mask_ = 0;
  unsigned shift_ = 64;
  size_t min_len_ = 0, max_len_ = 0;
};

}  // namespace embed
}  // namespace pinclaw
