#include "pinclaw.h"
#include "hal.h"
#include "wire.h"

/* hello must fit one payload: 7 fixed bytes, a name of up to 32, two bytes per pin. */
typedef char pc_pin_table_fits_hello[(7 + 32 + 2 * PC_MAX_PINS <= PC_MAX_PAYLOAD) ? 1 : -1];

/* Encoded bytes of the frame being received, decoded in place once its 0x00 arrives. */
static uint8_t rx[PC_MAX_ENCODED];
static uint16_t rx_len;
static bool rx_overflow; /* longer than any valid frame: dropped at the next 0x00 */

/* The reply to the last request executed, kept whole (message, then CRC) so that a retry gets
 * the very same bytes; it is also where each new reply is built. A retry is recognised by its id
 * and its CRC: a different request that reuses the id (a host that restarted its numbering) is
 * executed, not answered from the cache. */
static uint8_t reply[PC_MAX_DECODED];
static uint16_t reply_len; /* message bytes, without the CRC */
static bool cached;
static uint16_t cached_id, cached_crc;

/* Events and version errors go out from here, so they never clobber the cached reply. */
static uint8_t small[PC_HEADER + 10 + 2];

static uint16_t frames_ok, frames_bad;
static uint16_t event_seq; /* one sequence for pin and ADC events: a gap means a lost event */

/* Per pin-table index: the edges watched (bit 0 rising, bit 1 falling) and, in bit 7, the level
 * last seen, so a change is noticed by polling in the main loop. */
static uint8_t watch[PC_MAX_PINS];
#define WATCH_LEVEL 0x80

#define ADC_FREE 0xFF
enum { ADC_UNKNOWN, ADC_BELOW, ADC_ABOVE };
static struct adc_watch {
  uint8_t index; /* pin-table index, or ADC_FREE */
  uint8_t state;
  uint16_t low, high, interval;
  uint32_t due;
} adc_watches[PC_ADC_WATCHES];

static void put8(uint8_t v) { reply[reply_len++] = v; }
static void put16(uint16_t v) {
  put8((uint8_t)v);
  put8((uint8_t)(v >> 8));
}
static void put32(uint32_t v) {
  put16((uint16_t)v);
  put16((uint16_t)(v >> 16));
}
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static void header(uint8_t *buf, uint8_t type, uint16_t id) {
  buf[0] = PC_PROTOCOL_VERSION;
  buf[1] = type;
  buf[2] = (uint8_t)id;
  buf[3] = (uint8_t)(id >> 8);
}

/* Appends the CRC (low byte first) behind the message and sends the frame. */
static void send_message(uint8_t *buf, uint16_t len) {
  uint16_t crc = pc_crc16(buf, len);
  buf[len] = (uint8_t)crc;
  buf[len + 1] = (uint8_t)(crc >> 8);
  pc_cobs_send(buf, (uint16_t)(len + 2));
}

/* Turns the reply being built into an error reply. */
static void error(uint8_t code, uint8_t detail) {
  reply[1] = PC_T_ERROR;
  reply_len = PC_HEADER;
  put8(code);
  put8(detail);
}

/* The pin-table index of a protocol pin number, or -1 after replying error 2. */
static int16_t find_pin(uint8_t pin) {
  uint8_t count = hal_pin_count();
  for (uint8_t i = 0; i < count; i++)
    if (hal_pin_number(i) == pin) return i;
  error(PC_E_NO_PIN, pin);
  return -1;
}

/* False after replying error 4 with the capability bits the pin lacks. */
static bool need(uint8_t index, uint8_t caps) {
  uint8_t missing = (uint8_t)(caps & ~hal_pin_caps(index));
  if (missing) error(PC_E_CAPABILITY, missing);
  return !missing;
}

static void hello(void) {
  put8(PC_PROTOCOL_VERSION);
  put8(PC_FW_MAJOR);
  put8(PC_FW_MINOR);
  put8(PC_FW_PATCH);
  put8(PC_ADC_BITS);
  uint8_t name_len = hal_board_name(&reply[reply_len + 1]);
  put8(name_len);
  reply_len += name_len;
  uint8_t count = hal_pin_count();
  put8(count);
  for (uint8_t i = 0; i < count; i++) {
    put8(hal_pin_number(i));
    put8(hal_pin_caps(i));
  }
}

static void set_adc_watch(uint8_t index, const uint8_t *p) {
  uint16_t low = get16(p + 1), high = get16(p + 3), interval = get16(p + 5);
  if (interval != 0 && low > high) { error(PC_E_ARGUMENT, 1); return; }
  struct adc_watch *slot = 0;
  for (uint8_t i = 0; i < PC_ADC_WATCHES; i++) {
    if (adc_watches[i].index == index) slot = &adc_watches[i];
    else if (!slot && adc_watches[i].index == ADC_FREE) slot = &adc_watches[i];
  }
  if (interval == 0) {
    if (slot && slot->index == index) slot->index = ADC_FREE;
    return;
  }
  /* Cannot happen: there is a slot per ADC pin. Said as a bad value rather than left unanswered. */
  if (!slot) { error(PC_E_ARGUMENT, 0); return; }
  slot->index = index;
  slot->state = ADC_UNKNOWN;
  slot->low = low;
  slot->high = high;
  slot->interval = interval;
  slot->due = hal_millis();
}

/* Runs one request; its reply (or error) is built in reply[] behind the header. */
static void execute(uint8_t type, const uint8_t *p, uint16_t n) {
  uint16_t want;
  switch (type) {
  case PC_T_HELLO:
  case PC_T_PING: want = 0; break;
  case PC_T_GPIO_READ:
  case PC_T_ADC_READ: want = 1; break;
  case PC_T_GPIO_MODE:
  case PC_T_GPIO_WRITE:
  case PC_T_PWM_WRITE:
  case PC_T_WATCH: want = 2; break;
  case PC_T_ADC_WATCH: want = 7; break;
  default: error(PC_E_UNKNOWN_TYPE, type); return;
  }
  if (n != want) { error(PC_E_LENGTH, (uint8_t)n); return; }
  if (type == PC_T_HELLO) {
    hello();
    return;
  }
  if (type == PC_T_PING) {
    put32(hal_millis());
    put16(frames_ok);
    put16(frames_bad);
    return;
  }

  /* Everything else starts with a pin: first whether it exists, then the argument, then whether
   * the pin can do what the argument asks. */
  int16_t found = find_pin(p[0]);
  if (found < 0) return;
  uint8_t index = (uint8_t)found;
  switch (type) {
  case PC_T_GPIO_MODE: {
    static const uint8_t mode_caps[] = {PC_CAP_INPUT, PC_CAP_OUTPUT, PC_CAP_INPUT | PC_CAP_PULLUP};
    if (p[1] > PC_MODE_PULLUP) { error(PC_E_ARGUMENT, 1); return; }
    if (need(index, mode_caps[p[1]])) hal_pin_mode(index, p[1]);
    return;
  }
  case PC_T_GPIO_READ:
    if (need(index, PC_CAP_INPUT)) put8(hal_pin_read(index));
    return;
  case PC_T_GPIO_WRITE:
    if (p[1] > 1) { error(PC_E_ARGUMENT, 1); return; }
    if (need(index, PC_CAP_OUTPUT)) hal_pin_write(index, p[1]);
    return;
  case PC_T_ADC_READ:
    if (need(index, PC_CAP_ADC)) put16(hal_adc_read(index));
    return;
  case PC_T_PWM_WRITE:
    if (need(index, PC_CAP_PWM)) hal_pwm_write(index, p[1]);
    return;
  case PC_T_WATCH: {
    if (p[1] > 3) { error(PC_E_ARGUMENT, 1); return; }
    if (p[1] != 0 && !need(index, PC_CAP_EDGE)) return;
    /* The level now is the starting point: only later changes are events. */
    uint8_t level = (p[1] && hal_pin_read(index)) ? WATCH_LEVEL : 0;
    watch[index] = (uint8_t)(p[1] | level);
    return;
  }
  case PC_T_ADC_WATCH:
    if (need(index, PC_CAP_ADC)) set_adc_watch(index, p);
    return;
  }
}

/* A whole frame is in rx[0..n): message, then CRC. */
static void handle_frame(uint16_t n) {
  if (n < PC_HEADER + 2 || n > PC_MAX_DECODED) {
    frames_bad++;
    return;
  }
  uint16_t len = (uint16_t)(n - 2);
  uint16_t crc = get16(rx + len);
  if (pc_crc16(rx, len) != crc) {
    frames_bad++;
    return;
  }
  frames_ok++;
  uint16_t id = get16(rx + 2);

  /* A request in another version is never executed nor cached: the answer, in our version,
   * tells the host which version we speak. */
  if (rx[0] != PC_PROTOCOL_VERSION) {
    header(small, PC_T_ERROR, id);
    small[4] = PC_E_VERSION;
    small[5] = PC_PROTOCOL_VERSION;
    send_message(small, 6);
    return;
  }
  /* A retry of the last request: the same reply, not a second execution. */
  if (cached && id == cached_id && crc == cached_crc) {
    send_message(reply, reply_len);
    return;
  }
  header(reply, (uint8_t)(rx[1] | PC_T_REPLY), id);
  reply_len = PC_HEADER;
  execute(rx[1], rx + PC_HEADER, (uint16_t)(len - PC_HEADER));
  /* id 0 is the events' id; a host never uses it, so it is never taken for a retry. */
  cached = id != 0;
  cached_id = id;
  cached_crc = crc;
  send_message(reply, reply_len);
}

void pc_receive(uint8_t byte) {
  if (byte != 0) {
    if (rx_len < sizeof rx) rx[rx_len++] = byte;
    else rx_overflow = true;
    return;
  }
  if (rx_overflow) frames_bad++;
  else if (rx_len > 0) {
    int16_t n = pc_cobs_decode(rx, rx_len);
    if (n < 0) frames_bad++;
    else handle_frame((uint16_t)n);
  }
  /* An empty frame (0x00 right after 0x00) is how a sender resynchronises: not an error. */
  rx_len = 0;
  rx_overflow = false;
}

static void put_event_tail(uint8_t at) {
  uint32_t ms = hal_millis();
  small[at] = (uint8_t)event_seq;
  small[at + 1] = (uint8_t)(event_seq >> 8);
  for (uint8_t k = 0; k < 4; k++) small[at + 2 + k] = (uint8_t)(ms >> (8 * k));
  event_seq++;
}

static void pin_event(uint8_t index, uint8_t level) {
  header(small, PC_T_PIN_EVENT, 0);
  small[4] = hal_pin_number(index);
  small[5] = level;
  put_event_tail(6);
  send_message(small, 12);
}

static void adc_event(uint8_t index, uint8_t above, uint16_t value) {
  header(small, PC_T_ADC_EVENT, 0);
  small[4] = hal_pin_number(index);
  small[5] = above;
  small[6] = (uint8_t)value;
  small[7] = (uint8_t)(value >> 8);
  put_event_tail(8);
  send_message(small, 14);
}

static void poll_watches(void) {
  uint8_t count = hal_pin_count();
  for (uint8_t i = 0; i < count; i++) {
    uint8_t w = watch[i];
    if (!(w & 3)) continue;
    uint8_t level = hal_pin_read(i);
    if (level == ((w & WATCH_LEVEL) ? 1 : 0)) continue;
    watch[i] = (uint8_t)((w & 3) | (level ? WATCH_LEVEL : 0));
    if (w & (level ? 1 : 2)) pin_event(i, level);
  }
}

/* An event when a reading crosses above high or below low; the first reading outside the band
 * counts as a crossing, so the host learns where the value starts. */
static void poll_adc_watches(void) {
  uint32_t now = hal_millis();
  for (uint8_t i = 0; i < PC_ADC_WATCHES; i++) {
    struct adc_watch *w = &adc_watches[i];
    if (w->index == ADC_FREE || (int32_t)(now - w->due) < 0) continue;
    w->due = now + w->interval;
    uint16_t v = hal_adc_read(w->index);
    if (v > w->high && w->state != ADC_ABOVE) {
      w->state = ADC_ABOVE;
      adc_event(w->index, 1, v);
    } else if (v < w->low && w->state != ADC_BELOW) {
      w->state = ADC_BELOW;
      adc_event(w->index, 0, v);
    }
  }
}

void pc_init(void) {
  for (uint8_t i = 0; i < PC_ADC_WATCHES; i++) adc_watches[i].index = ADC_FREE;
  /* Ends whatever half frame the host may hold from before a reset. */
  hal_uart_write(0);
}

bool pc_poll(void) {
  uint8_t byte;
  bool got = false;
  while (hal_uart_read(&byte)) {
    pc_receive(byte);
    got = true;
  }
  poll_watches();
  poll_adc_watches();
  return got;
}
