// Documents, the inverted index, the vector side and fusion. Every formula here has a twin in
// src/native/ranking-reference.ts, written in the same order of operations so that scores agree.
#include "ranking_index.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>
#include <unordered_set>

#include "ranking_error.h"
#include "ranking_text.h"

namespace pinclaw {
namespace ranking {

namespace {

// JavaScript's String(x) for the non-finite values, so messages match the reference.
std::string NonFinite(double x) {
  if (std::isnan(x)) return "NaN";
  return x > 0 ? "Infinity" : "-Infinity";
}

// An exact scan is split across threads only when each gets at least this many vectors: below
// that, starting a thread costs more than it saves.
constexpr size_t kScanSlotsPerThread = 2048;

size_t ScanThreads() {
  static const size_t n = std::max<size_t>(1, std::min<size_t>(std::thread::hardware_concurrency(), 4));
  return n;
}

}  // namespace

void ValidateOptions(const Options& o, const std::string& prefix) {
  auto fail = [&](const char* what) { throw Error(prefix + what, Error::kRange); };
  if (o.dimensions > kMaxDimensions) fail("dimensions must be an integer from 0 to 65536");
  if (o.quantization != Quantization::F32 && o.quantization != Quantization::I8) fail("quantization must be 'f32' or 'i8'");
  if (!std::isfinite(o.k1) || o.k1 < 0) fail("k1 must be a finite number >= 0");
  if (!std::isfinite(o.b) || o.b < 0 || o.b > 1) fail("b must be a number from 0 to 1");
  if (o.connectivity < 2 || o.connectivity > 64) fail("connectivity must be an integer from 2 to 64");
  if (o.expansionAdd < 1 || o.expansionAdd > 4096) fail("expansionAdd must be an integer from 1 to 4096");
  if (o.expansionSearch < 1 || o.expansionSearch > 4096) fail("expansionSearch must be an integer from 1 to 4096");
}

uint32_t Index::Names::Intern(const std::string& s) {
  auto it = ids.find(s);
  if (it != ids.end()) {
    refs[it->second]++;
    return it->second;
  }
  uint32_t id;
  if (!free.empty()) {
    id = free.back();
    free.pop_back();
  } else {
    id = uint32_t(names.size());
    names.push_back(nullptr);
    refs.push_back(0);
  }
  auto inserted = ids.emplace(s, id).first;
  names[id] = &inserted->first;
  refs[id] = 1;
  return id;
}

void Index::Names::Release(uint32_t id) {
  if (--refs[id] != 0) return;
  ids.erase(ids.find(*names[id]));  // by iterator: the key argument would be the erased node's own
  names[id] = nullptr;
  free.push_back(id);
}

int64_t Index::Names::Find(const std::string& s) const {
  auto it = ids.find(s);
  return it == ids.end() ? -1 : int64_t(it->second);
}

Index::Index(const Options& options) : options_(options), store_(options.dimensions, options.quantization) {
  ValidateOptions(options_, "");
}

Index::~Index() = default;

void Index::CheckVector(const std::vector<float>& v, uint32_t dims, const std::string& what) const {
  if (v.size() != dims)
    throw Error(what + " has " + std::to_string(v.size()) + " dimensions, the index has " + std::to_string(dims), Error::kRange);
  double sum = 0;
  for (size_t i = 0; i < v.size(); i++) {
    if (!std::isfinite(v[i])) throw Error(what + " component " + std::to_string(i) + " is " + NonFinite(v[i]), Error::kRange);
    sum += double(v[i]) * double(v[i]);
  }
  if (sum == 0) throw Error(what + " has zero length", Error::kRange);
}

void Index::Put(std::vector<DocInput>& docs, PutMode mode) {
  // Validate the whole batch first.
  uint32_t dims = options_.dimensions;
  std::unordered_set<std::string_view> batch;
  for (const DocInput& d : docs) {
    if (d.id.empty()) throw Error("document id must not be empty", Error::kType);
    std::string who = "document '" + d.id + "'";
    if (!batch.insert(d.id).second) throw Error(who + " appears twice in one batch", Error::kRange);
    bool exists = Has(d.id);
    if (mode == PutMode::kAdd && exists) throw Error(who + " already exists", Error::kRange);
    if (mode == PutMode::kUpdate && !exists) throw Error(who + " does not exist", Error::kRange);
    if (!std::isfinite(d.time)) throw Error(who + ": time must be a finite number", Error::kRange);
    if (d.hasVector) {
      if (dims == 0) {
        if (d.vector.empty() || d.vector.size() > kMaxDimensions)
          throw Error(who + ": vector must have from 1 to 65536 dimensions", Error::kRange);
        dims = uint32_t(d.vector.size());
      }
      CheckVector(d.vector, dims, who + ": vector");
    }
  }
  if (dims != options_.dimensions) {
    options_.dimensions = dims;
    store_.Reset(dims, options_.quantization);
  }
  for (DocInput& d : docs) {
    auto it = docById_.find(d.id);
    if (it != docById_.end()) Erase(it->second);
    Insert(d);
  }
  MaintainGraph();
}

bool Index::Remove(std::string_view id) {
  auto it = docById_.find(std::string(id));
  if (it == docById_.end()) return false;
  Erase(it->second);
  MaintainGraph();
  return true;
}

uint32_t Index::InternTerm(std::string_view text) {
  std::string key(text);
  auto it = termIds_.find(key);
  if (it != termIds_.end()) return it->second;
  uint32_t id;
  if (!freeTerms_.empty()) {
    id = freeTerms_.back();
    freeTerms_.pop_back();
  } else {
    id = uint32_t(terms_.size());
    terms_.emplace_back();
  }
  auto inserted = termIds_.emplace(std::move(key), id).first;
  terms_[id].text = &inserted->first;
  return id;
}

void Index::Insert(DocInput& in) {
  views_.clear();
  SplitTerms(in.text, views_);
  std::vector<DocTerm> terms;
  if (termSlot_.size() < terms_.size() + views_.size()) termSlot_.resize(terms_.size() + views_.size(), 0);
  for (std::string_view v : views_) {
    uint32_t t = InternTerm(v);
    if (termSlot_.size() <= t) termSlot_.resize(t + 1, 0);
    if (termSlot_[t] == 0) {
      terms.push_back({t, 1});
      termSlot_[t] = uint32_t(terms.size());
    } else {
      terms[termSlot_[t] - 1].tf++;
    }
  }
  for (const DocTerm& dt : terms) termSlot_[dt.term] = 0;
  uint32_t doc = InsertSplit(std::move(in.id), terms, kinds_.Intern(in.kind), sessions_.Intern(in.session), in.time);
  if (in.hasVector) {
    uint32_t slot = store_.Allocate(in.vector.data(), doc);
    docs_[doc].vector = slot;
    liveVectors_++;
    if (graph_) pendingGraph_.push_back(slot);
  }
}

uint32_t Index::InsertSplit(std::string id, const std::vector<DocTerm>& terms, uint32_t kind, uint32_t session, double time) {
  uint32_t doc;
  if (!freeDocs_.empty()) {
    doc = freeDocs_.back();
    freeDocs_.pop_back();
  } else {
    doc = uint32_t(docs_.size());
    docs_.emplace_back();
  }
  Doc& d = docs_[doc];
  d.id = std::move(id);
  d.terms = terms;
  d.kind = kind;
  d.session = session;
  d.time = time;
  d.vector = kNoOwner;
  d.live = true;
  d.length = 0;
  for (const DocTerm& dt : terms) d.length += dt.tf;
  totalLength_ += d.length;
  docById_.emplace(d.id, doc);
  IndexTerms(doc);
  return doc;
}

void Index::IndexTerms(uint32_t doc) {
  for (const DocTerm& dt : docs_[doc].terms) terms_[dt.term].postings.push_back({doc, dt.tf});
}

void Index::ReleaseVector(uint32_t slot) {
  liveVectors_--;
  // A slot in the graph keeps its vector: the graph still routes through it until it is rebuilt.
  if (graph_) {
    store_.set_owner(slot, kNoOwner);
    tombstones_.push_back(slot);
  } else {
    store_.Free(slot);
  }
}

void Index::Erase(uint32_t doc) {
  Doc& d = docs_[doc];
  for (const DocTerm& dt : d.terms) {
    Term& term = terms_[dt.term];
    auto& p = term.postings;
    for (size_t i = 0; i < p.size(); i++) {
      if (p[i].doc == doc) {
        // Posting order carries no meaning (scores are summed per document), so swap-remove.
        p[i] = p.back();
        p.pop_back();
        break;
      }
    }
    if (p.empty()) {
      std::vector<Posting>().swap(p);
      termIds_.erase(termIds_.find(*term.text));
      term.text = nullptr;
      freeTerms_.push_back(dt.term);
    }
  }
  totalLength_ -= d.length;
  kinds_.Release(d.kind);
  sessions_.Release(d.session);
  if (d.vector != kNoOwner) ReleaseVector(d.vector);
  docById_.erase(d.id);
  std::string().swap(d.id);
  std::vector<DocTerm>().swap(d.terms);
  d.vector = kNoOwner;
  d.live = false;
  freeDocs_.push_back(doc);
}

void Index::DropGraph() {
  graph_.reset();
  pendingGraph_.clear();
  for (uint32_t slot : tombstones_) store_.Free(slot);
  tombstones_.clear();
}

void Index::MaintainGraph() {
  if (graph_) {
    bool stale = tombstones_.size() > std::max<size_t>(256, graph_->size() / 4);
    bool small = liveVectors_ <= options_.hnswThreshold / 2;
    if (stale || small) {
      DropGraph();
    } else if (!pendingGraph_.empty()) {
      try {
        graph_->Add(pendingGraph_);
        pendingGraph_.clear();
      } catch (...) {
        DropGraph();  // exact search stays correct without it
        throw;
      }
    }
  }
  if (!graph_ && liveVectors_ > options_.hnswThreshold) {
    std::vector<uint32_t> slots;
    slots.reserve(liveVectors_);
    for (uint32_t s = 0; s < store_.slots(); s++)
      if (store_.owner(s) != kNoOwner) slots.push_back(s);
    try {
      graph_.reset(new Graph(store_, GraphParams{options_.connectivity, options_.expansionAdd}));
      graph_->Add(slots);
    } catch (...) {
      graph_.reset();
      throw;
    }
  }
}

struct Index::PreparedFilter {
  bool any = false;  // some condition is set
  bool byKind = false, bySession = false;
  std::vector<uint8_t> kinds, sessions;  // indexed by name id
  double since, until;
};

bool Index::Passes(const PreparedFilter& f, uint32_t doc) const {
  if (!f.any) return true;
  const Doc& d = docs_[doc];
  if (f.byKind && (d.kind >= f.kinds.size() || !f.kinds[d.kind])) return false;
  if (f.bySession && (d.session >= f.sessions.size() || !f.sessions[d.session])) return false;
  return d.time >= f.since && d.time < f.until;
}

// Higher score first; equal scores by id, in code point order (UTF-8 byte order is code point order).
bool Index::Better(const Candidate& a, const Candidate& b) const {
  if (a.score != b.score) return a.score > b.score;
  return docs_[a.doc].id < docs_[b.doc].id;
}

// Keeps the `cap` best candidates in a heap whose top is the worst of them.
void Index::TopInto(std::vector<Candidate>& heap, size_t cap, Candidate c) const {
  auto cmp = [this](const Candidate& a, const Candidate& b) { return Better(a, b); };
  if (heap.size() < cap) {
    heap.push_back(c);
    std::push_heap(heap.begin(), heap.end(), cmp);
  } else if (Better(c, heap.front())) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    heap.back() = c;
    std::push_heap(heap.begin(), heap.end(), cmp);
  }
}

void Index::KeywordSide(const std::vector<uint32_t>& terms, const PreparedFilter& f, size_t cap, std::vector<Candidate>& out) {
  const double n = double(Size());
  const double avgdl = double(totalLength_) / n;
  const double k1 = options_.k1, b = options_.b;
  if (acc_.size() < docs_.size()) acc_.resize(docs_.size(), 0);
  for (uint32_t t : terms) {
    const auto& postings = terms_[t].postings;
    const double df = double(postings.size());
    const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
    for (const Posting& p : postings) {
      const double tf = double(p.tf);
      const double lenNorm = k1 * (1 - b + (b * double(docs_[p.doc].length)) / avgdl);
      if (acc_[p.doc] == 0) touched_.push_back(p.doc);
      acc_[p.doc] += idf * ((tf * (k1 + 1)) / (tf + lenNorm));
    }
  }
  for (uint32_t doc : touched_)
    if (Passes(f, doc)) TopInto(out, cap, {acc_[doc], doc});
  std::sort(out.begin(), out.end(), [this](const Candidate& a, const Candidate& c) { return Better(a, c); });
}

void Index::VectorSide(const PreparedVector& q, const PreparedFilter& f, size_t cap, std::vector<Candidate>& out) {
  size_t passing = liveVectors_;
  if (f.any) {
    passing = 0;
    for (uint32_t s = 0; s < store_.slots(); s++) {
      uint32_t doc = store_.owner(s);
      if (doc != kNoOwner && Passes(f, doc)) passing++;
    }
  }
  if (passing == 0) return;
  if (graph_ && passing > options_.hnswThreshold) {
    // A selective filter leaves fewer matches per visited node: widen the search to compensate.
    size_t widen = (liveVectors_ + passing - 1) / passing;
    size_t expansion = std::min<size_t>(std::max<size_t>(options_.expansionSearch, cap) * widen, 4096);
    struct Ctx {
      const Index* self;
      const PreparedFilter* f;
    } ctx{this, &f};
    auto accept = [](const void* c, uint32_t slot) {
      const Ctx& x = *static_cast<const Ctx*>(c);
      uint32_t doc = x.self->store_.owner(slot);
      return doc != kNoOwner && x.self->Passes(*x.f, doc);
    };
    std::vector<uint32_t> slots;
    graph_->Search(q, cap, expansion, accept, &ctx, slots);
    for (uint32_t s : slots) TopInto(out, cap, {store_.Cosine(q, s), store_.owner(s)});
  } else {
    // Scores are computed on several cores (read-only work); selecting the best stays on this
    // thread, so the result does not depend on how the slots were split.
    const size_t slots = store_.slots();
    if (scores_.size() < slots) scores_.resize(slots);
    auto score = [&](size_t from, size_t to) {
      for (size_t s = from; s < to; s++) {
        uint32_t doc = store_.owner(uint32_t(s));
        scores_[s] = doc != kNoOwner && Passes(f, doc) ? store_.Cosine(q, uint32_t(s)) : NAN;
      }
    };
    size_t threads = std::min<size_t>(ScanThreads(), slots / kScanSlotsPerThread);
    if (threads <= 1) {
      score(0, slots);
    } else {
      std::vector<std::thread> pool;
      size_t per = (slots + threads - 1) / threads;
      for (size_t t = 1; t < threads; t++) pool.emplace_back(score, t * per, std::min(slots, (t + 1) * per));
      score(0, per);
      for (auto& th : pool) th.join();
    }
    for (size_t s = 0; s < slots; s++)
      if (!std::isnan(scores_[s])) TopInto(out, cap, {scores_[s], store_.owner(uint32_t(s))});
  }
  std::sort(out.begin(), out.end(), [this](const Candidate& a, const Candidate& c) { return Better(a, c); });
}

std::vector<Hit> Index::Search(const Query& q) {
  std::vector<Hit> hits;
  // Distinct query terms that exist, in order of first occurrence.
  views_.clear();
  SplitTerms(q.text, views_);
  const bool hasText = !views_.empty();
  std::vector<uint32_t> terms;
  for (std::string_view v : views_) {
    auto it = termIds_.find(std::string(v));
    if (it != termIds_.end() && std::find(terms.begin(), terms.end(), it->second) == terms.end()) terms.push_back(it->second);
  }
  const bool hasVector = q.hasVector;
  if (hasVector && options_.dimensions != 0) CheckVector(q.vector, options_.dimensions, "query vector");
  else if (hasVector) CheckVector(q.vector, uint32_t(q.vector.size()), "query vector");
  if ((!hasText && !hasVector) || Size() == 0) return hits;

  PreparedFilter f;
  f.byKind = q.filter.byKind;
  f.bySession = q.filter.bySession;
  f.since = q.filter.since;
  f.until = q.filter.until;
  f.any = f.byKind || f.bySession || f.since != -INFINITY || f.until != INFINITY;
  if (f.byKind) {
    f.kinds.assign(kinds_.names.size(), 0);
    for (const auto& k : q.filter.kinds)
      if (int64_t id = kinds_.Find(k); id >= 0) f.kinds[size_t(id)] = 1;
  }
  if (f.bySession) {
    f.sessions.assign(sessions_.names.size(), 0);
    for (const auto& s : q.filter.sessions)
      if (int64_t id = sessions_.Find(s); id >= 0) f.sessions[size_t(id)] = 1;
  }

  const size_t k = q.k;
  const size_t cap = std::max<size_t>(k, q.candidates ? q.candidates : std::max<size_t>(4 * k, 50));
  std::vector<Candidate> keyword, vector;
  touched_.clear();
  if (hasText) KeywordSide(terms, f, cap, keyword);
  PreparedVector pq;
  const bool vectorsComparable = hasVector && options_.dimensions != 0 && liveVectors_ > 0;
  if (vectorsComparable) {
    store_.Prepare(q.vector.data(), pq);
    VectorSide(pq, f, cap, vector);
  }

  // The union of both candidate lists, each document once, with both raw scores.
  if (seen_.size() < docs_.size()) {
    seen_.resize(docs_.size(), 0);
    rowOf_.resize(docs_.size(), 0);
  }
  if (++stamp_ == 0) {
    std::fill(seen_.begin(), seen_.end(), 0);
    stamp_ = 1;
  }
  struct Row {
    uint32_t doc;
    double keyword, vector;            // vector NaN: no vector to compare
    uint32_t rankKeyword, rankVector;  // 1-based; 0: not in that list
  };
  std::vector<Row> rows;
  auto rowFor = [&](uint32_t doc) -> Row& {
    if (seen_[doc] == stamp_) return rows[rowOf_[doc]];
    seen_[doc] = stamp_;
    rowOf_[doc] = uint32_t(rows.size());
    rows.push_back({doc, hasText ? acc_[doc] : NAN, NAN, 0, 0});
    return rows.back();
  };
  for (size_t i = 0; i < vector.size(); i++) {
    Row& r = rowFor(vector[i].doc);
    r.vector = vector[i].score;
    r.rankVector = uint32_t(i + 1);
  }
  for (size_t i = 0; i < keyword.size(); i++) rowFor(keyword[i].doc).rankKeyword = uint32_t(i + 1);
  for (Row& r : rows) {
    uint32_t slot = docs_[r.doc].vector;
    if (r.rankVector == 0 && vectorsComparable && slot != kNoOwner) r.vector = store_.Cosine(pq, slot);
  }
  for (uint32_t doc : touched_) acc_[doc] = 0;

  std::vector<Candidate> fused;
  fused.reserve(rows.size());
  if (q.fusion == Fusion::kRrf) {
    for (const Row& r : rows) {
      double s = 0;
      if (r.rankVector) s += 1 / (q.rrfK + double(r.rankVector));
      if (r.rankKeyword) s += 1 / (q.rrfK + double(r.rankKeyword));
      fused.push_back({s, r.doc});
    }
  } else {
    double wv = q.wVector, wk = q.wKeyword;
    if (!hasText) wv = 1, wk = 0;
    else if (!hasVector) wv = 0, wk = 1;
    else {
      double total = wv + wk;
      wv = wv / total;
      wk = wk / total;
    }
    double maxK = 0, minV = INFINITY, maxV = -INFINITY;
    for (const Row& r : rows) {
      if (hasText && r.keyword > maxK) maxK = r.keyword;
      if (!std::isnan(r.vector)) {
        minV = std::min(minV, r.vector);
        maxV = std::max(maxV, r.vector);
      }
    }
    for (const Row& r : rows) {
      double nk = hasText && maxK > 0 ? r.keyword / maxK : 0;
      double nv = std::isnan(r.vector) ? 0 : maxV > minV ? (r.vector - minV) / (maxV - minV) : 1;
      fused.push_back({wv * nv + wk * nk, r.doc});
    }
  }
  std::vector<size_t> order(fused.size());
  for (size_t i = 0; i < order.size(); i++) order[i] = i;
  size_t take = std::min(k, order.size());
  std::partial_sort(order.begin(), order.begin() + std::ptrdiff_t(take), order.end(),
                    [&](size_t a, size_t b) { return Better(fused[a], fused[b]); });
  for (size_t i = 0; i < take; i++) {
    const Row& r = rows[order[i]];
    hits.push_back({r.doc, fused[order[i]].score, r.keyword, r.vector});
  }
  return hits;
}

Stats Index::GetStats() const {
  Stats s{};
  s.documents = Size();
  s.vectors = liveVectors_;
  s.terms = termIds_.size();
  s.graphNodes = graph_ ? graph_->size() : 0;
  s.graphTombstones = tombstones_.size();
  s.dimensions = options_.dimensions;
  size_t bytes = docs_.capacity() * sizeof(Doc) + terms_.capacity() * sizeof(Term) + acc_.capacity() * sizeof(double) +
                 seen_.capacity() * sizeof(uint32_t);
  for (const Doc& d : docs_) bytes += d.terms.capacity() * sizeof(DocTerm) + (d.id.size() > 15 ? d.id.capacity() : 0);
  for (const Term& t : terms_) bytes += t.postings.capacity() * sizeof(Posting);
  // Hash nodes: key string, value, next pointer and cached hash, roughly.
  for (const auto& kv : termIds_) bytes += 48 + (kv.first.size() > 15 ? kv.first.capacity() : 0);
  bytes += docById_.size() * 48 + (termIds_.bucket_count() + docById_.bucket_count()) * sizeof(void*);
  bytes += store_.MemoryBytes();
  if (graph_) bytes += graph_->MemoryBytes();
  s.memoryBytes = bytes;
  return s;
}

}  // namespace ranking
}  // namespace pinclaw
