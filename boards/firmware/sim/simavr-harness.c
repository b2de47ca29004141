/* pinclaw-simavr: runs an AVR firmware in simavr (libsimavr) with its USART0 on stdin/stdout and
 * a text control channel on file descriptor 3, so a test can talk the protocol and, at the same
 * time, look at and drive the simulated pins. Built for the host by scripts/build-firmware.mjs
 * when libsimavr-dev is installed; test/firmware.test.ts starts it with fd 3 as a socket pair.
 *
 *   pinclaw-simavr MCU FREQUENCY FIRMWARE.elf      e.g. atmega328p 16000000 avr-uno.elf
 *
 * Control commands, one per line; each gets exactly one line back:
 *   port B            -> "port B <PORTB> <DDRB> <PINB>" (hex), the registers as the CPU sees them
 *   drive D2 1        -> "ok": an external level on PD2 (what a button or a wire would do)
 *   adc 0 2500        -> "ok": 2500 mV on ADC channel 0
 *   duty B1 20        -> after 20 ms of simulated time, "duty B1 <high> <total> <edges>": the
 *                        cycles PB1 was high out of <total> (whole periods if it toggled, else
 *                        the window), and how often its level changed
 *   cycles            -> "cycles <n> <frequency>"
 *
 * Simulated time is held to wall-clock time (the harness sleeps when the AVR runs ahead), so a
 * firmware's millis and the host's timeouts agree, and an idle AVR costs little host CPU. */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <simavr/avr_adc.h>
#include <simavr/avr_ioport.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>

#define CTL_FD 3

static avr_t *avr;
static int uart_out_fd;

/* Bytes for the AVR's receiver, fed as fast as the simulated UART takes them (XON/XOFF). */
static uint8_t in_buf[4096];
static size_t in_len, in_pos;
static int uart_xoff;
static avr_irq_t *uart_in_irq;

static uint8_t out_buf[4096];
static size_t out_len;

static int ctl_open;
static char ctl_line[256];
static size_t ctl_len;

/* A duty-cycle measurement. Over whole periods (first to last rising edge) when the pin
 * toggles, so a window that cuts a period does not skew it; over the window when it is steady. */
static struct {
  int active;
  char port;
  int bit;
  int level, edges, rises;
  avr_cycle_count_t start, last, high, end;
  avr_cycle_count_t first_rise, last_rise, high_at_last_rise;
} measure;

static void ctl_reply(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ctl_reply(const char *fmt, ...) {
  if (!ctl_open) return;
  char line[256];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(line, sizeof line - 1, fmt, ap);
  va_end(ap);
  line[n++] = '\n';
  if (write(CTL_FD, line, (size_t)n) < 0) ctl_open = 0;
}

static void flush_uart_out(void) {
  size_t done = 0;
  while (done < out_len) {
    ssize_t n = write(uart_out_fd, out_buf + done, out_len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      exit(0); /* the test closed our stdout: nothing left to do */
    }
    done += (size_t)n;
  }
  out_len = 0;
}

static void on_uart_out(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  (void)param;
  if (out_len == sizeof out_buf) flush_uart_out();
  out_buf[out_len++] = (uint8_t)value;
}

static void feed_uart(void) {
  while (!uart_xoff && in_pos < in_len) avr_raise_irq(uart_in_irq, in_buf[in_pos++]);
  if (in_pos == in_len) in_pos = in_len = 0;
}

static void on_xon(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  (void)value;
  (void)param;
  uart_xoff = 0;
  feed_uart();
}

static void on_xoff(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  (void)value;
  (void)param;
  uart_xoff = 1;
}

static void on_pin(struct avr_irq_t *irq, uint32_t value, void *param) {
  (void)irq;
  int id = (int)(intptr_t)param;
  if (!measure.active || id != (measure.port - 'A') * 8 + measure.bit) return;
  int level = value ? 1 : 0;
  if (level == measure.level) return;
  if (measure.level) measure.high += avr->cycle - measure.last;
  measure.last = avr->cycle;
  measure.level = level;
  measure.edges++;
  if (level && measure.rises++ == 0) {
    measure.first_rise = avr->cycle;
    measure.high = 0;
  } else if (level) {
    measure.last_rise = avr->cycle;
    measure.high_at_last_rise = measure.high;
  }
}

static int parse_pin(const char *s, char *port, int *bit) {
  if (s[0] < 'A' || s[0] > 'L' || s[1] < '0' || s[1] > '7' || s[2]) return 0;
  *port = s[0];
  *bit = s[1] - '0';
  return 1;
}

static avr_irq_t *pin_irq(char port, int bit) { return avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(port), bit); }

static void command(char *line) {
  char *argv[4] = {0};
  int argc = 0;
  for (char *tok = strtok(line, " \t"); tok && argc < 4; tok = strtok(NULL, " \t")) argv[argc++] = tok;
  if (argc == 0) return;
  char port;
  int bit;
  if (!strcmp(argv[0], "port") && argc == 2 && argv[1][0] >= 'A' && argv[1][0] <= 'L' && !argv[1][1]) {
    avr_ioport_state_t st;
    if (avr_ioctl(avr, AVR_IOCTL_IOPORT_GETSTATE(argv[1][0]), &st) != 0) { ctl_reply("error no port %s", argv[1]); return; }
    ctl_reply("port %c %02x %02x %02x", argv[1][0], (unsigned)st.port, (unsigned)st.ddr, (unsigned)st.pin);
  } else if (!strcmp(argv[0], "drive") && argc == 3 && parse_pin(argv[1], &port, &bit)) {
    avr_irq_t *irq = pin_irq(port, bit);
    if (!irq) { ctl_reply("error no pin %s", argv[1]); return; }
    avr_raise_irq(irq, atoi(argv[2]) ? 1 : 0);
    ctl_reply("ok");
  } else if (!strcmp(argv[0], "adc") && argc == 3) {
    avr_irq_t *irq = avr_io_getirq(avr, AVR_IOCTL_ADC_GETIRQ, atoi(argv[1]));
    if (!irq) { ctl_reply("error no adc %s", argv[1]); return; }
    avr_raise_irq(irq, (uint32_t)atoi(argv[2]));
    ctl_reply("ok");
  } else if (!strcmp(argv[0], "duty") && argc == 3 && parse_pin(argv[1], &port, &bit) && !measure.active) {
    avr_ioport_state_t st;
    if (avr_ioctl(avr, AVR_IOCTL_IOPORT_GETSTATE(port), &st) != 0) { ctl_reply("error no port %c", port); return; }
    measure.active = 1;
    measure.port = port;
    measure.bit = bit;
    measure.level = (st.pin >> bit) & 1;
    measure.edges = measure.rises = 0;
    measure.high = 0;
    measure.start = measure.last = avr->cycle;
    measure.end = avr->cycle + (avr_cycle_count_t)atoi(argv[2]) * (avr->frequency / 1000);
  } else if (!strcmp(argv[0], "cycles")) {
    ctl_reply("cycles %llu %u", (unsigned long long)avr->cycle, avr->frequency);
  } else {
    ctl_reply("error unknown command");
  }
}

static void finish_measure(void) {
  if (!measure.active || avr->cycle < measure.end) return;
  if (measure.level) measure.high += avr->cycle - measure.last;
  measure.active = 0;
  avr_cycle_count_t high = measure.high, total = avr->cycle - measure.start;
  if (measure.rises >= 2) {
    high = measure.high_at_last_rise;
    total = measure.last_rise - measure.first_rise;
  }
  ctl_reply("duty %c%d %llu %llu %d", measure.port, measure.bit, (unsigned long long)high, (unsigned long long)total,
            measure.edges);
}

static void read_ctl(void) {
  char buf[256];
  ssize_t n = read(CTL_FD, buf, sizeof buf);
  if (n <= 0) {
    ctl_open = 0;
    return;
  }
  for (ssize_t i = 0; i < n; i++) {
    if (buf[i] == '\n') {
      ctl_line[ctl_len] = 0;
      command(ctl_line);
      ctl_len = 0;
    } else if (ctl_len < sizeof ctl_line - 1) {
      ctl_line[ctl_len++] = buf[i];
    }
  }
}

static void read_stdin(void) {
  if (in_len == sizeof in_buf) return; /* full: the AVR has to take some first */
  ssize_t n = read(0, in_buf + in_len, sizeof in_buf - in_len);
  if (n <= 0) exit(0); /* the test is done with us */
  in_len += (size_t)n;
  feed_uart();
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Waits for input for up to timeout_ms and handles what came. */
static void service(int timeout_ms) {
  flush_uart_out();
  struct pollfd fds[2] = {{.fd = 0, .events = POLLIN}, {.fd = CTL_FD, .events = POLLIN}};
  int nfds = ctl_open ? 2 : 1;
  /* Input that the UART cannot take yet stays in the pipe until XON. */
  if (in_len == sizeof in_buf) fds[0].fd = -1;
  if (poll(fds, (nfds_t)nfds, timeout_ms) <= 0) return;
  if (fds[0].revents & (POLLIN | POLLHUP)) read_stdin();
  if (nfds == 2 && fds[1].revents & (POLLIN | POLLHUP)) read_ctl();
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s MCU FREQUENCY FIRMWARE.elf\n", argv[0]);
    return 2;
  }
  /* Only the UART's bytes may reach stdout: anything the library prints goes to stderr. */
  ctl_open = write(CTL_FD, "", 0) == 0; /* before dup(), which could otherwise take fd 3 */
  uart_out_fd = dup(1);
  dup2(2, 1);

  elf_firmware_t fw;
  memset(&fw, 0, sizeof fw);
  if (elf_read_firmware(argv[3], &fw) != 0) {
    fprintf(stderr, "pinclaw-simavr: cannot read %s\n", argv[3]);
    return 1;
  }
  snprintf(fw.mmcu, sizeof fw.mmcu, "%s", argv[1]);
  fw.frequency = (uint32_t)strtoul(argv[2], NULL, 10);
  avr = avr_make_mcu_by_name(fw.mmcu);
  if (!avr) {
    fprintf(stderr, "pinclaw-simavr: simavr has no core %s\n", fw.mmcu);
    return 1;
  }
  avr_init(avr);
  avr->log = LOG_ERROR;
  avr_load_firmware(avr, &fw);
  avr->frequency = fw.frequency;
  /* A 5 V board: the ADC's AVcc reference, as on an Uno. */
  avr->vcc = avr->avcc = avr->aref = 5000;

  /* simavr's UART prints lines on the console and naps when the firmware polls it by default:
   * neither belongs here. */
  uint32_t flags = 0;
  avr_ioctl(avr, AVR_IOCTL_UART_GET_FLAGS('0'), &flags);
  flags &= ~(uint32_t)(AVR_UART_FLAG_STDIO | AVR_UART_FLAG_POLL_SLEEP);
  avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
  uart_in_irq = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), on_uart_out, NULL);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), on_xon, NULL);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), on_xoff, NULL);
  /* Every port pin reports its level changes, for the duty measurement. */
  for (char p = 'A'; p <= 'L'; p++)
    for (int b = 0; b < 8; b++) {
      avr_irq_t *irq = pin_irq(p, b);
      if (irq) avr_irq_register_notify(irq, on_pin, (void *)(intptr_t)((p - 'A') * 8 + b));
    }
  ctl_reply("ready %s %u", fw.mmcu, avr->frequency);

  double start = now_s();
  for (;;) {
    /* About 60 µs of AVR time between looks at the outside world: 115200 baud is 87 µs a byte. */
    for (int i = 0; i < 1000; i++) {
      int state = avr_run(avr);
      if (state == cpu_Done || state == cpu_Crashed) {
        flush_uart_out();
        fprintf(stderr, "pinclaw-simavr: the AVR stopped (state %d)\n", state);
        return 1;
      }
    }
    finish_measure();
    double ahead = (double)avr->cycle / avr->frequency - (now_s() - start);
    service(ahead > 0.002 ? (int)(ahead * 1000) : 0);
  }
}
