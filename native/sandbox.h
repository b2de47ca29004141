// Internal interface between the sandbox's parts: the Landlock ruleset and the seccomp filter are
// prepared in the parent (sandbox_landlock.cc, sandbox_seccomp.cc), the child only applies them
// (sandbox_spawn.cc), and sandbox.cc is the N-API face with the waiter thread. Not part of addon.h:
// nothing outside the sandbox needs these.
#pragma once
#include <linux/filter.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace pinclaw::sandbox {

// What a path may be used for. Device is for single device nodes such as /dev/null.
enum class Access { ReadExec, ReadOnly, ReadWrite, Device };
const char* AccessName(Access a);

struct PathRule {
  std::string path;
  Access access;
};

struct Skipped {
  std::string path;
  std::string reason;
};

// The highest Landlock ABI the kernel offers, or 0 with errno-style reason when it has none.
struct AbiProbe {
  int abi;
  std::string reason;
};
AbiProbe ProbeLandlock();

struct Ruleset {
  int fd = -1;  // O_CLOEXEC; the child calls landlock_restrict_self on it
  int abi = 0;
  uint64_t handledFs = 0;
  uint64_t handledNet = 0;
  uint64_t scoped = 0;
  std::vector<PathRule> applied;
  std::vector<Skipped> skipped;
};
// Builds the ruleset in the calling (parent) process. Paths that do not exist are skipped and
// reported; any other failure is returned as a message with fd = -1.
// Returns "" or the failure, with errno set to its cause.
std::string BuildRuleset(const std::vector<PathRule>& rules, bool network, Ruleset* out);
std::vector<std::string> FsAccessNames(uint64_t mask);
std::vector<std::string> NetAccessNames(uint64_t mask);
std::vector<std::string> ScopeNames(uint64_t mask);

struct SeccompFilter {
  std::vector<sock_filter> program;
  const char* arch;                     // "x86_64", "aarch64"
  std::vector<std::string> denied;      // human-readable list of what the filter refuses
};
SeccompFilter BuildSeccomp(bool network);

struct Limits {
  rlim_t cpuSeconds;
  rlim_t memoryBytes;
  rlim_t maxProcesses;
  rlim_t fileSizeBytes;
};

struct SpawnSpec {
  std::string file;
  std::vector<std::string> argv;
  std::vector<std::string> env;
  std::string cwd;
  int rulesetFd = -1;
  const std::vector<sock_filter>* seccomp = nullptr;
  Limits limits{};
  bool userNamespace = true;
  // A cgroup's cgroup.procs (pids controller) the child moves itself into first; empty for none.
  std::string cgroupProcs;
  // The read end of a pipe to give the child as its stdin (a long-lived server reads requests
  // there); -1 for /dev/null. The caller keeps ownership and closes it once Spawn has returned.
  int stdinFd = -1;
};

struct Spawned {
  pid_t pid = -1;
  int pidfd = -1;
  int stdoutFd = -1;  // read ends, O_NONBLOCK | O_CLOEXEC
  int stderrFd = -1;
  bool userNamespace = false;  // the child runs in its own user namespace
  int userNamespaceErrno = 0;  // why not, when it was asked for
  bool boundingSetCleared = false;
};

// Forks the confined child and returns once it has exec'ed (or failed to: then the message says
// which step failed and why, and nothing is left running).
std::string Spawn(const SpawnSpec& spec, Spawned* out);

}  // namespace pinclaw::sandbox
