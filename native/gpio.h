// GPIO through the Linux GPIO character device, uAPI v2 (ioctls on /dev/gpiochipN; no libgpiod).
// gpio_dev.cc holds the ioctls and knows nothing of N-API; gpio.cc is the JavaScript face and the
// edge watcher (the line request's fd polled by libuv on the event loop: no thread, no polling).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace pinclaw {
namespace gpio {

// A request holds at most this many lines here: values travel as 32-bit masks to JavaScript
// (the kernel allows 64; pinclaw requests one line at a time).
constexpr unsigned kMaxLines = 32;

enum class Direction { AsIs, Input, Output };
enum class Bias { AsIs, PullUp, PullDown, Disabled };
enum class Drive { PushPull, OpenDrain, OpenSource };
enum class EdgeKind { None, Rising, Falling, Both };

struct LineConfig {
  Direction direction = Direction::Input;
  bool activeLow = false;
  Bias bias = Bias::AsIs;
  Drive drive = Drive::PushPull;
  EdgeKind edge = EdgeKind::None;
  uint32_t debounceUs = 0;  // 0: no debounce attribute
  bool hasValues = false;   // outputs: initial values given
  uint32_t values = 0;      // bit i: the i-th requested line's logical value
};

struct ChipInfo {
  std::string name;
  std::string label;
  uint32_t lines = 0;
};

struct LineInfo {
  uint32_t offset = 0;
  std::string name;
  std::string consumer;
  bool used = false;
  bool output = false;
  bool activeLow = false;
  Bias bias = Bias::AsIs;
  Drive drive = Drive::PushPull;
  EdgeKind edge = EdgeKind::None;
  uint32_t debounceUs = 0;
};

struct Event {
  uint64_t timestampNs = 0;
  bool rising = false;
  uint32_t offset = 0;
  uint32_t seqno = 0;
  uint32_t lineSeqno = 0;
};

// A failed step: the errno and which ioctl (or "open") failed. err == 0: success.
struct Failure {
  int err = 0;
  const char* step = "";
};

Failure ReadChipInfo(const std::string& path, ChipInfo* out);
Failure ReadLineInfo(const std::string& path, uint32_t offset, LineInfo* out);
// Opens the chip, requests the lines and closes the chip again; *fd is the request (O_NONBLOCK,
// O_CLOEXEC), the caller's to close.
Failure RequestLines(const std::string& path, const std::vector<uint32_t>& offsets, const LineConfig& config, const std::string& consumer, int* fd);
Failure GetValues(int fd, uint32_t mask, uint32_t* bits);
Failure SetValues(int fd, uint32_t mask, uint32_t bits);
Failure SetConfig(int fd, unsigned lineCount, const LineConfig& config);
// Reads the events waiting on a request fd; returns EAGAIN's absence as success with none read.
Failure ReadEvents(int fd, std::vector<Event>* out);

}  // namespace gpio
}  // namespace pinclaw
