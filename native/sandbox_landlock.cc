// Landlock: the ABI probe and the ruleset. The ruleset is built in the parent, where path lookups,
// allocations and error reporting are ordinary; the child only calls landlock_restrict_self().
// The constants are defined here because the build machines' kernel headers (Debian 12: 6.1, also
// the aarch64 cross sysroot) predate ABI 4-6; the values are the kernel's stable UAPI.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#endif
#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif

namespace pinclaw::sandbox {
namespace {

constexpr uint32_t kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;

// Filesystem rights, by the ABI that introduced them.
constexpr uint64_t kExecute = 1ULL << 0, kWriteFile = 1ULL << 1, kReadFile = 1ULL << 2, kReadDir = 1ULL << 3,
                   kRemoveDir = 1ULL << 4, kRemoveFile = 1ULL << 5, kMakeChar = 1ULL << 6, kMakeDir = 1ULL << 7,
                   kMakeReg = 1ULL << 8, kMakeSock = 1ULL << 9, kMakeFifo = 1ULL << 10, kMakeBlock = 1ULL << 11,
                   kMakeSym = 1ULL << 12;
constexpr uint64_t kRefer = 1ULL << 13;     // ABI 2
constexpr uint64_t kTruncate = 1ULL << 14;  // ABI 3
constexpr uint64_t kIoctlDev = 1ULL << 15;  // ABI 5
constexpr uint64_t kNetBindTcp = 1ULL << 0, kNetConnectTcp = 1ULL << 1;         // ABI 4
constexpr uint64_t kScopeAbstractUnix = 1ULL << 0, kScopeSignal = 1ULL << 1;  // ABI 6

// Rights that may be granted on a non-directory; the kernel refuses others with EINVAL.
constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

// Layouts of the kernel's structs (include/uapi/linux/landlock.h); the ruleset attr grew with ABI 4 and 6.
struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};
struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

uint64_t HandledFs(int abi) {
  uint64_t fs = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir |
                kMakeReg | kMakeSock | kMakeFifo | kMakeBlock | kMakeSym;
  if (abi >= 2) fs |= kRefer;
  if (abi >= 3) fs |= kTruncate;
  if (abi >= 5) fs |= kIoctlDev;
  return fs;
}

uint64_t Allowed(Access a, uint64_t handled) {
  switch (a) {
    case Access::ReadExec:
      return (kReadFile | kReadDir | kExecute) & handled;
    case Access::ReadOnly:
      return (kReadFile | kReadDir) & handled;
    case Access::Device:
      return (kReadFile | kWriteFile | kTruncate | kIoctlDev) & handled;
    case Access::ReadWrite:
      // Never device nodes: a root-owned process could mknod /dev/sda's twin inside the workspace
      // and read the disk through it, since Landlock judges the node by where it is, not what it is.
      return handled & ~(kMakeChar | kMakeBlock);
  }
  return 0;
}

void Names(uint64_t mask, const std::vector<std::pair<uint64_t, const char*>>& table, std::vector<std::string>* out) {
  for (const auto& [bit, name] : table)
    if (mask & bit) out->push_back(name);
}

}  // namespace

const char* AccessName(Access a) {
  switch (a) {
    case Access::ReadExec:
      return "read+execute";
    case Access::ReadOnly:
      return "read";
    case Access::ReadWrite:
      return "read+write";
    case Access::Device:
      return "device";
  }
  return "?";
}

AbiProbe ProbeLandlock() {
  long v = syscall(__NR_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
  if (v >= 1) return {static_cast<int>(v), ""};
  int err = errno;
  // ENOSYS: built without Landlock; EOPNOTSUPP: built in but not enabled (lsm= boot parameter).
  if (err == ENOSYS) return {0, "kernel built without Landlock (ENOSYS)"};
  if (err == EOPNOTSUPP) return {0, "Landlock disabled at boot (EOPNOTSUPP; add landlock to the lsm= kernel parameter)"};
  return {0, std::string("landlock_create_ruleset: ") + std::strerror(err)};
}

std::string BuildRuleset(const std::vector<PathRule>& rules, bool network, Ruleset* out) {
  AbiProbe probe = ProbeLandlock();
  if (probe.abi < 1) return probe.reason;
  out->abi = probe.abi;
  out->handledFs = HandledFs(probe.abi);
  // With the network allowed TCP is left unhandled, i.e. unrestricted; otherwise every bind and
  // connect is refused because no net rule is added.
  out->handledNet = (probe.abi >= 4 && !network) ? (kNetBindTcp | kNetConnectTcp) : 0;
  // Scopes keep the command from signalling pinclaw (same uid) and from reaching abstract unix
  // sockets outside the sandbox, which no filesystem rule covers.
  out->scoped = probe.abi >= 6 ? (kScopeAbstractUnix | kScopeSignal) : 0;

  RulesetAttr attr{out->handledFs, out->handledNet, out->scoped};
  size_t size = probe.abi >= 6 ? sizeof(RulesetAttr) : probe.abi >= 4 ? 16 : 8;
  long fd = syscall(__NR_landlock_create_ruleset, &attr, size, 0);
  if (fd < 0) return std::string("landlock_create_ruleset: ") + std::strerror(errno);
  out->fd = static_cast<int>(fd);

  for (const PathRule& rule : rules) {
    int pfd = open(rule.path.c_str(), O_PATH | O_CLOEXEC);
    if (pfd < 0) {
      out->skipped.push_back({rule.path, std::strerror(errno)});
      continue;
    }
    struct stat st {};
    uint64_t allowed = Allowed(rule.access, out->handledFs);
    if (fstat(pfd, &st) == 0 && !S_ISDIR(st.st_mode)) allowed &= kFileRights;
    PathBeneathAttr pb{allowed, pfd};
    long r = allowed ? syscall(__NR_landlock_add_rule, out->fd, kRulePathBeneath, &pb, 0) : 0;
    int err = errno;
    close(pfd);
    if (r < 0) {
      close(out->fd);
      out->fd = -1;
      errno = err;  // the caller reads it for the error's code (sandbox.h)
      return "landlock_add_rule " + rule.path + ": " + std::strerror(err);
    }
    out->applied.push_back(rule);
  }
  return "";
}

std::vector<std::string> FsAccessNames(uint64_t mask) {
  std::vector<std::string> out;
  Names(mask,
        {{kExecute, "execute"}, {kWriteFile, "write_file"}, {kReadFile, "read_file"}, {kReadDir, "read_dir"},
         {kRemoveDir, "remove_dir"}, {kRemoveFile, "remove_file"}, {kMakeChar, "make_char"}, {kMakeDir, "make_dir"},
         {kMakeReg, "make_reg"}, {kMakeSock, "make_sock"}, {kMakeFifo, "make_fifo"}, {kMakeBlock, "make_block"},
         {kMakeSym, "make_sym"}, {kRefer, "refer"}, {kTruncate, "truncate"}, {kIoctlDev, "ioctl_dev"}},
        &out);
  return out;
}

std::vector<std::string> NetAccessNames(uint64_t mask) {
  std::vector<std::string> out;
  Names(mask, {{kNetBindTcp, "bind_tcp"}, {kNetConnectTcp, "connect_tcp"}}, &out);
  return out;
}

std::vector<std::string> ScopeNames(uint64_t mask) {
  std::vector<std::string> out;
  Names(mask, {{kScopeAbstractUnix, "abstract_unix_socket"}, {kScopeSignal, "signal"}}, &out);
  return out;
}

}  // namespace pinclaw::sandbox
