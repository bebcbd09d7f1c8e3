/*
 * tests for the free page reporting axis: --balloon's list (run/balloon.c)
 * and the reporting-vs-none rows (analysis/balloon.c): each arm's re-fault
 * time over boots, the windows' means, the ratio and its interval
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/stats.h"
#include "orchestrator/analysis/balloon.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/model/balloon.h"
#include "orchestrator/run/abaxis.h"
#include "orchestrator/run/balloon.h"
#include "orchestrator/run/internal.h"

/* a run configuration as the command line leaves it with no option given */
static void config_init(struct run_config *c)
{
	struct err e = ERR_INIT;

	if (run_config_init(c, &e))
		fail_msg("run_config_init: %s", e.msg);
}

static void test_parse(void **state)
{
	static const struct {
		const char *arg;
		int rc;
		size_t n;
		enum balloon_arm first;
		bool planned;
	} cases[] = {
		{ "none", 0, 1, BALLOON_NONE, false },
		{ "reporting", 0, 1, BALLOON_REPORTING, true },
		{ "none,reporting", 0, 2, BALLOON_NONE, true },
		{ "reporting,none,reporting", 0, 2, BALLOON_REPORTING, true },
		{ "none,none", 0, 1, BALLOON_NONE, false },
		{ "virtio", -EINVAL, 0, 0, false },
		{ "none,", -EINVAL, 0, 0, false },
		{ "", -EINVAL, 0, 0, false },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run_config *c = calloc(1, sizeof(*c));
		struct err e = ERR_INIT;

		assert_non_null(c);
		config_init(c);
		assert_false(balloon_planned(c));	/* the default: no axis */
		if (balloon_parse(c, cases[i].arg, &e) != cases[i].rc)
			fail_msg("'%s': rc %d (%s)", cases[i].arg, e.code, e.msg);
		if (cases[i].rc) {
			assert_non_null(strstr(e.msg, "none"));	/* says what to give */
		} else {
			assert_int_equal(c->n_balloon, cases[i].n);
			assert_int_equal(c->balloon[0], cases[i].first);
			assert_int_equal(balloon_planned(c), cases[i].planned);
		}
		free(c);
	}
}

/* a balloon is the guests': refused for the bare host alone */
static void test_target_host(void **state)
{
	struct run_config *c = calloc(1, sizeof(*c));
	struct err e = ERR_INIT;

	(void)state;
	assert_non_null(c);
	config_init(c);
	c->boots_set = true;
	c->target_guest = false;
	c->target_host = true;
	assert_int_equal(run_config_check(c, &e), 0);
	assert_int_equal(balloon_parse(c, "none,reporting", &e), 0);
	assert_int_equal(run_config_check(c, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--balloon gives guests a balloon: drop it with --target=host"));
	free(c);
}

/* a fake QEMU: a script that prints what it is given as its help */
static void fake_qemu(const char *path, const char *help)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "#!/bin/sh\necho '%s'\n", help);
	fclose(f);
	assert_int_equal(chmod(path, 0755), 0);
}

/* refused before the first boot: no memset, an old libvirt, a QEMU without the property */
static void test_check(void **state)
{
	static const struct {
		const char *name, *wl, *libvirt, *help;
		int rc;
		const char *msg;
	} cases[] = {
		{ "ok", "memset", "9.0.0", "  free-page-reporting=<bool> - on/off (default: false)", 0, NULL },
		{ "no memset", "tlb", "9.0.0", "free-page-reporting=<bool>", -EINVAL, "add memset to --workloads" },
		{ "old libvirt", "memset", "6.8.0", "free-page-reporting=<bool>", -EOPNOTSUPP,
		  "libvirt 6.8.0 has no free page reporting" },
		{ "old qemu", "memset", "9.0.0", "  free-page-hint=<bool> - on/off", -EOPNOTSUPP,
		  "lacks the free-page-reporting property" },
	};
	char dir[] = "/tmp/thpeval-test-balloon-XXXXXX", qemu[64];
	size_t i;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(qemu, sizeof(qemu), "%s/qemu", dir);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct run_config *c = calloc(1, sizeof(*c));
		struct err e = ERR_INIT;
		int r;

		assert_non_null(c);
		config_init(c);
		fake_qemu(qemu, cases[i].help);
		assert_int_equal(ab_emulator_parse(c, qemu, &e), 0);
		assert_int_equal(balloon_parse(c, "none,reporting", &e), 0);
		snprintf(c->wl[0], sizeof(c->wl[0]), "%s", cases[i].wl);
		c->n_wl = 1;
		r = balloon_check(c, NULL, cases[i].libvirt, &e);
		if (r != cases[i].rc || (cases[i].msg && !strstr(e.msg, cases[i].msg)))
			fail_msg("%s: rc %d, '%s'", cases[i].name, r, e.msg);
		free(c);
	}
	unlink(qemu);
	rmdir(dir);
}

/* one arm's cell and windows: refault per boot, and a window per boot */
static void add_arm(struct results *r, const char *arm, const double *refault, size_t nb, unsigned first_boot,
		    unsigned long long after_free_kb)
{
	struct cell_key k = { "guest", "always", "ondemand", "never", "memset", NULL, NULL, arm };
	struct cell *c = results_cell_key(r, &k, NULL);
	size_t i;

	assert_non_null(c);
	for (i = 0; i < nb; i++) {
		struct balloon_log *b = results_balloon_add(r, NULL);

		/* two repetitions a boot, the same value: the boot's mean is it */
		metric_add_boot(cell_metric(c, "refault_ns_per_4k", NULL), refault[i], first_boot + (unsigned)i);
		metric_add_boot(cell_metric(c, "refault_ns_per_4k", NULL), refault[i], first_boot + (unsigned)i);
		assert_non_null(b);
		snprintf(b->balloon, sizeof(b->balloon), "%s", arm);
		snprintf(b->host_thp, sizeof(b->host_thp), "always");
		snprintf(b->prefault, sizeof(b->prefault), "ondemand");
		snprintf(b->guest_thp, sizeof(b->guest_thp), "never");
		b->freed_kb = 131072;
		b->rss_before_kb = 600000;
		b->rss_after_free_kb = after_free_kb;
		b->rss_after_retouch_kb = 600000;
		b->rss_drop_kb = 600000.0 - (double)after_free_kb;
		b->drop_pct_of_freed = b->rss_drop_kb / 131072.0 * 100;
	}
	/* a failed window counts for nothing */
	{
		struct balloon_log *b = results_balloon_add(r, NULL);

		assert_non_null(b);
		snprintf(b->balloon, sizeof(b->balloon), "%s", arm);
		snprintf(b->host_thp, sizeof(b->host_thp), "always");
		snprintf(b->prefault, sizeof(b->prefault), "ondemand");
		snprintf(b->guest_thp, sizeof(b->guest_thp), "never");
		snprintf(b->error, sizeof(b->error), "process 1 is gone");
	}
}

static void test_rows(void **state)
{
	static const double none[3] = { 1000, 1100, 900 }, rep[3] = { 3000, 3300, 2700 };
	struct results *r = calloc(1, sizeof(*r));
	struct balloon_row rows[4];
	double lm0 = 0, lm1 = 0, ss0 = 0, ss1 = 0, d, v, h;
	size_t i;

	(void)state;
	assert_non_null(r);
	results_init(r);
	assert_int_equal(balloon_rows(r, rows, 4), 0);	/* no axis */
	snprintf(r->settings.balloon_list, sizeof(r->settings.balloon_list), "none,reporting");
	add_arm(r, "none", none, 3, 0, 600000);
	add_arm(r, "reporting", rep, 3, 3, 600000 - 131072);
	assert_int_equal(balloon_rows(r, rows, 4), 1);
	assert_string_equal(rows[0].host_thp, "always");
	assert_string_equal(rows[0].host_state, "fresh");
	assert_true(rows[0].arm[0].have && rows[0].arm[1].have);
	assert_int_equal(rows[0].arm[0].boots, 3);
	assert_int_equal(rows[0].arm[0].windows, 3);
	assert_int_equal(rows[0].arm[0].half_drops, 0);
	assert_int_equal(rows[0].arm[1].half_drops, 3);
	assert_true(fabs(rows[0].arm[1].drop_pct - 100) < 1e-9);
	assert_true(fabs(rows[0].arm[1].drop_mib - 128) < 1e-9);
	/* the reference: Welch on the boots' log means */
	for (i = 0; i < 3; i++)
		lm0 += log(none[i]) / 3, lm1 += log(rep[i]) / 3;
	for (i = 0; i < 3; i++)
		ss0 += (log(none[i]) - lm0) * (log(none[i]) - lm0), ss1 += (log(rep[i]) - lm1) * (log(rep[i]) - lm1);
	assert_true(fabs(rows[0].arm[0].refault_gm - exp(lm0)) < 1e-6);
	h = t975(2) * sqrt(ss0 / 2 / 3);
	assert_true(fabs(rows[0].arm[0].refault_lo - exp(lm0 - h)) < 1e-6);
	d = lm1 - lm0;
	v = ss0 / 6 + ss1 / 6;
	assert_true(rows[0].have_effect);
	assert_true(fabs(rows[0].ratio - exp(d)) < 1e-9);
	assert_true(fabs(rows[0].ratio - 3) < 0.01);
	/* equal variances on the log scale: Welch's df is the pooled 4 */
	assert_true(fabs(rows[0].df - 4) < 1e-6);
	h = t975(4) * sqrt(v);
	assert_true(fabs(rows[0].ratio_lo - exp(d - h)) < 1e-9);
	assert_true(fabs(rows[0].ratio_hi - exp(d + h)) < 1e-9);
	results_release(r);
	free(r);
}

/* one boot an arm: each arm's value, no interval, and the note says why */
static void test_one_boot(void **state)
{
	static const double one[1] = { 1000 }, two[1] = { 2000 };
	struct results *r = calloc(1, sizeof(*r));
	struct balloon_row rows[2];

	(void)state;
	assert_non_null(r);
	results_init(r);
	snprintf(r->settings.balloon_list, sizeof(r->settings.balloon_list), "none,reporting");
	add_arm(r, "none", one, 1, 0, 600000);
	add_arm(r, "reporting", two, 1, 1, 500000);
	assert_int_equal(balloon_rows(r, rows, 2), 1);
	assert_true(fabs(rows[0].arm[1].refault_gm - 2000) < 1e-6);
	assert_true(isnan(rows[0].arm[1].refault_lo));
	assert_false(rows[0].have_effect);
	assert_non_null(strstr(rows[0].note, "needs 2 or more per arm"));
	results_release(r);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_target_host),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_one_boot),
	};

	return cmocka_run_group_tests_name("orchestrator/balloon", tests, NULL, NULL);
}
