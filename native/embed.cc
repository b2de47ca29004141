// JavaScript surface of the memory's local embedder (src/memory/embedders/local.ts):
//   embedderLoad(data: Uint8Array | ArrayBuffer)  → model: parses the data once; the model borrows
//                                                    the bytes (no copy: in the single executable
//                                                    they are the asset's own pages) and keeps them
//                                                    alive
//   embedderInfo(model)                           → { format, dims, words, buckets, minGram, maxGram }
//   embedTexts(model, texts: string[])            → Float32Array of texts.length × dims, synchronous
//   embedTextsAsync(model, texts: string[])       → Promise of the same, computed on the libuv pool
// Texts must already be prepared (prepareText in local-reference.ts): folding needs ICU, which
// JavaScript has. Strings reach C++ as UTF-8 with lone surrogates replaced by U+FFFD.
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "addon.h"
#include "js_error.h"
#include "embed.h"

namespace pinclaw {
namespace {

// Marks the objects embedderLoad returns, so a foreign object is refused rather than unwrapped.
constexpr napi_type_tag kModelTag = {0x70696e636c617765ull, 0x6d626564646572ull};

struct Holder {
  embed::Model model;
  Napi::Reference<Napi::Value> bytes;  // keeps the borrowed data alive as long as the model
};

using js::Kind;

// The model behind a handle; throws a TypeError (returns nullptr) for anything else.
Holder* ModelArg(Napi::Env env, const Napi::Value& v, const char* usage) {
  bool tagged = false;
  if (v.IsObject()) napi_check_object_type_tag(env, v, &kModelTag, &tagged);
  void* data = nullptr;
  if (!tagged || napi_unwrap(env, v, &data) != napi_ok || !data) {
    js::Throw(env, Kind::kArgValue, std::string(usage) + ": model must be what embedderLoad returned, got " + js::Shown(v));
    return nullptr;
  }
  return static_cast<Holder*>(data);
}

bool StringUtf8(Napi::Env env, const Napi::Value& v, std::string* storage) {
  size_t units = 0;
  if (napi_get_value_string_utf16(env, v, nullptr, 0, &units) != napi_ok) return false;
  storage->resize(units * 3 + 1);
  size_t written = 0;
  if (napi_get_value_string_utf8(env, v, &(*storage)[0], storage->size(), &written) != napi_ok) return false;
  storage->resize(written);
  return true;
}

// texts as UTF-8; throws a TypeError (returns false) unless it is an array of strings.
bool TextsArg(Napi::Env env, const Napi::Value& v, std::vector<std::string>* out, const char* usage) {
  if (!v.IsArray()) {
    js::ThrowArgType(env, usage, "texts", "an array of strings", v);
    return false;
  }
  Napi::Array texts = v.As<Napi::Array>();
  const uint32_t n = texts.Length();
  out->resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    Napi::Value t = texts.Get(i);
    if (!t.IsString()) {
      return js::Fail(env, Kind::kArgType, std::string(usage) + ": texts[" + std::to_string(i) + "] is not a string, got " + js::Shown(t));
    }
    if (!StringUtf8(env, t, &(*out)[i])) {
      return js::Fail(env, Kind::kArgValue, std::string(usage) + ": cannot read texts[" + std::to_string(i) + "] as UTF-8");
    }
  }
  return true;
}

Napi::Value EmbedderLoad(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char kUsage[] = "embedderLoad(data: Uint8Array | ArrayBuffer)";
  const uint8_t* data = nullptr;
  size_t size = 0;
  if (js::IsUint8Array(info[0])) {
    Napi::Uint8Array bytes = info[0].As<Napi::Uint8Array>();
    data = bytes.Data();
    size = bytes.ByteLength();
  } else if (info[0].IsArrayBuffer()) {
    Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
    data = static_cast<const uint8_t*>(buffer.Data());
    size = buffer.ByteLength();
  } else {
    return js::ThrowArgType(env, kUsage, "data", "a Uint8Array or an ArrayBuffer", info[0]);
  }
  auto* holder = new (std::nothrow) Holder();
  if (!holder) return js::ThrowSystem(env, "embedderLoad: out of memory", ENOMEM);
  std::string err;
  try {
    err = holder->model.Load(data, size);
  } catch (const std::bad_alloc&) {
    err = "out of memory";
  }
  if (!err.empty()) {
    delete holder;
    if (err == "out of memory") return js::ThrowSystem(env, "embedderLoad: embedder data: out of memory", ENOMEM);
    return js::Throw(env, Kind::kData, "embedderLoad: embedder data: " + err);
  }
  holder->bytes = Napi::Persistent(info[0]);
  Napi::Object handle = Napi::Object::New(env);
  if (napi_wrap(env, handle, holder, [](napi_env, void* p, void*) { delete static_cast<Holder*>(p); }, nullptr, nullptr) != napi_ok) {
    delete holder;
    return js::Throw(env, Kind::kState, "embedderLoad: cannot wrap the model");
  }
  napi_type_tag_object(env, handle, &kModelTag);
  return handle;
}

Napi::Value EmbedderInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Holder* h = ModelArg(env, info.Length() ? info[0] : env.Undefined(), "embedderInfo(model)");
  if (!h) return env.Undefined();
  const embed::Model& m = h->model;
  Napi::Object out = Napi::Object::New(env);
  out.Set("format", m.format());
  out.Set("dims", m.dims());
  out.Set("words", m.words());
  out.Set("buckets", m.buckets());
  out.Set("minGram", m.min_gram());
  out.Set("maxGram", m.max_gram());
  return out;
}

Napi::Value EmbedTexts(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char kUsage[] = "embedTexts(model, texts: string[])";
  Holder* h = ModelArg(env, info[0], kUsage);
  if (!h) return env.Undefined();
  thread_local std::vector<std::string> texts;
  if (!TextsArg(env, info[1], &texts, kUsage)) return env.Undefined();
  const size_t dims = h->model.dims();
  Napi::Float32Array out = Napi::Float32Array::New(env, texts.size() * dims);
  try {
    for (size_t i = 0; i < texts.size(); ++i) h->model.Embed(texts[i], out.Data() + i * dims);
  } catch (const std::bad_alloc&) {
    return js::ThrowSystem(env, "embedTexts: out of memory", ENOMEM);
  }
  if (texts.size() > 64) std::vector<std::string>().swap(texts);
  return out;
}

// Embeds on a thread-pool thread. The texts are copied up front on the main thread; the worker
// holds the model's handle, so neither the model nor its bytes can be collected meanwhile.
class EmbedWorker : public Napi::AsyncWorker {
 public:
  EmbedWorker(Napi::Env env, Napi::Object handle, Holder* holder)
      : Napi::AsyncWorker(env, "pinclaw:embedTexts"), handle_(Napi::Persistent(handle)), holder_(holder), deferred_(Napi::Promise::Deferred::New(env)) {}
  std::vector<std::string>* texts() { return &texts_; }
  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      const size_t dims = holder_->model.dims();
      out_.resize(texts_.size() * dims);
      for (size_t i = 0; i < texts_.size(); ++i) holder_->model.Embed(texts_[i], out_.data() + i * dims);
    } catch (const std::bad_alloc&) {
      SetError("embedTextsAsync: out of memory");
    }
  }
  void OnOK() override {
    Napi::Float32Array result = Napi::Float32Array::New(Env(), out_.size());
    if (!out_.empty()) std::memcpy(result.Data(), out_.data(), out_.size() * sizeof(float));
    deferred_.Resolve(result);
  }
  // SetError above is only ever out of memory.
  void OnError(const Napi::Error& err) override { deferred_.Reject(js::MakeSystem(Env(), err.Message(), ENOMEM).Value()); }

 private:
  Napi::ObjectReference handle_;
  Holder* holder_;
  Napi::Promise::Deferred deferred_;
  std::vector<std::string> texts_;
  std::vector<float> out_;
};

Napi::Value EmbedTextsAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char kUsage[] = "embedTextsAsync(model, texts: string[])";
  Holder* h = ModelArg(env, info[0], kUsage);
  if (!h) return env.Undefined();
  auto* worker = new EmbedWorker(env, info[0].As<Napi::Object>(), h);
  if (!TextsArg(env, info[1], worker->texts(), kUsage)) {
    delete worker;
    return env.Undefined();
  }
  Napi::Promise promise = worker->Promise();
  worker->Queue();  // the worker deletes itself after OnOK/OnError
  return promise;
}

}  // namespace

void InitEmbed(Napi::Env env, Napi::Object exports) {
  exports.Set("embedderLoad", Napi::Function::New(env, EmbedderLoad, "embedderLoad"));
  exports.Set("embedderInfo", Napi::Function::New(env, EmbedderInfo, "embedderInfo"));
  exports.Set("embedTexts", Napi::Function::New(env, EmbedTexts, "embedTexts"));
  exports.Set("embedTextsAsync", Napi::Function::New(env, EmbedTextsAsync, "embedTextsAsync"));
}

}  // namespace pinclaw
