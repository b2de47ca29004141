// HMAC-SHA256 (RFC 2104) for the fleet's signatures (src/fleet/fleet-sign.ts): four per remote tool
// call. node:crypto's createHmac took 8.6–11 µs a signature in the running round trip (1.8–2.4 in a
// tight loop; docs/performance.md, "A remote tool call"): each one fetches SHA-256 from OpenSSL's
// providers, makes an HMAC context and a JavaScript object around it, and crosses into C++ three
// times. Here a key's two padded blocks are hashed once, and a signature is two copies of those
// states finished with OpenSSL's low-level SHA-256, the same code node:crypto ends in (Node exports
// OpenSSL's symbols to addons), in one call. src/native/reference.ts's createHmac is the reference.
#include "addon.h"
#include "js_error.h"

// SHA256_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, whose fetch is the cost
// avoided here; they stay exported, and their state is a plain struct that can be copied.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/sha.h>

#include <cstring>
#include <string>
#include <unordered_map>

namespace pinclaw {
namespace {

constexpr size_t kBlock = 64;

struct PaddedKey {
  SHA256_CTX inner;  // after the key XOR 0x36, padded to a block
  SHA256_CTX outer;  // after the key XOR 0x5c
};

PaddedKey Pad(const std::string& key) {
  unsigned char k[kBlock] = {0};
  if (key.size() > kBlock) {
    SHA256(reinterpret_cast<const unsigned char*>(key.data()), key.size(), k);
  } else {
    std::memcpy(k, key.data(), key.size());
  }
  unsigned char ipad[kBlock], opad[kBlock];
  for (size_t i = 0; i < kBlock; ++i) {
    ipad[i] = k[i] ^ 0x36;
    opad[i] = k[i] ^ 0x5c;
  }
  PaddedKey p;
  SHA256_Init(&p.inner);
  SHA256_Update(&p.inner, ipad, kBlock);
  SHA256_Init(&p.outer);
  SHA256_Update(&p.outer, opad, kBlock);
  OPENSSL_cleanse(k, sizeof k);
  OPENSSL_cleanse(ipad, sizeof ipad);
  OPENSSL_cleanse(opad, sizeof opad);
  return p;
}

// A fleet has a handful of keys (mqtt.fleet.key and its callers'); the cache is per thread, and
// dropped whole if keys ever churn past 64.
const PaddedKey& KeyFor(const std::string& key) {
  thread_local std::unordered_map<std::string, PaddedKey> keys;
  auto it = keys.find(key);
  if (it != keys.end()) return it->second;
  if (keys.size() >= 64) keys.clear();
  return keys.emplace(key, Pad(key)).first->second;
}

std::string Base64Url(const unsigned char* p, size_t n) {
  static const char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((n * 4 + 2) / 3);
  size_t i = 0;
  for (; i + 3 <= n; i += 3) {
    const uint32_t v = (p[i] << 16) | (p[i + 1] << 8) | p[i + 2];
    out += kDigits[v >> 18];
    out += kDigits[(v >> 12) & 63];
    out += kDigits[(v >> 6) & 63];
    out += kDigits[v & 63];
  }
  if (i + 1 == n) {
    const uint32_t v = p[i] << 16;
    out += kDigits[v >> 18];
    out += kDigits[(v >> 12) & 63];
  } else if (i + 2 == n) {
    const uint32_t v = (p[i] << 16) | (p[i + 1] << 8);
    out += kDigits[v >> 18];
    out += kDigits[(v >> 12) & 63];
    out += kDigits[(v >> 6) & 63];
  }
  return out;  // no padding, as node:crypto's 'base64url'
}

// hmacSha256(key, text): the HMAC-SHA256 of text's UTF-8 under key's UTF-8, as base64url without
// padding (node:crypto's digest('base64url')).
Napi::Value HmacSha256(const Napi::CallbackInfo& info) {
  static const char kUsage[] = "hmacSha256(key: string, text: string)";
  REQUIRE_ARGUMENT_STRING(kUsage, 0, "key", key);
  REQUIRE_ARGUMENT_STRING(kUsage, 1, "text", text);
  const PaddedKey& padded = KeyFor(key);
  unsigned char inner[SHA256_DIGEST_LENGTH];
  unsigned char mac[SHA256_DIGEST_LENGTH];
  SHA256_CTX ctx = padded.inner;
  SHA256_Update(&ctx, text.data(), text.size());
  SHA256_Final(inner, &ctx);
  ctx = padded.outer;
  SHA256_Update(&ctx, inner, sizeof inner);
  SHA256_Final(mac, &ctx);
  OPENSSL_cleanse(&ctx, sizeof ctx);
  return Napi::String::New(info.Env(), Base64Url(mac, sizeof mac));
}

}  // namespace

void InitHmac(Napi::Env env, Napi::Object exports) {
  exports.Set("hmacSha256", Napi::Function::New(env, HmacSha256, "hmacSha256"));
}

}  // namespace pinclaw
