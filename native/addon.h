// Each concern registers its functions on the exports object; addon.cc only wires them up.
#pragma once
#include <napi.h>

namespace pinclaw {
void InitInfo(Napi::Env env, Napi::Object exports);
void InitNotify(Napi::Env env, Napi::Object exports);
void InitMemory(Napi::Env env, Napi::Object exports);
void InitRanking(Napi::Env env, Napi::Object exports);
void InitTokenizer(Napi::Env env, Napi::Object exports);
void InitSandbox(Napi::Env env, Napi::Object exports);
void InitI2c(Napi::Env env, Napi::Object exports);
void InitGpio(Napi::Env env, Napi::Object exports);
void InitEmbed(Napi::Env env, Napi::Object exports);
void InitBeneath(Napi::Env env, Napi::Object exports);
void InitHmac(Napi::Env env, Napi::Object exports);
}  // namespace pinclaw
