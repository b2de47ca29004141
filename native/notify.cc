// sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET. Node's dgram module cannot speak
// AF_UNIX datagrams, which is why this lives in the addon; the TS fallback shells out to systemd-notify.
#include "addon.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <string>

namespace pinclaw {

// Returns true when sent, false when there is no socket to notify; throws on a real failure.
static Napi::Value Notify(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString()) {
    Napi::TypeError::New(env, "notify(socketPath: string, state: string)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string path = info[0].As<Napi::String>().Utf8Value();
  std::string state = info[1].As<Napi::String>().Utf8Value();
  if (path.empty()) return Napi::Boolean::New(env, false);

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // systemd uses '@' for the abstract namespace: the name starts with a NUL byte instead.
  if (path.size() >= sizeof(addr.sun_path)) {
    Napi::Error::New(env, "notify: socket path too long: " + path).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());

  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    Napi::Error::New(env, std::string("notify: socket: ") + std::strerror(errno)).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  ssize_t n = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), len);
  int err = errno;
  close(fd);
  if (n < 0) {
    Napi::Error::New(env, "notify: sendto " + path + ": " + std::strerror(err)).ThrowAsJavaScriptException();
    return env.Undefined();
  }
  return Napi::Boolean::New(env, true);
}

void InitNotify(Napi::Env env, Napi::Object exports) {
  exports.Set("notify", Napi::Function::New(env, Notify, "notify"));
}

}  // namespace pinclaw
