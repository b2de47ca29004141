// The hybrid ranking index: documents with terms (BM25 over an inverted index), vectors (cosine,
// exact or with HNSW candidates), metadata filters, weighted or reciprocal-rank fusion, and a
// canonical serialized form. Plain C++: ranking.cc is the N-API layer. The behaviour is specified in
// docs/ranking.md and mirrored by src/native/ranking-reference.ts.
#pragma once
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ranking_hnsw.h"
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
  bool Has(std::string_view id) const { return docById_.count(std::string(id)) != 0; }
  size_t Size() const { return docById_.size(); }
  std::vector<Hit> Search(const Query& q);
  const std::string& Id(uint32_t doc) const { return docs_[doc].id; }
  Stats GetStats() const;

  std::vector<uint8_t> Serialize() const;
  static std::unique_ptr<Index> Load(const uint8_t* data, size_t len);

 private:
  struct Posting {
    uint32_t doc, tf;
  };
  struct DocTerm {
    uint32_t term, tf;
  };
  struct Doc {
    std::string id;
    std::vector<DocTerm> terms;  // in order of first occurrence
    uint32_t kind = 0, session = 0, length = 0;
    uint32_t vector = kNoOwner;  // vector slot
    double time = 0;
    bool live = false;
  };
  struct Term {
    const std::string* text = nullptr;  // the key in termIds_
    std::vector<Posting> postings;
  };
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

  void CheckVector(const std::vector<float>& v, uint32_t dims, const std::string& what) const;
  uint32_t InternTerm(std::string_view text);
  void Insert(DocInput& in);
  // Inserts an already split document (from a serialized index).
  uint32_t InsertSplit(std::string id, const std::vector<DocTerm>& terms, uint32_t kind, uint32_t session, double time);
  void Erase(uint32_t doc);
  void IndexTerms(uint32_t doc);
  void ReleaseVector(uint32_t slot);
  void MaintainGraph();
  void DropGraph();
  bool Better(const Candidate& a, const Candidate& b) const;
  void TopInto(std::vector<Candidate>& heap, size_t cap, Candidate c) const;
  bool Passes(const PreparedFilter& f, uint32_t doc) const;
  void KeywordSide(const std::vector<uint32_t>& terms, const PreparedFilter& f, size_t cap, std::vector<Candidate>& out);
  void VectorSide(const PreparedVector& q, const PreparedFilter& f, size_t cap, std::vector<Candidate>& out);

  Options options_;
  std::vector<Doc> docs_;
  std::vector<uint32_t> freeDocs_;
  std::unordered_map<std::string, uint32_t> docById_;
  std::unordered_map<std::string, uint32_t> termIds_;
  std::vector<Term> terms_;
  std::vector<uint32_t> freeTerms_;
  Names kinds_, sessions_;
  uint64_t totalLength_ = 0;

  VectorStore store_;
  size_t liveVectors_ = 0;
  std::unique_ptr<Graph> graph_;
  std::vector<uint32_t> pendingGraph_;  // vector slots to add to the graph at the end of a mutation
  std::vector<uint32_t> tombstones_;    // vector slots still referenced by the graph

  // Scratch space reused across calls.
  std::vector<uint32_t> termSlot_;
  std::vector<std::string_view> views_;
  std::vector<double> acc_;
  std::vector<double> scores_;
  std::vector<uint32_t> touched_;
  std::vector<uint32_t> seen_;
  std::vector<uint32_t> rowOf_;
  uint32_t stamp_ = 0;
};

}  // namespace ranking
}  // namespace pinclaw
