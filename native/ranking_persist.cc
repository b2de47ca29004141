// The serialized form of the ranking index (docs/ranking.md, "Serialized form"). It is canonical:
// documents sorted by id, names numbered in order of first use, terms in byte order, so the same
// documents give the same bytes whatever their history, and the TypeScript reference writes the
// same bytes. Postings are stored as the index holds them in memory (varints by document ordinal),
// so a load numbers documents by ordinal and copies each validated list as it is: no
// re-tokenizing, no re-encoding. The HNSW graph, when there is one, follows in an optional section
// that the reference skips.
#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "ranking_codec.h"
#include "ranking_error.h"
#include "ranking_index.h"

namespace pinclaw {
namespace ranking {

namespace {
constexpr char kMagic[4] = {'P', 'C', 'R', 'I'};
// 2: terms in byte order with postings (varints) instead of per-document term lists.
constexpr uint32_t kVersion = 2;
constexpr size_t kHeaderBytes = 24;
}  // namespace

std::vector<uint8_t> Index::Serialize() const {
  std::vector<uint32_t> order;
  order.reserve(Size());
  for (uint32_t d = 0; d < docs_.size(); d++)
    if (docs_[d].kind != kRemoved) order.push_back(d);
  std::sort(order.begin(), order.end(), [this](uint32_t a, uint32_t b) { return Id(a) < Id(b); });

  // Canonical numbering: kinds and sessions in order of first use over the sorted documents.
  constexpr uint32_t kUnset = 0xFFFFFFFFu;
  std::vector<uint32_t> kindMap(kinds_.names.size(), kUnset), sessionMap(sessions_.names.size(), kUnset),
      docOrdinal(docs_.size(), kUnset);
  std::vector<const std::string*> kindList, sessionList;
  for (uint32_t i = 0; i < order.size(); i++) {
    const Doc& d = docs_[order[i]];
    docOrdinal[order[i]] = i;
    if (kindMap[d.kind] == kUnset) kindMap[d.kind] = uint32_t(kindList.size()), kindList.push_back(kinds_.names[d.kind]);
    if (sessionMap[d.session] == kUnset)
      sessionMap[d.session] = uint32_t(sessionList.size()), sessionList.push_back(sessions_.names[d.session]);
  }

  std::vector<uint8_t> out(kHeaderBytes, 0);
  Writer w(out);
  w.U32(options_.dimensions);
  w.U8(uint8_t(options_.quantization));
  w.U8(0);
  w.U8(0);
  w.U8(0);
  w.F64(options_.k1);
  w.F64(options_.b);
  w.U32(options_.hnswThreshold);
  w.U32(options_.connectivity);
  w.U32(options_.expansionAdd);
  w.U32(options_.expansionSearch);
  for (const auto* list : {&kindList, &sessionList}) {
    w.U32(uint32_t(list->size()));
    for (const std::string* s : *list) w.Str(*s);
  }
  w.U32(uint32_t(order.size()));
  for (uint32_t doc : order) {
    const Doc& d = docs_[doc];
    w.Str(Id(doc));
    w.U32(kindMap[d.kind]);
    w.U32(sessionMap[d.session]);
    w.F64(d.time);
    w.U8(d.vector != kNoOwner ? 1 : 0);
    if (d.vector != kNoOwner) w.Bytes(store_.Raw(d.vector), store_.RawBytes());
  }

  // Terms in byte order, each with its postings by document ordinal. Internal numbers follow
  // insertion, not ids, so a list is re-sorted unless it already is (after a load it is).
  std::vector<uint32_t> termOrder(terms_.size());
  for (uint32_t t = 0; t < terms_.size(); t++) termOrder[t] = t;
  std::sort(termOrder.begin(), termOrder.end(), [this](uint32_t a, uint32_t b) { return TermText(a) < TermText(b); });
  const size_t countAt = w.size();
  w.U32(0);
  uint32_t written = 0;
  std::vector<uint64_t> list;  // ordinal << 32 | tf
  for (uint32_t t : termOrder) {
    list.clear();
    bool sorted = true;
    ForEachPosting(t, [&](uint32_t doc, uint32_t tf) {
      uint32_t ordinal = docOrdinal[doc];
      if (ordinal == kUnset) return;  // a removed document
      uint64_t entry = uint64_t(ordinal) << 32 | tf;
      if (!list.empty() && entry < list.back()) sorted = false;
      list.push_back(entry);
    });
    if (list.empty()) continue;
    if (!sorted) std::sort(list.begin(), list.end());
    w.Str(TermText(t));
    w.U32(uint32_t(list.size()));
    const size_t bytesAt = w.size();
    w.U32(0);
    int64_t prev = -1;
    for (uint64_t entry : list) {
      uint8_t buf[kMaxPostingBytes];
      uint32_t ordinal = uint32_t(entry >> 32);
      w.Bytes(buf, PutPosting(buf, prev, ordinal, uint32_t(entry)));
      prev = ordinal;
    }
    w.PatchU32(bytesAt, uint32_t(w.size() - bytesAt - 4));
    written++;
  }
  w.PatchU32(countAt, written);

  w.U8(graph_ ? 1 : 0);
  if (graph_) {
    // Graph keys are vector slots; they are written as references to documents (their ordinal)
    // or to the removed vectors the graph still routes through (after the documents).
    size_t nodes = graph_->size();
    std::vector<uint32_t> tombs, slots(nodes), refs(nodes);
    w.U32(uint32_t(nodes));
    for (size_t g = 0; g < nodes; g++) {
      uint32_t slot = graph_->KeyAt(g);
      uint32_t owner = store_.owner(slot);
      slots[g] = slot;
      if (owner != kNoOwner) {
        refs[g] = docOrdinal[owner];
      } else {
        refs[g] = uint32_t(order.size() + tombs.size());
        tombs.push_back(slot);
      }
      w.U32(refs[g]);
    }
    w.U32(uint32_t(tombs.size()));
    for (uint32_t slot : tombs) w.Bytes(store_.Raw(slot), store_.RawBytes());
    // Node keys are vector slots, which depend on history; the stream carries the references
    // instead, so the bytes stay canonical. Load sets the keys back from the references.
    for (size_t g = 0; g < nodes; g++) graph_->SetKeyAt(g, refs[g]);
    std::vector<uint8_t> bytes;
    try {
      graph_->Save(bytes);
    } catch (...) {
      for (size_t g = 0; g < nodes; g++) graph_->SetKeyAt(g, slots[g]);
      throw;
    }
    for (size_t g = 0; g < nodes; g++) graph_->SetKeyAt(g, slots[g]);
    w.U64(bytes.size());
    w.Bytes(bytes.data(), bytes.size());
  }

  const uint64_t bodyLen = out.size() - kHeaderBytes;
  const uint32_t crc = Crc32(out.data() + kHeaderBytes, bodyLen);
  std::memcpy(out.data(), kMagic, 4);
  std::memcpy(out.data() + 4, &kVersion, 4);
  std::memcpy(out.data() + 8, &bodyLen, 8);
  std::memcpy(out.data() + 16, &crc, 4);
  return out;
}

namespace {

std::vector<std::string_view> ReadNames(Reader& r, const char* what, bool allowEmpty) {
  uint32_t n = r.Count(4, what);
  std::vector<std::string_view> names(n);
  std::unordered_set<std::string_view> seen;
  for (uint32_t i = 0; i < n; i++) {
    names[i] = r.Str(what);
    if (!ValidUtf8(names[i])) throw Error(std::string("cannot load: invalid UTF-8 in ") + what);
    if (!allowEmpty && names[i].empty()) throw Error(std::string("cannot load: empty ") + what);
    if (!seen.insert(names[i]).second) throw Error(std::string("cannot load: duplicate ") + what);
  }
  return names;
}

void CheckRawVector(const uint8_t* raw, const Options& o, const char* what) {
  double sum = 0;
  for (uint32_t i = 0; i < o.dimensions; i++) {
    double x;
    if (o.quantization == Quantization::F32) {
      float f;
      std::memcpy(&f, raw + size_t(i) * 4, 4);
      if (!std::isfinite(f)) throw Error(std::string("cannot load: non-finite component in ") + what);
      x = f;
    } else {
      x = double(int8_t(raw[i]));
    }
    sum += x * x;
  }
  if (sum == 0) throw Error(std::string("cannot load: zero-length ") + what);
}

}  // namespace

std::unique_ptr<Index> Index::Load(const uint8_t* data, size_t len) {
  if (len < kHeaderBytes || std::memcmp(data, kMagic, 4) != 0) throw Error("cannot load: not a serialized ranking index");
  uint32_t version, crc;
  uint64_t bodyLen;
  std::memcpy(&version, data + 4, 4);
  std::memcpy(&bodyLen, data + 8, 8);
  std::memcpy(&crc, data + 16, 4);
  if (version != kVersion) throw Error("cannot load: unsupported format version " + std::to_string(version));
  if (bodyLen != len - kHeaderBytes) throw Error("cannot load: length mismatch (truncated or padded buffer)");
  if (Crc32(data + kHeaderBytes, bodyLen) != crc) throw Error("cannot load: checksum mismatch (the buffer is corrupt)");

  Reader r(data + kHeaderBytes, bodyLen);
  Options o;
  o.dimensions = r.U32("options");
  uint8_t q = r.U8("options");
  r.Skip(3, "options");
  o.k1 = r.F64("options");
  o.b = r.F64("options");
  o.hnswThreshold = r.U32("options");
  o.connectivity = r.U32("options");
  o.expansionAdd = r.U32("options");
  o.expansionSearch = r.U32("options");
  if (q > 1) throw Error("cannot load: quantization must be 'f32' or 'i8'", Error::kRange);
  o.quantization = Quantization(q);
  ValidateOptions(o, "cannot load: ");

  auto kinds = ReadNames(r, "kind", true);
  auto sessions = ReadNames(r, "session", true);

  std::unique_ptr<Index> index(new Index(o));
  Index& x = *index;
  const size_t rawBytes = x.store_.RawBytes();
  uint32_t docCount = r.Count(4 + 4 + 4 + 8 + 1, "document count");
  std::vector<uint32_t> kindIds(kinds.size(), kNoOwner), sessionIds(sessions.size(), kNoOwner);
  x.docs_.reserve(docCount);
  x.idEnd_.reserve(docCount);
  x.idTable_.Reserve(docCount);
  x.store_.Reserve(rawBytes ? std::min<size_t>(docCount, r.left() / rawBytes) : 0);
  // Document numbers are ordinals, which is what the postings below refer to.
  for (uint32_t i = 0; i < docCount; i++) {
    std::string_view id = r.Str("document id");
    if (id.empty() || !ValidUtf8(id)) throw Error("cannot load: invalid document id");
    if (x.Has(id)) throw Error("cannot load: duplicate document id");
    uint32_t kind = r.U32("document kind"), session = r.U32("document session");
    if (kind >= kinds.size() || session >= sessions.size()) r.Fail("document kind or session");
    double time = r.F64("document time");
    if (!std::isfinite(time)) throw Error("cannot load: non-finite document time");
    if (kindIds[kind] == kNoOwner) kindIds[kind] = x.kinds_.Intern(std::string(kinds[kind]));
    else x.kinds_.refs[kindIds[kind]]++;
    if (sessionIds[session] == kNoOwner) sessionIds[session] = x.sessions_.Intern(std::string(sessions[session]));
    else x.sessions_.refs[sessionIds[session]]++;
    uint32_t doc = x.AppendDoc(id, kindIds[kind], sessionIds[session], time);
    uint8_t hasVector = r.U8("document vector flag");
    if (hasVector > 1) r.Fail("document vector flag");
    if (hasVector) {
      if (o.dimensions == 0) r.Fail("document vector without dimensions");
      const uint8_t* raw = r.Skip(rawBytes, "document vector");
      CheckRawVector(raw, o, "document vector");
      x.docs_[doc].vector = x.store_.AllocateRaw(raw, doc);
      x.liveVectors_++;
    }
  }

  x.idBytes_.shrink_to_fit();

  // Terms, each with its postings: validated entry by entry (a damaged list must not reach the
  // decoder, which trusts its input), then copied as they are into one exactly sized arena.
  uint32_t termCount = r.Count(4 + 1 + 4 + 4 + 1, "term count");
  std::vector<uint64_t> lengths(docCount, 0);
  std::vector<std::pair<const uint8_t*, uint32_t>> lists(termCount);
  size_t listBytes = 0;
  x.terms_.reserve(termCount);
  x.termEnd_.reserve(termCount);
  x.termTable_.Reserve(termCount);
  for (uint32_t i = 0; i < termCount; i++) {
    std::string_view text = r.Str("term");
    if (!ValidUtf8(text)) throw Error("cannot load: invalid UTF-8 in term");
    if (text.empty()) throw Error("cannot load: empty term");
    if (x.FindTerm(text) != kNone) throw Error("cannot load: duplicate term");
    uint32_t df = r.Count(1, "term postings");
    uint32_t bytes = r.U32("term postings");
    if (df == 0 || bytes > r.left()) r.Fail("term postings");
    const uint8_t* start = r.here();
    int64_t prev = -1;
    for (uint32_t j = 0; j < df; j++) {
      uint64_t v = r.Varint("term postings");
      uint64_t doc = uint64_t(prev + 1) + (v >> 1) - 1;
      if ((v >> 1) == 0 || doc >= docCount) r.Fail("term postings");
      uint64_t tf = 1;
      if (v & 1) {
        tf = r.Varint("term postings");
        if (tf < 2 || tf > 0xFFFFFFFFu) r.Fail("term postings");
      }
      lengths[doc] += tf;
      if (lengths[doc] > 0xFFFFFFFFu) r.Fail("term postings");
      prev = int64_t(doc);
    }
    if (size_t(r.here() - start) != bytes) r.Fail("term postings");
    uint32_t t = x.InternTerm(text);
    x.terms_[t].count = df;
    lists[t] = {start, bytes};
    listBytes += bytes;
  }
  x.compact_.reserve(listBytes);
  x.compactEnd_.reserve(termCount);
  for (const auto& list : lists) {
    x.compact_.insert(x.compact_.end(), list.first, list.first + list.second);
    x.compactEnd_.push_back(Offset32(x.compact_.size()));
  }
  for (uint32_t d = 0; d < docCount; d++) {
    x.docs_[d].length = uint32_t(lengths[d]);
    x.totalLength_ += lengths[d];
  }

  uint8_t hasGraph = r.U8("graph flag");
  if (hasGraph > 1) r.Fail("graph flag");
  if (hasGraph) {
    uint32_t nodes = r.Count(4, "graph node count");
    std::vector<uint32_t> refs(nodes);
    for (uint32_t g = 0; g < nodes; g++) refs[g] = r.U32("graph node");
    uint32_t tombCount = r.Count(rawBytes ? rawBytes : 1, "graph tombstone count");
    if (o.dimensions == 0 && nodes) r.Fail("graph without dimensions");
    std::vector<uint32_t> tombSlots(tombCount);
    for (uint32_t t = 0; t < tombCount; t++) {
      const uint8_t* raw = r.Skip(rawBytes, "graph tombstone vector");
      CheckRawVector(raw, o, "graph tombstone vector");
      tombSlots[t] = x.store_.AllocateRaw(raw, kNoOwner);
      x.store_.set_owner(tombSlots[t], kNoOwner);
    }
    uint64_t graphLen = r.U64("graph length");
    if (graphLen > r.left()) r.Fail("graph length");
    const uint8_t* graphBytes = r.Skip(size_t(graphLen), "graph");
    // Every live vector and every tombstone must be a node exactly once.
    if (size_t(nodes) != x.liveVectors_ + tombCount) throw Error("cannot load: HNSW graph is corrupt (node references)");
    std::vector<uint32_t> slotOf(nodes);
    std::vector<uint8_t> used(size_t(docCount) + tombCount, 0);
    for (uint32_t g = 0; g < nodes; g++) {
      uint32_t ref = refs[g];
      uint32_t slot = ref < docCount ? x.docs_[ref].vector : ref - docCount < tombCount ? tombSlots[ref - docCount] : kNoOwner;
      if (slot == kNoOwner || used[ref]) throw Error("cannot load: HNSW graph is corrupt (node references)");
      used[ref] = 1;
      slotOf[g] = slot;
    }
    x.graph_.reset(new Graph(x.store_, GraphParams{o.connectivity, o.expansionAdd}));
    x.graph_->Load(graphBytes, size_t(graphLen), nodes);
    for (uint32_t g = 0; g < nodes; g++) x.graph_->SetKeyAt(g, slotOf[g]);
    x.tombstones_ = tombSlots;
  }
  if (r.left() != 0) r.Fail("trailing bytes");
  x.MaintainGraph();
  return index;
}

}  // namespace ranking
}  // namespace pinclaw
