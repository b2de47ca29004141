// The seccomp filter of sandboxed commands, hand-written classic BPF. It complements Landlock where
// Landlock has no say: which socket families may be created at all (unix sockets reach services
// by path, and Landlock does not govern connect() on them), process groups (a command that left
// its group would survive the timeout's kill), io_uring (whose socket operations bypass seccomp)
// and System V IPC (keyed by number, not path). The straight-line layout (each test is "jeq, then
// return") needs no jump fix-ups.
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cerrno>
#include <cstddef>

#include "sandbox.h"

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

namespace pinclaw::sandbox {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
constexpr const char* kArchName = "x86_64";
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
constexpr const char* kArchName = "aarch64";
#else
#error "the seccomp filter knows x86_64 and aarch64 only"
#endif

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif

constexpr uint32_t kNr = offsetof(seccomp_data, nr);
constexpr uint32_t kArchOff = offsetof(seccomp_data, arch);
// Low 32 bits of the first argument (both supported arches are little-endian); socket()'s domain is an int.
constexpr uint32_t kArg0 = offsetof(seccomp_data, args);

sock_filter Stmt(uint16_t code, uint32_t k) { return BPF_STMT(code, k); }
sock_filter JumpEq(uint32_t k, uint8_t jt, uint8_t jf) { return BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k, jt, jf); }

// "if (value == k) return action", as two instructions.
void ReturnIf(std::vector<sock_filter>* p, uint32_t k, uint32_t action) {
  p->push_back(JumpEq(k, 0, 1));
  p->push_back(Stmt(BPF_RET | BPF_K, action));
}

}  // namespace

SeccompFilter BuildSeccomp(bool network) {
  SeccompFilter f;
  f.arch = kArchName;
  std::vector<sock_filter>& p = f.program;
  const uint32_t allow = SECCOMP_RET_ALLOW;
  const uint32_t eperm = SECCOMP_RET_ERRNO | EPERM;

  // Another syscall ABI (32-bit compat, x32) has other numbers, so this filter would not apply.
  p.push_back(Stmt(BPF_LD | BPF_W | BPF_ABS, kArchOff));
  p.push_back(JumpEq(kArch, 1, 0));
  p.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
  p.push_back(Stmt(BPF_LD | BPF_W | BPF_ABS, kNr));
#if defined(__x86_64__)
  p.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000U /* __X32_SYSCALL_BIT */, 0, 1));
  p.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
  ReturnIf(&p, __NR_setsid, eperm);
  ReturnIf(&p, __NR_setpgid, eperm);
  // ENOSYS rather than EPERM: io_uring users treat it as "old kernel" and fall back to syscalls.
  ReturnIf(&p, __NR_io_uring_setup, SECCOMP_RET_ERRNO | ENOSYS);
  // System V IPC is keyed by number, not path, and this backend shares the host's IPC namespace:
  // Landlock cannot see it, and a same-uid command could attach to other processes' segments.
  ReturnIf(&p, __NR_shmget, eperm);
  ReturnIf(&p, __NR_msgget, eperm);
  ReturnIf(&p, __NR_semget, eperm);
  p.push_back(JumpEq(__NR_socket, 1, 0));
  p.push_back(Stmt(BPF_RET | BPF_K, allow));

  // socket(domain, ...): socketpair() stays allowed, it only connects the command to itself.
  p.push_back(Stmt(BPF_LD | BPF_W | BPF_ABS, kArg0));
  if (network) {
    ReturnIf(&p, AF_INET, allow);
    ReturnIf(&p, AF_INET6, allow);
    // getaddrinfo() asks the kernel for local addresses over netlink; with every capability
    // dropped, netlink can read the network configuration but not change it.
    ReturnIf(&p, AF_NETLINK, allow);
  }
  p.push_back(Stmt(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES));

  f.denied.push_back(network ? "socket() except AF_INET, AF_INET6, AF_NETLINK (EACCES)" : "socket() of every family (EACCES)");
  f.denied.push_back("setsid(), setpgid() (EPERM)");
  f.denied.push_back("io_uring_setup() (ENOSYS)");
  f.denied.push_back("System V IPC: shmget(), msgget(), semget() (EPERM)");
  f.denied.push_back("foreign syscall ABIs (process killed)");
  return f;
}

}  // namespace pinclaw::sandbox
