// Character classes of the pre-tokenizer, looked up in the table that native/gen/unicode-classes.mjs
// generates at build time from Node's own \p{..} regexes (never copied by hand).
#pragma once
#include <cstddef>
#include <cstdint>

#include "pinclaw_unicode_classes.h"

namespace pinclaw {
namespace tokenizer {

using unicode::kLetter;
using unicode::kLowerish;
using unicode::kNewline;
using unicode::kNumber;
using unicode::kSpace;
using unicode::kUpperish;

struct Char {
  uint8_t cls;  // unicode::k* bits
  uint8_t size;  // bytes in UTF-8
};

inline uint8_t ClassOf(uint32_t cp) {
  return unicode::kStage2[(static_cast<uint32_t>(unicode::kStage1[cp >> unicode::kBlockShift]) << unicode::kBlockShift) |
                          (cp & ((1u << unicode::kBlockShift) - 1))];
}

// Decodes the code point at s[pos]; s must be valid UTF-8 (callers repair it first), so no bounds
// or continuation checks are needed.
inline uint32_t DecodeAt(const uint8_t* s, size_t pos, uint8_t* size) {
  const uint32_t b = s[pos];
  if (b < 0x80) {
    *size = 1;
    return b;
  }
  if (b < 0xe0) {
    *size = 2;
    return ((b & 0x1f) << 6) | (s[pos + 1] & 0x3f);
  }
  if (b < 0xf0) {
    *size = 3;
    return ((b & 0x0f) << 12) | ((s[pos + 1] & 0x3fu) << 6) | (s[pos + 2] & 0x3f);
  }
  *size = 4;
  return ((b & 0x07) << 18) | ((s[pos + 1] & 0x3fu) << 12) | ((s[pos + 2] & 0x3fu) << 6) | (s[pos + 3] & 0x3f);
}

inline Char CharAt(const uint8_t* s, size_t pos) {
  // Block 0 of the table is the first one stored, so ASCII indexes kStage2 directly.
  if (s[pos] < 0x80) return Char{unicode::kStage2[s[pos]], 1};
  uint8_t size;
  const uint32_t cp = DecodeAt(s, pos, &size);
  return Char{ClassOf(cp), size};
}

}  // namespace tokenizer
}  // namespace pinclaw
