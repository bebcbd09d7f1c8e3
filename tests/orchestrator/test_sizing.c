/* tests for orchestrator/analysis/sizing.c: the host-sizing summary computed from a synthetic results model */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/analysis/effects.h"
#include "orchestrator/analysis/sizing.h"

/* a guest cell of memset with 4 samples of each phase around the given means, 2 boots of 2 */

/* the split, as the run and the report commands attach it after the model's summaries */
static void attach(struct results *r)
{
	struct err e = ERR_INIT;

	if (effects_attach(r, &e))
		fail_msg("effects_attach: %s", e.msg);
}

static struct cell *mk(struct results *r, const char *hs, const char *host, const char *guest, double fault,
		       double access, double cov, const char *src)
{
	struct cell_key k = { "guest", host, "ondemand", guest, "memset", NULL, hs, NULL };
	struct cell *c = results_cell_key(r, &k, NULL);
	struct metric *f = cell_metric(c, "fault_ns_per_4k", NULL), *a = cell_metric(c, "access_ns", NULL);
	int i;

	assert_non_null(c);
	for (i = 0; i < 4; i++) {
		metric_add_boot(f, fault * (1 + 0.01 * (i - 1.5)), (unsigned)i / 2);
		metric_add_boot(a, access * (1 + 0.01 * (i - 1.5)), (unsigned)i / 2);
		metric_add_boot(&c->host_cov, cov, (unsigned)i / 2);
		/* the buffer's, as memset says */
		metric_add_boot(&c->guest_cov, strcmp(guest, "never") ? 99 : 0, (unsigned)i / 2);
		c->reps_ok++;
	}
	if (src)
		snprintf(c->host_cov_source, sizeof(c->host_cov_source), "%s", src);
	return c;
}

static void guest(struct results *r, const char *hs, const char *host, unsigned idx, double cov)
{
	struct guest_log *g = results_guest_add(r, NULL);
	struct guest_cellstat *cs;

	snprintf(g->host_state, sizeof(g->host_state), "%s", hs);
	snprintf(g->host_thp, sizeof(g->host_thp), "%s", host);
	snprintf(g->prefault, sizeof(g->prefault), "ondemand");
	g->index = idx;
	g->concurrency = 2;
	cs = guest_cellstat(g, "always", "memset");
	cs->cov_sum = cov * 2;
	cs->ncov = 2;
}

static void test_fresh_vs_fragmented(void **state)
{
	struct results r;
	struct sizing *s = malloc(sizeof(*s));
	size_t i;
	const struct sz_row *fresh = NULL, *frag = NULL;

	results_init(&r);
	r.settings.guests = 2;
	mk(&r, "fresh", "never", "never", 1000, 100, 0, NULL);
	mk(&r, "fresh", "always", "always", 500, 60, 99, NULL);
	mk(&r, "fragmented", "never", "never", 1000, 100, 0, NULL);
	mk(&r, "fragmented", "always", "always", 750, 80, 40, NULL);
	guest(&r, "fresh", "always", 0, 99);
	guest(&r, "fresh", "always", 1, 98);
	guest(&r, "fragmented", "always", 0, 45);
	guest(&r, "fragmented", "always", 1, 35);
	results_finish(&r, 90);
	attach(&r);
	assert_true(sizing_applies(&r));
	sizing_compute(&r, s);
	for (i = 0; i < s->nrows; i++) {
		if (!strcmp(s->rows[i].host_thp, "always") && !strcmp(s->rows[i].guest_thp, "always"))
			*(strcmp(s->rows[i].host_state, "fresh") ? &frag : &fresh) = &s->rows[i];
	}
	assert_non_null(fresh);
	assert_non_null(frag);
	/* the fragmented cell is valid though under --min-coverage: low coverage is its outcome */
	assert_true(fabs(fresh->fault.est - 50) < 0.5);
	assert_true(fabs(frag->fault.est - 25) < 0.5);
	assert_true(fabs(frag->fault_retained_pct - 50) < 1);
	assert_true(fabs(frag->access_retained_pct - 50) < 1);
	assert_true(fabs(frag->cov_pct - 40) < 1e-9);
	assert_string_equal(frag->per_guest, "g0 45.0%, g1 35.0%");
	assert_true(fabs(fresh->fault_retained_pct - 100) < 1e-9);	/* of itself */
	free(s);
	results_release(&r);
}

static void test_mthp_sizes(void **state)
{
	struct results r;
	struct sizing *s = malloc(sizeof(*s));

	results_init(&r);
	r.settings.guests = 1;
	mk(&r, "fresh", "never", "never", 1000, 100, 0, NULL);
	/* fault benefit grows then saturates at 64K; access benefit only at 2M */
	mk(&r, "fresh", "16K:always", "never", 800, 100, 95, "mthp_stats");
	mk(&r, "fresh", "64K:always", "never", 520, 100, 95, "mthp_stats");
	mk(&r, "fresh", "256K:always", "never", 500, 100, 95, "mthp_stats");
	mk(&r, "fresh", "2048K:always", "never", 500, 70, 99, NULL);
	results_finish(&r, 90);
	attach(&r);
	assert_true(sizing_applies(&r));
	sizing_compute(&r, s);
	assert_int_equal(s->nsizes, 4);
	assert_int_equal(s->sizes[0].kb, 16);
	assert_int_equal(s->sizes[3].kb, 2048);
	assert_string_equal(s->sizes[0].cov_source, "mthp_stats");
	assert_true(fabs(s->sizes[0].fault.est - 20) < 0.5);
	assert_int_equal(s->saturate_kb, 64);	/* 48% >= 0.9 x 50% */
	assert_int_equal(s->tlb_start_kb, 2048);
	free(s);
	results_release(&r);
}

static void test_not_applicable(void **state)
{
	struct results r;

	results_init(&r);
	r.settings.guests = 1;
	mk(&r, "fresh", "never", "never", 1000, 100, 0, NULL);
	mk(&r, "fresh", "always", "never", 500, 70, 99, NULL);
	results_finish(&r, 90);
	attach(&r);
	assert_false(sizing_applies(&r));
	results_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh_vs_fragmented),
		cmocka_unit_test(test_mthp_sizes),
		cmocka_unit_test(test_not_applicable),
	};

	return cmocka_run_group_tests_name("orchestrator/sizing", tests, NULL, NULL);
}
