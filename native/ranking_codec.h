// Little-endian byte writer and bounds-checked reader for the serialized ranking index, the
// CRC-32 (IEEE, as zlib computes it) that guards it, and the posting encoding that the index uses
// both in memory and in the serialized form. The format is in docs/ranking.md.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "ranking_error.h"

namespace pinclaw {
namespace ranking {

uint32_t Crc32(const uint8_t* data, size_t len);

// LEB128: seven bits a byte, low bits first, the high bit set on every byte but the last.
inline size_t PutVarint(uint8_t* out, uint64_t v) {
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = uint8_t(v) | 0x80;
    v >>= 7;
  }
  out[n++] = uint8_t(v);
  return n;
}

// Unchecked: only for bytes the index wrote itself or validated on load.
inline uint64_t GetVarint(const uint8_t*& p) {
  uint64_t b = *p++;
  if (b < 0x80) return b;
  uint64_t v = b & 0x7F;
  for (unsigned shift = 7;; shift += 7) {
    b = *p++;
    v |= (b & 0x7F) << shift;
    if (b < 0x80) return v;
  }
}

// One posting of a term's list, which is sorted by document number: varint((gap << 1) | (tf > 1)),
// then varint(tf) when tf > 1. gap is the distance from the previous document, the first one
// counted from -1, so it is at least 1 and no posting starts with a zero byte (zero pads the end
// of a block). Most postings (tf 1, gap < 64) take one byte.
constexpr size_t kMaxPostingBytes = 10;

inline size_t PutPosting(uint8_t* out, int64_t prev, uint32_t doc, uint32_t tf) {
  uint64_t gap = uint64_t(int64_t(doc) - prev);
  size_t n = PutVarint(out, (gap << 1) | (tf > 1 ? 1 : 0));
  if (tf > 1) n += PutVarint(out + n, tf);
  return n;
}

// Calls f(doc, tf) for each posting in [p, end); `prev` is the document before the first (-1 at the
// start of a list) and the last one is returned, to carry on over the blocks of a chain (by value,
// so that it stays in a register in the hot loop). With kPadded, a zero byte ends the postings
// early: the unused end of a chain block.
template <bool kPadded = false, typename F>
inline int64_t DecodePostings(const uint8_t* p, const uint8_t* end, int64_t prev, F&& f) {
  while (p < end && (!kPadded || *p)) {
    uint64_t v = GetVarint(p);
    prev += int64_t(v >> 1);
    uint32_t tf = (v & 1) ? uint32_t(GetVarint(p)) : 1;
    f(uint32_t(prev), tf);
  }
  return prev;
}

class Writer {
 public:
  explicit Writer(std::vector<uint8_t>& out) : out_(out) {}
  void U8(uint8_t v) { out_.push_back(v); }
  void U32(uint32_t v) { Put(&v, 4); }
  void U64(uint64_t v) { Put(&v, 8); }
  void F64(double v) { Put(&v, 8); }
  void Bytes(const void* p, size_t n) { Put(p, n); }
  void Str(std::string_view s) {
    U32(uint32_t(s.size()));
    Put(s.data(), s.size());
  }
  size_t size() const { return out_.size(); }
  // Fills in a u32 written earlier as a placeholder (a count or length known only afterwards).
  void PatchU32(size_t at, uint32_t v) { std::memcpy(out_.data() + at, &v, 4); }

 private:
  // The targets this builds for (x64, arm64) are little-endian, as the format is.
  void Put(const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  std::vector<uint8_t>& out_;
};

class Reader {
 public:
  Reader(const uint8_t* data, size_t len) : p_(data), n_(len) {}
  size_t pos() const { return pos_; }
  size_t left() const { return n_ - pos_; }
  const uint8_t* here() const { return p_ + pos_; }
  // `what` names the field in the error, so a damaged buffer says where it broke.
  uint8_t U8(const char* what) {
    Need(1, what);
    return p_[pos_++];
  }
  uint32_t U32(const char* what) {
    uint32_t v;
    Get(&v, 4, what);
    return v;
  }
  uint64_t U64(const char* what) {
    uint64_t v;
    Get(&v, 8, what);
    return v;
  }
  double F64(const char* what) {
    double v;
    Get(&v, 8, what);
    return v;
  }
  std::string_view Str(const char* what) {
    uint32_t n = U32(what);
    Need(n, what);
    std::string_view s(reinterpret_cast<const char*>(p_ + pos_), n);
    pos_ += n;
    return s;
  }
  // A canonical varint of at most 64 bits: an encoding with a redundant high zero byte is corrupt,
  // so that every value has one encoding and load → serialize gives back the same bytes.
  uint64_t Varint(const char* what) {
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      uint8_t b = U8(what);
      if (shift == 63 && b > 1) Fail(what);
      v |= uint64_t(b & 0x7F) << shift;
      if (b < 0x80) {
        if (b == 0 && shift != 0) Fail(what);
        return v;
      }
    }
  }
  const uint8_t* Skip(size_t n, const char* what) {
    Need(n, what);
    const uint8_t* at = p_ + pos_;
    pos_ += n;
    return at;
  }
  // A count of items that each take at least `minBytes`, checked against what is left, so a
  // damaged count cannot make the caller reserve gigabytes.
  uint32_t Count(size_t minBytes, const char* what) {
    uint32_t n = U32(what);
    if (minBytes && n > left() / minBytes) Fail(what);
    return n;
  }
  [[noreturn]] void Fail(const char* what) const {
    throw Error(std::string("cannot load: truncated or corrupt at byte ") + std::to_string(pos_) + " (" + what + ")");
  }

 private:
  void Need(size_t n, const char* what) const {
    if (n > n_ - pos_) Fail(what);
  }
  void Get(void* v, size_t n, const char* what) {
    Need(n, what);
    std::memcpy(v, p_ + pos_, n);
    pos_ += n;
  }
  const uint8_t* p_;
  size_t n_;
  size_t pos_ = 0;
};

bool ValidUtf8(std::string_view s);

}  // namespace ranking
}  // namespace pinclaw
