// Pre-tokenizers: hand-written scanners with exactly the matches tiktoken's regexes give under
// fancy-regex's backtracking, leftmost-first semantics. The patterns (tiktoken 1.0.22):
//
// o200k_base
//   1 [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//   2 [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?
//   3 \p{N}{1,3}
//   4  ?[^\s\p{L}\p{N}]+[\r\n/]*
//   5 \s*[\r\n]+
//   6 \s+(?!\S)
//   7 \s+
// cl100k_base
//   1 (?i:'s|'t|'re|'ve|'m|'ll|'d)
//   2 [^\r\n\p{L}\p{N}]?\p{L}+
//   3-7 as above, with [\r\n]* in 4
//
// "Upperish" below is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], "lowerish" [\p{Ll}\p{Lm}\p{Lo}\p{M}]; they
// overlap (Lm, Lo, M), which is why alternative 1 needs the backtracking worked out in UpperLower.
// Every character is matched by some alternative, so the pieces tile the text.
#include "tokenizer.h"
#include "tokenizer_unicode.h"

namespace pinclaw {
namespace tokenizer {
namespace {

constexpr size_t kNoMatch = static_cast<size_t>(-1);

// [^\r\n\p{L}\p{N}]: the optional character in front of a word.
inline bool CanPrefix(uint8_t cls) { return !(cls & (kLetter | kNumber | kNewline)); }
// [^\s\p{L}\p{N}]
inline bool IsOther(uint8_t cls) { return !(cls & (kSpace | kLetter | kNumber)); }

inline size_t RunOf(const uint8_t* s, size_t size, size_t pos, uint8_t bits) {
  while (pos < size) {
    const Char c = CharAt(s, pos);
    if (!(c.cls & bits)) break;
    pos += c.size;
  }
  return pos;
}

// One code point at pos that case-insensitively equals ASCII letter `letter` (simple case folding,
// from the generated table). Returns its size, or 0.
inline size_t FoldedLetterAt(const uint8_t* s, size_t size, size_t pos, char letter) {
  if (pos >= size) return 0;
  uint8_t n;
  const uint32_t cp = DecodeAt(s, pos, &n);
  for (uint32_t f : unicode::kFolds[letter - 'a']) {
    if (f != 0 && f == cp) return n;
  }
  return 0;
}

// (?i:'s|'t|'re|'ve|'m|'ll|'d) at pos: the end of the match, or pos when there is none.
size_t Contraction(const uint8_t* s, size_t size, size_t pos) {
  if (pos >= size || s[pos] != '\'') return pos;
  static const char* const kSuffixes[] = {"s", "t", "re", "ve", "m", "ll", "d"};
  for (const char* suffix : kSuffixes) {
    size_t at = pos + 1;
    bool ok = true;
    for (const char* c = suffix; *c; ++c) {
      const size_t n = FoldedLetterAt(s, size, at, *c);
      if (!n) {
        ok = false;
        break;
      }
      at += n;
    }
    if (ok) return at;
  }
  return pos;
}

// [upperish]*[lowerish]+ from pos. The star is greedy: it takes the whole upperish run, and when
// the character after the run is not lowerish, it gives characters back until a lowerish one can
// start the plus. A character given back is upperish; if it is lowerish too (Lm, Lo, M) the plus
// matches it and cannot go further (what follows it in the run is upperish only). So the match
// ends after the last lowerish character of the run.
size_t UpperLower(const uint8_t* s, size_t size, size_t pos) {
  size_t end_of_last_lower = kNoMatch;
  while (pos < size) {
    const Char c = CharAt(s, pos);
    if (!(c.cls & kUpperish)) {
      if (c.cls & kLowerish) return RunOf(s, size, pos + c.size, kLowerish);
      break;
    }
    pos += c.size;
    if (c.cls & kLowerish) end_of_last_lower = pos;
  }
  return end_of_last_lower;
}

// Alternatives 1 and 2 of o200k_base; each tries the optional prefix first, then without it.
size_t O200kWord(const uint8_t* s, size_t size, size_t pos, Char first) {
  const bool prefix = CanPrefix(first.cls);
  for (int with_prefix = prefix ? 1 : 0; with_prefix >= 0; --with_prefix) {
    const size_t e = UpperLower(s, size, with_prefix ? pos + first.size : pos);
    if (e != kNoMatch) return Contraction(s, size, e);
  }
  for (int with_prefix = prefix ? 1 : 0; with_prefix >= 0; --with_prefix) {
    const size_t start = with_prefix ? pos + first.size : pos;
    if (start >= size) continue;
    const Char c = CharAt(s, start);
    if (!(c.cls & kUpperish)) continue;
    const size_t upper_end = RunOf(s, size, start + c.size, kUpperish);
    return Contraction(s, size, RunOf(s, size, upper_end, kLowerish));
  }
  return kNoMatch;
}

// \p{N}{1,3}
size_t Digits(const uint8_t* s, size_t size, size_t pos) {
  for (int i = 0; i < 3 && pos < size; ++i) {
    const Char c = CharAt(s, pos);
    if (!(c.cls & kNumber)) break;
    pos += c.size;
  }
  return pos;
}

//  ?[^\s\p{L}\p{N}]+ followed by [\r\n]* (cl100k) or [\r\n/]* (o200k). Without the space the
// optional branch cannot help: a space is \s.
size_t Punctuation(const uint8_t* s, size_t size, size_t pos, bool slash) {
  const size_t start = s[pos] == ' ' ? pos + 1 : pos;
  if (start >= size) return kNoMatch;
  const Char c = CharAt(s, start);
  if (!IsOther(c.cls)) return kNoMatch;
  size_t end = start + c.size;
  while (end < size) {
    const Char d = CharAt(s, end);
    if (!IsOther(d.cls)) break;
    end += d.size;
  }
  while (end < size && (s[end] == '\r' || s[end] == '\n' || (slash && s[end] == '/'))) ++end;
  return end;
}

// Alternatives 5-7 on a whitespace run.
//   \s*[\r\n]+  backtracks the star to the last newline of the run and ends after it;
//   \s+(?!\S)   takes the run when the text ends there, otherwise gives back its last character
//               (which is whitespace, so the lookahead holds) if at least one remains;
//   \s+         the whole run.
size_t Whitespace(const uint8_t* s, size_t size, size_t pos) {
  size_t end = pos, last_start = pos, after_newline = kNoMatch;
  while (end < size) {
    const Char c = CharAt(s, end);
    if (!(c.cls & kSpace)) break;
    last_start = end;
    end += c.size;
    if (c.cls & kNewline) after_newline = end;
  }
  if (after_newline != kNoMatch) return after_newline;
  if (end == pos) return pos + CharAt(s, pos).size;  // unreachable: every other class matched earlier
  if (end == size) return end;
  if (last_start > pos) return last_start;
  return end;
}

}  // namespace

size_t NextPieceO200k(const uint8_t* s, size_t size, size_t pos) {
  const Char first = CharAt(s, pos);
  if (CanPrefix(first.cls) || (first.cls & kLetter)) {
    const size_t e = O200kWord(s, size, pos, first);
    if (e != kNoMatch) return e;
  }
  if (first.cls & kNumber) return Digits(s, size, pos);
  const size_t e = Punctuation(s, size, pos, true);
  if (e != kNoMatch) return e;
  return Whitespace(s, size, pos);
}

size_t NextPieceCl100k(const uint8_t* s, size_t size, size_t pos) {
  if (s[pos] == '\'') {
    const size_t e = Contraction(s, size, pos);
    if (e != pos) return e;
  }
  const Char first = CharAt(s, pos);
  if (first.cls & kLetter) return RunOf(s, size, pos + first.size, kLetter);
  if (CanPrefix(first.cls) && pos + first.size < size) {
    const Char next = CharAt(s, pos + first.size);
    if (next.cls & kLetter) return RunOf(s, size, pos + first.size + next.size, kLetter);
  }
  if (first.cls & kNumber) return Digits(s, size, pos);
  const size_t e = Punctuation(s, size, pos, false);
  if (e != kNoMatch) return e;
  return Whitespace(s, size, pos);
}

}  // namespace tokenizer
}  // namespace pinclaw
