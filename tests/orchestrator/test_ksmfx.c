/*
 * tests for orchestrator/analysis/ksmfx.c: KSM on against off on planted
 * boots with known answers: Welch over the boots of one round (two guests
 * per arm), pairing by round with two rounds, a missing off arm, and a run
 * without a ksm cell (no comparison at all).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/analysis/ksmfx.h"
#include "orchestrator/model/results.h"

static unsigned add_boot(struct results *r, unsigned round)
{
	struct guest_log *g = results_guest_add(r, NULL);

	assert_non_null(g);
	g->round = round;
	return (unsigned)(g - r->guests);
}

static struct cell *memset_cell(struct results *r, const char *state)
{
	struct cell_key k = { "guest", "always", "ondemand", "never", "memset", NULL, state, NULL };
	struct cell *c = results_cell_key(r, &k, NULL);

	assert_non_null(c);
	c->valid = true;
	return c;
}

static void add(struct cell *c, unsigned boot, double v)
{
	struct metric *m = cell_metric(c, "access_ns", NULL);

	assert_non_null(m);
	assert_int_equal(metric_add_boot(m, v, boot), 0);
	assert_int_equal(metric_add_boot(m, v, boot), 0);
}

static const struct ab_row *access_row(const struct results *r)
{
	size_t i;

	assert_non_null(r->ksm_fx);
	for (i = 0; i < r->ksm_fx->n; i++)
		if (!strcmp(r->ksm_fx->rows[i].metric, "access_ns"))
			return &r->ksm_fx->rows[i];
	fail_msg("no access_ns row");
	return NULL;
}

/* one round, two guests per arm: on is 1.25 times off in every boot, Welch, ratio 1.25 */
static void test_welch_one_round(void **state)
{
	struct results r;
	struct err e = ERR_INIT;
	struct cell *off, *on;
	const struct ab_row *row;

	(void)state;
	results_init(&r);
	off = memset_cell(&r, "fresh");
	on = memset_cell(&r, KSM_HOST_STATE);
	add(off, add_boot(&r, 0), 100);
	add(off, add_boot(&r, 0), 104);
	add(on, add_boot(&r, 0), 125);
	add(on, add_boot(&r, 0), 130);
	assert_int_equal(ksmfx_attach(&r, &e), 0);
	row = access_row(&r);
	assert_string_equal(r.ksm_fx->axis, "ksm");
	assert_string_equal(r.ksm_fx->a, "off");
	assert_string_equal(r.ksm_fx->b, "on");
	assert_true(row->tested);
	assert_string_equal(row->method, "welch");
	assert_int_equal(row->boots_a, 2);
	assert_int_equal(row->boots_b, 2);
	assert_true(fabs(row->ratio - 1.25) < 0.001);
	assert_true(row->ratio_lo < row->ratio && row->ratio < row->ratio_hi);
	assert_true(row->ratio_lo > 1);
	assert_true(row->differs);
	results_release(&r);
}

/* two rounds with both arms: paired by round, the rounds' drift cancels */
static void test_paired_rounds(void **state)
{
	static const double level[] = { 100, 150 }, lift[] = { 1.21, 1.29 };
	struct results r;
	struct err e = ERR_INIT;
	struct cell *off, *on;
	const struct ab_row *row;
	unsigned rd;

	(void)state;
	results_init(&r);
	off = memset_cell(&r, "fresh");
	on = memset_cell(&r, KSM_HOST_STATE);
	for (rd = 0; rd < 2; rd++) {
		add(off, add_boot(&r, rd), level[rd]);
		add(on, add_boot(&r, rd), level[rd] * lift[rd]);
	}
	assert_int_equal(ksmfx_attach(&r, &e), 0);
	row = access_row(&r);
	assert_true(row->tested);
	assert_string_equal(row->method, "paired");
	assert_int_equal(row->pairs, 2);
	assert_true(fabs(row->ratio - sqrt(1.21 * 1.29)) < 0.001);
	results_release(&r);
}

/* --ksm=on alone: a row that says the off arm is missing; no ksm cell: no comparison */
static void test_missing_arms(void **state)
{
	struct results r;
	struct err e = ERR_INIT;
	struct cell *on;
	const struct ab_row *row;

	(void)state;
	results_init(&r);
	on = memset_cell(&r, KSM_HOST_STATE);
	add(on, add_boot(&r, 0), 125);
	assert_int_equal(ksmfx_attach(&r, &e), 0);
	row = access_row(&r);
	assert_false(row->tested);
	assert_non_null(strstr(row->note, "off arm"));
	results_release(&r);

	results_init(&r);
	add(memset_cell(&r, "fresh"), add_boot(&r, 0), 100);
	assert_int_equal(ksmfx_attach(&r, &e), 0);
	assert_null(r.ksm_fx);
	results_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_welch_one_round),
		cmocka_unit_test(test_paired_rounds),
		cmocka_unit_test(test_missing_arms),
	};

	return cmocka_run_group_tests_name("analysis/ksmfx", tests, NULL, NULL);
}
