/*
 * tests for guest/workload.c against lib/wltraits.c: every workload the guest
 * program offers has traits (the orchestrator's validity rule), every traits
 * entry is a workload, and every record field a rule (or the split) reads is
 * one the workload declares, so the evidence the orchestrator asks for is
 * what the workload writes. The listing shows each workload's rules. Each
 * workload's parameter table points inside its own options struct (and the
 * common table inside struct wl_common), no two parameters share a byte, and
 * the defaults parse.
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
#include "guest/registry.h"
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
	registry_list(f);
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

/* the bytes the harness writes for a parameter of this type; 0 for a bad type */
static size_t param_width(const struct wl_param *p)
{
	switch (p->type) {
	case WL_P_SIZE:
	case WL_P_U64:
		return sizeof(uint64_t);
	case WL_P_BOOL:
		return sizeof(bool);
	case WL_P_KEEP01:
		return sizeof(int);
	case WL_P_WORD:
		return (size_t)p->max;
	default:
		return 0;
	}
}

/* every parameter of table t lies inside its struct of size bytes; no two share a byte */
static void check_table(const char *what, const struct wl_param *t, size_t size)
{
	const struct wl_param *p, *q;

	for (p = t; p && p->name; p++) {
		size_t w = param_width(p);

		if (!w)
			fail_msg("%s --%s has no width (type %d)", what, p->name, (int)p->type);
		if (p->off + w > size)
			fail_msg("%s --%s: bytes %zu to %zu lie outside its %zu-byte options", what,
				 p->name, p->off, p->off + w, size);
		for (q = t; q != p; q++)
			if (p->off < q->off + param_width(q) && q->off < p->off + w)
				fail_msg("%s --%s and --%s share bytes", what, q->name, p->name);
	}
}

static void test_params_in_opts(void **state)
{
	const struct workload *w = *state;

	assert_true(w->opts_size > 0);
	check_table(w->name, w->params, w->opts_size);
}

static void test_common_params(void **state)
{
	(void)state;
	check_table("common", wl_common_params, sizeof(struct wl_common));
}

/* no arguments: the defaults of both tables, parsed like user values, are accepted */
static void test_defaults_parse(void **state)
{
	const struct workload *w = *state;
	struct err e = ERR_INIT;
	struct wl_common c;
	void *opts = calloc(1, w->opts_size);

	assert_non_null(opts);
	if (harness_parse_args(w, 0, NULL, &c, opts, &e))
		fail_msg("%s: a default is rejected: %s", w->name, e.msg);
	assert_int_equal(c.seed, 1);
	assert_int_equal(c.nlabels, 0);
	free(opts);
}

#define MAX_WORKLOADS 16

int main(void)
{
	struct CMUnitTest tests[4 + 2 * MAX_WORKLOADS];
	char names[MAX_WORKLOADS][2][96];
	const struct workload *w;
	size_t i, n = 0;

	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_traits_match_workloads);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_fields_declared);
	tests[n++] = (struct CMUnitTest)cmocka_unit_test(test_listing);
	tests[n++] = (struct CMUnitTest){ "common parameters inside struct wl_common",
					  test_common_params, NULL, NULL, NULL };
	for (i = 0; (w = workload_at(i)); i++) {
		if (i == MAX_WORKLOADS) {
			fprintf(stderr, "more than %d workloads: raise MAX_WORKLOADS\n",
				MAX_WORKLOADS);
			return 1;
		}
		snprintf(names[i][0], sizeof(names[i][0]), "%s: parameters inside its options",
			 w->name);
		snprintf(names[i][1], sizeof(names[i][1]), "%s: defaults parse", w->name);
		tests[n++] = (struct CMUnitTest){ names[i][0], test_params_in_opts, NULL, NULL,
						  (void *)(uintptr_t)w };
		tests[n++] = (struct CMUnitTest){ names[i][1], test_defaults_parse, NULL, NULL,
						  (void *)(uintptr_t)w };
	}
	return _cmocka_run_group_tests("guest/workload", tests, n, NULL, NULL);
}
