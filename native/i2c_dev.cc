// The /dev/i2c-N ioctls: I2C_FUNCS, I2C_RDWR, and I2C_SLAVE + I2C_SMBUS. Runs on libuv's pool
// threads. Every call opens the device, does one thing and closes it again, so no descriptor
// outlives a call (or leaks into a child spawned meanwhile: O_CLOEXEC), and the address chosen with
// I2C_SLAVE belongs to that descriptor alone: concurrent calls for other addresses cannot change it.
// Opening costs microseconds; a transfer on a 100 kHz bus costs far more.
#include <fcntl.h>
#include <linux/i2c-dev.h>
#include <linux/i2c.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "i2c.h"

namespace pinclaw {
namespace i2c {
namespace {

class Device {
 public:
  explicit Device(const std::string& path) {
    do fd_ = open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOCTTY);
    while (fd_ < 0 && errno == EINTR);
  }
  ~Device() {
    if (fd_ >= 0) close(fd_);
  }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// errno is read while building the Failure, before the Device closes (close may change errno).
Failure Fail(const char* step, const std::string& operation) { return Failure{errno, step, operation}; }

}  // namespace

const FuncBit kFuncBits[14] = {
    {"i2c", I2C_FUNC_I2C},
    {"tenBitAddress", I2C_FUNC_10BIT_ADDR},
    {"smbusPec", I2C_FUNC_SMBUS_PEC},
    {"quick", I2C_FUNC_SMBUS_QUICK},
    {"readByte", I2C_FUNC_SMBUS_READ_BYTE},
    {"writeByte", I2C_FUNC_SMBUS_WRITE_BYTE},
    {"readByteData", I2C_FUNC_SMBUS_READ_BYTE_DATA},
    {"writeByteData", I2C_FUNC_SMBUS_WRITE_BYTE_DATA},
    {"readWordData", I2C_FUNC_SMBUS_READ_WORD_DATA},
    {"writeWordData", I2C_FUNC_SMBUS_WRITE_WORD_DATA},
    {"readBlockData", I2C_FUNC_SMBUS_READ_BLOCK_DATA},
    {"writeBlockData", I2C_FUNC_SMBUS_WRITE_BLOCK_DATA},
    {"readI2cBlockData", I2C_FUNC_SMBUS_READ_I2C_BLOCK},
    {"writeI2cBlockData", I2C_FUNC_SMBUS_WRITE_I2C_BLOCK},
};

Failure Funcs(const Target& t, unsigned long* mask) {
  const std::string operation = "I2C_FUNCS";
  Device dev(t.path);
  if (dev.fd() < 0) return Fail("open", operation);
  if (ioctl(dev.fd(), I2C_FUNCS, mask) < 0) return Fail("I2C_FUNCS", operation);
  return {};
}

// All messages go to the adapter as one combined transaction: repeated STARTs between them, one
// STOP at the end, which is what "write the register, then read" needs on devices that forget the
// register pointer at a STOP. The address travels in every message; no I2C_SLAVE is involved.
Failure Transfer(const Target& t, std::vector<Message>* msgs) {
  const std::string operation = "I2C transfer";
  std::vector<i2c_msg> raw(msgs->size());
  for (size_t i = 0; i < msgs->size(); i++) {
    Message& m = (*msgs)[i];
    raw[i].addr = static_cast<__u16>(t.address);
    raw[i].flags = m.read ? I2C_M_RD : 0;
    raw[i].len = static_cast<__u16>(m.data.size());
    raw[i].buf = m.data.data();
  }
  i2c_rdwr_ioctl_data data{raw.data(), static_cast<__u32>(raw.size())};
  Device dev(t.path);
  if (dev.fd() < 0) return Fail("open", operation);
  int n = ioctl(dev.fd(), I2C_RDWR, &data);
  if (n < 0) return Fail("I2C_RDWR", operation);
  // An adapter that stops early reports how many messages it did; the rest never happened.
  if (static_cast<size_t>(n) != raw.size()) return Failure{EIO, "I2C_RDWR", operation};
  return {};
}

// I2C_SLAVE, never I2C_SLAVE_FORCE: an address a kernel driver has claimed stays the driver's.
Failure Smbus(const Target& t, SmbusCall* call) {
  const std::string operation = std::string("SMBus ") + SmbusOpName(call->op);
  i2c_smbus_data data;
  std::memset(&data, 0, sizeof data);
  i2c_smbus_ioctl_data args{};
  args.read_write = IsRead(call->op) ? I2C_SMBUS_READ : I2C_SMBUS_WRITE;
  args.command = call->reg;
  args.data = &data;
  switch (call->op) {
    case SmbusOp::Quick:
      // The direction bit is the whole message; i2cdetect probes with a quick write (bit 0).
      args.read_write = call->value ? I2C_SMBUS_READ : I2C_SMBUS_WRITE;
      args.command = 0;
      args.size = I2C_SMBUS_QUICK;
      args.data = nullptr;
      break;
    case SmbusOp::ReadByte:
      args.command = 0;
      args.size = I2C_SMBUS_BYTE;
      break;
    case SmbusOp::WriteByte:
      // "Send byte": the one byte on the wire travels in the command field.
      args.command = static_cast<__u8>(call->value);
      args.size = I2C_SMBUS_BYTE;
      args.data = nullptr;
      break;
    case SmbusOp::ReadByteData:
      args.size = I2C_SMBUS_BYTE_DATA;
      break;
    case SmbusOp::WriteByteData:
      args.size = I2C_SMBUS_BYTE_DATA;
      data.byte = static_cast<__u8>(call->value);
      break;
    case SmbusOp::ReadWordData:
      args.size = I2C_SMBUS_WORD_DATA;
      break;
    case SmbusOp::WriteWordData:
      args.size = I2C_SMBUS_WORD_DATA;
      data.word = call->value;
      break;
    case SmbusOp::ReadI2cBlockData:
      args.size = I2C_SMBUS_I2C_BLOCK_DATA;
      data.block[0] = static_cast<__u8>(call->block.size());
      break;
    case SmbusOp::WriteI2cBlockData:
      args.size = I2C_SMBUS_I2C_BLOCK_DATA;
      data.block[0] = static_cast<__u8>(call->block.size());
      std::memcpy(&data.block[1], call->block.data(), call->block.size());
      break;
  }
  Device dev(t.path);
  if (dev.fd() < 0) return Fail("open", operation);
  if (ioctl(dev.fd(), I2C_SLAVE, static_cast<unsigned long>(t.address)) < 0) return Fail("I2C_SLAVE", operation);
  if (ioctl(dev.fd(), I2C_SMBUS, &args) < 0) return Fail("I2C_SMBUS", operation);
  switch (call->op) {
    case SmbusOp::ReadByte:
    case SmbusOp::ReadByteData:
      call->result = data.byte;
      break;
    case SmbusOp::ReadWordData:
      call->result = data.word;
      break;
    case SmbusOp::ReadI2cBlockData: {
      // The kernel says how many bytes came back in block[0]; never more than were asked for.
      size_t got = data.block[0] < call->block.size() ? data.block[0] : call->block.size();
      std::memcpy(call->block.data(), &data.block[1], got);
      call->block.resize(got);
      break;
    }
    default:
      break;
  }
  return {};
}

}  // namespace i2c
}  // namespace pinclaw
