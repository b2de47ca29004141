/* Pin tables of the STM32 boards. Pin numbers are port × 16 + n (PA5 = 5, PB0 = 16, PC13 = 45),
 * the capabilities those of boards/qemu-netduinoplus2.json, nucleo-f401re.json and
 * nucleo-f411re.json, except the pins of the serial link and of SWD, which the firmware lists with
 * no capability and never touches. */
#ifndef PINCLAW_STM32_PINS_H
#define PINCLAW_STM32_PINS_H

#include "hal.h"
#include "stm32f4.h"

/* PWM outputs: the timer channel behind a pin and the alternate function that connects them
 * (datasheets DS9716 / DS10314 Table 9, "Alternate function mapping"). */
typedef struct {
  tim_regs *tim;
  uint8_t channel;       /* 1-4 */
  uint8_t complementary; /* the CHxN output of an advanced timer */
  uint8_t af;
} stm32_pwm;

typedef struct {
  uint8_t pin;
  uint8_t caps;
  uint8_t adc; /* ADC1 channel, NO_ADC if none */
  uint8_t pwm; /* index into pwm_outputs[] + 1, 0 if none */
} stm32_pin;
#define NO_ADC 0xFF

#define IO (PC_CAP_INPUT | PC_CAP_OUTPUT | PC_CAP_PULLUP | PC_CAP_EDGE)
#define A PC_CAP_ADC
#define W PC_CAP_PWM
#define RESERVED 0
#define P(pin, caps) {pin, caps, NO_ADC, 0}
/* ADC1_IN0-7 are PA0-7, IN8-9 PB0-1, IN10-15 PC0-5 (datasheet Table 8, "pin definitions"). */
#define AN(pin) {pin, IO | A, (pin) < 8 ? (pin) : (pin) < 18 ? (pin) - 8 : (pin) - 22, 0}

#if defined(PC_BOARD_NETDUINOPLUS2)

#define BOARD_NAME "qemu-netduinoplus2"
/* No PWM: QEMU models neither TIM1 nor the pins' alternate functions. */
static const stm32_pin pins[] = {
    AN(0), AN(1), AN(2), AN(3), AN(4), AN(5), AN(6), AN(7),
    P(8, IO), P(9, RESERVED), P(10, RESERVED), P(11, IO), /* PA9/PA10: USART1, the link */
    P(12, IO), P(13, RESERVED), P(14, RESERVED), P(15, IO), /* PA13/PA14: SWD */
    AN(16), AN(17), P(18, IO), P(19, IO), P(20, IO), P(21, IO), P(22, IO), P(23, IO),
    P(24, IO), P(25, IO), P(26, IO), P(27, IO), P(28, IO), P(29, IO), P(30, IO), P(31, IO),
    AN(32), AN(33), AN(34), AN(35), AN(36), AN(37), P(38, IO), P(39, IO),
    P(40, IO), P(41, IO), P(42, IO), P(43, IO), P(44, IO), P(45, IO), P(46, IO), P(47, IO),
};

#elif defined(PC_BOARD_NUCLEO_F401RE) || defined(PC_BOARD_NUCLEO_F411RE)

#if defined(PC_BOARD_NUCLEO_F401RE)
#define BOARD_NAME "nucleo-f401re"
#else
#define BOARD_NAME "nucleo-f411re"
#endif
enum { PWM_PB3 = 1, PWM_PB4, PWM_PB10, PWM_PC7, PWM_PB6, PWM_PA7 };
static const stm32_pwm pwm_outputs[] = {
    {TIM2, 2, 0, 1}, {TIM3, 1, 0, 2}, {TIM2, 3, 0, 1}, {TIM3, 2, 0, 2}, {TIM4, 1, 0, 2}, {TIM1, 1, 1, 1},
};
/* In the order of the Arduino header, as the board profiles list them. */
static const stm32_pin pins[] = {
    P(3, RESERVED), P(2, RESERVED), /* D0/D1: USART2, the ST-LINK virtual COM port */
    P(10, IO), {19, IO | W, NO_ADC, PWM_PB3}, P(21, IO), {20, IO | W, NO_ADC, PWM_PB4},
    {26, IO | W, NO_ADC, PWM_PB10}, P(8, IO), P(9, IO), {39, IO | W, NO_ADC, PWM_PC7},
    {22, IO | W, NO_ADC, PWM_PB6}, {7, IO | A | W, 7, PWM_PA7}, AN(6), AN(5), P(25, IO), P(24, IO),
    AN(0), AN(1), AN(4), AN(16), AN(33), AN(32), P(45, IO),
    P(13, RESERVED), P(14, RESERVED), /* SWD */
};

#else
#error "define PC_BOARD_NETDUINOPLUS2, PC_BOARD_NUCLEO_F401RE or PC_BOARD_NUCLEO_F411RE"
#endif

#undef IO
#undef A
#undef W
#undef P
#undef AN

#endif
