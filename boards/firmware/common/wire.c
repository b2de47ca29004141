#include "wire.h"
#include "hal.h"

uint16_t pc_crc16(const uint8_t *data, uint16_t len) {
  uint16_t crc = 0xFFFF;
  while (len--) {
    crc ^= (uint16_t)(*data++) << 8;
    /* Bitwise rather than a 512-byte table: an Uno has 32 KiB of flash and frames are short. */
    for (uint8_t bit = 0; bit < 8; bit++) crc = (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
  }
  return crc;
}

int16_t pc_cobs_decode(uint8_t *buf, uint16_t len) {
  uint16_t in = 0, out = 0;
  while (in < len) {
    uint8_t code = buf[in++];
    if (code == 0) return -1;
    /* A block announces code-1 data bytes; it may not run past the end of the frame. */
    if ((uint16_t)(in + code - 1) > len) return -1;
    for (uint8_t k = 1; k < code; k++) {
      uint8_t b = buf[in++];
      if (b == 0) return -1;
      buf[out++] = b;
    }
    /* Every block but a full one (0xFF) stands for a zero after it, except at the very end,
     * where that zero is the delimiter's and not part of the data. */
    if (code != 0xFF && in < len) buf[out++] = 0;
  }
  return (int16_t)out;
}

void pc_cobs_send(const uint8_t *data, uint16_t len) {
  uint16_t i = 0;
  for (;;) {
    uint8_t run = 0;
    while (i + run < len && data[i + run] != 0 && run < 254) run++;
    hal_uart_write((uint8_t)(run + 1));
    for (uint8_t k = 0; k < run; k++) hal_uart_write(data[i + k]);
    i += run;
    if (i >= len) break;
    /* A short block ended at a zero, which the code byte already stands for; a full block
     * (254 bytes) did not. A zero as the very last byte leads to one more, empty block. */
    if (run < 254) i++;
  }
  hal_uart_write(0);
}
