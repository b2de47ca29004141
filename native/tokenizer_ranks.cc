// The rank table: tiktoken's rank text parsed into the hash table of tokenizer.h (first eight bytes
// inline in each slot, the rest of longer tokens in one arena) and a direct table of 2-byte tokens.
#include <atomic>
#include <cstdio>
#include <string>

#include "tokenizer.h"

namespace pinclaw {
namespace tokenizer {
namespace {

// The value of each base64 character, 64 for '=' and 0xff for anything else: one load per character
// where a chain of comparisons cost a mispredicted branch on most (the load parses ~1.9 M of them).
struct Base64Table {
  uint8_t v[256];
  constexpr Base64Table() : v() {
    for (int i = 0; i < 256; ++i) v[i] = 0xff;
    for (int i = 0; i < 26; ++i) {
      v['A' + i] = static_cast<uint8_t>(i);
      v['a' + i] = static_cast<uint8_t>(26 + i);
    }
    for (int i = 0; i < 10; ++i) v['0' + i] = static_cast<uint8_t>(52 + i);
    v[static_cast<unsigned char>('+')] = 62;
    v[static_cast<unsigned char>('/')] = 63;
    v[static_cast<unsigned char>('=')] = 64;
  }
};
constexpr Base64Table kBase64{};

// Standard base64 with padding into `out` (room for size / 4 * 3 bytes); the decoded length, or -1
// when `in` is not that.
long DecodeBase64(const char* in, size_t size, uint8_t* out) {
  if (size == 0 || size % 4 != 0) return -1;
  uint8_t* o = out;
  for (size_t i = 0; i < size; i += 4) {
    const uint8_t a = kBase64.v[static_cast<unsigned char>(in[i])], b = kBase64.v[static_cast<unsigned char>(in[i + 1])];
    const uint8_t c = kBase64.v[static_cast<unsigned char>(in[i + 2])], d = kBase64.v[static_cast<unsigned char>(in[i + 3])];
    if ((a | b | c | d) < 64) {
      const uint32_t triple = (static_cast<uint32_t>(a) << 18) | (static_cast<uint32_t>(b) << 12) | (static_cast<uint32_t>(c) << 6) | d;
      *o++ = static_cast<uint8_t>(triple >> 16);
      *o++ = static_cast<uint8_t>(triple >> 8);
      *o++ = static_cast<uint8_t>(triple);
      continue;
    }
    // A quad with '=' is valid only as the last one: "QQ==" is one byte, "QUI=" two.
    if (i + 4 != size || a >= 64 || b >= 64 || d != 64 || c == 0xff) return -1;
    const uint32_t triple = (static_cast<uint32_t>(a) << 18) | (static_cast<uint32_t>(b) << 12) | (c == 64 ? 0 : static_cast<uint32_t>(c) << 6);
    *o++ = static_cast<uint8_t>(triple >> 16);
    if (c != 64) *o++ = static_cast<uint8_t>(triple >> 8);
  }
  return o - out;
}

}  // namespace

std::string Ranks::Insert(const uint8_t* bytes, size_t size, uint32_t rank, uint64_t head, uint64_t h) {
  const size_t mask = slots_.size() - 1;
  for (size_t i = static_cast<size_t>(h >> shift_);; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.meta == 0) {
      if (rest_.size() >= (1u << 24)) return "too much token data";
      slot.head = head;
      slot.rank = rank;
      slot.meta = (static_cast<uint32_t>(size) << 24) | static_cast<uint32_t>(rest_.size());
      if (size > 8) rest_.insert(rest_.end(), bytes + 8, bytes + size);
      if (size == 2) pair_[(static_cast<size_t>(bytes[0]) << 8) | bytes[1]] = rank;
      filter_[(h >> 22) & filter_mask_] |= FilterBits(h);
      ++count_;
      return "";
    }
    if ((slot.meta >> 24) == size && slot.head == head && (size <= 8 || std::memcmp(rest_.data() + (slot.meta & 0xffffffu), bytes + 8, size - 8) == 0)) {
      return "token of rank " + std::to_string(rank) + " repeats the token of rank " + std::to_string(slot.rank);
    }
  }
}

std::string Ranks::Load(const char* text, size_t size) {
  // Count the tokens first (space-separated fields after the two leading ones of each line), so
  // the table is sized once: the smallest power of two that is at most 80% full (o200k_base 76%,
  // 4 MiB; cl100k_base 77%, 2 MiB). Half full, as it was, took twice the memory and was slower: the
  // merges' lookups then spread over 8 MiB, and the longer probes of a fuller table cost less than
  // the misses of a larger one (docs/tokenizer.md, seventh round). Misses mostly stop at the filter.
  size_t fields = 0;
  for (size_t i = 0; i < size; ++i) fields += text[i] == ' ';
  size_t slots = 1024;
  unsigned bits = 10;
  while (slots * 4 < fields * 5) {
    slots <<= 1;
    ++bits;
  }
  slots_.assign(slots, Slot{0, 0, 0});
  shift_ = 64 - bits;
  rest_.clear();
  rest_.reserve(fields * 2);
  pair_.assign(1u << 16, kNoRank);
  // At least 8 bits per token, as before the table shrank (FilterBits: two of them per token).
  size_t filter_bits = 4096;
  while (filter_bits < fields * 8) filter_bits <<= 1;
  filter_.assign(filter_bits / 64, 0);
  filter_mask_ = filter_bits / 64 - 1;
  for (uint32_t& b : byte_) b = kNoRank;
  max_size_ = 0;
  count_ = 0;
  static std::atomic<uint32_t> serials{0};
  serial_ = ++serials;

  // The tokens are decoded a block at a time, and the slots of a whole block are asked of the memory
  // before the first is written: the table (4 MiB for o200k_base) is larger than the caches, so
  // each insert waits on a miss, and one after another they took most of the load (40 of ~60 ms).
  // The block's misses now overlap.
  constexpr size_t kBlock = 32;
  uint8_t buf[kBlock * 256];
  struct Pending {
    const uint8_t* bytes;
    uint32_t size;
    uint32_t rank;
    uint64_t head;
    uint64_t hash;
  } block[kBlock];
  size_t pending = 0;
  size_t used = 0;
  size_t line_no = 0;
  auto lineError = [&](const std::string& what) { return "line " + std::to_string(line_no) + ": " + what; };
  auto flush = [&]() -> std::string {
    for (size_t k = 0; k < pending; ++k) __builtin_prefetch(&slots_[static_cast<size_t>(block[k].hash >> shift_)], 1);
    for (size_t k = 0; k < pending; ++k) {
      const Pending& t = block[k];
      std::string err = Insert(t.bytes, t.size, t.rank, t.head, t.hash);
      if (!err.empty()) return lineError(err);
      if (t.size == 1) byte_[t.bytes[0]] = t.rank;
      if (t.size > max_size_) max_size_ = t.size;
    }
    pending = used = 0;
    return "";
  };
  for (size_t pos = 0; pos < size;) {
    size_t eol = pos;
    while (eol < size && text[eol] != '\n') ++eol;
    ++line_no;
    size_t field = 0;
    uint64_t rank = 0;
    for (size_t f = pos; f < eol;) {
      size_t end = f;
      while (end < eol && text[end] != ' ') ++end;
      if (field == 1) {
        if (end == f) return lineError("missing first rank");
        for (size_t k = f; k < end; ++k) {
          if (text[k] < '0' || text[k] > '9') return lineError("first rank is not a number");
          rank = rank * 10 + static_cast<uint64_t>(text[k] - '0');
          if (rank > kMaxRank) return lineError("rank out of range (at most " + std::to_string(kMaxRank) + ")");
        }
      } else if (field >= 2) {
        if (rank > kMaxRank) return lineError("rank out of range (at most " + std::to_string(kMaxRank) + ")");
        // 255 bytes at most (the slot keeps the size in 8 bits): 340 base64 characters.
        const size_t chars = end - f;
        if (chars > 340) return lineError("token of rank " + std::to_string(rank) + " has more than 255 bytes; 1 to 255 are supported");
        if (used + 255 > sizeof buf) {
          std::string err = flush();
          if (!err.empty()) return err;
        }
        const long n = DecodeBase64(text + f, chars, buf + used);
        if (n < 0) return lineError("token " + std::to_string(field - 1) + " is not base64");
        if (n == 0 || n > 255) return lineError("token of rank " + std::to_string(rank) + " has " + std::to_string(n) + " bytes; 1 to 255 are supported");
        const uint8_t* b = buf + used;
        const uint64_t head = Head(b, static_cast<size_t>(n));
        block[pending++] = Pending{b, static_cast<uint32_t>(n), static_cast<uint32_t>(rank), head, Hash(head, b, static_cast<size_t>(n))};
        used += static_cast<size_t>(n);
        if (pending == kBlock) {
          std::string err = flush();
          if (!err.empty()) return err;
        }
        ++rank;
      }
      ++field;
      f = end + 1;
    }
    // A block never spans lines: its errors name the line they are on.
    std::string err = flush();
    if (!err.empty()) return err;
    if (field == 1) return lineError("missing first rank");
    pos = eol + 1;
  }
  // Byte-level BPE needs every single byte as a token: the merge starts from them.
  for (int b = 0; b < 256; ++b) {
    if (byte_[b] == kNoRank) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", b);
      return std::string("no token for the single byte ") + hex;
    }
  }
  return "";
}

}  // namespace tokenizer
}  // namespace pinclaw
