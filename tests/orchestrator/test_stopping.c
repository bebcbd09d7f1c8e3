/* tests for orchestrator/analysis/stopping.c: every way the --target-ci rule goes on or stops */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stats.h"
#include "orchestrator/analysis/stopping.h"

#define BIG_DF 1e9

/*
 * A planted effect: its 95% half-width on the log scale is ln(1 + half/100)
 * at df degrees of freedom and boots boots, around an estimate of est_pct.
 */
static void plant(struct effect *e, const char *side, double est_pct, double half, double df, unsigned boots)
{
	double d = -log1p(-est_pct / 100), h = log1p(half / 100);

	memset(e, 0, sizeof(*e));
	snprintf(e->side, sizeof(e->side), "%s", side);
	snprintf(e->method, sizeof(e->method), "boots");
	e->available = true;
	e->df = df;
	e->boots_min = boots;
	e->log_est = d;
	e->log_se = h / t975(df);
	e->estimate_pct = effect_pct(d);
	e->ci95_low_pct = effect_pct(d - h);
	e->ci95_high_pct = effect_pct(d + h);
}

static struct effects *fx_with(const char *side, double half, bool available, unsigned boots)
{
	struct effects *fx = calloc(1, sizeof(*fx));

	assert_non_null(fx);
	plant(&fx->e[fx->n++], side, 20, half, BIG_DF, boots);
	fx->e[0].available = available;
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

/* { boots, reps, target_host, target_guest, max_reps, budget_ms }; the effect has `rounds` boots */
static const struct stop_case cases[] = {
	{ "boots first", { 4, 3, 5, 5, 150, 0 }, "host", 50, true, 2, 100, STOP_BOOTS },
	{ "a target runs at least 6 boots", { 4, 3, 10, 10, 150, 0 }, "host", 5, true, 5, 100, STOP_BOOTS },
	{ "--boots above the minimum first", { 8, 3, 10, 10, 150, 0 }, "host", 5, true, 7, 100, STOP_BOOTS },
	{ "no target after boots", { 4, 3, 0, 0, 30, 0 }, "host", 50, true, 4, 100, STOP_FIXED },
	{ "no target: --boots alone, below 6", { 2, 3, 0, 0, 30, 0 }, "host", 50, true, 2, 100, STOP_FIXED },
	{ "target met", { 2, 3, 10, 10, 150, 0 }, "host", 9.5, true, 6, 100, STOP_TARGET_MET },
	{ "target not met: more", { 2, 3, 10, 10, 150, 0 }, "host", 12, true, 6, 100, STOP_MORE },
	{ "guest effects are targets too", { 2, 3, 10, 10, 150, 0 }, "guest", 12, true, 6, 100, STOP_MORE },
	{ "guest effects against the guest target", { 2, 3, 15, 5, 150, 0 }, "guest", 6, true, 6, 100,
	  STOP_MORE },
	{ "guest target met", { 2, 3, 15, 5, 150, 0 }, "guest", 4.9, true, 6, 100, STOP_TARGET_MET },
	{ "host effects against the host target", { 2, 3, 15, 5, 150, 0 }, "host", 14, true, 6, 100,
	  STOP_TARGET_MET },
	{ "interaction is a host-side target", { 2, 3, 15, 5, 150, 0 }, "interaction", 16, true, 6, 100,
	  STOP_MORE },
	{ "totals are not targets", { 2, 3, 10, 10, 150, 0 }, "total", 40, true, 6, 100, STOP_NO_TARGETS },
	{ "a side without a target is none", { 2, 3, 10, 0, 150, 0 }, "guest", 40, true, 6, 100,
	  STOP_NO_TARGETS },
	{ "out of reach of max-reps: not chased", { 2, 3, 10, 10, 21, 0 }, "host", 12, true, 6, 100,
	  STOP_REACHABLE_MET },
	{ "within reach of max-reps: more", { 2, 3, 10, 10, 30, 0 }, "host", 12, true, 6, 100, STOP_MORE },
	{ "out of reach of the budget: not chased", { 2, 3, 10, 10, 150, 80000 }, "host", 12, true, 6, 60,
	  STOP_REACHABLE_MET },
	{ "within the budget: more", { 2, 3, 10, 10, 150, 100000 }, "host", 12, true, 6, 60, STOP_MORE },
	{ "nothing available: more, within the limits", { 2, 3, 10, 10, 150, 0 }, "host", 12, false, 6, 100,
	  STOP_NO_EFFECT },
	{ "nothing available but max reps", { 2, 3, 10, 10, 18, 0 }, "host", 12, false, 6, 100, STOP_MAX_REPS },
	{ "nothing available but the budget", { 2, 3, 10, 10, 150, 65000 }, "host", 12, false, 6, 60,
	  STOP_BUDGET },
};

static void test_stop(void **state)
{
	const struct stop_case *c = *state;
	struct effects *fx = fx_with(c->side, c->half, c->available, c->rounds);
	struct stop_gap gap;
	enum stop_verdict v = stop_decide(fx, &c->p, c->rounds, c->elapsed_s, &gap);

	if (v != c->want)
		fail_msg("%s: verdict %s, want %s (widest %.2f, need %u, allowed %u)", c->name, stop_verdict_name(v),
			 stop_verdict_name(c->want), gap.half, gap.need, gap.allowed);
	if (v == STOP_MORE || v == STOP_TARGET_MET) {
		assert_true(fabs(gap.half - c->half) < 1e-9);
		assert_int_equal(gap.effect, 0);
		assert_int_equal(gap.nfar, 0);
	}
	if (v == STOP_REACHABLE_MET) {
		assert_int_equal(gap.nfar, 1);
		assert_int_equal(gap.far[0].effect, 0);
		assert_true(gap.far[0].need > gap.allowed);
	}
	free(fx);
}

/* the gap is the effect furthest from its own side's target, not the widest */
static void test_gap_relative(void **state)
{
	struct effects *fx = fx_with("host", 14, true, 6);
	const struct stop_params p = { 2, 3, 15, 5, 150, 0 };
	struct stop_gap gap;

	(void)state;
	plant(&fx->e[fx->n++], "guest", 20, 6, BIG_DF, 6);	/* 6 over a target of 5 */
	assert_int_equal(stop_decide(fx, &p, 6, 100, &gap), STOP_MORE);
	assert_int_equal(gap.effect, 1);
	assert_true(fabs(gap.half - 6) < 1e-9);
	assert_true(fabs(gap.target - 5) < 1e-9);
	plant(&fx->e[1], "guest", 20, 4.5, BIG_DF, 6);		/* both met */
	assert_int_equal(stop_decide(fx, &p, 6, 100, &gap), STOP_TARGET_MET);
	assert_int_equal(gap.effect, 0);
	free(fx);
}

/*
 * Widths on the log scale: a -96% slowdown whose log half-width is 90% of
 * ln(1.15) meets a 15-point target although its interval reaches more than
 * 20 points below the estimate on the printed scale; one at +0% with a log half-width just over
 * ln(1.15) does not.
 */
static void test_log_scale(void **state)
{
	struct effects *fx = calloc(1, sizeof(*fx));
	const struct stop_params p = { 4, 3, 15, 15, 150, 0 };
	double lim = log1p(0.15);
	struct stop_gap gap;

	(void)state;
	assert_non_null(fx);
	plant(&fx->e[fx->n++], "host", -96, expm1(0.9 * lim) * 100, 12, 7);
	/* more than 15 points each side on the printed scale: judged in points it would not be met */
	assert_true(fx->e[0].estimate_pct - fx->e[0].ci95_low_pct > 20);
	assert_int_equal(stop_decide(fx, &p, 7, 100, &gap), STOP_TARGET_MET);
	assert_false(gap.at_minimum);
	plant(&fx->e[fx->n++], "host", 0, expm1(1.01 * lim) * 100, 12, 7);
	assert_true(fx->e[1].ci95_high_pct - fx->e[1].ci95_low_pct < 31);
	assert_int_equal(stop_decide(fx, &p, 7, 100, &gap), STOP_MORE);
	assert_int_equal(gap.effect, 1);
	free(fx);
}

/* met at the minimum of 6: the verdict says so */
static void test_at_minimum(void **state)
{
	struct effects *fx = fx_with("host", 9, true, 6);
	const struct stop_params p = { 4, 3, 10, 10, 150, 0 };
	struct stop_gap gap;

	(void)state;
	assert_int_equal(stop_min_rounds(&p), STOP_MIN_BOOTS);
	assert_int_equal(stop_decide(fx, &p, 6, 100, &gap), STOP_TARGET_MET);
	assert_true(gap.at_minimum);
	assert_int_equal(gap.minimum, 6);
	assert_int_equal(stop_decide(fx, &p, 7, 100, &gap), STOP_TARGET_MET);
	assert_false(gap.at_minimum);
	free(fx);
}

/* the projection: the fewest boots whose projected half-width is within the target, t quantile included */
struct need_case {
	const char *name;
	double half;		/* points now */
	double df;
	unsigned boots;
	double target;
};

static const struct need_case need_cases[] = {
	{ "met now: the boots it has", 10, 5, 6, 15 },
	{ "twice the target at 6 boots, df 5", 30, 5, 6, 15 },
	{ "the issue's run: 37 points at 27 boots", 37, 26, 27, 15 },
	{ "Welch df below the boots", 20, 7.3, 6, 15 },
	{ "just over at many df", 15.5, 1000, 40, 15 },
	{ "guest target of 5", 9, 5, 6, 5 },
};

static void test_need(void **state)
{
	const struct need_case *c = *state;
	struct effect e;
	double lim = log1p(c->target / 100);
	unsigned m;

	plant(&e, "host", 20, c->half, c->df, c->boots);
	m = stop_boots_needed(&e, c->target);
	assert_true(m >= c->boots && m <= STOP_BOOTS_CAP);
	/* independently: the half-width at m boots is within the target, at m - 1 it is not */
	if (m > c->boots) {
		double at_m = t975(c->df * (m - 1) / (c->boots - 1)) * e.log_se * sqrt((double)c->boots / m);
		double at_m1 = t975(c->df * (m - 2) / (c->boots - 1)) * e.log_se * sqrt((double)c->boots / (m - 1));

		if (!(at_m <= lim && at_m1 > lim))
			fail_msg("%s: %u boots: %.5f, %u: %.5f, limit %.5f", c->name, m, at_m, m - 1, at_m1, lim);
	} else {
		assert_true(t975(c->df) * e.log_se <= lim);
	}
	printf("%s: %u boots\n", c->name, m);
}

/* what cannot be projected is 0 (chased as before), what needs too many is past the cap */
static void test_need_edges(void **state)
{
	struct effect e;

	(void)state;
	plant(&e, "host", 20, 30, 5, 1);
	assert_int_equal(stop_boots_needed(&e, 15), 0);		/* one boot */
	plant(&e, "host", 20, 30, 5, 6);
	snprintf(e.method, sizeof(e.method), "one-boot");
	assert_int_equal(stop_boots_needed(&e, 15), 0);
	plant(&e, "host", 20, 30, 5, 6);
	e.available = false;
	assert_int_equal(stop_boots_needed(&e, 15), 0);
	plant(&e, "host", 20, 5000, 5, 6);
	assert_int_equal(stop_boots_needed(&e, 1), STOP_BOOTS_CAP + 1);
}

/* one effect out of reach is dropped and the other chased; the list names it with its need */
static void test_far_and_chased(void **state)
{
	struct effects *fx = calloc(1, sizeof(*fx));
	/* 30 rounds allowed: 300 s budget at 10 s a round */
	const struct stop_params p = { 4, 3, 15, 5, 300, 300000 };
	struct stop_gap gap;

	(void)state;
	assert_non_null(fx);
	plant(&fx->e[fx->n++], "host", -96, 50, 10, 6);	/* about 40 boots: out of reach */
	plant(&fx->e[fx->n++], "guest", 10, 6, 5, 6);	/* a few more boots */
	assert_int_equal(stop_decide(fx, &p, 6, 60, &gap), STOP_MORE);
	assert_int_equal(gap.allowed, 30);
	assert_int_equal(gap.nfar, 1);
	assert_int_equal(gap.far[0].effect, 0);
	assert_true(gap.far[0].need > 30);
	assert_int_equal(gap.effect, 1);
	assert_true(gap.need > 6 && gap.need <= 30);
	plant(&fx->e[1], "guest", 10, 4, 5, 7);
	assert_int_equal(stop_decide(fx, &p, 7, 70, &gap), STOP_REACHABLE_MET);
	assert_int_equal(gap.nfar, 1);
	assert_int_equal(gap.unavailable, 0);
	/* an effect not available (an invalid cell) is counted, not judged met */
	plant(&fx->e[fx->n++], "host", 10, 4, 5, 7);
	fx->e[2].available = false;
	assert_int_equal(stop_decide(fx, &p, 7, 70, &gap), STOP_REACHABLE_MET);
	assert_int_equal(gap.unavailable, 1);
	free(fx);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_gap_relative),
		cmocka_unit_test(test_log_scale),
		cmocka_unit_test(test_at_minimum),
		cmocka_unit_test(test_need_edges),
		cmocka_unit_test(test_far_and_chased),
	};
	const size_t nc = sizeof(cases) / sizeof(cases[0]), nn = sizeof(need_cases) / sizeof(need_cases[0]);
	const size_t nf = sizeof(fixed) / sizeof(fixed[0]);
	struct CMUnitTest tests[sizeof(cases) / sizeof(cases[0]) + sizeof(need_cases) / sizeof(need_cases[0]) +
			       sizeof(fixed) / sizeof(fixed[0])];
	size_t i;

	memset(tests, 0, sizeof(tests));
	for (i = 0; i < nc; i++) {
		tests[i].name = cases[i].name;
		tests[i].test_func = test_stop;
		tests[i].initial_state = (void *)(uintptr_t)&cases[i];
	}
	for (i = 0; i < nn; i++) {
		tests[nc + i].name = need_cases[i].name;
		tests[nc + i].test_func = test_need;
		tests[nc + i].initial_state = (void *)(uintptr_t)&need_cases[i];
	}
	for (i = 0; i < nf; i++)
		tests[nc + nn + i] = fixed[i];
	return cmocka_run_group_tests_name("analysis/stopping", tests, NULL, NULL);
}
