/*
 * tests for orchestrator/run/hostplan.c's host knobs asked by workload
 * options (hzp zero-page) on the bare host: set through
 * the session on a fake sysfs root, journaled before they are written, put
 * back after; the options themselves kept from the workload; the real
 * knobs never touched.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "orchestrator/run/hostplan.h"
#include "tests/host/fixtures/fakefs.h"

#define THP_REL(x) FAKE_THP "/" x

struct opt_case {
	const char *name;
	const char *workload, *arg;
	bool knob;
};

static struct opt_case opt_cases[] = {
	{ "hzp zero-page", "hzp", "--zero-page=0", true },
	{ "hzp zero-page keep", "hzp", "--zero-page=keep", true },
	{ "hzp another option", "hzp", "--half=4M", false },
	{ "hzp option with the knob's prefix", "hzp", "--zero-pages=0", false },
	{ "another workload's knob option", "memset", "--zero-page=0", false },
};

static void test_opt(void **state)
{
	const struct fx *f = *state;
	const struct opt_case *c = f->row;

	assert_int_equal(host_knob_opt(c->workload, c->arg), c->knob);
}

/* the real knob, read only; "" when this host has none */
static void real_knob(const char *key, char *buf, size_t len)
{
	char rel[128];

	snprintf(rel, sizeof(rel), "%s/%s", FAKE_THP, key);
	if (!fake_read("/", rel, buf, len))
		buf[0] = '\0';
}

struct set_case {
	const char *name;
	const char *spec, *workload;
	const char *key, *during, *journal;	/* the fake knob while set, the journal's line */
};

static struct set_case set_cases[] = {
	{ "hzp:zero-page=0", "hzp:zero-page=0,hzp:half=4M", "hzp", "use_zero_page", "0\n", "set use_zero_page 1\n" },
	{ "hzp:zero-page=1 where it is 1: nothing written", "hzp:zero-page=1", "hzp", "use_zero_page", "1\n", "" },
};

static void test_set(void **state)
{
	const struct fx *f = *state;
	const struct set_case *c = f->row;
	struct host_session s;
	struct thp_settings prev;
	struct err e = ERR_INIT;
	char root[PATH_MAX], state_dir[PATH_MAX], buf[PATH_MAX + 256], real0[64], real1[64], before[128];

	assert_int_equal(fake_join(root, sizeof(root), f->dir, "root"), 0);
	assert_int_equal(fake_join(state_dir, sizeof(state_dir), f->dir, "state"), 0);
	assert_int_equal(fake_thp_tree(root, true), 0);
	assert_non_null(fake_read(root, THP_REL("use_zero_page"), before, sizeof(before)));
	real_knob(c->key, real0, sizeof(real0));
	assert_int_equal(host_session_begin(&s, root, state_dir, NULL, &e), 0);

	if (host_knob_opts_set(&s, c->spec, c->workload, &prev, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(prev.n, 1);
	snprintf(buf, sizeof(buf), "%s/%s", FAKE_THP, c->key);
	{
		char now[128];

		assert_non_null(fake_read(root, buf, now, sizeof(now)));
		assert_string_equal(now, c->during);
	}
	/* journaled: what to put back, on disk while the knob is changed */
	if (c->journal[0]) {
		assert_non_null(fake_read(state_dir, HOST_JOURNAL_NAME, buf, sizeof(buf)));
		if (!strstr(buf, c->journal))
			fail_msg("journal '%s' has no '%s'", buf, c->journal);
	} else {
		assert_false(fake_exists(state_dir, HOST_JOURNAL_NAME));
	}
	/* another workload's options set nothing */
	{
		struct thp_settings none;

		assert_int_equal(host_knob_opts_set(&s, c->spec, "memset", &none, &e), 0);
		assert_int_equal(none.n, 0);
	}
	assert_int_equal(host_knob_opts_restore(&s, &prev, &e), 0);
	snprintf(buf, sizeof(buf), "%s/%s", FAKE_THP, c->key);
	{
		char now[128];

		assert_non_null(fake_read(root, buf, now, sizeof(now)));
		assert_string_equal(now, before);
	}
	assert_int_equal(host_session_end(&s, &e), 0);
	real_knob(c->key, real1, sizeof(real1));
	assert_string_equal(real0, real1);	/* the real knob never written */
}

/* keep, and a host without the knob */
static void test_keep_and_missing(void **state)
{
	const struct fx *f = *state;
	struct host_session s;
	struct thp_settings prev;
	struct err e = ERR_INIT;
	char root[PATH_MAX], state_dir[PATH_MAX];

	assert_int_equal(fake_join(root, sizeof(root), f->dir, "root"), 0);
	assert_int_equal(fake_join(state_dir, sizeof(state_dir), f->dir, "state"), 0);
	assert_int_equal(fake_thp_tree(root, false), 0);	/* no use_zero_page */
	assert_int_equal(host_session_begin(&s, root, state_dir, NULL, &e), 0);
	assert_int_equal(host_knob_opts_set(&s, "hzp:zero-page=keep", "hzp", &prev, &e), 0);
	assert_int_equal(prev.n, 0);
	assert_false(fake_exists(state_dir, HOST_JOURNAL_NAME));
	assert_int_not_equal(host_knob_opts_set(&s, "hzp:zero-page=0", "hzp", &prev, &e), 0);
	assert_non_null(strstr(e.msg, "hzp:zero-page=0 on the bare host"));
	assert_int_equal(host_session_end(&s, &e), 0);
}

int main(void)
{
	struct CMUnitTest tests[16];
	size_t i, n = 0;

	ADD_TABLE(opt_cases, test_opt);
	ADD_TABLE(set_cases, test_set);
	ADD_ONE("keep sets nothing; a missing knob is an error", test_keep_and_missing);
	return _cmocka_run_group_tests("run/hostplan", tests, n, NULL, NULL);
}
