// SPDX-License-Identifier: GPL-2.0
/*
 * gpio-edge-probe: a static helper for pinclaw's VM smoke test. It talks to the GPIO character
 * device through the uAPI v2 ioctls directly, so the test proves the kernel path on its own,
 * independently of pinclaw's GPIO code.
 *
 *   gpio-edge-probe info [CHIP...]                  chips (default: every /dev/gpiochip*) and their lines
 *   gpio-edge-probe find LABEL                      prints the /dev path of the chip labelled LABEL
 *   gpio-edge-probe edges CHIP OFFSET COUNT MS      requests OFFSET as input with both edges, prints
 *                                                   "ready", then one line per edge event; exits 0
 *                                                   after COUNT events, 2 after MS without one
 *   gpio-edge-probe watch CHIP OFFSET COUNT MS      same for line-info changes (requested, released,
 *                                                   reconfigured), which every chip reports
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int die(const char *what, const char *path)
{
	fprintf(stderr, "gpio-edge-probe: %s %s: %s\n", what, path, strerror(errno));
	return 1;
}

static int open_chip(const char *path, struct gpiochip_info *info)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (ioctl(fd, GPIO_GET_CHIPINFO_IOCTL, info) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static const char *direction(const struct gpio_v2_line_info *li)
{
	return (li->flags & GPIO_V2_LINE_FLAG_OUTPUT) ? "output" : "input";
}

static int info_one(const char *path)
{
	struct gpiochip_info chip;
	unsigned int i;
	int fd = open_chip(path, &chip);

	if (fd < 0)
		return die("cannot read chip info of", path);
	printf("chip %s name=%s label=%s lines=%u\n", path, chip.name, chip.label, chip.lines);
	for (i = 0; i < chip.lines; i++) {
		struct gpio_v2_line_info li;

		memset(&li, 0, sizeof(li));
		li.offset = i;
		if (ioctl(fd, GPIO_V2_GET_LINEINFO_IOCTL, &li) < 0) {
			close(fd);
			return die("cannot read line info of", path);
		}
		printf("line %s %u name=%s consumer=%s %s%s\n", path, i, li.name, li.consumer, direction(&li),
		       (li.flags & GPIO_V2_LINE_FLAG_USED) ? " used" : "");
	}
	close(fd);
	return 0;
}

static int each_chip(int (*fn)(const char *path, void *arg), void *arg)
{
	struct dirent **names;
	int n = scandir("/dev", &names, NULL, alphasort), i, ret = 1;

	if (n < 0)
		return die("cannot list", "/dev");
	for (i = 0; i < n; i++) {
		char path[300];

		if (ret && strncmp(names[i]->d_name, "gpiochip", 8) == 0) {
			snprintf(path, sizeof(path), "/dev/%s", names[i]->d_name);
			ret = fn(path, arg);
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

/* each_chip callbacks return 0 to stop (found / failed), 1 to go on. */
static int info_cb(const char *path, void *arg)
{
	(void)arg;
	return info_one(path) ? 0 : 1;
}

static int find_cb(const char *path, void *arg)
{
	struct gpiochip_info chip;
	int fd = open_chip(path, &chip);

	if (fd < 0)
		return 1;
	close(fd);
	if (strcmp(chip.label, (const char *)arg) != 0)
		return 1;
	printf("%s\n", path);
	return 0;
}

static int wait_readable(int fd, long ms, unsigned int got, unsigned int count)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r = poll(&p, 1, (int)ms);

	if (r < 0) {
		perror("gpio-edge-probe: poll");
		return -1;
	}
	if (r == 0) {
		printf("timeout after %u of %u events\n", got, count);
		return -1;
	}
	return 0;
}

static int edges(const char *path, unsigned int offset, unsigned int count, long ms)
{
	struct gpiochip_info chip;
	struct gpio_v2_line_request req;
	struct gpio_v2_line_event ev;
	unsigned int got = 0;
	int fd = open_chip(path, &chip);

	if (fd < 0)
		return die("cannot open", path);
	memset(&req, 0, sizeof(req));
	req.offsets[0] = offset;
	req.num_lines = 1;
	req.config.flags = GPIO_V2_LINE_FLAG_INPUT | GPIO_V2_LINE_FLAG_EDGE_RISING | GPIO_V2_LINE_FLAG_EDGE_FALLING;
	strcpy(req.consumer, "gpio-edge-probe");
	if (ioctl(fd, GPIO_V2_GET_LINE_IOCTL, &req) < 0)
		return die("cannot request a line with edge detection on", path);
	printf("ready\n");
	fflush(stdout);
	while (got < count) {
		struct gpio_v2_line_values values = { .mask = 1 };

		if (wait_readable(req.fd, ms, got, count))
			return 2;
		if (read(req.fd, &ev, sizeof(ev)) != (ssize_t)sizeof(ev))
			return die("short read of an edge event from", path);
		if (ioctl(req.fd, GPIO_V2_LINE_GET_VALUES_IOCTL, &values) < 0)
			return die("cannot read the value on", path);
		printf("event %s offset=%u seqno=%u line_seqno=%u value=%u\n",
		       ev.id == GPIO_V2_LINE_EVENT_RISING_EDGE ? "rising" : "falling", ev.offset, ev.seqno,
		       ev.line_seqno, (unsigned int)(values.bits & 1));
		fflush(stdout);
		got++;
	}
	return 0;
}

static int watch(const char *path, unsigned int offset, unsigned int count, long ms)
{
	static const char *const kinds[] = { "?", "requested", "released", "reconfigured" };
	struct gpiochip_info chip;
	struct gpio_v2_line_info li;
	struct gpio_v2_line_info_changed ev;
	unsigned int got = 0;
	int fd = open_chip(path, &chip);

	if (fd < 0)
		return die("cannot open", path);
	memset(&li, 0, sizeof(li));
	li.offset = offset;
	if (ioctl(fd, GPIO_V2_GET_LINEINFO_WATCH_IOCTL, &li) < 0)
		return die("cannot watch line info on", path);
	printf("ready\n");
	fflush(stdout);
	while (got < count) {
		if (wait_readable(fd, ms, got, count))
			return 2;
		if (read(fd, &ev, sizeof(ev)) != (ssize_t)sizeof(ev))
			return die("short read of a line-info event from", path);
		printf("info %s offset=%u consumer=%s %s\n", ev.event_type < 4 ? kinds[ev.event_type] : "?",
		       ev.info.offset, ev.info.consumer, direction(&ev.info));
		fflush(stdout);
		got++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int i, ret = 0;

	if (argc >= 2 && strcmp(argv[1], "info") == 0) {
		if (argc == 2)
			return each_chip(info_cb, NULL) == 0 ? 1 : 0;
		for (i = 2; i < argc; i++)
			ret |= info_one(argv[i]);
		return ret;
	}
	if (argc == 3 && strcmp(argv[1], "find") == 0) {
		if (each_chip(find_cb, argv[2]) == 0)
			return 0;
		fprintf(stderr, "gpio-edge-probe: no chip labelled %s\n", argv[2]);
		return 1;
	}
	if (argc == 6 && (strcmp(argv[1], "edges") == 0 || strcmp(argv[1], "watch") == 0)) {
		unsigned int offset = (unsigned int)strtoul(argv[3], NULL, 0);
		unsigned int count = (unsigned int)strtoul(argv[4], NULL, 0);
		long ms = strtol(argv[5], NULL, 0);

		return argv[1][0] == 'e' ? edges(argv[2], offset, count, ms) : watch(argv[2], offset, count, ms);
	}
	fprintf(stderr, "usage: gpio-edge-probe info [CHIP...] | find LABEL | edges|watch CHIP OFFSET COUNT MS\n");
	return 64;
}
