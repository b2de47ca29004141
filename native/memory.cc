// Returning freed heap memory to the OS. glibc keeps freed blocks of the main arena mapped; a
// long-running daemon on a small board gives them back when it goes idle.
#include "addon.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace pinclaw {

static Napi::Value TrimMemory(const Napi::CallbackInfo& info) {
#if defined(__GLIBC__)
  return Napi::Boolean::New(info.Env(), malloc_trim(0) != 0);
#else
  return Napi::Boolean::New(info.Env(), false);
#endif
}

void InitMemory(Napi::Env env, Napi::Object exports) {
  exports.Set("trimMemory", Napi::Function::New(env, TrimMemory, "trimMemory"));
}

}  // namespace pinclaw
