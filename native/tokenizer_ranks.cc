// The rank table: tiktoken's rank text parsed into the hash table of tokenizer.h (first eight bytes
// inline in each slot, the rest of longer tokens in one arena) and a direct table of 2-byte tokens.
#include <atomic>
#include <cstdio>
#include <string>

#include "tokenizer.h"

namespace pinclaw {
namespace tokenizer {
namespace {

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with padding; false when `in` is not that.
bool DecodeBase64(const char* in, size_t size, std::string* out) {
  out->clear();
  if (size == 0 || size % 4 != 0) return false;
  for (size_t i = 0; i < size; i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && i + 4 == size && k >= 2) {
        v[k] = 0;
        ++pad;
        continue;
      }
      if (pad) return false;  // data after padding
      v[k] = Base64Value(c);
      if (v[k] < 0) return false;
    }
    const uint32_t triple = (static_cast<uint32_t>(v[0]) << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out->push_back(static_cast<char>(triple >> 16));
    if (pad < 2) out->push_back(static_cast<char>((triple >> 8) & 0xff));
    if (pad < 1) out->push_back(static_cast<char>(triple & 0xff));
  }
  return true;
}

}  // namespace

std::string Ranks::Insert(const uint8_t* bytes, size_t size, uint32_t rank) {
  if (size == 0 || size > 255) return "token of rank " + std::to_string(rank) + " has " + std::to_string(size) + " bytes; 1 to 255 are supported";
  const uint64_t head = Head(bytes, size);
  const uint64_t h = Hash(head, bytes, size);
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
      const uint64_t bit = (h >> 16) & filter_mask_;
      filter_[bit >> 6] |= 1ull << (bit & 63);
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
  // the table is sized once: at most half full.
  size_t fields = 0;
  for (size_t i = 0; i < size; ++i) fields += text[i] == ' ';
  size_t slots = 1024;
  unsigned bits = 10;
  while (slots < fields * 2) {
    slots <<= 1;
    ++bits;
  }
  slots_.assign(slots, Slot{0, 0, 0});
  shift_ = 64 - bits;
  rest_.clear();
  rest_.reserve(fields * 2);
  pair_.assign(1u << 16, kNoRank);
  filter_.assign(slots * 4 / 64, 0);
  filter_mask_ = slots * 4 - 1;
  for (uint32_t& b : byte_) b = kNoRank;
  max_size_ = 0;
  count_ = 0;
  static std::atomic<uint32_t> serials{0};
  serial_ = ++serials;

  std::string token;
  size_t line_no = 0;
  for (size_t pos = 0; pos < size;) {
    size_t eol = pos;
    while (eol < size && text[eol] != '\n') ++eol;
    ++line_no;
    const std::string where = "line " + std::to_string(line_no);
    size_t field = 0;
    uint64_t rank = 0;
    for (size_t f = pos; f < eol;) {
      size_t end = f;
      while (end < eol && text[end] != ' ') ++end;
      if (field == 1) {
        if (end == f) return where + ": missing first rank";
        for (size_t k = f; k < end; ++k) {
          if (text[k] < '0' || text[k] > '9') return where + ": first rank is not a number";
          rank = rank * 10 + static_cast<uint64_t>(text[k] - '0');
          if (rank > kMaxRank) return where + ": rank out of range (at most " + std::to_string(kMaxRank) + ")";
        }
      } else if (field >= 2) {
        if (!DecodeBase64(text + f, end - f, &token)) return where + ": token " + std::to_string(field - 1) + " is not base64";
        if (rank > kMaxRank) return where + ": rank out of range (at most " + std::to_string(kMaxRank) + ")";
        const auto* b = reinterpret_cast<const uint8_t*>(token.data());
        std::string err = Insert(b, token.size(), static_cast<uint32_t>(rank));
        if (!err.empty()) return where + ": " + err;
        if (token.size() == 1) byte_[b[0]] = static_cast<uint32_t>(rank);
        if (token.size() > max_size_) max_size_ = token.size();
        ++rank;
      }
      ++field;
      f = end + 1;
    }
    if (field == 1) return where + ": missing first rank";
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
