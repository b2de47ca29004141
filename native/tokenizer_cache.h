// Pieces that needed merging → their token ids, remembered per thread. Real text repeats its
// words, and a word that is not one token costs a merge of tens of table lookups each time; a
// direct-mapped table indexed by the hash the whole-piece lookup computed anyway answers a
// repeat with one compare. Bounded (kEntries × 128 bytes = 128 KiB, allocated on first use), and
// each entry names the rank table it came from, so two encodings never mix.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace pinclaw {
namespace tokenizer {

class PieceCache {
 public:
  static constexpr size_t kMaxBytes = 54;
  static constexpr size_t kMaxIds = 16;

  // The ids of `bytes` under rank table `table` (Ranks::serial()), or null; *count gets their number.
  const uint32_t* Get(uint32_t table, uint64_t hash, const uint8_t* bytes, size_t size, size_t* count) const {
    if (!entries_ || size > kMaxBytes) return nullptr;
    const Entry& e = entries_[Index(table, hash)];
    if (e.table != table || e.size != size || e.tag != static_cast<uint32_t>(hash >> 32) || std::memcmp(e.bytes, bytes, size) != 0) return nullptr;
    *count = e.count;
    return e.ids;
  }

  void Put(uint32_t table, uint64_t hash, const uint8_t* bytes, size_t size, const uint32_t* ids, size_t count) {
    if (size > kMaxBytes || count > kMaxIds) return;
    if (!entries_) entries_.reset(new Entry[kEntries]());
    Entry& e = entries_[Index(table, hash)];
    e.table = table;
    e.tag = static_cast<uint32_t>(hash >> 32);
    e.size = static_cast<uint8_t>(size);
    e.count = static_cast<uint8_t>(count);
    std::memcpy(e.bytes, bytes, size);
    std::memcpy(e.ids, ids, count * sizeof(uint32_t));
  }

  // Frees the entries (an unloaded encoding's are of no further use).
  void Release() { entries_.reset(); }

 private:
  static constexpr size_t kEntries = 1024;
  struct Entry {
    uint32_t table;  // 0: empty (serials start at 1)
    uint32_t tag;    // the hash's high half: most misses fail here, before the byte compare
    uint8_t size;
    uint8_t count;
    uint8_t bytes[kMaxBytes];
    uint32_t ids[kMaxIds];
  };
  static_assert(sizeof(Entry) == 128, "two cache lines per entry");
  static size_t Index(uint32_t table, uint64_t hash) { return static_cast<size_t>((hash ^ (table * 0x9e3779b9u)) & (kEntries - 1)); }
  std::unique_ptr<Entry[]> entries_;
};

}  // namespace tokenizer
}  // namespace pinclaw
