// The HNSW graph that supplies vector candidates above the configured collection size: usearch's
// header-only index_gt, compiled in (no SIMD libraries), over the vectors of our own VectorStore.
// Graph keys are vector slots, so the vectors are stored once. usearch stays behind this header.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "ranking_vectors.h"

namespace pinclaw {
namespace ranking {

struct GraphParams {
  uint32_t connectivity = 16;
  uint32_t expansionAdd = 64;
};

class Graph {
 public:
  Graph(const VectorStore& store, GraphParams params);
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Inserts vector slots, on several threads when there are many. Throws Error on failure.
  void Add(const std::vector<uint32_t>& slots);
  // Up to `wanted` vector slots near q, best first; only slots for which accept() is true count.
  using Accept = bool (*)(const void* ctx, uint32_t slot);
  void Search(const PreparedVector& q, size_t wanted, size_t expansion, Accept accept, const void* ctx,
              std::vector<uint32_t>& out) const;

  size_t size() const;
  size_t MemoryBytes() const;
  uint32_t KeyAt(size_t node) const;
  void SetKeyAt(size_t node, uint32_t slot);

  void Save(std::vector<uint8_t>& out) const;
  // Replaces the graph with a serialized one of exactly `nodes` nodes, checking its structure so
  // that a damaged buffer is an error, not an out-of-bounds read later. Keys are left to the caller.
  void Load(const uint8_t* data, size_t len, size_t nodes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ranking
}  // namespace pinclaw
