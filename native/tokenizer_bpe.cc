// Byte-pair merging of one piece, with tiktoken's rule: repeatedly merge the adjacent pair of
// parts whose concatenation has the lowest rank, the leftmost one on a tie, until no pair is a
// token. Short pieces (nearly all) use tiktoken's own quadratic scan on stack arrays; long ones
// (whitespace runs, minified data) a binary heap, which gives the same merges in O(n log n).
#include <algorithm>
#include <vector>

#include "tokenizer.h"

namespace pinclaw {
namespace tokenizer {
namespace {

constexpr size_t kSmallPiece = 128;

size_t MergeSmall(const Ranks& ranks, const uint8_t* s, size_t n, std::vector<uint32_t>* out) {
  // Part i is s[start[i], start[i + 1]) with token token[i]; pair[i] is the rank of parts i and
  // i + 1 together. parts shrinks by one per merge.
  uint32_t start[kSmallPiece + 1];
  uint32_t token[kSmallPiece];
  uint32_t pair[kSmallPiece];
  size_t parts = n;
  for (size_t i = 0; i < n; ++i) {
    start[i] = static_cast<uint32_t>(i);
    token[i] = ranks.Byte(s[i]);
    pair[i] = i + 1 < n ? ranks.Pair(s[i], s[i + 1]) : kNoRank;
  }
  start[n] = static_cast<uint32_t>(n);
  for (;;) {
    uint32_t best = kNoRank;
    size_t at = 0;
    for (size_t i = 0; i + 1 < parts; ++i) {
      if (pair[i] < best) {
        best = pair[i];
        at = i;
      }
    }
    if (best == kNoRank) break;
    token[at] = best;
    // Drop the boundary at + 1.
    for (size_t i = at + 1; i + 1 < parts; ++i) {
      start[i] = start[i + 1];
      token[i] = token[i + 1];
      pair[i] = pair[i + 1];
    }
    --parts;
    start[parts] = static_cast<uint32_t>(n);
    pair[at] = at + 1 < parts ? ranks.Find(s + start[at], start[at + 2] - start[at]) : kNoRank;
    if (at > 0) pair[at - 1] = ranks.Find(s + start[at - 1], start[at + 1] - start[at - 1]);
  }
  if (out) out->insert(out->end(), token, token + parts);
  return parts;
}

struct Candidate {
  uint32_t rank;
  uint32_t start;
  uint32_t mid;
  uint32_t end;
};

// Heap order: lowest rank first, then leftmost, which is the order of tiktoken's scan.
struct Later {
  bool operator()(const Candidate& a, const Candidate& b) const { return a.rank != b.rank ? a.rank > b.rank : a.start > b.start; }
};

constexpr uint32_t kGone = 0xffffffffu;

struct LargeScratch {
  std::vector<uint32_t> next, prev, token;
  std::vector<Candidate> heap;
  void Release() {
    std::vector<uint32_t>().swap(next);
    std::vector<uint32_t>().swap(prev);
    std::vector<uint32_t>().swap(token);
    std::vector<Candidate>().swap(heap);
  }
};

// The heap holds every candidate ever computed; a popped one is stale when one of its parts has
// merged since (its boundaries no longer match), and the current pair was pushed when it formed.
size_t MergeLarge(const Ranks& ranks, const uint8_t* s, size_t n, std::vector<uint32_t>* out) {
  thread_local LargeScratch scratch;
  auto& next = scratch.next;  // next[b]: the boundary after b, kGone when b is merged away
  auto& prev = scratch.prev;
  auto& token = scratch.token;
  auto& heap = scratch.heap;
  next.resize(n + 1);
  prev.resize(n + 1);
  token.resize(n);
  heap.clear();
  for (size_t i = 0; i < n; ++i) {
    next[i] = static_cast<uint32_t>(i + 1);
    prev[i + 1] = static_cast<uint32_t>(i);
    token[i] = ranks.Byte(s[i]);
    if (i + 1 < n) {
      const uint32_t r = ranks.Pair(s[i], s[i + 1]);
      if (r != kNoRank) heap.push_back(Candidate{r, static_cast<uint32_t>(i), static_cast<uint32_t>(i + 1), static_cast<uint32_t>(i + 2)});
    }
  }
  next[n] = kGone;
  prev[0] = kGone;
  std::make_heap(heap.begin(), heap.end(), Later());
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), Later());
    const Candidate c = heap.back();
    heap.pop_back();
    if (next[c.start] != c.mid || next[c.mid] != c.end) continue;
    token[c.start] = c.rank;
    next[c.start] = c.end;
    next[c.mid] = kGone;
    if (c.end < n) prev[c.end] = c.start;
    if (c.start > 0) {
      const uint32_t left = prev[c.start];
      const uint32_t r = ranks.Find(s + left, c.end - left);
      if (r != kNoRank) {
        heap.push_back(Candidate{r, left, c.start, c.end});
        std::push_heap(heap.begin(), heap.end(), Later());
      }
    }
    if (c.end < n) {
      const uint32_t right = next[c.end];
      const uint32_t r = ranks.Find(s + c.start, right - c.start);
      if (r != kNoRank) {
        heap.push_back(Candidate{r, c.start, c.end, right});
        std::push_heap(heap.begin(), heap.end(), Later());
      }
    }
  }
  size_t count = 0;
  for (uint32_t b = 0; b < n; b = next[b]) {
    ++count;
    if (out) out->push_back(token[b]);
  }
  // Keep the scratch for the next long piece, unless it was exceptionally long.
  if (n > (1u << 20)) scratch.Release();
  return count;
}

}  // namespace

size_t EncodePiece(const Ranks& ranks, const uint8_t* piece, size_t size, std::vector<uint32_t>* out) {
  if (size == 1) {
    if (out) out->push_back(ranks.Byte(piece[0]));
    return 1;
  }
  // Most pieces of ordinary text are whole tokens.
  const uint32_t whole = ranks.Find(piece, size);
  if (whole != kNoRank) {
    if (out) out->push_back(whole);
    return 1;
  }
  return size <= kSmallPiece ? MergeSmall(ranks, piece, size, out) : MergeLarge(ranks, piece, size, out);
}

size_t EncodeText(const Ranks& ranks, Pattern pattern, const uint8_t* s, size_t size, std::vector<uint32_t>* out) {
  size_t count = 0;
  size_t pos = 0;
  if (pattern == Pattern::kO200k) {
    while (pos < size) {
      const size_t end = NextPieceO200k(s, size, pos);
      count += EncodePiece(ranks, s + pos, end - pos, out);
      pos = end;
    }
  } else {
    while (pos < size) {
      const size_t end = NextPieceCl100k(s, size, pos);
      count += EncodePiece(ranks, s + pos, end - pos, out);
      pos = end;
    }
  }
  return count;
}

}  // namespace tokenizer
}  // namespace pinclaw
