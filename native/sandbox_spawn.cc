// Starting the confined child. clone(CLONE_VM | CLONE_VFORK) like glibc's posix_spawn: no page
// tables are copied from the (large) Node process, which is most of what a fork costs, and the
// child can report a failed step through shared memory before execve. Everything the child needs
// is prepared here in the parent; the child only makes system calls (no allocation, no locks), as
// it shares the parent's memory and runs while other Node threads keep going.
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/close_range.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "sandbox.h"

#ifndef __NR_landlock_restrict_self
#define __NR_landlock_restrict_self 446
#endif
#ifndef __NR_close_range
#define __NR_close_range 436
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

namespace pinclaw::sandbox {
namespace {

constexpr size_t kStackSize = 64 * 1024;

struct ChildArgs {
  // Read by the child.
  const char* file;
  char* const* argv;
  char* const* envp;
  const char* cwd;
  int stdinFd, stdoutFd, stderrFd;
  int rulesetFd;
  const sock_fprog* filter;
  rlimit cpu, as, nproc, fsize, core;
  bool userNamespace;
  const char* cgroupProcs;
  char uidMap[64], gidMap[64];
  int lastCap;
  // The process that spawns: a child that finds another parent was orphaned before it could ask to die with it.
  pid_t parentPid;
  // Written by the child (shared memory), read by the parent once clone() has returned.
  const char* failedStep;
  int failedErrno;
  bool userNamespaceOk;
  int userNamespaceErrno;
  bool boundingSetCleared;
};

[[noreturn]] void Fail(ChildArgs* a, const char* step) {
  a->failedErrno = errno;
  a->failedStep = step;
  _exit(127);
}

bool WriteFile(const char* path, const char* text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  size_t len = strlen(text);
  bool ok = write(fd, text, len) == static_cast<ssize_t>(len);
  int err = errno;
  close(fd);
  errno = err;
  return ok;
}

// Runs in the child, on its own stack, in the parent's address space, until execve.
int ChildMain(void* arg) {
  auto* a = static_cast<ChildArgs*>(arg);

  // Handlers belong to Node and would run on shared memory; ignored signals (Node ignores SIGPIPE)
  // would be inherited across execve and break pipelines like `yes | head`.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s = 1; s < NSIG; s++)
    if (s != SIGKILL && s != SIGSTOP) sigaction(s, &dfl, nullptr);

  // Its own session and process group, so that the timeout can kill the whole tree at once
  // (seccomp then keeps the descendants from leaving the group).
  if (setsid() < 0) Fail(a, "setsid");
  // The leader dies with pinclaw rather than outliving it unsupervised. A pinclaw killed between
  // clone() and this call would leave it reparented, with nothing to send it the signal: it goes.
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  if (getppid() != a->parentPid) Fail(a, "the parent died before the child started");
  // The kernel never applies RLIMIT_NPROC to global uid 0, user namespace or not; for a root
  // pinclaw a pids cgroup is what bounds the process count. Written while cgroupfs is reachable.
  if (a->cgroupProcs && !WriteFile(a->cgroupProcs, "0")) Fail(a, "cgroup.procs");

  // A user namespace of its own makes RLIMIT_NPROC count this sandbox's processes only (the
  // kernel counts per user per namespace) instead of every process of the uid. It must come
  // before setrlimit, as the namespace records its creator's limit as a ceiling.
  if (a->userNamespace) {
    if (unshare(CLONE_NEWUSER) == 0) {
      if (!WriteFile("/proc/self/setgroups", "deny")) Fail(a, "user namespace: setgroups");
      if (!WriteFile("/proc/self/uid_map", a->uidMap)) Fail(a, "user namespace: uid_map");
      if (!WriteFile("/proc/self/gid_map", a->gidMap)) Fail(a, "user namespace: gid_map");
      a->userNamespaceOk = true;
    } else {
      a->userNamespaceErrno = errno;
    }
  }

  // Through fds >= 3 first, so that a pipe end that happens to be 0-2 is not clobbered or kept
  // close-on-exec by a dup2 onto itself.
  int in = fcntl(a->stdinFd, F_DUPFD_CLOEXEC, 3);
  int out = fcntl(a->stdoutFd, F_DUPFD_CLOEXEC, 3);
  int err = fcntl(a->stderrFd, F_DUPFD_CLOEXEC, 3);
  if (in < 0 || out < 0 || err < 0) Fail(a, "dup stdio");
  if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) Fail(a, "dup2 stdio");
  // No descriptor of pinclaw's (the database, sockets) may survive execve, whatever its flags.
  syscall(__NR_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);

  if (chdir(a->cwd) < 0) Fail(a, "chdir");
  if (setrlimit(RLIMIT_CPU, &a->cpu) < 0) Fail(a, "setrlimit RLIMIT_CPU");
  if (setrlimit(RLIMIT_AS, &a->as) < 0) Fail(a, "setrlimit RLIMIT_AS");
  if (setrlimit(RLIMIT_NPROC, &a->nproc) < 0) Fail(a, "setrlimit RLIMIT_NPROC");
  if (setrlimit(RLIMIT_FSIZE, &a->fsize) < 0) Fail(a, "setrlimit RLIMIT_FSIZE");
  if (setrlimit(RLIMIT_CORE, &a->core) < 0) Fail(a, "setrlimit RLIMIT_CORE");

  // No capabilities, now or after execve: an empty bounding set means root's execve grants none.
  // Without CAP_SETPCAP (an unprivileged pinclaw without a user namespace) there is nothing to drop.
  bool cleared = true;
  for (int c = 0; c <= a->lastCap; c++) {
    if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
      cleared = false;
      break;
    }
  }
  a->boundingSetCleared = cleared;
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  __user_cap_header_struct hdr{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct none[2]{};
  if (syscall(SYS_capset, &hdr, none) < 0) Fail(a, "capset");

  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) Fail(a, "prctl(PR_SET_NO_NEW_PRIVS)");
  if (a->rulesetFd >= 0 && syscall(__NR_landlock_restrict_self, a->rulesetFd, 0) < 0) Fail(a, "landlock_restrict_self");
  if (a->filter && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, a->filter, 0, 0) < 0) Fail(a, "seccomp");

  sigset_t none_blocked;
  sigemptyset(&none_blocked);
  sigprocmask(SIG_SETMASK, &none_blocked, nullptr);
  execve(a->file, a->argv, a->envp);
  Fail(a, "execve");
}

int LastCap() {
  int last = CAP_LAST_CAP;
  if (FILE* f = fopen("/proc/sys/kernel/cap_last_cap", "re")) {
    if (fscanf(f, "%d", &last) != 1) last = CAP_LAST_CAP;
    fclose(f);
  }
  return last;
}

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  out.reserve(v.size() + 1);
  for (const std::string& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

rlimit Limit(rlim_t soft, rlim_t hard) { return rlimit{soft, hard}; }

}  // namespace

std::string Spawn(const SpawnSpec& spec, Spawned* out) {
  static const int lastCap = LastCap();
  std::vector<char*> argv = CStrings(spec.argv);
  std::vector<char*> envp = CStrings(spec.env);
  sock_fprog prog{};
  if (spec.seccomp) {
    prog.len = static_cast<unsigned short>(spec.seccomp->size());
    prog.filter = const_cast<sock_filter*>(spec.seccomp->data());
  }

  auto* a = new ChildArgs{};
  a->file = spec.file.c_str();
  a->argv = argv.data();
  a->envp = envp.data();
  a->cwd = spec.cwd.c_str();
  a->rulesetFd = spec.rulesetFd;
  a->filter = spec.seccomp ? &prog : nullptr;
  // The soft CPU limit sends SIGXCPU (fatal by default); the hard one, a second later, SIGKILL.
  a->cpu = Limit(spec.limits.cpuSeconds, spec.limits.cpuSeconds + 1);
  a->as = Limit(spec.limits.memoryBytes, spec.limits.memoryBytes);
  a->nproc = Limit(spec.limits.maxProcesses, spec.limits.maxProcesses);
  a->fsize = Limit(spec.limits.fileSizeBytes, spec.limits.fileSizeBytes);
  a->core = Limit(0, 0);
  a->userNamespace = spec.userNamespace;
  a->cgroupProcs = spec.cgroupProcs.empty() ? nullptr : spec.cgroupProcs.c_str();
  // The same ids inside as outside: files keep their owners, `id` stays truthful.
  snprintf(a->uidMap, sizeof a->uidMap, "%u %u 1\n", getuid(), getuid());
  snprintf(a->gidMap, sizeof a->gidMap, "%u %u 1\n", getgid(), getgid());
  a->lastCap = lastCap;

  int pipes[2][2] = {{-1, -1}, {-1, -1}};
  // The caller's pipe, or /dev/null (ours to close).
  const bool ownStdin = spec.stdinFd < 0;
  a->stdinFd = ownStdin ? open("/dev/null", O_RDONLY | O_CLOEXEC) : spec.stdinFd;
  std::string error;
  void* stack = MAP_FAILED;
  if (a->stdinFd < 0) error = std::string("open /dev/null: ") + strerror(errno);
  else if (pipe2(pipes[0], O_CLOEXEC) < 0 || pipe2(pipes[1], O_CLOEXEC) < 0) error = std::string("pipe2: ") + strerror(errno);
  else if ((stack = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0)) == MAP_FAILED)
    error = std::string("mmap: ") + strerror(errno);

  pid_t pid = -1;
  int pidfd = -1;
  if (error.empty()) {
    a->stdoutFd = pipes[0][1];
    a->stderrFd = pipes[1][1];
    a->parentPid = getpid();
    // No Node signal handler may run in the child before it has reset them (posix_spawn does the same).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pid = clone(ChildMain, static_cast<char*>(stack) + kStackSize, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, a, &pidfd);
    int cloneErr = errno;
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) error = std::string("clone: ") + strerror(cloneErr);
  }
  if (stack != MAP_FAILED) munmap(stack, kStackSize);
  if (ownStdin && a->stdinFd >= 0) close(a->stdinFd);
  if (pipes[0][1] >= 0) close(pipes[0][1]);
  if (pipes[1][1] >= 0) close(pipes[1][1]);

  if (error.empty() && a->failedStep) {
    error = std::string(a->failedStep) + ": " + strerror(a->failedErrno);
    // The child has already exited (_exit ends the vfork wait); reap it so no zombie is left.
    waitpid(pid, nullptr, 0);
    if (pidfd >= 0) close(pidfd);
  }
  if (!error.empty()) {
    if (pipes[0][0] >= 0) close(pipes[0][0]);
    if (pipes[1][0] >= 0) close(pipes[1][0]);
    delete a;
    return error;
  }
  fcntl(pipes[0][0], F_SETFL, O_NONBLOCK);
  fcntl(pipes[1][0], F_SETFL, O_NONBLOCK);
  out->pid = pid;
  out->pidfd = pidfd;
  out->stdoutFd = pipes[0][0];
  out->stderrFd = pipes[1][0];
  out->userNamespace = a->userNamespaceOk;
  out->userNamespaceErrno = a->userNamespaceErrno;
  out->boundingSetCleared = a->boundingSetCleared;
  delete a;
  return "";
}

}  // namespace pinclaw::sandbox
