/*
 * tests for orchestrator/analysis/effects.c and orchestrator/analysis/boots.c: the
 * split recovers known multiplicative effects from synthetic samples with a
 * boot-to-boot random effect, its intervals cover the truth at the nominal
 * rate, host-side effects replicate over boots (never over repetitions), and
 * the model is independent of the code's: times are products of factors and
 * each boot draws its own level.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stats.h"
#include "orchestrator/analysis/boots.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/model/results.h"
#include "tests/orchestrator/sim.h"


/* the split, as the run and the report commands attach it after the model's summaries */
static void attach(struct results *r)
{
	struct err e = ERR_INIT;

	if (effects_attach(r, &e))
		fail_msg("effects_attach: %s", e.msg);
}

static uint64_t rng = 0x243f6a8885a308d3ull;

static double gauss(void)
{
	return sim_gauss(&rng);
}

/*
 * The truth, as time ratios (on / off): a host-warm time is base * host *
 * guest * inter (inter only where both are on); host-cold first touch with
 * allocation ondemand also pays host_pf_cold (host never) or host_pf_cold *
 * host_pf (host on). Each boot multiplies every time in it by its own
 * exp(boot_sd * N(0,1)), each repetition by exp(noise * N(0,1)).
 */
struct model {
	double f00, a00;		/* fault ns/4K and access ns, all never, host-warm */
	double host_f, guest_f;		/* fault phase ratios (host: on host-warm memory) */
	double host_pf;			/* extra ratio host THP gives on host-cold first touch */
	double host_a, guest_a, inter_a;	/* access phase ratios */
	double boot_sd, noise;
	int boots, reps;
	double round_sd;		/* each round's shared level (every host setting boots once a round) */
	bool no_rounds;			/* the results name no round (a file from before rounds were kept) */
};

static unsigned next_boot;

static void fill_cells(struct results *r, const struct model *m, bool with_immediate, bool cold)
{
	static const char *const hs[] = { "never", "always" }, *const gs[] = { "never", "always" };
	static const char *const pfs[] = { "ondemand", "immediate" };
	double round_level[64];
	int h, g, p, i, v, b;

	assert_true(m->boots <= 64);
	for (b = 0; b < m->boots; b++)
		round_level[b] = exp(m->round_sd * gauss());
	for (p = 0; p < (with_immediate ? 2 : 1); p++)
		for (h = 0; h < 2; h++)
			for (b = 0; b < m->boots; b++) {
				unsigned boot = next_boot++;
				double level = exp(m->boot_sd * gauss()) * round_level[b];
				struct guest_log *gl = m->no_rounds ? NULL : results_guest_add(r, NULL);

				/* the boot's guest: metric.boot indexes results.guests */
				if (gl) {
					assert_int_equal(r->nguests, next_boot);
					gl->round = (unsigned)b;
					snprintf(gl->host_thp, sizeof(gl->host_thp), "%s", hs[h]);
					snprintf(gl->prefault, sizeof(gl->prefault), "%s", pfs[p]);
				}

				for (g = 0; g < 2; g++)
					for (v = 0; v < (cold ? 2 : 1); v++) {
						struct cell_key k = { "guest", hs[h], pfs[p], gs[g], "memset",
								      v ? "cold" : NULL, NULL, NULL };
						struct cell *c = results_cell_key(r, &k, NULL);
						double f = m->f00 * (h ? m->host_f : 1) * (g ? m->guest_f : 1);
						double a = m->a00 * (h ? m->host_a : 1) * (g ? m->guest_a : 1) *
							   (h && g ? m->inter_a : 1);

						if (v && p == 0)	/* host-cold, ondemand: the host faults too */
							f *= 1.5 * (h ? m->host_pf : 1);
						assert_non_null(c);
						for (i = 0; i < m->reps; i++) {
							metric_add_boot(cell_metric(c, "fault_ns_per_4k", NULL),
									f * level * exp(m->noise * gauss()), boot);
							if (!v)
								metric_add_boot(cell_metric(c, "access_ns", NULL),
										a * level * exp(m->noise * gauss()),
										boot);
							metric_add_boot(&c->host_cov, h ? 99 : 0, boot);
							metric_add_boot(&c->guest_cov, g ? 99 : 0, boot);
							c->reps_ok++;
						}
					}
			}
}

static const struct effect none;

/* the effect (at_guest "" = any), or an all-zero one (and a test failure) when it is missing */
static const struct effect *get_at(const struct effects *fx, const char *side, const char *comp, const char *at)
{
	size_t i;

	for (i = 0; fx && i < fx->n; i++)
		if (!strcmp(fx->e[i].side, side) && !strcmp(fx->e[i].component, comp) &&
		    (!at || !strcmp(fx->e[i].at_guest, at)))
			return &fx->e[i];
	fail_msg("no effect %s/%s", side, comp);
	return &none;
}

static const struct effect *get(const struct effects *fx, const char *side, const char *comp)
{
	return get_at(fx, side, comp, NULL);
}

/* the percentage of time saved for a true ratio */
static double saved(double ratio)
{
	return (1 - ratio) * 100.0;
}

static bool covers(const struct effect *e, double truth_pct)
{
	return e->available && e->ci95_low_pct <= truth_pct && truth_pct <= e->ci95_high_pct;
}

/*
 * One draw: the truth within the interval widened to twice its half-width
 * (a 95% interval misses 1 time in 20 by design; the coverage simulations
 * below hold the nominal rate), and significance as stated.
 */
static void expect(const struct effect *e, double truth_pct, bool sig)
{
	double lo, hi;

	if (!e->available)
		fail_msg("%s/%s not available: %s", e->side, e->component, e->note);
	lo = e->estimate_pct - 2 * (e->estimate_pct - e->ci95_low_pct);
	hi = e->estimate_pct + 2 * (e->ci95_high_pct - e->estimate_pct);
	if (!(lo <= truth_pct && truth_pct <= hi))
		fail_msg("%s/%s: truth %.2f%% far outside [%.2f, %.2f] (estimate %.2f)", e->side, e->component,
			 truth_pct, e->ci95_low_pct, e->ci95_high_pct, e->estimate_pct);
	if (e->significant != sig)
		fail_msg("%s/%s: significant=%d, want %d (estimate %.2f [%.2f, %.2f])", e->side, e->component,
			 e->significant, sig, e->estimate_pct, e->ci95_low_pct, e->ci95_high_pct);
	assert_string_equal(e->workload, "memset");
}

static void run_model(struct results *r, const struct model *m, bool with_immediate, bool cold)
{
	results_init(r);
	next_boot = 0;
	fill_cells(r, m, with_immediate, cold);
	results_finish(r, 90);
	attach(r);
	assert_non_null(r->effects);
}

static void test_effect_pct(void **state)
{
	(void)state;
	assert_true(fabs(effect_pct(log(1 / 0.7)) - 30.0) < 1e-9);
	assert_true(fabs(effect_pct(0)) < 1e-12);
	assert_true(fabs(effect_pct(log(2.0)) - 50.0) < 1e-9);
	assert_true(fabs(effect_pct(-log(2.0)) + 100.0) < 1e-9);	/* twice as slow: -100% */
}

static void test_recovers_known_effects(void **state)
{
	const struct model m = { 10000, 500, 0.95, 0.40, 0.7, 0.85, 0.75, 0.9, 0.02, 0.01, 6, 3, 0, false };
	struct results r;

	(void)state;
	run_model(&r, &m, false, true);
	expect(get_at(r.effects, "host", "prefault", "never"), saved(0.7), true);
	expect(get_at(r.effects, "host", "prefault", "always"), saved(0.7), true);
	expect(get(r.effects, "host", "tlb"), saved(0.85), true);
	expect(get(r.effects, "host", "warm"), saved(0.95), true);
	expect(get(r.effects, "guest", "prefault"), saved(0.40), true);
	expect(get(r.effects, "guest", "tlb"), saved(0.75), true);
	expect(get(r.effects, "interaction", "tlb"), saved(0.9), true);
	expect(get(r.effects, "interaction", "prefault"), 0.0, false);
	expect(get(r.effects, "total", "tlb"), saved(0.85 * 0.75 * 0.9), true);
	assert_string_equal(get(r.effects, "host", "tlb")->method, "boots");
	assert_int_equal(get(r.effects, "host", "tlb")->boots_min, 6);
	/* one table adds up: host + guest + interaction = total, on the log scale */
	{
		const struct effect *h = get(r.effects, "host", "tlb"), *g = get(r.effects, "guest", "tlb");
		const struct effect *i = get(r.effects, "interaction", "tlb"), *t = get(r.effects, "total", "tlb");

		const struct effect *ip = get(r.effects, "interaction", "prefault");

		assert_true(fabs(h->log_est + g->log_est + i->log_est - t->log_est) < 1e-9);
		/* shares on the printed scale: each part's % of time saved over the total's */
		assert_true(fabs(h->share_pct - h->estimate_pct / t->estimate_pct * 100) < 1e-9);
		assert_true(fabs(g->share_pct - g->estimate_pct / t->estimate_pct * 100) < 1e-9);
		assert_true(fabs(i->share_pct - i->estimate_pct / t->estimate_pct * 100) < 1e-9);
		assert_true(isnan(t->share_pct));
		/* a part that is not significant has no share */
		assert_false(ip->significant);
		assert_true(isnan(ip->share_pct));
	}
	results_release(&r);
}

/* independent multiplicative savings (30% and 30%): the interaction holds 0 */
static void test_independent_savings_no_interaction(void **state)
{
	const struct model m = { 10000, 500, 1, 0.7, 1, 0.7, 0.7, 1, 0.03, 0.01, 5, 3, 0, false };
	struct results r;
	const struct effect *i;

	(void)state;
	run_model(&r, &m, false, false);
	i = get(r.effects, "interaction", "tlb");
	expect(i, 0.0, false);
	expect(get(r.effects, "total", "tlb"), saved(0.49), true);
	printf("30%% + 30%%: total %.1f%% [%.1f, %.1f], interaction %.2f%% [%.2f, %.2f]\n",
	       get(r.effects, "total", "tlb")->estimate_pct, get(r.effects, "total", "tlb")->ci95_low_pct,
	       get(r.effects, "total", "tlb")->ci95_high_pct, i->estimate_pct, i->ci95_low_pct,
	       i->ci95_high_pct);
	results_release(&r);
}

/*
 * Boots, not repetitions, are the samples of a host effect: with a large
 * boot-to-boot spread and many quiet repetitions the interval must still
 * cover the truth at the nominal rate (repetition-level intervals would be
 * far too narrow: they covered about 30% of the time here).
 */
static void test_host_effect_replicates_over_boots(void **state)
{
	const struct model m = { 10000, 500, 1, 0.6, 1, 0.8, 0.7, 1, 0.15, 0.01, 5, 20, 0, false };
	int trial, hit = 0, trials = 200;

	(void)state;
	for (trial = 0; trial < trials; trial++) {
		struct results r;

		run_model(&r, &m, false, false);
		hit += covers(get(r.effects, "host", "tlb"), saved(0.8));
		results_release(&r);
	}
	printf("host tlb, boot sd 15%%, rep sd 1%%, 5 boots x 20 reps: coverage %d/%d\n", hit, trials);
	assert_true(hit >= trials * 92 / 100);
}

/*
 * Coverage at nominal 95%: 1000 trials at n=5 boots per host setting, true
 * ratios from 0.5 to 2 for the host effects (host TLB and, on host-cold
 * first touch, host prefault), per ratio at least 94% for every effect.
 */
static void test_coverage_simulation(void **state)
{
	static const double ratios[] = { 0.5, 0.8, 1.0, 1.25, 2.0 };
	size_t k;

	(void)state;
	for (k = 0; k < sizeof(ratios) / sizeof(ratios[0]); k++) {
		/* Welch over boots: the results name no rounds (test_round_coverage has them) */
		struct model m = { 10000, 500, 1, 0.6, 0.8, 1, 0.7, 1, 0.10, 0.02, 5, 3, 0, true };
		int trial, hit_h = 0, hit_g = 0, hit_i = 0, hit_p = 0, trials = 1000;

		m.host_a = ratios[k];
		m.host_pf = 1 / ratios[k];
		for (trial = 0; trial < trials; trial++) {
			struct results r;

			run_model(&r, &m, false, true);
			hit_h += covers(get(r.effects, "host", "tlb"), saved(ratios[k]));
			hit_g += covers(get(r.effects, "guest", "tlb"), saved(0.7));
			hit_i += covers(get(r.effects, "interaction", "tlb"), 0.0);
			hit_p += covers(get_at(r.effects, "host", "prefault", "never"), saved(1 / ratios[k]));
			results_release(&r);
		}
		printf("ratio %.2f: coverage host tlb %.1f%%, host prefault %.1f%%, guest %.1f%%, "
		       "interaction %.1f%% (%d trials)\n", ratios[k], hit_h * 100.0 / trials,
		       hit_p * 100.0 / trials, hit_g * 100.0 / trials, hit_i * 100.0 / trials, trials);
		assert_true(hit_h >= trials * 94 / 100);
		assert_true(hit_p >= trials * 94 / 100);
		assert_true(hit_g >= trials * 94 / 100);
		assert_true(hit_i >= trials * 94 / 100);
	}
}

/* the blocked interval's half-width against the unpaired one's, the t quantile of the fewer df allowed */
static void check_not_wider(const struct effect *e)
{
	double hb = t975(e->df) * e->log_se, hu = t975(e->df_unpaired) * e->log_se_unpaired;

	if (!e->available)
		fail_msg("%s/%s not available: %s", e->side, e->component, e->note);
	if (hb > hu * t975(e->df) / t975(e->df_unpaired) * (1 + 1e-9))
		fail_msg("%s/%s: blocked half-width %.5f wider than unpaired %.5f beyond the df cost (%s, corr %.3f)",
			 e->side, e->component, hb, hu, e->round_estimator, e->round_corr);
}

/*
 * Rounds as blocks at the minimum of 6 boots: 1000 trials with no round
 * effect and with one of the audited size (round correlation about 0.7 for
 * access and fault times): every host-side interval covers the truth at
 * least 93% of the time and is never wider than the unpaired one beyond the
 * df it gives up; with correlated rounds it is narrower on average.
 */
static void test_round_coverage(void **state)
{
	/* { round sd, boot sd }: total boot-to-boot spread alike, correlation 0 and ~0.72 */
	static const double sds[][2] = { { 0, 0.105 }, { 0.09, 0.055 } };
	size_t k;

	(void)state;
	for (k = 0; k < 2; k++) {
		struct model m = { 10000, 500, 1, 0.6, 0.8, 1.5, 0.7, 1, sds[k][1], 0.02, 6, 3, sds[k][0], false };
		int trial, hit_h = 0, hit_g = 0, hit_i = 0, hit_p = 0, hit_w = 0, paired = 0, trials = 1000;
		double ratio = 0, corr = 0;

		for (trial = 0; trial < trials; trial++) {
			struct results r;
			const struct effect *h, *i, *p, *w;

			run_model(&r, &m, false, true);
			h = get(r.effects, "host", "tlb");
			i = get(r.effects, "interaction", "tlb");
			p = get_at(r.effects, "host", "prefault", "never");
			w = get(r.effects, "host", "warm");
			hit_h += covers(h, saved(1.5));
			hit_g += covers(get(r.effects, "guest", "tlb"), saved(0.7));
			hit_i += covers(i, 0.0);
			hit_p += covers(p, saved(0.8));
			hit_w += covers(w, saved(1));
			check_not_wider(h);
			check_not_wider(i);
			check_not_wider(p);
			check_not_wider(w);
			paired += !strcmp(h->round_estimator, "paired by round");
			ratio += h->log_se / h->log_se_unpaired;
			corr += isfinite(h->round_corr) ? h->round_corr : 0;
			results_release(&r);
		}
		printf("round sd %.3f, boot sd %.3f, 6 boots: coverage host tlb %.1f%%, host warm %.1f%%, "
		       "host prefault %.1f%%, guest %.1f%%, interaction %.1f%%; host tlb paired in %d, mean round "
		       "corr %.2f, se blocked/unpaired %.2f (%d trials)\n", sds[k][0], sds[k][1],
		       hit_h * 100.0 / trials, hit_w * 100.0 / trials, hit_p * 100.0 / trials, hit_g * 100.0 / trials,
		       hit_i * 100.0 / trials, paired, corr / trials, ratio / trials, trials);
		assert_true(hit_h >= trials * 93 / 100);
		assert_true(hit_w >= trials * 93 / 100);
		assert_true(hit_p >= trials * 93 / 100);
		assert_true(hit_g >= trials * 93 / 100);
		assert_true(hit_i >= trials * 93 / 100);
		if (k == 1)	/* correlated rounds: the blocked standard error is smaller */
			assert_true(ratio / trials < 0.8);
	}
}

static void test_absent_effect_not_significant(void **state)
{
	/* host THP does nothing; guest THP does */
	const struct model m = { 10000, 500, 1, 0.5, 1, 1, 0.7, 1, 0.02, 0.02, 5, 3, 0, false };
	struct results r;

	(void)state;
	run_model(&r, &m, true, true);
	expect(get_at(r.effects, "host", "prefault", "never"), 0.0, false);
	expect(get(r.effects, "host", "tlb"), 0.0, false);
	expect(get(r.effects, "interaction", "tlb"), 0.0, false);
	expect(get(r.effects, "guest", "tlb"), 30.0, true);
	/* the total is significant, so the significant parts' shares are shown against it; the others
	 * have none ("host warm 0%" is not a share) */
	assert_true(isfinite(get(r.effects, "guest", "tlb")->share_pct));
	assert_true(isnan(get(r.effects, "host", "tlb")->share_pct));
	assert_true(isnan(get(r.effects, "interaction", "tlb")->share_pct));
	results_release(&r);
}

/* no share against a total that is not measured to be non-zero */
static void test_no_share_without_significant_total(void **state)
{
	const struct model m = { 10000, 500, 1, 1, 1, 1, 1, 1, 0.05, 0.05, 3, 3, 0, false };
	struct results r;
	size_t i, shown = 0;

	(void)state;
	run_model(&r, &m, false, false);
	for (i = 0; i < r.effects->n; i++) {
		const struct effect *e = &r.effects->e[i];
		const struct effect *t = get(r.effects, "total", strcmp(e->metric, "access_ns") ? "prefault" : "tlb");

		if (!t->significant)
			assert_true(isnan(e->share_pct));
		shown += isfinite(e->share_pct);
	}
	printf("no effect: %zu of %zu effects show a share\n", shown, r.effects->n);
	results_release(&r);
}

/* ondemand and immediate: host prefault = host THP on cold first touch, ondemand minus immediate */
static void test_host_prefault_two_allocations(void **state)
{
	const struct model m = { 10000, 500, 0.95, 0.40, 0.7, 0.85, 0.75, 0.9, 0.02, 0.01, 5, 3, 0, false };
	struct results r;
	const struct effect *e;

	(void)state;
	run_model(&r, &m, true, true);
	e = get_at(r.effects, "host", "prefault", "never");
	expect(e, saved(0.7), true);
	assert_non_null(strstr(e->note, "immediate"));
	assert_true(isnan(e->share_pct));	/* not part of the warm-memory decomposition */
	results_release(&r);
}

/* one boot per host setting: host-side effects are refused, guest ones are labelled */
static void test_one_boot(void **state)
{
	const struct model m = { 10000, 500, 0.95, 0.40, 0.7, 0.85, 0.75, 0.9, 0.02, 0.01, 1, 5, 0, false };
	struct results r;
	const struct effect *e;

	(void)state;
	run_model(&r, &m, false, true);
	e = get(r.effects, "host", "tlb");
	assert_false(e->available);
	assert_non_null(strstr(e->note, "--boots"));
	e = get_at(r.effects, "host", "prefault", "never");
	assert_false(e->available);
	assert_false(get(r.effects, "interaction", "tlb")->available);
	e = get(r.effects, "guest", "tlb");
	assert_true(e->available);
	assert_string_equal(e->method, "one-boot");
	assert_non_null(strstr(e->note, "one boot"));
	results_release(&r);
}

static void test_unavailable_with_reason(void **state)
{
	const struct model m = { 10000, 500, 1, 0.5, 1, 0.9, 0.7, 1, 0.02, 0.02, 3, 3, 0, false };
	struct results r;
	const struct effect *e;
	struct cell *c;

	(void)state;
	results_init(&r);
	next_boot = 0;
	fill_cells(&r, &m, false, false);	/* no host-cold cells */
	/* make one cell invalid: host always without host huge pages */
	c = results_cell(&r, "guest", "always", "always", "memset", NULL);
	c->host_cov.n = c->host_cov.nall = 0;
	metric_add(&c->host_cov, 3);
	results_finish(&r, 90);
	attach(&r);
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

/* a sample that is not positive has no log: the effect says so */
static void test_nonpositive_sample(void **state)
{
	const struct model m = { 10000, 500, 1, 0.5, 1, 0.9, 0.7, 1, 0.02, 0.02, 3, 3, 0, false };
	struct results r;
	struct cell *c;

	(void)state;
	results_init(&r);
	next_boot = 0;
	fill_cells(&r, &m, false, false);
	c = results_cell(&r, "guest", "never", "never", "memset", NULL);
	metric_add_boot(cell_metric(c, "access_ns", NULL), 0.0, 0);
	results_finish(&r, 90);
	attach(&r);
	assert_false(get(r.effects, "host", "tlb")->available);
	assert_non_null(strstr(get(r.effects, "host", "tlb")->note, "not positive"));
	results_release(&r);
}

/* variance components: a known boot spread and repetition noise come back */
static void test_varcomp(void **state)
{
	struct metric *m = calloc(1, sizeof(*m));
	struct varcomp vc;
	int b, i;

	(void)state;
	assert_non_null(m);
	for (b = 0; b < 40; b++) {
		double level = exp(0.10 * gauss());

		for (i = 0; i < 10; i++)
			assert_int_equal(metric_add_boot(m, 100 * level * exp(0.03 * gauss()), (unsigned)b), 0);
	}
	assert_int_equal(varcomp_compute(m, &vc), 0);
	printf("varcomp: %zu boots, within %.2f%% (truth 3.0), between %.2f%% (truth 10.0)\n", vc.boots,
	       vc.within_cv_pct, vc.between_cv_pct);
	assert_int_equal(vc.boots, 40);
	assert_int_equal(vc.samples, 400);
	assert_in_range((long)(vc.within_cv_pct * 10), 27, 33);
	assert_in_range((long)(vc.between_cv_pct * 10), 70, 130);
	/* one boot: no between component */
	m->n = 10;
	assert_int_equal(varcomp_compute(m, &vc), 0);
	assert_true(isnan(vc.between_cv_pct));
	assert_true(isfinite(vc.within_cv_pct));
	free(m);
}

static void test_mde(void **state)
{
	(void)state;
	/* MDE shrinks with more repetitions and grows with noise */
	assert_true(mde_pct(2.0, 10) < mde_pct(2.0, 3));
	assert_true(mde_pct(4.0, 10) > mde_pct(2.0, 10));
	assert_true(isnan(mde_pct(2.0, 1)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_effect_pct),
		cmocka_unit_test(test_recovers_known_effects),
		cmocka_unit_test(test_independent_savings_no_interaction),
		cmocka_unit_test(test_host_effect_replicates_over_boots),
		cmocka_unit_test(test_coverage_simulation),
		cmocka_unit_test(test_round_coverage),
		cmocka_unit_test(test_absent_effect_not_significant),
		cmocka_unit_test(test_no_share_without_significant_total),
		cmocka_unit_test(test_host_prefault_two_allocations),
		cmocka_unit_test(test_one_boot),
		cmocka_unit_test(test_unavailable_with_reason),
		cmocka_unit_test(test_nonpositive_sample),
		cmocka_unit_test(test_varcomp),
		cmocka_unit_test(test_mde),
	};

	return cmocka_run_group_tests_name("orchestrator/effects", tests, NULL, NULL);
}
