// UTF-8 checking and repair for byte input. tiktoken only ever sees valid UTF-8 (a Rust &str), so
// invalid bytes are defined the way a WHATWG TextDecoder reads them: each maximal subpart of an
// ill-formed sequence becomes one U+FFFD. count(bytes) therefore equals count(new
// TextDecoder().decode(bytes)).
#include <cstring>

#include "tokenizer.h"

namespace pinclaw {
namespace tokenizer {
namespace {

// Length of the well-formed sequence at s[i], or 0 when it is ill-formed. `bad` gets the number of
// bytes that form the maximal subpart to replace (at least 1).
size_t SequenceAt(const uint8_t* s, size_t size, size_t i, size_t* bad) {
  const uint8_t b = s[i];
  size_t need;
  uint8_t lo = 0x80, hi = 0xbf;
  if (b < 0x80) return 1;
  if (b >= 0xc2 && b <= 0xdf) {
    need = 1;
  } else if (b >= 0xe0 && b <= 0xef) {
    need = 2;
    if (b == 0xe0) lo = 0xa0;
    if (b == 0xed) hi = 0x9f;  // no surrogates
  } else if (b >= 0xf0 && b <= 0xf4) {
    need = 3;
    if (b == 0xf0) lo = 0x90;
    if (b == 0xf4) hi = 0x8f;  // nothing above U+10FFFF
  } else {
    *bad = 1;
    return 0;
  }
  size_t k = 1;
  for (; k <= need; ++k) {
    if (i + k >= size) break;
    const uint8_t c = s[i + k];
    if (c < lo || c > hi) break;
    lo = 0x80;
    hi = 0xbf;
  }
  if (k > need) return need + 1;
  *bad = k;  // the lead byte and the continuation bytes that were still acceptable
  return 0;
}

}  // namespace

bool IsValidUtf8(const uint8_t* s, size_t size) {
  size_t i = 0;
  while (i < size) {
    // Eight ASCII bytes at a time: the common case for code and English.
    if (i + 8 <= size) {
      uint64_t w;
      std::memcpy(&w, s + i, 8);
      if (!(w & 0x8080808080808080ull)) {
        i += 8;
        continue;
      }
    }
    size_t bad = 0;
    const size_t n = SequenceAt(s, size, i, &bad);
    if (!n) return false;
    i += n;
  }
  return true;
}

void RepairUtf8(const uint8_t* s, size_t size, std::string* out) {
  static const char kReplacement[] = "\xef\xbf\xbd";
  out->clear();
  out->reserve(size + size / 2);
  size_t i = 0;
  while (i < size) {
    size_t bad = 0;
    const size_t n = SequenceAt(s, size, i, &bad);
    if (n) {
      out->append(reinterpret_cast<const char*>(s + i), n);
      i += n;
    } else {
      out->append(kReplacement, 3);
      i += bad;
    }
  }
}

// What V8's String::WriteUtf8 (napi_get_value_string_utf8) gives, so that both ways a string can
// reach the merge agree: pairs become 4-byte sequences, lone surrogates U+FFFD.
void Utf16ToUtf8(const char16_t* s, size_t n, std::string* out) {
  out->resize(n * 3);
  uint8_t* o = reinterpret_cast<uint8_t*>(&(*out)[0]);
  uint8_t* const begin = o;
  for (size_t i = 0; i < n; ++i) {
    // Four ASCII units at a time (one 64-bit test): prose and code are mostly ASCII.
    while (i + 4 <= n) {
      uint64_t four;
      std::memcpy(&four, s + i, sizeof four);
      if (four & 0xff80ff80ff80ff80ull) break;
      o[0] = static_cast<uint8_t>(s[i]);
      o[1] = static_cast<uint8_t>(s[i + 1]);
      o[2] = static_cast<uint8_t>(s[i + 2]);
      o[3] = static_cast<uint8_t>(s[i + 3]);
      o += 4;
      i += 4;
    }
    if (i == n) break;
    uint32_t c = s[i];
    if (c < 0x80) {
      *o++ = static_cast<uint8_t>(c);
      continue;
    }
    if (c < 0x800) {
      *o++ = static_cast<uint8_t>(0xc0 | (c >> 6));
      *o++ = static_cast<uint8_t>(0x80 | (c & 0x3f));
      continue;
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      if (c <= 0xdbff && i + 1 < n && s[i + 1] >= 0xdc00 && s[i + 1] <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (s[++i] - 0xdc00);
        *o++ = static_cast<uint8_t>(0xf0 | (c >> 18));
        *o++ = static_cast<uint8_t>(0x80 | ((c >> 12) & 0x3f));
        *o++ = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3f));
        *o++ = static_cast<uint8_t>(0x80 | (c & 0x3f));
        continue;
      }
      c = 0xfffd;
    }
    *o++ = static_cast<uint8_t>(0xe0 | (c >> 12));
    *o++ = static_cast<uint8_t>(0x80 | ((c >> 6) & 0x3f));
    *o++ = static_cast<uint8_t>(0x80 | (c & 0x3f));
  }
  out->resize(static_cast<size_t>(o - begin));
}

}  // namespace tokenizer
}  // namespace pinclaw
