/* The few STM32F4 registers the firmware uses, written out instead of a vendor header.
 *
 * Addresses and bits are from RM0368 (STM32F401), RM0383 (STM32F411) and RM0090 (STM32F405):
 * for everything here the three agree (memory map §2.3, RCC §6.3, GPIO §8.4, ADC §11.12,
 * TIM1 §12.4, TIM2-5 §13.4, USART §19.6 in RM0368; §7, §8, §13, §17, §18, §30 in RM0090). The
 * Cortex-M4 core registers (SysTick, NVIC) are from the ARMv7-M Architecture Reference Manual. */
#ifndef PINCLAW_STM32F4_H
#define PINCLAW_STM32F4_H

#include <stdint.h>

#define REG32(addr) (*(volatile uint32_t *)(addr))

/* RCC: clock enables (reset values leave every peripheral clock off). */
#define RCC_BASE 0x40023800u
#define RCC_AHB1ENR REG32(RCC_BASE + 0x30) /* bit n: GPIO port n (A = 0) */
#define RCC_APB1ENR REG32(RCC_BASE + 0x40) /* TIM2 bit 0, TIM3 bit 1, TIM4 bit 2, USART2 bit 17 */
#define RCC_APB2ENR REG32(RCC_BASE + 0x44) /* TIM1 bit 0, USART1 bit 4, ADC1 bit 8 */

typedef struct {
  volatile uint32_t MODER, OTYPER, OSPEEDR, PUPDR, IDR, ODR, BSRR, LCKR, AFR[2];
} gpio_regs;
#define GPIO(port) ((gpio_regs *)(0x40020000u + 0x400u * (port)))
#define GPIO_MODER_INPUT 0u
#define GPIO_MODER_OUTPUT 1u
#define GPIO_MODER_AF 2u
#define GPIO_MODER_ANALOG 3u
#define GPIO_PUPDR_NONE 0u
#define GPIO_PUPDR_UP 1u

typedef struct {
  volatile uint32_t SR, DR, BRR, CR1, CR2, CR3, GTPR;
} usart_regs;
#define USART1 ((usart_regs *)0x40011000u)
#define USART2 ((usart_regs *)0x40004400u)
#define USART_SR_ORE (1u << 3)
#define USART_SR_RXNE (1u << 5)
#define USART_SR_TXE (1u << 7)
#define USART_CR1_RE (1u << 2)
#define USART_CR1_TE (1u << 3)
#define USART_CR1_RXNEIE (1u << 5)
#define USART_CR1_UE (1u << 13)

typedef struct {
  volatile uint32_t CR1, CR2, SMCR, DIER, SR, EGR, CCMR[2], CCER, CNT, PSC, ARR, RCR, CCR[4], BDTR;
} tim_regs;
#define TIM1 ((tim_regs *)0x40010000u)
#define TIM2 ((tim_regs *)0x40000000u)
#define TIM3 ((tim_regs *)0x40000400u)
#define TIM4 ((tim_regs *)0x40000800u)
#define TIM_CR1_CEN (1u << 0)
#define TIM_CR1_ARPE (1u << 7)
#define TIM_EGR_UG (1u << 0)
#define TIM_BDTR_MOE (1u << 15) /* advanced timers (TIM1) only: main output enable */

typedef struct {
  volatile uint32_t SR, CR1, CR2, SMPR1, SMPR2, JOFR[4], HTR, LTR, SQR1, SQR2, SQR3, JSQR, JDR[4], DR;
} adc_regs;
#define ADC1 ((adc_regs *)0x40012000u)
#define ADC_CCR REG32(0x40012304u) /* ADC common: ADCPRE in bits 16-17 */
#define ADC_SR_EOC (1u << 1)
#define ADC_CR2_ADON (1u << 0)
#define ADC_CR2_SWSTART (1u << 30)

/* Cortex-M4 core. */
#define SYST_CSR REG32(0xE000E010u) /* SysTick control: ENABLE bit 0, TICKINT bit 1, CLKSOURCE bit 2 */
#define SYST_RVR REG32(0xE000E014u)
#define SYST_CVR REG32(0xE000E018u)
#define NVIC_ISER(n) REG32(0xE000E100u + 4u * (n))

/* Interrupt numbers (RM0368 Table 38, RM0090 Table 61). */
#define IRQ_USART1 37
#define IRQ_USART2 38

#endif
