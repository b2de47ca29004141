// The GPIO character device ioctls (uAPI v2). Every function opens what it needs and closes it on
// every path; a request fd is the only thing that outlives a call, and it is the caller's.
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <linux/gpio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "gpio.h"

namespace pinclaw {
namespace gpio {
namespace {

// ioctl retried on EINTR: a signal (SIGCHLD from an exec tool) must not fail a GPIO write.
int Ioctl(int fd, unsigned long request, void* arg) {
  int r;
  do r = ioctl(fd, request, arg);
  while (r < 0 && errno == EINTR);
  return r;
}

Failure Fail(const char* step) { return Failure{errno, step}; }

int OpenChip(const std::string& path) {
  int fd;
  do fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  return fd;
}

void CopyName(char* dst, const std::string& src) {
  std::memset(dst, 0, GPIO_MAX_NAME_SIZE);
  std::strncpy(dst, src.c_str(), GPIO_MAX_NAME_SIZE - 1);
}

std::string NameOf(const char* src) { return std::string(src, strnlen(src, GPIO_MAX_NAME_SIZE)); }

uint64_t FlagsOf(const LineConfig& c) {
  uint64_t f = 0;
  if (c.activeLow) f |= GPIO_V2_LINE_FLAG_ACTIVE_LOW;
  if (c.direction == Direction::Input) f |= GPIO_V2_LINE_FLAG_INPUT;
  if (c.direction == Direction::Output) f |= GPIO_V2_LINE_FLAG_OUTPUT;
  // The kernel refuses edges on a line that is not an input, and a drive mode on one that is not
  // an output (EINVAL); the TypeScript side checks the combination first, with a clearer message.
  if (c.edge == EdgeKind::Rising || c.edge == EdgeKind::Both) f |= GPIO_V2_LINE_FLAG_EDGE_RISING;
  if (c.edge == EdgeKind::Falling || c.edge == EdgeKind::Both) f |= GPIO_V2_LINE_FLAG_EDGE_FALLING;
  if (c.drive == Drive::OpenDrain) f |= GPIO_V2_LINE_FLAG_OPEN_DRAIN;
  if (c.drive == Drive::OpenSource) f |= GPIO_V2_LINE_FLAG_OPEN_SOURCE;
  if (c.bias == Bias::PullUp) f |= GPIO_V2_LINE_FLAG_BIAS_PULL_UP;
  if (c.bias == Bias::PullDown) f |= GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN;
  if (c.bias == Bias::Disabled) f |= GPIO_V2_LINE_FLAG_BIAS_DISABLED;
  return f;
}

uint64_t AllLines(unsigned n) { return n >= 64 ? ~0ULL : ((1ULL << n) - 1); }

void FillConfig(gpio_v2_line_config* out, unsigned n, const LineConfig& c) {
  std::memset(out, 0, sizeof *out);
  out->flags = FlagsOf(c);
  unsigned a = 0;
  if (c.debounceUs > 0 && c.direction == Direction::Input) {
    out->attrs[a].attr.id = GPIO_V2_LINE_ATTR_ID_DEBOUNCE;
    out->attrs[a].attr.debounce_period_us = c.debounceUs;
    out->attrs[a].mask = AllLines(n);
    a++;
  }
  if (c.hasValues && c.direction == Direction::Output) {
    out->attrs[a].attr.id = GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES;
    out->attrs[a].attr.values = c.values;
    out->attrs[a].mask = AllLines(n);
    a++;
  }
  out->num_attrs = a;
}

}  // namespace

Failure ReadChipInfo(const std::string& path, ChipInfo* out) {
  int fd = OpenChip(path);
  if (fd < 0) return Fail("open");
  gpiochip_info info;
  std::memset(&info, 0, sizeof info);
  Failure f;
  if (Ioctl(fd, GPIO_GET_CHIPINFO_IOCTL, &info) < 0) {
    f = Fail("GPIO_GET_CHIPINFO_IOCTL");
  } else {
    out->name = NameOf(info.name);
    out->label = NameOf(info.label);
    out->lines = info.lines;
  }
  close(fd);
  return f;
}

Failure ReadLineInfo(const std::string& path, uint32_t offset, LineInfo* out) {
  int fd = OpenChip(path);
  if (fd < 0) return Fail("open");
  gpio_v2_line_info info;
  std::memset(&info, 0, sizeof info);
  info.offset = offset;
  Failure f;
  if (Ioctl(fd, GPIO_V2_GET_LINEINFO_IOCTL, &info) < 0) {
    f = Fail("GPIO_V2_GET_LINEINFO_IOCTL");
  } else {
    const uint64_t fl = info.flags;
    out->offset = info.offset;
    out->name = NameOf(info.name);
    out->consumer = NameOf(info.consumer);
    out->used = fl & GPIO_V2_LINE_FLAG_USED;
    out->output = fl & GPIO_V2_LINE_FLAG_OUTPUT;
    out->activeLow = fl & GPIO_V2_LINE_FLAG_ACTIVE_LOW;
    out->bias = (fl & GPIO_V2_LINE_FLAG_BIAS_PULL_UP) ? Bias::PullUp
              : (fl & GPIO_V2_LINE_FLAG_BIAS_PULL_DOWN) ? Bias::PullDown
              : (fl & GPIO_V2_LINE_FLAG_BIAS_DISABLED) ? Bias::Disabled : Bias::AsIs;
    out->drive = (fl & GPIO_V2_LINE_FLAG_OPEN_DRAIN) ? Drive::OpenDrain
               : (fl & GPIO_V2_LINE_FLAG_OPEN_SOURCE) ? Drive::OpenSource : Drive::PushPull;
    const bool r = fl & GPIO_V2_LINE_FLAG_EDGE_RISING, fa = fl & GPIO_V2_LINE_FLAG_EDGE_FALLING;
    out->edge = r && fa ? EdgeKind::Both : r ? EdgeKind::Rising : fa ? EdgeKind::Falling : EdgeKind::None;
    for (unsigned i = 0; i < info.num_attrs && i < GPIO_V2_LINE_NUM_ATTRS_MAX; i++) {
      if (info.attrs[i].id == GPIO_V2_LINE_ATTR_ID_DEBOUNCE) out->debounceUs = info.attrs[i].debounce_period_us;
    }
  }
  close(fd);
  return f;
}

Failure RequestLines(const std::string& path, const std::vector<uint32_t>& offsets, const LineConfig& config, const std::string& consumer, int* fd) {
  if (offsets.empty() || offsets.size() > kMaxLines) return Failure{EINVAL, "GPIO_V2_GET_LINE_IOCTL"};
  int chip = OpenChip(path);
  if (chip < 0) return Fail("open");
  gpio_v2_line_request req;
  std::memset(&req, 0, sizeof req);
  for (size_t i = 0; i < offsets.size(); i++) req.offsets[i] = offsets[i];
  req.num_lines = static_cast<uint32_t>(offsets.size());
  CopyName(req.consumer, consumer);
  FillConfig(&req.config, req.num_lines, config);
  Failure f;
  if (Ioctl(chip, GPIO_V2_GET_LINE_IOCTL, &req) < 0) {
    f = Fail("GPIO_V2_GET_LINE_IOCTL");
  } else {
    // Non-blocking so that reading events on the event loop never waits; close-on-exec so that a
    // child (exec tool) never holds a line after pinclaw lets it go.
    int fl = fcntl(req.fd, F_GETFL);
    if (fl < 0 || fcntl(req.fd, F_SETFL, fl | O_NONBLOCK) < 0 || fcntl(req.fd, F_SETFD, FD_CLOEXEC) < 0) {
      f = Fail("fcntl");
      close(req.fd);
    } else {
      *fd = req.fd;
    }
  }
  close(chip);
  return f;
}

Failure GetValues(int fd, uint32_t mask, uint32_t* bits) {
  gpio_v2_line_values v;
  std::memset(&v, 0, sizeof v);
  v.mask = mask;
  if (Ioctl(fd, GPIO_V2_LINE_GET_VALUES_IOCTL, &v) < 0) return Fail("GPIO_V2_LINE_GET_VALUES_IOCTL");
  *bits = static_cast<uint32_t>(v.bits & mask);
  return Failure{};
}

Failure SetValues(int fd, uint32_t mask, uint32_t bits) {
  gpio_v2_line_values v;
  std::memset(&v, 0, sizeof v);
  v.mask = mask;
  v.bits = bits & mask;
  if (Ioctl(fd, GPIO_V2_LINE_SET_VALUES_IOCTL, &v) < 0) return Fail("GPIO_V2_LINE_SET_VALUES_IOCTL");
  return Failure{};
}

Failure SetConfig(int fd, unsigned lineCount, const LineConfig& config) {
  gpio_v2_line_config c;
  FillConfig(&c, lineCount, config);
  if (Ioctl(fd, GPIO_V2_LINE_SET_CONFIG_IOCTL, &c) < 0) return Fail("GPIO_V2_LINE_SET_CONFIG_IOCTL");
  return Failure{};
}

Failure ReadEvents(int fd, std::vector<Event>* out) {
  gpio_v2_line_event buf[16];
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return Failure{};
      return Fail("read");
    }
    const size_t count = static_cast<size_t>(n) / sizeof buf[0];
    for (size_t i = 0; i < count; i++) {
      Event e;
      e.timestampNs = buf[i].timestamp_ns;
      e.rising = buf[i].id == GPIO_V2_LINE_EVENT_RISING_EDGE;
      e.offset = buf[i].offset;
      e.seqno = buf[i].seqno;
      e.lineSeqno = buf[i].line_seqno;
      out->push_back(e);
    }
    if (count < sizeof buf / sizeof buf[0]) return Failure{};
  }
}

}  // namespace gpio
}  // namespace pinclaw
