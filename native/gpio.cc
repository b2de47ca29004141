// The JavaScript face of GPIO (the ioctls are gpio_dev.cc):
//   gpioChipInfo(path)                          { name, label, lines }
//   gpioLineInfo(path, offset)                  { offset, name, consumer, used, direction, activeLow,
//                                                 bias, drive, edge, debounceUs }
//   gpioRequest(path, offsets, config, consumer) fd of the line request; config is { direction,
//                                                 activeLow, bias, drive, edge, debounceUs, values }
//   gpioGetValues(fd, mask) / gpioSetValues(fd, mask, bits) / gpioSetConfig(fd, config)
//   gpioWatch(fd, callback)                     callback(error | null, events[]) on the event loop,
//                                                 events are { offset, edge, timestampNs (bigint,
//                                                 CLOCK_MONOTONIC), seqno, lineSeqno }
//   gpioRelease(fd)                             stops the watch and closes the request
// The ioctls are quick and run on the calling thread. Edge events arrive without polling or a
// thread: the request fd is watched by libuv (uv_poll), and the callback runs when the kernel has
// queued events. Only fds this module returned are accepted, so a wrong number can never close
// someone else's file. Failures throw an Error with code (errno name), errno, step and path.
#include <uv.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <unistd.h>

#include "addon.h"
#include "js_error.h"
#include "gpio.h"

namespace pinclaw {

namespace {

using gpio::Bias;
using gpio::Direction;
using gpio::Drive;
using gpio::EdgeKind;
using gpio::Failure;
using gpio::LineConfig;

struct Watch;

struct Request {
  std::string path;
  unsigned lines = 0;
  napi_env env = nullptr;  // the environment (main thread or worker) that made the request
  Watch* watch = nullptr;
};

struct Watch {
  uv_poll_t poll;
  int fd = -1;
  napi_env env = nullptr;
  Napi::FunctionReference callback;
  Napi::AsyncContext* context = nullptr;
};

// Per process, not per environment: fds are process-wide. Only touched on the JavaScript thread.
std::map<int, Request>& Requests() {
  static std::map<int, Request> requests;
  return requests;
}

Napi::Value ThrowFailure(Napi::Env env, const char* fn, const Failure& f, const std::string& path) {
  std::string msg = std::string(fn) + ": " + f.step + " on " + path + ": " + std::strerror(f.err);
  Napi::Error e = js::MakeSystem(env, msg, f.err);
  e.Set("step", Napi::String::New(env, f.step));
  e.Set("path", Napi::String::New(env, path));
  e.ThrowAsJavaScriptException();
  return env.Undefined();
}

// Every message starts with the binding's name (js_error.h).
Napi::Value ThrowArg(Napi::Env env, const char* fn, js::Kind kind, const std::string& msg) {
  return js::Throw(env, kind, std::string(fn) + ": " + msg);
}

bool ArgString(const char* fn, const Napi::CallbackInfo& info, size_t i, const char* what, std::string* out) {
  if (!info[i].IsString()) {
    ThrowArg(info.Env(), fn, js::Kind::kArgType, std::string(what) + " must be a string, got " + js::Shown(info[i]));
    return false;
  }
  *out = info[i].As<Napi::String>().Utf8Value();
  return true;
}

bool ArgUint(const char* fn, const Napi::CallbackInfo& info, size_t i, const char* what, uint32_t* out) {
  if (!info[i].IsNumber()) {
    ThrowArg(info.Env(), fn, js::Kind::kArgType, std::string(what) + " must be a number, got " + js::Shown(info[i]));
    return false;
  }
  double d = info[i].As<Napi::Number>().DoubleValue();
  if (!(d >= 0 && d <= 4294967295.0) || d != static_cast<double>(static_cast<uint32_t>(d))) {
    ThrowArg(info.Env(), fn, js::Kind::kRange, std::string(what) + " must be an integer from 0 to 2^32-1, got " + js::Shown(info[i]));
    return false;
  }
  *out = static_cast<uint32_t>(d);
  return true;
}

Request* OwnedRequest(const char* fn, const Napi::CallbackInfo& info, int* fdOut) {
  uint32_t fd;
  if (!ArgUint(fn, info, 0, "fd", &fd)) return nullptr;
  auto it = Requests().find(static_cast<int>(fd));
  if (it == Requests().end()) {
    js::ThrowSystem(info.Env(), std::string(fn) + ": fd " + std::to_string(fd) + " is not a GPIO line request of this process (released already?)", EBADF);
    return nullptr;
  }
  *fdOut = static_cast<int>(fd);
  return &it->second;
}

// One enum field of the config object: absent is the default, anything else must be a listed name.
template <typename E>
bool EnumField(const char* fn, Napi::Object o, const char* key, const char* const* names, const E* values, size_t n, E* out) {
  Napi::Value v = o.Get(key);
  if (v.IsUndefined()) return true;
  if (v.IsString()) {
    std::string s = v.As<Napi::String>().Utf8Value();
    for (size_t i = 0; i < n; i++) {
      if (s == names[i]) {
        *out = values[i];
        return true;
      }
    }
  }
  std::string list;
  for (size_t i = 0; i < n; i++) list += (i ? ", " : "") + std::string(names[i]);
  ThrowArg(o.Env(), fn, js::Kind::kArgValue, std::string("config.") + key + " must be one of " + list);
  return false;
}

bool ParseConfig(const char* fn, Napi::Value v, LineConfig* c) {
  if (!v.IsObject()) {
    ThrowArg(v.Env(), fn, js::Kind::kArgType, "config must be an object, got " + js::Shown(v));
    return false;
  }
  Napi::Object o = v.As<Napi::Object>();
  static const char* const dirNames[] = {"as-is", "input", "output"};
  static const Direction dirs[] = {Direction::AsIs, Direction::Input, Direction::Output};
  static const char* const biasNames[] = {"as-is", "pull-up", "pull-down", "disabled"};
  static const Bias biases[] = {Bias::AsIs, Bias::PullUp, Bias::PullDown, Bias::Disabled};
  static const char* const driveNames[] = {"push-pull", "open-drain", "open-source"};
  static const Drive drives[] = {Drive::PushPull, Drive::OpenDrain, Drive::OpenSource};
  static const char* const edgeNames[] = {"none", "rising", "falling", "both"};
  static const EdgeKind edges[] = {EdgeKind::None, EdgeKind::Rising, EdgeKind::Falling, EdgeKind::Both};
  if (!EnumField(fn, o, "direction", dirNames, dirs, 3, &c->direction)) return false;
  if (!EnumField(fn, o, "bias", biasNames, biases, 4, &c->bias)) return false;
  if (!EnumField(fn, o, "drive", driveNames, drives, 3, &c->drive)) return false;
  if (!EnumField(fn, o, "edge", edgeNames, edges, 4, &c->edge)) return false;
  Napi::Value al = o.Get("activeLow");
  if (!al.IsUndefined()) {
    if (!al.IsBoolean()) return ThrowArg(v.Env(), fn, js::Kind::kArgType, "config.activeLow must be a boolean, got " + js::Shown(al)), false;
    c->activeLow = al.As<Napi::Boolean>().Value();
  }
  Napi::Value db = o.Get("debounceUs");
  if (!db.IsUndefined()) {
    double d = db.IsNumber() ? db.As<Napi::Number>().DoubleValue() : -1;
    if (!(d >= 0 && d <= 100000000) || d != static_cast<double>(static_cast<uint32_t>(d))) {
      return ThrowArg(v.Env(), fn, db.IsNumber() ? js::Kind::kRange : js::Kind::kArgType, "config.debounceUs must be an integer from 0 to 100000000, got " + js::Shown(db)), false;
    }
    c->debounceUs = static_cast<uint32_t>(d);
  }
  Napi::Value vals = o.Get("values");
  if (!vals.IsUndefined()) {
    double d = vals.IsNumber() ? vals.As<Napi::Number>().DoubleValue() : -1;
    if (!(d >= 0 && d <= 4294967295.0) || d != static_cast<double>(static_cast<uint32_t>(d))) {
      return ThrowArg(v.Env(), fn, vals.IsNumber() ? js::Kind::kRange : js::Kind::kArgType, "config.values must be a bit mask (an integer from 0 to 2^32-1), got " + js::Shown(vals)), false;
    }
    c->hasValues = true;
    c->values = static_cast<uint32_t>(d);
  }
  return true;
}

const char* BiasName(Bias b) {
  switch (b) {
    case Bias::PullUp: return "pull-up";
    case Bias::PullDown: return "pull-down";
    case Bias::Disabled: return "disabled";
    default: return "as-is";
  }
}

const char* DriveName(Drive d) {
  return d == Drive::OpenDrain ? "open-drain" : d == Drive::OpenSource ? "open-source" : "push-pull";
}

const char* EdgeName(EdgeKind e) {
  return e == EdgeKind::Rising ? "rising" : e == EdgeKind::Falling ? "falling" : e == EdgeKind::Both ? "both" : "none";
}

Napi::Value ChipInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char fn[] = "gpioChipInfo";
  std::string path;
  if (!ArgString(fn, info, 0, "path", &path)) return env.Undefined();
  gpio::ChipInfo chip;
  Failure f = gpio::ReadChipInfo(path, &chip);
  if (f.err) return ThrowFailure(env, fn, f, path);
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", chip.name);
  o.Set("label", chip.label);
  o.Set("lines", Napi::Number::New(env, chip.lines));
  return o;
}

Napi::Value LineInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char fn[] = "gpioLineInfo";
  std::string path;
  uint32_t offset;
  if (!ArgString(fn, info, 0, "path", &path) || !ArgUint(fn, info, 1, "offset", &offset)) return env.Undefined();
  gpio::LineInfo li;
  Failure f = gpio::ReadLineInfo(path, offset, &li);
  if (f.err) return ThrowFailure(env, fn, f, path);
  Napi::Object o = Napi::Object::New(env);
  o.Set("offset", Napi::Number::New(env, li.offset));
  o.Set("name", li.name);
  o.Set("consumer", li.consumer);
  o.Set("used", li.used);
  o.Set("direction", li.output ? "output" : "input");
  o.Set("activeLow", li.activeLow);
  o.Set("bias", BiasName(li.bias));
  o.Set("drive", DriveName(li.drive));
  o.Set("edge", EdgeName(li.edge));
  o.Set("debounceUs", Napi::Number::New(env, li.debounceUs));
  return o;
}

Napi::Value RequestLines(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char fn[] = "gpioRequest";
  std::string path, consumer;
  if (!ArgString(fn, info, 0, "path", &path)) return env.Undefined();
  if (info.Length() < 2 || !info[1].IsArray()) return ThrowArg(env, fn, js::Kind::kArgType, "offsets must be an array of line offsets, got " + js::Shown(info[1]));
  Napi::Array arr = info[1].As<Napi::Array>();
  if (arr.Length() == 0 || arr.Length() > gpio::kMaxLines) return ThrowArg(env, fn, js::Kind::kRange, "offsets must hold 1 to 32 line offsets, got " + std::to_string(arr.Length()));
  std::vector<uint32_t> offsets;
  for (uint32_t i = 0; i < arr.Length(); i++) {
    Napi::Value v = arr.Get(i);
    double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
    if (!(d >= 0 && d < 65536) || d != static_cast<double>(static_cast<uint32_t>(d))) return ThrowArg(env, fn, v.IsNumber() ? js::Kind::kRange : js::Kind::kArgType, "offsets[" + std::to_string(i) + "] must be a line offset (an integer from 0 to 65535), got " + js::Shown(v));
    offsets.push_back(static_cast<uint32_t>(d));
  }
  LineConfig config;
  if (info.Length() < 3 || !ParseConfig(fn, info[2], &config)) {
    if (!env.IsExceptionPending()) ThrowArg(env, fn, js::Kind::kArgType, "config must be an object");
    return env.Undefined();
  }
  if (!ArgString(fn, info, 3, "consumer", &consumer)) return env.Undefined();
  int fd = -1;
  Failure f = gpio::RequestLines(path, offsets, config, consumer, &fd);
  if (f.err) return ThrowFailure(env, fn, f, path);
  Requests()[fd] = Request{path, static_cast<unsigned>(offsets.size()), env, nullptr};
  return Napi::Number::New(env, fd);
}

Napi::Value GetValues(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char fn[] = "gpioGetValues";
  int fd;
  Request* r = OwnedRequest(fn, info, &fd);
  uint32_t mask;
  if (!r || !ArgUint(fn, info, 1, "mask", &mask)) return env.Undefined();
  uint32_t bits = 0;
  Failure f = gpio::GetValues(fd, mask, &bits);
  if (f.err) return ThrowFailure(env, fn, f, r->path);
  return Napi::Number::New(env, bits);
}

Napi::Value SetValues(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char fn[] = "gpioSetValues";
  int fd;
  Request* r = OwnedRequest(fn, info, &fd);
  uint32_t mask, bits;
  if (!r || !ArgUint(fn, info, 1, "mask", &mask) || !ArgUint(fn, info, 2, "bits", &bits)) return env.Undefined();
  Failure f = gpio::SetValues(fd, mask, bits);
  if (f.err) return ThrowFailure(env, fn, f, r->path);
  return env.Undefined();
}

Napi::Value SetConfig(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char fn[] = "gpioSetConfig";
  int fd;
  Request* r = OwnedRequest(fn, info, &fd);
  if (!r) return env.Undefined();
  LineConfig config;
  if (info.Length() < 2 || !ParseConfig(fn, info[1], &config)) {
    if (!env.IsExceptionPending()) ThrowArg(env, fn, js::Kind::kArgType, "config must be an object");
    return env.Undefined();
  }
  Failure f = gpio::SetConfig(fd, r->lines, config);
  if (f.err) return ThrowFailure(env, fn, f, r->path);
  return env.Undefined();
}

void OnClosed(uv_handle_t* h) { delete static_cast<Watch*>(h->data); }

void StopWatch(Watch* w) {
  uv_poll_stop(&w->poll);
  w->callback.Reset();
  delete w->context;
  w->context = nullptr;
  uv_close(reinterpret_cast<uv_handle_t*>(&w->poll), OnClosed);
}

void OnReadable(uv_poll_t* handle, int status, int /*events*/) {
  Watch* w = static_cast<Watch*>(handle->data);
  Napi::Env env(w->env);
  Napi::HandleScope scope(env);
  Napi::Value error = env.Null();
  std::vector<gpio::Event> events;
  if (status < 0) {
    error = js::MakeSystem(env, std::string("gpioWatch: watching GPIO events: ") + uv_strerror(status), -status).Value();
  } else {
    Failure f = gpio::ReadEvents(w->fd, &events);
    if (f.err) {
      error = js::MakeSystem(env, std::string("gpioWatch: reading GPIO events: ") + std::strerror(f.err), f.err).Value();
    }
  }
  if (error.IsNull() && events.empty()) return;
  Napi::Array arr = Napi::Array::New(env, events.size());
  for (size_t i = 0; i < events.size(); i++) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("offset", Napi::Number::New(env, events[i].offset));
    o.Set("edge", events[i].rising ? "rising" : "falling");
    o.Set("timestampNs", Napi::BigInt::New(env, static_cast<uint64_t>(events[i].timestampNs)));
    o.Set("seqno", Napi::Number::New(env, events[i].seqno));
    o.Set("lineSeqno", Napi::Number::New(env, events[i].lineSeqno));
    arr.Set(static_cast<uint32_t>(i), o);
  }
  // A failed fd (the chip unplugged) would report itself forever: stop before telling JavaScript.
  if (!error.IsNull()) uv_poll_stop(&w->poll);
  napi_value argv[2] = {error, arr};
  napi_value result;
  napi_status s = napi_make_callback(w->env, *w->context, env.Global(), w->callback.Value(), 2, argv, &result);
  if (s == napi_pending_exception) {
    // The TypeScript side catches its own errors; one that escapes is an uncaught exception, as it
    // would be from any other event-loop callback.
    napi_value exc;
    napi_get_and_clear_last_exception(w->env, &exc);
    napi_fatal_exception(w->env, exc);
  }
}

Napi::Value WatchEvents(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char fn[] = "gpioWatch";
  int fd;
  Request* r = OwnedRequest(fn, info, &fd);
  if (!r) return env.Undefined();
  if (info.Length() < 2 || !info[1].IsFunction()) return ThrowArg(env, fn, js::Kind::kArgType, "callback must be a function, got " + js::Shown(info[1]));
  if (r->watch) return ThrowArg(env, fn, js::Kind::kState, "fd " + std::to_string(fd) + " is watched already");
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || !loop) return ThrowArg(env, fn, js::Kind::kState, "no event loop");
  Watch* w = new Watch();
  w->fd = fd;
  w->env = env;
  w->poll.data = w;
  int rc = uv_poll_init(loop, &w->poll, fd);
  if (rc < 0) {
    delete w;
    return js::ThrowSystem(env, std::string(fn) + ": uv_poll_init: " + uv_strerror(rc), -rc);
  }
  w->callback = Napi::Persistent(info[1].As<Napi::Function>());
  w->context = new Napi::AsyncContext(env, "pinclaw:gpio-events");
  rc = uv_poll_start(&w->poll, UV_READABLE | UV_PRIORITIZED, OnReadable);
  if (rc < 0) {
    StopWatch(w);
    return js::ThrowSystem(env, std::string(fn) + ": uv_poll_start: " + uv_strerror(rc), -rc);
  }
  r->watch = w;
  return env.Undefined();
}

void ReleaseFd(int fd, Request& r) {
  if (r.watch) StopWatch(r.watch);
  r.watch = nullptr;
  close(fd);
}

Napi::Value Release(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  static const char fn[] = "gpioRelease";
  int fd;
  Request* r = OwnedRequest(fn, info, &fd);
  if (!r) return env.Undefined();
  // The handle's close callback runs later; the fd is closed now, after uv_poll_stop, which is
  // what libuv requires (never close a polled fd while its poll is active).
  ReleaseFd(fd, *r);
  Requests().erase(fd);
  return env.Undefined();
}

// A worker thread that loaded the addon and ends: its lines go with it. At process exit the
// kernel releases them anyway.
void ReleaseAll(void* envPtr) {
  auto& all = Requests();
  for (auto it = all.begin(); it != all.end();) {
    if (it->second.env != static_cast<napi_env>(envPtr)) {
      ++it;
      continue;
    }
    ReleaseFd(it->first, it->second);
    it = all.erase(it);
  }
}

}  // namespace

void InitGpio(Napi::Env env, Napi::Object exports) {
  exports.Set("gpioChipInfo", Napi::Function::New(env, ChipInfo, "gpioChipInfo"));
  exports.Set("gpioLineInfo", Napi::Function::New(env, LineInfo, "gpioLineInfo"));
  exports.Set("gpioRequest", Napi::Function::New(env, RequestLines, "gpioRequest"));
  exports.Set("gpioGetValues", Napi::Function::New(env, GetValues, "gpioGetValues"));
  exports.Set("gpioSetValues", Napi::Function::New(env, SetValues, "gpioSetValues"));
  exports.Set("gpioSetConfig", Napi::Function::New(env, SetConfig, "gpioSetConfig"));
  exports.Set("gpioWatch", Napi::Function::New(env, WatchEvents, "gpioWatch"));
  exports.Set("gpioRelease", Napi::Function::New(env, Release, "gpioRelease"));
  napi_add_env_cleanup_hook(env, ReleaseAll, env);
}

}  // namespace pinclaw
