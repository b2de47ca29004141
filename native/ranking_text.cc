// UTF-8 decoding (WHATWG replacement semantics) and the character classes of docs/ranking.md.
#include "ranking_text.h"

#include <algorithm>
#include <iterator>

namespace pinclaw {
namespace ranking {

namespace {

struct Range {
  uint32_t lo, hi;
  CharClass cls;
};

constexpr CharClass S = CharClass::Separator;
constexpr CharClass C = CharClass::Cjk;

// Code points >= 0x80 that are not word characters. Sorted and disjoint; the same table, in the
// same order, is kClasses in src/native/ranking-text.ts (a test compares all 0x110000 code points).
constexpr Range kRanges[] = {
    {0x0080, 0x00BF, S}, {0x00D7, 0x00D7, S}, {0x00F7, 0x00F7, S}, {0x037E, 0x037E, S},
    {0x0387, 0x0387, S}, {0x055A, 0x055F, S}, {0x0589, 0x058A, S}, {0x05BE, 0x05BE, S},
    {0x05C0, 0x05C0, S}, {0x05C3, 0x05C3, S}, {0x05C6, 0x05C6, S}, {0x05F3, 0x05F4, S},
    {0x0600, 0x060F, S}, {0x061B, 0x061F, S}, {0x066A, 0x066D, S}, {0x06D4, 0x06D4, S},
    {0x0964, 0x0965, S}, {0x0970, 0x0970, S}, {0x0E5A, 0x0E5B, S}, {0x104A, 0x104F, S},
    {0x10FB, 0x10FB, S}, {0x1100, 0x11FF, C}, {0x1360, 0x1368, S}, {0x166D, 0x166E, S},
    {0x1680, 0x1680, S}, {0x169B, 0x169C, S}, {0x16EB, 0x16ED, S}, {0x17D4, 0x17DA, S},
    {0x1800, 0x180A, S}, {0x180E, 0x180E, S}, {0x2000, 0x206F, S}, {0x20A0, 0x20CF, S},
    {0x2190, 0x2BFF, S}, {0x2E00, 0x2E7F, S}, {0x2E80, 0x2FDF, C}, {0x2FF0, 0x3004, S},
    {0x3005, 0x3007, C}, {0x3008, 0x3020, S}, {0x3021, 0x302F, C}, {0x3030, 0x303F, S},
    {0x3040, 0x30FA, C}, {0x30FB, 0x30FB, S}, {0x30FC, 0x31BF, C}, {0x31C0, 0x31EF, S},
    {0x31F0, 0x31FF, C}, {0x3200, 0x33FF, S}, {0x3400, 0x4DBF, C}, {0x4DC0, 0x4DFF, S},
    {0x4E00, 0x9FFF, C}, {0xA960, 0xA97F, C}, {0xAC00, 0xD7FF, C}, {0xD800, 0xDFFF, S},
    {0xF900, 0xFAFF, C}, {0xFD3E, 0xFD3F, S}, {0xFE00, 0xFE1F, S}, {0xFE30, 0xFE6F, S},
    {0xFEFF, 0xFEFF, S}, {0xFF01, 0xFF0F, S}, {0xFF1A, 0xFF20, S}, {0xFF3B, 0xFF3E, S},
    {0xFF40, 0xFF40, S}, {0xFF5B, 0xFF65, S}, {0xFF66, 0xFFDC, C}, {0xFFE0, 0xFFEE, S},
    {0xFFF0, 0xFFFF, S}, {0x1B000, 0x1B16F, C}, {0x1F000, 0x1FAFF, S}, {0x20000, 0x3FFFF, C},
    {0xE0000, 0xE007F, S}, {0xE0100, 0xE01EF, S},
};

constexpr uint32_t kReplacement = 0xFFFD;

// Decodes one code point at text[i]. Invalid input yields U+FFFD and consumes the maximal subpart
// of an ill-formed sequence (never a byte that could start the next character), as TextDecoder does.
inline uint32_t Decode(const unsigned char* s, size_t n, size_t& i) {
  unsigned char b = s[i];
  if (b < 0x80) {
    i += 1;
    return b;
  }
  uint32_t cp;
  int need;
  unsigned char lower = 0x80, upper = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    need = 1;
    cp = b & 0x1F;
  } else if (b >= 0xE0 && b <= 0xEF) {
    need = 2;
    cp = b & 0x0F;
    if (b == 0xE0) lower = 0xA0;
    if (b == 0xED) upper = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    need = 3;
    cp = b & 0x07;
    if (b == 0xF0) lower = 0x90;
    if (b == 0xF4) upper = 0x8F;
  } else {
    i += 1;
    return kReplacement;
  }
  size_t j = i + 1;
  for (int k = 0; k < need; k++, j++) {
    if (j >= n || s[j] < lower || s[j] > upper) {
      i = j;
      return kReplacement;
    }
    cp = (cp << 6) | (s[j] & 0x3F);
    lower = 0x80;
    upper = 0xBF;
  }
  i = j;
  return cp;
}

}  // namespace

CharClass Classify(uint32_t cp) {
  if (cp < 0x80) {
    bool word = (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') || cp == '_';
    return word ? CharClass::Word : CharClass::Separator;
  }
  const Range* end = kRanges + std::size(kRanges);
  const Range* r = std::upper_bound(kRanges, end, cp, [](uint32_t v, const Range& x) { return v < x.lo; });
  if (r == kRanges) return CharClass::Word;
  --r;
  return cp <= r->hi ? r->cls : CharClass::Word;
}

void SplitTerms(std::string_view text, std::vector<std::string_view>& out) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  enum { kNone, kWord, kCjk } run = kNone;
  size_t wordStart = 0, wordEnd = 0, prevStart = 0;
  uint32_t wordLen = 0;
  auto flushWord = [&]() {
    if (run == kWord) out.emplace_back(text.data() + wordStart, wordEnd - wordStart);
  };
  size_t i = 0;
  while (i < n) {
    size_t start = i;
    uint32_t cp = Decode(s, n, i);
    CharClass cls = cp == kReplacement ? CharClass::Separator : Classify(cp);
    if (cls == CharClass::Word) {
      if (run != kWord) {
        run = kWord;
        wordStart = start;
        wordLen = 0;
      }
      if (++wordLen <= kMaxTermCodePoints) wordEnd = i;
    } else if (cls == CharClass::Cjk) {
      flushWord();
      // Unigrams and bigrams, in the order c1, c1c2, c2, c2c3, c3, ...
      if (run == kCjk) out.emplace_back(text.data() + prevStart, i - prevStart);
      out.emplace_back(text.data() + start, i - start);
      run = kCjk;
      prevStart = start;
    } else {
      flushWord();
      run = kNone;
    }
  }
  flushWord();
}

}  // namespace ranking
}  // namespace pinclaw
