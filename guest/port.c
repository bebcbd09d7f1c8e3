#include "port.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define PORTS_DIR "/sys/class/virtio-ports"

/* the name file's content without its newline; 0 or -errno */
static int read_name(const char *root, const char *port, char *buf, size_t len)
{
	char path[512];
	ssize_t n;
	int fd, r = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s" PORTS_DIR "/%s/name", root, port) >=
	    sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		r = -errno;
	close(fd);
	if (r)
		return r;
	if ((size_t)n == len - 1)
		return -E2BIG;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static bool vport_name_ok(const char *s)
{
	/* vport<digits>p<digits>: the only names used to build /dev paths */
	size_t i = 5;

	if (strncmp(s, "vport", 5))
		return false;
	if (s[i] < '0' || s[i] > '9')
		return false;
	while (s[i] >= '0' && s[i] <= '9')
		i++;
	if (s[i++] != 'p' || s[i] < '0' || s[i] > '9')
		return false;
	while (s[i] >= '0' && s[i] <= '9')
		i++;
	return s[i] == '\0' && i < 32;
}

int port_find(const char *root, const char *name, char *dev, size_t len, struct err *e)
{
	char dir[512], got[128];
	struct dirent *de;
	int ret = -ENOENT;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s" PORTS_DIR, root);
	d = opendir(dir);
	if (!d)
		return err_set(e, -ENOENT, "no '%s': virtio_console not loaded?", dir);
	while ((de = readdir(d))) {
		if (!vport_name_ok(de->d_name))
			continue;
		if (read_name(root, de->d_name, got, sizeof(got)) || strcmp(got, name))
			continue;
		if ((size_t)snprintf(dev, len, "%s/dev/%s", root, de->d_name) >= len)
			ret = err_set(e, -ENAMETOOLONG, "device path for '%s' too long", de->d_name);
		else
			ret = 0;
		break;
	}
	closedir(d);
	if (ret == -ENOENT)
		err_set(e, -ENOENT, "no virtio-serial port named '%s' in '%s'", name, dir);
	return ret;
}

void port_list(const char *root, char *buf, size_t len)
{
	char dir[512], got[128];
	struct dirent *de;
	size_t pos = 0;
	DIR *d;

	snprintf(buf, len, "%s", "(none)");
	snprintf(dir, sizeof(dir), "%s" PORTS_DIR, root);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d)) && pos + 1 < len) {
		int n;

		if (!vport_name_ok(de->d_name))
			continue;
		if (read_name(root, de->d_name, got, sizeof(got)))
			snprintf(got, sizeof(got), "%s", "?");
		n = snprintf(buf + pos, len - pos, "%s%s=%s", pos ? " " : "", de->d_name, got);
		if (n < 0)
			break;
		pos += (size_t)n;
	}
	closedir(d);
}

/* modprobe one module, waited for up to timeout_ms; 0 or -errno */
static int run_modprobe(const char *module, int timeout_ms, struct err *e)
{
	char a0[] = "modprobe", a1[64];
	char *const argv[] = { a0, a1, NULL };
	int64_t deadline = harness_now_ms() + timeout_ms;
	int status;
	pid_t pid, w;

	snprintf(a1, sizeof(a1), "%s", module);
	pid = fork();
	if (pid < 0)
		return err_set(e, -errno, "cannot fork for modprobe: %s", strerror(errno));
	if (pid == 0) {
		execv(PORT_MODPROBE, argv);
		_exit(127);
	}
	while ((w = waitpid(pid, &status, WNOHANG)) == 0 && harness_now_ms() < deadline)
		harness_sleep_ms(20);
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return err_set(e, -ETIMEDOUT, PORT_MODPROBE " %s took over %d ms", module,
			       timeout_ms);
	}
	if (w < 0)
		return err_set(e, -errno, "cannot wait for modprobe: %s", strerror(errno));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return err_set(e, -EIO, PORT_MODPROBE " %s failed (%s %d)", module,
			       WIFEXITED(status) ? "exit status" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 0;
}

/* the virtio-serial driver, and the PCI transport in case nothing loaded it yet */
static int load_virtio_console(int timeout_ms, struct err *e)
{
	run_modprobe("virtio_pci", timeout_ms, NULL);	/* often built in or loaded already */
	return run_modprobe("virtio_console", timeout_ms, e);
}

int port_open(const char *root, const char *name, bool load, int wait_ms, struct err *e)
{
	int64_t deadline = harness_now_ms() + wait_ms;
	struct err last = ERR_INIT;
	bool loaded = !load;
	char dev[512];
	int fd;

	for (;;) {
		err_clear(&last);
		if (port_find(root, name, dev, sizeof(dev), &last) == 0) {
			fd = open(dev, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
			if (fd >= 0)
				return fd;
			err_set(&last, -errno, "cannot open '%s': %s", dev, strerror(errno));
		}
		if (!loaded) {
			struct err merr = ERR_INIT;

			loaded = true;
			if (load_virtio_console(wait_ms, &merr))
				err_set(&last, merr.code, "%s", merr.msg);
			continue;
		}
		if (harness_now_ms() >= deadline)
			break;
		harness_sleep_ms(100);
	}
	return err_set(e, last.code ? last.code : -ENOENT, "%s (waited %d ms)", last.msg, wait_ms);
}

int port_wait_bye(int fd, int timeout_ms, struct err *e)
{
	int64_t deadline = harness_now_ms() + timeout_ms;
	char got[64];
	size_t have = 0;

	for (;;) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int64_t left = deadline - harness_now_ms();
		ssize_t n;
		int r;

		if (left <= 0)
			return err_set(e, -ETIMEDOUT, "no 'bye' from the host within %d ms",
				       timeout_ms);
		r = poll(&pfd, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_set(e, -errno, "cannot poll the port: %s", strerror(errno));
		if (r == 0)
			continue;
		if (!(pfd.revents & POLLIN))
			return err_set(e, -EPIPE, "the host closed the port before 'bye'");
		n = read(fd, got + have, sizeof(got) - 1 - have);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return err_set(e, -errno, "cannot read the port: %s", strerror(errno));
		if (n == 0)
			return err_set(e, -EPIPE, "the host closed the port before 'bye'");
		have += (size_t)n;
		got[have] = '\0';
		if (strstr(got, PORT_BYE))
			return 0;
		if (have == sizeof(got) - 1) {
			/* keep the tail that could still start "bye\n" */
			memmove(got, got + have - 3, 3);
			have = 3;
		}
	}
}
