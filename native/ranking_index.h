// The hybrid ranking index: documents with terms (BM25 over an inverted index), vectors (cosine,
// exact or with HNSW candidates), metadata filters, weighted or reciprocal-rank fusion, and a
// canonical serialized form. Plain C++: ranking.cc is the N-API layer. The behaviour is specified in
// docs/ranking.md and mirrored by src/native/ranking-reference.ts.
//
// Memory (docs/ranking.md, "Memory layout"): the index holds what search, update and remove need,
// not the documents (their text lives in SQLite). Ids and terms are stored once, in byte arenas
// behind open-addressing tables; postings are varint lists per term; vectors are rows of one
// array (VectorStore). Removing a document only marks it: without per-document term lists (which
// would cost as much as the postings) its postings cannot be found cheaply, so they are skipped
// when read and dropped by the next compaction, which removals and appends trigger in proportion.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ranking_codec.h"
#include "ranking_error.h"
#include "ranking_hnsw.h"
#include "ranking_table.h"
#include "ranking_vectors.h"

namespace pinclaw {
namespace ranking {

struct Options {
  uint32_t dimensions = 0;  // 0: fixed by the first vector
  Quantization quantization = Quantization::F32;
  double k1 = 1.2;
  double b = 0.75;
  uint32_t hnswThreshold = 20000;  // more vectors than this: HNSW candidates
  uint32_t connectivity = 16;
  uint32_t expansionAdd = 64;
  uint32_t expansionSearch = 64;
};
// Throws Error naming the first invalid option; `prefix` says where the options came from.
void ValidateOptions(const Options& o, const std::string& prefix);
constexpr uint32_t kMaxDimensions = 65536;

struct DocInput {
  std::string id;
  std::string text;  // folded UTF-8; invalid bytes act as separators
  std::string kind;
  std::string session;
  double time = 0;
  bool hasVector = false;
  std::vector<float> vector;
};

enum class PutMode { kAdd, kUpdate, kUpsert };
enum class Fusion { kWeighted, kRrf };

struct Filter {
  bool byKind = false;
  bool bySession = false;
  std::vector<std::string> kinds;
  std::vector<std::string> sessions;
  double since = -std::numeric_limits<double>::infinity();  // time >= since
  double until = std::numeric_limits<double>::infinity();   // time < until
};

struct Query {
  std::string text;
  bool hasVector = false;
  std::vector<float> vector;
  uint32_t k = 10;
  Fusion fusion = Fusion::kWeighted;
  double wVector = 0.7;
  double wKeyword = 0.3;
  double rrfK = 60;
  uint32_t candidates = 0;  // per side; 0: max(4k, 50)
  Filter filter;
};

struct Hit {
  uint32_t doc;
  double score;
  double keyword;  // raw BM25; NaN when the query has no terms
  double vector;   // raw cosine; NaN when the query or the document has no vector
};

struct Stats {
  size_t documents, vectors, terms, graphNodes, graphTombstones, memoryBytes;
  uint32_t dimensions;
};

// Arena offsets are u32 (half the size of pointers); 4 GiB of ids, terms or postings is far beyond
// what this index is for, so it is an error rather than a wider type everywhere.
inline uint32_t Offset32(size_t n) {
  if (n > 0xFFFFFFFFu) throw Error("the index is too large (4 GiB in one arena)");
  return uint32_t(n);
}

class Index {
 public:
  explicit Index(const Options& options);
  ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  const Options& options() const { return options_; }
  // All documents are validated before any is applied: a batch goes in whole or not at all.
  void Put(std::vector<DocInput>& docs, PutMode mode);
  bool Remove(std::string_view id);
  bool Has(std::string_view id) const { return FindDoc(id) != kNone; }
  size_t Size() const { return idTable_.size(); }
  std::vector<Hit> Search(const Query& q);
  std::string_view Id(uint32_t doc) const {
    uint32_t from = doc ? idEnd_[doc - 1] : 0;
    return std::string_view(idBytes_.data() + from, idEnd_[doc] - from);
  }
  Stats GetStats() const;

  std::vector<uint8_t> Serialize() const;
  static std::unique_ptr<Index> Load(const uint8_t* data, size_t len);

 private:
  static constexpr uint32_t kNone = 0xFFFFFFFFu;
  // Doc::kind of a removed document: its postings stay until the next compaction.
  static constexpr uint32_t kRemoved = 0xFFFFFFFFu;

  // Documents are numbered in order of insertion and never renumbered except by Compact(), so
  // every posting list is sorted by document number and an insertion only appends.
  struct Doc {
    uint32_t kind = 0, session = 0;  // name ids; kind kRemoved: removed
    uint32_t length = 0;             // number of terms, with repetitions
    uint32_t vector = kNoOwner;      // vector slot
    double time = 0;
  };
  // A term's postings are a compact part (in compact_, for terms that existed at the last
  // compaction or load) followed by a chain in chain_ for documents added since.
  struct Term {
    uint32_t count = 0;     // postings, including those of removed documents
    uint32_t chain = kNone;  // offset of its Chain in chain_
  };
  // A chain is this header and blocks in chain_, each a multiple of 16 bytes. A block is a u32
  // link to the next block (kNone in the last) and postings; the k-th block of a chain has
  // BlockBytes(k), so a rare term wastes little and a frequent one links rarely. The chain is a
  // posting list of its own: its first posting counts from -1, not from the end of the compact part.
  struct Chain {
    uint32_t head, tail;  // offsets of the first and last block
    uint32_t last;        // the newest document in the chain
    uint16_t used;        // bytes used in the tail block, its link included
    uint16_t blocks;      // saturates; block sizes stop growing long before
  };
  static size_t BlockBytes(uint32_t k) { return size_t(16) << std::min<uint32_t>(k, 5); }
  // Interned strings (kinds, sessions) with reference counts, so unused names are released.
  struct Names {
    std::unordered_map<std::string, uint32_t> ids;
    std::vector<const std::string*> names;
    std::vector<uint32_t> refs;
    std::vector<uint32_t> free;
    uint32_t Intern(const std::string& s);
    void Release(uint32_t id);
    // -1 when unknown
    int64_t Find(const std::string& s) const;
  };
  struct PreparedFilter;
  struct Candidate {
    double score;
    uint32_t doc;
  };

  std::string_view TermText(uint32_t t) const {
    uint32_t from = t ? termEnd_[t - 1] : 0;
    return std::string_view(termText_.data() + from, termEnd_[t] - from);
  }
  uint32_t FindDoc(std::string_view id) const;
  uint32_t FindTerm(std::string_view text) const;
  void CheckVector(const std::vector<float>& v, uint32_t dims, const std::string& what) const;
  uint32_t InternTerm(std::string_view text);
  void Insert(DocInput& in);
  uint32_t AppendDoc(std::string_view id, uint32_t kind, uint32_t session, double time);
  void AppendPosting(uint32_t term, uint32_t doc, uint32_t tf);
  uint32_t AllocateChainBytes(size_t bytes);
  // Copies, not references: chain_ holds bytes, and appending may move it.
  Chain LoadChain(uint32_t at) const {
    Chain c;
    std::memcpy(&c, chain_.data() + at, sizeof c);
    return c;
  }
  void StoreChain(uint32_t at, const Chain& c) { std::memcpy(chain_.data() + at, &c, sizeof c); }
  template <typename F>
  void ForEachPosting(uint32_t term, F&& f) const;
  uint32_t LiveCount(uint32_t term);
  void Erase(uint32_t doc);
  // Compacts when removed documents or chained postings (more than 1/chainShare of the compact
  // ones; 0: chains do not count) have piled up.
  void MaybeCompact(size_t chainShare);
  void Compact();
  void ReleaseVector(uint32_t slot);
  void MaintainGraph();
  void DropGraph();
  bool Better(const Candidate& a, const Candidate& b) const;
  void TopInto(std::vector<Candidate>& heap, size_t cap, Candidate c) const;
  bool Passes(const PreparedFilter& f, uint32_t doc) const;
  void KeywordSide(const std::vector<uint32_t>& terms, const PreparedFilter& f, size_t cap, std::vector<Candidate>& out);
  void VectorSide(const PreparedVector& q, const PreparedFilter& f, size_t cap, std::vector<Candidate>& out);

  Options options_;

  // Documents: metadata by number, ids in one byte arena (idEnd_[d] is where id d ends).
  std::vector<Doc> docs_;
  std::vector<char> idBytes_;
  std::vector<uint32_t> idEnd_;
  HashIndex idTable_;  // live documents only
  size_t removed_ = 0;  // removed documents still numbered, until the next compaction
  Names kinds_, sessions_;
  uint64_t totalLength_ = 0;

  // Terms: text in one arena (termEnd_[t] is where term t ends), postings compact or chained.
  std::vector<Term> terms_;
  std::vector<char> termText_;
  std::vector<uint32_t> termEnd_;
  HashIndex termTable_;
  std::vector<uint8_t> compact_;
  std::vector<uint32_t> compactEnd_;  // per term that has a compact part: where it ends in compact_
  std::vector<uint8_t> chain_;        // empty right after a compaction

  VectorStore store_;
  size_t liveVectors_ = 0;
  std::unique_ptr<Graph> graph_;
  std::vector<uint32_t> pendingGraph_;  // vector slots to add to the graph at the end of a mutation
  std::vector<uint32_t> tombstones_;    // vector slots still referenced by the graph

  // Scratch space reused across calls.
  std::vector<std::string_view> views_;
  std::vector<uint32_t> termScratch_;
  std::vector<double> acc_;
  std::vector<uint32_t> touched_;
  static constexpr uint32_t kLenNormCache = 1024;
  std::vector<double> lenNorm_;  // by document length, this query's BM25 length normalization
  uint64_t version_ = 0;         // changes with every insert, removal and compaction
  uint64_t liveCountVersion_ = 0;
  std::unordered_map<uint32_t, uint32_t> liveCounts_;  // term → live postings, at liveCountVersion_
};

// Calls f(doc, tf) for every posting of term t, removed documents included, in document order.
template <typename F>
void Index::ForEachPosting(uint32_t t, F&& f) const {
  if (t < compactEnd_.size()) {
    const uint8_t* base = compact_.data();
    DecodePostings(base + (t ? compactEnd_[t - 1] : 0), base + compactEnd_[t], -1, f);
  }
  if (terms_[t].chain != kNone) {
    int64_t prev = -1;
    uint32_t k = 0;
    for (uint32_t b = LoadChain(terms_[t].chain).head; b != kNone; k++) {
      const uint8_t* block = chain_.data() + b;
      // Zero bytes end the postings of a block, the tail's included, so no used count is needed.
      prev = DecodePostings<true>(block + 4, block + BlockBytes(k), prev, f);
      std::memcpy(&b, block, 4);
    }
  }
}

}  // namespace ranking
}  // namespace pinclaw
