/*
 * tests for orchestrator/history/gatedb.c, 'thpeval compare --history' and
 * the history gate's JUnit cases: the points each recorded run keeps (schema
 * step 3), the gate read back from them (or from the results.json of runs
 * recorded before), every complete run counted, passing or not. On SQLite
 * always, on PostgreSQL when THPEVAL_TEST_PG names a database
 * (tests/cli/history_db.sh starts one).
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
#include <unistd.h>

#include "orchestrator/analysis/gate.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/history/gatedb.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/history/history.h"
#include "orchestrator/model/results.h"
#include "orchestrator/model/results_json.h"
#include "orchestrator/report/fleet.h"
#include "orchestrator/report/report.h"
#include "tests/orchestrator/fixture.h"

#define PG_ENV "THPEVAL_TEST_PG"

struct backend {
	const char *name;
	enum histdb_kind kind;
	char dir[64];
	char db[512];
};

static struct backend sqlite_be = { .name = "sqlite", .kind = HISTDB_SQLITE };
static struct backend pg_be = { .name = "postgresql", .kind = HISTDB_POSTGRES };

static void db_exec(const struct backend *b, const char *sql)
{
	struct histdb_target t;
	struct histdb *h;
	struct err e = ERR_INIT;

	if (histdb_target_parse(b->db, &t, &e) || histdb_open(&t, true, &h, &e) || histdb_exec(h, sql, "write to", &e))
		fail_msg("%s: %s", sql, e.msg);
	histdb_close(h);
}

static long long db_count(const struct backend *b, const char *sql)
{
	struct histdb_target t;
	struct histdb *h;
	struct err e = ERR_INIT;
	long long n = -1;

	if (histdb_target_parse(b->db, &t, &e) || histdb_open(&t, false, &h, &e) ||
	    histdb_query_int(h, sql, NULL, 0, &n, "read", &e))
		fail_msg("%s: %s", sql, e.msg);
	histdb_close(h);
	return n;
}

static int setup(void **state)
{
	struct backend *b = *state;
	const char *pg = getenv(PG_ENV);

	snprintf(b->dir, sizeof(b->dir), "/tmp/thpeval-test-gatedb-XXXXXX");
	if (!mkdtemp(b->dir))
		return -1;
	b->db[0] = '\0';
	if (b->kind == HISTDB_SQLITE) {
		snprintf(b->db, sizeof(b->db), "%s/history.db", b->dir);
	} else if (pg && *pg) {
		snprintf(b->db, sizeof(b->db), "%s", pg);
		db_exec(b, "DROP TABLE IF EXISTS gate_points, metrics, runs, schema_version CASCADE");
	}
	return 0;
}

static int teardown(void **state)
{
	struct backend *b = *state;

	if (b->kind == HISTDB_POSTGRES && b->db[0])
		db_exec(b, "DROP TABLE IF EXISTS gate_points, metrics, runs, schema_version CASCADE");
	fixture_rm_rf(b->dir);
	return 0;
}

static struct backend *need(void **state)
{
	struct backend *b = *state;

	if (!b->db[0]) {
		print_message("skipped: no PostgreSQL to test against: set " PG_ENV "=postgresql://... "
			      "(tests/cli/history_db.sh starts one)\n");
		skip();
	}
	return b;
}

/* FIXTURE_2X2 as host lab-a, started at t, every access_ns sample scaled by f */
static struct results *night(time_t t, double f)
{
	struct results *r = fixture_results();
	size_t i, k;

	snprintf(r->host.name, sizeof(r->host.name), "lab-a");
	r->started = t;
	r->finished = t + 60;
	for (i = 0; i < r->ncells; i++) {
		struct metric *m = cell_metric(&r->cells[i], "access_ns", NULL);

		assert_non_null(m);
		for (k = 0; k < m->n; k++)
			m->samples[k] *= f;
		summarize(m->samples, m->n, &m->s);
	}
	return r;
}

/* the nights' access scale factors: +-2% drift */
static const double drift[] = { 1.00, 1.02, 0.99, 1.01, 0.98, 1.02, 1.00, 0.99, 1.01, 1.00, 0.98, 1.02 };

static void record(const struct backend *b, time_t t, double f, bool passed, bool points)
{
	struct results *r = night(t, f);
	struct err e = ERR_INIT;

	if (points ? history_append_gated(b->db, r, passed, NULL, &e) : history_append(b->db, r, passed, &e))
		fail_msg("append: %s", e.msg);
	fixture_results_free(r);
}

static const struct gate_kind *find_kind(const struct gate_result *g, const char *kind)
{
	static const struct gate_kind none;
	size_t i;

	for (i = 0; i < g->n; i++)
		if (!strcmp(g->kinds[i].cur.kind, kind))
			return &g->kinds[i];
	fail_msg("no kind '%s' in the gate", kind);
	return &none;
}

static const struct gate_opts gopts = { 5.0, GATE_DEFAULT_K, GATE_FAIL_ON_REGRESSION, false };

/* the gate of a night at t scaled by f against the history, its access verdict */
static enum gate_verdict gate_night(const struct backend *b, time_t t, double f, struct gate_result *g)
{
	struct results *r = night(t, f);
	struct err e = ERR_INIT;
	enum gate_verdict v;

	if (history_gate(b->db, r, NULL, &gopts, g, NULL, &e))
		fail_msg("history_gate: %s", e.msg);
	v = find_kind(g, "memset access_ns")->verdict;
	fixture_results_free(r);
	return v;
}

static void test_points_stored(void **state)
{
	struct backend *b = need(state);
	struct gate_result g;
	struct results *r = night(1000, 1.0);
	struct err e = ERR_INIT;
	long long nkinds;

	/* no database yet: every kind no-history, and nothing created */
	assert_int_equal(gate_night(b, 500, 1.0, &g), GATE_V_NO_HISTORY);
	assert_int_equal(g.verdict, GATE_V_NO_HISTORY);
	assert_false(gate_failed(&g));
	gate_result_release(&g);
	if (b->kind == HISTDB_SQLITE)
		assert_int_equal(access(b->db, F_OK), -1);
	/* a gated run keeps its points, each kind's verdict and its own */
	assert_int_equal(history_gate(b->db, r, NULL, &gopts, &g, NULL, &e), 0);
	assert_int_equal(history_append_gated(b->db, r, true, &g, &e), 0);
	gate_result_release(&g);
	nkinds = db_count(b, "SELECT count(*) FROM gate_points");
	assert_true(nkinds >= 2);
	assert_int_equal(db_count(b, "SELECT count(*) FROM gate_points WHERE kind = 'memset access_ns' AND dir = 'lower'"
				  " AND cells > 0 AND boots > 0 AND se_log >= 0 AND length(cells_key) = 16"), 1);
	assert_int_equal(db_count(b, "SELECT count(*) FROM gate_points WHERE verdict = 'no-history'"), nkinds);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs WHERE gate_verdict = 'no-history'"), 1);
	/* recorded again: nothing added */
	assert_int_equal(history_append_gated(b->db, r, true, NULL, &e), 0);
	assert_int_equal(db_count(b, "SELECT count(*) FROM gate_points"), nkinds);
	/* an ungated run: points without verdicts */
	r->started = 1100;
	assert_int_equal(history_append_gated(b->db, r, true, NULL, &e), 0);
	assert_int_equal(db_count(b, "SELECT count(*) FROM gate_points WHERE verdict IS NULL"), nkinds);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs WHERE gate_verdict IS NULL"), 1);
	fixture_results_free(r);
}

/*
 * 12 quiet nights, some of which failed their gate (every complete run is
 * history), then: a normal night ok, one 30% slower suspect, three slower a
 * regression; a fast night followed by normal ones never fails.
 */
static void test_gate_series(void **state)
{
	struct backend *b = need(state);
	struct gate_result g;
	size_t i;

	for (i = 0; i < 4; i++)
		record(b, (time_t)(1000 + 100 * i), drift[i], i != 2, true);
	assert_int_equal(gate_night(b, 5000, 1.0, &g), GATE_V_NO_HISTORY);
	assert_int_equal(find_kind(&g, "memset access_ns")->nhist, 4);
	gate_result_release(&g);
	for (; i < 12; i++)
		record(b, (time_t)(1000 + 100 * i), drift[i], i % 5 != 0, true);
	/* a run of another host is not in lab-a's history */
	{
		struct results *r = night(1050, 2.0);
		struct err e = ERR_INIT;

		snprintf(r->host.name, sizeof(r->host.name), "lab-b");
		assert_int_equal(history_append_gated(b->db, r, true, NULL, &e), 0);
		fixture_results_free(r);
	}
	assert_int_equal(gate_night(b, 5000, 1.01, &g), GATE_V_OK);
	assert_int_equal(find_kind(&g, "memset access_ns")->nhist, GATE_DEFAULT_K + GATE_NEWEST - 1);
	assert_false(gate_failed(&g));
	gate_result_release(&g);
	assert_int_equal(gate_night(b, 5000, 1.3, &g), GATE_V_SUSPECT);
	assert_false(gate_failed(&g));
	g.fail_on = GATE_FAIL_ON_SUSPECT;
	assert_true(gate_failed(&g));
	gate_result_release(&g);
	record(b, 4000, 1.3, false, true);
	record(b, 4100, 1.31, false, true);
	assert_int_equal(gate_night(b, 5000, 1.29, &g), GATE_V_REGRESSION);
	assert_true(gate_failed(&g));
	gate_result_release(&g);
}

static void test_fast_then_normal(void **state)
{
	struct backend *b = need(state);
	struct gate_result g;
	size_t i;

	for (i = 0; i < 12; i++)
		record(b, (time_t)(1000 + 100 * i), drift[i], true, true);
	record(b, 3000, 0.75, true, true);	/* a night 25% faster */
	for (i = 0; i < 6; i++) {
		enum gate_verdict v = gate_night(b, (time_t)(4000 + 100 * i), drift[i], &g);

		if (gate_failed(&g) || v != GATE_V_OK)
			fail_msg("normal night %zu after the fast one: %s", i + 1, gate_verdict_name(v));
		gate_result_release(&g);
		record(b, (time_t)(4000 + 100 * i), drift[i], true, true);
	}
}

/* runs recorded before the points were kept (or by an older thpeval): read from their results.json */
static void test_runs_without_points(void **state)
{
	struct backend *b = need(state);
	struct gate_result g;
	size_t i;

	for (i = 0; i < 12; i++)
		record(b, (time_t)(1000 + 100 * i), drift[i], true, false);
	assert_int_equal(db_count(b, "SELECT count(*) FROM gate_points"), 0);
	assert_int_equal(gate_night(b, 5000, 1.0, &g), GATE_V_OK);
	assert_int_equal(find_kind(&g, "memset access_ns")->nhist, GATE_DEFAULT_K + GATE_NEWEST - 1);
	gate_result_release(&g);
	assert_int_equal(gate_night(b, 5000, 1.3, &g), GATE_V_SUSPECT);
	gate_result_release(&g);
}

/* compare --history: exit 0 on ok and suspect, 1 on a regression (or a suspect with --fail-on=suspect) */
static void test_cmd_compare_history(void **state)
{
	struct backend *b = need(state);
	char path[600], dbarg[600];
	struct results *r;
	struct err e = ERR_INIT;
	size_t i;

	for (i = 0; i < 12; i++)
		record(b, (time_t)(1000 + 100 * i), drift[i], true, true);
	snprintf(path, sizeof(path), "%s/current.json", b->dir);
	snprintf(dbarg, sizeof(dbarg), "--db=%s", b->db);
	r = night(5000, 1.3);
	assert_int_equal(results_write_json(r, path, &e), 0);
	fixture_results_free(r);
	{
		const char *args[] = { "--history", dbarg, path };
		const char *strict[] = { "--history", dbarg, "--fail-on=suspect", path };
		const char *other[] = { "--history", dbarg, "--host=lab-z", path };
		const char *bad[] = { dbarg, path, path };
		const char *runs[] = { "--history", dbarg, "--runs=4", path };

		assert_int_equal(fixture_run_cmd(cmd_compare, "compare", args, 3, NULL), CMD_OK);
		assert_int_equal(fixture_run_cmd(cmd_compare, "compare", strict, 4, NULL), CMD_ERROR);
		/* another host has no history: no-history, passes */
		assert_int_equal(fixture_run_cmd(cmd_compare, "compare", other, 4, NULL), CMD_OK);
		/* --db without --history, and K below 5: usage errors */
		assert_int_equal(fixture_run_cmd(cmd_compare, "compare", bad, 3, NULL), CMD_USAGE);
		assert_int_equal(fixture_run_cmd(cmd_compare, "compare", runs, 4, NULL), CMD_USAGE);
	}
	record(b, 4000, 1.3, false, true);
	record(b, 4100, 1.31, false, true);
	{
		const char *args[] = { "--history", dbarg, path };

		assert_int_equal(fixture_run_cmd(cmd_compare, "compare", args, 3, NULL), CMD_ERROR);
	}
}

/*
 * A known change (a kernel update that makes access 30% slower for good):
 * a regression against the runs before it; marked, the gate reads from it on
 * (no-history until 5 runs), then the new level is ok.
 */
static void test_mark_change(void **state)
{
	struct backend *b = need(state);
	struct gate_result g;
	struct err e = ERR_INIT;
	char dbarg[600];
	size_t i;

	for (i = 0; i < 12; i++)
		record(b, (time_t)(1000 + 100 * i), drift[i], true, true);
	for (i = 0; i < 2; i++)
		record(b, (time_t)(3000 + 100 * i), 1.3 * drift[i], true, true);
	assert_int_equal(gate_night(b, 4000, 1.3, &g), GATE_V_REGRESSION);
	gate_result_release(&g);
	snprintf(dbarg, sizeof(dbarg), "--db=%s", b->db);
	{
		const char *nowhy[] = { dbarg, "--mark-change=13" };
		const char *norun[] = { dbarg, "--mark-change=999", "--why=kernel 6.19" };
		const char *badwhy[] = { dbarg, "--mark-change=13", "--why=" };
		const char *mark[] = { dbarg, "--mark-change=13", "--why=kernel 6.19" };

		assert_int_equal(fixture_run_cmd(cmd_history, "history", nowhy, 2, NULL), CMD_USAGE);
		assert_int_equal(fixture_run_cmd(cmd_history, "history", badwhy, 3, NULL), CMD_USAGE);
		assert_int_equal(fixture_run_cmd(cmd_history, "history", norun, 3, NULL), CMD_ERROR);
		assert_int_equal(fixture_run_cmd(cmd_history, "history", mark, 3, NULL), CMD_OK);
	}
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs WHERE id = 13 AND change_why = 'kernel 6.19'"), 1);

	assert_int_equal(gate_night(b, 4000, 1.3, &g), GATE_V_NO_HISTORY);
	assert_int_equal(find_kind(&g, "memset access_ns")->nhist, 2);
	gate_result_release(&g);
	for (i = 2; i < 8; i++)
		record(b, (time_t)(3000 + 100 * i), 1.3 * drift[i], true, true);
	assert_int_equal(gate_night(b, 4000, 1.3 * 1.01, &g), GATE_V_OK);
	assert_int_equal(find_kind(&g, "memset access_ns")->nhist, 8);
	gate_result_release(&g);
	{
		const char *changes[] = { dbarg, "--changes" };
		char outp[700], *text;
		size_t len;

		snprintf(outp, sizeof(outp), "%s/changes.txt", b->dir);
		assert_int_equal(fixture_run_cmd(cmd_history, "history", changes, 2, outp), CMD_OK);
		text = fixture_slurp(outp, &len);
		assert_non_null(text);
		if (!strstr(text, "host lab-a, memset access_ns: 20 run(s), 1 change point(s)") ||
		    !strstr(text, "  from run 13 (") || !strstr(text, "marked: run 13 (") ||
		    !strstr(text, "is the first after: kernel 6.19"))
			fail_msg("history --changes:\n%s", text);
		free(text);
	}
	/* the fleet page: the host's latest verdict and its marked change */
	{
		struct results *r = night(5000, 1.3);
		struct fleet_opts fo = { NULL, 0, 20 };
		char *buf = NULL;
		size_t len = 0;
		FILE *m;

		assert_int_equal(history_gate(b->db, r, NULL, &gopts, &g, NULL, &e), 0);
		assert_int_equal(history_append_gated(b->db, r, true, &g, &e), 0);
		gate_result_release(&g);
		fixture_results_free(r);
		m = open_memstream(&buf, &len);
		assert_int_equal(fleet_html(b->db, &fo, m, &e), 0);
		fclose(m);
		if (!strstr(buf, "complete, gate passed (history gate: ok)") ||
		    !strstr(buf, "Known changes (the history gate reads from the newest on)") ||
		    !strstr(buf, "run 13 (") || !strstr(buf, "): kernel 6.19</li>"))
			fail_msg("fleet page without the verdict or the mark");
		free(buf);
	}
}

/* history --effects: each split effect pooled over the runs, from the newest marked change on */
static void test_effects_pool(void **state)
{
	struct backend *b = need(state);
	struct pooled_effect *pe = NULL;
	struct err e = ERR_INIT;
	size_t npe = 0, i;

	/* no database yet (SQLite): said so; PostgreSQL: an empty one, nothing to pool */
	if (b->kind == HISTDB_SQLITE) {
		assert_int_equal(history_effects_pool(b->db, NULL, &pe, &npe, &e), -ENOENT);
		err_clear(&e);
	} else {
		assert_int_equal(history_effects_pool(b->db, NULL, &pe, &npe, &e), 0);
	}
	assert_int_equal(npe, 0);
	for (i = 0; i < 6; i++)
		record(b, (time_t)(1000 + 100 * i), drift[i], true, true);
	if (history_effects_pool(b->db, "lab-a", &pe, &npe, &e))
		fail_msg("%s", e.msg);
	assert_true(npe > 0);
	for (i = 0; i < npe; i++) {
		assert_string_equal(pe[i].host, "lab-a");
		assert_int_equal(pe[i].k, 6);
		assert_true(pe[i].lo_pct <= pe[i].est_pct && pe[i].est_pct <= pe[i].hi_pct);
		assert_true(pe[i].i2_pct >= 0 && pe[i].i2_pct <= 100 && pe[i].tau_pct >= 0);
		assert_int_equal(pe[i].from_run, 1);
		assert_int_equal(pe[i].to_run, 6);
	}
	free(pe);
	/* marked: from run 4 on */
	assert_int_equal(history_mark_change(b->db, 4, "QEMU 9.2", &e), 0);
	assert_int_equal(history_effects_pool(b->db, "lab-a", &pe, &npe, &e), 0);
	assert_true(npe > 0);
	assert_int_equal(pe[0].k, 3);
	assert_int_equal(pe[0].from_run, 4);
	free(pe);
	assert_int_equal(history_mark_change(b->db, 99, "x", &e), -ENOENT);
}

/* JUnit: regression a failure, suspect a skipped case (a failure with --fail-on=suspect) */
static void test_junit_cases(void **state)
{
	struct results *r = fixture_results();
	struct gate_opts o = gopts;
	struct gate_point p = { .kind = "memset access_ns", .dir = DIR_LOWER, .se_log = 0.01, .ncells = 4 };
	double y[12] = { 0.01, -0.01, 0.02, 0, -0.02, 0.01, 0, -0.01, 0.02, 0, 0.01, -0.01 }, se[12];
	struct report_input in = { .res = r };
	struct gate_result g;
	struct err e = ERR_INIT;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *m;

	(void)state;
	for (i = 0; i < 12; i++)
		se[i] = 0.01;
	gate_result_init(&g, &o);
	p.mean_log = log(1.3);
	assert_int_equal(gate_add_kind(&g, &o, &p, y, se, 12, &e), 0);
	snprintf(p.kind, sizeof(p.kind), "memset fault_ns_per_4k");
	assert_int_equal(gate_add_kind(&g, &o, &p, y, se, 3, &e), 0);
	gate_finish(&g);
	in.gate = &g;
	m = open_memstream(&buf, &len);
	assert_int_equal(report_render(&in, REPORT_JUNIT, m, &e), 0);
	fclose(m);
	assert_non_null(strstr(buf, "classname=\"thpeval.history_gate\" name=\"memset access_ns\""));
	if (!strstr(buf, "<skipped message=\"suspect: this run +29.7%"))
		fail_msg("%s", buf);
	assert_non_null(strstr(buf, "<skipped message=\"no-history: 3 earlier run(s)"));
	free(buf);
	g.fail_on = GATE_FAIL_ON_SUSPECT;
	buf = NULL;
	m = open_memstream(&buf, &len);
	assert_int_equal(report_render(&in, REPORT_JUNIT, m, &e), 0);
	fclose(m);
	assert_non_null(strstr(buf, "<failure type=\"suspect\""));
	free(buf);
	gate_result_release(&g);
	fixture_results_free(r);
}

#define BOTH(f) \
	{ "sqlite/" #f, f, setup, teardown, &sqlite_be }, { "postgresql/" #f, f, setup, teardown, &pg_be }

int main(void)
{
	/* a cmocka pattern: tests/cli/history_db.sh runs the postgresql/ cases on the server it started */
	const char *filter = getenv("THPEVAL_TEST_FILTER");
	const struct CMUnitTest tests[] = {
		BOTH(test_points_stored),
		BOTH(test_gate_series),
		BOTH(test_fast_then_normal),
		BOTH(test_runs_without_points),
		BOTH(test_cmd_compare_history),
		BOTH(test_mark_change),
		BOTH(test_effects_pool),
		cmocka_unit_test(test_junit_cases),
	};

	if (filter && *filter)
		cmocka_set_test_filter(filter);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
