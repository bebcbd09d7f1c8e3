/*
 * tests for orchestrator/history/history.c and `thpeval history` (cmd/history.c),
 * each on both backends: append (once per run key), trend (all hosts, one
 * host), baseline choice (same host and setup), import of results.json files
 * and directories (idempotent), the migration table and upgrades from every
 * older version, a newer or foreign schema refused. SQLite only: file modes,
 * a locked and a corrupt file, and an in-place upgrade of a history written by
 * the thpeval before schema 2 (fixtures/history-v1.sql). The PostgreSQL cases
 * need THPEVAL_TEST_PG=postgresql://... (a database they may fill and empty;
 * tests/cli/history_db.sh starts a server and sets it) and are skipped with
 * the reason without it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/textesc.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/model/results.h"
#include "orchestrator/model/results_load.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/history/history.h"
#include "tests/orchestrator/fixture.h"

#define FIXTURE_V1 "tests/orchestrator/fixtures/history-v1.sql"

/* ---- the two backends ------------------------------------------------------------- */

struct backend {
	const char *name;
	enum histdb_kind kind;
	char dir[256];			/* scratch directory (both backends: import files) */
	char db[4300];			/* the --db value; "" when this backend is not available */
};

static struct backend sqlite_be = { .name = "sqlite", .kind = HISTDB_SQLITE };
static struct backend pg_be = { .name = "postgresql", .kind = HISTDB_POSTGRES };

#define PG_ENV "THPEVAL_TEST_PG"

static void db_exec(const struct backend *b, const char *sql)
{
	struct histdb_target t;
	struct histdb *h;
	struct err e = ERR_INIT;

	if (histdb_target_parse(b->db, &t, &e) || histdb_open(&t, true, &h, &e) || histdb_exec(h, sql, "change", &e))
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

static void pg_wipe(const struct backend *b)
{
	db_exec(b, "DROP TABLE IF EXISTS gate_points, metrics, runs, schema_version, songs CASCADE");
}

static int setup(void **state)
{
	struct backend *b = *state;
	const char *pg = getenv(PG_ENV);

	snprintf(b->dir, sizeof(b->dir), "/tmp/thpeval-test-history-XXXXXX");
	if (!mkdtemp(b->dir))
		return -1;
	b->db[0] = '\0';
	if (b->kind == HISTDB_SQLITE) {
		snprintf(b->db, sizeof(b->db), "%s/history.db", b->dir);
	} else if (pg && *pg) {
		snprintf(b->db, sizeof(b->db), "%s", pg);
		pg_wipe(b);
	}
	return 0;
}

static int teardown(void **state)
{
	struct backend *b = *state;

	if (b->kind == HISTDB_POSTGRES && b->db[0])
		pg_wipe(b);
	fixture_rm_rf(b->dir);
	return 0;
}

/* the backend of this case, or skip it with the reason */
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

/* ---- fixtures --------------------------------------------------------------------- */

/* FIXTURE_2X2 as host lab-a */
static struct results *load_fixture(void)
{
	struct results *r = fixture_results();

	snprintf(r->host.name, sizeof(r->host.name), "lab-a");
	return r;
}

/* the trend table as a string; *rc its return */
static char *trend(const struct backend *b, const char *workload, const char *host, unsigned last, int *rc,
		   struct err *e)
{
	struct history_query q = { workload, last, host };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	*rc = history_print_trend(b->db, &q, m, e);
	fclose(m);
	return buf;
}

static void append(const struct backend *b, const struct results *r, bool passed)
{
	struct err e = ERR_INIT;

	if (history_append(b->db, r, passed, &e))
		fail_msg("append: %s", e.msg);
}

/*
 * Runs of host lab-a: A (kernel k1, passed, t=1000), B (kernel k2, passed,
 * t=2000), C (kernel k2, gate failed, t=3000), D (other settings, passed,
 * t=4000); and E of host lab-b (as B, t=4500).
 */
static void append_runs(const struct backend *b, struct results *r)
{
	snprintf(r->host.kernel, sizeof(r->host.kernel), "k1");
	r->started = 1000;
	append(b, r, true);
	snprintf(r->host.kernel, sizeof(r->host.kernel), "k2");
	r->started = 2000;
	append(b, r, true);
	r->started = 3000;
	append(b, r, false);
	r->started = 4000;
	r->settings.reps = 9;
	append(b, r, true);
	r->settings.reps = 2;
	snprintf(r->host.name, sizeof(r->host.name), "lab-b");
	r->started = 4500;
	append(b, r, true);
	snprintf(r->host.name, sizeof(r->host.name), "lab-a");
}

/* ---- the run key ------------------------------------------------------------------------- */

static void set_host(struct results *r, const char *name, const char *cpu, const char *kernel, long long started)
{
	snprintf(r->host.name, sizeof(r->host.name), "%s", name);
	snprintf(r->host.cpu_model, sizeof(r->host.cpu_model), "%s", cpu);
	snprintf(r->host.kernel, sizeof(r->host.kernel), "%s", kernel);
	r->started = (time_t)started;
}

/* two runs never share a key; a plain run keeps the key an older thpeval gave it */
static void test_run_key(void **state)
{
	static const struct {
		const char *name;
		const char *host[2], *cpu[2], *kernel[2];	/* two runs, started at the same time */
		const char *key0;				/* the first one's key */
	} cases[] = {
		{ "plain: the legacy key", { "hv1", "hv2" }, { "EPYC", "EPYC" }, { "6.1", "6.1" },
		  "host=hv1;cpu=EPYC;kernel=6.1;started_unix=7" },
		{ "host takes the cpu part", { "hv1;cpu=X", "hv1" }, { "EPYC", "X;cpu=EPYC" }, { "6.1", "6.1" },
		  "v2;host=hv1\\;cpu\\=X;cpu=EPYC;kernel=6.1;started_unix=7" },
		{ "cpu takes the kernel part", { "hv1", "hv1" }, { "X;kernel=6.1", "X" }, { "5", "6.1;kernel=5" },
		  "v2;host=hv1;cpu=X\\;kernel\\=6.1;kernel=5;started_unix=7" },
		{ "backslash before a separator", { "a\\", "a" }, { ";cpu=b", "\\;cpu=b" }, { "k", "k" },
		  "v2;host=a\\\\;cpu=\\;cpu\\=b;kernel=k;started_unix=7" },
		{ "escaped text against a legacy key", { "a\\;cpu=b", "a" }, { "c", "b;cpu=c" }, { "k", "k" },
		  "v2;host=a\\\\\\;cpu\\=b;cpu=c;kernel=k;started_unix=7" },
		{ "longest parts, all escaped", { NULL, NULL }, { NULL, NULL }, { NULL, NULL }, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static struct results a, b;
		char ka[HISTORY_RUN_KEY_MAX], kb[HISTORY_RUN_KEY_MAX];

		if (cases[i].host[0]) {
			set_host(&a, cases[i].host[0], cases[i].cpu[0], cases[i].kernel[0], 7);
			set_host(&b, cases[i].host[1], cases[i].cpu[1], cases[i].kernel[1], 7);
		} else {
			/* every part full of separators: the key still whole, and unlike one a character shorter */
			memset(&a.host, '=', sizeof(a.host));
			a.host.name[sizeof(a.host.name) - 1] = a.host.cpu_model[sizeof(a.host.cpu_model) - 1] = '\0';
			a.host.kernel[sizeof(a.host.kernel) - 1] = '\0';
			a.started = -9223372036854775807LL;
			b = a;
			b.host.kernel[sizeof(b.host.kernel) - 2] = '\0';
		}
		history_run_key(&a, ka, sizeof(ka));
		history_run_key(&b, kb, sizeof(kb));
		if (!strcmp(ka, kb))
			fail_msg("%s: both keyed '%s'", cases[i].name, ka);
		if (cases[i].key0 && strcmp(ka, cases[i].key0))
			fail_msg("%s: key '%s', want '%s'", cases[i].name, ka, cases[i].key0);
		if (!cases[i].key0 && !strstr(ka, ";started_unix=-9223372036854775807"))
			fail_msg("%s: key cut: '%s'", cases[i].name, ka);
	}
}

/*
 * The collision of the unescaped key: two runs whose host and CPU split the
 * same text differently are both recorded; and a run an older thpeval
 * recorded under that key is still known when imported again, without
 * taking the other run for it.
 */
/* the setup key: --emulator makes a setup of its own; without it the key is an older thpeval's */
static void test_settings_key_emulator(void **state)
{
	static struct run_settings s;
	char plain[1024], one[1024], ab[1024];

	(void)state;
	memset(&s, 0, sizeof(s));
	snprintf(s.host_thp_list, sizeof(s.host_thp_list), "never,always");
	snprintf(s.guest_thp_list, sizeof(s.guest_thp_list), "never,always");
	snprintf(s.workloads, sizeof(s.workloads), "memset");
	s.reps = 3;
	history_settings_key(&s, plain, sizeof(plain));
	assert_null(strstr(plain, "emulator"));
	assert_string_equal(plain + strlen(plain) - 4, "uri=");
	snprintf(s.emulator, sizeof(s.emulator), "/usr/bin/qemu-system-x86_64");
	history_settings_key(&s, one, sizeof(one));
	snprintf(s.emulator, sizeof(s.emulator), "/usr/bin/qemu-system-x86_64,/opt/slow-qemu");
	history_settings_key(&s, ab, sizeof(ab));
	assert_string_not_equal(plain, one);
	assert_string_not_equal(one, ab);
	assert_string_equal(ab + strlen(plain), ";emulator=/usr/bin/qemu-system-x86_64,/opt/slow-qemu");
}

static void test_run_key_collision(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture();

	set_host(r, "hv1;cpu=X", "EPYC", "6.1", 1000);
	append(b, r, true);
	set_host(r, "hv1", "X;cpu=EPYC", "6.1", 1000);
	append(b, r, true);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 2);
	assert_int_equal(db_count(b, "SELECT count(DISTINCT run_key) FROM runs"), 2);
	/* as an older thpeval keyed the first: host=hv1;cpu=X;cpu=EPYC;... */
	db_exec(b, "DELETE FROM metrics");
	db_exec(b, "DELETE FROM runs WHERE host_name = 'hv1'");
	db_exec(b, "UPDATE runs SET run_key = 'host=hv1;cpu=X;cpu=EPYC;kernel=6.1;started_unix=1000'");
	set_host(r, "hv1;cpu=X", "EPYC", "6.1", 1000);
	append(b, r, true);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 1);	/* known by its old key */
	set_host(r, "hv1", "X;cpu=EPYC", "6.1", 1000);
	append(b, r, true);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 2);	/* not taken for it */
	append(b, r, true);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 2);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs WHERE host_name = 'hv1' AND cpu_model = 'X;cpu=EPYC'"
				     " AND run_key LIKE 'v2;%'"), 1);
	fixture_results_free(r);
}

/* ---- both backends -------------------------------------------------------------------- */

static void test_append(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture();

	append(b, r, true);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 1);
	/* 4 cells x (12 metrics + 2 coverage) */
	assert_int_equal(db_count(b, "SELECT count(*) FROM metrics"), 56);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs WHERE host_kernel = '6.18.44-fc-v782'"
				     " AND hypervisor_version = '7.2.22' AND libvirt_version = '9.0.0'"
				     " AND thpeval_version = '0.1.0' AND cpu_model = 'AMD EPYC' AND accel = 'tcg'"
				     " AND image_id = 'a8d6f632b0a8bec5' AND started_unix = 1795989451"
				     " AND gate_passed = 1 AND settings LIKE 'host_thp=never,always;%'"
				     " AND settings NOT LIKE '%seed%' AND length(results_json) > 10000"
				     " AND host_name = 'lab-a' AND run_key = 'host=lab-a;cpu=AMD EPYC;"
				     "kernel=6.18.44-fc-v782;started_unix=1795989451'"), 1);
	/* the doubles come back: the geometric mean of the cell's access times */
	assert_int_equal(db_count(b, "SELECT count(*) FROM metrics WHERE metric = 'access_ns' AND target = 'guest'"
				     " AND host_thp = 'always' AND guest_thp = 'always'"
				     " AND abs(mean - 353.14967137514265) < 1e-9"), 1);
	assert_int_equal(db_count(b, "SELECT count(*) FROM schema_version"), HISTORY_SCHEMA_VERSION);
	assert_int_equal(db_count(b, "SELECT max(version) FROM schema_version"), HISTORY_SCHEMA_VERSION);
	/* the same run again: nothing added, whatever its gate says now */
	append(b, r, false);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 1);
	assert_int_equal(db_count(b, "SELECT count(*) FROM metrics"), 56);
	assert_int_equal(db_count(b, "SELECT gate_passed FROM runs"), 1);
	/* another host with the same start time is another run */
	snprintf(r->host.name, sizeof(r->host.name), "lab-b");
	append(b, r, true);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 2);
	fixture_results_free(r);
}

static void test_trend(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture();
	struct err e = ERR_INIT;
	char *out;
	int rc;

	append_runs(b, r);
	out = trend(b, NULL, NULL, 0, &rc, &e);
	if (rc)
		fail_msg("%s", e.msg);
	assert_non_null(strstr(out, "the last 5 of 5 run(s), oldest first"));
	assert_non_null(strstr(out, "cell always/always/memset"));
	assert_non_null(strstr(out, "cell never/never/memset"));
	/* the runs are listed with their host, gate and the headline metrics */
	assert_non_null(strstr(out, "      1  1970-01-01 00:16  lab-a        k1 "));
	assert_non_null(strstr(out, "      2  1970-01-01 00:33  lab-a        k2 "));
	assert_non_null(strstr(out, "      5  1970-01-01 01:15  lab-b        k2 "));
	assert_non_null(strstr(out, " FAIL  "));
	/* geometric means, their intervals on the log scale as a ratio */
	assert_non_null(strstr(out, "5142 ±4.4%         353.1 ±22.0%"));
	free(out);
	/* --last=2: the newest two only */
	out = trend(b, NULL, NULL, 2, &rc, &e);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "the last 2 of 5 run(s)"));
	assert_null(strstr(out, "  k1 "));
	free(out);
	/* --host: that host's runs only, --last counted among them */
	out = trend(b, NULL, "lab-b", 0, &rc, &e);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "the last 1 of 1 run(s) of host lab-b, oldest first"));
	assert_null(strstr(out, "lab-a "));
	free(out);
	out = trend(b, NULL, "lab-a", 2, &rc, &e);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "the last 2 of 4 run(s) of host lab-a"));
	assert_non_null(strstr(out, "      4  1970-01-01 01:06  lab-a "));
	assert_null(strstr(out, "lab-b "));
	free(out);
	out = trend(b, NULL, "nosuch", 0, &rc, &e);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "no runs of host nosuch recorded in '"));
	free(out);
	/* --workload */
	out = trend(b, "memset", NULL, 0, &rc, &e);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "cell always/never/memset"));
	free(out);
	out = trend(b, "nosuch", NULL, 0, &rc, &e);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "no cells of workload nosuch"));
	free(out);
	fixture_results_free(r);
}

static void test_baseline_last(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture(), *cur = load_fixture(), *base = malloc(sizeof(*base));
	struct history_run_ref ref;
	struct err e = ERR_INIT;

	/* nothing recorded yet: no baseline (SQLite: and no file created by asking) */
	assert_int_equal(history_baseline_last(b->db, cur, HISTORY_SAME_SETUP, &ref, base, &e), -ENOENT);
	if (b->kind == HISTDB_SQLITE)
		assert_int_equal(access(b->db, F_OK), -1);
	append_runs(b, r);
	/* current: host lab-a, kernel k1, same settings as A/B/C */
	snprintf(cur->host.kernel, sizeof(cur->host.kernel), "k1");
	cur->started = 5000;
	err_clear(&e);
	if (history_baseline_last(b->db, cur, HISTORY_SAME_SETUP, &ref, base, &e))
		fail_msg("%s", e.msg);
	/* C: the newest complete run of the same host and setup, though it failed its gate (no
	 * ratchet: a baseline that had to pass stays a fast night's); E is another host, D has
	 * other settings */
	assert_int_equal(ref.id, 3);
	assert_int_equal(base->started, 3000);
	assert_string_equal(base->host.kernel, "k2");
	assert_string_equal(base->host.name, "lab-a");
	assert_int_equal(base->ncells, 4);
	assert_non_null(strstr(ref.desc, "run 3 of '"));
	assert_non_null(strstr(ref.desc, "kernel k2"));
	results_release(base);
	/* the same stack too: A (kernel k1) */
	if (history_baseline_last(b->db, cur, HISTORY_SAME_STACK, &ref, base, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(ref.id, 1);
	assert_int_equal(base->started, 1000);
	results_release(base);
	/* other settings: D */
	cur->settings.reps = 9;
	assert_int_equal(history_baseline_last(b->db, cur, HISTORY_SAME_SETUP, &ref, base, &e), 0);
	assert_int_equal(ref.id, 4);
	results_release(base);
	cur->settings.reps = 2;
	/* host lab-b: its own run E */
	snprintf(cur->host.name, sizeof(cur->host.name), "lab-b");
	assert_int_equal(history_baseline_last(b->db, cur, HISTORY_SAME_SETUP, &ref, base, &e), 0);
	assert_int_equal(ref.id, 5);
	results_release(base);
	/* a host with no runs: none, though lab-a and lab-b have the same CPU and setup */
	snprintf(cur->host.name, sizeof(cur->host.name), "lab-c");
	assert_int_equal(history_baseline_last(b->db, cur, HISTORY_SAME_SETUP, &ref, base, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "no baseline in '"));
	assert_int_equal(base->ncells, 0);
	/* another CPU: none */
	err_clear(&e);
	snprintf(cur->host.name, sizeof(cur->host.name), "lab-a");
	snprintf(cur->host.cpu_model, sizeof(cur->host.cpu_model), "Intel Xeon");
	assert_int_equal(history_baseline_last(b->db, cur, HISTORY_SAME_SETUP, &ref, base, &e), -ENOENT);
	free(base);
	fixture_results_free(r);
	fixture_results_free(cur);
}

/* r written as DIR/REL/results.json */
static void write_run(const struct backend *b, const struct results *r, const char *rel)
{
	char path[4600], cmd[4700];
	struct err e = ERR_INIT;

	snprintf(path, sizeof(path), "%s/%s", b->dir, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
	assert_int_equal(system(cmd), 0);
	strcat(path, "/results.json");
	if (results_write_json(r, path, &e))
		fail_msg("%s", e.msg);
}

static int import(const struct backend *b, const char *const *rel, size_t n, const char *host, bool passed,
		  char **out, struct err *e)
{
	struct history_import_opts o = { host, passed, NULL };
	char *paths[8];
	size_t i, len = 0;
	FILE *m = open_memstream(out, &len);
	int rc;

	assert_true(n <= 8);
	for (i = 0; i < n; i++) {
		paths[i] = malloc(4600);
		snprintf(paths[i], 4600, "%s/%s", b->dir, rel[i]);
	}
	rc = history_import(b->db, paths, n, &o, m, e);
	fclose(m);
	for (i = 0; i < n; i++)
		free(paths[i]);
	return rc;
}

static void test_import(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture(), *cur = load_fixture(), *base = malloc(sizeof(*base));
	static const char *const fetched[] = { "fetched" };
	struct history_run_ref ref;
	struct err e = ERR_INIT;
	char *out = NULL, bad[4600];
	int rc;

	/* what a controller fetched from two hosts, and one run of a third */
	r->started = 1000;
	write_run(b, r, "fetched/lab-a/2031-01-01/nightly");
	r->started = 2000;
	write_run(b, r, "fetched/lab-a/2031-01-02/nightly");
	snprintf(r->host.name, sizeof(r->host.name), "lab-b");
	write_run(b, r, "fetched/lab-b/2031-01-02");
	snprintf(r->host.name, sizeof(r->host.name), "node-7");
	r->started = 3000;
	write_run(b, r, "single");

	assert_int_equal(import(b, fetched, 1, NULL, true, &out, &e), 0);
	assert_non_null(strstr(out, "3 run(s) imported, 0 already recorded"));
	assert_non_null(strstr(out, "imported as run 1: "));
	assert_non_null(strstr(out, "fetched/lab-a/2031-01-01/nightly/results.json (host lab-a, started_unix 1000)"));
	free(out);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 3);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs WHERE host_name = 'lab-b' AND started_unix = 2000"), 1);
	/* again: nothing new */
	assert_int_equal(import(b, fetched, 1, NULL, true, &out, &e), 0);
	assert_non_null(strstr(out, "0 run(s) imported, 3 already recorded"));
	assert_non_null(strstr(out, "already recorded as run 2: "));
	free(out);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 3);
	assert_int_equal(db_count(b, "SELECT count(*) FROM metrics"), 3 * 56);
	/* a file, recorded under the inventory name given, as a failed gate */
	{
		static const char *const single[] = { "single/results.json" };

		assert_int_equal(import(b, single, 1, "web-1", false, &out, &e), 0);
		assert_non_null(strstr(out, "(host web-1, started_unix 3000)"));
		free(out);
	}
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs WHERE host_name = 'web-1' AND gate_passed = 0"), 1);
	/* a run that failed its gate is still web-1's newest, so its baseline */
	snprintf(cur->host.name, sizeof(cur->host.name), "web-1");
	assert_int_equal(history_baseline_last(b->db, cur, HISTORY_SAME_SETUP, &ref, base, &e), 0);
	assert_int_equal(base->started, 3000);
	results_release(base);
	/* lab-a's newest imported run is its baseline */
	snprintf(cur->host.name, sizeof(cur->host.name), "lab-a");
	assert_int_equal(history_baseline_last(b->db, cur, HISTORY_SAME_SETUP, &ref, base, &e), 0);
	assert_int_equal(base->started, 2000);
	results_release(base);
	/* a file that is not results.json: the error names it, the runs before it stay */
	snprintf(bad, sizeof(bad), "%s/fetched/lab-z/results.json", b->dir);
	{
		char cmd[4700];
		FILE *f;

		snprintf(cmd, sizeof(cmd), "mkdir -p '%s/fetched/lab-z'", b->dir);
		assert_int_equal(system(cmd), 0);
		f = fopen(bad, "w");
		assert_non_null(f);
		fputs("{ \"not\": \"results\" }\n", f);
		fclose(f);
	}
	rc = import(b, fetched, 1, NULL, true, &out, &e);
	assert_true(rc < 0);
	print_message("  %s\n", e.msg);
	assert_non_null(strstr(e.msg, "fetched/lab-z/results.json"));
	assert_null(strchr(e.msg, '\n'));
	free(out);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 4);
	/* nothing there */
	{
		static const char *const missing[] = { "nosuch" }, *const empty[] = { "fetched/lab-a/2031-01-01/nightly/x" };

		err_clear(&e);
		assert_int_equal(import(b, missing, 1, NULL, true, &out, &e), -ENOENT);
		assert_non_null(strstr(e.msg, "cannot import '"));
		free(out);
		snprintf(bad, sizeof(bad), "mkdir -p '%s/%s'", b->dir, empty[0]);
		assert_int_equal(system(bad), 0);
		err_clear(&e);
		assert_int_equal(import(b, empty, 1, NULL, true, &out, &e), -ENOENT);
		assert_non_null(strstr(e.msg, "no results.json under '"));
		free(out);
	}
	free(base);
	fixture_results_free(r);
	fixture_results_free(cur);
}

/* the table: one step per version, in order, in both dialects */
static void test_migration_table(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < HISTORY_SCHEMA_VERSION; i++) {
		const struct history_migration *m = &history_migrations[i];

		assert_int_equal(m->version, i + 1);
		assert_non_null(m->sqlite);
		assert_non_null(m->postgres);
		assert_true(strlen(m->sqlite) > 20 && strlen(m->postgres) > 20);
		/* the bookkeeping is the engine's: a step never writes schema_version itself */
		assert_null(strstr(m->sqlite, "schema_version"));
		assert_null(strstr(m->postgres, "schema_version"));
	}
	/* PostgreSQL's REAL is 4 bytes: its steps store doubles */
	assert_null(strstr(history_migrations[0].postgres, " REAL"));
}

/* the columns of runs, comma-separated in order, for comparing two databases */
static void runs_columns(const struct backend *b, char *buf, size_t len)
{
	struct histdb_target t;
	struct histdb *h;
	struct histdb_rows *rows;
	struct err e = ERR_INIT;
	const char *sql = b->kind == HISTDB_SQLITE
				  ? "SELECT name FROM pragma_table_info('runs') ORDER BY cid"
				  : "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
				    " AND table_name = 'runs' ORDER BY ordinal_position";

	buf[0] = '\0';
	if (histdb_target_parse(b->db, &t, &e) || histdb_open(&t, false, &h, &e) ||
	    histdb_query(h, sql, NULL, 0, &rows, "read", &e))
		fail_msg("%s", e.msg);
	while (histdb_next(rows, &e) == 1) {
		strncat(buf, histdb_text(rows, 0), len - strlen(buf) - 2);
		strcat(buf, ",");
	}
	histdb_rows_free(rows);
	histdb_close(h);
}

/*
 * A database left at each older version (as that thpeval left it: SQLite
 * with user_version only, PostgreSQL with its schema_version rows) with one
 * run in it: the next append brings it to the current version, keeps the run
 * and ends with the same columns as a new database.
 */
static void test_migrate_each_version(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture();
	char fresh[1024], migrated[1024];
	unsigned from, k;

	append(b, r, true);
	runs_columns(b, fresh, sizeof(fresh));
	assert_non_null(strstr(fresh, "host_name,run_key,"));
	for (from = 1; from < HISTORY_SCHEMA_VERSION; from++) {
		char *out;
		struct err e = ERR_INIT;
		int rc;

		if (b->kind == HISTDB_SQLITE)
			unlink(b->db);
		else
			pg_wipe(b);
		for (k = 0; k < from; k++) {
			const char *sql = b->kind == HISTDB_SQLITE ? history_migrations[k].sqlite : history_migrations[k].postgres;
			char row[128];

			db_exec(b, sql);
			if (b->kind == HISTDB_POSTGRES) {
				if (k == 0)
					db_exec(b, "CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_unix BIGINT)");
				snprintf(row, sizeof(row), "INSERT INTO schema_version VALUES (%u, 1)", k + 1);
				db_exec(b, row);
			}
		}
		if (b->kind == HISTDB_SQLITE) {
			char pragma[64];

			snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %u", from);
			db_exec(b, pragma);
		}
		/* a run as schema 1 had it */
		db_exec(b, "INSERT INTO runs (id, started_unix, finished_unix, recorded_unix, status, gate_passed,"
			   " thpeval_version, host_kernel, cpu_model, host_cpus, hypervisor_version, libvirt_version, accel,"
			   " image_id, settings, results_json) VALUES (100, 500, 600, 700, 'complete', 1, '0.0.9', 'k0',"
			   " 'AMD EPYC', 2, '7.2.22', '9.0.0', 'tcg', 'img', 'settings', '{}')");
		db_exec(b, "INSERT INTO metrics VALUES (100, 'guest', 'never', 'ondemand', 'never', 'memset', '', 1,"
			   " 'access_ns', 2, 300.5, 1, 290, 311)");
		append(b, r, true);
		assert_int_equal(db_count(b, "SELECT max(version) FROM schema_version"), HISTORY_SCHEMA_VERSION);
		assert_int_equal(db_count(b, "SELECT count(*) FROM schema_version"), HISTORY_SCHEMA_VERSION);
		assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 2);
		assert_int_equal(db_count(b, "SELECT count(*) FROM runs WHERE id = 100 AND host_name = ''"
					     " AND run_key IS NULL AND settings = 'settings'"), 1);
		assert_int_equal(db_count(b, "SELECT count(*) FROM metrics WHERE run_id = 100"), 1);
		if (b->kind == HISTDB_SQLITE)
			assert_int_equal(db_count(b, "PRAGMA user_version"), HISTORY_SCHEMA_VERSION);
		runs_columns(b, migrated, sizeof(migrated));
		assert_string_equal(migrated, fresh);
		/* the old run is listed with the new one */
		out = trend(b, NULL, NULL, 0, &rc, &e);
		if (rc)
			fail_msg("%s", e.msg);
		assert_non_null(strstr(out, "the last 2 of 2 run(s)"));
		assert_non_null(strstr(out, "    100  1970-01-01 00:08  -            k0 "));
		free(out);
	}
	fixture_results_free(r);
}

static void test_newer_schema(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture(), *base = malloc(sizeof(*base));
	struct err e = ERR_INIT;
	char *out, want[80];
	int rc;

	append(b, r, true);
	db_exec(b, "INSERT INTO schema_version VALUES (42, 0)");
	r->started++;
	assert_int_equal(history_append(b->db, r, true, &e), -EPROTO);
	snprintf(want, sizeof(want), "schema version 42, newer than this thpeval knows (%d)", HISTORY_SCHEMA_VERSION);
	assert_non_null(strstr(e.msg, want));
	err_clear(&e);
	out = trend(b, NULL, NULL, 0, &rc, &e);
	assert_int_equal(rc, -EPROTO);
	assert_true(out == NULL || out[0] == '\0');
	free(out);
	err_clear(&e);
	assert_int_equal(history_baseline_last(b->db, r, HISTORY_SAME_SETUP, NULL, base, &e), -EPROTO);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 1);
	if (b->kind == HISTDB_SQLITE) {
		/* an SQLite history is also marked so for the thpeval from before the table */
		db_exec(b, "DELETE FROM schema_version WHERE version = 42; PRAGMA user_version = 43");
		err_clear(&e);
		assert_int_equal(history_append(b->db, r, true, &e), -EPROTO);
		snprintf(want, sizeof(want), "schema version 43, newer than this thpeval knows (%d)",
			 HISTORY_SCHEMA_VERSION);
		assert_non_null(strstr(e.msg, want));
	}
	free(base);
	fixture_results_free(r);
}

/* a database that holds other things: thpeval's tables go in only where that is safe */
static void test_foreign(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture();
	struct err e = ERR_INIT;

	db_exec(b, "CREATE TABLE songs (title TEXT)");
	if (b->kind == HISTDB_SQLITE) {
		/* a file of another program: left alone */
		assert_int_equal(history_append(b->db, r, true, &e), -EINVAL);
		assert_non_null(strstr(e.msg, "is an SQLite database but not a thpeval history database"));
		assert_int_equal(db_count(b, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'"), 0);
	} else {
		/* a shared database: thpeval's tables beside the others */
		append(b, r, true);
		assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 1);
		pg_wipe(b);
		/* but never into someone else's table of the same name */
		db_exec(b, "CREATE TABLE runs (title TEXT)");
		assert_int_equal(history_append(b->db, r, true, &e), -EINVAL);
		assert_non_null(strstr(e.msg, "has a 'runs' table that is not thpeval's"));
		assert_int_equal(db_count(b, "SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = 'metrics'"), 0);
	}
	fixture_results_free(r);
}

/* two writers at once, one append each, many times: nothing lost (the CLI test does 2 x 100) */
static void test_concurrent_append(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture();
	pid_t pid[2];
	int i, st;

	append(b, r, true);	/* the schema first: the writers race on rows */
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		assert_true(pid[i] >= 0);
		if (pid[i] == 0) {
			struct err e = ERR_INIT;
			int k;

			snprintf(r->host.name, sizeof(r->host.name), "writer-%d", i);
			for (k = 0; k < 20; k++) {
				r->started = 10000 + k;
				if (history_append(b->db, r, true, &e)) {
					fprintf(stderr, "writer %d: %s\n", i, e.msg);
					_exit(1);
				}
			}
			_exit(0);
		}
	}
	for (i = 0; i < 2; i++) {
		assert_int_equal(waitpid(pid[i], &st, 0), pid[i]);
		assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 41);
	assert_int_equal(db_count(b, "SELECT count(*) FROM metrics"), 41 * 56);
	fixture_results_free(r);
}

static int run_history(const char *const *args)
{
	size_t n = 0;

	while (args[n])
		n++;
	return fixture_run_cmd(cmd_history, "history", args, n, NULL);
}

#define HIST(...) run_history((const char *const[]){ __VA_ARGS__, NULL })

static void test_cmd_history(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture();
	char opt[4400], file[4600];

	snprintf(opt, sizeof(opt), "--db=%s", b->db);
	write_run(b, r, "fetched/lab-a");
	snprintf(file, sizeof(file), "%s/fetched/lab-a/results.json", b->dir);
	assert_int_equal(HIST(opt, "--import", file), 0);
	assert_int_equal(HIST(opt, file, "--import", "--host=web-1", "--gate-failed"), 0);	/* options after too */
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 2);
	assert_int_equal(HIST(opt), 0);
	assert_int_equal(HIST(opt, "--last=1"), 0);
	assert_int_equal(HIST(opt, "--workload=memset"), 0);
	assert_int_equal(HIST(opt, "--host=web-1"), 0);
	assert_int_equal(HIST(opt, "--last=0"), 2);
	assert_int_equal(HIST(opt, "--bogus"), 2);
	assert_int_equal(HIST(opt, "extra"), 2);
	assert_int_equal(HIST(opt, "--import"), 2);			/* nothing to import */
	assert_int_equal(HIST(opt, "--import", "--last=3", file), 2);	/* trend options */
	assert_int_equal(HIST(opt, "--gate-failed"), 2);		/* without --import */
	assert_int_equal(HIST(opt, "--host="), 2);
	assert_int_equal(HIST("--db=mysql://x/y"), 2);
	assert_int_equal(HIST("--db="), 2);
	assert_int_equal(HIST(opt, "--import", "/nonexistent/results.json"), 1);
	assert_int_equal(HIST("--help"), 0);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 2);
	fixture_results_free(r);
}

/* ---- SQLite only ---------------------------------------------------------------------- */

static void test_sqlite_modes(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture();
	char db[4400], sub[4300];
	struct err e = ERR_INIT;
	struct stat st;
	mode_t old = umask(0);	/* modes must not depend on the umask */

	snprintf(sub, sizeof(sub), "%s/var/lib/thpeval", b->dir);
	snprintf(db, sizeof(db), "%s/history.db", sub);
	if (history_append(db, r, true, &e))
		fail_msg("%s", e.msg);
	umask(old);
	assert_int_equal(stat(db, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	fixture_results_free(r);
}

/* a second connection holds an exclusive transaction: clear -EBUSY, nothing written or printed */
static void test_sqlite_locked(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture();
	struct err e = ERR_INIT;
	sqlite3 *other;
	time_t t0;
	char *out;
	int rc;

	append(b, r, true);
	assert_int_equal(sqlite3_open(b->db, &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	t0 = time(NULL);
	r->started++;
	assert_int_equal(history_append(b->db, r, true, &e), -EBUSY);
	assert_true(time(NULL) - t0 >= HISTORY_BUSY_MS / 1000 - 1);	/* it waited first */
	print_message("  append: %s\n", e.msg);
	assert_non_null(strstr(e.msg, "is locked by another thpeval: try again"));
	assert_non_null(strstr(e.msg, b->db));
	err_clear(&e);
	out = trend(b, NULL, NULL, 0, &rc, &e);
	assert_int_equal(rc, -EBUSY);
	assert_non_null(strstr(e.msg, "is locked by another thpeval"));
	assert_true(out == NULL || out[0] == '\0');	/* no partial table */
	free(out);
	assert_int_equal(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(other);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 1);	/* nothing half-written */
	fixture_results_free(r);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = malloc(1 << 16);

	assert_non_null(f);
	*len = fread(buf, 1, 1 << 16, f);
	fclose(f);
	return buf;
}

static void test_sqlite_corrupt(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture(), *base = malloc(sizeof(*base));
	char journal[4400], *out, *before, *after;
	struct err e = ERR_INIT;
	size_t i, lb, la;
	FILE *f;
	int rc;

	snprintf(journal, sizeof(journal), "%s-journal", b->db);
	f = fopen(b->db, "w");
	for (i = 0; i < 200; i++)
		fputs("this is not a database, just garbage text\n", f);
	fclose(f);
	before = slurp(b->db, &lb);
	assert_true(history_append(b->db, r, true, &e) < 0);
	print_message("  append: %s\n", e.msg);
	assert_non_null(strstr(e.msg, "is not a thpeval history database"));
	assert_non_null(strstr(e.msg, "move it aside"));
	after = slurp(b->db, &la);
	assert_int_equal(la, lb);	/* untouched */
	assert_memory_equal(before, after, la);
	assert_int_equal(access(journal, F_OK), -1);
	err_clear(&e);
	out = trend(b, NULL, NULL, 0, &rc, &e);
	assert_true(rc < 0);
	assert_non_null(strstr(e.msg, "is not a thpeval history database"));
	assert_true(out == NULL || out[0] == '\0');
	free(out);
	err_clear(&e);
	assert_true(history_baseline_last(b->db, r, HISTORY_SAME_SETUP, NULL, base, &e) < 0);
	assert_non_null(strstr(e.msg, "is not a thpeval history database"));
	free(before);
	free(after);
	free(base);
	fixture_results_free(r);
}

/* the schema of the tables runs and metrics as SQLite keeps their text */
static char *sqlite_schema_text(const char *db)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, "SELECT sql FROM sqlite_master WHERE name IN ('runs', 'metrics',"
					    " 'runs_setup', 'metrics_metric') ORDER BY name", -1, &st, NULL), SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		fprintf(m, "%s;\n", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	sqlite3_close(h);
	fclose(m);
	return buf;
}

/*
 * A history the thpeval before schema 2 wrote (fixtures/history-v1.sql, its
 * dump): shipped step 1 is still what made it; reading it upgrades it in
 * place; its runs keep their data, count as any host's for a baseline, and new
 * runs go in beside them.
 */
static void test_sqlite_upgrade_v1_history(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture(), *base = malloc(sizeof(*base));
	struct history_run_ref ref;
	struct err e = ERR_INIT;
	char step1[4400], *dump, *want, *got, *out;
	sqlite3 *h;
	int rc;

	{
		FILE *f = fopen(FIXTURE_V1, "rb");
		long n;

		if (!f)
			fail_msg("cannot open %s (run from the repository root)", FIXTURE_V1);
		fseek(f, 0, SEEK_END);
		n = ftell(f);
		rewind(f);
		dump = malloc((size_t)n + 1);
		assert_int_equal(fread(dump, 1, (size_t)n, f), (size_t)n);
		dump[n] = '\0';
		fclose(f);
	}
	assert_int_equal(sqlite3_open(b->db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, dump, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	free(dump);
	assert_int_equal(db_count(b, "PRAGMA user_version"), 1);
	assert_int_equal(db_count(b, "SELECT count(*) FROM sqlite_master WHERE name = 'schema_version'"), 0);
	/* step 1 as shipped makes exactly these tables */
	snprintf(step1, sizeof(step1), "%s/step1.db", b->dir);
	assert_int_equal(sqlite3_open(step1, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, history_migrations[0].sqlite, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	want = sqlite_schema_text(step1);
	got = sqlite_schema_text(b->db);
	assert_string_equal(got, want);
	free(want);
	free(got);
	assert_int_equal(db_count(b, "SELECT sum(length(results_json)) FROM runs"), 3 * 30686);

	/* reading upgrades it */
	out = trend(b, NULL, NULL, 0, &rc, &e);
	if (rc)
		fail_msg("%s", e.msg);
	assert_non_null(strstr(out, "the last 3 of 3 run(s)"));
	assert_non_null(strstr(out, "      3  1970-01-01 00:50  -            k2 "));
	free(out);
	assert_int_equal(db_count(b, "PRAGMA user_version"), HISTORY_SCHEMA_VERSION);
	assert_int_equal(db_count(b, "SELECT count(*) FROM schema_version WHERE version = 1 AND applied_unix IS NULL"), 1);
	assert_int_equal(db_count(b, "SELECT count(*) FROM schema_version WHERE version = 2 AND applied_unix > 0"), 1);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs WHERE host_name = '' AND run_key IS NULL"), 3);
	assert_int_equal(db_count(b, "SELECT count(*) FROM metrics"), 3 * 56);
	assert_int_equal(db_count(b, "SELECT sum(length(results_json)) FROM runs"), 3 * 30686);

	/* the nightly gate goes on: its last complete run is the baseline of a named host */
	snprintf(r->host.kernel, sizeof(r->host.kernel), "k2");
	r->started = 5000;
	if (history_baseline_last(b->db, r, HISTORY_SAME_SETUP, &ref, base, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(ref.id, 3);
	assert_int_equal(base->started, 3000);
	results_release(base);
	append(b, r, true);
	append(b, r, true);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs"), 4);
	assert_int_equal(db_count(b, "SELECT count(*) FROM runs WHERE id = 4 AND host_name = 'lab-a'"), 1);
	if (history_baseline_last(b->db, r, HISTORY_SAME_SETUP, &ref, base, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(ref.id, 4);
	results_release(base);
	free(base);
	fixture_results_free(r);
}

/*
 * A read of an old history that this user may not write: it says so, and the
 * file stays as it was. As root (who writes anything) the read runs in a child
 * as nobody, on a file root owns and lets others read.
 */
static void test_sqlite_old_read_only(void **state)
{
	struct backend *b = need(state);
	sqlite3 *h;
	pid_t pid;
	int st;

	assert_int_equal(sqlite3_open(b->db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, history_migrations[0].sqlite, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
	assert_int_equal(chmod(b->db, 0444), 0);
	assert_int_equal(chmod(b->dir, 0755), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct err e = ERR_INIT;
		char *out;
		int rc;

		if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(3);
		out = trend(b, NULL, NULL, 0, &rc, &e);
		fprintf(stderr, "  %s\n", e.msg);
		free(out);
		_exit(rc == -EPROTO && strstr(e.msg, "has an older schema and cannot be upgraded now") &&
		      strstr(e.msg, "the next recorded run upgrades it") ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_int_equal(db_count(b, "PRAGMA user_version"), 1);
	assert_int_equal(db_count(b, "SELECT count(*) FROM sqlite_master WHERE name = 'schema_version'"), 0);
}

/*
 * Control characters in what a run recorded (its host, CPU, kernel,
 * version, cell names) and in the path of an imported file reach neither the
 * trend nor the import's lines raw.
 */
static void test_control_chars(void **state)
{
	struct backend *b = need(state);
	struct results *r = load_fixture();
	static const char *const fetched[] = { "fetched" };
	struct err e = ERR_INIT;
	char *out = NULL;
	int rc;

	snprintf(r->host.name, sizeof(r->host.name), "lab\x1b[31m");
	snprintf(r->host.cpu_model, sizeof(r->host.cpu_model), "EPYC\x07\xc2\x9b");
	snprintf(r->host.kernel, sizeof(r->host.kernel), "k\x1b]0;x\x07");
	/* valid UTF-8 only: PostgreSQL refuses anything else at the insert */
	snprintf(r->thpeval_version, sizeof(r->thpeval_version), "0.1\x7f");
	snprintf(r->cells[0].workload, sizeof(r->cells[0].workload), "memset\x1b[2J");
	snprintf(r->cells[0].variant, sizeof(r->cells[0].variant), "v\r\x01");
	append(b, r, true);
	out = trend(b, NULL, NULL, 0, &rc, &e);
	if (rc)
		fail_msg("%s", e.msg);
	if (!textesc_clean(out, strlen(out), TEXTESC_KEEP_LINES))
		fail_msg("a control character in the trend:\n%s", out);
	assert_non_null(strstr(out, "lab\\x1b[31m"));
	free(out);
	/* a clean run under a directory whose name is not */
	fixture_results_free(r);
	r = load_fixture();
	r->started = 5000;
	write_run(b, r, "fetched/\x1b[31mred\x1b[0m");
	assert_int_equal(import(b, fetched, 1, NULL, true, &out, &e), 0);
	if (!textesc_clean(out, strlen(out), TEXTESC_KEEP_LINES))
		fail_msg("a control character in the import's lines:\n%s", out);
	assert_non_null(strstr(out, "fetched/\\x1b[31mred\\x1b[0m/results.json"));
	free(out);
	fixture_results_free(r);
}

#define BOTH(f) \
	{ "sqlite/" #f, f, setup, teardown, &sqlite_be }, { "postgresql/" #f, f, setup, teardown, &pg_be }
#define SQLITE(f) { "sqlite/" #f, f, setup, teardown, &sqlite_be }

int main(void)
{
	/* a cmocka pattern: tests/cli/history_db.sh runs the postgresql/ cases on the server it started */
	const char *filter = getenv("THPEVAL_TEST_FILTER");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_migration_table),
		cmocka_unit_test(test_run_key),
		cmocka_unit_test(test_settings_key_emulator),
		BOTH(test_run_key_collision),
		BOTH(test_append),
		BOTH(test_trend),
		BOTH(test_baseline_last),
		BOTH(test_import),
		BOTH(test_control_chars),
		BOTH(test_migrate_each_version),
		BOTH(test_newer_schema),
		BOTH(test_foreign),
		BOTH(test_concurrent_append),
		BOTH(test_cmd_history),
		SQLITE(test_sqlite_modes),
		SQLITE(test_sqlite_locked),
		SQLITE(test_sqlite_corrupt),
		SQLITE(test_sqlite_upgrade_v1_history),
		SQLITE(test_sqlite_old_read_only),
	};

	if (filter && *filter)
		cmocka_set_test_filter(filter);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
