/*
 * smoke_init: PID 1 of the tiny initramfs that tests/orchestrator/test_virt.c
 * boots (built by mkinitramfs.sh, static, libc + lib/record.c only).
 * Loads the virtio modules shipped in /modules (sorted by name), finds the
 * virtio-serial port named org.thpeval.records, writes: a hello record, a
 * result record, a garbage line, a line longer than REC_MAX_LINE, then
 * (kernel command line "thpeval.flood=<MiB>") that many MiB of garbage lines
 * to the port and 256 KiB of them to the console, then an end record; then
 * waits for "bye\n" and powers off. On any failure it says
 * so on the console and powers off: the host test sees the channel end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "lib/record.h"

#define DEFAULT_PORT "org.thpeval.records"

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int fd = open("/dev/console", O_WRONLY | O_NOCTTY);
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (fd >= 0 && n > 0) {
		if (write(fd, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1) < 0) {
			/* nowhere else to report to */
		}
		close(fd);
	}
}

static void power_off(void)
{
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static int load_modules(void)
{
	struct dirent **ents;
	int n, i, ret = 0;

	n = scandir("/modules", &ents, NULL, alphasort);
	if (n < 0)
		return 0;
	for (i = 0; i < n; i++) {
		char path[300];
		int fd;

		if (ents[i]->d_name[0] == '.')
			goto next;
		snprintf(path, sizeof(path), "/modules/%s", ents[i]->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || (syscall(SYS_finit_module, fd, "", 0) < 0 && errno != EEXIST)) {
			say("smoke_init: cannot load %s: %s\n", path, strerror(errno));
			ret = -1;
		}
		if (fd >= 0)
			close(fd);
next:
		free(ents[i]);
	}
	free(ents);
	return ret;
}

/* /sys/class/virtio-ports/vportNpM/name == port -> /dev/vportNpM */
static int find_port(const char *port, char *dev, size_t len)
{
	DIR *d = opendir("/sys/class/virtio-ports");
	struct dirent *de;
	int found = -1;

	if (!d)
		return -1;
	while (found < 0 && (de = readdir(d))) {
		char path[300], name[128];
		ssize_t n;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/class/virtio-ports/%s/name", de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, name, sizeof(name) - 1);
		close(fd);
		if (n <= 0)
			continue;
		name[n] = '\0';
		name[strcspn(name, "\n")] = '\0';
		if (strcmp(name, port) == 0) {
			snprintf(dev, len, "/dev/%s", de->d_name);
			found = 0;
		}
	}
	closedir(d);
	return found;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_record(int fd, const struct record *r)
{
	char line[REC_MAX_LINE + 2];
	int n = rec_format(r, line, sizeof(line));

	return n < 0 ? -1 : write_all(fd, line, (size_t)n);
}

/* "<key><number>" on the kernel command line (dotted keys never reach argv) */
static unsigned cmdline_uint(const char *key)
{
	char buf[1024], *p;
	int fd = open("/proc/cmdline", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, key);
	return p ? (unsigned)strtoul(p + strlen(key), NULL, 10) : 0;
}

/* mib MiB of 64-byte garbage lines to the port, the first 256 KiB also to the console */
static void flood(int fd, unsigned mib)
{
	static char chunk[65536];
	unsigned long i, chunks = (unsigned long)mib * 16;
	int con = open("/dev/console", O_WRONLY | O_NOCTTY);

	for (i = 0; i < sizeof(chunk); i += 64) {
		memset(chunk + i, 'g', 63);
		chunk[i + 63] = '\n';
	}
	for (i = 0; i < chunks; i++) {
		if (write_all(fd, chunk, sizeof(chunk)) < 0)
			say("smoke_init: flood write failed\n");
		if (con >= 0 && i < 4 && write_all(con, chunk, sizeof(chunk)) < 0)
			break;
	}
	if (con >= 0)
		close(con);
}

int main(void)
{
	static const char garbage[] = "this is not a record\n";
	const char *port = DEFAULT_PORT;
	unsigned flood_mib;
	static char big[REC_MAX_LINE * 2 + 1];
	char dev[300], in[64];
	struct record r;
	size_t have = 0;
	int fd = -1, i;
	struct timespec ts;

	mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
	mount("sysfs", "/sys", "sysfs", 0, NULL);
	mount("proc", "/proc", "proc", 0, NULL);
	flood_mib = cmdline_uint("thpeval.flood=");
	say("smoke_init: started\n");
	load_modules();
	/* udev-less: the port appears once virtio_console has probed */
	for (i = 0; i < 500 && find_port(port, dev, sizeof(dev)) < 0; i++)
		usleep(10000);
	if (i == 500) {
		say("smoke_init: no virtio port named '%s'\n", port);
		power_off();
	}
	for (i = 0; i < 500 && (fd = open(dev, O_RDWR | O_CLOEXEC)) < 0; i++)
		usleep(10000);
	if (fd < 0) {
		say("smoke_init: cannot open %s: %s\n", dev, strerror(errno));
		power_off();
	}
	say("smoke_init: port %s is %s\n", port, dev);
	clock_gettime(CLOCK_MONOTONIC, &ts);

	rec_init(&r, REC_HELLO, 1);
	rec_add_str(&r, "runner", "smoke_init");
	rec_add_u64(&r, "uptime_ms", (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
	if (send_record(fd, &r) < 0)
		say("smoke_init: cannot write the hello record\n");
	rec_init(&r, REC_RESULT, 2);
	rec_add_str(&r, "workload", "smoke");
	rec_add_str(&r, "note", "a value with spaces & <markup>");
	rec_add_u64(&r, "answer", 42);
	if (send_record(fd, &r) < 0 || write_all(fd, garbage, sizeof(garbage) - 1) < 0)
		say("smoke_init: cannot write records\n");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\n';
	rec_init(&r, REC_END, 3);
	if (write_all(fd, big, sizeof(big)) < 0)
		say("smoke_init: cannot write records\n");
	if (flood_mib)
		flood(fd, flood_mib);
	if (send_record(fd, &r) < 0)
		say("smoke_init: cannot write the end record\n");

	/* wait for "bye\n" from the host */
	while (have < sizeof(in) - 1) {
		ssize_t n = read(fd, in + have, sizeof(in) - 1 - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			usleep(10000);	/* host not connected (yet) */
			continue;
		}
		have += (size_t)n;
		in[have] = '\0';
		if (strstr(in, "bye\n"))
			break;
	}
	say("smoke_init: got bye, powering off\n");
	close(fd);
	power_off();
	return 0;
}
