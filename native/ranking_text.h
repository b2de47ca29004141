// Term splitting for the ranking index. The rules (docs/ranking.md) are mirrored exactly by
// src/native/ranking-text.ts; Unicode normalization and case folding happen in TypeScript before
// text reaches the addon, so this side only decodes UTF-8 and splits.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace pinclaw {
namespace ranking {

enum class CharClass : uint8_t { Separator, Word, Cjk };

// Longer runs of word characters are cut to their first kMaxTermCodePoints code points.
constexpr uint32_t kMaxTermCodePoints = 64;

CharClass Classify(uint32_t cp);

// Appends the terms of `text` to `out`, in order of occurrence. Every term is a slice of `text`:
// invalid UTF-8 decodes to U+FFFD, a separator, so a term never contains an invalid byte.
void SplitTerms(std::string_view text, std::vector<std::string_view>& out);

}  // namespace ranking
}  // namespace pinclaw
