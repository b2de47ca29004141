/* Sizes for the STM32 boards; the build passes -DPC_BOARD_NETDUINOPLUS2, -DPC_BOARD_NUCLEO_F401RE
 * or -DPC_BOARD_NUCLEO_F411RE. */
#ifndef PINCLAW_BOARD_H
#define PINCLAW_BOARD_H

#define PC_MAX_PINS 48    /* ports A to C */
#define PC_ADC_WATCHES 16 /* ADC1_IN0 … IN15 */
#define PC_ADC_BITS 12
/* Holds what arrives while the main loop is busy sending a reply. */
#define PC_RX_RING 256

#endif
