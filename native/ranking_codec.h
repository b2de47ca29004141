// Little-endian byte writer and bounds-checked reader for the serialized ranking index, and the
// CRC-32 (IEEE, as zlib computes it) that guards it. The format is in docs/ranking.md.
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
