// The memory's local embedder (docs/memory-embedder.md): SIF-weighted averages of product-quantized
// word vectors with a typo correction and hashed character n-gram vectors for unknown words. The computation is
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
// model (the codes are read where they lie; the word list and the codebooks are decoded at load).
// Immutable once loaded, so any number of threads may embed concurrently.
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
  // A product-quantized table: per subspace, its first dimension, its size, and 256 centroids of
  // that size at values[256 * first + code * size] (int8 times the subspace's scale, exact).
  struct Codebook {
    uint32_t subspaces = 0;
    std::vector<uint32_t> first, size;
    std::vector<double> values;
  };
  void LoadCodebook(const uint8_t*& at, uint32_t subspaces, Codebook* book);
  std::string LoadWords(const uint8_t* list, uint32_t bytes);
  int32_t Find(const char* s, size_t n) const;
  void AddWord(int32_t index, double* acc) const;
  void AddUnknown(std::string_view term, double* acc) const;
  int32_t Correct(std::string_view term) const;
  void AddGrams(std::string_view term, double* acc) const;

  uint32_t format_ = 0, dims_ = 0, words_ = 0, buckets_ = 0, min_gram_ = 0, max_gram_ = 0;
  double unknown_scale_ = 0;
  std::vector<float> pc_;
  std::vector<double> class_weights_;
  uint32_t first_rare_class_ = 0;  // words of a lower class use frequent_book_, the others rare_book_
  Codebook frequent_book_, rare_book_, bucket_book_;
  // In the data: per word its class; per word its codes (code_offsets_[i] bytes from data_), per
  // bucket its codes.
  const uint8_t* data_ = nullptr;
  const uint8_t* classes_ = nullptr;
  const uint8_t* bucket_codes_ = nullptr;
  std::vector<uint32_t> code_offsets_;
  // The decoded word list: word i is word_text_[offsets_[i], offsets_[i + 1] - 1) (a '\n' after each).
  std::string word_text_;
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
