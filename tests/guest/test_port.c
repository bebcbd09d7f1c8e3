/*
 * tests for guest/port.c: finding the virtio-serial port in a fake sysfs,
 * waiting for "bye" (whole, split, after noise; the host closing; silence)
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/harness.h"
#include "guest/port.h"
#include "wltest.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char root[] = "/tmp/thpeval-port-XXXXXX";

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(root))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd) ? -1 : 0;
}

static void test_find(void **state)
{
	char dev[512], want[512], list[256];
	struct err e = ERR_INIT;
	int fd;

	(void)state;
	/* no virtio-ports class at all */
	assert_int_equal(port_find(root, "org.thpeval.records", dev, sizeof(dev), &e), -ENOENT);
	assert_non_null(strstr(e.msg, "virtio_console not loaded"));
	err_clear(&e);

	wlt_put(root, "/sys/class/virtio-ports/vport0p1/name", "org.qemu.guest_agent.0\n");
	wlt_put(root, "/sys/class/virtio-ports/vport0p2/name", "org.thpeval.records\n");
	wlt_put(root, "/sys/class/virtio-ports/vport1p1/name", "org.thpeval.records.old\n");
	wlt_put(root, "/sys/class/virtio-ports/junk/name", "org.thpeval.records\n");	/* not a vport name */
	assert_int_equal(port_find(root, "org.thpeval.records", dev, sizeof(dev), &e), 0);
	snprintf(want, sizeof(want), "%s/dev/vport0p2", root);
	assert_string_equal(dev, want);
	assert_int_equal(port_find(root, "org.thpeval", dev, sizeof(dev), &e), -ENOENT);
	assert_non_null(strstr(e.msg, "no virtio-serial port named 'org.thpeval'"));

	port_list(root, list, sizeof(list));
	assert_non_null(strstr(list, "vport0p2=org.thpeval.records"));
	assert_non_null(strstr(list, "vport0p1=org.qemu.guest_agent.0"));
	assert_null(strstr(list, "junk"));

	/* found but no device node yet: port_open waits, then says why */
	err_clear(&e);
	assert_true(port_open(root, "org.thpeval.records", false, 200, &e) < 0);
	assert_non_null(strstr(e.msg, "cannot open"));
	wlt_put(root, "/dev/vport0p2", "");
	err_clear(&e);
	fd = port_open(root, "org.thpeval.records", false, 200, &e);
	assert_true(fd >= 0);
	close(fd);
}

/*
 * The host's side is a child writing the chunks into a pipe, each only once
 * the one before has been read (FIONREAD back to 0), so a split "bye" really
 * arrives in pieces; then it closes (close_after) or holds the pipe open
 * until the reader is gone. A case that ends in "bye" or a close gets a long
 * timeout (it must return as soon as that arrives); one that ends in silence
 * gets BYE_SHORT_MS and must wait that long, not less.
 */
#define BYE_LONG_MS 30000
#define BYE_SHORT_MS 400
#define BYE_CHILD_WAIT_MS 60000	/* the child's bound on any wait */

struct bye_case {
	const char *name;
	const char *chunks[3];	/* written one at a time, each after the one before was read */
	int close_after;	/* close the writer after the chunks */
	int ret;
};

static struct bye_case bye_cases[] = {
	{ "bye", { "bye\n" }, 0, 0 },
	{ "bye split over writes", { "b", "ye", "\n" }, 0, 0 },
	{ "noise before bye", { "hello there\n", "bye\n" }, 0, 0 },
	{ "host closes without bye", { "later\n" }, 1, -EPIPE },
	{ "host silent", { NULL }, 0, -ETIMEDOUT },
	{ "bye without newline", { "bye" }, 0, -ETIMEDOUT },
};

/* the child: until fd's pipe is empty (read by the other end), at most BYE_CHILD_WAIT_MS */
static int drained(int fd)
{
	uint64_t t0 = harness_now_ns();
	int n = -1;

	while (!ioctl(fd, FIONREAD, &n) && n > 0) {
		if (harness_now_ns() - t0 > BYE_CHILD_WAIT_MS * 1000000ull)
			return 0;
		harness_sleep_ms(1);
	}
	return n == 0;
}

static void test_bye(void **state)
{
	const struct bye_case *c = *state;
	struct err e = ERR_INIT;
	int p[2], status, timeout = c->ret == -ETIMEDOUT ? BYE_SHORT_MS : BYE_LONG_MS;
	uint64_t t0, dt;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct pollfd gone = { 0, 0, 0 };
		size_t i;

		close(p[0]);
		for (i = 0; i < N(c->chunks) && c->chunks[i]; i++)
			if (write(p[1], c->chunks[i], strlen(c->chunks[i])) < 0 || !drained(p[1]))
				_exit(1);
		if (c->close_after)
			_exit(0);
		gone.fd = p[1];	/* POLLERR once the reader has closed its end */
		poll(&gone, 1, BYE_CHILD_WAIT_MS);
		_exit(0);
	}
	close(p[1]);
	t0 = harness_now_ns();
	assert_int_equal(port_wait_bye(p[0], timeout, &e), c->ret);
	dt = harness_now_ns() - t0;
	if (c->ret == -ETIMEDOUT)	/* the whole timeout (kept in whole ms), then given up */
		assert_true(dt >= (uint64_t)(timeout - 1) * 1000000u);
	assert_true(dt < BYE_LONG_MS * 1000000ull);	/* a sanity bound */
	if (c->ret)
		assert_true(err_isset(&e));
	close(p[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);	/* the reader's close ends it */
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);	/* every chunk was read */
}

int main(void)
{
	struct CMUnitTest tests[N(bye_cases) + 1];
	size_t i, n = 0;

	tests[n++] = (struct CMUnitTest){ "find and open the port by name", test_find, NULL, NULL,
					  NULL };
	for (i = 0; i < N(bye_cases); i++)
		tests[n++] = (struct CMUnitTest){ bye_cases[i].name, test_bye, NULL, NULL,
						  &bye_cases[i] };
	return _cmocka_run_group_tests("port", tests, n, setup, teardown);
}
