// The JavaScript face of I2C (the device layer is i2c_dev.cc, the messages i2c_error.cc):
//   i2cFuncs(device)                                Promise<{ mask, i2c, quick, readByte, ... }>
//   i2cTransfer(device, address, messages)          Promise<Buffer[]>: I2C_RDWR, one combined
//                                                   transaction; messages are { write: Uint8Array }
//                                                   or { read: length }, a Buffer per read comes back
//   i2cSmbus(device, address, op, register, data)   Promise<number | Buffer | null>: I2C_SLAVE + I2C_SMBUS
// `device` is a bus number (/dev/i2c-N) or a device path. Arguments are checked here, on the calling
// thread, and a bad one throws at once (TypeError or RangeError, with code). The device is touched
// only on a libuv pool thread, never on the event loop; its failures reject with an Error carrying
// code (the errno's name), path, bus, address, operation and step.
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <new>

#include "addon.h"
#include "i2c.h"
#include "js_error.h"

namespace pinclaw {
namespace {

using i2c::Failure;
using i2c::Message;
using i2c::SmbusCall;
using i2c::SmbusOp;
using i2c::Target;

const char kOpNames[] = "quick, readByte, readByteData, readWordData, readI2cBlockData, writeByte, writeByteData, writeWordData, writeI2cBlockData";

// How a bad value is shown in a message (js::Shown); src/hardware/i2c/validate.ts shows it the same way.
std::string Shown(Napi::Value v, bool hex) { return js::Shown(v, hex); }

// Argument checks: each throws the JavaScript error itself and returns false.
class Args {
 public:
  explicit Args(Napi::Env env) : env_(env) {}

  // The messages are word for word those of src/hardware/i2c/validate.ts, which the i2c-bus backend
  // throws too, so they name the argument ("I2C address") but not this binding.
  bool TypeFail(const std::string& msg) { return js::Fail(env_, js::Kind::kArgType, msg); }
  bool RangeFail(const std::string& msg) { return js::Fail(env_, js::Kind::kRange, msg); }

  // An integer in [lo, hi]; a number outside (or not whole) is a RangeError, anything else a TypeError.
  bool Integer(Napi::Value v, double lo, double hi, const std::string& what, bool hex, double* out) {
    if (!v.IsNumber()) return TypeFail(what + ", got " + Shown(v, hex));
    double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= lo && d <= hi) || d != std::floor(d)) return RangeFail(what + ", got " + Shown(v, hex));
    *out = d;
    return true;
  }

  bool Device(Napi::Value v, Target* t) {
    static const char kWhat[] = "I2C bus must be a bus number (an integer, 0 or more) or a device path";
    if (v.IsString()) {
      std::string path = v.As<Napi::String>().Utf8Value();
      if (path.empty() || path.find('\0') != std::string::npos) return TypeFail(std::string(kWhat) + ", got an empty path or one with a NUL byte");
      *t = i2c::TargetFor(path);
      return true;
    }
    double n;
    if (!Integer(v, 0, INT_MAX, kWhat, false, &n)) return false;
    *t = i2c::TargetFor("/dev/i2c-" + std::to_string(static_cast<int>(n)));
    return true;
  }

  bool Address(Napi::Value v, Target* t) {
    double a;
    if (!Integer(v, i2c::kFirstAddress, i2c::kLastAddress, "I2C address must be an integer from 0x03 to 0x77 (0x00-0x02 and 0x78-0x7f are reserved)", true, &a)) return false;
    t->address = static_cast<int>(a);
    return true;
  }

  bool Bytes(Napi::Value v, size_t max, const std::string& name, const std::string& limit, std::vector<uint8_t>* out) {
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) return TypeFail(name + " must be a Uint8Array, got " + Shown(v, false));
    Napi::Uint8Array a = v.As<Napi::Uint8Array>();
    if (a.ElementLength() < 1 || a.ElementLength() > max)
      return RangeFail(name + " must hold 1 to " + std::to_string(max) + " bytes (" + limit + "), got " + std::to_string(a.ElementLength()));
    out->assign(a.Data(), a.Data() + a.ElementLength());
    return true;
  }

 private:
  Napi::Env env_;
};

class Worker : public Napi::AsyncWorker {
 public:
  enum class Kind { Funcs, Transfer, Smbus };
  Worker(Napi::Env env, Kind kind, Target target)
      : Napi::AsyncWorker(env, "pinclaw:i2c"), kind_(kind), target_(std::move(target)), deferred_(Napi::Promise::Deferred::New(env)) {}

  std::vector<Message>& messages() { return messages_; }
  SmbusCall& call() { return call_; }
  Napi::Promise Promise() { return deferred_.Promise(); }

  void Execute() override {
    try {
      switch (kind_) {
        case Kind::Funcs: failure_ = i2c::Funcs(target_, &mask_); break;
        case Kind::Transfer: failure_ = i2c::Transfer(target_, &messages_); break;
        case Kind::Smbus: failure_ = i2c::Smbus(target_, &call_); break;
      }
      if (failure_.err) described_ = i2c::Describe(target_, failure_);
    } catch (const std::bad_alloc&) {
      failure_ = Failure{ENOMEM, "", "I2C"};
      described_ = {"I2C: out of memory", "ENOMEM"};
    }
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (failure_.err) {
      deferred_.Reject(ErrorValue(env));
      return;
    }
    switch (kind_) {
      case Kind::Funcs: deferred_.Resolve(FuncsValue(env)); break;
      case Kind::Transfer: {
        Napi::Array out = Napi::Array::New(env);
        uint32_t i = 0;
        for (const Message& m : messages_)
          if (m.read) out.Set(i++, Napi::Buffer<uint8_t>::Copy(env, m.data.data(), m.data.size()));
        deferred_.Resolve(out);
        break;
      }
      case Kind::Smbus:
        if (call_.op == SmbusOp::ReadI2cBlockData) deferred_.Resolve(Napi::Buffer<uint8_t>::Copy(env, call_.block.data(), call_.block.size()));
        else if (i2c::IsRead(call_.op)) deferred_.Resolve(Napi::Number::New(env, call_.result));
        else deferred_.Resolve(env.Null());
        break;
    }
  }
  void OnError(const Napi::Error& err) override { deferred_.Reject(err.Value()); }  // not reached: Execute never calls SetError

 private:
  Napi::Value ErrorValue(Napi::Env env) {
    Napi::Error err = js::MakeSystem(env, described_.message, failure_.err);
    Napi::Object o = err.Value();
    o.Set("code", described_.code);  // the same errno name; kept from Describe, which the tests hold to errors.ts
    o.Set("path", target_.path);
    o.Set("bus", target_.bus >= 0 ? Napi::Value(Napi::Number::New(env, target_.bus)) : env.Null());
    o.Set("address", target_.address >= 0 ? Napi::Value(Napi::Number::New(env, target_.address)) : env.Null());
    o.Set("operation", failure_.operation);
    o.Set("step", failure_.step);
    return o;
  }

  // The adapter's I2C_FUNCS bits, named by what pinclaw can ask of it.
  Napi::Value FuncsValue(Napi::Env env) {
    Napi::Object o = Napi::Object::New(env);
    o.Set("mask", Napi::Number::New(env, static_cast<double>(mask_)));
    for (const i2c::FuncBit& f : i2c::kFuncBits) o.Set(f.name, Napi::Boolean::New(env, (mask_ & f.bit) == f.bit));
    return o;
  }

  Kind kind_;
  Target target_;
  Napi::Promise::Deferred deferred_;
  unsigned long mask_ = 0;
  std::vector<Message> messages_;
  SmbusCall call_;
  Failure failure_;
  i2c::Described described_;
};

Napi::Value Queue(Worker* w) {
  Napi::Promise p = w->Promise();
  w->Queue();  // deletes itself after OnOK/OnError
  return p;
}

Napi::Value I2cFuncs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Args args(env);
  Target t;
  if (info.Length() < 1) args.TypeFail("i2cFuncs(device: number | string)");
  if (env.IsExceptionPending() || !args.Device(info[0], &t)) return env.Undefined();
  return Queue(new Worker(env, Worker::Kind::Funcs, t));
}

Napi::Value I2cTransfer(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Args args(env);
  Target t;
  if (info.Length() < 3 || !info[2].IsArray())
    args.TypeFail("i2cTransfer(device: number | string, address: number, messages: ({ write: Uint8Array } | { read: number })[])");
  if (env.IsExceptionPending() || !args.Device(info[0], &t) || !args.Address(info[1], &t)) return env.Undefined();
  Napi::Array list = info[2].As<Napi::Array>();
  if (list.Length() < 1 || list.Length() > i2c::kRdwrMessagesMax) {
    args.RangeFail("an I2C transfer holds 1 to 42 messages (I2C_RDWR_IOCTL_MAX_MSGS), got " + std::to_string(list.Length()));
    return env.Undefined();
  }
  std::vector<Message> msgs(list.Length());
  for (uint32_t i = 0; i < list.Length(); i++) {
    const std::string name = "messages[" + std::to_string(i) + "]";
    Napi::Value item = list.Get(i);
    Napi::Value read = item.IsObject() ? item.As<Napi::Object>().Get("read") : env.Undefined();
    Napi::Value write = item.IsObject() ? item.As<Napi::Object>().Get("write") : env.Undefined();
    if (env.IsExceptionPending()) return env.Undefined();  // a getter that threw
    if (read.IsUndefined() == write.IsUndefined()) {
      args.TypeFail(name + " must be { read: length } or { write: bytes }");
      return env.Undefined();
    }
    if (!write.IsUndefined()) {
      if (!args.Bytes(write, i2c::kRdwrMessageMax, name + ".write", "the I2C_RDWR message limit", &msgs[i].data)) return env.Undefined();
      continue;
    }
    double len;
    if (!args.Integer(read, 1, i2c::kRdwrMessageMax, name + ".read must be an integer from 1 to 8192 (the I2C_RDWR message limit)", false, &len)) return env.Undefined();
    msgs[i].read = true;
    msgs[i].data.assign(static_cast<size_t>(len), 0);
  }
  auto* w = new Worker(env, Worker::Kind::Transfer, t);
  w->messages() = std::move(msgs);
  return Queue(w);
}

Napi::Value I2cSmbus(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Args args(env);
  Target t;
  if (info.Length() < 4)
    args.TypeFail("i2cSmbus(device: number | string, address: number, op: string, register: number, data?: number | Uint8Array)");
  if (env.IsExceptionPending() || !args.Device(info[0], &t) || !args.Address(info[1], &t)) return env.Undefined();
  SmbusCall call;
  if (!info[2].IsString() || !i2c::ParseSmbusOp(info[2].As<Napi::String>().Utf8Value(), &call.op)) {
    std::string got = info[2].IsString() ? "'" + info[2].As<Napi::String>().Utf8Value() + "'" : Shown(info[2], false);
    args.TypeFail(std::string("op must be one of ") + kOpNames + ", got " + got);
    return env.Undefined();
  }
  double reg, value;
  if (!args.Integer(info[3], 0, 255, "register must be an integer from 0 to 255", false, &reg)) return env.Undefined();
  call.reg = static_cast<uint8_t>(reg);
  Napi::Value data = info.Length() > 4 ? info[4] : env.Undefined();
  switch (call.op) {
    case SmbusOp::Quick:
      if (!args.Integer(data, 0, 1, "quick bit must be 0 (write) or 1 (read)", false, &value)) return env.Undefined();
      call.value = static_cast<uint16_t>(value);
      break;
    case SmbusOp::WriteByte:
    case SmbusOp::WriteByteData:
      if (!args.Integer(data, 0, 255, "byte must be an integer from 0 to 255", false, &value)) return env.Undefined();
      call.value = static_cast<uint16_t>(value);
      break;
    case SmbusOp::WriteWordData:
      if (!args.Integer(data, 0, 65535, "word must be an integer from 0 to 65535", false, &value)) return env.Undefined();
      call.value = static_cast<uint16_t>(value);
      break;
    case SmbusOp::ReadI2cBlockData:
      if (!args.Integer(data, 1, i2c::kSmbusBlockMax, "length must be an integer from 1 to 32 (the SMBus block limit)", false, &value)) return env.Undefined();
      call.block.assign(static_cast<size_t>(value), 0);
      break;
    case SmbusOp::WriteI2cBlockData:
      if (!args.Bytes(data, i2c::kSmbusBlockMax, "bytes", "the SMBus block limit", &call.block)) return env.Undefined();
      break;
    default:
      break;  // readByte, readByteData, readWordData carry no data
  }
  auto* w = new Worker(env, Worker::Kind::Smbus, t);
  w->call() = std::move(call);
  return Queue(w);
}

}  // namespace

void InitI2c(Napi::Env env, Napi::Object exports) {
  exports.Set("i2cFuncs", Napi::Function::New(env, I2cFuncs, "i2cFuncs"));
  exports.Set("i2cTransfer", Napi::Function::New(env, I2cTransfer, "i2cTransfer"));
  exports.Set("i2cSmbus", Napi::Function::New(env, I2cSmbus, "i2cSmbus"));
}

}  // namespace pinclaw
