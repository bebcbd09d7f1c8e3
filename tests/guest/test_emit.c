/* tests for guest/emit.c: whole-line writes, sequence numbers, reasons that do not fit */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/emit.h"
#include "guest/harness.h"

/* bytes the pipe holds when full (F_GETPIPE_SZ), so that a write of 4 times that must wait */
static size_t pipe_size(int fd)
{
	int sz = fcntl(fd, F_GETPIPE_SZ);

	assert_true(sz > 0);
	return (size_t)sz;
}

/* bytes waiting in the pipe */
static int pipe_queued(int fd)
{
	int n = -1;

	return ioctl(fd, FIONREAD, &n) ? -1 : n;
}

/*
 * A reader that starts only once the pipe is full (FIONREAD reaches
 * F_GETPIPE_SZ, waited for up to 10 s): write_full, with four pipes' worth
 * to write, has met EAGAIN on its non-blocking fd by then, and still
 * delivers every byte in order.
 */
static void test_write_full_slow_reader(void **state)
{
	struct err e = ERR_INIT;
	int p[2], status;
	size_t i, len, cap;
	char *buf;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	cap = pipe_size(p[1]);
	len = 4 * cap;
	buf = malloc(len);
	assert_non_null(buf);
	for (i = 0; i < len; i++)
		buf[i] = (char)('a' + i % 26);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char got[4096];
		size_t total = 0, k;
		uint64_t t0 = harness_now_ns();
		ssize_t n;

		close(p[1]);
		fcntl(p[0], F_SETFL, 0);
		while (pipe_queued(p[0]) < (int)cap) {
			if (harness_now_ns() - t0 > 10000000000ull)
				_exit(3);	/* the writer never filled the pipe */
			harness_sleep_ms(1);
		}
		while ((n = read(p[0], got, sizeof(got))) > 0) {
			for (k = 0; k < (size_t)n; k++)
				if (got[k] != (char)('a' + (total + k) % 26))
					_exit(2);
			total += (size_t)n;
		}
		_exit(total == len ? 0 : 1);
	}
	close(p[0]);
	assert_int_equal(write_full(p[1], buf, len, 30000, &e), 0);
	close(p[1]);
	free(buf);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 3)
		fail_msg("the pipe (%zu bytes) never filled: write_full did not wait on it", cap);
	assert_int_equal(WEXITSTATUS(status), 0);	/* every byte, in order */
}

/* nobody reads: once the pipe is full, -ETIMEDOUT when timeout_ms has passed, not before */
static void test_write_full_timeout(void **state)
{
	struct err e = ERR_INIT;
	uint64_t t0, dt;
	size_t len;
	char *buf;
	int p[2];

	(void)state;
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	len = 4 * pipe_size(p[1]);
	buf = calloc(1, len);
	assert_non_null(buf);
	t0 = harness_now_ns();
	assert_int_equal(write_full(p[1], buf, len, 200, &e), -ETIMEDOUT);
	dt = harness_now_ns() - t0;
	assert_true(dt >= 199000000ull);	/* the deadline is kept in whole ms */
	assert_true(dt < 30000000000ull);	/* a sanity bound: it did not wait for ever */
	assert_non_null(strstr(e.msg, "not reading"));
	free(buf);
	close(p[0]);
	close(p[1]);
}

static void test_write_full_closed(void **state)
{
	struct err e = ERR_INIT;
	int p[2];

	(void)state;
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(pipe(p), 0);
	close(p[0]);
	assert_int_equal(write_full(p[1], "x\n", 2, 200, &e), -EPIPE);
	close(p[1]);
}

static void read_back(int fd, struct record *r, size_t max, size_t *n)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *text = calloc(1, (size_t)len + 1), *line, *save = NULL, why[128];

	assert_non_null(text);
	assert_int_equal(pread(fd, text, (size_t)len, 0), len);
	*n = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		assert_true(*n < max);
		if (rec_parse(line, strlen(line), &r[*n], why, sizeof(why)))
			fail_msg("invalid record '%s': %s", line, why);
		(*n)++;
	}
	free(text);
}

static void test_sequence(void **state)
{
	struct record r[4], out[4];
	struct err e = ERR_INIT;
	struct emitter em;
	int fd = memfd_create("emit", 0);
	size_t i, n;

	(void)state;
	emitter_init(&em, fd, 1000);
	for (i = 0; i < 3; i++) {
		rec_init(&r[i], i == 1 ? REC_RESULT : REC_INFO, 77);	/* 77: ignored */
		rec_add_u64(&r[i], "i", i);
		assert_int_equal(emitter_send(&em, &r[i], &e), 0);
	}
	assert_int_equal(em.seq, 3);
	assert_int_equal(em.sent[REC_INFO], 2);
	assert_int_equal(em.sent[REC_RESULT], 1);
	read_back(fd, out, 4, &n);
	assert_int_equal(n, 3);
	for (i = 0; i < n; i++)
		assert_int_equal(out[i].seq, i);
	close(fd);
}

static void test_reason_fits(void **state)
{
	struct record base, out[2];
	struct err e = ERR_INIT;
	struct emitter em;
	char reason[400], key[16];
	int fd = memfd_create("emit", 0);
	size_t i, n;

	(void)state;
	memset(reason, 'r', sizeof(reason) - 1);
	reason[sizeof(reason) - 1] = '\0';
	rec_init(&base, REC_FAIL, 0);
	for (i = 0; i < REC_MAX_FIELDS; i++) {	/* a full context record */
		snprintf(key, sizeof(key), "k%zu", i);
		assert_int_equal(rec_add_str(&base, key, "v"), 0);
	}
	emitter_init(&em, fd, 1000);
	assert_int_equal(emitter_send_reason(&em, REC_FAIL, &base, reason, &e), 0);
	/* context whose encoding is too long for a line: the reason alone goes out */
	for (i = 0; i < REC_MAX_FIELDS; i++)
		memset(base.f[i].val, '%', REC_VAL_MAX - 1), base.f[i].val[REC_VAL_MAX - 1] = '\0';
	assert_int_equal(emitter_send_reason(&em, REC_SKIP, &base, "why", &e), 0);
	read_back(fd, out, 2, &n);
	assert_int_equal(n, 2);
	assert_int_equal(strlen(rec_get(&out[0], "reason")), REC_VAL_MAX - 1);	/* cut, not lost */
	assert_int_equal(out[0].nfields, REC_MAX_FIELDS);
	assert_int_equal(out[1].type, REC_SKIP);
	assert_int_equal(out[1].nfields, 1);
	assert_string_equal(rec_get(&out[1], "reason"), "why");
	close(fd);
}

/* a reason is one line of text: control characters (a child's output) go out as spaces */
static void test_reason_control(void **state)
{
	static const struct { const char *name, *reason, *sent; } cases[] = {
		{ "plain", "make exited with 2", "make exited with 2" },
		{ "two lines", "make failed:\nno rule", "make failed: no rule" },
		{ "terminal escape", "\x1b[2Jcleared\r", " [2Jcleared " },
		{ "delete", "a\x7f", "a " },
	};
	struct err e = ERR_INIT;
	struct emitter em;
	struct record out[1];
	size_t i, n;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int fd = memfd_create("emit", 0);

		emitter_init(&em, fd, 1000);
		if (emitter_send_reason(&em, REC_FAIL, NULL, cases[i].reason, &e))
			fail_msg("case '%s': %s", cases[i].name, e.msg);
		read_back(fd, out, 1, &n);
		assert_int_equal(n, 1);
		if (strcmp(rec_get(&out[0], "reason"), cases[i].sent))
			fail_msg("case '%s': sent '%s'", cases[i].name, rec_get(&out[0], "reason"));
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_full_slow_reader),
		cmocka_unit_test(test_write_full_timeout),
		cmocka_unit_test(test_write_full_closed),
		cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_reason_fits),
		cmocka_unit_test(test_reason_control),
	};

	return cmocka_run_group_tests_name("emit", tests, NULL, NULL);
}
