/* tests for orchestrator/analysis/changes.c: change points of a series by binary segmentation */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>

#include "orchestrator/analysis/changes.h"
#include "tests/orchestrator/sim.h"

struct changes_case {
	const char *name;
	double level[3];	/* the levels of up to 3 segments (log scale) */
	size_t len[3];
	double sd;		/* run-to-run noise */
	size_t want;		/* change points */
	size_t at[2];		/* where */
};

static void test_changes(void **state)
{
	static const struct changes_case cases[] = {
		{ "flat, 3% noise: none", { 0 }, { 30 }, 0.03, 0, { 0 } },
		{ "one step of +30%", { 0, log(1.3) }, { 12, 8 }, 0.03, 1, { 12 } },
		{ "two steps up", { 0, 0.3, 0.6 }, { 10, 10, 10 }, 0.03, 2, { 10, 20 } },
		{ "a step of 1% in 5% noise: none", { 0, 0.01 }, { 15, 15 }, 0.05, 0, { 0 } },
		{ "too short to look", { 0, 1 }, { 2, 3 }, 0.01, 0, { 0 } },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct changes_case *c = &cases[i];
		struct change_point cp[8];
		uint64_t seed = 42 + i;
		double y[64];
		size_t n = 0, s, k, ncp;

		for (s = 0; s < 3; s++)
			for (k = 0; k < c->len[s]; k++)
				y[n++] = c->level[s] + c->sd * sim_gauss(&seed);
		changes_find(y, n, cp, 8, &ncp);
		if (ncp != c->want)
			fail_msg("%s: %zu change points, want %zu", c->name, ncp, c->want);
		for (k = 0; k < ncp; k++)
			if (cp[k].at != c->at[k] || !(cp[k].p < CHANGES_ALPHA))
				fail_msg("%s: change %zu at %zu (p %.3f), want at %zu", c->name, k, cp[k].at, cp[k].p,
					 c->at[k]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_changes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
