/* Pin tables of the AVR boards, in flash (PROGMEM): RAM is 2 KiB on the ATmega328P.
 *
 * Pin numbers and capabilities are those of boards/arduino-uno.json, arduino-nano.json and
 * arduino-mega-2560.json (their mcu.pinNumbering), except D0/D1: they carry the serial link to
 * pinclaw, so the firmware lists them with no capability and refuses to touch them. The port
 * bits are the Arduino core's pin mapping (variants/standard and variants/mega pins_arduino.h,
 * which follow the boards' schematics). */
#ifndef PINCLAW_AVR_PINS_H
#define PINCLAW_AVR_PINS_H

#include <avr/io.h>
#include <avr/pgmspace.h>

#include "hal.h"

/* Ports, by the address of their PINx register: DDRx and PORTx follow it at +1 and +2 on both
 * chips (datasheets, "I/O-Ports", "Register Description"), PORTH-L in extended I/O. */
enum { PA_, PB_, PC_, PD_, PE_, PF_, PG_, PH_, PJ_, PK_, PL_, NO_PORT = 0xFF };
static const uint16_t port_pin_reg[] PROGMEM = {
#if defined(__AVR_ATmega2560__)
    _SFR_MEM_ADDR(PINA), _SFR_MEM_ADDR(PINB), _SFR_MEM_ADDR(PINC), _SFR_MEM_ADDR(PIND),
    _SFR_MEM_ADDR(PINE), _SFR_MEM_ADDR(PINF), _SFR_MEM_ADDR(PING), _SFR_MEM_ADDR(PINH),
    _SFR_MEM_ADDR(PINJ), _SFR_MEM_ADDR(PINK), _SFR_MEM_ADDR(PINL),
#else
    0, _SFR_MEM_ADDR(PINB), _SFR_MEM_ADDR(PINC), _SFR_MEM_ADDR(PIND),
#endif
};

/* PWM outputs: the timer's control register A, the COMnx1 bit that connects the compare output
 * to the pin (non-inverting), and the compare register (low byte; wide = 16-bit timer, whose high
 * byte is written first, datasheet "Accessing 16-bit Registers"). */
typedef struct {
  uint16_t tccra;
  uint8_t com;
  uint16_t ocr;
  uint8_t wide;
} avr_pwm;

#define OUT8(n, x, bit) {_SFR_MEM_ADDR(TCCR##n##A), 1 << (bit), _SFR_MEM_ADDR(OCR##n##x), 0}
#define OUT16(n, x, bit) {_SFR_MEM_ADDR(TCCR##n##A), 1 << (bit), _SFR_MEM_ADDR(OCR##n##x##L), 1}
/* COMnA1 is bit 7 of TCCRnA, COMnB1 bit 5, COMnC1 bit 3 on both chips. */
enum { OC0A = 1, OC0B, OC1A, OC1B, OC2A, OC2B, OC3A, OC3B, OC3C, OC4A, OC4B, OC4C, OC5A, OC5B, OC5C };
static const avr_pwm pwm_outputs[] PROGMEM = {
    OUT8(0, A, 7), OUT8(0, B, 5), OUT16(1, A, 7), OUT16(1, B, 5), OUT8(2, A, 7), OUT8(2, B, 5),
#if defined(__AVR_ATmega2560__)
    OUT16(3, A, 7), OUT16(3, B, 5), OUT16(3, C, 3), OUT16(4, A, 7), OUT16(4, B, 5), OUT16(4, C, 3),
    OUT16(5, A, 7), OUT16(5, B, 5), OUT16(5, C, 3),
#endif
};

typedef struct {
  uint8_t pin;  /* protocol pin number */
  uint8_t caps; /* PC_CAP_* */
  uint8_t port; /* PA_ … PL_, NO_PORT for analog-only pins */
  uint8_t bit;
  uint8_t adc;  /* ADC channel, NO_ADC if none */
  uint8_t pwm;  /* OC0A …, 0 if none */
} avr_pin;
#define NO_ADC 0xFF

#define IO (PC_CAP_INPUT | PC_CAP_OUTPUT | PC_CAP_PULLUP)
#define E PC_CAP_EDGE
#define W PC_CAP_PWM
#define A PC_CAP_ADC
#define LINK 0 /* the serial link */
#define D(pin, caps, port, bit, pwm) {pin, caps, port, bit, NO_ADC, pwm}
#define AN(pin, port, bit, ch) {pin, IO | A, port, bit, ch, 0}

static const char board_name[] PROGMEM =
#if defined(PC_BOARD_MEGA)
    "arduino-mega-2560";
#elif defined(PC_BOARD_NANO)
    "arduino-nano";
#else
    "arduino-uno";
#endif

static const avr_pin pins[] PROGMEM = {
#if defined(PC_BOARD_MEGA)
    D(0, LINK, PE_, 0, 0), D(1, LINK, PE_, 1, 0), D(2, IO | E | W, PE_, 4, OC3B), D(3, IO | E | W, PE_, 5, OC3C),
    D(4, IO | W, PG_, 5, OC0B), D(5, IO | W, PE_, 3, OC3A), D(6, IO | W, PH_, 3, OC4A), D(7, IO | W, PH_, 4, OC4B),
    D(8, IO | W, PH_, 5, OC4C), D(9, IO | W, PH_, 6, OC2B), D(10, IO | W, PB_, 4, OC2A), D(11, IO | W, PB_, 5, OC1A),
    D(12, IO | W, PB_, 6, OC1B), D(13, IO | W, PB_, 7, OC0A), D(14, IO, PJ_, 1, 0), D(15, IO, PJ_, 0, 0),
    D(16, IO, PH_, 1, 0), D(17, IO, PH_, 0, 0), D(18, IO | E, PD_, 3, 0), D(19, IO | E, PD_, 2, 0),
    D(20, IO | E, PD_, 1, 0), D(21, IO | E, PD_, 0, 0), D(22, IO, PA_, 0, 0), D(23, IO, PA_, 1, 0),
    D(24, IO, PA_, 2, 0), D(25, IO, PA_, 3, 0), D(26, IO, PA_, 4, 0), D(27, IO, PA_, 5, 0),
    D(28, IO, PA_, 6, 0), D(29, IO, PA_, 7, 0), D(30, IO, PC_, 7, 0), D(31, IO, PC_, 6, 0),
    D(32, IO, PC_, 5, 0), D(33, IO, PC_, 4, 0), D(34, IO, PC_, 3, 0), D(35, IO, PC_, 2, 0),
    D(36, IO, PC_, 1, 0), D(37, IO, PC_, 0, 0), D(38, IO, PD_, 7, 0), D(39, IO, PG_, 2, 0),
    D(40, IO, PG_, 1, 0), D(41, IO, PG_, 0, 0), D(42, IO, PL_, 7, 0), D(43, IO, PL_, 6, 0),
    D(44, IO | W, PL_, 5, OC5C), D(45, IO | W, PL_, 4, OC5B), D(46, IO | W, PL_, 3, OC5A), D(47, IO, PL_, 2, 0),
    D(48, IO, PL_, 1, 0), D(49, IO, PL_, 0, 0), D(50, IO, PB_, 3, 0), D(51, IO, PB_, 2, 0),
    D(52, IO, PB_, 1, 0), D(53, IO, PB_, 0, 0),
    AN(54, PF_, 0, 0), AN(55, PF_, 1, 1), AN(56, PF_, 2, 2), AN(57, PF_, 3, 3),
    AN(58, PF_, 4, 4), AN(59, PF_, 5, 5), AN(60, PF_, 6, 6), AN(61, PF_, 7, 7),
    AN(62, PK_, 0, 8), AN(63, PK_, 1, 9), AN(64, PK_, 2, 10), AN(65, PK_, 3, 11),
    AN(66, PK_, 4, 12), AN(67, PK_, 5, 13), AN(68, PK_, 6, 14), AN(69, PK_, 7, 15),
#else
    D(0, LINK, PD_, 0, 0), D(1, LINK, PD_, 1, 0), D(2, IO | E, PD_, 2, 0), D(3, IO | E | W, PD_, 3, OC2B),
    D(4, IO, PD_, 4, 0), D(5, IO | W, PD_, 5, OC0B), D(6, IO | W, PD_, 6, OC0A), D(7, IO, PD_, 7, 0),
    D(8, IO, PB_, 0, 0), D(9, IO | W, PB_, 1, OC1A), D(10, IO | W, PB_, 2, OC1B), D(11, IO | W, PB_, 3, OC2A),
    D(12, IO, PB_, 4, 0), D(13, IO, PB_, 5, 0),
    AN(14, PC_, 0, 0), AN(15, PC_, 1, 1), AN(16, PC_, 2, 2), AN(17, PC_, 3, 3), AN(18, PC_, 4, 4), AN(19, PC_, 5, 5),
#if defined(PC_BOARD_NANO)
    /* A6 and A7 reach only the ADC multiplexer: no port bit behind them. */
    {20, A, NO_PORT, 0, 6, 0}, {21, A, NO_PORT, 0, 7, 0},
#endif
#endif
};

#undef IO
#undef E
#undef W
#undef A
#undef D
#undef AN

#endif
