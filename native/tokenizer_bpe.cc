// Byte-pair merging of one piece, with tiktoken's rule: repeatedly merge the adjacent pair of
// parts whose concatenation has the lowest rank, the leftmost one on a tie, until no pair is a
// token. Short pieces (nearly all) use tiktoken's own quadratic scan on stack arrays; long ones
// (whitespace runs, minified data) a binary heap, which gives the same merges in O(n log n).
#include <algorithm>
#include <functional>
#include <cstring>
#include <vector>

#include "tokenizer.h"
#include "tokenizer_cache.h"

namespace pinclaw {
namespace tokenizer {
namespace {

constexpr size_t kSmallPiece = 128;

// Four ranks at a time through GCC/Clang vector extensions (SSE2 on x64, NEON on arm64): the
// quadratic scan's two inner loops, finding the lowest pair and closing the gap after a merge,
// were over half of its instructions. Pair entries (below) are int32, so the lane compare is the
// signed one SSE2 has.
constexpr size_t kLanes = 4;
constexpr int32_t kNoPair = INT32_MAX;
typedef int32_t Lanes __attribute__((vector_size(kLanes * sizeof(int32_t))));
template <typename T>
inline Lanes Load(const T* p) {
  static_assert(sizeof(T) == sizeof(int32_t), "lanes of 32 bits");
  Lanes v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T>
inline void Store(T* p, Lanes v) {
  std::memcpy(p, &v, sizeof v);
}
inline Lanes Min(Lanes a, Lanes b) { return a < b ? a : b; }

// A pair entry is the rank of the two parts merged, shifted up, with the pair's index in the low
// kIndexBits: the lowest entry is the lowest rank and, on a tie, the leftmost pair (tiktoken's
// order), and the minimum itself says where it is. The search for it that this replaced ended in
// a mispredicted branch at nearly every merge (a third of the merge loop's mispredictions under
// callgrind's branch simulation; the merges of short pieces went from 27-30 to 24-27 ms a pass).
// "Not a token" is kNoPair, or a little less: closing a gap moves entries down one index (minus
// one), at most kSmallPiece times. Ranks are at most Ranks::kMaxRank, so a token's entry stays below kNoToken.
constexpr unsigned kIndexBits = 7;
constexpr int32_t kNoToken = 1 << 30;  // entries at or above it are not a token
static_assert(kSmallPiece <= (1u << kIndexBits), "an index fits in the entry's low bits");
static_assert(((static_cast<uint64_t>(Ranks::kMaxRank) << kIndexBits) | ((1u << kIndexBits) - 1)) < static_cast<uint64_t>(kNoToken), "a rank's entry stays below kNoToken");
static_assert(static_cast<int64_t>(kNoPair) - static_cast<int64_t>(kSmallPiece) >= kNoToken, "kNoPair stays above kNoToken");
inline int32_t PairOf(uint32_t rank, size_t i) { return rank == kNoRank ? kNoPair : static_cast<int32_t>((rank << kIndexBits) | i); }

// The lowest entry of pair[0, count) (count >= 1), and in *at its index (meaningful when the entry
// is below kNoToken). pair[] must hold kNoPair up to the next multiple of kLanes.
inline int32_t Lowest(const int32_t* pair, size_t count, size_t* at) {
  Lanes low = Load(pair);
  for (size_t i = kLanes; i < count; i += kLanes) low = Min(low, Load(pair + i));
  low = Min(low, __builtin_shufflevector(low, low, 2, 3, 0, 1));
  low = Min(low, __builtin_shufflevector(low, low, 1, 0, 3, 2));
  const int32_t best = low[0];
  *at = static_cast<size_t>(best) & ((1u << kIndexBits) - 1);
  return best;
}

// a[i] = a[i + 1] (minus `less`) for i in [from, end), a lane at a time, front to back: each lane
// is read before it is overwritten. Writes up to kLanes - 1 entries past end (with what follows
// them).
template <typename T>
inline void CloseGap(T* a, size_t from, size_t end, int32_t less = 0) {
  for (size_t i = from; i < end; i += kLanes) Store(a + i, Load(a + i + 1) - less);
}

// `ids`, when given, gets a copy of the tokens (for the piece cache).
size_t MergeSmall(const Ranks& ranks, const uint8_t* s, size_t n, std::vector<uint32_t>* out, uint32_t* ids) {
  // Part i is s[start[i], start[i + 1]) with token token[i]; pair[i] is the rank of parts i and
  // i + 1 together (kNoPair from the last part on, for Lowest). parts shrinks by one per merge.
  // The padding lets the lane loops run over whole lanes.
  uint32_t start[kSmallPiece + 2 * kLanes];
  uint32_t token[kSmallPiece + 2 * kLanes];
  int32_t pair[kSmallPiece + 2 * kLanes];
  size_t parts = n;
  for (size_t i = 0; i + 1 < n; ++i) {
    start[i] = static_cast<uint32_t>(i);
    token[i] = ranks.Byte(s[i]);
    pair[i] = PairOf(ranks.Pair(s[i], s[i + 1]), i);
  }
  start[n - 1] = static_cast<uint32_t>(n - 1);
  token[n - 1] = ranks.Byte(s[n - 1]);
  start[n] = static_cast<uint32_t>(n);
  for (size_t i = n - 1; i < n + 2 * kLanes - 1; ++i) pair[i] = kNoPair;
  for (size_t i = n; i < n + 2 * kLanes - 1; ++i) start[i + 1] = token[i] = 0;  // only ever copied
  size_t at = 0;
  for (int32_t best; (best = Lowest(pair, parts - 1, &at)) < kNoToken;) {
    token[at] = static_cast<uint32_t>(best) >> kIndexBits;
    // Drop the boundary at + 1: parts at + 2 ... move down by one (pair's kNoPair tail with them).
    CloseGap(start, at + 1, parts);
    CloseGap(token, at + 1, parts);
    CloseGap(pair, at + 1, parts, 1);  // and their indexes with them
    --parts;
    pair[at] = at + 1 < parts ? PairOf(ranks.Find(s + start[at], start[at + 2] - start[at]), at) : kNoPair;
    if (at > 0) pair[at - 1] = PairOf(ranks.Find(s + start[at - 1], start[at + 1] - start[at - 1]), at - 1);
  }
  if (out) out->insert(out->end(), token, token + parts);
  if (ids) std::copy(token, token + parts, ids);
  return parts;
}

// One possible merge, as one integer: rank << 32 | start, the pair of parts that begins at boundary
// `start`. The lowest key is the lowest rank, then the leftmost: tiktoken's scan order.
inline uint64_t Key(uint32_t rank, uint32_t start) { return (static_cast<uint64_t>(rank) << 32) | start; }

constexpr uint32_t kGone = 0xffffffffu;
constexpr uint64_t kNoKey = ~0ull;

struct LargeScratch {
  std::vector<uint32_t> next, prev, token;
  std::vector<uint64_t> tree;
  void Release() {
    std::vector<uint32_t>().swap(next);
    std::vector<uint32_t>().swap(prev);
    std::vector<uint32_t>().swap(token);
    std::vector<uint64_t>().swap(tree);
  }
};

// The pairs' keys sit in the leaves of a complete binary tree of minima (leaf b: the pair that
// begins at boundary b, kNoKey when there is none), so the root is the next merge. A merge changes
// three leaves (the pair it joins, and the new pairs left and right of it), each a walk to the root
// of a fixed number of steps with a min at each: no data-dependent branch, where a binary heap's
// sifting mispredicted about once per level (these pieces, a few dozen in the benchmark's corpus,
// took a quarter of its merge time).
size_t MergeLarge(const Ranks& ranks, const uint8_t* s, size_t n, std::vector<uint32_t>* out) {
  thread_local LargeScratch scratch;
  auto& next = scratch.next;  // next[b]: the boundary after b, kGone when b is merged away
  auto& prev = scratch.prev;
  auto& token = scratch.token;
  auto& tree = scratch.tree;
  size_t leaves = 1;
  while (leaves < n) leaves <<= 1;
  next.resize(n + 1);
  prev.resize(n + 1);
  token.resize(n);
  tree.assign(2 * leaves, kNoKey);
  uint64_t* const leaf = tree.data() + leaves;
  for (size_t i = 0; i < n; ++i) {
    next[i] = static_cast<uint32_t>(i + 1);
    prev[i + 1] = static_cast<uint32_t>(i);
    token[i] = ranks.Byte(s[i]);
    const uint32_t rank = i + 1 < n ? ranks.Pair(s[i], s[i + 1]) : kNoRank;
    if (rank != kNoRank) leaf[i] = Key(rank, static_cast<uint32_t>(i));
  }
  next[n] = kGone;
  prev[0] = kGone;
  for (size_t i = leaves - 1; i >= 1; --i) tree[i] = std::min(tree[2 * i], tree[2 * i + 1]);
  const auto set = [&](size_t b, uint64_t key) {
    size_t i = leaves + b;
    tree[i] = key;
    for (i >>= 1; i; i >>= 1) tree[i] = std::min(tree[2 * i], tree[2 * i + 1]);
  };
  while (tree[1] != kNoKey) {
    const uint64_t key = tree[1];
    const uint32_t start = static_cast<uint32_t>(key);
    const uint32_t r = static_cast<uint32_t>(key >> 32);
    const uint32_t mid = next[start];
    const uint32_t end = next[mid];
    token[start] = r;
    next[start] = end;
    next[mid] = kGone;
    if (end < n) prev[end] = start;
    set(mid, kNoKey);  // the pair that began at mid is gone with it
    if (start > 0) {
      const uint32_t left = prev[start];
      const uint32_t rank = ranks.Find(s + left, end - left);
      set(left, rank != kNoRank ? Key(rank, left) : kNoKey);
    }
    const uint32_t rank = end < n ? ranks.Find(s + start, next[end] - start) : kNoRank;
    set(start, rank != kNoRank ? Key(rank, start) : kNoKey);
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

size_t EncodePiece(const Ranks& ranks, const uint8_t* piece, size_t size, std::vector<uint32_t>* out, PieceCache* cache) {
  if (size == 1) {
    if (out) out->push_back(ranks.Byte(piece[0]));
    return 1;
  }
  if (size == 2) {  // the direct table of two-byte tokens, no hashing
    const uint32_t pair = ranks.Pair(piece[0], piece[1]);
    if (out) {
      if (pair != kNoRank) {
        out->push_back(pair);
      } else {
        out->push_back(ranks.Byte(piece[0]));
        out->push_back(ranks.Byte(piece[1]));
      }
    }
    return pair != kNoRank ? 1 : 2;
  }
  // Most pieces of ordinary text are whole tokens.
  const uint64_t hash = Ranks::HashOf(piece, size);
  const uint32_t whole = ranks.Find(piece, size, hash);
  if (whole != kNoRank) {
    if (out) out->push_back(whole);
    return 1;
  }
  if (size > kSmallPiece) return MergeLarge(ranks, piece, size, out);
  if (!cache || size > PieceCache::kMaxBytes) return MergeSmall(ranks, piece, size, out, nullptr);
  size_t count = 0;
  if (const uint32_t* ids = cache->Get(ranks.serial(), hash, piece, size, &count)) {
    if (out) out->insert(out->end(), ids, ids + count);
    return count;
  }
  uint32_t ids[kSmallPiece];
  count = MergeSmall(ranks, piece, size, out, ids);
  cache->Put(ranks.serial(), hash, piece, size, ids, count);
  return count;
}

size_t EncodeText(const Ranks& ranks, Pattern pattern, const uint8_t* s, size_t size, std::vector<uint32_t>* out, PieceCache* cache) {
  size_t count = 0;
  size_t pos = 0;
  if (pattern == Pattern::kO200k) {
    while (pos < size) {
      const size_t end = NextPieceO200k(s, size, pos);
      count += EncodePiece(ranks, s + pos, end - pos, out, cache);
      pos = end;
    }
  } else {
    while (pos < size) {
      const size_t end = NextPieceCl100k(s, size, pos);
      count += EncodePiece(ranks, s + pos, end - pos, out, cache);
      pos = end;
    }
  }
  return count;
}

}  // namespace tokenizer
}  // namespace pinclaw
