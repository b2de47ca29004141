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

namespace {

// Removed documents keep their postings and id bytes, and chained postings cost block links and
// padding, until the next compaction; both are held to a fraction of the live index (with a floor,
// so that small indexes are not rebuilt all the time), which also amortizes the rebuild.
constexpr size_t kMinRemoved = 256;
constexpr size_t kMinChainBytes = 64 << 10;

// Grows a vector for `more` elements: exactly when it is empty (a first large batch), else at
// least doubling, so that a series of small batches stays amortized.
template <typename T>
void Grow(std::vector<T>& v, size_t more) {
  size_t want = v.size() + more;
  if (want > v.capacity()) v.reserve(v.empty() ? want : std::max(want, v.capacity() * 2));
}

}  // namespace

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

uint32_t Index::FindDoc(std::string_view id) const {
  return idTable_.Find(id, HashBytes(id), [this](uint32_t d) { return Id(d); });
}

uint32_t Index::FindTerm(std::string_view text) const {
  return termTable_.Find(text, HashBytes(text), [this](uint32_t t) { return TermText(t); });
}

void Index::Put(std::vector<DocInput>& docs, PutMode mode) {
  // Validate the whole batch first.
  uint32_t dims = options_.dimensions;
  std::unordered_set<std::string_view> batch;
  size_t vectors = 0, idBytes = 0;
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
      vectors++;
    }
    idBytes += d.id.size();
  }
  if (dims != options_.dimensions) {
    options_.dimensions = dims;
    store_.Reset(dims, options_.quantization);
  }
  store_.Reserve(vectors);
  Grow(docs_, docs.size());
  Grow(idEnd_, docs.size());
  Grow(idBytes_, idBytes);
  idTable_.Reserve(Size() + docs.size());
  for (DocInput& d : docs) {
    uint32_t old = FindDoc(d.id);
    if (old != kNone) Erase(old);
    Insert(d);
    // Within a batch only removed documents (an upsert removes one) count: compacting chains
    // over and over would make a large batch rebuild its postings a dozen times. Its chains cost
    // under twice what their compact form does, for the length of the batch.
    MaybeCompact(0);
  }
  MaybeCompact(8);
  MaintainGraph();
}

bool Index::Remove(std::string_view id) {
  uint32_t doc = FindDoc(id);
  if (doc == kNone) return false;
  Erase(doc);
  MaybeCompact(8);
  MaintainGraph();
  return true;
}

uint32_t Index::InternTerm(std::string_view text) {
  uint32_t hash = HashBytes(text);
  uint32_t t = termTable_.Find(text, hash, [this](uint32_t id) { return TermText(id); });
  if (t != kNone) return t;
  if (terms_.size() >= kNone) throw Error("too many terms");
  t = uint32_t(terms_.size());
  termText_.insert(termText_.end(), text.begin(), text.end());
  termEnd_.push_back(Offset32(termText_.size()));
  terms_.emplace_back();
  termTable_.Insert(t, hash);
  return t;
}

uint32_t Index::AppendDoc(std::string_view id, uint32_t kind, uint32_t session, double time) {
  if (docs_.size() >= kNone) throw Error("too many documents");
  uint32_t doc = uint32_t(docs_.size());
  idBytes_.insert(idBytes_.end(), id.begin(), id.end());
  idEnd_.push_back(Offset32(idBytes_.size()));
  Doc d;
  d.kind = kind;
  d.session = session;
  d.time = time;
  docs_.push_back(d);
  idTable_.Insert(doc, HashBytes(id));
  return doc;
}

// Zero-filled: the unused end of a block reads as its end.
uint32_t Index::AllocateChainBytes(size_t bytes) {
  uint32_t at = Offset32(chain_.size() + bytes) - uint32_t(bytes);
  chain_.resize(chain_.size() + bytes, 0);
  return at;
}

void Index::AppendPosting(uint32_t t, uint32_t doc, uint32_t tf) {
  if (terms_[t].chain == kNone) {
    uint32_t at = AllocateChainBytes(sizeof(Chain));
    StoreChain(at, Chain{kNone, kNone, 0, 0, 0});
    terms_[t].chain = at;
  }
  const uint32_t header = terms_[t].chain;
  Chain c = LoadChain(header);
  uint8_t buf[kMaxPostingBytes];
  size_t n = PutPosting(buf, c.head == kNone ? -1 : int64_t(c.last), doc, tf);
  if (c.head == kNone || c.used + n > BlockBytes(c.blocks - 1u)) {
    uint32_t at = AllocateChainBytes(BlockBytes(c.blocks));
    std::memcpy(&chain_[at], &kNone, 4);
    if (c.head == kNone) c.head = at;
    else std::memcpy(&chain_[c.tail], &at, 4);
    c.tail = at;
    c.used = 4;
    if (c.blocks < 0xFFFF) c.blocks++;
  }
  std::memcpy(&chain_[c.tail + c.used], buf, n);
  c.used = uint16_t(c.used + n);
  c.last = doc;
  StoreChain(header, c);
  terms_[t].count++;
}

void Index::Insert(DocInput& in) {
  version_++;
  views_.clear();
  SplitTerms(in.text, views_);
  termScratch_.clear();
  for (std::string_view v : views_) termScratch_.push_back(InternTerm(v));
  // Sorted term ids give each distinct term and its frequency; their order carries no meaning.
  std::sort(termScratch_.begin(), termScratch_.end());
  uint32_t doc = AppendDoc(in.id, kinds_.Intern(in.kind), sessions_.Intern(in.session), in.time);
  docs_[doc].length = uint32_t(views_.size());
  totalLength_ += views_.size();
  for (size_t i = 0, n = termScratch_.size(); i < n;) {
    size_t j = i + 1;
    while (j < n && termScratch_[j] == termScratch_[i]) j++;
    AppendPosting(termScratch_[i], doc, uint32_t(j - i));
    i = j;
  }
  if (in.hasVector) {
    uint32_t slot = store_.Allocate(in.vector.data(), doc);
    docs_[doc].vector = slot;
    liveVectors_++;
    if (graph_) pendingGraph_.push_back(slot);
  }
}

// While removed documents wait for a compaction, a term's document frequency takes a pass over its
// postings. Queries tend to repeat terms, so the counts are kept until the next change.
uint32_t Index::LiveCount(uint32_t t) {
  if (removed_ == 0) return terms_[t].count;
  if (liveCountVersion_ != version_) {
    liveCounts_.clear();
    liveCountVersion_ = version_;
  }
  auto it = liveCounts_.find(t);
  if (it != liveCounts_.end()) return it->second;
  uint32_t n = 0;
  ForEachPosting(t, [&](uint32_t doc, uint32_t) { n += docs_[doc].kind != kRemoved; });
  liveCounts_.emplace(t, n);
  return n;
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

// Removal is O(1) and leaves the postings in place: the index keeps no per-document term list
// (it would cost as much as the postings), so the postings of removed documents are skipped when
// read and dropped by the next compaction.
void Index::Erase(uint32_t doc) {
  version_++;
  Doc& d = docs_[doc];
  idTable_.Erase(doc, HashBytes(Id(doc)));
  totalLength_ -= d.length;
  kinds_.Release(d.kind);
  sessions_.Release(d.session);
  if (d.vector != kNoOwner) ReleaseVector(d.vector);
  d.vector = kNoOwner;
  d.kind = kRemoved;
  removed_++;
}

void Index::MaybeCompact(size_t chainShare) {
  bool stale = removed_ > std::max<size_t>(kMinRemoved, Size() / 4);
  bool chained = chainShare && chain_.size() > std::max<size_t>(kMinChainBytes, compact_.size() / chainShare);
  if (stale || chained) Compact();
}

// Rewrites the index without removed documents: documents renumbered in their order (so posting
// lists stay sorted), every term's postings in one compact run, terms without live postings
// dropped. Everything new is built before anything old is touched, so running out of memory
// here leaves the index as it was.
void Index::Compact() {
  version_++;
  const size_t n = docs_.size();
  std::vector<uint32_t> number(n, kNone);
  uint32_t live = 0;
  size_t liveIdBytes = 0;
  for (uint32_t d = 0; d < n; d++) {
    if (docs_[d].kind == kRemoved) continue;
    number[d] = live++;
    liveIdBytes += Id(d).size();
  }

  // Renumbering and merging only shorten gaps, so the old sizes bound the new one; the slack is
  // given back below. Written through a pointer: this loop is most of a compaction's time.
  std::vector<uint8_t> compact(compact_.size() + chain_.size());
  uint8_t* out = compact.data();
  std::vector<uint32_t> compactEnd, termEnd, termNumber(terms_.size(), kNone), dropped;
  std::vector<Term> terms;
  std::vector<char> termText;
  compactEnd.reserve(terms_.size());
  termEnd.reserve(terms_.size());
  terms.reserve(terms_.size());
  termText.reserve(termText_.size());
  for (uint32_t t = 0; t < terms_.size(); t++) {
    int64_t prev = -1;
    uint32_t count = 0;
    ForEachPosting(t, [&](uint32_t doc, uint32_t tf) {
      uint32_t to = number[doc];
      if (to == kNone) return;
      out += PutPosting(out, prev, to, tf);
      prev = to;
      count++;
    });
    if (count == 0) {
      dropped.push_back(t);
      continue;
    }
    termNumber[t] = uint32_t(terms.size());
    terms.push_back(Term{count, kNone});
    compactEnd.push_back(Offset32(size_t(out - compact.data())));
    std::string_view text = TermText(t);
    termText.insert(termText.end(), text.begin(), text.end());
    termEnd.push_back(uint32_t(termText.size()));
  }
  compact.resize(size_t(out - compact.data()));

  std::vector<Doc> docs;
  std::vector<char> idBytes;
  std::vector<uint32_t> idEnd;
  docs.reserve(live + (docs_.capacity() - docs_.size()));
  idEnd.reserve(live + (idEnd_.capacity() - idEnd_.size()));
  idBytes.reserve(liveIdBytes + (idBytes_.capacity() - idBytes_.size()));
  for (uint32_t d = 0; d < n; d++) {
    if (number[d] == kNone) continue;
    docs.push_back(docs_[d]);
    std::string_view id = Id(d);
    idBytes.insert(idBytes.end(), id.begin(), id.end());
    idEnd.push_back(uint32_t(idBytes.size()));
  }

  // Commit: nothing below allocates.
  for (uint32_t t : dropped) termTable_.Erase(t, HashBytes(TermText(t)));
  termTable_.Remap([&](uint32_t t) { return termNumber[t]; });
  idTable_.Remap([&](uint32_t d) { return number[d]; });
  for (const Doc& d : docs)
    if (d.vector != kNoOwner) store_.set_owner(d.vector, number[store_.owner(d.vector)]);
  docs_.swap(docs);
  idBytes_.swap(idBytes);
  idEnd_.swap(idEnd);
  terms_.swap(terms);
  termText_.swap(termText);
  termEnd_.swap(termEnd);
  compact_.swap(compact);
  compactEnd_.swap(compactEnd);
  std::vector<uint8_t>().swap(chain_);
  removed_ = 0;
  if (acc_.size() > docs_.size() * 2) std::vector<double>().swap(acc_);
  // The bound above can be loose (removed documents, chain links and padding).
  compact_.shrink_to_fit();

  // Vector slots freed by removals are reused by later adds; when many stay free, close the gaps.
  // Slots are the HNSW graph's keys, so only without a graph (which removals rebuild or drop).
  if (!graph_ && store_.free_slots() > std::max<size_t>(kMinRemoved, store_.slots() / 4)) {
    std::vector<uint32_t> moved = store_.Compact();
    for (Doc& d : docs_)
      if (d.vector != kNoOwner) d.vector = moved[d.vector];
  }
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
  return Id(a.doc) < Id(b.doc);
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
  // lenNorm depends on the document's length alone: each short length is computed once per query
  // (the same expression, so the same bits) instead of a division per posting.
  lenNorm_.assign(kLenNormCache, NAN);
  // The loop works on local copies of pointers and constants: node-gyp compiles with
  // -fno-strict-aliasing, so through `this` every store to acc would reload them.
  const Doc* docs = docs_.data();
  double* acc = acc_.data();
  double* lenNorms = lenNorm_.data();
  std::vector<uint32_t>* touched = &touched_;
  auto score = [=](double idf, auto skipRemoved) {
    return [=](uint32_t doc, uint32_t tfCount) {
      const Doc& d = docs[doc];
      if (skipRemoved && d.kind == kRemoved) return;
      double lenNorm;
      if (d.length < kLenNormCache) {
        lenNorm = lenNorms[d.length];
        if (std::isnan(lenNorm)) lenNorm = lenNorms[d.length] = k1 * (1 - b + (b * double(d.length)) / avgdl);
      } else {
        lenNorm = k1 * (1 - b + (b * double(d.length)) / avgdl);
      }
      const double tf = double(tfCount);
      if (acc[doc] == 0) touched->push_back(doc);
      acc[doc] += idf * ((tf * (k1 + 1)) / (tf + lenNorm));
    };
  };
  for (uint32_t t : terms) {
    const double df = double(LiveCount(t));
    const double idf = std::log(1 + (n - df + 0.5) / (df + 0.5));
    if (removed_) ForEachPosting(t, score(idf, std::true_type()));
    else ForEachPosting(t, score(idf, std::false_type()));
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
    // Each thread keeps the best `cap` of its share of the slots. Candidates are totally ordered
    // (score, then the unique id), so the best `cap` of the union is the same however the slots
    // were split. A NaN cosine (float32 overflow in the dot product) is not a candidate.
    const size_t slots = store_.slots();
    auto scan = [&](size_t from, size_t to, std::vector<Candidate>* heap) {
      for (size_t s = from; s < to; s++) {
        uint32_t doc = store_.owner(uint32_t(s));
        if (doc == kNoOwner || !Passes(f, doc)) continue;
        double c = store_.Cosine(q, uint32_t(s));
        if (!std::isnan(c)) TopInto(*heap, cap, {c, doc});
      }
    };
    size_t threads = std::min<size_t>(ScanThreads(), slots / kScanSlotsPerThread);
    if (threads <= 1) {
      scan(0, slots, &out);
    } else {
      std::vector<std::vector<Candidate>> heaps(threads);
      std::vector<std::thread> pool;
      size_t per = (slots + threads - 1) / threads;
      for (size_t t = 1; t < threads; t++) pool.emplace_back(scan, t * per, std::min(slots, (t + 1) * per), &heaps[t]);
      scan(0, per, &heaps[0]);
      for (auto& th : pool) th.join();
      for (const auto& heap : heaps)
        for (const Candidate& c : heap) TopInto(out, cap, c);
    }
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
    uint32_t t = FindTerm(v);
    if (t != kNone && std::find(terms.begin(), terms.end(), t) == terms.end()) terms.push_back(t);
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

  // The union of both candidate lists, each document once, with both raw scores. Sorting by
  // document number pairs them up without a per-document table; the order of the rows does not
  // matter (min, max and the final ordering do not depend on it).
  struct Row {
    uint32_t doc;
    double keyword, vector;            // vector NaN: no vector to compare
    uint32_t rankKeyword, rankVector;  // 1-based; 0: not in that list
  };
  std::vector<Row> rows;
  rows.reserve(vector.size() + keyword.size());
  for (size_t i = 0; i < vector.size(); i++)
    rows.push_back({vector[i].doc, NAN, vector[i].score, 0, uint32_t(i + 1)});
  for (size_t i = 0; i < keyword.size(); i++) rows.push_back({keyword[i].doc, NAN, NAN, uint32_t(i + 1), 0});
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.doc < b.doc; });
  size_t w = 0;
  for (size_t i = 0; i < rows.size(); i++) {
    if (w > 0 && rows[w - 1].doc == rows[i].doc) {
      Row& r = rows[w - 1];
      if (rows[i].rankVector) r.vector = rows[i].vector, r.rankVector = rows[i].rankVector;
      if (rows[i].rankKeyword) r.rankKeyword = rows[i].rankKeyword;
    } else {
      rows[w++] = rows[i];
    }
  }
  rows.resize(w);
  for (Row& r : rows) {
    r.keyword = hasText ? acc_[r.doc] : NAN;
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
  // A term whose every posting belongs to a removed document no longer counts.
  if (removed_ == 0) {
    s.terms = termTable_.size();
  } else {
    for (uint32_t t = 0; t < terms_.size(); t++) {
      bool any = false;
      ForEachPosting(t, [&](uint32_t doc, uint32_t) { any = any || docs_[doc].kind != kRemoved; });
      s.terms += any;
    }
  }
  s.graphNodes = graph_ ? graph_->size() : 0;
  s.graphTombstones = tombstones_.size();
  s.dimensions = options_.dimensions;
  size_t bytes = docs_.capacity() * sizeof(Doc) + idBytes_.capacity() + idEnd_.capacity() * sizeof(uint32_t) +
                 idTable_.MemoryBytes();
  bytes += terms_.capacity() * sizeof(Term) + termText_.capacity() + termEnd_.capacity() * sizeof(uint32_t) +
           termTable_.MemoryBytes();
  bytes += compact_.capacity() + compactEnd_.capacity() * sizeof(uint32_t) + chain_.capacity();
  bytes += acc_.capacity() * sizeof(double) + touched_.capacity() * sizeof(uint32_t) +
           lenNorm_.capacity() * sizeof(double) + liveCounts_.size() * 32 + liveCounts_.bucket_count() * sizeof(void*);
  // Kinds and sessions: hash nodes (key string, value, link, cached hash) and the side tables.
  for (const Names* names : {&kinds_, &sessions_}) {
    for (const auto& kv : names->ids) bytes += 64 + (kv.first.size() > 15 ? kv.first.capacity() : 0);
    bytes += names->ids.bucket_count() * sizeof(void*) + names->names.capacity() * 12;
  }
  bytes += store_.MemoryBytes();
  if (graph_) bytes += graph_->MemoryBytes();
  s.memoryBytes = bytes;
  return s;
}

}  // namespace ranking
}  // namespace pinclaw
