/* The pinclaw MCU protocol core (docs/protocol.md, version 1): frame receiver, dispatch, the
 * last-reply cache and events. Portable C99, no malloc: every buffer is sized by the protocol's
 * limits. */
#ifndef PINCLAW_H
#define PINCLAW_H

#include <stdint.h>
#include <stdbool.h>

#define PC_PROTOCOL_VERSION 1
#define PC_FW_MAJOR 1
#define PC_FW_MINOR 0
#define PC_FW_PATCH 0

/* Limits (docs/protocol.md, Frames). */
#define PC_MAX_PAYLOAD 255
#define PC_HEADER 4                                /* version, type, id */
#define PC_MAX_MESSAGE (PC_HEADER + PC_MAX_PAYLOAD) /* 259 */
#define PC_MAX_DECODED (PC_MAX_MESSAGE + 2)         /* 261, with the CRC */
#define PC_MAX_ENCODED (PC_MAX_DECODED + 2)         /* 263, COBS adds one byte per 254 */

/* Message types. */
#define PC_T_HELLO 0x01
#define PC_T_PING 0x02
#define PC_T_GPIO_MODE 0x10
#define PC_T_GPIO_READ 0x11
#define PC_T_GPIO_WRITE 0x12
#define PC_T_ADC_READ 0x13
#define PC_T_PWM_WRITE 0x14
#define PC_T_WATCH 0x15
#define PC_T_ADC_WATCH 0x16
#define PC_T_REPLY 0x80
#define PC_T_ERROR 0x7F
#define PC_T_PIN_EVENT 0x40
#define PC_T_ADC_EVENT 0x41

/* Error codes. */
#define PC_E_UNKNOWN_TYPE 1
#define PC_E_NO_PIN 2
#define PC_E_LENGTH 3
#define PC_E_CAPABILITY 4
#define PC_E_VERSION 5
#define PC_E_ARGUMENT 6

void pc_init(void);

/* Handles every byte the UART has buffered, then the watches. Returns true if it received bytes
 * (the main loop idles only when it did not). */
bool pc_poll(void);

/* Feeds one received byte to the frame receiver (pc_poll does this; exposed for tests). */
void pc_receive(uint8_t byte);

#endif
