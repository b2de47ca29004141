// I2C over /dev/i2c-N, shared by the three I2C files: i2c_dev.cc (the ioctls), i2c_error.cc (what a
// failure is called) and i2c.cc (the JavaScript face). Nothing here touches N-API, so the device
// layer and the messages run on libuv's pool threads.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace pinclaw {
namespace i2c {

// 0x00-0x02 are the general call / START byte, CBUS and other-bus-format addresses and 0x78-0x7f
// the 10-bit prefixes and device ID: no 7-bit device lives there, and a write to 0x00 is a general
// call every device may act on (0x06 resets them all). i2cdetect probes the same range by default.
constexpr int kFirstAddress = 0x03;
constexpr int kLastAddress = 0x77;
constexpr size_t kSmbusBlockMax = 32;     // I2C_SMBUS_BLOCK_MAX
constexpr size_t kRdwrMessageMax = 8192;  // i2c-dev refuses longer I2C_RDWR messages
constexpr size_t kRdwrMessagesMax = 42;   // I2C_RDWR_IOCTL_MAX_MSGS

// What is addressed: the device file and, when its name is i2c-N, the bus number (for messages and
// for listing the sibling buses when it is missing).
struct Target {
  std::string path;
  int bus = -1;       // -1: the file is not named i2c-N
  std::string dir;    // the directory holding it
  int address = -1;   // -1: not addressed (I2C_FUNCS)
};
Target TargetFor(const std::string& path);

enum class SmbusOp { Quick, ReadByte, ReadByteData, ReadWordData, ReadI2cBlockData, WriteByte, WriteByteData, WriteWordData, WriteI2cBlockData };
bool ParseSmbusOp(const std::string& name, SmbusOp* op);
const char* SmbusOpName(SmbusOp op);
bool IsRead(SmbusOp op);

struct SmbusCall {
  SmbusOp op = SmbusOp::Quick;
  uint8_t reg = 0;
  uint16_t value = 0;          // quick: the bit; writeByte/writeByteData: a byte; writeWordData: a word
  std::vector<uint8_t> block;  // readI2cBlockData: sized to the length asked; writeI2cBlockData: the bytes
  uint32_t result = 0;         // readByte/readByteData/readWordData
};

// One I2C_RDWR message: a write carries its bytes, a read is sized to the length asked and filled.
struct Message {
  bool read = false;
  std::vector<uint8_t> data;
};

// A failed step: which ioctl (or "open"), the errno, and the operation as the caller named it.
struct Failure {
  int err = 0;  // 0: success
  const char* step = "";
  std::string operation;
};

// The I2C_FUNCS bits pinclaw names, as JavaScript sees them: "readWordData" for
// I2C_FUNC_SMBUS_READ_WORD_DATA and so on ("i2c" is plain I2C messages, I2C_RDWR).
struct FuncBit {
  const char* name;
  unsigned long bit;
};
extern const FuncBit kFuncBits[14];

// Each opens the device, does its one job and closes it again on every path.
Failure Funcs(const Target& t, unsigned long* mask);
Failure Transfer(const Target& t, std::vector<Message>* msgs);
Failure Smbus(const Target& t, SmbusCall* call);

// The error a failure becomes: the message names the device and the reason; code is the errno's name.
struct Described {
  std::string message;
  std::string code;
};
Described Describe(const Target& t, const Failure& f);
// "0, 1" or "none": the i2c-N entries of a directory, by number.
std::string ListBuses(const std::string& dir);

}  // namespace i2c
}  // namespace pinclaw
