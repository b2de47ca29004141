// N-API face of the ranking index: RankingIndex (an ObjectWrap over ranking::Index) and
// rankingTerms(). Arguments are checked here, in the same order and with the same messages as
// src/native/ranking-reference.ts, so both backends fail alike; nothing a caller passes can crash
// the process: every core error and allocation failure becomes a JavaScript exception.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <new>

#include "addon.h"
#include "js_error.h"
#include "ranking_error.h"
#include "ranking_index.h"
#include "ranking_text.h"

namespace pinclaw {

namespace {

using ranking::Error;

[[noreturn]] void TypeFail(const std::string& m) { throw Error(m, Error::kType); }
[[noreturn]] void RangeFail(const std::string& m) { throw Error(m, Error::kRange); }

// The core's kinds as js_error.h's: every load failure of a serialized index ("cannot load: ...",
// ranking_persist.cc) is bad data; the core's other plain errors are its state refusing the call.
void Throw(Napi::Env env, const Error& e) {
  static const char kLoad[] = "ranking: cannot load";
  switch (e.kind()) {
    case Error::kType: js::Throw(env, js::Kind::kArgType, e.what()); break;
    case Error::kRange: js::Throw(env, js::Kind::kRange, e.what()); break;
    default: js::Throw(env, std::strncmp(e.what(), kLoad, sizeof kLoad - 1) == 0 ? js::Kind::kData : js::Kind::kState, e.what());
  }
}

// Runs `body`, turning C++ failures into JavaScript exceptions.
template <typename F>
Napi::Value Guard(Napi::Env env, F&& body) {
  try {
    return body();
  } catch (const Error& e) {
    Throw(env, e);
  } catch (const std::bad_alloc&) {
    js::ThrowSystem(env, "ranking: out of memory", ENOMEM);
  } catch (const std::exception& e) {
    js::Throw(env, js::Kind::kState, std::string("ranking: ") + e.what());
  }
  return env.Undefined();
}

bool Present(const Napi::Object& o, const char* key) {
  Napi::Value v = o.Get(key);
  return !v.IsUndefined() && !v.IsNull();
}

// Integer option in [lo, hi], or the default when absent.
uint32_t IntOption(const Napi::Object& o, const char* key, uint32_t dflt, double lo, double hi, const std::string& msg) {
  if (!Present(o, key)) return dflt;
  Napi::Value v = o.Get(key);
  if (!v.IsNumber()) RangeFail(msg);
  double x = v.As<Napi::Number>().DoubleValue();
  if (!std::isfinite(x) || std::floor(x) != x || x < lo || x > hi) RangeFail(msg);
  return uint32_t(x);
}

double NumOption(const Napi::Object& o, const char* key, double dflt, const std::string& msg) {
  if (!Present(o, key)) return dflt;
  Napi::Value v = o.Get(key);
  if (!v.IsNumber()) RangeFail(msg);
  return v.As<Napi::Number>().DoubleValue();
}

ranking::Options ParseOptions(const Napi::Value& value) {
  ranking::Options o;
  if (value.IsUndefined() || value.IsNull()) return o;
  if (!value.IsObject() || value.IsArray()) TypeFail("options must be an object");
  Napi::Object obj = value.As<Napi::Object>();
  o.dimensions = IntOption(obj, "dimensions", 0, 0, ranking::kMaxDimensions, "dimensions must be an integer from 0 to 65536");
  if (Present(obj, "quantization")) {
    Napi::Value q = obj.Get("quantization");
    std::string s = q.IsString() ? q.As<Napi::String>().Utf8Value() : "";
    if (s == "f32") o.quantization = ranking::Quantization::F32;
    else if (s == "i8") o.quantization = ranking::Quantization::I8;
    else RangeFail("quantization must be 'f32' or 'i8'");
  }
  o.k1 = NumOption(obj, "k1", 1.2, "k1 must be a finite number >= 0");
  if (!std::isfinite(o.k1) || o.k1 < 0) RangeFail("k1 must be a finite number >= 0");
  o.b = NumOption(obj, "b", 0.75, "b must be a number from 0 to 1");
  if (!(o.b >= 0 && o.b <= 1)) RangeFail("b must be a number from 0 to 1");
  o.hnswThreshold = IntOption(obj, "hnswThreshold", 20000, 0, 4294967295.0, "hnswThreshold must be an integer from 0 to 4294967295");
  o.connectivity = IntOption(obj, "connectivity", 16, 2, 64, "connectivity must be an integer from 2 to 64");
  o.expansionAdd = IntOption(obj, "expansionAdd", 64, 1, 4096, "expansionAdd must be an integer from 1 to 4096");
  o.expansionSearch = IntOption(obj, "expansionSearch", 64, 1, 4096, "expansionSearch must be an integer from 1 to 4096");
  return o;
}

Napi::Object OptionsObject(Napi::Env env, const ranking::Options& o) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("dimensions", o.dimensions);
  out.Set("quantization", o.quantization == ranking::Quantization::F32 ? "f32" : "i8");
  out.Set("k1", o.k1);
  out.Set("b", o.b);
  out.Set("hnswThreshold", o.hnswThreshold);
  out.Set("connectivity", o.connectivity);
  out.Set("expansionAdd", o.expansionAdd);
  out.Set("expansionSearch", o.expansionSearch);
  return out;
}

// A string, or raw bytes (which may be invalid UTF-8) from a Buffer or Uint8Array.
bool TextValue(const Napi::Value& v, std::string& out) {
  if (v.IsString()) {
    out = v.As<Napi::String>().Utf8Value();
    return true;
  }
  if (v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    auto a = v.As<Napi::Uint8Array>();
    out.assign(reinterpret_cast<const char*>(a.Data()), a.ElementLength());
    return true;
  }
  return false;
}

bool VectorValue(const Napi::Value& v, std::vector<float>& out) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) return false;
  auto a = v.As<Napi::Float32Array>();
  out.assign(a.Data(), a.Data() + a.ElementLength());
  return true;
}

std::string StringProp(const Napi::Object& o, const char* key, const std::string& who) {
  if (!Present(o, key)) return std::string();
  Napi::Value v = o.Get(key);
  if (!v.IsString()) TypeFail(who + ": " + key + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

ranking::DocInput ParseDoc(const Napi::Value& value) {
  if (!value.IsObject() || value.IsArray()) TypeFail("document must be an object");
  Napi::Object o = value.As<Napi::Object>();
  ranking::DocInput d;
  Napi::Value id = o.Get("id");
  if (!id.IsString()) TypeFail("document id must be a non-empty string");
  d.id = id.As<Napi::String>().Utf8Value();
  if (d.id.empty()) TypeFail("document id must be a non-empty string");
  std::string who = "document '" + d.id + "'";
  if (!TextValue(o.Get("text"), d.text)) TypeFail(who + ": text must be a string");
  if (Present(o, "vector")) {
    if (!VectorValue(o.Get("vector"), d.vector)) TypeFail(who + ": vector must be a Float32Array or an array of numbers");
    d.hasVector = true;
  }
  d.kind = StringProp(o, "kind", who);
  d.session = StringProp(o, "session", who);
  if (Present(o, "time")) {
    Napi::Value t = o.Get("time");
    if (!t.IsNumber()) TypeFail(who + ": time must be a finite number");
    d.time = t.As<Napi::Number>().DoubleValue();
  }
  return d;
}

std::vector<std::string> NameList(const Napi::Value& v, const std::string& msg) {
  std::vector<std::string> out;
  if (v.IsString()) {
    out.push_back(v.As<Napi::String>().Utf8Value());
    return out;
  }
  if (!v.IsArray()) TypeFail(msg);
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < a.Length(); i++) {
    Napi::Value e = a.Get(i);
    if (!e.IsString()) TypeFail(msg);
    out.push_back(e.As<Napi::String>().Utf8Value());
  }
  return out;
}

ranking::Query ParseQuery(const Napi::Value& value) {
  if (!value.IsObject() || value.IsArray()) TypeFail("query must be an object");
  Napi::Object o = value.As<Napi::Object>();
  ranking::Query q;
  if (Present(o, "text") && !TextValue(o.Get("text"), q.text)) TypeFail("query text must be a string");
  if (Present(o, "vector")) {
    if (!VectorValue(o.Get("vector"), q.vector)) TypeFail("query vector must be a Float32Array or an array of numbers");
    q.hasVector = true;
  }
  q.k = IntOption(o, "k", 10, 1, 10000, "k must be an integer from 1 to 10000");
  if (Present(o, "fusion")) {
    Napi::Value f = o.Get("fusion");
    std::string s = f.IsString() ? f.As<Napi::String>().Utf8Value() : "";
    if (s == "weighted") q.fusion = ranking::Fusion::kWeighted;
    else if (s == "rrf") q.fusion = ranking::Fusion::kRrf;
    else RangeFail("fusion must be 'weighted' or 'rrf'");
  }
  if (Present(o, "weights")) {
    const char* msg = "weights must be finite numbers >= 0, not both 0";
    Napi::Value w = o.Get("weights");
    if (!w.IsObject()) RangeFail(msg);
    Napi::Object wo = w.As<Napi::Object>();
    q.wVector = NumOption(wo, "vector", 0.7, msg);
    q.wKeyword = NumOption(wo, "keyword", 0.3, msg);
    if (!std::isfinite(q.wVector) || !std::isfinite(q.wKeyword) || q.wVector < 0 || q.wKeyword < 0 ||
        q.wVector + q.wKeyword == 0)
      RangeFail(msg);
  }
  q.rrfK = NumOption(o, "rrfK", 60, "rrfK must be a finite number >= 0");
  if (!std::isfinite(q.rrfK) || q.rrfK < 0) RangeFail("rrfK must be a finite number >= 0");
  q.candidates = IntOption(o, "candidates", 0, 1, 100000, "candidates must be an integer from 1 to 100000");
  if (Present(o, "filter")) {
    Napi::Value fv = o.Get("filter");
    if (!fv.IsObject() || fv.IsArray()) TypeFail("filter must be an object");
    Napi::Object f = fv.As<Napi::Object>();
    if (Present(f, "kind")) {
      q.filter.byKind = true;
      q.filter.kinds = NameList(f.Get("kind"), "filter.kind must be a string or an array of strings");
    }
    if (Present(f, "session")) {
      q.filter.bySession = true;
      q.filter.sessions = NameList(f.Get("session"), "filter.session must be a string or an array of strings");
    }
    q.filter.since = NumOption(f, "since", -INFINITY, "filter.since must be a finite number");
    if (Present(f, "since") && !std::isfinite(q.filter.since)) RangeFail("filter.since must be a finite number");
    q.filter.until = NumOption(f, "until", INFINITY, "filter.until must be a finite number");
    if (Present(f, "until") && !std::isfinite(q.filter.until)) RangeFail("filter.until must be a finite number");
  }
  return q;
}

Napi::Value NumberOrNull(Napi::Env env, double x) { return std::isnan(x) ? env.Null() : Napi::Number::New(env, x); }

class RankingIndexWrap : public Napi::ObjectWrap<RankingIndexWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "RankingIndex",
                       {
                           InstanceMethod<&RankingIndexWrap::Put>("put"),
                           InstanceMethod<&RankingIndexWrap::Remove>("remove"),
                           InstanceMethod<&RankingIndexWrap::Has>("has"),
                           InstanceMethod<&RankingIndexWrap::Size>("size"),
                           InstanceMethod<&RankingIndexWrap::Search>("search"),
                           InstanceMethod<&RankingIndexWrap::Serialize>("serialize"),
                           InstanceMethod<&RankingIndexWrap::Load>("load"),
                           InstanceMethod<&RankingIndexWrap::Stats>("stats"),
                           InstanceMethod<&RankingIndexWrap::Options>("options"),
                       });
  }

  explicit RankingIndexWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<RankingIndexWrap>(info) {
    Guard(info.Env(), [&]() -> Napi::Value {
      index_.reset(new ranking::Index(ParseOptions(info[0])));
      return info.Env().Undefined();
    });
  }

 private:
  // Construction can fail (bad options); every method then reports that instead of crashing.
  ranking::Index& index() {
    if (!index_) throw Error("this index failed to construct");
    return *index_;
  }

  // put(mode: 0 add | 1 update | 2 upsert, docs: object[])
  Napi::Value Put(const Napi::CallbackInfo& info) {
    return Guard(info.Env(), [&]() -> Napi::Value {
      if (!info[0].IsNumber()) TypeFail("put(mode, documents)");
      int mode = info[0].As<Napi::Number>().Int32Value();
      if (mode < 0 || mode > 2) RangeFail("put(mode, documents): mode must be 0, 1 or 2");
      if (!info[1].IsArray()) TypeFail("documents must be an array");
      Napi::Array arr = info[1].As<Napi::Array>();
      std::vector<ranking::DocInput> docs;
      docs.reserve(arr.Length());
      for (uint32_t i = 0; i < arr.Length(); i++) docs.push_back(ParseDoc(arr.Get(i)));
      index().Put(docs, ranking::PutMode(mode));
      return info.Env().Undefined();
    });
  }

  static std::string IdArg(const Napi::CallbackInfo& info) {
    if (!info[0].IsString()) TypeFail("document id must be a string");
    return info[0].As<Napi::String>().Utf8Value();
  }

  Napi::Value Remove(const Napi::CallbackInfo& info) {
    return Guard(info.Env(), [&]() -> Napi::Value { return Napi::Boolean::New(info.Env(), index().Remove(IdArg(info))); });
  }

  Napi::Value Has(const Napi::CallbackInfo& info) {
    return Guard(info.Env(), [&]() -> Napi::Value { return Napi::Boolean::New(info.Env(), index().Has(IdArg(info))); });
  }

  Napi::Value Size(const Napi::CallbackInfo& info) {
    return Guard(info.Env(), [&]() -> Napi::Value { return Napi::Number::New(info.Env(), double(index().Size())); });
  }

  Napi::Value Search(const Napi::CallbackInfo& info) {
    return Guard(info.Env(), [&]() -> Napi::Value {
      Napi::Env env = info.Env();
      ranking::Query q = ParseQuery(info[0]);
      ranking::Index& idx = index();
      std::vector<ranking::Hit> hits = idx.Search(q);
      Napi::Array out = Napi::Array::New(env, hits.size());
      for (size_t i = 0; i < hits.size(); i++) {
        Napi::Object h = Napi::Object::New(env);
        h.Set("id", Napi::String::New(env, idx.Id(hits[i].doc)));
        h.Set("score", hits[i].score);
        h.Set("keyword", NumberOrNull(env, hits[i].keyword));
        h.Set("vector", NumberOrNull(env, hits[i].vector));
        out.Set(uint32_t(i), h);
      }
      return out;
    });
  }

  Napi::Value Serialize(const Napi::CallbackInfo& info) {
    return Guard(info.Env(), [&]() -> Napi::Value {
      std::vector<uint8_t> bytes = index().Serialize();
      return Napi::Buffer<uint8_t>::Copy(info.Env(), bytes.data(), bytes.size());
    });
  }

  // Replaces this index with a serialized one; on any error the index is left as it was.
  Napi::Value Load(const Napi::CallbackInfo& info) {
    return Guard(info.Env(), [&]() -> Napi::Value {
      if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
        TypeFail("load: buffer must be a Buffer or Uint8Array");
      auto a = info[0].As<Napi::Uint8Array>();
      index_ = ranking::Index::Load(a.Data(), a.ElementLength());
      return info.Env().Undefined();
    });
  }

  Napi::Value Stats(const Napi::CallbackInfo& info) {
    return Guard(info.Env(), [&]() -> Napi::Value {
      ranking::Stats s = index().GetStats();
      Napi::Object out = Napi::Object::New(info.Env());
      out.Set("documents", double(s.documents));
      out.Set("vectors", double(s.vectors));
      out.Set("terms", double(s.terms));
      out.Set("dimensions", s.dimensions);
      out.Set("graphNodes", double(s.graphNodes));
      out.Set("graphTombstones", double(s.graphTombstones));
      out.Set("memoryBytes", double(s.memoryBytes));
      return out;
    });
  }

  Napi::Value Options(const Napi::CallbackInfo& info) {
    return Guard(info.Env(), [&]() -> Napi::Value { return OptionsObject(info.Env(), index().options()); });
  }

  std::unique_ptr<ranking::Index> index_;
};

// rankingTerms(text: string | Uint8Array): string[] — the splitter alone, for the equality tests.
Napi::Value Terms(const Napi::CallbackInfo& info) {
  return Guard(info.Env(), [&]() -> Napi::Value {
    std::string text;
    if (!TextValue(info[0], text)) TypeFail("rankingTerms(text: string | Uint8Array)");
    std::vector<std::string_view> terms;
    ranking::SplitTerms(text, terms);
    Napi::Array out = Napi::Array::New(info.Env(), terms.size());
    for (size_t i = 0; i < terms.size(); i++) out.Set(uint32_t(i), Napi::String::New(info.Env(), terms[i].data(), terms[i].size()));
    return out;
  });
}

}  // namespace

void InitRanking(Napi::Env env, Napi::Object exports) {
  exports.Set("RankingIndex", RankingIndexWrap::Define(env));
  exports.Set("rankingTerms", Napi::Function::New(env, Terms, "rankingTerms"));
}

}  // namespace pinclaw
