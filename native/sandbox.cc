// The Landlock sandbox's JavaScript face: landlockAbi() and spawnSandboxed(). The ruleset and the
// seccomp program are built on the calling thread, so option and path errors throw at once; the
// child is then started by one thread per command, which also supervises it: it poll()s a pidfd,
// the two pipes and a cancel eventfd, and hands the start, output chunks and the exit to JavaScript
// through a thread-safe function. With `stdinPipe` the child's stdin is a pipe whose write end
// JavaScript gets as a file descriptor: a long-lived child (an MCP server) then reads requests there
// for as long as it runs, and terminate() asks its group to stop (SIGTERM) before kill(). The event loop is never blocked by the child's setup (which can
// wait on the kernel, e.g. for a cgroup migration), no SIGCHLD handler is involved, and libuv,
// which reaps only its own children, never sees this one.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <memory>
#include <thread>

#include "addon.h"
#include "js_error.h"
#include "sandbox.h"

namespace pinclaw {
namespace {

using sandbox::Access;
using Clock = std::chrono::steady_clock;

constexpr int kEventStdout = 1, kEventStderr = 2, kEventExit = 3, kEventStarted = 4;
// Once the leader has exited and its group is killed, the pipes close at once; this bounds the wait
// should a descriptor have reached a process outside the group anyway.
constexpr auto kDrainAfterExit = std::chrono::seconds(2);

struct ExitInfo {
  int code = -1;
  int signal = 0;
  bool timedOut = false;
  bool cancelled = false;
  size_t dropped[2] = {0, 0};
  std::string error;
  bool spawnFailed = false;
};

struct Job {
  pid_t pid = -1;
  int pidfd = -1;
  int fds[2] = {-1, -1};
  int cancelFd = -1;
  // The child's end of the stdin pipe, closed by the supervising thread once the child has it.
  int stdinReadFd = -1;
  // What the doorbell (cancelFd) was rung for; set before it rings.
  std::atomic<bool> killAsked{false};
  std::atomic<bool> termAsked{false};
  int64_t timeoutMs = 0;
  size_t forwardLimit = 0;
  sandbox::SpawnSpec spec;
  sandbox::SeccompFilter seccomp;
  int rulesetFd = -1;
  Napi::ThreadSafeFunction tsfn;
  std::atomic<bool> done{false};
  ~Job() {
    if (cancelFd >= 0) close(cancelFd);
    if (stdinReadFd >= 0) close(stdinReadFd);
    if (rulesetFd >= 0) close(rulesetFd);
  }
};

// SIGKILL to the whole process group. Safe against pid reuse as long as the leader is not yet
// reaped: its pid, which is the group id, stays taken until then.
void KillGroup(const Job& job) {
  kill(-job.pid, SIGKILL);
  kill(job.pid, SIGKILL);
}

// Hands one chunk to JavaScript; blocks while the queue is full, which is how a command that
// writes faster than pinclaw reads is slowed down through its pipe. False once JS is gone.
bool Forward(Job& job, int stream, const char* data, size_t len) {
  auto chunk = std::make_shared<std::string>(data, len);
  napi_status st = job.tsfn.BlockingCall([chunk, stream](Napi::Env env, Napi::Function cb) {
    cb.Call({Napi::Number::New(env, stream), Napi::Buffer<char>::Copy(env, chunk->data(), chunk->size())});
  });
  return st == napi_ok;
}

void SendExit(Job& job, const ExitInfo& info) {
  job.tsfn.BlockingCall([info](Napi::Env env, Napi::Function cb) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("code", info.code >= 0 ? Napi::Value(Napi::Number::New(env, info.code)) : env.Null());
    o.Set("signal", info.signal > 0 ? Napi::Value(Napi::Number::New(env, info.signal)) : env.Null());
    o.Set("timedOut", info.timedOut);
    o.Set("cancelled", info.cancelled);
    o.Set("stdoutDropped", Napi::Number::New(env, static_cast<double>(info.dropped[0])));
    o.Set("stderrDropped", Napi::Number::New(env, static_cast<double>(info.dropped[1])));
    if (!info.error.empty()) o.Set(info.spawnFailed ? "spawnError" : "error", info.error);
    cb.Call({Napi::Number::New(env, kEventExit), o});
  });
}

// What is only known once the child runs.
void SendStarted(Job& job, const sandbox::Spawned& sp) {
  job.tsfn.BlockingCall([sp](Napi::Env env, Napi::Function cb) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("pid", sp.pid);
    o.Set("userNamespace", sp.userNamespace);
    if (!sp.userNamespace && sp.userNamespaceErrno) o.Set("userNamespaceError", std::strerror(sp.userNamespaceErrno));
    o.Set("capabilities", sp.boundingSetCleared ? "all dropped, bounding set empty" : "all dropped (bounding set unchanged: no CAP_SETPCAP)");
    // Where RLIMIT_NPROC counts: in a user namespace of its own only this sandbox's processes, else
    // every process of the uid; the kernel never applies it to global uid 0.
    o.Set("maxProcessesScope", getuid() == 0 ? "not applied to uid 0 by the kernel" : sp.userNamespace ? "sandbox" : "all processes of the uid");
    cb.Call({Napi::Number::New(env, kEventStarted), o});
  });
}

void Supervise(std::shared_ptr<Job> job);

// The supervising thread: starts the child (clone's vfork wait suspends only this thread), then
// supervises it.
void Run(std::shared_ptr<Job> job) {
  sandbox::Spawned sp;
  std::string err = sandbox::Spawn(job->spec, &sp);
  close(job->rulesetFd);
  job->rulesetFd = -1;
  // The child has its own copy now (or never will): a writer then sees EPIPE once the child is gone.
  if (job->stdinReadFd >= 0) close(job->stdinReadFd);
  job->stdinReadFd = -1;
  if (!err.empty()) {
    ExitInfo info;
    info.error = err;
    info.spawnFailed = true;
    job->done = true;
    SendExit(*job, info);
    job->tsfn.Release();
    return;
  }
  job->pid = sp.pid;
  job->pidfd = sp.pidfd;
  job->fds[0] = sp.stdoutFd;
  job->fds[1] = sp.stderrFd;
  SendStarted(*job, sp);
  Supervise(std::move(job));
}

void Supervise(std::shared_ptr<Job> job) {
  ExitInfo info;
  const auto deadline = job->timeoutMs > 0 ? Clock::now() + std::chrono::milliseconds(job->timeoutMs) : Clock::time_point::max();
  auto drainUntil = Clock::time_point::max();
  bool exited = false, jsGone = false;
  bool open[2] = {true, true};
  size_t forwarded[2] = {0, 0};
  static thread_local char buf[64 * 1024];

  while (!exited || open[0] || open[1]) {
    pollfd pfds[4];
    int n = 0, pidIdx = -1, cancelIdx = -1, outIdx[2] = {-1, -1};
    if (!exited) {
      pfds[pidIdx = n++] = {job->pidfd, POLLIN, 0};
      pfds[cancelIdx = n++] = {job->cancelFd, POLLIN, 0};
    }
    for (int s = 0; s < 2; s++)
      if (open[s]) pfds[outIdx[s] = n++] = {job->fds[s], POLLIN, 0};

    auto until = exited ? drainUntil : (info.timedOut || info.cancelled) ? Clock::time_point::max() : deadline;
    int waitMs = -1;
    if (until != Clock::time_point::max()) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()).count();
      waitMs = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(left + 1, INT_MAX)));
    }
    int r = poll(pfds, n, waitMs);
    if (r < 0) {
      if (errno == EINTR) continue;
      info.error = std::string("poll: ") + std::strerror(errno);
      KillGroup(*job);
      if (!exited) {
        int status = 0;
        if (waitpid(job->pid, &status, 0) == job->pid && WIFSIGNALED(status)) info.signal = WTERMSIG(status);
        exited = true;
      }
      break;
    }
    if (r == 0) {
      if (exited) break;  // drain bound reached
      if (Clock::now() >= deadline) {
        info.timedOut = true;
        KillGroup(*job);
      }
      continue;
    }
    if (cancelIdx >= 0 && pfds[cancelIdx].revents) {
      uint64_t v;
      if (read(job->cancelFd, &v, sizeof v) < 0) { /* the eventfd is only a doorbell */ }
      // SIGTERM first, should both have been asked: the SIGKILL then ends what ignores it.
      if (job->termAsked.exchange(false)) {
        kill(-job->pid, SIGTERM);
        kill(job->pid, SIGTERM);
      }
      if (job->killAsked.exchange(false)) {
        if (!info.timedOut) info.cancelled = true;
        KillGroup(*job);
      }
    }
    for (int s = 0; s < 2; s++) {
      if (outIdx[s] < 0 || !pfds[outIdx[s]].revents) continue;
      ssize_t k = read(job->fds[s], buf, sizeof buf);
      if (k > 0) {
        size_t len = static_cast<size_t>(k);
        size_t room = forwarded[s] < job->forwardLimit ? job->forwardLimit - forwarded[s] : 0;
        size_t send = std::min(len, room);
        info.dropped[s] += len - send;
        if (send && !jsGone) {
          forwarded[s] += send;
          if (!Forward(*job, s + 1, buf, send)) {
            jsGone = true;  // the environment is shutting down: nobody will read the result
            KillGroup(*job);
          }
        }
      } else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
        close(job->fds[s]);
        job->fds[s] = -1;
        open[s] = false;
      }
    }
    if (pidIdx >= 0 && (pfds[pidIdx].revents & POLLIN)) {
      // Background processes the command left behind go with it, before the leader is reaped.
      KillGroup(*job);
      int status = 0;
      if (waitpid(job->pid, &status, 0) == job->pid) {
        if (WIFEXITED(status)) info.code = WEXITSTATUS(status);
        else if (WIFSIGNALED(status)) info.signal = WTERMSIG(status);
      } else {
        info.error = std::string("waitpid: ") + std::strerror(errno);
      }
      exited = true;
      drainUntil = Clock::now() + kDrainAfterExit;
    }
  }
  for (int s = 0; s < 2; s++)
    if (job->fds[s] >= 0) close(job->fds[s]);
  close(job->pidfd);
  job->done = true;
  if (!jsGone) SendExit(*job, info);
  job->tsfn.Release();
}

// ---- argument parsing -----------------------------------------------------------------------

struct Parser {
  Napi::Env env;
  std::string error;
  js::Kind kind = js::Kind::kArgType;
  Napi::Value Get(Napi::Object o, const char* key) { return o.Get(key); }
  bool Fail(const std::string& what, js::Kind k = js::Kind::kArgType) {
    if (error.empty()) {
      error = "spawnSandboxed: options." + what;
      kind = k;
    }
    return false;
  }
  bool String(Napi::Object o, const char* key, std::string* out) {
    Napi::Value v = o.Get(key);
    if (!v.IsString()) return Fail(std::string(key) + " must be a string");
    *out = v.As<Napi::String>().Utf8Value();
    if (out->find('\0') != std::string::npos) return Fail(std::string(key) + " contains a NUL byte", js::Kind::kArgValue);
    return true;
  }
  bool Strings(Napi::Object o, const char* key, std::vector<std::string>* out) {
    Napi::Value v = o.Get(key);
    if (!v.IsArray()) return Fail(std::string(key) + " must be an array of strings");
    Napi::Array a = v.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) {
      Napi::Value item = a.Get(i);
      if (!item.IsString()) return Fail(std::string(key) + " must be an array of strings");
      out->push_back(item.As<Napi::String>().Utf8Value());
      if (out->back().find('\0') != std::string::npos) return Fail(std::string(key) + " contains a NUL byte", js::Kind::kArgValue);
    }
    return true;
  }
  bool Number(Napi::Object o, const char* key, double min, double* out) {
    Napi::Value v = o.Get(key);
    if (!v.IsNumber()) return Fail(std::string(key) + " must be a number");
    *out = v.As<Napi::Number>().DoubleValue();
    if (!(*out >= min) || *out > 9.0e15) return Fail(std::string(key) + " is out of range", js::Kind::kRange);
    return true;
  }
  bool Bool(Napi::Object o, const char* key, bool* out) {
    Napi::Value v = o.Get(key);
    if (!v.IsBoolean()) return Fail(std::string(key) + " must be a boolean");
    *out = v.As<Napi::Boolean>().Value();
    return true;
  }
  bool Rules(Napi::Object o, std::vector<sandbox::PathRule>* out) {
    Napi::Value v = o.Get("rules");
    if (!v.IsArray()) return Fail("rules must be an array");
    Napi::Array a = v.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); i++) {
      Napi::Value item = a.Get(i);
      if (!item.IsObject()) return Fail("rules[" + std::to_string(i) + "] must be an object");
      std::string path, access;
      if (!String(item.As<Napi::Object>(), "path", &path) || !String(item.As<Napi::Object>(), "access", &access)) return false;
      if (path.empty() || path[0] != '/') return Fail("rules[" + std::to_string(i) + "].path must be absolute: " + path, js::Kind::kArgValue);
      Access acc;
      if (access == "rx") acc = Access::ReadExec;
      else if (access == "ro") acc = Access::ReadOnly;
      else if (access == "rw") acc = Access::ReadWrite;
      else if (access == "dev") acc = Access::Device;
      else return Fail("rules[" + std::to_string(i) + "].access must be rx, ro, rw or dev: " + access, js::Kind::kArgValue);
      out->push_back({path, acc});
    }
    return true;
  }
};

Napi::Array StringArray(Napi::Env env, const std::vector<std::string>& v) {
  Napi::Array a = Napi::Array::New(env, v.size());
  for (uint32_t i = 0; i < v.size(); i++) a.Set(i, v[i]);
  return a;
}

Napi::Object Enforcement(Napi::Env env, const sandbox::Ruleset& rs, const sandbox::SeccompFilter& sf, const sandbox::Limits& limits) {
  Napi::Object ll = Napi::Object::New(env);
  ll.Set("abi", rs.abi);
  ll.Set("handledFs", StringArray(env, sandbox::FsAccessNames(rs.handledFs)));
  ll.Set("handledNet", StringArray(env, sandbox::NetAccessNames(rs.handledNet)));
  ll.Set("scoped", StringArray(env, sandbox::ScopeNames(rs.scoped)));
  Napi::Array rules = Napi::Array::New(env, rs.applied.size());
  for (uint32_t i = 0; i < rs.applied.size(); i++) {
    Napi::Object r = Napi::Object::New(env);
    r.Set("path", rs.applied[i].path);
    r.Set("access", sandbox::AccessName(rs.applied[i].access));
    rules.Set(i, r);
  }
  ll.Set("rules", rules);
  Napi::Array skipped = Napi::Array::New(env, rs.skipped.size());
  for (uint32_t i = 0; i < rs.skipped.size(); i++) {
    Napi::Object r = Napi::Object::New(env);
    r.Set("path", rs.skipped[i].path);
    r.Set("reason", rs.skipped[i].reason);
    skipped.Set(i, r);
  }
  ll.Set("skipped", skipped);

  Napi::Object sc = Napi::Object::New(env);
  sc.Set("arch", sf.arch);
  sc.Set("denied", StringArray(env, sf.denied));

  Napi::Object rl = Napi::Object::New(env);
  rl.Set("cpuSeconds", Napi::Number::New(env, static_cast<double>(limits.cpuSeconds)));
  rl.Set("memoryBytes", Napi::Number::New(env, static_cast<double>(limits.memoryBytes)));
  rl.Set("maxProcesses", Napi::Number::New(env, static_cast<double>(limits.maxProcesses)));
  rl.Set("fileSizeBytes", Napi::Number::New(env, static_cast<double>(limits.fileSizeBytes)));
  rl.Set("coreBytes", 0);

  Napi::Object out = Napi::Object::New(env);
  out.Set("landlock", ll);
  out.Set("seccomp", sc);
  out.Set("rlimits", rl);
  out.Set("noNewPrivs", true);
  return out;
}

Napi::Value LandlockAbi(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  sandbox::AbiProbe p = sandbox::ProbeLandlock();
  Napi::Object out = Napi::Object::New(env);
  out.Set("abi", p.abi);
  if (!p.reason.empty()) out.Set("reason", p.reason);
  return out;
}

// The supervising thread does the signalling: it alone knows whether the leader is reaped yet,
// so a signal never reaches a group whose id the kernel has given to someone else.
bool Ring(Job& job, std::atomic<bool>& what) {
  if (job.done) return false;
  what = true;
  uint64_t one = 1;
  return write(job.cancelFd, &one, sizeof one) == sizeof one;
}

Napi::Value Kill(const Napi::CallbackInfo& info) {
  auto& job = *static_cast<std::shared_ptr<Job>*>(info.Data());
  return Napi::Boolean::New(info.Env(), Ring(*job, job->killAsked));
}

Napi::Value Terminate(const Napi::CallbackInfo& info) {
  auto& job = *static_cast<std::shared_ptr<Job>*>(info.Data());
  return Napi::Boolean::New(info.Env(), Ring(*job, job->termAsked));
}

// spawnSandboxed(options, onEvent(kind, payload)) -> { kill(), terminate(), enforcement, stdin? }
// (stdin: the write end of the child's stdin pipe, a descriptor JavaScript owns and closes, when
// options.stdinPipe is true; otherwise the child reads /dev/null). Events: 4 started
// ({ pid, userNamespace, ... }), 1 and 2 output chunks, 3 exit (with spawnError if it never ran).
Napi::Value SpawnSandboxed(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char kUsage[] = "spawnSandboxed(options: object, onEvent: function)";
  REQUIRE_ARGUMENT_OBJECT(kUsage, 0, "options", o);
  REQUIRE_ARGUMENT_FUNCTION(kUsage, 1, "onEvent", onEvent);
  Parser p{env, ""};
  auto job = std::make_shared<Job>();
  sandbox::SpawnSpec& spec = job->spec;
  std::vector<sandbox::PathRule> rules;
  bool network = false, userns = true;
  double timeoutMs = 0, forwardLimit = 0, cpu = 0, mem = 0, nproc = 0, fsize = 0;
  Napi::Value limitsV = o.Get("limits");
  bool ok = p.String(o, "file", &spec.file) && p.Strings(o, "argv", &spec.argv) && p.Strings(o, "env", &spec.env) &&
            p.String(o, "cwd", &spec.cwd) && p.Rules(o, &rules) && p.Bool(o, "network", &network) &&
            p.Bool(o, "userNamespace", &userns) && p.Number(o, "timeoutMs", 0, &timeoutMs) &&
            p.Number(o, "forwardLimit", 0, &forwardLimit) &&
            (limitsV.IsObject() || p.Fail("limits must be an object")) &&
            p.Number(limitsV.As<Napi::Object>(), "cpuSeconds", 1, &cpu) &&
            p.Number(limitsV.As<Napi::Object>(), "memoryBytes", 1 << 20, &mem) &&
            p.Number(limitsV.As<Napi::Object>(), "maxProcesses", 1, &nproc) &&
            p.Number(limitsV.As<Napi::Object>(), "fileSizeBytes", 0, &fsize);
  if (!ok) return js::Throw(env, p.kind, p.error);
  if (spec.argv.empty()) spec.argv.push_back(spec.file);
  spec.limits = {static_cast<rlim_t>(cpu), static_cast<rlim_t>(mem), static_cast<rlim_t>(nproc), static_cast<rlim_t>(fsize)};
  spec.userNamespace = userns;
  Napi::Value cg = o.Get("cgroupProcs");
  if (cg.IsString()) spec.cgroupProcs = cg.As<Napi::String>().Utf8Value();
  Napi::Value sp = o.Get("stdinPipe");
  if (!sp.IsUndefined() && !sp.IsBoolean()) return js::Throw(env, js::Kind::kArgType, "spawnSandboxed: options.stdinPipe must be a boolean, got " + js::Shown(sp));
  const bool stdinPipe = sp.IsBoolean() && sp.As<Napi::Boolean>().Value();

  sandbox::Ruleset rs;
  std::string err = sandbox::BuildRuleset(rules, network, &rs);
  if (!err.empty()) return js::ThrowSystem(env, "spawnSandboxed: sandbox: " + err, errno);
  job->rulesetFd = rs.fd;
  job->seccomp = sandbox::BuildSeccomp(network);
  spec.rulesetFd = rs.fd;
  spec.seccomp = &job->seccomp.program;
  job->cancelFd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (job->cancelFd < 0) return js::ThrowSystem(env, std::string("spawnSandboxed: sandbox: eventfd: ") + std::strerror(errno), errno);
  // Both ends close-on-exec: no other child of pinclaw's may hold the write end, or the server
  // would never see its stdin end.
  int stdinPipeFds[2] = {-1, -1};
  if (stdinPipe) {
    if (pipe2(stdinPipeFds, O_CLOEXEC) < 0) return js::ThrowSystem(env, std::string("spawnSandboxed: sandbox: pipe2: ") + std::strerror(errno), errno);
    job->stdinReadFd = stdinPipeFds[0];
    spec.stdinFd = stdinPipeFds[0];
  }
  job->timeoutMs = static_cast<int64_t>(timeoutMs);
  job->forwardLimit = static_cast<size_t>(forwardLimit);
  // A small queue: a fast writer waits for JavaScript instead of filling memory.
  job->tsfn = Napi::ThreadSafeFunction::New(env, onEvent, "pinclaw.sandbox", 16, 1);
  if (env.IsExceptionPending()) {
    if (stdinPipeFds[1] >= 0) close(stdinPipeFds[1]);
    return env.Undefined();
  }
  Napi::Object enforcement = Enforcement(env, rs, job->seccomp, spec.limits);

  try {
    std::thread(Run, job).detach();
  } catch (const std::exception& e) {
    if (stdinPipeFds[1] >= 0) close(stdinPipeFds[1]);
    job->tsfn.Release();
    return js::ThrowSystem(env, std::string("spawnSandboxed: sandbox: cannot start the supervising thread: ") + e.what(), EAGAIN);
  }

  Napi::Object out = Napi::Object::New(env);
  auto* held = new std::shared_ptr<Job>(job);
  Napi::Function killFn = Napi::Function::New(env, Kill, "kill", held);
  killFn.AddFinalizer([](Napi::Env, std::shared_ptr<Job>* h) { delete h; }, held);
  out.Set("kill", killFn);
  auto* heldToo = new std::shared_ptr<Job>(job);
  Napi::Function termFn = Napi::Function::New(env, Terminate, "terminate", heldToo);
  termFn.AddFinalizer([](Napi::Env, std::shared_ptr<Job>* h) { delete h; }, heldToo);
  out.Set("terminate", termFn);
  out.Set("enforcement", enforcement);
  if (stdinPipeFds[1] >= 0) out.Set("stdin", stdinPipeFds[1]);
  return out;
}

}  // namespace

void InitSandbox(Napi::Env env, Napi::Object exports) {
  exports.Set("landlockAbi", Napi::Function::New(env, LandlockAbi, "landlockAbi"));
  exports.Set("spawnSandboxed", Napi::Function::New(env, SpawnSandboxed, "spawnSandboxed"));
}

}  // namespace pinclaw
