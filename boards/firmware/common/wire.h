/* Framing primitives of the pinclaw MCU protocol: CRC-16/CCITT-FALSE and COBS (docs/protocol.md). */
#ifndef PINCLAW_WIRE_H
#define PINCLAW_WIRE_H

#include <stdint.h>

/* CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR ("123456789" → 0x29B1). */
uint16_t pc_crc16(const uint8_t *data, uint16_t len);

/* Decodes one COBS frame (without its 0x00 delimiter) in place: the output is never longer than
 * the input, so buf serves as both. Returns the decoded length, or -1 if the frame is not valid
 * COBS (a 0x00 inside, or a block running past the end). */
int16_t pc_cobs_decode(uint8_t *buf, uint16_t len);

/* Encodes data straight to the UART, then the 0x00 delimiter: no encode buffer is needed, the
 * encoder only looks ahead inside data for the next zero. */
void pc_cobs_send(const uint8_t *data, uint16_t len);

#endif
