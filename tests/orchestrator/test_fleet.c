/*
 * tests for orchestrator/report/fleet.c (`thpeval report --fleet`): a history
 * of two hosts imported from the fixtures under other host names (one of
 * them "web<1>&co", one whose last run was interrupted) rendered to the fleet
 * page, whose structure each case checks: the hosts' sections and summary
 * rows, their split rows with the effects or "not available", the trend
 * charts, the escaping of the host name, a named host without runs, --last,
 * and fleet.html under --out. Each case runs on SQLite (a temporary file) and
 * on PostgreSQL when THPEVAL_TEST_PG=postgresql://... names a database it may
 * fill and empty (tests/cli/history_db.sh starts one); skipped with the reason
 * without it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "orchestrator/model/results.h"
#include "orchestrator/model/results_load.h"
#include "orchestrator/report/fleet.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/history/history.h"
#include "tests/orchestrator/fixture.h"

#define FIX_TCG "tests/orchestrator/fixtures/results-tcg-2x2.json"
#define FIX_FULL "tests/orchestrator/fixtures/results-full.json"
#define WEB "web<1>&co"
#define PG_ENV "THPEVAL_TEST_PG"

struct backend {
	const char *name;
	bool pg;
	char dir[256];
	char db[4300];		/* "" when not available */
};

static struct backend sqlite_be = { .name = "sqlite" };
static struct backend pg_be = { .name = "postgresql", .pg = true };

static void pg_wipe(const struct backend *b)
{
	struct histdb_target t;
	struct histdb *h;
	struct err e = ERR_INIT;

	if (histdb_target_parse(b->db, &t, &e) || histdb_open(&t, true, &h, &e) ||
	    histdb_exec(h, "DROP TABLE IF EXISTS gate_points, metrics, runs, schema_version CASCADE", "change", &e))
		fail_msg("wipe: %s", e.msg);
	histdb_close(h);
}

static void import(const struct backend *b, const char *fixture, const char *host)
{
	struct history_import_opts o = { host, true, NULL };
	char path[4096], *paths[1] = { path };
	struct err e = ERR_INIT;
	FILE *devnull = fopen("/dev/null", "w");

	assert_non_null(devnull);
	fixture_path(path, sizeof(path), fixture);
	if (history_import(b->db, paths, 1, &o, devnull, &e))
		fail_msg("import %s as %s: %s (run from the repository root)", fixture, host, e.msg);
	fclose(devnull);
}

/* a fixture recorded again days later under host, its status set */
static void append_later(const struct backend *b, const char *fixture, const char *host, int days, const char *status)
{
	struct results *r = fixture_results_at(fixture);
	struct err e = ERR_INIT;

	snprintf(r->host.name, sizeof(r->host.name), "%s", host);
	snprintf(r->status, sizeof(r->status), "%s", status);
	r->started += (time_t)days * 86400;
	if (history_append(b->db, r, true, &e))
		fail_msg("append: %s", e.msg);
	fixture_results_free(r);
}

/*
 * The history: WEB has the TCG run and the same run a day later (complete);
 * db-2 has the TCG run and, two days later, the full fixture's interrupted run.
 */
static int setup(void **state)
{
	struct backend *b = *state;
	const char *pg = getenv(PG_ENV);

	snprintf(b->dir, sizeof(b->dir), "/tmp/thpeval-test-fleet-XXXXXX");
	if (!mkdtemp(b->dir))
		return -1;
	b->db[0] = '\0';
	if (!b->pg)
		snprintf(b->db, sizeof(b->db), "%s/history.db", b->dir);
	else if (pg && *pg)
		snprintf(b->db, sizeof(b->db), "%s", pg);
	if (!b->db[0])
		return 0;
	if (b->pg)
		pg_wipe(b);
	import(b, FIX_TCG, WEB);
	append_later(b, FIX_TCG, WEB, 1, "complete");
	import(b, FIX_TCG, "db-2");
	append_later(b, FIX_FULL, "db-2", 2, "interrupted");
	return 0;
}

static int teardown(void **state)
{
	struct backend *b = *state;
	char cmd[512];

	if (b->pg && b->db[0])
		pg_wipe(b);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", b->dir);
	return system(cmd) == 0 ? 0 : -1;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (; (hay = strstr(hay, needle)); hay += strlen(needle))
		n++;
	return n;
}

/* the text between two markers (for a host's section), NULL if either is absent */
static char *between(const char *s, const char *from, const char *to)
{
	const char *a = strstr(s, from), *z;

	if (!a)
		return NULL;
	z = to ? strstr(a + strlen(from), to) : NULL;
	return z ? strndup(a, (size_t)(z - a)) : strdup(a);
}

struct fleet_case {
	const char *name;
	const char *hosts[3];
	size_t nhosts;
	unsigned last;
	const char *present[8];
	const char *absent[4];
	size_t split_rows, trends;
};

static const struct fleet_case cases[] = {
	{ "every_host", { NULL }, 0, 0,
	  { "<h2>host web&lt;1&gt;&amp;co</h2>", "<h2>host db-2</h2>", "+71.1% [+26.8, +88.6]",
	    "not available</td><td>needs host-cold cells", "The last run did not complete: it is interrupted.",
	    "complete, gate passed", ">interrupted</td>", "over the last 2 of 2 run(s)" },
	  { "web<1>", "<script", "https:", "url(" }, 20, 2 },
	{ "named_hosts_in_order_one_without_runs", { "ghost", WEB }, 2, 0,
	  { "<h2>host ghost</h2>", "No run of this host is recorded.", "<h2>host web&lt;1&gt;&amp;co</h2>",
	    ">no run</td>" },
	  { "host db-2" }, 10, 1 },
	{ "last_1", { "db-2" }, 1, 1,
	  { "over the last 1 of 2 run(s)", "No headline effect is available in these runs" },
	  { WEB }, 10, 0 },
};

static void check_page(const struct fleet_case *c, const char *page)
{
	size_t i;

	for (i = 0; i < sizeof(c->present) / sizeof(c->present[0]) && c->present[i]; i++)
		if (!strstr(page, c->present[i]))
			fail_msg("%s: the page lacks '%s'", c->name, c->present[i]);
	for (i = 0; i < 4 && c->absent[i]; i++)
		if (strstr(page, c->absent[i]))
			fail_msg("%s: the page has '%s'", c->name, c->absent[i]);
	assert_int_equal(count(page, "<tr class=\"split-row\">"), c->split_rows);
	assert_int_equal(count(page, "<svg class=\"trend\""), c->trends);
	assert_int_equal(count(page, "<section class=\"host\""), c->nhosts ? c->nhosts : 2);
	assert_non_null(strstr(page, "</html>\n"));
}

static void test_cases(void **state)
{
	struct backend *b = *state;
	size_t i;

	if (!b->db[0]) {
		print_message("skipped: no PostgreSQL to test against: set " PG_ENV "=postgresql://... "
			      "(tests/cli/history_db.sh starts one)\n");
		skip();
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct fleet_case *c = &cases[i];
		struct fleet_opts o = { c->hosts, c->nhosts, c->last };
		struct err e = ERR_INIT;
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);

		assert_non_null(m);
		if (fleet_html(b->db, &o, m, &e))
			fail_msg("%s: %s", c->name, e.msg);
		fclose(m);
		check_page(c, buf);
		free(buf);
	}
}

/* each host's own section holds its own rows: WEB's split has the TCG effects, db-2's latest none available */
static void test_sections(void **state)
{
	struct backend *b = *state;
	struct fleet_opts o = { NULL, 0, 0 };
	struct err e = ERR_INIT;
	char *buf = NULL, *web, *db2, *split;
	size_t len = 0;
	FILE *m;

	if (!b->db[0]) {
		print_message("skipped: no PostgreSQL to test against: set " PG_ENV "=postgresql://...\n");
		skip();
	}
	m = open_memstream(&buf, &len);
	assert_non_null(m);
	if (fleet_html(b->db, &o, m, &e))
		fail_msg("%s", e.msg);
	fclose(m);
	/* hosts sorted by name: db-2 before web<1>&co */
	db2 = between(buf, "<h2>host db-2</h2>", "<h2>host web");
	web = between(buf, "<h2>host web&lt;1&gt;&amp;co</h2>", NULL);
	assert_non_null(db2);
	assert_non_null(web);
	assert_int_equal(count(db2, "<tr class=\"split-row\">"), 10);
	assert_int_equal(count(web, "<tr class=\"split-row\">"), 10);
	split = between(db2, "<table class=\"split\">", "</table>");
	assert_non_null(split);
	/* its latest run is the interrupted one: no effect there, the TCG run's only in its trend */
	assert_null(strstr(split, "+71.1% [+26.8, +88.6]"));
	assert_int_equal(count(split, ">not available</td>"), 10);
	assert_int_equal(count(db2, "<circle "), 2);
	free(split);
	assert_non_null(strstr(db2, "Some CPU @ 2.0GHz"));
	assert_non_null(strstr(web, "+71.1% [+26.8, +88.6]"));
	assert_non_null(strstr(web, "+4.9% [-49.8, +39.7] (no measurable effect)"));
	assert_non_null(strstr(web, "AMD EPYC"));
	assert_int_equal(count(web, "<circle "), 4);		/* two effects over two runs */
	free(db2);
	free(web);
	free(buf);
}

static void test_write(void **state)
{
	struct backend *b = *state;
	struct fleet_opts o = { NULL, 0, 0 };
	struct err e = ERR_INIT;
	char dir[512], path[600];
	struct stat st;

	if (!b->db[0]) {
		print_message("skipped: no PostgreSQL to test against: set " PG_ENV "=postgresql://...\n");
		skip();
	}
	snprintf(dir, sizeof(dir), "%s/out/sub", b->dir);
	if (fleet_write(b->db, &o, dir, &e))
		fail_msg("%s", e.msg);
	snprintf(path, sizeof(path), "%s/" FLEET_FILE, dir);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 1000);
}

/* a database with no thpeval history yet is an error that names it, not an empty page */
static void test_no_database(void **state)
{
	struct backend *b = *state;
	struct fleet_opts o = { NULL, 0, 0 };
	struct err e = ERR_INIT;
	char db[600];
	FILE *m = fopen("/dev/null", "w");

	assert_non_null(m);
	snprintf(db, sizeof(db), "%s/none.db", b->dir);
	assert_true(fleet_html(db, &o, m, &e) < 0);
	assert_non_null(strstr(e.msg, "none.db"));
	fclose(m);
}

int main(void)
{
	const struct CMUnitTest sqlite_tests[] = {
		cmocka_unit_test_prestate_setup_teardown(test_cases, setup, teardown, &sqlite_be),
		cmocka_unit_test_prestate_setup_teardown(test_sections, setup, teardown, &sqlite_be),
		cmocka_unit_test_prestate_setup_teardown(test_write, setup, teardown, &sqlite_be),
		cmocka_unit_test_prestate_setup_teardown(test_no_database, setup, teardown, &sqlite_be),
	};
	const struct CMUnitTest pg_tests[] = {
		cmocka_unit_test_prestate_setup_teardown(test_cases, setup, teardown, &pg_be),
		cmocka_unit_test_prestate_setup_teardown(test_sections, setup, teardown, &pg_be),
		cmocka_unit_test_prestate_setup_teardown(test_write, setup, teardown, &pg_be),
	};
	int failed = cmocka_run_group_tests_name("sqlite", sqlite_tests, NULL, NULL);

	return failed + cmocka_run_group_tests_name("postgresql", pg_tests, NULL, NULL);
}
