// An open-addressing hash index from byte strings to u32 ids, for the ranking index's term
// dictionary and document ids. The strings are not stored here: they live in the caller's arena,
// and the table keeps only (id, hash) pairs, 8 bytes a slot. A node-based map would spend a
// std::string (32 bytes), a node and a bucket pointer per entry, which is more than the postings
// of a typical term.
#pragma once
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace pinclaw {
namespace ranking {

// 64-bit multiply-xorshift over 8-byte words, folded to 32 bits. Not cryptographic: ids and terms
// come from the user's own documents, and a bad distribution only costs probes.
inline uint32_t HashBytes(std::string_view s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t n = s.size();
  uint64_t h = 0x9E3779B97F4A7C15ull ^ (uint64_t(n) * 0xFF51AFD7ED558CCDull);
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 31;
    p += 8;
    n -= 8;
  }
  uint64_t w = 0;
  std::memcpy(&w, p, n);
  h = (h ^ w) * 0x94D049BB133111EBull;
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 32;
  return uint32_t(h);
}

// Linear probing, power-of-two capacity, at most 3/4 full; erasing shifts the following entries
// back instead of leaving tombstones, so lookups never slow down after many removes.
class HashIndex {
 public:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;

  size_t size() const { return size_; }
  size_t MemoryBytes() const { return slots_.capacity() * sizeof(Slot); }

  void Clear() {
    std::vector<Slot>().swap(slots_);
    size_ = 0;
  }

  // Makes room for n entries without growing again.
  void Reserve(size_t n) {
    size_t cap = 16;
    while (cap * 3 < n * 4) cap *= 2;
    if (cap > slots_.size()) Rehash(cap);
  }

  // The id whose key (keyOf(id)) equals `key`, or kNone.
  template <typename KeyOf>
  uint32_t Find(std::string_view key, uint32_t hash, const KeyOf& keyOf) const {
    if (slots_.empty()) return kNone;
    const size_t mask = slots_.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.id == kNone) return kNone;
      if (s.hash == hash && keyOf(s.id) == key) return s.id;
    }
  }

  // Replaces every id by f(id). Slots depend only on hashes, so renumbering needs no rehash.
  template <typename F>
  void Remap(const F& f) {
    for (Slot& s : slots_)
      if (s.id != kNone) s.id = f(s.id);
  }

  // The caller has checked that the key is not present.
  void Insert(uint32_t id, uint32_t hash) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.empty() ? 16 : slots_.size() * 2);
    Place(id, hash);
    size_++;
  }

  void Erase(uint32_t id, uint32_t hash) {
    const size_t mask = slots_.size() - 1;
    size_t i = hash & mask;
    while (slots_[i].id != id) i = (i + 1) & mask;
    // Backward shift: move each later entry of the run into the hole unless that would put it
    // before its home slot.
    for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
      if (slots_[j].id == kNone) break;
      size_t home = slots_[j].hash & mask;
      if (((j - home) & mask) >= ((j - i) & mask)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i] = Slot{};
    size_--;
  }

 private:
  struct Slot {
    uint32_t id = kNone;
    uint32_t hash = 0;
  };

  void Place(uint32_t id, uint32_t hash) {
    const size_t mask = slots_.size() - 1;
    size_t i = hash & mask;
    while (slots_[i].id != kNone) i = (i + 1) & mask;
    slots_[i] = Slot{id, hash};
  }

  void Rehash(size_t cap) {
    std::vector<Slot> old(cap);
    old.swap(slots_);
    for (const Slot& s : old)
      if (s.id != kNone) Place(s.id, s.hash);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace ranking
}  // namespace pinclaw
