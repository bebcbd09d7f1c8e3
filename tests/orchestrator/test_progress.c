/* tests for orchestrator/run/progress.c: plain lines, the redrawn terminal line, ETA */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/run/progress.h"

static double fake_time;

static double fake_now(void)
{
	return fake_time;
}

static void start(struct progress *p, FILE *out, size_t total, bool tty)
{
	fake_time = 100;
	progress_init(p, out, total);
	p->now = fake_now;
	p->t0 = p->cell_t0 = fake_time;
	progress_set_tty(p, tty);
	p->width = 100;
}

static void test_duration(void **state)
{
	static const struct {
		double s;
		const char *want;
	} cases[] = {
		{ 0, "0s" }, { 42.4, "42s" }, { 59.6, "1m00s" }, { 185, "3m05s" }, { 3720, "1h02m" },
		{ -1, "?" }, { 1.0 / 0.0, "?" },
	};
	size_t i;
	char buf[16];

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		progress_fmt_duration(buf, sizeof(buf), cases[i].s);
		assert_string_equal(buf, cases[i].want);
	}
}

static void test_plain(void **state)
{
	struct progress p;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	start(&p, m, 3, false);
	progress_cell_start(&p, "never/never/memset");
	fake_time += 20;
	progress_tick(&p);	/* nothing on a log */
	progress_cell_done(&p, true, NULL);
	progress_cell_start(&p, "always/never/memset");
	fake_time += 40;
	progress_cell_done(&p, false, "guest timed out");
	progress_finish(&p);
	fclose(m);
	assert_string_equal(buf,
			    "thpeval: cell 1/3 never/never/memset done in 20s (elapsed 20s, ETA 40s)\n"
			    "thpeval: cell 2/3 always/never/memset failed after 40s: guest timed out (elapsed 1m00s, ETA 30s)\n"
			    "thpeval: 2/3 cells in 1m00s\n");
	assert_null(strchr(buf, '\r'));
	free(buf);
}

static void test_tty(void **state)
{
	struct progress p;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	start(&p, m, 4, true);
	progress_cell_start(&p, "never/never/memset");
	fflush(m);
	assert_string_equal(buf, "\r\033[Kthpeval: cells 0/4  running never/never/memset  elapsed 0s  ETA estimating");
	fake_time += 10;
	progress_cell_done(&p, true, NULL);
	progress_cell_start(&p, "never/always/memset");
	fake_time += 0.5;
	progress_tick(&p);	/* under a second since the last draw: nothing */
	fflush(m);
	{
		size_t before = len;

		fake_time += 1;
		progress_tick(&p);
		fflush(m);
		assert_true(len > before);
	}
	assert_non_null(strstr(buf, "\r\033[Kthpeval: cells 1/4  running never/always/memset  elapsed 12s  ETA 29s"));
	progress_cell_done(&p, false, "no samples");
	progress_finish(&p);
	fclose(m);
	assert_non_null(strstr(buf, "\r\033[Kthpeval: cell never/always/memset failed: no samples\n"));
	assert_non_null(strstr(buf, "\r\033[Kthpeval: 2/4 cells in 12s\n"));
	assert_null(strstr(buf, "\n\n"));
	free(buf);
}

/* a long cell name never wraps the terminal line (a wrapped line cannot be redrawn) */
static void test_tty_width(void **state)
{
	struct progress p;
	char *buf = NULL, *line;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	start(&p, m, 2, true);
	p.width = 40;
	progress_cell_start(&p, "always/always/a-workload-with-a-very-long-name:and-variant");
	fclose(m);
	line = strrchr(buf, 'K') + 1;
	assert_int_equal(strlen(line), 39);
	free(buf);
}

static void test_quiet(void **state)
{
	struct progress p;

	start(&p, NULL, 2, false);
	progress_cell_start(&p, "x");
	progress_cell_done(&p, true, NULL);
	progress_tick(&p);
	progress_finish(&p);
	assert_int_equal(p.done, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_tty),
		cmocka_unit_test(test_tty_width),
		cmocka_unit_test(test_quiet),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
