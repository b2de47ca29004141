// JavaScript surface of the BPE tokenizer:
//   tokenizerLoad(encoding, rankText)          parse tiktoken's rank text once per process
//   tokenCount(encoding, text)                 number of tokens (synchronous)
//   tokenEncode(encoding, text)                Uint32Array of token ids (synchronous)
//   tokenCountAsync(encoding, text)            Promise<number>, counted on the libuv thread pool
//   tokenizerUnload(encoding)                  free the rank table (a later call needs tokenizerLoad again)
//   tokenizerInfo()                            { unicodeVersion, loaded, encodeThreads }
//   tokenizerSplitPoints(text, parts)          for tests: where a large text is cut for the threads
// `text` is a string or a Uint8Array. Strings reach C++ as UTF-8 with lone surrogates already
// replaced by U+FFFD (V8 does that, as the TextEncoder in front of tiktoken's WASM does); bytes
// are checked and, where invalid, repaired the way TextDecoder would.
// The rank tables are process-wide: immutable once loaded and shared by all threads (workers
// included). An idle gateway unloads them (8.7 MiB for o200k_base; src/release.ts): each call takes
// its own reference to the table, so a count still running on the thread pool keeps the table it
// started with alive until it is done.
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "addon.h"
#include "js_error.h"
#include "pinclaw_unicode_classes.h"
#include "tokenizer.h"
#include "tokenizer_cache.h"

namespace pinclaw {
namespace {

using tokenizer::Pattern;
using tokenizer::Ranks;

struct Encoding {
  const char* name;
  Pattern pattern;
  // Read and written with std::atomic_load/atomic_store (C++17 has no std::atomic<shared_ptr>).
  std::shared_ptr<const Ranks> ranks;
};

Encoding g_encodings[] = {{"o200k_base", Pattern::kO200k, nullptr}, {"cl100k_base", Pattern::kCl100k, nullptr}};
std::mutex g_load_mutex;

// Inputs larger than this are not kept in the per-thread buffer between calls.
constexpr size_t kScratchKeep = 1 << 20;

using js::Kind;

std::string KnownNames() {
  std::string names;
  for (const Encoding& e : g_encodings) names += std::string(names.empty() ? "" : ", ") + e.name;
  return names;
}

// The encoding named by a JS argument; throws (returns nullptr) when unknown.
Encoding* EncodingArg(Napi::Env env, const Napi::Value& v, const char* usage) {
  if (!v.IsString()) {
    js::ThrowArgType(env, usage, "encoding", "a string", v);
    return nullptr;
  }
  const std::string name = v.As<Napi::String>().Utf8Value();
  for (Encoding& e : g_encodings) {
    if (name == e.name) return &e;
  }
  js::Throw(env, Kind::kArgValue, std::string(usage) + ": unknown encoding '" + name + "'; known: " + KnownNames());
  return nullptr;
}

// A loaded encoding's table, named by a JS argument: the caller's own reference, which an unload
// cannot take away. Throws (returns null) when the name is unknown or the encoding is not loaded.
struct Loaded {
  Pattern pattern;
  std::shared_ptr<const Ranks> ranks;
};
bool LoadedArg(Napi::Env env, const Napi::Value& v, Loaded* out, const char* usage) {
  Encoding* e = EncodingArg(env, v, usage);
  if (!e) return false;
  out->pattern = e->pattern;
  out->ranks = std::atomic_load(&e->ranks);
  if (!out->ranks) return js::Fail(env, Kind::kState, std::string(usage) + ": encoding " + e->name + " is not loaded; call tokenizerLoad first");
  return true;
}

// A string argument as UTF-8 in `storage`. napi_get_value_string_utf8 writes at most size - 1
// bytes; three bytes per UTF-16 unit is enough (a surrogate pair takes 4 for 2 units, a lone
// surrogate 3 for its U+FFFD).
bool StringUtf8(Napi::Env env, const Napi::Value& v, std::string* storage) {
  size_t units = 0;
  if (napi_get_value_string_utf16(env, v, nullptr, 0, &units) != napi_ok) return false;
  storage->resize(units * 3 + 1);
  size_t written = 0;
  if (napi_get_value_string_utf8(env, v, &(*storage)[0], storage->size(), &written) != napi_ok) return false;
  storage->resize(written);
  return true;
}

struct TextArg {
  const uint8_t* data = nullptr;
  size_t size = 0;
  bool from_bytes = false;  // may need repair
};

// Reads a string or Uint8Array argument. Strings are converted into `storage`; bytes are borrowed
// (valid only during this call) unless `copy` is set.
bool ReadText(Napi::Env env, const Napi::Value& v, std::string* storage, bool copy, TextArg* out, const char* usage) {
  if (v.IsString()) {
    if (!StringUtf8(env, v, storage)) return js::Fail(env, Kind::kArgValue, std::string(usage) + ": cannot read text as UTF-8");
    out->data = reinterpret_cast<const uint8_t*>(storage->data());
    out->size = storage->size();
    return true;
  }
  if (js::IsUint8Array(v)) {
    Napi::Uint8Array bytes = v.As<Napi::Uint8Array>();
    out->from_bytes = true;
    if (copy) {
      storage->assign(reinterpret_cast<const char*>(bytes.Data()), bytes.ByteLength());
      out->data = reinterpret_cast<const uint8_t*>(storage->data());
    } else {
      out->data = bytes.Data();
    }
    out->size = bytes.ByteLength();
    return true;
  }
  js::ThrowArgType(env, usage, "text", "a string or a Uint8Array", v);
  return false;
}

// The synchronous calls' piece cache (tokenizer_cache.h), one per JavaScript thread; the thread
// pool's counts go without, so its threads hold no cache between calls.
thread_local tokenizer::PieceCache t_cache;

// Valid UTF-8 of a text argument: the argument's own bytes, or their repair in `repaired`.
void Valid(const TextArg& text, std::string* repaired, const uint8_t** data, size_t* size) {
  *data = text.data;
  *size = text.size;
  if (text.from_bytes && !tokenizer::IsValidUtf8(text.data, text.size)) {
    tokenizer::RepairUtf8(text.data, text.size, repaired);
    *data = reinterpret_cast<const uint8_t*>(repaired->data());
    *size = repaired->size();
  }
}

// Counts or encodes valid UTF-8, repairing byte input first when needed. A text of 64 KiB or more
// is cut into segments encoded on up to EncodeThreads() threads (tokenizer_parallel.cc).
size_t Run(const Loaded& e, const TextArg& text, std::string* repaired, std::vector<uint32_t>* out, tokenizer::PieceCache* cache) {
  const uint8_t* data;
  size_t size;
  Valid(text, repaired, &data, &size);
  return tokenizer::EncodeTextParallel(*e.ranks, e.pattern, data, size, out, cache, tokenizer::EncodeThreads());
}

void Trim(std::string* s) {
  if (s->capacity() > kScratchKeep) std::string().swap(*s);
}

// A large string's units are not kept: the calling thread keeps no more after a threaded call
// than before it (docs/tokenizer.md), at most a message-sized string's 128 KiB.
void TrimUnits(std::u16string* units) {
  if (units->capacity() >= tokenizer::kParallelMin) std::u16string().swap(*units);
}

// A string's UTF-16 units, read as they are (V8 copies them) into `units`. For a short string the
// copy plus Utf16ToUtf8 costs two thirds of the instructions of napi_get_value_string_utf8 (8% of
// a 1000-unit encode call's before), and the length is asked once, not twice. False when not a
// string.
bool StringUnits(Napi::Env env, const Napi::Value& v, std::u16string* units) {
  size_t n = 0;
  if (napi_get_value_string_utf16(env, v, nullptr, 0, &n) != napi_ok) return false;
  units->resize(n + 1);
  size_t written = 0;
  if (napi_get_value_string_utf16(env, v, &(*units)[0], units->size(), &written) != napi_ok) return false;
  units->resize(written);
  return true;
}

// A string argument: its units in `units`; *large when it is long enough for EncodeUtf16Parallel
// (kParallelMin units, with threads to share it), which converts each segment to UTF-8 on its own
// thread; otherwise its UTF-8 (lone surrogates as U+FFFD, as V8 would) in `storage` and `text`.
bool ReadString(Napi::Env env, const Napi::Value& v, std::u16string* units, std::string* storage, TextArg* text, bool* large, const char* usage) {
  if (!StringUnits(env, v, units)) return js::Fail(env, Kind::kArgValue, std::string(usage) + ": cannot read text");
  *large = units->size() >= tokenizer::kParallelMin && tokenizer::EncodeThreads() >= 2;
  if (*large) return true;
  tokenizer::Utf16ToUtf8(units->data(), units->size(), storage);
  text->data = reinterpret_cast<const uint8_t*>(storage->data());
  text->size = storage->size();
  return true;
}

// The text argument of the synchronous calls, string or bytes (see ReadString and ReadText).
bool ReadSyncText(Napi::Env env, const Napi::Value& v, std::u16string* units, std::string* storage, TextArg* text, bool* large, const char* usage) {
  *large = false;
  if (v.IsString()) return ReadString(env, v, units, storage, text, large, usage);
  return ReadText(env, v, storage, false, text, usage);
}

size_t RunLarge(const Loaded& e, const std::u16string& units, std::string* utf8, std::vector<uint32_t>* out) {
  return tokenizer::EncodeUtf16Parallel(*e.ranks, e.pattern, units.data(), units.size(), utf8, out, &t_cache, tokenizer::EncodeThreads());
}

Napi::Value TokenizerLoad(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char kUsage[] = "tokenizerLoad(encoding: string, ranks: string)";
  Encoding* e = EncodingArg(env, info[0], kUsage);
  if (!e) return env.Undefined();
  if (!info[1].IsString()) return js::ThrowArgType(env, kUsage, "ranks", "a string", info[1]);
  std::lock_guard<std::mutex> lock(g_load_mutex);
  if (std::atomic_load(&e->ranks)) return env.Undefined();
  std::string text;
  if (!StringUtf8(env, info[1], &text)) return js::Throw(env, Kind::kArgValue, std::string(kUsage) + ": cannot read ranks as UTF-8");
  std::string err;
  std::shared_ptr<Ranks> ranks;
  try {
    ranks = std::make_shared<Ranks>();
    err = ranks->Load(text.data(), text.size());
  } catch (const std::bad_alloc&) {
    err = "out of memory";
  }
  if (err == "out of memory") return js::ThrowSystem(env, std::string(kUsage) + ": " + e->name + " rank data: out of memory", ENOMEM);
  if (!err.empty()) return js::Throw(env, Kind::kData, std::string(kUsage) + ": " + e->name + " rank data: " + err);
  std::atomic_store(&e->ranks, std::shared_ptr<const Ranks>(std::move(ranks)));
  return env.Undefined();
}

// Drops this process's reference to the table; counts still running keep theirs until they end.
// Returns whether it was loaded.
Napi::Value TokenizerUnload(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Encoding* e = EncodingArg(env, info[0], "tokenizerUnload(encoding: string)");
  if (!e) return env.Undefined();
  std::lock_guard<std::mutex> lock(g_load_mutex);
  std::shared_ptr<const Ranks> old = std::atomic_exchange(&e->ranks, std::shared_ptr<const Ranks>());
  t_cache.Release();  // what an idle gateway unloads for (src/release.ts): its memory
  return Napi::Boolean::New(env, old != nullptr);
}

Napi::Value TokenCount(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char kUsage[] = "tokenCount(encoding: string, text: string | Uint8Array)";
  Loaded e;
  if (!LoadedArg(env, info[0], &e, kUsage)) return env.Undefined();
  thread_local std::string storage, repaired;
  thread_local std::u16string units;
  TextArg text;
  bool large;
  if (!ReadSyncText(env, info[1], &units, &storage, &text, &large, kUsage)) return env.Undefined();
  size_t n;
  try {
    n = large ? RunLarge(e, units, &storage, nullptr) : Run(e, text, &repaired, nullptr, &t_cache);
  } catch (const std::bad_alloc&) {
    return js::ThrowSystem(env, "tokenCount: out of memory", ENOMEM);
  }
  Trim(&storage);
  Trim(&repaired);
  TrimUnits(&units);
  return Napi::Number::New(env, static_cast<double>(n));
}

Napi::Value TokenEncode(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char kUsage[] = "tokenEncode(encoding: string, text: string | Uint8Array)";
  Loaded e;
  if (!LoadedArg(env, info[0], &e, kUsage)) return env.Undefined();
  thread_local std::string storage, repaired;
  thread_local std::vector<uint32_t> ids;
  thread_local std::u16string units;
  TextArg text;
  bool large;
  if (!ReadSyncText(env, info[1], &units, &storage, &text, &large, kUsage)) return env.Undefined();
  ids.clear();
  try {
    if (large) {
      RunLarge(e, units, &storage, &ids);
    } else {
      Run(e, text, &repaired, &ids, &t_cache);
    }
  } catch (const std::bad_alloc&) {
    return js::ThrowSystem(env, "tokenEncode: out of memory", ENOMEM);
  }
  Napi::Uint32Array result = Napi::Uint32Array::New(env, ids.size());
  if (!ids.empty()) std::memcpy(result.Data(), ids.data(), ids.size() * sizeof(uint32_t));
  Trim(&storage);
  Trim(&repaired);
  TrimUnits(&units);
  if (ids.capacity() > kScratchKeep / sizeof(uint32_t)) std::vector<uint32_t>().swap(ids);
  return result;
}

// Counts on a thread-pool thread; the text is copied (and, for strings, converted) up front on the
// main thread, so JavaScript may change or drop its buffer meanwhile.
class CountWorker : public Napi::AsyncWorker {
 public:
  CountWorker(Napi::Env env, Loaded e) : Napi::AsyncWorker(env, "pinclaw:tokenCount"), encoding_(std::move(e)), deferred_(Napi::Promise::Deferred::New(env)) {}
  std::string* storage() { return &text_; }
  TextArg& text() { return arg_; }
  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      count_ = Run(encoding_, arg_, &repaired_, nullptr, nullptr);
    } catch (const std::bad_alloc&) {
      SetError("tokenCountAsync: out of memory");
    }
  }
  void OnOK() override { deferred_.Resolve(Napi::Number::New(Env(), static_cast<double>(count_))); }
  // SetError above is only ever out of memory.
  void OnError(const Napi::Error& err) override { deferred_.Reject(js::MakeSystem(Env(), err.Message(), ENOMEM).Value()); }

 private:
  const Loaded encoding_;  // its own reference: an unload meanwhile does not free the table
  Napi::Promise::Deferred deferred_;
  std::string text_, repaired_;
  TextArg arg_;
  size_t count_ = 0;
};

Napi::Value TokenCountAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char kUsage[] = "tokenCountAsync(encoding: string, text: string | Uint8Array)";
  Loaded e;
  if (!LoadedArg(env, info[0], &e, kUsage)) return env.Undefined();
  auto* worker = new CountWorker(env, std::move(e));
  if (!ReadText(env, info[1], worker->storage(), true, &worker->text(), kUsage)) {
    delete worker;
    return env.Undefined();
  }
  Napi::Promise promise = worker->Promise();
  worker->Queue();  // the worker deletes itself after OnOK/OnError
  return promise;
}

// For tests: the offsets where a large text would be cut into `parts` segments, in UTF-16 units
// of a string or bytes of a Uint8Array (its UTF-8 as repaired); each must be a piece boundary of
// the reference pre-tokenizer.
Napi::Value TokenizerSplitPoints(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char kUsage[] = "tokenizerSplitPoints(text: string | Uint8Array, parts: number)";
  std::string storage, repaired;
  TextArg text;
  if (!info[0].IsString() && !ReadText(env, info[0], &storage, false, &text, kUsage)) return env.Undefined();
  if (!info[1].IsNumber()) return js::ThrowArgType(env, kUsage, "parts", "a number", info[1]);
  const double parts = info[1].As<Napi::Number>().DoubleValue();
  if (!(parts >= 1 && parts <= 4096) || parts != static_cast<double>(static_cast<uint32_t>(parts))) {
    return js::Throw(env, Kind::kRange, std::string(kUsage) + ": parts must be an integer from 1 to 4096, got " + js::Shown(info[1]));
  }
  std::vector<size_t> points;
  if (info[0].IsString()) {
    const std::u16string units = info[0].As<Napi::String>().Utf16Value();
    points = tokenizer::SplitPoints(units.data(), units.size(), static_cast<size_t>(parts));
  } else {
    const uint8_t* data;
    size_t size;
    Valid(text, &repaired, &data, &size);
    points = tokenizer::SplitPoints(data, size, static_cast<size_t>(parts));
  }
  Napi::Array out = Napi::Array::New(env, points.size());
  for (uint32_t i = 0; i < points.size(); ++i) out.Set(i, static_cast<double>(points[i]));
  return out;
}

Napi::Value TokenizerInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("unicodeVersion", PINCLAW_UNICODE_VERSION);
  out.Set("encodeThreads", tokenizer::EncodeThreads());
  Napi::Array loaded = Napi::Array::New(env);
  uint32_t i = 0;
  for (const Encoding& e : g_encodings) {
    if (std::atomic_load(&e.ranks)) loaded.Set(i++, e.name);
  }
  out.Set("loaded", loaded);
  return out;
}

}  // namespace

void InitTokenizer(Napi::Env env, Napi::Object exports) {
  exports.Set("tokenizerLoad", Napi::Function::New(env, TokenizerLoad, "tokenizerLoad"));
  exports.Set("tokenizerUnload", Napi::Function::New(env, TokenizerUnload, "tokenizerUnload"));
  exports.Set("tokenizerInfo", Napi::Function::New(env, TokenizerInfo, "tokenizerInfo"));
  exports.Set("tokenizerSplitPoints", Napi::Function::New(env, TokenizerSplitPoints, "tokenizerSplitPoints"));
  exports.Set("tokenCount", Napi::Function::New(env, TokenCount, "tokenCount"));
  exports.Set("tokenEncode", Napi::Function::New(env, TokenEncode, "tokenEncode"));
  exports.Set("tokenCountAsync", Napi::Function::New(env, TokenCountAsync, "tokenCountAsync"));
}

}  // namespace pinclaw
