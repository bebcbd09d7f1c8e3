/*
 * tests for orchestrator/analysis/gate.c: the history gate's statistics, and
 * the simulation that measures what it promises: nights with a between-run
 * effect (tau, half of its variance shared by every metric kind) and boot
 * noise inside each run; false alarms and power over seeded series.
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

#include "orchestrator/analysis/gate.h"
#include "tests/orchestrator/fixture.h"
#include "tests/orchestrator/sim.h"

/* ---- the simulation ------------------------------------------------------------------ */

#define SIM_KINDS 4		/* memset access, fault, host-cold access, host-cold fault */
#define SIM_BOOTS 10		/* boots in a run */
#define SIM_BOOT_SD 0.05	/* boot-to-boot SD of a kind's composite, log scale */
#define SIM_HIST (GATE_DEFAULT_K + GATE_NEWEST - 1)

struct sim_case {
	const char *name;
	double tau;		/* the run effect: SD tau * shared common to the kinds, tau * own each kind's */
	double shared, own;
	double slow;		/* slowdown of kind 0 (access) in the newest 3 runs, e.g. 0.20 */
	unsigned series;
	bool normal;		/* the normal instead of Student's t */
};

struct sim_out {
	double regression, suspect, kind0_regression;
};

/* one run: per kind, the composite's log mean and its standard error from SIM_BOOTS boots */
static void sim_run(uint64_t *seed, const struct sim_case *c, double slow, double *y, double *se)
{
	double shared = sim_gauss(seed) * c->tau * c->shared;
	size_t k, b;

	for (k = 0; k < SIM_KINDS; k++) {
		double own = sim_gauss(seed) * c->tau * c->own, sum = 0, ss = 0, boot[SIM_BOOTS], m;

		for (b = 0; b < SIM_BOOTS; b++) {
			boot[b] = sim_gauss(seed) * SIM_BOOT_SD;
			sum += boot[b];
		}
		m = sum / SIM_BOOTS;
		for (b = 0; b < SIM_BOOTS; b++)
			ss += (boot[b] - m) * (boot[b] - m);
		y[k] = 3.0 + 0.5 * (double)k + shared + own + m + (k == 0 ? log1p(slow) : 0);
		se[k] = sqrt(ss / (SIM_BOOTS - 1) / SIM_BOOTS);
	}
}

static void sim_gate(const double y[][SIM_KINDS], const double se[][SIM_KINDS], size_t nhist, bool normal,
		     struct gate_result *g)
{
	struct gate_opts o = { GATE_DEFAULT_THRESHOLD_PCT, GATE_DEFAULT_K, GATE_FAIL_ON_REGRESSION, normal };
	struct err e = ERR_INIT;
	size_t k, i;

	gate_result_init(g, &o);
	for (k = 0; k < SIM_KINDS; k++) {
		struct gate_point p = { .dir = DIR_LOWER, .ncells = 1, .boots = SIM_BOOTS };
		double hy[SIM_HIST + 8], hs[SIM_HIST + 8];

		snprintf(p.kind, sizeof(p.kind), "kind%zu", k);
		p.mean_log = y[nhist][k];
		p.se_log = se[nhist][k];
		for (i = 0; i < nhist; i++) {
			hy[i] = y[i][k];
			hs[i] = se[i][k];
		}
		assert_int_equal(gate_add_kind(g, &o, &p, hy, hs, nhist, &e), 0);
	}
	gate_finish(g);
}

static void sim(const struct sim_case *c, uint64_t seed, struct sim_out *out)
{
	double y[SIM_HIST + 1][SIM_KINDS], se[SIM_HIST + 1][SIM_KINDS];
	unsigned s, nreg = 0, nsus = 0, nk0 = 0;
	size_t i;

	for (s = 0; s < c->series; s++) {
		struct gate_result g;

		for (i = 0; i <= SIM_HIST; i++)
			sim_run(&seed, c, i + GATE_NEWEST > SIM_HIST ? c->slow : 0, y[i], se[i]);
		sim_gate(y, se, SIM_HIST, c->normal, &g);
		nreg += g.verdict == GATE_V_REGRESSION;
		nsus += g.nsuspect > 0;
		nk0 += g.kinds[0].verdict == GATE_V_REGRESSION;
		gate_result_release(&g);
	}
	out->regression = 100.0 * nreg / c->series;
	out->suspect = 100.0 * nsus / c->series;
	out->kind0_regression = 100.0 * nk0 / c->series;
}

/*
 * The promise: with K = 10 and no change, at most 5% of nights end in
 * regression at every tau; a 20% slower access time is a regression after 3
 * runs in at least 75% of series at tau 10%. "tau T" is a run effect of SD
 * T/2 shared by every kind plus SD T/2 of each kind's own (per kind SD
 * T/sqrt(2)); "per-kind tau T" is SD T for each kind (half of its variance
 * shared), where no test at 5% can reach 75% power (even knowing tau: 69%).
 * Student's t with K - 1 df holds the bound; the normal does not (shown).
 * Printed for the README and doc/gate.md.
 */
static void test_simulation(void **state)
{
	static const struct sim_case cases[] = {
		{ "A/A tau 0", 0.00, 0.5, 0.5, 0, 20000, false },
		{ "A/A tau 5%", 0.05, 0.5, 0.5, 0, 20000, false },
		{ "A/A tau 10%", 0.10, 0.5, 0.5, 0, 20000, false },
		{ "A/A tau 20%", 0.20, 0.5, 0.5, 0, 20000, false },
		{ "20% slower access, tau 10%", 0.10, 0.5, 0.5, 0.20, 20000, false },
		{ "A/A per-kind tau 10%", 0.10, M_SQRT1_2, M_SQRT1_2, 0, 20000, false },
		{ "A/A per-kind tau 20%", 0.20, M_SQRT1_2, M_SQRT1_2, 0, 20000, false },
		{ "20% slower access, per-kind tau 10%", 0.10, M_SQRT1_2, M_SQRT1_2, 0.20, 20000, false },
		{ "A/A tau 10%, normal", 0.10, 0.5, 0.5, 0, 20000, true },
		{ "20% slower access, tau 10%, normal", 0.10, 0.5, 0.5, 0.20, 20000, true },
	};
	struct sim_out o[sizeof(cases) / sizeof(cases[0])];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sim_case *c = &cases[i];

		sim(c, 0x5eed0000u + i, &o[i]);
		printf("gate simulation: %-36s K %d, %u series: regression %5.1f%%, suspect %5.1f%% "
		       "(access regression %5.1f%%)\n", c->name, GATE_DEFAULT_K, c->series, o[i].regression,
		       o[i].suspect, o[i].kind0_regression);
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct sim_case *c = &cases[i];

		if (c->normal)
			continue;
		if (c->slow == 0 && o[i].regression > 5.0)
			fail_msg("%s: %.1f%% false regressions, more than 5%%", c->name, o[i].regression);
		if (c->slow == 0 && o[i].suspect > 5.0)
			fail_msg("%s: %.1f%% false suspects, more than 5%%", c->name, o[i].suspect);
		if (c->slow > 0 && c->shared == 0.5 && o[i].kind0_regression < 75.0)
			fail_msg("%s: power %.1f%%, less than 75%%", c->name, o[i].kind0_regression);
	}
}

/* ---- verdicts on fixed series --------------------------------------------------------- */

/* gate one kind (lower is better, se 1%) whose runs are log means y, the last one current */
static enum gate_verdict gate_one(const double *y, size_t n, enum metric_dir dir, struct gate_kind *out)
{
	struct gate_opts o = { GATE_DEFAULT_THRESHOLD_PCT, GATE_DEFAULT_K, GATE_FAIL_ON_REGRESSION, false };
	struct gate_point p = { .kind = "memset access_ns", .dir = dir, .se_log = 0.01, .boots = 10, .ncells = 4 };
	double se[64];
	struct gate_result g;
	struct err e = ERR_INIT;
	enum gate_verdict v;
	size_t i;

	for (i = 0; i < n; i++)
		se[i] = 0.01;
	p.mean_log = y[n - 1];
	gate_result_init(&g, &o);
	assert_int_equal(gate_add_kind(&g, &o, &p, y, se, n - 1, &e), 0);
	gate_finish(&g);
	v = g.kinds[0].verdict;
	assert_int_equal(g.verdict, v);
	if (out)
		*out = g.kinds[0];
	gate_result_release(&g);
	return v;
}

/* a quiet history: +-3% around 0 */
static const double quiet[] = { 0.01, -0.02, 0.03, 0.0, -0.01, 0.02, -0.03, 0.01, 0.0, -0.02, 0.02, 0.01 };
#define NQUIET (sizeof(quiet) / sizeof(quiet[0]))

struct verdict_case {
	const char *name;
	size_t nhist;		/* runs of quiet before the tail */
	double tail[3];		/* the newest runs, the current one last */
	size_t ntail;
	enum metric_dir dir;
	enum gate_verdict want;
};

static void test_verdicts(void **state)
{
	static const struct verdict_case cases[] = {
		{ "no change", NQUIET, { 0.01 }, 1, DIR_LOWER, GATE_V_OK },
		{ "4 runs: no-history", 4, { 0.5 }, 1, DIR_LOWER, GATE_V_NO_HISTORY },
		{ "one run 30% slower: suspect", NQUIET, { log(1.3) }, 1, DIR_LOWER, GATE_V_SUSPECT },
		{ "three runs 30% slower: regression", NQUIET, { log(1.3), log(1.31), log(1.29) }, 3, DIR_LOWER,
		  GATE_V_REGRESSION },
		{ "slower but within the threshold: ok", NQUIET, { 0.04, 0.04, 0.045 }, 3, DIR_LOWER, GATE_V_OK },
		{ "30% faster, lower is better: ok", NQUIET, { -0.3, -0.3, -0.3 }, 3, DIR_LOWER, GATE_V_OK },
		{ "30% lower, higher is better: regression", NQUIET, { -0.3, -0.3, -0.3 }, 3, DIR_HIGHER,
		  GATE_V_REGRESSION },
		{ "two slow runs, then a normal one: not a regression", NQUIET, { 0.3, 0.3, 0.0 }, 3, DIR_LOWER,
		  GATE_V_OK },
		{ "5 runs: suspect only", 5, { log(1.3) }, 1, DIR_LOWER, GATE_V_SUSPECT },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct verdict_case *c = &cases[i];
		double y[64];
		enum gate_verdict v;
		size_t n = 0, j;

		for (j = 0; j < c->nhist; j++)
			y[n++] = quiet[j];
		for (j = 0; j < c->ntail; j++)
			y[n++] = c->tail[j];
		v = gate_one(y, n, c->dir, NULL);
		if (v != c->want)
			fail_msg("%s: %s, want %s", c->name, gate_verdict_name(v), gate_verdict_name(c->want));
	}
}

/*
 * One fast run followed by normal ones: the fast run stays in the history (a
 * series, not a baseline), so the next runs are not judged against it alone.
 */
static void test_fast_run_no_ratchet(void **state)
{
	double y[64];
	size_t n = 0, j, night;

	(void)state;
	for (j = 0; j < NQUIET; j++)
		y[n++] = quiet[j];
	y[n++] = log(0.75);	/* a night 25% faster */
	for (night = 0; night < 10; night++) {
		struct gate_kind k;
		enum gate_verdict v;

		y[n++] = quiet[night % NQUIET];
		v = gate_one(y, n, DIR_LOWER, &k);
		if (v != GATE_V_OK)
			fail_msg("normal night %zu after the fast one: %s (change %+.1f%%, tau %.3f)", night + 1,
				 gate_verdict_name(v), k.change_pct, k.tau);
	}
}

/* Holm over the kinds: two kinds each at p 0.03 are not both rejected at 5% */
static void test_holm_over_kinds(void **state)
{
	struct gate_opts o = { GATE_DEFAULT_THRESHOLD_PCT, GATE_DEFAULT_K, GATE_FAIL_ON_SUSPECT, false };
	struct gate_point p = { .kind = "k", .dir = DIR_LOWER, .se_log = 0.01 };
	double se[NQUIET];
	struct gate_result g;
	struct err e = ERR_INIT;
	size_t i;

	(void)state;
	for (i = 0; i < NQUIET; i++)
		se[i] = 0.01;
	gate_result_init(&g, &o);
	p.mean_log = log(1.3);
	assert_int_equal(gate_add_kind(&g, &o, &p, quiet, se, NQUIET, &e), 0);
	p.mean_log = 0.0;
	assert_int_equal(gate_add_kind(&g, &o, &p, quiet, se, NQUIET, &e), 0);
	gate_finish(&g);
	assert_int_equal(g.kinds[0].verdict, GATE_V_SUSPECT);
	assert_int_equal(g.kinds[1].verdict, GATE_V_OK);
	assert_true(g.kinds[0].holm_suspect >= g.kinds[0].p_suspect);
	assert_int_equal(g.nsuspect, 1);
	assert_int_equal(g.verdict, GATE_V_SUSPECT);
	assert_true(gate_failed(&g));		/* --fail-on=suspect */
	g.fail_on = GATE_FAIL_ON_REGRESSION;
	assert_false(gate_failed(&g));
	gate_result_release(&g);
}

/* a run's points: one per primary metric kind over the valid cells, se over boots */
static void test_points(void **state)
{
	struct results *r = fixture_results();
	struct gate_points p;
	struct err e = ERR_INIT;
	const struct gate_point *a;
	size_t i;

	(void)state;
	assert_int_equal(gate_points_compute(r, &p, &e), 0);
	assert_true(p.n >= 2);
	a = NULL;
	for (i = 0; i < p.n; i++)
		if (!strcmp(p.v[i].kind, "memset access_ns"))
			a = &p.v[i];
	if (!a)
		fail_msg("no 'memset access_ns' kind");
	assert_int_equal(a->dir, DIR_LOWER);
	assert_true(a->ncells >= 1);
	assert_true(isfinite(a->mean_log) && isfinite(a->se_log) && a->se_log >= 0);
	assert_int_equal(strlen(a->cells_key), 16);
	assert_ptr_equal(gate_points_find(&p, "memset access_ns", a->cells_key), a);
	assert_null(gate_points_find(&p, "memset access_ns", "0000000000000000"));
	gate_points_release(&p);
	fixture_results_free(r);
}

static void test_names(void **state)
{
	struct err e = ERR_INIT;
	enum gate_fail_on f;
	enum gate_verdict v;
	size_t i;

	(void)state;
	for (i = 0; i < GATE_V__COUNT; i++) {
		assert_int_equal(gate_verdict_parse(gate_verdict_name((enum gate_verdict)i), &v), 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(gate_fail_on_parse("suspect", &f, &e), 0);
	assert_int_equal(f, GATE_FAIL_ON_SUSPECT);
	assert_int_equal(gate_fail_on_parse("maybe", &f, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "regression or suspect"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_points),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_holm_over_kinds),
		cmocka_unit_test(test_fast_run_no_ratchet),
		cmocka_unit_test(test_simulation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
