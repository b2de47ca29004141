// sd_notify(3) without libsystemd: one datagram to $NOTIFY_SOCKET. Node's dgram module cannot speak
// AF_UNIX datagrams, which is why this lives in the addon; the TS fallback shells out to systemd-notify.
#include "addon.h"
#include "js_error.h"

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
  static const char kUsage[] = "notify(socketPath: string, state: string)";
  REQUIRE_ARGUMENT_STRING(kUsage, 0, "socketPath", path);
  REQUIRE_ARGUMENT_STRING(kUsage, 1, "state", state);
  if (path.empty()) return Napi::Boolean::New(env, false);

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  // systemd uses '@' for the abstract namespace: the name starts with a NUL byte instead.
  if (path.size() >= sizeof(addr.sun_path)) {
    return js::Throw(env, js::Kind::kRange, std::string(kUsage) + ": socketPath must be at most " + std::to_string(sizeof(addr.sun_path) - 1) + " bytes (socket path too long), got " + std::to_string(path.size()));
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  if (path[0] == '@') addr.sun_path[0] = '\0';
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path.size());

  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return js::ThrowSystem(env, std::string("notify: socket: ") + std::strerror(errno), errno);
  ssize_t n = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr), len);
  int err = errno;
  close(fd);
  if (n < 0) return js::ThrowSystem(env, "notify: sendto " + path + ": " + std::strerror(err), err);
  return Napi::Boolean::New(env, true);
}

void InitNotify(Napi::Env env, Napi::Object exports) {
  exports.Set("notify", Napi::Function::New(env, Notify, "notify"));
}

}  // namespace pinclaw
