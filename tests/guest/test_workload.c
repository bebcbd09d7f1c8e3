/*
 * tests for guest/workload.c against lib/wltraits.c: every workload the guest
 * program offers has traits (the orchestrator's validity rule), every traits
 * entry is a workload, and every record field a rule (or the split) reads is
 * one the workload declares, so the evidence the orchestrator asks for is
 * what the workload writes. The listing shows each workload's rules.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "guest/harness.h"
#include "guest/workload.h"
#include "lib/wltraits.h"

static void test_traits_match_workloads(void **state)
{
	const struct workload *w;
	const struct wl_traits *t;
	size_t i, nw = 0;

	(void)state;
	for (i = 0; (w = workload_at(i)); i++, nw++)
		if (!wltraits_find(w->name))
			fail_msg("workload %s has no traits in lib/wltraits.c", w->name);
	for (i = 0; (t = wltraits_at(i)); i++)
		if (!workload_find(t->name))
			fail_msg("traits of %s, which the guest program does not offer", t->name);
	assert_int_equal(i, nw);
}

static void test_fields_declared(void **state)
{
	const struct wl_traits *t;
	const struct wl_rule *r;
	size_t i, k;

	(void)state;
	for (i = 0; (t = wltraits_at(i)); i++) {
		const struct workload *w = workload_find(t->name);

		assert_non_null(w);
		for (r = t->rules; r->variant; r++) {
			const char *fields[] = { r->cov_field, r->want_field, r->effect_field,
						 r->reason_field };

			for (k = 0; k < sizeof(fields) / sizeof(fields[0]); k++)
				if (fields[k] && !workload_has_field(w, fields[k]))
					fail_msg("%s rule '%s' reads '%s', which %s does not declare",
						 t->name, r->variant, fields[k], t->name);
		}
		/* the gate's primary metrics are fields the workload sends */
		for (k = 0; t->primary && t->primary[k]; k++)
			if (!workload_has_field(w, t->primary[k]))
				fail_msg("%s's primary metric '%s' is not a field it declares", t->name,
					 t->primary[k]);
		/* the split's phase metrics are fields the workload sends */
		if (t->split) {
			const char *phase[] = { t->split->fault_metric, t->split->access_metric };

			assert_non_null(t->split->access_metric);
			for (k = 0; k < sizeof(phase) / sizeof(phase[0]); k++)
				if (phase[k] && !workload_has_field(w, phase[k]))
					fail_msg("%s's split metric '%s' is not a field it declares", t->name,
						 phase[k]);
		}
	}
}

static void test_listing(void **state)
{
	char *text = NULL, *p;
	size_t len = 0, n = 0, nw = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	harness_list(f);
	assert_int_equal(fclose(f), 0);
	for (p = text; (p = strstr(p, "  validity evidence (first matching variant):\n")); p++)
		n++;
	while (workload_at(nw))
		nw++;
	assert_int_equal(n, nw);	/* every workload lists its evidence */
	assert_non_null(strstr(text, "    zp1                      zero_page_in_effect=1 (huge zero page "
				     "in effect), else invalid with zero_page_reason\n"));
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_traits_match_workloads),
		cmocka_unit_test(test_fields_declared),
		cmocka_unit_test(test_listing),
	};

	return cmocka_run_group_tests_name("guest/workload", tests, NULL, NULL);
}
