// Version and feature report, so the loader and `doctor` can tell which hot paths this build carries.
#include "addon.h"

#ifndef PINCLAW_ADDON_VERSION
#define PINCLAW_ADDON_VERSION "0.1.0"
#endif

namespace pinclaw {

static const char* const kFeatures[] = {"info", "notify", "memory", "ranking", "tokenizer", "sandbox", "beneath", "hmac"};

static Napi::Value Info(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  out.Set("version", PINCLAW_ADDON_VERSION);
  out.Set("napiVersion", Napi::Number::New(env, NAPI_VERSION));
#if defined(__aarch64__)
  out.Set("arch", "arm64");
#elif defined(__x86_64__)
  out.Set("arch", "x64");
#elif defined(__arm__)
  out.Set("arch", "arm");
#else
  out.Set("arch", "unknown");
#endif
#if defined(__clang__)
  out.Set("compiler", "clang " __clang_version__);
#elif defined(__GNUC__)
  out.Set("compiler", "gcc " __VERSION__);
#else
  out.Set("compiler", "unknown");
#endif
  Napi::Array features = Napi::Array::New(env);
  uint32_t i = 0;
  for (const char* f : kFeatures) features.Set(i++, f);
  out.Set("features", features);
  return out;
}

void InitInfo(Napi::Env env, Napi::Object exports) {
  exports.Set("info", Napi::Function::New(env, Info, "info"));
}

}  // namespace pinclaw
