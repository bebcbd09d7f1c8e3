/* tests for orchestrator/analysis/stopping.c: every way the --target-ci rule goes on or stops */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/analysis/stopping.h"

static struct effects *fx_with(const char *side, double half, bool available)
{
	struct effects *fx = calloc(1, sizeof(*fx));
	struct effect *e;

	assert_non_null(fx);
	e = &fx->e[fx->n++];
	snprintf(e->side, sizeof(e->side), "%s", side);
	e->available = available;
	e->estimate_pct = 20;
	e->ci95_low_pct = 20 - half;
	e->ci95_high_pct = 20 + half;
	return fx;
}

struct stop_case {
	const char *name;
	struct stop_params p;
	const char *side;
	double half;
	bool available;
	unsigned rounds;
	double elapsed_s;
	enum stop_verdict want;
};

/* { boots, reps, target_host, target_guest, max_reps, budget_ms } */
static const struct stop_case cases[] = {
	{ "boots first", { 4, 3, 5, 5, 30, 0 }, "host", 50, true, 2, 100, STOP_BOOTS },
	{ "no target after boots", { 4, 3, 0, 0, 30, 0 }, "host", 50, true, 4, 100, STOP_FIXED },
	{ "target met", { 2, 3, 10, 10, 30, 0 }, "host", 9.5, true, 2, 100, STOP_TARGET_MET },
	{ "target not met: more", { 2, 3, 10, 10, 30, 0 }, "host", 12, true, 2, 100, STOP_MORE },
	{ "guest effects are targets too", { 2, 3, 10, 10, 30, 0 }, "guest", 12, true, 2, 100, STOP_MORE },
	{ "guest effects against the guest target", { 2, 3, 15, 5, 30, 0 }, "guest", 6, true, 2, 100,
	  STOP_MORE },
	{ "guest target met", { 2, 3, 15, 5, 30, 0 }, "guest", 4.9, true, 2, 100, STOP_TARGET_MET },
	{ "host effects against the host target", { 2, 3, 15, 5, 30, 0 }, "host", 14, true, 2, 100,
	  STOP_TARGET_MET },
	{ "interaction is a host-side target", { 2, 3, 15, 5, 30, 0 }, "interaction", 16, true, 2, 100,
	  STOP_MORE },
	{ "totals are not targets", { 2, 3, 10, 10, 30, 0 }, "total", 40, true, 2, 100, STOP_NO_TARGETS },
	{ "a side without a target is none", { 2, 3, 10, 0, 30, 0 }, "guest", 40, true, 2, 100,
	  STOP_NO_TARGETS },
	{ "max reps: 3 more would pass 9", { 2, 3, 10, 10, 9, 0 }, "host", 12, true, 3, 100, STOP_MAX_REPS },
	{ "max reps: exactly reached allows the round", { 2, 3, 10, 10, 9, 0 }, "host", 12, true, 2, 100,
	  STOP_MORE },
	{ "budget: another round would end past it", { 2, 3, 10, 10, 30, 250000 }, "host", 12, true, 2, 200,
	  STOP_BUDGET },
	{ "budget: room for one more", { 2, 3, 10, 10, 30, 320000 }, "host", 12, true, 2, 200, STOP_MORE },
	{ "nothing available: more, within the limits", { 2, 3, 10, 10, 30, 0 }, "host", 12, false, 2, 100,
	  STOP_NO_EFFECT },
	{ "nothing available but max reps", { 2, 3, 10, 10, 6, 0 }, "host", 12, false, 2, 100, STOP_MAX_REPS },
};

static void test_stop(void **state)
{
	const struct stop_case *c = *state;
	struct effects *fx = fx_with(c->side, c->half, c->available);
	struct stop_gap gap;
	enum stop_verdict v = stop_decide(fx, &c->p, c->rounds, c->elapsed_s, &gap);

	if (v != c->want)
		fail_msg("%s: verdict %s, want %s (widest %.2f)", c->name, stop_verdict_name(v),
			 stop_verdict_name(c->want), gap.half);
	if (v == STOP_MORE || v == STOP_TARGET_MET) {
		assert_true(fabs(gap.half - c->half) < 1e-9);
		assert_int_equal(gap.effect, 0);
	}
	free(fx);
}

/* the gap is the effect furthest from its own side's target, not the widest */
static void test_gap_relative(void **state)
{
	struct effects *fx = fx_with("host", 14, true);
	const struct stop_params p = { 2, 3, 15, 5, 30, 0 };
	struct effect *g = &fx->e[fx->n++];
	struct stop_gap gap;

	(void)state;
	snprintf(g->side, sizeof(g->side), "guest");
	g->available = true;
	g->ci95_low_pct = 14;
	g->ci95_high_pct = 26;	/* half-width 6 over a target of 5 */
	assert_int_equal(stop_decide(fx, &p, 2, 100, &gap), STOP_MORE);
	assert_int_equal(gap.effect, 1);
	assert_true(fabs(gap.half - 6) < 1e-9);
	assert_true(fabs(gap.target - 5) < 1e-9);
	g->ci95_high_pct = 23;	/* 4.5: both met */
	assert_int_equal(stop_decide(fx, &p, 2, 100, &gap), STOP_TARGET_MET);
	assert_int_equal(gap.effect, 0);
	free(fx);
}

int main(void)
{
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + 1];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&tests[i], 0, sizeof(tests[i]));
		tests[i].name = cases[i].name;
		tests[i].test_func = test_stop;
		tests[i].initial_state = (void *)(uintptr_t)&cases[i];
	}
	memset(&tests[i], 0, sizeof(tests[i]));
	tests[i].name = "gap is relative to each side's target";
	tests[i].test_func = test_gap_relative;
	return cmocka_run_group_tests_name("analysis/stopping", tests, NULL, NULL);
}
