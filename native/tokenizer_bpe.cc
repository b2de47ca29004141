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
// were over half of its instructions. Pair ranks are kept as int32 with kNoPair for "not a
// token", so the lane compare is the signed one SSE2 has.
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

// A rank as a pair entry: kNoRank (0xffffffff) becomes kNoPair; real ranks are below 2^31.
inline int32_t PairOf(uint32_t rank) { return static_cast<int32_t>(rank & 0x7fffffffu); }

// The lowest of pair[0, count) (count >= 1) and its first index. pair[] must hold kNoPair up to
// the next multiple of kLanes.
inline int32_t Lowest(const int32_t* pair, size_t count, size_t* at) {
  Lanes low = Load(pair);
  for (size_t i = kLanes; i < count; i += kLanes) low = Min(low, Load(pair + i));
  low = Min(low, __builtin_shufflevector(low, low, 2, 3, 0, 1));
  low = Min(low, __builtin_shufflevector(low, low, 1, 0, 3, 2));
  const int32_t best = low[0];
  if (best != kNoPair) {
    size_t i = 0;
    while (pair[i] != best) ++i;
    *at = i;
  }
  return best;
}

// a[i] = a[i + 1] for i in [from, end), a lane at a time, front to back: each lane is read before
// it is overwritten. Writes up to kLanes - 1 entries past end (with what follows them).
template <typename T>
inline void CloseGap(T* a, size_t from, size_t end) {
  for (size_t i = from; i < end; i += kLanes) Store(a + i, Load(a + i + 1));
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
    pair[i] = PairOf(ranks.Pair(s[i], s[i + 1]));
  }
  start[n - 1] = static_cast<uint32_t>(n - 1);
  token[n - 1] = ranks.Byte(s[n - 1]);
  start[n] = static_cast<uint32_t>(n);
  for (size_t i = n - 1; i < n + 2 * kLanes - 1; ++i) pair[i] = kNoPair;
  for (size_t i = n; i < n + 2 * kLanes - 1; ++i) start[i + 1] = token[i] = 0;  // only ever copied
  size_t at = 0;
  for (int32_t best; (best = Lowest(pair, parts - 1, &at)) != kNoPair;) {
    token[at] = static_cast<uint32_t>(best);
    // Drop the boundary at + 1: parts at + 2 ... move down by one (pair's kNoPair tail with them).
    CloseGap(start, at + 1, parts);
    CloseGap(token, at + 1, parts);
    CloseGap(pair, at + 1, parts);
    --parts;
    pair[at] = at + 1 < parts ? PairOf(ranks.Find(s + start[at], start[at + 2] - start[at])) : kNoPair;
    if (at > 0) pair[at - 1] = PairOf(ranks.Find(s + start[at - 1], start[at + 1] - start[at - 1]));
  }
  if (out) out->insert(out->end(), token, token + parts);
  if (ids) std::copy(token, token + parts, ids);
  return parts;
}

// One possible merge, as one integer: rank << 32 | start, the pair of parts that begins at boundary
// `start`. The heap pops the lowest first, i.e. the lowest rank, then the leftmost: tiktoken's scan
// order. Eight bytes and one compare per heap step; where the pair ends is not needed, because a
// popped key is checked against the rank of the pair that begins at `start` now (rank[], kept up
// to date): equal ranks are the same token, so the same bytes, so the same merge.
inline uint64_t Key(uint32_t rank, uint32_t start) { return (static_cast<uint64_t>(rank) << 32) | start; }

constexpr uint32_t kGone = 0xffffffffu;

struct LargeScratch {
  std::vector<uint32_t> next, prev, token, rank;
  std::vector<uint64_t> heap;
  void Release() {
    std::vector<uint32_t>().swap(next);
    std::vector<uint32_t>().swap(prev);
    std::vector<uint32_t>().swap(token);
    std::vector<uint32_t>().swap(rank);
    std::vector<uint64_t>().swap(heap);
  }
};

// The heap holds every candidate ever computed; a popped one is stale when the pair that begins at
// its start has changed since (its rank no longer matches), and the current pair was pushed when
// it formed. A merge at `start` always changes that rank: the new pair there is longer than the
// token just made, so it is other bytes, another token or none.
size_t MergeLarge(const Ranks& ranks, const uint8_t* s, size_t n, std::vector<uint32_t>* out) {
  thread_local LargeScratch scratch;
  auto& next = scratch.next;  // next[b]: the boundary after b, kGone when b is merged away
  auto& prev = scratch.prev;
  auto& token = scratch.token;
  auto& rank = scratch.rank;  // rank[b]: of the pair of parts that begins at b (kNoRank: none)
  auto& heap = scratch.heap;
  next.resize(n + 1);
  prev.resize(n + 1);
  token.resize(n);
  rank.resize(n + 1);
  heap.clear();
  for (size_t i = 0; i < n; ++i) {
    next[i] = static_cast<uint32_t>(i + 1);
    prev[i + 1] = static_cast<uint32_t>(i);
    token[i] = ranks.Byte(s[i]);
    rank[i] = i + 1 < n ? ranks.Pair(s[i], s[i + 1]) : kNoRank;
    if (rank[i] != kNoRank) heap.push_back(Key(rank[i], static_cast<uint32_t>(i)));
  }
  rank[n] = kNoRank;
  next[n] = kGone;
  prev[0] = kGone;
  const std::greater<uint64_t> later;
  std::make_heap(heap.begin(), heap.end(), later);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    const uint64_t key = heap.back();
    heap.pop_back();
    const uint32_t start = static_cast<uint32_t>(key);
    const uint32_t r = static_cast<uint32_t>(key >> 32);
    if (next[start] == kGone || rank[start] != r) continue;
    const uint32_t mid = next[start];
    const uint32_t end = next[mid];
    token[start] = r;
    next[start] = end;
    next[mid] = kGone;
    if (end < n) prev[end] = start;
    if (start > 0) {
      const uint32_t left = prev[start];
      rank[left] = ranks.Find(s + left, end - left);
      if (rank[left] != kNoRank) {
        heap.push_back(Key(rank[left], left));
        std::push_heap(heap.begin(), heap.end(), later);
      }
    }
    rank[start] = end < n ? ranks.Find(s + start, next[end] - start) : kNoRank;
    if (rank[start] != kNoRank) {
      heap.push_back(Key(rank[start], start));
      std::push_heap(heap.begin(), heap.end(), later);
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
