/* HAL for the ATmega328P (Arduino Uno, Nano) and ATmega2560 (Arduino Mega 2560) at 16 MHz.
 * Register names are avr-libc's (<avr/io.h>); the chapters named are those of the ATmega328P and
 * ATmega2560 datasheets.
 *
 * No sleep instruction anywhere: QEMU's AVR machine spins on SLEEP, and the main loop has to poll
 * the watched pins anyway. */
#include <avr/interrupt.h>
#include <avr/io.h>
#include <avr/pgmspace.h>

#include "hal.h"
#include "pins.h"

#define REG(addr) (*(volatile uint8_t *)(uint16_t)(addr))

#if defined(__AVR_ATmega2560__)
#define UART_RX_VECT USART0_RX_vect
#else
#define UART_RX_VECT USART_RX_vect
#endif

/* ---- UART: USART0, the one behind the board's USB-serial chip (chapter "USART0") ---- */

#define RING_MASK (PC_RX_RING - 1)
typedef char ring_is_power_of_two[(PC_RX_RING & RING_MASK) == 0 && PC_RX_RING <= 256 ? 1 : -1];
static volatile uint8_t ring[PC_RX_RING];
static volatile uint8_t ring_head, ring_tail; /* written by the interrupt / by the main loop only */

ISR(UART_RX_VECT) {
  uint8_t byte = UDR0;
  uint8_t next = (uint8_t)((ring_head + 1) & RING_MASK);
  /* Full: the byte is lost, the frame it belonged to fails its CRC and is counted as bad. */
  if (next != ring_tail) {
    ring[ring_head] = byte;
    ring_head = next;
  }
}

bool hal_uart_read(uint8_t *byte) {
  if (ring_tail == ring_head) return false;
  *byte = ring[ring_tail];
  ring_tail = (uint8_t)((ring_tail + 1) & RING_MASK);
  return true;
}

void hal_uart_write(uint8_t byte) {
  while (!(UCSR0A & (1 << UDRE0))) {
  }
  UDR0 = byte;
}

static void uart_init(void) {
  /* Double speed (U2X): UBRR 16 gives 117647 baud, 2.1 % off 115200, the same divisor as the
   * Arduino bootloaders use; without U2X the nearest divisor is 3.5 % off ("Examples of Baud Rate Setting"). */
  UCSR0A = 1 << U2X0;
  UBRR0 = F_CPU / 8 / 115200 - 1;
  UCSR0C = (1 << UCSZ01) | (1 << UCSZ00); /* 8N1 */
  UCSR0B = (1 << RXEN0) | (1 << TXEN0) | (1 << RXCIE0);
}

/* ---- millis: timer 0 overflows every 64 × 256 cycles = 1024 µs ("8-bit Timer/Counter0 with PWM") ---- */

static volatile uint32_t ms;
static volatile uint8_t ms_frac; /* the extra 24 µs per overflow, in 8 µs units */

ISR(TIMER0_OVF_vect) {
  uint32_t m = ms + 1;
  uint8_t f = (uint8_t)(ms_frac + 3);
  if (f >= 125) {
    f -= 125;
    m++;
  }
  ms = m;
  ms_frac = f;
}

uint32_t hal_millis(void) {
  uint8_t sreg = SREG;
  cli(); /* four bytes the interrupt may change half-way */
  uint32_t m = ms;
  SREG = sreg;
  return m;
}

/* Every timer runs 8-bit fast PWM at clk/64 (976 Hz), timer 0 also counting millis. Arduino's
 * core runs timers 1 and 2 phase-correct (490 Hz); fast PWM everywhere gives one frequency on
 * every PWM pin and is what simavr models on the pins, so the test can measure the duty cycle.
 * The compare outputs stay disconnected until pwm_write. */
static void timers_init(void) {
  TCCR0A = (1 << WGM01) | (1 << WGM00);
  TCCR0B = (1 << CS01) | (1 << CS00);
  TIMSK0 = 1 << TOIE0;
  TCCR1A = 1 << WGM10; /* mode 5: fast PWM, 8-bit (WGM12 is in TCCR1B) */
  TCCR1B = (1 << WGM12) | (1 << CS11) | (1 << CS10);
  TCCR2A = (1 << WGM21) | (1 << WGM20);
  TCCR2B = 1 << CS22; /* timer 2 has its own prescaler table: CS22 alone is clk/64 */
#if defined(__AVR_ATmega2560__)
  TCCR3A = 1 << WGM30;
  TCCR3B = (1 << WGM32) | (1 << CS31) | (1 << CS30);
  TCCR4A = 1 << WGM40;
  TCCR4B = (1 << WGM42) | (1 << CS41) | (1 << CS40);
  TCCR5A = 1 << WGM50;
  TCCR5B = (1 << WGM52) | (1 << CS51) | (1 << CS50);
#endif
}

/* ---- pins ---- */

static avr_pin entry(uint8_t index) {
  avr_pin e;
  memcpy_P(&e, &pins[index], sizeof e);
  return e;
}

static uint16_t port_base(const avr_pin *e) { return pgm_read_word(&port_pin_reg[e->port]); }
#define PIN_R(base) REG(base)
#define DDR_R(base) REG((base) + 1)
#define PORT_R(base) REG((base) + 2)

uint8_t hal_pin_count(void) { return sizeof pins / sizeof pins[0]; }
uint8_t hal_pin_number(uint8_t index) { return pgm_read_byte(&pins[index].pin); }
uint8_t hal_pin_caps(uint8_t index) { return pgm_read_byte(&pins[index].caps); }

uint8_t hal_board_name(uint8_t *dst) {
  uint8_t n = 0;
  for (char c; (c = (char)pgm_read_byte(&board_name[n])) != 0; n++) dst[n] = (uint8_t)c;
  return n;
}

/* Disconnects the timer from the pin, as Arduino's digitalWrite does: the port bit rules again. */
static void pwm_off(const avr_pin *e) {
  if (!e->pwm) return;
  uint16_t tccra = pgm_read_word(&pwm_outputs[e->pwm - 1].tccra);
  REG(tccra) &= (uint8_t)~pgm_read_byte(&pwm_outputs[e->pwm - 1].com);
}

/* The ports of the Mega above G sit in extended I/O, where |= is a read-modify-write of several
 * instructions; no interrupt handler touches a port, so it cannot be torn. */
void hal_pin_mode(uint8_t index, uint8_t mode) {
  avr_pin e = entry(index);
  pwm_off(&e);
  uint16_t base = port_base(&e);
  uint8_t mask = (uint8_t)(1 << e.bit);
  if (mode == PC_MODE_OUTPUT) {
    PORT_R(base) &= (uint8_t)~mask; /* an output starts low, whatever pull-up was set before */
    DDR_R(base) |= mask;
  } else {
    DDR_R(base) &= (uint8_t)~mask;
    /* An input's PORT bit switches its pull-up ("I/O-Ports", "Configuring the Pin"). */
    if (mode == PC_MODE_PULLUP) PORT_R(base) |= mask;
    else PORT_R(base) &= (uint8_t)~mask;
  }
}

uint8_t hal_pin_read(uint8_t index) {
  avr_pin e = entry(index);
  return (PIN_R(port_base(&e)) >> e.bit) & 1;
}

void hal_pin_write(uint8_t index, uint8_t value) {
  avr_pin e = entry(index);
  pwm_off(&e);
  uint16_t base = port_base(&e);
  uint8_t mask = (uint8_t)(1 << e.bit);
  /* Level first, then direction: the pin never shows the old level as an output. */
  if (value) PORT_R(base) |= mask;
  else PORT_R(base) &= (uint8_t)~mask;
  DDR_R(base) |= mask;
}

void hal_pwm_write(uint8_t index, uint8_t duty) {
  /* 0 and 255 are steady levels: fast PWM at 0 would still leave a one-count spike. */
  if (duty == 0 || duty == 255) {
    hal_pin_write(index, duty != 0);
    return;
  }
  avr_pin e = entry(index);
  const avr_pwm *out = &pwm_outputs[e.pwm - 1];
  uint16_t ocr = pgm_read_word(&out->ocr);
  if (pgm_read_byte(&out->wide)) REG(ocr + 1) = 0;
  REG(ocr) = duty;
  REG(pgm_read_word(&out->tccra)) |= pgm_read_byte(&out->com);
  DDR_R(port_base(&e)) |= (uint8_t)(1 << e.bit);
}

/* ---- ADC ("Analog-to-Digital Converter"): AVcc reference, clk/128 = 125 kHz, within the 50–200 kHz for 10 bits ---- */

static void adc_init(void) { ADCSRA = (1 << ADEN) | (1 << ADPS2) | (1 << ADPS1) | (1 << ADPS0); }

uint16_t hal_adc_read(uint8_t index) {
  uint8_t ch = pgm_read_byte(&pins[index].adc);
  ADMUX = (uint8_t)((1 << REFS0) | (ch & 7));
#if defined(__AVR_ATmega2560__)
  /* Channels 8-15 (A8-A15 on port K) are selected by MUX5 in ADCSRB ("Input Channel Selections"). */
  if (ch & 8) ADCSRB |= 1 << MUX5;
  else ADCSRB &= (uint8_t)~(1 << MUX5);
#endif
  ADCSRA |= 1 << ADSC;
  while (ADCSRA & (1 << ADSC)) {
  }
  return ADC; /* avr-libc reads ADCL before ADCH, which the hardware requires */
}

void hal_init(void) {
  cli();
  uart_init();
  timers_init();
  adc_init();
  sei();
}

void hal_idle(void) {}
