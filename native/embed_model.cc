// The embedder's computation: the steps of src/memory/embedders/local-reference.ts, in the same
// order with the same double operations (a centroid value, an int8 times a float32, is exact in a
// double; the products and sums after it round identically, as nothing is fused: binding.gyp
// passes -ffp-contract=off), hence bit-identical results.
#include <cmath>
#include <cstring>

#include "embed.h"
#include "ranking_text.h"

namespace pinclaw {
namespace embed {
namespace {

constexpr char kMagic[8] = {'P', 'C', 'L', 'W', 'E', 'M', 'B', '1'};
constexpr uint32_t kFormat = 2;
constexpr size_t kHeaderFixed = 64;
constexpr size_t kMaxDims = 1024;
constexpr uint32_t kCentroids = 256;  // one code byte per subspace
constexpr uint32_t kClasses = 256;    // one frequency class byte per word
constexpr size_t kTypoMin = 5, kTypoMax = 24;

uint32_t ReadU32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
float ReadF32(const uint8_t* p) {
  float v;
  std::memcpy(&v, p, 4);
  return v;
}

// Eight bytes at a time: a typo lookup hashes some 300–600 candidate strings per unknown word.
inline uint64_t HashBytes(const char* s, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull * (n + 1);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, s + i, 8);
    h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
    h ^= h >> 31;
  }
  if (i < n) {
    uint64_t w = 0;
    std::memcpy(&w, s + i, n - i);
    h = (h ^ w) * 0x94d049bb133111ebull;
  }
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

// FNV-1a, 32 bits: the n-gram hash of scripts/embedder-assets.mjs.
inline uint32_t Fnv1a(uint32_t h, const uint8_t* s, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ s[i]) * 0x01000193u;
  return h;
}

bool IsLowerAscii(std::string_view s) {
  for (char c : s) {
    if (c < 'a' || c > 'z') return false;
  }
  return true;
}

}  // namespace

std::string Model::Load(const uint8_t* data, size_t size) {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the embedder data are little-endian");
  if (size < kHeaderFixed) return "too short for the header";
  if (std::memcmp(data, kMagic, 8) != 0) return "not a pinclaw embedder file";
  format_ = ReadU32(data + 8);
  if (format_ != kFormat) return "format " + std::to_string(format_) + ", this build reads format " + std::to_string(kFormat);
  dims_ = ReadU32(data + 12);
  words_ = ReadU32(data + 16);
  buckets_ = ReadU32(data + 20);
  min_gram_ = ReadU32(data + 24);
  max_gram_ = ReadU32(data + 28);
  const uint32_t frequent_subspaces = ReadU32(data + 32);
  const uint32_t rare_subspaces = ReadU32(data + 36);
  const uint32_t bucket_subspaces = ReadU32(data + 40);
  first_rare_class_ = ReadU32(data + 44);
  const uint32_t word_bytes = ReadU32(data + 48);
  const uint32_t centroids = ReadU32(data + 52);
  if (dims_ == 0 || dims_ > kMaxDims || words_ == 0 || buckets_ == 0 || min_gram_ == 0 || max_gram_ < min_gram_ || max_gram_ > 16 ||
      centroids != kCentroids || first_rare_class_ > kClasses) {
    return "bad counts in the header";
  }
  for (uint32_t m : {frequent_subspaces, rare_subspaces, bucket_subspaces}) {
    if (m == 0 || m > dims_) return "bad subspace counts in the header";
  }
  std::memcpy(&unknown_scale_, data + 56, 8);
  const size_t codebooks = 4 * (static_cast<size_t>(frequent_subspaces) + rare_subspaces + bucket_subspaces) + 3 * static_cast<size_t>(kCentroids) * dims_;
  const size_t header = kHeaderFixed + 4 * static_cast<size_t>(dims_) + 4 * kClasses + codebooks;
  // The codes' size depends on the classes, which follow the header.
  const size_t least = header + words_ + static_cast<size_t>(buckets_) * bucket_subspaces + word_bytes;
  if (size < least) return std::to_string(size) + " bytes, the header says at least " + std::to_string(least);
  data_ = data;
  classes_ = data + header;
  code_offsets_.resize(static_cast<size_t>(words_) + 1);
  size_t code = header + words_;
  for (uint32_t i = 0; i < words_; ++i) {
    code_offsets_[i] = static_cast<uint32_t>(code);
    code += classes_[i] < first_rare_class_ ? frequent_subspaces : rare_subspaces;
  }
  code_offsets_[words_] = static_cast<uint32_t>(code);
  const size_t expected = code + static_cast<size_t>(buckets_) * bucket_subspaces + word_bytes;
  if (size != expected) return std::to_string(size) + " bytes, the header says " + std::to_string(expected);
  const uint8_t* at = data + kHeaderFixed;
  pc_.resize(dims_);
  for (uint32_t k = 0; k < dims_; ++k, at += 4) pc_[k] = ReadF32(at);
  class_weights_.resize(kClasses);
  for (uint32_t c = 0; c < kClasses; ++c, at += 4) class_weights_[c] = ReadF32(at);
  LoadCodebook(at, frequent_subspaces, &frequent_book_);
  LoadCodebook(at, rare_subspaces, &rare_book_);
  LoadCodebook(at, bucket_subspaces, &bucket_book_);
  bucket_codes_ = data + code;
  return LoadWords(bucket_codes_ + static_cast<size_t>(buckets_) * bucket_subspaces, word_bytes);
}

// The subspaces as the build cuts them (subspaceSizes in scripts/embedder-assets.mjs): as even as
// possible, the larger ones first; the centroids as doubles, each an int8 times a float32. The
// caller checked the sizes.
void Model::LoadCodebook(const uint8_t*& at, uint32_t subspaces, Codebook* book) {
  book->subspaces = subspaces;
  book->first.resize(subspaces);
  book->size.resize(subspaces);
  book->values.resize(static_cast<size_t>(kCentroids) * dims_);
  const uint8_t* values = at + 4 * static_cast<size_t>(subspaces);
  uint32_t first = 0;
  for (uint32_t s = 0; s < subspaces; ++s) {
    const uint32_t n = dims_ / subspaces + (s < dims_ % subspaces ? 1 : 0);
    const double scale = ReadF32(at + 4 * s);
    book->first[s] = first;
    book->size[s] = n;
    const size_t from = static_cast<size_t>(kCentroids) * first;
    for (size_t j = 0; j < static_cast<size_t>(kCentroids) * n; ++j) {
      book->values[from + j] = static_cast<double>(static_cast<int8_t>(values[from + j])) * scale;
    }
    first += n;
  }
  at = values + static_cast<size_t>(kCentroids) * dims_;
}

// Decodes the front-coded list (a byte 0x80 + the prefix shared with the previous word, then the
// rest of the word, bytes below 0x80) and builds the lookup table.
std::string Model::LoadWords(const uint8_t* list, uint32_t bytes) {
  // First the decoded size (each marker's shared prefix, each other byte, a '\n' per word), so the
  // text is allocated once and written with memcpy: a load runs at every first embed after an idle
  // release (docs/performance.md, "Twelfth pass").
  size_t decoded = 0;
  for (uint32_t i = 0; i < bytes; ++i) decoded += list[i] >= 0x80 ? (list[i] - 0x80u) + 1 : 1;
  word_text_.assign(decoded, '\0');
  char* const text = word_text_.data();
  offsets_.assign(1, 0);
  offsets_.reserve(static_cast<size_t>(words_) + 1);
  size_t out = 0;
  size_t prev = 0;  // offset of the previous word in the text
  for (uint32_t i = 0; i < bytes;) {
    const uint8_t marker = list[i++];
    const size_t shared = marker - 0x80u;
    const size_t prev_len = offsets_.size() > 1 ? out - 1 - prev : 0;
    if (marker < 0x80 || shared > prev_len) return "bad word list at byte " + std::to_string(i - 1);
    const size_t start = out;
    std::memcpy(text + out, text + prev, shared);  // the previous word ends before `start`: no overlap
    out += shared;
    const uint32_t from = i;
    while (i < bytes && list[i] < 0x80) ++i;
    std::memcpy(text + out, list + from, i - from);
    out += i - from;
    if (out == start) return "empty word in the list";
    text[out++] = '\n';
    prev = start;
    offsets_.push_back(static_cast<uint32_t>(out));
  }
  if (offsets_.size() != static_cast<size_t>(words_) + 1) {
    return std::to_string(offsets_.size() - 1) + " words in the list, the header says " + std::to_string(words_);
  }
  size_t capacity = 1024;
  unsigned bits = 10;
  while (capacity < 2 * static_cast<size_t>(words_)) {
    capacity <<= 1;
    ++bits;
  }
  shift_ = 64 - bits;
  slots_.assign(capacity, 0);
  // Eight filter bits per slot (16 per word): most typo candidates are not words, and this filter,
  // small enough for L2, answers them without touching the table.
  filter_.assign(capacity / 8, 0);
  filter_mask_ = capacity * 8 - 1;
  min_len_ = SIZE_MAX;
  max_len_ = 0;
  const size_t mask = capacity - 1;
  // A word listed twice is inserted twice, without a lookup first: both copies hash alike, so the
  // first one sits earlier on the probe path and Find returns it, as the reference's Map keeps the
  // first. The words go in blocks: their hashes first, with their slots prefetched, so that the
  // table's cache misses overlap instead of coming one after another.
  constexpr uint32_t kBlock = 16;
  uint64_t hashes[kBlock];
  for (uint32_t base = 0; base < words_; base += kBlock) {
    const uint32_t end = base + kBlock < words_ ? base + kBlock : words_;
    for (uint32_t w = base; w < end; ++w) {
      const size_t n = offsets_[w + 1] - offsets_[w] - 1;
      min_len_ = n < min_len_ ? n : min_len_;
      max_len_ = n > max_len_ ? n : max_len_;
      const uint64_t h = HashBytes(text + offsets_[w], n);
      hashes[w - base] = h;
      __builtin_prefetch(&slots_[static_cast<size_t>((h * 0x9e3779b97f4a7c15ull) >> shift_)], 1);
    }
    for (uint32_t w = base; w < end; ++w) {
      const uint64_t h = hashes[w - base];
      const uint64_t bit = h & filter_mask_;
      filter_[bit >> 6] |= 1ull << (bit & 63);
      for (size_t i = static_cast<size_t>((h * 0x9e3779b97f4a7c15ull) >> shift_);; i = (i + 1) & mask) {
        if (slots_[i] == 0) {
          slots_[i] = w + 1;
          break;
        }
      }
    }
  }
  return "";
}

int32_t Model::Find(const char* s, size_t n) const {
  if (n < min_len_ || n > max_len_) return kNone;
  const uint64_t h = HashBytes(s, n);
  const uint64_t bit = h & filter_mask_;
  if (!(filter_[bit >> 6] & (1ull << (bit & 63)))) return kNone;
  const size_t mask = slots_.size() - 1;
  for (size_t i = static_cast<size_t>((h * 0x9e3779b97f4a7c15ull) >> shift_);; i = (i + 1) & mask) {
    const uint32_t slot = slots_[i];
    if (slot == 0) return kNone;
    const uint32_t w = slot - 1;
    if (offsets_[w + 1] - offsets_[w] - 1 == n && std::memcmp(word_text_.data() + offsets_[w], s, n) == 0) return static_cast<int32_t>(w);
  }
}

void Model::AddWord(int32_t index, double* acc) const {
  const double w = class_weights_[classes_[index]];
  const Codebook& b = classes_[index] < first_rare_class_ ? frequent_book_ : rare_book_;
  const uint8_t* codes = data_ + code_offsets_[index];
  for (uint32_t s = 0; s < b.subspaces; ++s) {
    const uint32_t o = b.first[s], n = b.size[s];
    const double* c = b.values.data() + static_cast<size_t>(kCentroids) * o + static_cast<size_t>(codes[s]) * n;
    for (uint32_t k = 0; k < n; ++k) acc[o + k] += c[k] * w;
  }
}

void Model::AddUnknown(std::string_view term, double* acc) const {
  const int32_t known = Find(term.data(), term.size());
  if (known != kNone) return AddWord(known, acc);
  if (term.size() >= kTypoMin && term.size() <= kTypoMax && IsLowerAscii(term)) {
    const int32_t fixed = Correct(term);
    if (fixed != kNone) return AddWord(fixed, acc);
  }
  if (term.size() == 1 && static_cast<uint8_t>(term[0]) < 0x80) return;
  AddGrams(term, acc);
}

// Every string one edit away; the most frequent word wins (the lowest class, then the lowest index),
// so the order of the candidates does not matter.
int32_t Model::Correct(std::string_view w) const {
  int32_t best = kNone;
  char buf[kTypoMax + 2];
  const size_t n = w.size();
  auto consider = [&](size_t len) {
    const int32_t i = Find(buf, len);
    if (i != kNone && (best == kNone || classes_[i] < classes_[best] || (classes_[i] == classes_[best] && i < best))) best = i;
  };
  for (size_t i = 0; i < n; ++i) {  // deletions
    std::memcpy(buf, w.data(), i);
    std::memcpy(buf + i, w.data() + i + 1, n - i - 1);
    consider(n - 1);
  }
  std::memcpy(buf, w.data(), n);
  for (size_t i = 0; i + 1 < n; ++i) {  // transpositions
    std::swap(buf[i], buf[i + 1]);
    consider(n);
    std::swap(buf[i], buf[i + 1]);
  }
  for (size_t i = 0; i < n; ++i) {  // substitutions
    const char orig = buf[i];
    for (char c = 'a'; c <= 'z'; ++c) {
      if (c == orig) continue;
      buf[i] = c;
      consider(n);
    }
    buf[i] = orig;
  }
  for (size_t i = 0; i <= n; ++i) {  // insertions
    std::memcpy(buf, w.data(), i);
    std::memcpy(buf + i + 1, w.data() + i, n - i);
    for (char c = 'a'; c <= 'z'; ++c) {
      buf[i] = c;
      consider(n + 1);
    }
  }
  return best;
}

void Model::AddGrams(std::string_view term, double* acc) const {
  // Code point boundaries of "<term>": the term is valid UTF-8 (SplitTerms never cuts inside a
  // character), so a boundary is any byte that is not a continuation byte.
  thread_local std::string framed;
  thread_local std::vector<uint32_t> starts;
  framed.assign(1, '<');
  framed.append(term.data(), term.size());
  framed.push_back('>');
  starts.clear();
  for (size_t i = 0; i < framed.size(); ++i) {
    if ((static_cast<uint8_t>(framed[i]) & 0xc0) != 0x80) starts.push_back(static_cast<uint32_t>(i));
  }
  const size_t cps = starts.size();
  starts.push_back(static_cast<uint32_t>(framed.size()));
  const auto* bytes = reinterpret_cast<const uint8_t*>(framed.data());
  double sum[kMaxDims] = {0};
  const Codebook& b = bucket_book_;
  for (size_t n = min_gram_; n <= max_gram_; ++n) {
    for (size_t i = 0; i + n <= cps; ++i) {
      const uint32_t h = Fnv1a(0x811c9dc5u, bytes + starts[i], starts[i + n] - starts[i]);
      const uint8_t* codes = bucket_codes_ + static_cast<size_t>(h % buckets_) * b.subspaces;
      for (uint32_t s = 0; s < b.subspaces; ++s) {
        const uint32_t o = b.first[s], m = b.size[s];
        const double* c = b.values.data() + static_cast<size_t>(kCentroids) * o + static_cast<size_t>(codes[s]) * m;
        for (uint32_t k = 0; k < m; ++k) sum[o + k] += c[k];
      }
    }
  }
  double sq = 0;
  for (uint32_t k = 0; k < dims_; ++k) sq += sum[k] * sum[k];
  if (!(sq > 0)) return;
  const double f = unknown_scale_ / std::sqrt(sq);
  for (uint32_t k = 0; k < dims_; ++k) acc[k] += f * sum[k];
}

void Model::Embed(std::string_view prepared, float* out) const {
  thread_local std::vector<std::string_view> terms;
  terms.clear();
  ranking::SplitTerms(prepared, terms);
  double acc[kMaxDims] = {0};
  for (std::string_view term : terms) {
    const int32_t hit = Find(term.data(), term.size());
    if (hit != kNone) {
      AddWord(hit, acc);
    } else if (term.find('_') != std::string_view::npos) {
      size_t from = 0;
      while (from <= term.size()) {
        size_t to = term.find('_', from);
        if (to == std::string_view::npos) to = term.size();
        if (to > from) AddUnknown(term.substr(from, to - from), acc);
        from = to + 1;
      }
    } else {
      AddUnknown(term, acc);
    }
  }
  double dot = 0;
  for (uint32_t k = 0; k < dims_; ++k) dot += acc[k] * static_cast<double>(pc_[k]);
  for (uint32_t k = 0; k < dims_; ++k) acc[k] = acc[k] - dot * static_cast<double>(pc_[k]);
  double sq = 0;
  for (uint32_t k = 0; k < dims_; ++k) sq += acc[k] * acc[k];
  if (!(sq > 0)) {
    for (uint32_t k = 0; k < dims_; ++k) out[k] = pc_[k];
  } else {
    const double norm = std::sqrt(sq);
    for (uint32_t k = 0; k < dims_; ++k) out[k] = static_cast<float>(acc[k] / norm);
  }
  if (terms.capacity() > 65536) std::vector<std::string_view>().swap(terms);
}

}  // namespace embed
}  // namespace pinclaw
