/*
 * tests for guest/probe.c: the access passes of a recovery arm, written as
 * records to a memfd: their count and fields, no passes without a plan, and
 * the host's "stop" on the port ending them after the first, its "touch"
 * faulting one fresh buffer of MemFree less the margin, once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/probe.h"
#include "lib/record.h"
#include "tests/guest/recstream.h"

static size_t count_event(const struct stream *s, const char *ev)
{
	size_t i, n = 0;

	for (i = 0; i < s->n; i++)
		n += s->rec[i].type == REC_INFO && rec_get(&s->rec[i], "event") &&
		     !strcmp(rec_get(&s->rec[i], "event"), ev);
	return n;
}

static void small_plan(struct plan *p, uint64_t passes)
{
	plan_defaults(p);
	p->size = 4ull << 20;
	p->accesses = 1000;
	p->probe = passes;
	p->probe_period_ms = 100;
}

static void test_passes(void **state)
{
	const struct probe_env env = { "", false, -1 };
	struct plan p;
	struct emitter em;
	struct stream s;
	struct err e = ERR_INIT;
	uint64_t v;
	double ns;
	int out = memfd_create("out", 0);

	(void)state;
	assert_true(out >= 0);
	small_plan(&p, 3);
	emitter_init(&em, out, 1000);
	assert_int_equal(probe_run(&env, &p, &em, &e), 0);
	read_stream(out, &s);
	close(out);
	assert_int_equal(s.n, 5);
	assert_int_equal(count_event(&s, "probe_start"), 1);
	assert_int_equal(count_event(&s, "probe"), 3);
	assert_int_equal(count_event(&s, "probe_end"), 1);
	assert_string_equal(rec_get(&s.rec[0], "guest_thp"), "always");	/* the plan's first other than never */
	assert_int_equal(rec_get_u64(&s.rec[0], "accesses", &v), 0);
	assert_int_equal(v, 1000);
	assert_int_equal(rec_get_f64(&s.rec[1], "access_ns", &ns), 0);
	assert_true(ns > 0);
	assert_int_equal(rec_get_u64(&s.rec[3], "pass", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(rec_get_u64(&s.rec[3], "t_ms", &v), 0);
	assert_true(v >= 200);	/* one period apart */
	assert_int_equal(rec_get_u64(&s.rec[4], "passes", &v), 0);
	assert_int_equal(v, 3);
}

static void test_no_plan(void **state)
{
	const struct probe_env env = { "", false, -1 };
	struct plan p;
	struct emitter em;
	struct err e = ERR_INIT;
	int out = memfd_create("out", 0);

	(void)state;
	small_plan(&p, 0);
	emitter_init(&em, out, 1000);
	assert_int_equal(probe_run(&env, &p, &em, &e), 0);
	assert_int_equal(lseek(out, 0, SEEK_END), 0);
	close(out);
}

static void test_host_stop(void **state)
{
	struct plan p;
	struct emitter em;
	struct stream s;
	struct err e = ERR_INIT;
	uint64_t v;
	int out = memfd_create("out", 0), fds[2];

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], REC_PROBE_STOP, strlen(REC_PROBE_STOP)), (ssize_t)strlen(REC_PROBE_STOP));
	{
		const struct probe_env env = { "", false, fds[0] };

		small_plan(&p, 50);
		emitter_init(&em, out, 1000);
		assert_int_equal(probe_run(&env, &p, &em, &e), 0);
	}
	read_stream(out, &s);
	close(out);
	close(fds[0]);
	close(fds[1]);
	assert_int_equal(count_event(&s, "probe"), 1);
	assert_int_equal(rec_get_u64(&s.rec[s.n - 1], "passes", &v), 0);
	assert_int_equal(v, 1);
}

static void test_host_touch(void **state)
{
	char root[] = "/tmp/test_probe.XXXXXX", path[64];
	struct plan p;
	struct emitter em;
	struct stream s;
	struct err e = ERR_INIT;
	uint64_t v;
	size_t i;
	FILE *f;
	int out = memfd_create("out", 0), fds[2];
	const char *two = REC_PROBE_TOUCH REC_PROBE_TOUCH;

	(void)state;
	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/proc", root);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/proc/meminfo", root);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "MemTotal:         524288 kB\nMemFree:           74752 kB\n");	/* 73 MiB */
	fclose(f);
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(write(fds[1], two, strlen(two)), (ssize_t)strlen(two));
	{
		const struct probe_env env = { root, false, fds[0] };

		small_plan(&p, 3);
		emitter_init(&em, out, 1000);
		assert_int_equal(probe_run(&env, &p, &em, &e), 0);
	}
	read_stream(out, &s);
	close(out);
	close(fds[0]);
	close(fds[1]);
	unlink(path);
	snprintf(path, sizeof(path), "%s/proc", root);
	rmdir(path);
	rmdir(root);
	assert_int_equal(count_event(&s, "probe"), 3);	/* the touch ends no pass */
	assert_int_equal(count_event(&s, "probe_touch"), 1);	/* once, however often asked */
	for (i = 0; i < s.n; i++)
		if (rec_get(&s.rec[i], "event") && !strcmp(rec_get(&s.rec[i], "event"), "probe_touch"))
			break;
	assert_int_equal(rec_get_u64(&s.rec[i], "bytes", &v), 0);
	assert_int_equal(v, 8ull << 20);	/* 73 MiB less 64, down to whole 2M */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passes),
		cmocka_unit_test(test_no_plan),
		cmocka_unit_test(test_host_stop),
		cmocka_unit_test(test_host_touch),
	};

	return cmocka_run_group_tests_name("guest/probe", tests, NULL, NULL);
}
