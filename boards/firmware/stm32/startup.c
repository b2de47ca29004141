/* Cortex-M4 start-up for the STM32F4 builds: the vector table, copying .data and clearing .bss
 * before main, and the two C library functions the compiler may call on its own. No newlib. */
#include <stddef.h>
#include <stdint.h>

extern uint32_t _estack, _sidata, _sdata, _edata, _sbss, _ebss; /* from stm32f4.ld */
int main(void);

void Reset_Handler(void) {
  uint32_t *src = &_sidata, *dst = &_sdata;
  while (dst < &_edata) *dst++ = *src++;
  for (dst = &_sbss; dst < &_ebss;) *dst++ = 0;
  main();
  for (;;) {
  }
}

/* Anything unexpected (a fault, an interrupt nobody enabled) stops here, where a debugger sees it. */
void Default_Handler(void) {
  for (;;) {
  }
}

void SysTick_Handler(void) __attribute__((weak, alias("Default_Handler")));
void USART1_IRQHandler(void) __attribute__((weak, alias("Default_Handler")));
void USART2_IRQHandler(void) __attribute__((weak, alias("Default_Handler")));

/* 16 core exceptions, then the peripheral interrupts up to USART2 (IRQ 38), the last one used.
 * Positions from RM0368 Table 38 / RM0090 Table 61. */
#define X4 Default_Handler, Default_Handler, Default_Handler, Default_Handler
__attribute__((section(".isr_vector"), used)) void (*const vectors[16 + 39])(void) = {
    (void (*)(void))(uintptr_t)&_estack, /* the initial stack pointer */
    Reset_Handler,
    X4, X4, X4, Default_Handler, /* NMI … PendSV (2-14) */
    SysTick_Handler,             /* 15 */
    X4, X4, X4, X4, X4, X4, X4, X4, X4, Default_Handler, /* IRQ 0-36 */
    USART1_IRQHandler,           /* IRQ 37 */
    USART2_IRQHandler,           /* IRQ 38 */
};

/* GCC turns copy and clear loops into these calls even when freestanding. */
void *memcpy(void *dst, const void *src, size_t n) {
  uint8_t *d = dst;
  const uint8_t *s = src;
  while (n--) *d++ = *s++;
  return dst;
}

void *memset(void *dst, int c, size_t n) {
  uint8_t *d = dst;
  while (n--) *d++ = (uint8_t)c;
  return dst;
}
