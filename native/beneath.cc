// openBeneath: opens a path below a directory fd without following a symlink at any component, so a
// path the file tools checked cannot be redirected out of its root by a link swapped in between the
// check and the open (the race O_NOFOLLOW alone leaves open: it guards only the last component).
// openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does it in one call where the kernel has it
// (Linux 5.6); older kernels, or a seccomp filter that refuses the call, get the same walk by hand:
// one openat(O_NOFOLLOW) per component from the directory fd. src/native/reference.ts has the
// TypeScript counterpart. The result is an O_PATH descriptor (nothing is read, a FIFO cannot block);
// the caller checks its type with fstat and reopens it through /proc/self/fd to read.
#include "addon.h"
#include "js_error.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cerrno>
#include <string>
#include <vector>

namespace pinclaw {

// Splits a relative path into its components; '.' and empty parts drop out. Returns -EXDEV for an
// absolute path or a '..' part: what RESOLVE_BENEATH refuses, refused the same way on both paths.
static int Components(const std::string& path, std::vector<std::string>* out) {
  if (path.empty() || path[0] == '/') return -EXDEV;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "..") return -EXDEV;
    if (!part.empty() && part != ".") out->push_back(part);
    start = end + 1;
  }
  return 0;
}

static int WalkByHand(int dirfd, const std::vector<std::string>& parts) {
  if (parts.empty()) return openat(dirfd, ".", O_PATH | O_CLOEXEC);
  int cur = dirfd;
  for (size_t i = 0; i < parts.size(); i++) {
    int fd = openat(cur, parts[i].c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    int err = errno;
    if (cur != dirfd) close(cur);
    if (fd < 0) return -err;
    if (i + 1 == parts.size()) return fd;
    // A link in the middle is what openat2 refuses with ELOOP; a file in the middle, ENOTDIR.
    struct stat st;
    if (fstat(fd, &st) != 0) {
      err = errno;
      close(fd);
      return -err;
    }
    if (!S_ISDIR(st.st_mode)) {
      close(fd);
      return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
    }
    cur = fd;
  }
  return -EINVAL;  // not reached: the loop returns at the last part
}

// Returns an O_PATH fd, or -errno. A symlink as the last component gives a descriptor of the link
// itself (O_PATH | O_NOFOLLOW), which the caller sees with fstat. by_hand skips openat2, so the
// tests can hold the older kernels' walk to the reference too.
static int OpenBeneathFd(int dirfd, const std::string& path, bool by_hand) {
  std::vector<std::string> parts;
  int bad = Components(path, &parts);
  if (bad) return bad;
  if (by_hand) return WalkByHand(dirfd, parts);
#ifdef SYS_openat2
  std::string joined = ".";
  for (const std::string& p : parts) joined += "/" + p;
  open_how how{};
  how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  for (int tries = 0; tries < 8; tries++) {
    long fd = syscall(SYS_openat2, dirfd, joined.c_str(), &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    // EAGAIN: a rename raced the lookup and the kernel asks for a retry.
    if (errno == EAGAIN) continue;
    if (errno != ENOSYS && errno != EPERM) return -errno;
    break;
  }
#endif
  return WalkByHand(dirfd, parts);
}

static Napi::Value OpenBeneath(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char kUsage[] = "openBeneath(dirFd: number, path: string, byHand?: boolean)";
  REQUIRE_ARGUMENT_RANGE(kUsage, 0, "dirFd", fd, 0, 2147483647, true, "a file descriptor (an integer, 0 or more)");
  REQUIRE_ARGUMENT_STRING(kUsage, 1, "path", path);
  OPTIONAL_ARGUMENT_BOOLEAN(kUsage, 2, "byHand", by_hand, false);
  const int dirfd = static_cast<int>(fd);
  return Napi::Number::New(env, OpenBeneathFd(dirfd, path, by_hand));
}

void InitBeneath(Napi::Env env, Napi::Object exports) {
  exports.Set("openBeneath", Napi::Function::New(env, OpenBeneath, "openBeneath"));
}

}  // namespace pinclaw
