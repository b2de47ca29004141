// What an I2C failure is called: a message naming the device and the reason, and the errno's name
// as `code`. Runs on the pool thread that saw the failure, so listing the sibling buses for a
// missing one never touches the event loop. src/hardware/i2c/errors.ts builds the same messages
// for the i2c-bus reference, and the tests hold the two to each other.
#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "i2c.h"
#include "js_error.h"

namespace pinclaw {
namespace i2c {
namespace {

struct OpName {
  SmbusOp op;
  const char* name;
};
const OpName kOps[] = {
    {SmbusOp::Quick, "quick"},
    {SmbusOp::ReadByte, "readByte"},
    {SmbusOp::ReadByteData, "readByteData"},
    {SmbusOp::ReadWordData, "readWordData"},
    {SmbusOp::ReadI2cBlockData, "readI2cBlockData"},
    {SmbusOp::WriteByte, "writeByte"},
    {SmbusOp::WriteByteData, "writeByteData"},
    {SmbusOp::WriteWordData, "writeWordData"},
    {SmbusOp::WriteI2cBlockData, "writeI2cBlockData"},
};

// "i2c-<digits>" -> the number, else -1. At most 9 digits, so it fits an int.
int BusNumber(const std::string& name) {
  if (name.size() < 5 || name.size() > 13 || name.compare(0, 4, "i2c-") != 0) return -1;
  int n = 0;
  for (size_t i = 4; i < name.size(); i++) {
    if (name[i] < '0' || name[i] > '9') return -1;
    n = n * 10 + (name[i] - '0');
  }
  return n;
}

std::string Hex(int v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

// The errors a bus reports when nobody acknowledged the address: ENXIO (most drivers), EREMOTEIO
// (bcm2835, designware), EIO (some older drivers), ENODEV (i2c-stub, for an address with no chip).
bool NoAnswer(int err) { return err == ENXIO || err == EREMOTEIO || err == EIO || err == ENODEV; }

bool IsTransferStep(const char* step) { return std::strcmp(step, "I2C_RDWR") == 0 || std::strcmp(step, "I2C_SMBUS") == 0; }

}  // namespace

Target TargetFor(const std::string& path) {
  Target t;
  t.path = path;
  size_t slash = path.rfind('/');
  t.dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  t.bus = BusNumber(slash == std::string::npos ? path : path.substr(slash + 1));
  return t;
}

bool ParseSmbusOp(const std::string& name, SmbusOp* op) {
  for (const OpName& o : kOps) {
    if (name == o.name) {
      *op = o.op;
      return true;
    }
  }
  return false;
}

const char* SmbusOpName(SmbusOp op) {
  for (const OpName& o : kOps)
    if (o.op == op) return o.name;
  return "?";
}

bool IsRead(SmbusOp op) {
  return op == SmbusOp::ReadByte || op == SmbusOp::ReadByteData || op == SmbusOp::ReadWordData || op == SmbusOp::ReadI2cBlockData;
}

std::string ListBuses(const std::string& dir) {
  std::vector<int> found;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      int n = BusNumber(e->d_name);
      if (n >= 0) found.push_back(n);
    }
    closedir(d);
  }
  if (found.empty()) return "none";
  std::sort(found.begin(), found.end());
  std::string out;
  for (int n : found) out += (out.empty() ? "" : ", ") + std::to_string(n);
  return out;
}

Described Describe(const Target& t, const Failure& f) {
  const std::string code = js::ErrnoName(f.err);
  const std::string where = t.bus >= 0 ? "bus " + std::to_string(t.bus) : t.path;
  const std::string at = t.address >= 0 ? " at " + Hex(t.address) : "";
  const bool open = std::strcmp(f.step, "open") == 0;
  std::string msg;
  if (open && (f.err == ENOENT || f.err == ENOTDIR)) {
    msg = t.bus >= 0 ? "no I2C bus " + std::to_string(t.bus) + " (" + t.path + "); buses here: " + ListBuses(t.dir)
                     : "no I2C adapter at " + t.path + " (no such file)";
  } else if (open && (f.err == EACCES || f.err == EPERM)) {
    msg = "permission denied on " + t.path + ": add the user to the 'i2c' group (sudo usermod -aG i2c $USER, then log in again)";
  } else if (open) {
    msg = "cannot open " + t.path + " (" + code + ")";
  } else if (f.err == ENOTTY) {
    msg = t.path + " is not an I2C adapter (ENOTTY from ioctl " + f.step + ")";
  } else if (std::strcmp(f.step, "I2C_SLAVE") == 0 && f.err == EBUSY) {
    msg = "address " + Hex(t.address) + " on " + where + " is in use by a kernel driver (EBUSY); pinclaw does not take it from the driver";
  } else if (IsTransferStep(f.step) && NoAnswer(f.err)) {
    msg = "no device answered" + at + " on " + where;
  } else if (f.err == EOPNOTSUPP) {
    msg = where + " does not support " + f.operation + " (EOPNOTSUPP)";
  } else {
    msg = f.operation + at + " on " + where + " failed (" + code + ")";
  }
  return {msg, code};
}

}  // namespace i2c
}  // namespace pinclaw
