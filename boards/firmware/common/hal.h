/* The hardware abstraction each target implements (avr/hal_avr.c, stm32/hal_stm32.c).
 *
 * The protocol core never touches a register: it knows pins only by their index in the board's
 * pin table (0 … hal_pin_count()-1), looked up once from the protocol's pin number. Everything
 * here is called from the main loop only, except that the UART receive side is filled by an
 * interrupt inside the HAL. */
#ifndef PINCLAW_HAL_H
#define PINCLAW_HAL_H

#include <stdint.h>
#include <stdbool.h>

/* Capability bits, as the hello reply carries them (docs/protocol.md). */
#define PC_CAP_INPUT  0x01
#define PC_CAP_OUTPUT 0x02
#define PC_CAP_PULLUP 0x04
#define PC_CAP_ADC    0x08
#define PC_CAP_PWM    0x10
#define PC_CAP_EDGE   0x20

/* gpio_mode values. */
#define PC_MODE_INPUT  0
#define PC_MODE_OUTPUT 1
#define PC_MODE_PULLUP 2

/* board.h (one per family, picked by the include path) defines:
 *   PC_MAX_PINS     entries in the largest pin table of the family's boards
 *   PC_ADC_WATCHES  adc_watch slots: the board's ADC pin count, so a watch never lacks a slot
 *   PC_ADC_BITS     the ADC resolution reported by hello
 *   PC_RX_RING      bytes the UART interrupt buffers while the main loop is busy sending */
#include "board.h"

void hal_init(void);

/* UART: 8N1, interrupt-driven receive into a ring, blocking transmit. */
bool hal_uart_read(uint8_t *byte); /* false when nothing is buffered */
void hal_uart_write(uint8_t byte);

uint32_t hal_millis(void); /* since start, wraps after 49.7 days */

/* The board name sent in hello (the board profile's id, boards/<id>.json): copied into dst,
 * returns its length (at most 32). */
uint8_t hal_board_name(uint8_t *dst);

/* Pin table. */
uint8_t hal_pin_count(void);
uint8_t hal_pin_number(uint8_t index); /* the protocol's pin number */
uint8_t hal_pin_caps(uint8_t index);   /* PC_CAP_* bits; 0 for pins reserved by the link */

/* Pin operations. The core has already checked the capability, so these do not. */
void hal_pin_mode(uint8_t index, uint8_t mode); /* also ends PWM on the pin */
uint8_t hal_pin_read(uint8_t index);            /* the level on the pin: 0 or 1 */
void hal_pin_write(uint8_t index, uint8_t value); /* makes the pin an output and drives it */
uint16_t hal_adc_read(uint8_t index);           /* 0 … 2^PC_ADC_BITS-1 */
void hal_pwm_write(uint8_t index, uint8_t duty); /* makes the pin an output; 0 and 255 are steady levels */

/* Called once per main-loop turn with nothing to do (the STM32 waits for an interrupt). */
void hal_idle(void);

#endif
