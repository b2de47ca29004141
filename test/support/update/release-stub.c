/* A stand-in for a pinclaw release executable in test/update.test.ts: a real ELF file (built for
 * x64 or, with the cross compiler, for arm64) that answers `--version [--json]` like pinclaw and,
 * as `gateway`, speaks sd_notify on $NOTIFY_SOCKET. What it does is fixed when it is compiled:
 *   -DVERSION='"1.2.3"' -DSCHEMA=N -DMODE=M   M: 0 healthy (READY=1, then WATCHDOG=1 every 100 ms),
 *   1 `--version` exits 1, 2 never sends READY=1, 3 READY=1 but never WATCHDOG=1 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef MODE
#define MODE 0
#endif

static void notify(const char *msg) {
  const char *path = getenv("NOTIFY_SOCKET");
  if (!path) return;
  int fd = socket(AF_UNIX, SOCK_DGRAM, 0);
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  strncpy(a.sun_path, path, sizeof a.sun_path - 1);
  sendto(fd, msg, strlen(msg), 0, (struct sockaddr *)&a, sizeof a);
  close(fd);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--version") == 0) {
    if (MODE == 1) {
      fputs("error: this build cannot start\n", stderr);
      return 1;
    }
    if (argc > 2 && strcmp(argv[2], "--json") == 0) printf("{\"version\":\"%s\",\"schema\":%d}\n", VERSION, SCHEMA);
    else printf("pinclaw %s\n", VERSION);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "gateway") == 0) {
    if (MODE != 2) notify("READY=1\nSTATUS=stub " VERSION);
    for (;;) {
      usleep(100000);
      if (MODE == 0) notify("WATCHDOG=1");
    }
  }
  fputs("usage: stub --version | gateway\n", stderr);
  return 2;
}
