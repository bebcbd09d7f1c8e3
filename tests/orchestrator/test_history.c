/*
 * tests for orchestrator/report/history.c and `thpeval history` (cmd/history.c):
 * append, trend, baseline choice, file modes, schema checks, and the clear
 * errors for a locked and a corrupt database (no partial output).
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
#include <time.h>
#include <unistd.h>

#include "orchestrator/cmd/commands.h"
#include "orchestrator/report/history.h"
#include "orchestrator/model/results.h"
#include "orchestrator/model/results_load.h"

#define FIXTURE "tests/orchestrator/fixtures/results-tcg-2x2.json"

static struct results *load_fixture(void)
{
	const char *src = getenv("THPEVAL_SRCDIR");
	struct results *r = malloc(sizeof(*r));
	struct err e = ERR_INIT;
	char path[4096];

	assert_non_null(r);
	snprintf(path, sizeof(path), "%s%s%s", src ? src : "", src ? "/" : "", FIXTURE);
	if (results_load(path, r, &e))
		fail_msg("%s (run from the repository root)", e.msg);
	return r;
}

static void free_results(struct results *r)
{
	results_release(r);
	free(r);
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/thpeval-test-history-XXXXXX");

	assert_non_null(mkdtemp(d));
	return d;
}

static void rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/* the trend table as a string; *rc its return */
static char *trend(const char *db, const char *workload, unsigned last, int *rc, struct err *e)
{
	struct history_query q = { workload, last };
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	assert_non_null(m);
	*rc = history_print_trend(db, &q, m, e);
	fclose(m);
	return buf;
}

static long long db_count(const char *db, const char *sql)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	long long n = -1;

	assert_int_equal(sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(h, sql, -1, &st, NULL), SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(h);
	return n;
}

static void db_exec(const char *db, const char *sql)
{
	sqlite3 *h;

	assert_int_equal(sqlite3_open(db, &h), SQLITE_OK);
	assert_int_equal(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(h);
}

/*
 * Runs: A (kernel k1, passed, t=1000), B (kernel k2, passed, t=2000),
 * C (kernel k2, gate failed, t=3000), D (other settings, passed, t=4000).
 */
static void append_runs(const char *db, struct results *r)
{
	struct err e = ERR_INIT;

	snprintf(r->host.kernel, sizeof(r->host.kernel), "k1");
	r->started = 1000;
	if (history_append(db, r, true, &e))
		fail_msg("append A: %s", e.msg);
	snprintf(r->host.kernel, sizeof(r->host.kernel), "k2");
	r->started = 2000;
	if (history_append(db, r, true, &e))
		fail_msg("append B: %s", e.msg);
	r->started = 3000;
	if (history_append(db, r, false, &e))
		fail_msg("append C: %s", e.msg);
	r->started = 4000;
	r->settings.reps = 9;
	if (history_append(db, r, true, &e))
		fail_msg("append D: %s", e.msg);
	r->settings.reps = 2;
}

static void test_append_and_modes(void **state)
{
	char *dir = tmpdir(), db[4300], sub[4200];
	struct results *r = load_fixture();
	struct err e = ERR_INIT;
	struct stat st;
	mode_t old = umask(0);	/* modes must not depend on the umask */

	snprintf(sub, sizeof(sub), "%s/var/lib/thpeval", dir);
	snprintf(db, sizeof(db), "%s/history.db", sub);
	if (history_append(db, r, true, &e))
		fail_msg("%s", e.msg);
	umask(old);
	assert_int_equal(stat(db, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(stat(sub, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(db_count(db, "PRAGMA user_version"), HISTORY_SCHEMA_VERSION);
	assert_int_equal(db_count(db, "SELECT count(*) FROM runs"), 1);
	/* 4 cells x (12 metrics + 2 coverage) */
	assert_int_equal(db_count(db, "SELECT count(*) FROM metrics"), 56);
	assert_int_equal(db_count(db, "SELECT count(*) FROM runs WHERE host_kernel = '6.18.44-fc-v782'"
				      " AND hypervisor_version = '7.2.22' AND libvirt_version = '9.0.0'"
				      " AND thpeval_version = '0.1.0' AND cpu_model = 'AMD EPYC' AND accel = 'tcg'"
				      " AND image_id = 'a8d6f632b0a8bec5' AND started_unix = 1795989451"
				      " AND gate_passed = 1 AND settings LIKE 'host_thp=never,always;%'"
				      " AND settings NOT LIKE '%seed%' AND length(results_json) > 10000"), 1);
	free_results(r);
	rm_rf(dir);
	free(dir);
}

static void test_trend(void **state)
{
	char *dir = tmpdir(), db[4200];
	struct results *r = load_fixture();
	struct err e = ERR_INIT;
	char *out;
	int rc;

	snprintf(db, sizeof(db), "%s/history.db", dir);
	append_runs(db, r);
	out = trend(db, NULL, 0, &rc, &e);
	if (rc)
		fail_msg("%s", e.msg);
	assert_non_null(strstr(out, "the last 4 of 4 run(s), oldest first"));
	assert_non_null(strstr(out, "cell always/always/memset"));
	assert_non_null(strstr(out, "cell never/never/memset"));
	/* both appended runs are listed, with their gate and the headline metrics */
	assert_non_null(strstr(out, "      1  1970-01-01 00:16  k1 "));
	assert_non_null(strstr(out, "      2  1970-01-01 00:33  k2 "));
	assert_non_null(strstr(out, " FAIL  "));
	assert_non_null(strstr(out, "5142 ±221.7        353.2 ±70.21"));
	free(out);
	/* --last=2: the newest two only */
	out = trend(db, NULL, 2, &rc, &e);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "the last 2 of 4 run(s)"));
	assert_null(strstr(out, "  k1 "));
	free(out);
	/* --workload */
	out = trend(db, "memset", 0, &rc, &e);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "cell always/never/memset"));
	free(out);
	out = trend(db, "nosuch", 0, &rc, &e);
	assert_int_equal(rc, 0);
	assert_non_null(strstr(out, "no cells of workload nosuch"));
	free(out);
	free_results(r);
	rm_rf(dir);
	free(dir);
}

static void test_baseline_last(void **state)
{
	char *dir = tmpdir(), db[4200];
	struct results *r = load_fixture(), *cur = load_fixture(), *base = malloc(sizeof(*base));
	struct history_run_ref ref;
	struct err e = ERR_INIT;

	snprintf(db, sizeof(db), "%s/history.db", dir);
	/* no database yet: no baseline, and no file created by asking */
	assert_int_equal(history_baseline_last(db, cur, HISTORY_SAME_SETUP, &ref, base, &e), -ENOENT);
	assert_int_equal(access(db, F_OK), -1);
	append_runs(db, r);
	/* current: kernel k1, same settings as A/B/C */
	snprintf(cur->host.kernel, sizeof(cur->host.kernel), "k1");
	cur->started = 5000;
	err_clear(&e);
	if (history_baseline_last(db, cur, HISTORY_SAME_SETUP, &ref, base, &e))
		fail_msg("%s", e.msg);
	/* B: the newest passed run with the same setup (C failed its gate, D has other settings) */
	assert_int_equal(ref.id, 2);
	assert_int_equal(base->started, 2000);
	assert_string_equal(base->host.kernel, "k2");
	assert_int_equal(base->ncells, 4);
	assert_non_null(strstr(ref.desc, "run 2 of '"));
	assert_non_null(strstr(ref.desc, "kernel k2"));
	results_release(base);
	/* the same stack too: A (kernel k1) */
	if (history_baseline_last(db, cur, HISTORY_SAME_STACK, &ref, base, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(ref.id, 1);
	assert_int_equal(base->started, 1000);
	results_release(base);
	/* other settings: D */
	cur->settings.reps = 9;
	assert_int_equal(history_baseline_last(db, cur, HISTORY_SAME_SETUP, &ref, base, &e), 0);
	assert_int_equal(ref.id, 4);
	results_release(base);
	/* another machine: none */
	snprintf(cur->host.cpu_model, sizeof(cur->host.cpu_model), "Intel Xeon");
	assert_int_equal(history_baseline_last(db, cur, HISTORY_SAME_SETUP, &ref, base, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "no baseline in '"));
	assert_int_equal(base->ncells, 0);
	free(base);
	free_results(r);
	free_results(cur);
	rm_rf(dir);
	free(dir);
}

/* a second connection holds an exclusive transaction: clear -EBUSY, nothing written or printed */
static void test_locked(void **state)
{
	char *dir = tmpdir(), db[4200], *out;
	struct results *r = load_fixture();
	struct err e = ERR_INIT;
	sqlite3 *other;
	time_t t0;
	int rc;

	snprintf(db, sizeof(db), "%s/history.db", dir);
	assert_int_equal(history_append(db, r, true, &e), 0);
	assert_int_equal(sqlite3_open(db, &other), SQLITE_OK);
	assert_int_equal(sqlite3_exec(other, "BEGIN EXCLUSIVE", NULL, NULL, NULL), SQLITE_OK);
	t0 = time(NULL);
	assert_int_equal(history_append(db, r, true, &e), -EBUSY);
	assert_true(time(NULL) - t0 >= HISTORY_BUSY_MS / 1000 - 1);	/* it waited first */
	print_message("  append: %s\n", e.msg);
	assert_non_null(strstr(e.msg, "is locked by another thpeval: try again"));
	assert_non_null(strstr(e.msg, db));
	err_clear(&e);
	out = trend(db, NULL, 0, &rc, &e);
	assert_int_equal(rc, -EBUSY);
	assert_non_null(strstr(e.msg, "is locked by another thpeval"));
	assert_true(out == NULL || out[0] == '\0');	/* no partial table */
	free(out);
	assert_int_equal(sqlite3_exec(other, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(other);
	assert_int_equal(db_count(db, "SELECT count(*) FROM runs"), 1);	/* nothing half-written */
	free_results(r);
	rm_rf(dir);
	free(dir);
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

static void test_corrupt_and_foreign(void **state)
{
	char *dir = tmpdir(), db[4200], journal[4300], *out, *before, *after;
	struct results *r = load_fixture(), *base = malloc(sizeof(*base));
	struct err e = ERR_INIT;
	size_t i, lb, la;
	FILE *f;
	int rc;

	snprintf(db, sizeof(db), "%s/history.db", dir);
	snprintf(journal, sizeof(journal), "%s-journal", db);
	f = fopen(db, "w");
	for (i = 0; i < 200; i++)
		fputs("this is not a database, just garbage text\n", f);
	fclose(f);
	before = slurp(db, &lb);
	assert_true(history_append(db, r, true, &e) < 0);
	print_message("  append: %s\n", e.msg);
	assert_non_null(strstr(e.msg, "is not a thpeval history database"));
	assert_non_null(strstr(e.msg, "move it aside"));
	after = slurp(db, &la);
	assert_int_equal(la, lb);	/* untouched */
	assert_memory_equal(before, after, la);
	assert_int_equal(access(journal, F_OK), -1);
	err_clear(&e);
	out = trend(db, NULL, 0, &rc, &e);
	assert_true(rc < 0);
	assert_non_null(strstr(e.msg, "is not a thpeval history database"));
	assert_true(out == NULL || out[0] == '\0');
	free(out);
	err_clear(&e);
	assert_true(history_baseline_last(db, r, HISTORY_SAME_SETUP, NULL, base, &e) < 0);
	assert_non_null(strstr(e.msg, "is not a thpeval history database"));
	free(before);
	free(after);
	/* an SQLite database of something else */
	unlink(db);
	db_exec(db, "CREATE TABLE songs (title TEXT)");
	err_clear(&e);
	assert_true(history_append(db, r, true, &e) < 0);
	assert_non_null(strstr(e.msg, "is an SQLite database but not a thpeval history database"));
	assert_int_equal(db_count(db, "SELECT count(*) FROM sqlite_master WHERE name = 'runs'"), 0);
	/* a history from a newer thpeval */
	unlink(db);
	err_clear(&e);
	assert_int_equal(history_append(db, r, true, &e), 0);
	db_exec(db, "PRAGMA user_version = 42");
	assert_true(history_append(db, r, true, &e) < 0);
	assert_non_null(strstr(e.msg, "schema version 42, newer than this thpeval knows (1)"));
	assert_int_equal(db_count(db, "SELECT count(*) FROM runs"), 1);
	free(base);
	free_results(r);
	rm_rf(dir);
	free(dir);
}

static int run_history(const char *a, const char *b)
{
	char *argv[4] = { strdup("history"), a ? strdup(a) : NULL, b ? strdup(b) : NULL, NULL };
	int argc = 1 + (a != NULL) + (b != NULL), out, err, fd, rc, i;

	fflush(stdout);
	fflush(stderr);
	out = dup(1);
	err = dup(2);
	fd = open("/dev/null", O_WRONLY);
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
	rc = cmd_history(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(out, 1);
	dup2(err, 2);
	close(out);
	close(err);
	for (i = 0; i < 3; i++)
		free(argv[i]);
	return rc;
}

static void test_cmd_history(void **state)
{
	char *dir = tmpdir(), db[4200], opt[4300], missing[4300];
	struct results *r = load_fixture();
	struct err e = ERR_INIT;

	snprintf(db, sizeof(db), "%s/history.db", dir);
	snprintf(opt, sizeof(opt), "--db=%s", db);
	snprintf(missing, sizeof(missing), "--db=%s/none.db", dir);
	assert_int_equal(history_append(db, r, true, &e), 0);
	assert_int_equal(run_history(opt, NULL), 0);
	assert_int_equal(run_history(opt, "--last=1"), 0);
	assert_int_equal(run_history(opt, "--workload=memset"), 0);
	assert_int_equal(run_history(opt, "--last=0"), 2);
	assert_int_equal(run_history(opt, "--bogus"), 2);
	assert_int_equal(run_history(opt, "extra"), 2);
	assert_int_equal(run_history(missing, NULL), 1);
	snprintf(missing, sizeof(missing), "%s/none.db", dir);
	assert_int_equal(access(missing, F_OK), -1);	/* reading never creates it */
	assert_int_equal(run_history("--help", NULL), 0);
	free_results(r);
	rm_rf(dir);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_and_modes),
		cmocka_unit_test(test_trend),
		cmocka_unit_test(test_baseline_last),
		cmocka_unit_test(test_locked),
		cmocka_unit_test(test_corrupt_and_foreign),
		cmocka_unit_test(test_cmd_history),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
