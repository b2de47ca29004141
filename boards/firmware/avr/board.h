/* Sizes for the AVR boards; the build passes -DPC_BOARD_UNO, -DPC_BOARD_NANO or -DPC_BOARD_MEGA. */
#ifndef PINCLAW_BOARD_H
#define PINCLAW_BOARD_H

#if defined(PC_BOARD_MEGA)
#define PC_MAX_PINS 70    /* D0-D53, A0-A15 */
#define PC_ADC_WATCHES 16 /* A0-A15 */
#elif defined(PC_BOARD_NANO)
#define PC_MAX_PINS 22 /* D0-D13, A0-A7 */
#define PC_ADC_WATCHES 8
#elif defined(PC_BOARD_UNO)
#define PC_MAX_PINS 20 /* D0-D13, A0-A5 */
#define PC_ADC_WATCHES 6
#else
#error "define PC_BOARD_UNO, PC_BOARD_NANO or PC_BOARD_MEGA"
#endif

#define PC_ADC_BITS 10
/* Holds what arrives while the main loop is busy sending a reply (blocking, 11.5 bytes/ms): a
 * host waits for each reply, so this holds a few short requests at most. */
#define PC_RX_RING 128

#endif
