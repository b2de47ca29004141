// usearch's index_gt over VectorStore slots. Kept in its own translation unit: the header is large
// and only this file needs it. No SIMD plugins (index_plugins.hpp / NumKong) are used, so the
// arm64 cross-build needs nothing beyond the compiler.
#include "ranking_hnsw.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <thread>

#include <usearch/index.hpp>

#include "ranking_error.h"

namespace pinclaw {
namespace ranking {

namespace uu = unum::usearch;

namespace {

// The tape allocator of the graph: usearch allocates one block per node (its key, level and
// neighbour lists, ~140 bytes at connectivity 16) and frees them only all at once. Through malloc
// each carries a header and rounding (~20 bytes); bump allocation from 1 MiB chunks does not.
// Allocation happens under usearch's global lock, so this needs no lock of its own.
class NodeArena {
 public:
  using value_type = uu::byte_t;
  static constexpr size_t kChunk = 1 << 20;

  NodeArena() = default;
  // usearch copies allocators only to fork an empty index: a copy starts empty.
  NodeArena(const NodeArena&) noexcept {}
  NodeArena& operator=(const NodeArena&) noexcept { return *this; }
  NodeArena(NodeArena&& other) noexcept : chunks_(std::move(other.chunks_)), used_(other.used_) { other.used_ = kChunk; }
  NodeArena& operator=(NodeArena&& other) noexcept {
    chunks_.swap(other.chunks_);
    std::swap(used_, other.used_);
    return *this;
  }

  value_type* allocate(size_t n) noexcept {
    if (n > kChunk) return nullptr;
    if (chunks_.empty() || used_ + n > kChunk) {
      value_type* chunk = new (std::nothrow) value_type[kChunk];
      if (!chunk) return nullptr;
      try {
        chunks_.emplace_back(chunk);
      } catch (...) {
        delete[] chunk;
        return nullptr;
      }
      used_ = 0;
    }
    value_type* p = chunks_.back().get() + used_;
    used_ += n;
    return p;
  }
  // A null pointer is usearch's way of saying "free everything" (clear / reset).
  void deallocate(value_type* p, size_t) noexcept {
    if (!p) reset();
  }
  void reset() noexcept {
    chunks_.clear();
    used_ = kChunk;
  }
  size_t bytes() const { return chunks_.size() * kChunk; }

 private:
  std::vector<std::unique_ptr<value_type[]>> chunks_;
  size_t used_ = kChunk;
};

// Keys are our u32 vector slots: a u64 key would cost 4 more bytes in every node.
using GraphIndex = uu::index_gt<float, uint32_t, uint32_t, std::allocator<uu::byte_t>, NodeArena>;

constexpr size_t kMaxThreads = 4;
// Below this many insertions threads cost more than they save.
constexpr size_t kParallelFrom = 2048;

struct InsertValue {
  uint32_t slot;
};
struct QueryValue {
  const PreparedVector* q;
};

using uu::get_key;  // unqualified calls also find the hidden friends of usearch's iterators

// usearch minimizes a distance; cosine similarity becomes 1 - cos.
struct Metric {
  const VectorStore* store;
  template <typename M>
  float operator()(InsertValue v, const M& m) const {
    return float(1.0 - store->Cosine(v.slot, uint32_t(get_key(m))));
  }
  template <typename M>
  float operator()(QueryValue v, const M& m) const {
    return float(1.0 - store->Cosine(*v.q, uint32_t(get_key(m))));
  }
  template <typename A, typename B>
  float operator()(const A& a, const B& b) const {
    return float(1.0 - store->Cosine(uint32_t(get_key(a)), uint32_t(get_key(b))));
  }
};

size_t Threads() {
  size_t n = std::thread::hardware_concurrency();
  return std::max<size_t>(1, std::min(n, kMaxThreads));
}

}  // namespace

struct Graph::Impl {
  const VectorStore* store;
  GraphParams params;
  GraphIndex index;

  void Reserve(size_t members) {
    if (members <= index.capacity()) return;
    size_t want = std::max(members, index.capacity() * 2);
    if (!index.reserve(uu::index_limits_t(want, Threads()))) throw Error("out of memory growing the HNSW graph");
  }
};

Graph::Graph(const VectorStore& store, GraphParams params) : impl_(new Impl{&store, params, GraphIndex()}) {
  uu::index_config_t config(params.connectivity, params.connectivity * 2);
  auto made = GraphIndex::make(config);
  if (!made) throw Error(std::string("cannot create the HNSW graph: ") + made.error.what());
  impl_->index = std::move(made.index);
}

Graph::~Graph() = default;

void Graph::Add(const std::vector<uint32_t>& slots) {
  if (slots.empty()) return;
  Impl& g = *impl_;
  g.Reserve(g.index.size() + slots.size());
  Metric metric{g.store};
  size_t threads = slots.size() >= kParallelFrom ? Threads() : 1;
  std::vector<std::string> errors(threads);
  auto work = [&](size_t t) {
    uu::index_update_config_t config;
    config.expansion = g.params.expansionAdd;
    config.thread = t;
    for (size_t i = t; i < slots.size(); i += threads) {
      auto result = g.index.add(slots[i], InsertValue{slots[i]}, metric, config);
      if (!result) {
        errors[t] = result.error.what();
        return;
      }
    }
  };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; t++) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
  }
  for (const auto& e : errors)
    if (!e.empty()) throw Error("HNSW insertion failed: " + e);
}

void Graph::Search(const PreparedVector& q, size_t wanted, size_t expansion, Accept accept, const void* ctx,
                   std::vector<uint32_t>& out) const {
  out.clear();
  const Impl& g = *impl_;
  uu::index_search_config_t config;
  config.expansion = std::max(expansion, wanted);
  auto predicate = [accept, ctx](const GraphIndex::member_cref_t& m) { return accept(ctx, uint32_t(get_key(m))); };
  auto result = g.index.search(QueryValue{&q}, wanted, Metric{g.store}, config, predicate);
  if (!result) throw Error(std::string("HNSW search failed: ") + result.error.what());
  for (size_t i = 0; i < result.size(); i++) out.push_back(uint32_t(result[i].member.key));
}

size_t Graph::size() const { return impl_->index.size(); }
// usearch's estimate without its per-node allocator overhead (the arena has none), plus the arena
// chunks instead of the node bytes they hold.
size_t Graph::MemoryBytes() const {
  const GraphIndex& index = impl_->index;
  return index.memory_usage(0) - index.stats().allocated_bytes + index.tape_allocator().bytes();
}

uint32_t Graph::KeyAt(size_t node) const {
  return uint32_t(get_key(*(const_cast<GraphIndex&>(impl_->index).begin() + std::ptrdiff_t(node))));
}

void Graph::SetKeyAt(size_t node, uint32_t slot) {
  (*(impl_->index.begin() + std::ptrdiff_t(node))).key = slot;
}

void Graph::Save(std::vector<uint8_t>& out) const {
  auto result = impl_->index.save_to_stream([&out](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
    return true;
  });
  if (!result) throw Error(std::string("cannot serialize the HNSW graph: ") + result.error.what());
}

void Graph::Load(const uint8_t* data, size_t len, size_t nodes) {
  auto bad = [](const std::string& why) { return Error("cannot load: HNSW graph is corrupt (" + why + ")"); };
  // The header and the level of every node come first in usearch's stream; checking them here
  // bounds every allocation usearch makes while loading.
  uu::index_serialized_header_t header;
  if (len < sizeof header) throw bad("truncated header");
  std::memcpy(&header, data, sizeof header);
  if (header.size != nodes) throw bad("node count");
  if (header.connectivity < 2 || header.connectivity > 256 || header.connectivity_base < header.connectivity ||
      header.connectivity_base > 512)
    throw bad("connectivity");
  if (nodes > 0 && (header.max_level >= 64 || header.entry_slot >= nodes)) throw bad("entry point");
  using level_t = int16_t;
  if ((len - sizeof header) / sizeof(level_t) < nodes) throw bad("truncated levels");
  std::vector<level_t> levels(nodes);
  if (nodes) std::memcpy(levels.data(), data + sizeof header, nodes * sizeof(level_t));
  for (level_t l : levels)
    if (l < 0 || uint64_t(l) > header.max_level) throw bad("node level");
  if (nodes && uint64_t(levels[header.entry_slot]) != header.max_level) throw bad("entry level");

  size_t pos = 0;
  GraphIndex fresh;
  auto made = GraphIndex::make(uu::index_config_t(size_t(header.connectivity), size_t(header.connectivity_base)));
  if (!made) throw bad(made.error.what());
  fresh = std::move(made.index);
  auto result = fresh.load_from_stream([&](void* p, size_t n) {
    if (n > len - pos) return false;
    std::memcpy(p, data + pos, n);
    pos += n;
    return true;
  });
  if (!result) throw bad(result.error.what());
  if (pos != len) throw bad("trailing bytes");

  for (size_t s = 0; s < nodes; s++) {
    size_t level = fresh.level_of(uint32_t(s));
    if (level != size_t(levels[s])) throw bad("node header");
    for (size_t l = 0; l <= level; l++) {
      auto view = fresh.neighbors(uint32_t(s), l);
      if (view.size() > (l == 0 ? header.connectivity_base : header.connectivity)) throw bad("neighbor count");
      for (auto it = view.begin(); it != view.end(); ++it) {
        uint32_t n = it.slot();
        if (n >= nodes || size_t(levels[n]) < l) throw bad("neighbor slot");
      }
    }
  }
  if (!fresh.reserve(uu::index_limits_t(std::max<size_t>(nodes, 16), Threads()))) throw Error("out of memory");
  impl_->params.connectivity = uint32_t(header.connectivity);
  impl_->index = std::move(fresh);
}

}  // namespace ranking
}  // namespace pinclaw
