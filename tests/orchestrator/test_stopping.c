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

static const struct stop_case cases[] = {
	{ "boots first", { 4, 3, 5, 30, 0 }, "host", 50, true, 2, 100, STOP_BOOTS },
	{ "no target after boots", { 4, 3, 0, 30, 0 }, "host", 50, true, 4, 100, STOP_FIXED },
	{ "target met", { 2, 3, 10, 30, 0 }, "host", 9.5, true, 2, 100, STOP_TARGET_MET },
	{ "target not met: more", { 2, 3, 10, 30, 0 }, "host", 12, true, 2, 100, STOP_MORE },
	{ "guest effects are targets too", { 2, 3, 10, 30, 0 }, "guest", 12, true, 2, 100, STOP_MORE },
	{ "interaction is not a target", { 2, 3, 10, 30, 0 }, "interaction", 40, true, 2, 100,
	  STOP_NO_EFFECT },
	{ "totals are not targets", { 2, 3, 10, 30, 0 }, "total", 40, true, 2, 100, STOP_NO_EFFECT },
	{ "max reps: 3 more would pass 9", { 2, 3, 10, 9, 0 }, "host", 12, true, 3, 100, STOP_MAX_REPS },
	{ "max reps: exactly reached allows the round", { 2, 3, 10, 9, 0 }, "host", 12, true, 2, 100,
	  STOP_MORE },
	{ "budget: another round would end past it", { 2, 3, 10, 30, 250000 }, "host", 12, true, 2, 200,
	  STOP_BUDGET },
	{ "budget: room for one more", { 2, 3, 10, 30, 320000 }, "host", 12, true, 2, 200, STOP_MORE },
	{ "nothing available: more, within the limits", { 2, 3, 10, 30, 0 }, "host", 12, false, 2, 100,
	  STOP_NO_EFFECT },
	{ "nothing available but max reps", { 2, 3, 10, 6, 0 }, "host", 12, false, 2, 100, STOP_MAX_REPS },
};

static void test_stop(void **state)
{
	const struct stop_case *c = *state;
	struct effects *fx = fx_with(c->side, c->half, c->available);
	double worst;
	enum stop_verdict v = stop_decide(fx, &c->p, c->rounds, c->elapsed_s, &worst);

	if (v != c->want)
		fail_msg("%s: verdict %d, want %d (worst %.2f)", c->name, v, c->want, worst);
	if (v == STOP_MORE || v == STOP_TARGET_MET)
		assert_true(fabs(worst - c->half) < 1e-9);
	free(fx);
}

int main(void)
{
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0])];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&tests[i], 0, sizeof(tests[i]));
		tests[i].name = cases[i].name;
		tests[i].test_func = test_stop;
		tests[i].initial_state = (void *)(uintptr_t)&cases[i];
	}
	return cmocka_run_group_tests_name("analysis/stopping", tests, NULL, NULL);
}
