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
#include <sys/mman.h>
#include <sys/wait.h>
#include <signal.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/emit.h"
#include "guest/harness.h"

static void test_write_full_slow_reader(void **state)
{
	static char buf[256 * 1024];
	struct err e = ERR_INIT;
	int p[2], status;
	pid_t pid;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (char)('a' + i % 26);
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char got[4096];
		size_t total = 0, k;
		ssize_t n;

		close(p[1]);
		fcntl(p[0], F_SETFL, 0);
		harness_sleep_ms(100);	/* the writer meets a full pipe: EAGAIN */
		while ((n = read(p[0], got, sizeof(got))) > 0) {
			for (k = 0; k < (size_t)n; k++)
				if (got[k] != (char)('a' + (total + k) % 26))
					_exit(2);
			total += (size_t)n;
		}
		_exit(total == sizeof(buf) ? 0 : 1);
	}
	close(p[0]);
	assert_int_equal(write_full(p[1], buf, sizeof(buf), 5000, &e), 0);
	close(p[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);	/* every byte, in order */
}

static void test_write_full_timeout(void **state)
{
	static char buf[256 * 1024];
	struct err e = ERR_INIT;
	uint64_t t0 = harness_now_ns();
	int p[2];

	(void)state;
	assert_int_equal(pipe2(p, O_NONBLOCK), 0);
	assert_int_equal(write_full(p[1], buf, sizeof(buf), 200, &e), -ETIMEDOUT);
	assert_true(harness_now_ns() - t0 < 2000000000ull);
	assert_non_null(strstr(e.msg, "not reading"));
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_full_slow_reader),
		cmocka_unit_test(test_write_full_timeout),
		cmocka_unit_test(test_write_full_closed),
		cmocka_unit_test(test_sequence),
		cmocka_unit_test(test_reason_fits),
	};

	return cmocka_run_group_tests_name("emit", tests, NULL, NULL);
}
