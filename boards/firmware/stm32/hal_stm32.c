/* HAL for the STM32F4 boards: bare registers (stm32f4.h), no vendor library.
 *
 * Clock: the chip runs from its 16 MHz internal oscillator (HSI), as it comes out of reset; no
 * PLL. The protocol needs no speed, and QEMU models no RCC at all (its registers read as zero), so
 * waiting for a PLL to lock would hang there. QEMU's netduinoplus2 clocks the CPU at 168 MHz
 * whatever the RCC says, which only matters to SysTick: SYSCLK_HZ is per build.
 *
 * GPIO in QEMU: QEMU 7.2 does not model the STM32F405's GPIO ports (unimplemented devices: reads
 * return 0, writes vanish). The netduinoplus2 build therefore keeps a shadow of every pin's level
 * in RAM and reads that back (PC_GPIO_SHADOW); it still writes the real registers, so the code path
 * is the Nucleo's. The Nucleo builds read the real IDR. */
#include "hal.h"
#include "pins.h"
#include "stm32f4.h"

#if defined(PC_BOARD_NETDUINOPLUS2)
#define SYSCLK_HZ 168000000u /* QEMU's fixed netduinoplus2 clock */
#define PC_GPIO_SHADOW 1
#define LINK USART1 /* QEMU's first -serial (hw/arm/stm32f405_soc.c wires serial_hd(0) to USART1) */
#define LINK_IRQ IRQ_USART1
#define LINK_TX 9 /* PA9, PA10: AF7 */
#define LINK_RX 10
#define LINK_HANDLER USART1_IRQHandler
#else
#define SYSCLK_HZ 16000000u /* HSI */
#define LINK USART2 /* PA2/PA3: the ST-LINK virtual COM port (Nucleo-64 user manual UM1724 §6.8) */
#define LINK_IRQ IRQ_USART2
#define LINK_TX 2
#define LINK_RX 3
#define LINK_HANDLER USART2_IRQHandler
#endif
#define PCLK_HZ 16000000u /* APB1 and APB2 undivided after reset: HSI */

#define PORT(pin) ((pin) >> 4)
#define BIT(pin) ((pin)&15u)

/* ---- UART ---- */

#define RING_MASK (PC_RX_RING - 1)
typedef char ring_is_power_of_two[(PC_RX_RING & RING_MASK) == 0 && PC_RX_RING <= 65536 ? 1 : -1];
static volatile uint8_t ring[PC_RX_RING];
static volatile uint16_t ring_head, ring_tail;

void LINK_HANDLER(void) {
  /* Reading SR then DR clears RXNE and an overrun (ORE) alike (RM0368 §19.6.1). */
  uint32_t sr = LINK->SR;
  if (!(sr & (USART_SR_RXNE | USART_SR_ORE))) return;
  uint8_t byte = (uint8_t)LINK->DR;
  if (!(sr & USART_SR_RXNE)) return; /* an overrun alone: DR held an old byte, the new one is lost */
  uint16_t next = (uint16_t)((ring_head + 1) & RING_MASK);
  if (next != ring_tail) { /* full: dropped; its frame fails the CRC and counts as bad */
    ring[ring_head] = byte;
    ring_head = next;
  }
}

bool hal_uart_read(uint8_t *byte) {
  if (ring_tail == ring_head) return false;
  *byte = ring[ring_tail];
  ring_tail = (uint16_t)((ring_tail + 1) & RING_MASK);
  return true;
}

void hal_uart_write(uint8_t byte) {
  while (!(LINK->SR & USART_SR_TXE)) {
  }
  LINK->DR = byte;
}

static void set_moder(uint8_t pin, uint32_t mode) {
  gpio_regs *g = GPIO(PORT(pin));
  g->MODER = (g->MODER & ~(3u << (2 * BIT(pin)))) | (mode << (2 * BIT(pin)));
}

static void set_af(uint8_t pin, uint32_t af) {
  gpio_regs *g = GPIO(PORT(pin));
  uint32_t shift = 4 * (BIT(pin) & 7);
  g->AFR[BIT(pin) >> 3] = (g->AFR[BIT(pin) >> 3] & ~(15u << shift)) | (af << shift);
  set_moder(pin, GPIO_MODER_AF);
}

static void uart_init(void) {
#if defined(PC_BOARD_NETDUINOPLUS2)
  RCC_APB2ENR |= 1u << 4;
#else
  RCC_APB1ENR |= 1u << 17;
#endif
  set_af(LINK_TX, 7);
  set_af(LINK_RX, 7);
  /* 16× oversampling: BRR = PCLK / baud, 138.9 → 139 is 0.08 % off. QEMU ignores the baud rate. */
  LINK->BRR = (PCLK_HZ + 115200 / 2) / 115200;
  /* Receiving must be on before the host sends: QEMU drops what arrives while RE or UE is off. */
  LINK->CR1 = USART_CR1_UE | USART_CR1_TE | USART_CR1_RE | USART_CR1_RXNEIE;
  NVIC_ISER(LINK_IRQ / 32) = 1u << (LINK_IRQ % 32);
}

/* ---- millis: SysTick at 1 kHz from the CPU clock ---- */

static volatile uint32_t ms;

void SysTick_Handler(void) { ms++; }

uint32_t hal_millis(void) { return ms; /* one aligned word: read atomically */ }

/* ---- pins ---- */

#if PC_GPIO_SHADOW
static uint8_t shadow[sizeof pins / sizeof pins[0]]; /* the level a real pin would show */
#endif

uint8_t hal_pin_count(void) { return sizeof pins / sizeof pins[0]; }
uint8_t hal_pin_number(uint8_t index) { return pins[index].pin; }
uint8_t hal_pin_caps(uint8_t index) { return pins[index].caps; }

uint8_t hal_board_name(uint8_t *dst) {
  static const char name[] = BOARD_NAME;
  for (uint8_t i = 0; i < sizeof name - 1; i++) dst[i] = (uint8_t)name[i];
  return sizeof name - 1;
}

static void set_pupd(uint8_t pin, uint32_t pupd) {
  gpio_regs *g = GPIO(PORT(pin));
  g->PUPDR = (g->PUPDR & ~(3u << (2 * BIT(pin)))) | (pupd << (2 * BIT(pin)));
}

static void set_odr(uint8_t pin, uint8_t value) {
  /* BSRR sets or resets one bit without a read-modify-write of ODR. */
  GPIO(PORT(pin))->BSRR = value ? 1u << BIT(pin) : 1u << (BIT(pin) + 16);
}

/* Switching MODER away from "alternate function" is what ends PWM on a pin. */
void hal_pin_mode(uint8_t index, uint8_t mode) {
  uint8_t pin = pins[index].pin;
  if (mode == PC_MODE_OUTPUT) {
    set_odr(pin, 0); /* an output starts low */
    set_pupd(pin, GPIO_PUPDR_NONE);
    set_moder(pin, GPIO_MODER_OUTPUT);
  } else {
    set_pupd(pin, mode == PC_MODE_PULLUP ? GPIO_PUPDR_UP : GPIO_PUPDR_NONE);
    set_moder(pin, GPIO_MODER_INPUT);
  }
#if PC_GPIO_SHADOW
  shadow[index] = mode == PC_MODE_PULLUP; /* a floating input reads as QEMU's zero */
#endif
}

uint8_t hal_pin_read(uint8_t index) {
#if PC_GPIO_SHADOW
  return shadow[index];
#else
  uint8_t pin = pins[index].pin;
  return (GPIO(PORT(pin))->IDR >> BIT(pin)) & 1u;
#endif
}

void hal_pin_write(uint8_t index, uint8_t value) {
  uint8_t pin = pins[index].pin;
  set_odr(pin, value); /* level first, then direction: no glitch to the old level */
  set_moder(pin, GPIO_MODER_OUTPUT);
#if PC_GPIO_SHADOW
  shadow[index] = value;
#endif
}

/* ---- PWM: the Nucleo's timer pins, 16 MHz / 128 / 256 = 488 Hz, 8-bit duty ---- */

static void pwm_init(void) {
#if !defined(PC_BOARD_NETDUINOPLUS2)
  RCC_APB1ENR |= 7u;     /* TIM2, TIM3, TIM4 */
  RCC_APB2ENR |= 1u;     /* TIM1 */
  tim_regs *const timers[] = {TIM1, TIM2, TIM3, TIM4};
  for (unsigned i = 0; i < 4; i++) {
    timers[i]->PSC = 127;
    timers[i]->ARR = 255;
    timers[i]->EGR = TIM_EGR_UG; /* load PSC now rather than at the first overflow */
    timers[i]->CR1 = TIM_CR1_ARPE | TIM_CR1_CEN;
  }
  TIM1->BDTR = TIM_BDTR_MOE;
  /* Every channel in PWM mode 1 (OCxM = 110) with preload, its output enabled: the pin's MODER
   * decides whether the timer or ODR drives it. */
  for (unsigned i = 0; i < sizeof pwm_outputs / sizeof pwm_outputs[0]; i++) {
    const stm32_pwm *o = &pwm_outputs[i];
    unsigned ch = o->channel - 1u;
    o->tim->CCMR[ch / 2] |= (6u << 4 | 1u << 3) << (8 * (ch % 2));
    o->tim->CCER |= 1u << (4 * ch + (o->complementary ? 2 : 0));
  }
#endif
}

void hal_pwm_write(uint8_t index, uint8_t duty) {
  /* 0 and 255 are steady levels (255 would otherwise leave one count low in 256). */
  if (duty == 0 || duty == 255) {
    hal_pin_write(index, duty != 0);
    return;
  }
#if !defined(PC_BOARD_NETDUINOPLUS2) /* no PWM pins there: the core never gets here */
  const stm32_pin *p = &pins[index];
  const stm32_pwm *o = &pwm_outputs[p->pwm - 1];
  o->tim->CCR[o->channel - 1] = duty;
  set_af(p->pin, o->af);
#endif
}

/* ---- ADC1: single conversions, 12 bits, PCLK2/2 = 8 MHz, 480-cycle sampling (60 µs) ---- */

static void adc_init(void) {
  RCC_APB2ENR |= 1u << 8;
  ADC_CCR = 0; /* ADCPRE = /2 */
  ADC1->SMPR1 = 0x07FFFFFF; /* every channel 480 cycles: high-impedance sources read true */
  ADC1->SMPR2 = 0x3FFFFFFF;
  ADC1->CR2 = ADC_CR2_ADON;
}

uint16_t hal_adc_read(uint8_t index) {
  const stm32_pin *p = &pins[index];
  set_moder(p->pin, GPIO_MODER_ANALOG); /* the digital input would load the pin (RM0368 §8.3.12) */
#if PC_GPIO_SHADOW
  shadow[index] = 0;
#endif
  ADC1->SQR3 = p->adc;
  ADC1->CR2 = ADC_CR2_ADON | ADC_CR2_SWSTART;
  /* A conversion takes about 500 ADC cycles, some 1000 CPU cycles. QEMU never sets EOC (its ADC
   * produces a value when DR is read after SWSTART), so the wait is bounded. */
  for (uint32_t n = 0; n < 20000 && !(ADC1->SR & ADC_SR_EOC); n++) {
  }
  return (uint16_t)(ADC1->DR & 0xFFF);
}

void hal_init(void) {
  RCC_AHB1ENR |= 7u; /* GPIO ports A-C */
  SYST_RVR = SYSCLK_HZ / 1000 - 1;
  SYST_CVR = 0;
  SYST_CSR = 7u; /* processor clock, interrupt, enable */
  uart_init();
  pwm_init();
  adc_init();
}

/* Sleeps until the next interrupt: SysTick every millisecond, or a byte. QEMU idles the host CPU
 * meanwhile. */
void hal_idle(void) { __asm volatile("wfi"); }
