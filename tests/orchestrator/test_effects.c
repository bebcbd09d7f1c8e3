/* tests for orchestrator/effects.c: the split recovers known effects from synthetic samples */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "orchestrator/effects.h"
#include "orchestrator/results.h"

static uint64_t rng = 0x243f6a8885a308d3ull;

static double gauss(void)
{
	double u1, u2;

	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	u1 = ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
	rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
	u2 = ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* a true model: times for (host on?, prefault mode, guest on?) */
struct model {
	double f00;		/* fault ns, all never */
	double host_pf;		/* host prefault saving, fraction of f00 (ondemand only) */
	double host_tlb_f;	/* host translation saving in the fault phase */
	double guest_pf;	/* guest prefault saving */
	double a00;		/* access ns, all never */
	double host_tlb, guest_tlb, inter;	/* fractions of a00 */
	double noise;		/* relative sd */
	int n;
};

/*
 * Plain (host-warm) cells: the host never faults in the measured window.
 * With cold, also the host-cold cells (variant "cold", fault metric only):
 * there, with allocation ondemand, host THP also saves host_pf of f00.
 */
static void fill_cells(struct results *r, const struct model *m, bool with_immediate, bool cold)
{
	static const char *const hs[] = { "never", "always" }, *const gs[] = { "never", "always" };
	static const char *const pfs[] = { "ondemand", "immediate" };
	int h, g, p, i, v;

	for (p = 0; p < (with_immediate ? 2 : 1); p++)
		for (h = 0; h < 2; h++)
			for (g = 0; g < 2; g++)
				for (v = 0; v < (cold ? 2 : 1); v++) {
					struct cell_key k = { "guest", hs[h], pfs[p], gs[g], "memset", v ? "cold" : NULL, NULL };
					struct cell *c = results_cell_key(r, &k, NULL);
					double hpf = v && p == 0 ? m->host_pf : 0;
					double f = m->f00 * (1 - h * (m->host_tlb_f + hpf) - g * m->guest_pf);
					double a = m->a00 * (1 - h * m->host_tlb - g * m->guest_tlb - h * g * m->inter);

					assert_non_null(c);
					for (i = 0; i < m->n; i++) {
						metric_add(cell_metric(c, "fault_ns_per_4k", NULL),
							   f * (1 + m->noise * gauss()));
						if (!v)
							metric_add(cell_metric(c, "access_ns", NULL),
								   a * (1 + m->noise * gauss()));
						metric_add(&c->host_cov, h ? 99 : 0);
						metric_add(&c->guest_cov, g ? 99 : 0);
						c->reps_ok++;
					}
				}
}

static void fill(struct results *r, const struct model *m, bool with_immediate)
{
	fill_cells(r, m, with_immediate, true);
}

static const struct effect none;

/* the effect, or an all-zero one (and a test failure) when it is missing */
static const struct effect *get(const struct effects *fx, const char *side, const char *comp)
{
	size_t i;

	for (i = 0; fx && i < fx->n; i++)
		if (!strcmp(fx->e[i].side, side) && !strcmp(fx->e[i].component, comp))
			return &fx->e[i];
	fail_msg("no effect %s/%s", side, comp);
	return &none;
}

static void expect(const struct effects *fx, const char *side, const char *comp, double truth_pct, bool sig)
{
	const struct effect *e = get(fx, side, comp);

	if (!e->available)
		fail_msg("%s/%s not available: %s", side, comp, e->note);
	if (!(e->ci95_low_pct <= truth_pct && truth_pct <= e->ci95_high_pct))
		fail_msg("%s/%s: truth %.2f%% outside [%.2f, %.2f] (estimate %.2f)", side, comp, truth_pct,
			 e->ci95_low_pct, e->ci95_high_pct, e->estimate_pct);
	if (e->significant != sig)
		fail_msg("%s/%s: significant=%d, want %d (estimate %.2f [%.2f, %.2f])", side, comp, e->significant,
			 sig, e->estimate_pct, e->ci95_low_pct, e->ci95_high_pct);
	assert_true(strcmp(e->workload, "memset") == 0);
}

static void test_recovers_known_effects(void **state)
{
	const struct model m = { 10000, 0.20, 0.05, 0.60, 500, 0.15, 0.25, 0.10, 0.01, 10 };
	struct results r;

	results_init(&r);
	fill(&r, &m, true);
	results_finish(&r, 90);
	assert_non_null(r.effects);
	expect(r.effects, "host", "prefault", 20.0, true);
	expect(r.effects, "host", "tlb", 15.0, true);
	expect(r.effects, "guest", "prefault", 60.0, true);
	expect(r.effects, "guest", "tlb", 25.0, true);
	/* interaction: (A10 + A01 - A00 - A11)/A00 = inter */
	expect(r.effects, "interaction", "tlb", 10.0, true);
	/* shares add up: host + guest + interaction = total on the access metric */
	{
		double sum = get(r.effects, "host", "tlb")->share_pct + get(r.effects, "guest", "tlb")->share_pct +
			     get(r.effects, "interaction", "tlb")->share_pct;

		assert_true(fabs(sum - 100.0) < 1e-6);
	}
	results_release(&r);
}

static void test_absent_effect_not_significant(void **state)
{
	/* host THP does nothing; guest THP does */
	const struct model m = { 10000, 0, 0, 0.5, 500, 0, 0.3, 0, 0.02, 8 };
	struct results r;

	results_init(&r);
	fill(&r, &m, true);
	results_finish(&r, 90);
	expect(r.effects, "host", "prefault", 0.0, false);
	expect(r.effects, "host", "tlb", 0.0, false);
	expect(r.effects, "interaction", "tlb", 0.0, false);
	expect(r.effects, "guest", "tlb", 30.0, true);
	results_release(&r);
}

/* one allocation mode: host prefault = host THP on host-cold minus on host-warm first touch */
static void test_host_prefault_cold_minus_warm(void **state)
{
	const struct model m = { 10000, 0.30, 0.05, 0.60, 500, 0.15, 0.25, 0.10, 0.01, 10 };
	struct results r;
	const struct effect *e;

	results_init(&r);
	fill(&r, &m, false);
	results_finish(&r, 90);
	expect(r.effects, "host", "prefault", 30.0, true);
	e = get(r.effects, "host", "prefault");
	assert_non_null(strstr(e->note, "host-warm"));
	/* its share is of the total on host-cold first touch: 30 / (30 + 5 + 60) */
	assert_true(fabs(e->share_pct - 30.0 / 95.0 * 100.0) < 5.0);
	results_release(&r);
}

static void test_unavailable_with_reason(void **state)
{
	const struct model m = { 10000, 0.2, 0, 0.5, 500, 0.1, 0.3, 0, 0.02, 5 };
	struct results r;
	const struct effect *e;
	struct cell *c;

	results_init(&r);
	fill_cells(&r, &m, false, false);	/* no immediate arm, no host-cold cells */
	/* make one cell invalid: host always without host huge pages */
	c = results_cell(&r, "guest", "always", "always", "memset", NULL);
	c->host_cov.n = 0;
	metric_add(&c->host_cov, 3);
	results_finish(&r, 90);
	e = get(r.effects, "host", "prefault");
	assert_false(e->available);
	assert_non_null(strstr(e->note, "--cold-reps"));
	e = get(r.effects, "interaction", "tlb");
	assert_false(e->available);
	assert_non_null(strstr(e->note, "invalid"));
	/* the effects not involving the invalid cell stay available */
	assert_true(get(r.effects, "guest", "tlb")->available);
	assert_true(get(r.effects, "host", "tlb")->available);
	results_release(&r);
}

static void test_contrast_and_mde(void **state)
{
	struct metric a = { .name = "x" }, b = { .name = "x" };
	struct contrast_term t[2] = { { &a, 1 }, { &b, -1 } };
	double est, lo, hi, df;

	metric_add(&a, 100), metric_add(&a, 102), metric_add(&a, 98);
	metric_add(&b, 90), metric_add(&b, 91), metric_add(&b, 89);
	summarize(a.samples, a.n, &a.s);
	summarize(b.samples, b.n, &b.s);
	assert_int_equal(contrast_pct(t, 2, a.s.mean, &est, &lo, &hi, &df), 0);
	assert_true(fabs(est - 10.0) < 1e-9);
	assert_true(lo < 10 && hi > 10 && lo > 0);
	/* Welch df for sd 2 (n=3) vs sd 1 (n=3): (4/3+1/3)^2 / ((4/3)^2/2 + (1/3)^2/2) */
	assert_true(fabs(df - (25.0 / 9) / (17.0 / 18)) < 1e-9);
	b.n = 1;
	b.s.n = 1;
	assert_int_not_equal(contrast_pct(t, 2, a.s.mean, &est, &lo, &hi, &df), 0);
	/* MDE shrinks with more repetitions and grows with noise */
	assert_true(mde_pct(2.0, 10) < mde_pct(2.0, 3));
	assert_true(mde_pct(4.0, 10) > mde_pct(2.0, 10));
	assert_true(isnan(mde_pct(2.0, 1)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recovers_known_effects),
		cmocka_unit_test(test_absent_effect_not_significant),
		cmocka_unit_test(test_unavailable_with_reason),
		cmocka_unit_test(test_host_prefault_cold_minus_warm),
		cmocka_unit_test(test_contrast_and_mde),
	};

	return cmocka_run_group_tests_name("orchestrator/effects", tests, NULL, NULL);
}
