// A large text encoded on several threads: the text is cut at points that are piece boundaries
// whatever came before them, each segment is split and merged on its own thread, and the ids are
// concatenated in segment order. The result is the single-threaded one by construction, because
// a regex match starting at a piece boundary depends only on the text from there on (the patterns
// have lookahead but no lookbehind), so a segment starting at a boundary yields the same pieces.
// It is faster only where cores are free: on a loaded machine the segments just take turns.
#include <algorithm>
#include <atomic>
#include <exception>
#include <new>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "tokenizer.h"
#include "tokenizer_cache.h"

namespace pinclaw {
namespace tokenizer {
namespace {

// On bytes of UTF-8 or on UTF-16 units alike: an ASCII character is the same single unit in both.
inline bool IsAsciiLetter(uint32_t c) { return c < 0x80 && static_cast<uint8_t>((c | 0x20) - 'a') < 26; }
inline bool IsAsciiDigit(uint32_t c) { return c - '0' < 10; }

// Whether p (0 < p < size) ends the piece that holds byte p - 1, in both encodings, from local
// bytes only. Two cases, each worked out against the alternatives listed in tokenizer_split.cc:
//  - s[p-1] is an ASCII letter and s[p] an ASCII byte that is neither a letter nor '\''. Only the
//    word alternatives (o200k 1-2, cl100k 1-2) match a letter, never in their optional prefix
//    (which excludes \p{L}); after the letter they continue only with letters, marks (non-ASCII)
//    or a contraction, which starts with '\''. So the piece ends at p.
//  - s[p-1] is '\n' and s[p] an ASCII letter or digit. The alternatives that match '\n' are
//    4 (in its trailing [\r\n/]* or [\r\n]*), 5 (\s*[\r\n]+) and 6-7 (\s+); none continues into a
//    letter or a digit (not \s, not '/'). A whitespace run reaching p - 1 is taken whole by 5, which
//    comes before 6 and so is never cut short by 6's (?!\S). So the piece ends at p.
// Both are ASCII, so p is never inside a multi-byte character or a surrogate pair, and the rule
// reads the same on UTF-16 units.
template <typename Unit>
inline bool IsSplitPoint(const Unit* s, size_t p) {
  const uint32_t a = s[p - 1], b = s[p];
  if (IsAsciiLetter(a)) return b < 0x80 && !IsAsciiLetter(b) && b != '\'';
  return a == '\n' && (IsAsciiLetter(b) || IsAsciiDigit(b));
}

// Segments per thread, and their least size: segments cost unevenly (a long piece's heap merge, a
// run of merges in a script whose words are not tokens), so several per thread, handed out as the
// threads get free, keep one thread from finishing long after the others.
constexpr size_t kSegmentsPerThread = 4;
constexpr size_t kMinSegment = 16 * 1024;

}  // namespace

namespace {

template <typename Unit>
std::vector<size_t> SplitPointsOf(const Unit* s, size_t size, size_t parts) {
  std::vector<size_t> points;
  if (parts < 2 || size < 2) return points;
  size_t last = 0;
  for (size_t k = 1; k < parts; ++k) {
    // The first split point at or after the k-th even share; a text without one there (a long
    // run of CJK, minified data) leaves its segment joined to the next.
    const size_t target = std::max(size / parts * k, last + 1);
    const size_t limit = std::min(size, size / parts * (k + 1));
    for (size_t p = std::max<size_t>(target, 1); p < limit; ++p) {
      if (IsSplitPoint(s, p)) {
        points.push_back(p);
        last = p;
        break;
      }
    }
  }
  return points;
}

// Runs encode(segment, cache, ids) for each segment [points[i-1], points[i]) on up to `threads`
// threads, the caller's included: each takes the next segment not yet taken until none is left,
// so a slow segment does not hold the others back. A worker has its own piece cache for the call
// (freed with the thread): the caller's is not thread-safe. An exception (bad_alloc) stops the
// others and is rethrown here once all have joined. Appends the ids to `out` in segment order.
template <typename Encode>
size_t RunSegments(const std::vector<size_t>& points, size_t size, unsigned threads, std::vector<uint32_t>* out, PieceCache* cache, const Encode& encode) {
  struct Segment {
    size_t begin, end, count = 0;
    std::vector<uint32_t> ids;
  };
  std::vector<Segment> segments(points.size() + 1);
  for (size_t i = 0; i < segments.size(); ++i) {
    segments[i].begin = i == 0 ? 0 : points[i - 1];
    segments[i].end = i < points.size() ? points[i] : size;
  }
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr errors[4];
  auto work = [&](unsigned who, PieceCache* pieces) {
    try {
      for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < segments.size();) {
        Segment& seg = segments[i];
        seg.count = encode(seg.begin, seg.end, pieces, out ? &seg.ids : nullptr);
      }
    } catch (...) {
      errors[who] = std::current_exception();
      failed = true;
    }
  };
  threads = std::min<unsigned>({threads, 4u, static_cast<unsigned>(segments.size())});
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  for (unsigned who = 1; who < threads; ++who) {
    try {
      workers.emplace_back([&work, who] {
        PieceCache local;
        work(who, &local);
      });
    } catch (const std::system_error&) {
      break;  // no more threads to be had: those started and the caller share the segments
    }
  }
  work(0, cache);
  for (std::thread& w : workers) w.join();
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  size_t count = 0, total = 0;
  for (const Segment& seg : segments) total += seg.ids.size();
  if (out) out->reserve(out->size() + total);
  for (Segment& seg : segments) {
    count += seg.count;
    if (out) out->insert(out->end(), seg.ids.begin(), seg.ids.end());
    std::vector<uint32_t>().swap(seg.ids);  // the copy's peak is one segment over the result
  }
  return count;
}

size_t Parts(unsigned threads, size_t size) { return std::min<size_t>(threads * kSegmentsPerThread, size / kMinSegment); }

}  // namespace

std::vector<size_t> SplitPoints(const uint8_t* s, size_t size, size_t parts) { return SplitPointsOf(s, size, parts); }
std::vector<size_t> SplitPoints(const char16_t* s, size_t size, size_t parts) { return SplitPointsOf(s, size, parts); }

unsigned EncodeThreads() {
  // A Pi 4/5 has 4 cores; more threads than that would only add start-up cost on bigger machines
  // for text sizes a message has.
  // Asked once: glibc answers hardware_concurrency by reading /sys/devices/system/cpu/online, about
  // 5 us, and every count asks (LargeString), however short its text (bench:turn's counts).
  static const unsigned threads = [] {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : std::min(n, 4u);
  }();
  return threads;
}

size_t EncodeTextParallel(const Ranks& ranks, Pattern pattern, const uint8_t* s, size_t size, std::vector<uint32_t>* out, PieceCache* cache, unsigned threads) {
  const std::vector<size_t> points = threads >= 2 && size >= kParallelMin ? SplitPoints(s, size, Parts(threads, size)) : std::vector<size_t>();
  if (points.empty()) return EncodeText(ranks, pattern, s, size, out, cache);
  return RunSegments(points, size, threads, out, cache, [&](size_t begin, size_t end, PieceCache* pieces, std::vector<uint32_t>* ids) {
    return EncodeText(ranks, pattern, s + begin, end - begin, ids, pieces);
  });
}

size_t EncodeUtf16Parallel(const Ranks& ranks, Pattern pattern, const char16_t* s, size_t size, std::string* utf8, std::vector<uint32_t>* out, PieceCache* cache, unsigned threads) {
  const std::vector<size_t> points = threads >= 2 && size >= kParallelMin ? SplitPoints(s, size, Parts(threads, size)) : std::vector<size_t>();
  if (points.empty()) {
    Utf16ToUtf8(s, size, utf8);
    return EncodeText(ranks, pattern, reinterpret_cast<const uint8_t*>(utf8->data()), utf8->size(), out, cache);
  }
  // Each segment's UTF-8 is made on the thread that encodes it: the conversion, V8's serial part
  // otherwise, runs in parallel too.
  return RunSegments(points, size, threads, out, cache, [&](size_t begin, size_t end, PieceCache* pieces, std::vector<uint32_t>* ids) {
    // Per segment, not per thread: the calling thread keeps nothing of a large call.
    std::string bytes;
    Utf16ToUtf8(s + begin, end - begin, &bytes);
    return EncodeText(ranks, pattern, reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), ids, pieces);
  });
}

}  // namespace tokenizer
}  // namespace pinclaw
