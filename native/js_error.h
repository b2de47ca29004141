// One error style for every binding file of the addon (issue 30): argument checks in the manner of
// better-sqlite3's REQUIRE_ARGUMENT_* macros, and one way to throw.
//
// Every error the addon throws (or rejects with) is made by js::Make*/js::Throw* below, so:
//   - its message starts with the function: its signature for a bad argument ("notify(socketPath:
//     string, state: string): socketPath must be a string, got a number"), its name otherwise
//     ("gpioGetValues: fd 7 is not a GPIO line request of this process");
//   - it carries `err.code`, always set, from this small set (the class goes with the code):
//       ERR_INVALID_ARG_TYPE   TypeError   an argument is missing or of the wrong type
//       ERR_INVALID_ARG_VALUE  TypeError   the type is right but the value is not one the function
//                                          takes (an unknown name, a foreign handle, a bad shape)
//       ERR_OUT_OF_RANGE       RangeError  a number outside its range or not whole, a list too long
//       E<errno name>          Error       the system refused (EBADF, ENOENT, ENOTTY...); also sets
//                                          `errno` and, where the binding knows them, `step`/`path`
//       ERR_PINCLAW_DATA       Error       data handed in does not parse (rank text, embedder file,
//                                          serialized ranking index)
//       ERR_PINCLAW_STATE      Error       the call is fine but comes at the wrong time (an encoding
//                                          not loaded yet, no V8 isolate on this thread)
//   The first three are Node's own codes, so a caller treats the addon's and Node's argument errors
//   alike (src/hardware/i2c/validate.ts, the TypeScript reference, throws the same).
// The TypeScript references in src/native/ throw the same class and code where they check the
// same argument; test/native-errors.test.ts calls every exported function with a bad argument.
#pragma once
#include <napi.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <string>

namespace pinclaw {
namespace js {

enum class Kind { kArgType, kArgValue, kRange, kData, kState };

inline const char* CodeOf(Kind kind) {
  switch (kind) {
    case Kind::kArgType: return "ERR_INVALID_ARG_TYPE";
    case Kind::kArgValue: return "ERR_INVALID_ARG_VALUE";
    case Kind::kRange: return "ERR_OUT_OF_RANGE";
    case Kind::kData: return "ERR_PINCLAW_DATA";
    case Kind::kState: return "ERR_PINCLAW_STATE";
  }
  return "ERR_PINCLAW_STATE";
}

// The errno's symbolic name ("ENOENT"), the code Node gives its own system errors.
const char* ErrnoName(int err);

// The one place an Error object is made: the class follows from the kind, the code is always set.
inline Napi::Error Make(Napi::Env env, Kind kind, const std::string& message) {
  Napi::Error e = kind == Kind::kArgType || kind == Kind::kArgValue ? Napi::Error(Napi::TypeError::New(env, message))
                  : kind == Kind::kRange                            ? Napi::Error(Napi::RangeError::New(env, message))
                                                                    : Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, CodeOf(kind)));
  return e;
}

// A system failure: code is the errno's name, errno its number.
inline Napi::Error MakeSystem(Napi::Env env, const std::string& message, int err) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, ErrnoName(err)));
  e.Set("errno", Napi::Number::New(env, err));
  return e;
}

// Throw and return undefined, so a binding can write `return js::Throw(...)`.
inline Napi::Value Throw(Napi::Env env, Kind kind, const std::string& message) {
  Make(env, kind, message).ThrowAsJavaScriptException();
  return env.Undefined();
}
inline Napi::Value ThrowSystem(Napi::Env env, const std::string& message, int err) {
  MakeSystem(env, message, err).ThrowAsJavaScriptException();
  return env.Undefined();
}
// The same for helpers that report failure with false.
inline bool Fail(Napi::Env env, Kind kind, const std::string& message) {
  Throw(env, kind, message);
  return false;
}

// How a bad value is shown after ", got ": its type, or the number itself (hex for register-like
// values); src/hardware/i2c/validate.ts shows values the same way.
inline std::string Shown(const Napi::Value& v, bool hex = false) {
  switch (v.Type()) {
    case napi_undefined: return "undefined";
    case napi_null: return "null";
    case napi_number: {
      double d = v.As<Napi::Number>().DoubleValue();
      if (hex && d >= 0 && d <= 0xffff && d == std::floor(d)) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned>(d));
        return buf;
      }
      return v.ToString().Utf8Value();  // JavaScript's String(d): 1.5, NaN, -1, 1e+21
    }
    case napi_string: return "a string";
    case napi_boolean: return "a boolean";
    case napi_symbol: return "a symbol";
    case napi_function: return "a function";
    case napi_bigint: return "a bigint";
    default: return "an object";
  }
}

// "<usage>: <name> must be <expected>, got <shown>" as a TypeError with ERR_INVALID_ARG_TYPE.
inline Napi::Value ThrowArgType(Napi::Env env, const char* usage, const char* name, const char* expected, const Napi::Value& got) {
  return Throw(env, Kind::kArgType, std::string(usage) + ": " + name + " must be " + expected + ", got " + Shown(got));
}

inline bool IsUint8Array(const Napi::Value& v) {
  return v.IsTypedArray() && v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array;
}

}  // namespace js
}  // namespace pinclaw

// Argument checks in the manner of better-sqlite3's REQUIRE_ARGUMENT_*: inside a binding
// (`info` in scope, returning Napi::Value), each checks argument `at`, throws the TypeError above
// and returns undefined when it does not fit, else declares `var` holding the value. `usage` is the
// function's signature as a string literal; `name` the argument's name in it.
#define PINCLAW_REQUIRE_(usage, at, name, test, expected) \
  if (!(test)) return ::pinclaw::js::ThrowArgType(info.Env(), usage, name, expected, info[at])

#define REQUIRE_ARGUMENT_STRING(usage, at, name, var)                                   \
  PINCLAW_REQUIRE_(usage, at, name, info[at].IsString(), "a string");                   \
  std::string var = info[at].As<Napi::String>().Utf8Value()

#define REQUIRE_ARGUMENT_NUMBER(usage, at, name, var)                                   \
  PINCLAW_REQUIRE_(usage, at, name, info[at].IsNumber(), "a number");                   \
  double var = info[at].As<Napi::Number>().DoubleValue()

#define REQUIRE_ARGUMENT_OBJECT(usage, at, name, var)                                   \
  PINCLAW_REQUIRE_(usage, at, name, info[at].IsObject(), "an object");                  \
  Napi::Object var = info[at].As<Napi::Object>()

#define REQUIRE_ARGUMENT_FUNCTION(usage, at, name, var)                                 \
  PINCLAW_REQUIRE_(usage, at, name, info[at].IsFunction(), "a function");               \
  Napi::Function var = info[at].As<Napi::Function>()

#define REQUIRE_ARGUMENT_ARRAY(usage, at, name, var)                                    \
  PINCLAW_REQUIRE_(usage, at, name, info[at].IsArray(), "an array");                    \
  Napi::Array var = info[at].As<Napi::Array>()

// An optional boolean: undefined (or absent) gives `dflt`.
#define OPTIONAL_ARGUMENT_BOOLEAN(usage, at, name, var, dflt)                           \
  PINCLAW_REQUIRE_(usage, at, name, info[at].IsUndefined() || info[at].IsBoolean(), "a boolean"); \
  const bool var = info[at].IsBoolean() ? info[at].As<Napi::Boolean>().Value() : (dflt)

// A number in [lo, hi] (whole when `whole`): not a number is ERR_INVALID_ARG_TYPE, a number outside
// ERR_OUT_OF_RANGE with the range in the message.
#define REQUIRE_ARGUMENT_RANGE(usage, at, name, var, lo, hi, whole, expected)                       \
  PINCLAW_REQUIRE_(usage, at, name, info[at].IsNumber(), "a number");                               \
  const double var = info[at].As<Napi::Number>().DoubleValue();                                     \
  if (!(var >= (lo) && var <= (hi)) || ((whole) && var != std::floor(var)))                         \
  return ::pinclaw::js::Throw(info.Env(), ::pinclaw::js::Kind::kRange,                              \
                              std::string(usage) + ": " + name + " must be " + expected + ", got " + \
                                  ::pinclaw::js::Shown(info[at]))
