// Internal interfaces of the byte-level BPE tokenizer (tokenizer_*.cc); tokenizer.cc exposes them
// to JavaScript. Nothing here knows about N-API, so the pieces stay testable and thread-agnostic.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace pinclaw {
namespace tokenizer {

constexpr uint32_t kNoRank = 0xffffffffu;

// Token bytes → rank, loaded from tiktoken's rank text. Immutable once loaded, so any number of
// threads may look up concurrently.
class Ranks {
 public:
  // Parses lines of "<label> <first rank> <base64 token> <base64 token> ...". Returns "" on
  // success, otherwise what is wrong with the data. Ranks are at most kMaxRank (tiktoken's are
  // below 200,000): the merge keeps a rank and a 7-bit index in one signed 32-bit lane.
  static constexpr uint32_t kMaxRank = (1u << 23) - 1;
  std::string Load(const char* text, size_t size);
  __attribute__((always_inline)) uint32_t Find(const uint8_t* bytes, size_t size) const { return Find(bytes, size, Hash(Head(bytes, size), bytes, size)); }
  // With the hash already computed (HashOf), which the piece cache reuses as its index.
  uint32_t Find(const uint8_t* bytes, size_t size, uint64_t hash) const;
  static uint64_t HashOf(const uint8_t* bytes, size_t size) { return Hash(Head(bytes, size), bytes, size); }
  uint32_t Byte(uint8_t b) const { return byte_[b]; }
  uint32_t Pair(uint8_t a, uint8_t b) const { return pair_[(static_cast<size_t>(a) << 8) | b]; }
  size_t MaxTokenSize() const { return max_size_; }
  size_t size() const { return count_; }
  // Distinct for every loaded table in this process (never 0), so a PieceCache can tell them apart.
  uint32_t serial() const { return serial_; }

 private:
  // Open addressing with linear probing, at most 80% full (Load says why not half). A slot holds a
  // token's first eight bytes, so most lookups touch one cache line and no arena.
  struct Slot {
    uint64_t head;  // first min(size, 8) bytes, zero-padded
    uint32_t rank;
    uint32_t meta;  // size << 24 | offset of the bytes after the eighth in rest_; 0 = empty
  };
  static uint64_t Head(const uint8_t* bytes, size_t size);
  // The filter's two bits for hash h, both in its word (h >> 22) & filter_mask_, from hash bits that
  // the word's index never uses.
  static uint64_t FilterBits(uint64_t h) { return (1ull << ((h >> 16) & 63)) | (1ull << (h >> 58)); }
  static uint64_t Hash(uint64_t head, const uint8_t* bytes, size_t size);
  // `head` and `hash` are Head and Hash of the bytes (Load computes them a block ahead).
  std::string Insert(const uint8_t* bytes, size_t size, uint32_t rank, uint64_t head, uint64_t hash);
  std::vector<uint8_t> rest_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> pair_;  // all two-byte tokens, indexed directly: the merges' first lookups
  // Most byte strings the merges ask about are not tokens, and this filter (small enough for L2)
  // answers them without touching the table: a blocked Bloom filter, two bits per token in one
  // 64-bit word, at least 8 bits per token (one load a check). Simulated for o200k_base, about 3.4%
  // of the strings that are not tokens get through to the table, against 9% with one bit per token.
  std::vector<uint64_t> filter_;
  uint64_t filter_mask_ = 0;
  unsigned shift_ = 64;
  size_t max_size_ = 0;
  size_t count_ = 0;
  uint32_t serial_ = 0;
  uint32_t byte_[256];
};

// The first min(size, 8) bytes as a little-endian integer, read with two overlapping fixed-size
// loads instead of a byte loop (the overlapping bytes are equal, so OR-ing them is exact).
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "Ranks::Head assumes little-endian loads");
inline uint64_t Ranks::Head(const uint8_t* p, size_t size) {
  if (size >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  if (size >= 4) {
    uint32_t lo, hi;
    std::memcpy(&lo, p, 4);
    std::memcpy(&hi, p + size - 4, 4);
    return static_cast<uint64_t>(lo) | (static_cast<uint64_t>(hi) << (8 * (size - 4)));
  }
  if (size >= 2) {
    uint16_t lo, hi;
    std::memcpy(&lo, p, 2);
    std::memcpy(&hi, p + size - 2, 2);
    return static_cast<uint64_t>(lo) | (static_cast<uint64_t>(hi) << (8 * (size - 2)));
  }
  return size ? p[0] : 0;
}

// Inline: the merge loops call Find for every candidate pair.
inline uint64_t Ranks::Hash(uint64_t head, const uint8_t* p, size_t size) {
  uint64_t h = (head ^ (0x9e3779b97f4a7c15ull * size)) * 0xbf58476d1ce4e5b9ull;
  for (size_t i = 8; i < size; i += 8) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, size - i < 8 ? size - i : 8);
    h = ((h ^ (h >> 31)) ^ w) * 0x94d049bb133111ebull;
  }
  h ^= h >> 29;
  return h * 0x9e3779b97f4a7c15ull;
}

__attribute__((always_inline)) inline uint32_t Ranks::Find(const uint8_t* bytes, size_t size, uint64_t h) const {
  if (size > max_size_ || size == 0) return kNoRank;
  const uint64_t bits = FilterBits(h);
  if ((filter_[(h >> 22) & filter_mask_] & bits) != bits) return kNoRank;
  const uint64_t head = Head(bytes, size);
  const uint32_t want = static_cast<uint32_t>(size) << 24;
  const size_t mask = slots_.size() - 1;
  for (size_t i = static_cast<size_t>(h >> shift_);; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.meta == 0) return kNoRank;
    if ((slot.meta & 0xff000000u) == want && slot.head == head &&
        (size <= 8 || std::memcmp(rest_.data() + (slot.meta & 0xffffffu), bytes + 8, size - 8) == 0)) {
      return slot.rank;
    }
  }
}

// The pre-tokenizer patterns of tiktoken's encodings (see native/tokenizer_split.cc).
enum class Pattern { kO200k, kCl100k };

// End of the regex match that starts at `pos` (< size) in valid UTF-8: every position starts a
// match, so the pieces tile the text.
size_t NextPieceO200k(const uint8_t* s, size_t size, size_t pos);
size_t NextPieceCl100k(const uint8_t* s, size_t size, size_t pos);

class PieceCache;

// Byte-pair encodes one piece; appends the token ids to `out` when given. Returns the token count.
// `cache` (optional) remembers merged pieces for this thread.
size_t EncodePiece(const Ranks& ranks, const uint8_t* piece, size_t size, std::vector<uint32_t>* out, PieceCache* cache = nullptr);

// Whole text: split, then encode each piece. `s` must be valid UTF-8.
size_t EncodeText(const Ranks& ranks, Pattern pattern, const uint8_t* s, size_t size, std::vector<uint32_t>* out, PieceCache* cache = nullptr);

// The same on up to `threads` (at most 4) threads, for texts of 64 KiB or more (tokenizer_parallel.cc):
// cut at SplitPoints into up to 4 segments per thread, each encoded whole by whichever thread is
// free (each with its own piece cache), ids concatenated in text order. Smaller texts, and texts
// without split points, go to EncodeText on the calling thread.
constexpr size_t kParallelMin = 64 * 1024;  // smaller texts stay on the calling thread (a thread's start costs tens of µs)
size_t EncodeTextParallel(const Ranks& ranks, Pattern pattern, const uint8_t* s, size_t size, std::vector<uint32_t>* out, PieceCache* cache, unsigned threads);
// A string's UTF-16 units (lone surrogates allowed): the same, each segment converted to UTF-8
// on the thread that encodes it. `utf8` is the calling thread's buffer for a text not cut.
size_t EncodeUtf16Parallel(const Ranks& ranks, Pattern pattern, const char16_t* s, size_t size, std::string* utf8, std::vector<uint32_t>* out, PieceCache* cache, unsigned threads);
// Up to parts - 1 increasing offsets in (0, size), near the even shares of the text, each a piece
// boundary under both encodings whatever precedes it (see tokenizer_parallel.cc for why); in bytes
// of UTF-8 or in UTF-16 units.
std::vector<size_t> SplitPoints(const uint8_t* s, size_t size, size_t parts);
std::vector<size_t> SplitPoints(const char16_t* s, size_t size, size_t parts);
// The threads a large text is encoded on: the cores, at most 4.
unsigned EncodeThreads();

// UTF-8 as a WHATWG TextDecoder reads it: each maximal invalid subsequence becomes U+FFFD.
bool IsValidUtf8(const uint8_t* s, size_t size);
void RepairUtf8(const uint8_t* s, size_t size, std::string* out);
// UTF-16 to UTF-8 as V8's WriteUtf8 does it: lone surrogates become U+FFFD.
void Utf16ToUtf8(const char16_t* s, size_t n, std::string* out);

}  // namespace tokenizer
}  // namespace pinclaw
