#include "hal.h"
#include "pinclaw.h"

int main(void) {
  hal_init();
  pc_init();
  for (;;) {
    if (!pc_poll()) hal_idle();
  }
}
