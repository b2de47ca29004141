#include "addon.h"

static Napi::Object Init(Napi::Env env, Napi::Object exports) {
  pinclaw::InitInfo(env, exports);
  pinclaw::InitNotify(env, exports);
  pinclaw::InitMemory(env, exports);
  pinclaw::InitRanking(env, exports);
  pinclaw::InitTokenizer(env, exports);
  pinclaw::InitSandbox(env, exports);
  pinclaw::InitI2c(env, exports);
  pinclaw::InitGpio(env, exports);
  pinclaw::InitEmbed(env, exports);
  pinclaw::InitBeneath(env, exports);
  pinclaw::InitHmac(env, exports);
  return exports;
}

NODE_API_MODULE(pinclaw, Init)
