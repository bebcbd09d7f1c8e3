/*
 * tests for guest/pgbench.c: pgbench's report parser and the postmaster.pid
 * reader on table-driven texts (PostgreSQL 15's real output, then missing,
 * repeated, malformed, out-of-range and oversized lines), the shmem values,
 * the version finder on a fake tree, parameter checks through the harness on
 * fake roots (a thpeval guest root without passwd included), a short real
 * run where PostgreSQL and its user are installed (root only), its traits.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/pgbench.h"
#include "lib/wltraits.h"
#include "wltest.h"

#define N(a) WLT_N(a)

/* ---- pgbench's report -------------------------------------------------------------- */

#define PG_HEAD "pgbench (15.18 (Debian 15.18-0+deb12u1))\n"
#define PG_SELECT PG_HEAD "transaction type: <builtin: select only>\nscaling factor: 8\nquery mode: simple\n" \
	"number of clients: 1\nnumber of threads: 1\nmaximum number of tries: 1\nduration: 5 s\n" \
	"number of transactions actually processed: 39249\nnumber of failed transactions: 0 (0.000%)\n" \
	"latency average = 0.127 ms\ninitial connection time = 16.534 ms\n" \
	"tps = 7875.540416 (without initial connection time)\n"
#define PG_BODY "scaling factor: 8\nnumber of clients: 1\nduration: 5 s\n" \
	"number of transactions actually processed: 5015\n"

struct report_case {
	const char *name;
	const char *text;
	int rc;
	const char *type;
	double tps, lat;
	uint64_t processed;
	const char *why;
};

static struct report_case report_cases[] = {
	{ "report: PostgreSQL 15 select-only", PG_SELECT, 0, "select only", 7875.540416, 0.127, 39249, NULL },
	{ "report: TPC-B, PostgreSQL 14 (no tries, no failures)", PG_HEAD
	  "transaction type: <builtin: TPC-B (sort of)>\n" PG_BODY "latency average = 0.996 ms\n"
	  "initial connection time = 4.878 ms\ntps = 1003.742569 (without initial connection time)\n", 0,
	  "TPC-B (sort of)", 1003.742569, 0.996, 5015, NULL },
	{ "report: a stddev line", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY
	  "latency average = 1 ms\nlatency stddev = 0.2 ms\ntps = 5 (without initial connection time)\n", 0,
	  "select only", 5, 1, 5015, NULL },
	{ "report: PostgreSQL 13's two tps lines", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY
	  "latency average = 1 ms\ntps = 5 (including connections establishing)\n"
	  "tps = 6 (excluding connections establishing)\n", -EBADMSG, NULL, 0, 0, 0,
	  "not the rate without connection time" },
	{ "report: two tps lines", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY
	  "latency average = 1 ms\ntps = 5 (without initial connection time)\n"
	  "tps = 6 (without initial connection time)\n", -EBADMSG, NULL, 0, 0, 0, "repeats 'tps = '" },
	{ "report: no tps", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY "latency average = 1 ms\n",
	  -EBADMSG, NULL, 0, 0, 0, "no 'tps = ' line" },
	{ "report: no latency", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY
	  "tps = 5 (without initial connection time)\n", -EBADMSG, NULL, 0, 0, 0, "no 'latency average = ' line" },
	{ "report: an error message", "pgbench: error: connection to server failed\n", -EBADMSG, NULL, 0, 0, 0,
	  "none of its report's" },
	{ "report: empty", "", -EBADMSG, NULL, 0, 0, 0, "no 'transaction type: ' line" },
	{ "report: a custom script", PG_HEAD "transaction type: bench.sql\n", -EBADMSG, NULL, 0, 0, 0,
	  "not <builtin: NAME>" },
	{ "report: tps zero", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY
	  "latency average = 1 ms\ntps = 0 (without initial connection time)\n", -EBADMSG, NULL, 0, 0, 0,
	  "not a rate" },
	{ "report: tps nan", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY
	  "latency average = 1 ms\ntps = nan (without initial connection time)\n", -EBADMSG, NULL, 0, 0, 0,
	  "not a rate" },
	{ "report: latency negative", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY
	  "latency average = -1 ms\ntps = 5 (without initial connection time)\n", -EBADMSG, NULL, 0, 0, 0,
	  "not X ms" },
	{ "report: latency in seconds", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY
	  "latency average = 1 s\ntps = 5 (without initial connection time)\n", -EBADMSG, NULL, 0, 0, 0,
	  "not X ms" },
	{ "report: nothing processed", PG_HEAD "transaction type: <builtin: select only>\nscaling factor: 8\n"
	  "number of clients: 1\nduration: 5 s\nnumber of transactions actually processed: 0\n"
	  "latency average = 1 ms\ntps = 5 (without initial connection time)\n", -EBADMSG, NULL, 0, 0, 0,
	  "no transaction processed" },
	{ "report: more failed than processed", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY
	  "number of failed transactions: 9999 (66%)\nlatency average = 1 ms\n"
	  "tps = 5 (without initial connection time)\n", -EBADMSG, NULL, 0, 0, 0, "more failed" },
	{ "report: failed without its percentage", PG_HEAD "transaction type: <builtin: select only>\n" PG_BODY
	  "number of failed transactions: 0\nlatency average = 1 ms\ntps = 5 (without initial connection time)\n",
	  -EBADMSG, NULL, 0, 0, 0, "not N (P%)" },
	{ "report: duration without unit", PG_HEAD "transaction type: <builtin: select only>\nscaling factor: 8\n"
	  "number of clients: 1\nduration: 5\n", -EBADMSG, NULL, 0, 0, 0, "not N s" },
	{ "report: scale not a number", PG_HEAD "transaction type: <builtin: select only>\nscaling factor: x\n",
	  -EBADMSG, NULL, 0, 0, 0, "not a scale" },
	{ "report: a repeated scale", PG_HEAD "scaling factor: 8\nscaling factor: 9\n", -EBADMSG, NULL, 0, 0, 0,
	  "repeats 'scaling factor: '" },
};

static void test_report(void **state)
{
	const struct report_case *c = *state;
	struct pgbench_result r;
	struct err e = ERR_INIT;
	int rc = pgbench_parse(c->text, strlen(c->text), &r, &e);

	assert_int_equal(rc, c->rc);
	if (rc) {
		if (!strstr(e.msg, c->why))
			fail_msg("'%s' lacks '%s'", e.msg, c->why);
		return;
	}
	assert_string_equal(r.type, c->type);
	assert_true(r.tps == c->tps);
	assert_true(r.latency_avg_ms == c->lat);
	assert_int_equal(r.processed, c->processed);
	assert_int_equal(r.scale, 8);
}

/* over 16 KiB, a line over 256 bytes, a NUL: refused */
static void test_report_oversized(void **state)
{
	struct pgbench_result r;
	struct err e = ERR_INIT;
	char *big = malloc(20001), nul[] = "pgbench (15)\0\n";

	(void)state;
	assert_non_null(big);
	memset(big, '\n', 20000);
	big[20000] = '\0';
	assert_int_equal(pgbench_parse(big, 20000, &r, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "over 16384 bytes"));
	err_clear(&e);
	memcpy(big, "pgbench (", 9);
	memset(big + 9, 'x', 400);
	assert_int_equal(pgbench_parse(big, 1000, &r, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "over 256 bytes"));
	err_clear(&e);
	assert_int_equal(pgbench_parse(nul, sizeof(nul) - 1, &r, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "NUL"));
	free(big);
}

/* ---- postmaster.pid -------------------------------------------------------------- */

#define PIDFILE(pid, status) pid "\n/tmp/d/data\n1796113184\n5432\n/tmp/d\n\n  5432001         0\n" status "\n"

struct pidfile_case {
	const char *name;
	const char *text;
	int rc;
};

static struct pidfile_case pidfile_cases[] = {
	{ "pidfile: ready", PIDFILE("4242", "ready   "), 0 },
	{ "pidfile: starting", PIDFILE("4242", "starting"), -EAGAIN },
	{ "pidfile: stopping", PIDFILE("4242", "stopping"), -EBADMSG },
	{ "pidfile: not yet the status line", "4242\n/tmp/d/data\n1796113184\n", -EAGAIN },
	{ "pidfile: empty", "", -EAGAIN },
	{ "pidfile: another server's", PIDFILE("4243", "ready   "), -EBADMSG },
	{ "pidfile: not a pid", PIDFILE("x42", "ready   "), -EBADMSG },
};

static void test_pidfile(void **state)
{
	const struct pidfile_case *c = *state;

	assert_int_equal(pg_pidfile_ready(c->text, strlen(c->text), 4242), c->rc);
}

struct shmem_case {
	const char *value;
	bool valid;
	int want;
};

static const struct shmem_case shmem_cases[] = {
	{ "always", true, 1 }, { "within_size", true, 1 }, { "force", true, 1 }, { "advise", true, 0 },
	{ "never", true, 0 }, { "deny", true, 0 }, { "keep", true, 0 }, { "madvise", false, 0 },
	{ "", false, 0 }, { "Always", false, 0 },
};

static void test_shmem_values(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < N(shmem_cases); i++) {
		if (pg_shmem_value_valid(shmem_cases[i].value) != shmem_cases[i].valid)
			fail_msg("'%s' valid should be %d", shmem_cases[i].value, shmem_cases[i].valid);
		assert_int_equal(pg_shmem_want(shmem_cases[i].value), shmem_cases[i].want);
	}
}

/* ---- fake roots --------------------------------------------------------------------- */

static char root_guest[] = "/tmp/thpeval-pg-guest-XXXXXX";	/* a thpeval guest: the mark, no passwd */
static char root_nouser[] = "/tmp/thpeval-pg-nouser-XXXXXX";	/* passwd without postgres */
static char root_none[] = "/tmp/thpeval-pg-none-XXXXXX";	/* no PostgreSQL */
static char root_small[] = "/tmp/thpeval-pg-small-XXXXXX";	/* MemAvailable 200M */

/* bin/{postgres,initdb,pgbench} of version v under root (stand-ins: check() looks only) */
static void fake_pg(const char *root, const char *v, bool complete)
{
	static const char *const progs[] = { "postgres", "initdb", "pgbench" };
	char rel[128], path[256];
	size_t i;

	for (i = 0; i < (complete ? 3u : 2u); i++) {
		snprintf(rel, sizeof(rel), "%s/%s/bin/%s", PG_LIBDIR, v, progs[i]);
		wlt_put(root, rel, "#!/bin/sh\nexit 1\n");
		snprintf(path, sizeof(path), "%s%s", root, rel);
		assert_int_equal(chmod(path, 0755), 0);
	}
}

static void fake_tmp(const char *root)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/tmp", root);
	assert_int_equal(mkdir(path, 01777), 0);
	assert_int_equal(chmod(path, 01777), 0);
}

static void test_find_version(void **state)
{
	char lib[256];
	unsigned v = 0;

	(void)state;
	snprintf(lib, sizeof(lib), "%s%s", root_guest, PG_LIBDIR);
	assert_int_equal(pg_find_version(lib, &v), 0);
	assert_int_equal(v, 15);	/* 13 lacks pgbench, "abc" is no version */
	snprintf(lib, sizeof(lib), "%s%s", root_none, PG_LIBDIR);
	assert_int_equal(pg_find_version(lib, &v), -ENOENT);
}

static struct wlt_bad bad_cases[] = {
	{ "bad: scale within shared buffers", root_guest, { "pgbench", "--scale=2", "--shared-buffers=64M" },
	  HARNESS_USAGE, REC_FAIL, "not more than --shared-buffers=64M" },
	{ "bad: shmem value", root_guest, { "pgbench", "--shmem-thp=madvise" }, HARNESS_USAGE, REC_FAIL,
	  "bad --shmem-thp 'madvise'" },
	{ "bad: shmem value with a space", root_guest, { "pgbench", "--shmem-thp=always never" }, HARNESS_USAGE,
	  REC_FAIL, "--shmem-thp" },
	{ "bad: relative dir", root_guest, { "pgbench", "--dir=tmp" }, HARNESS_USAGE, REC_FAIL, "bad --dir 'tmp'" },
	{ "bad: dir that is not one", root_guest, { "pgbench", "--dir=/nonexistent" }, HARNESS_USAGE, REC_FAIL,
	  "not a directory" },
	{ "bad: user root in a guest", root_guest, { "pgbench", "--user=root" }, HARNESS_USAGE, REC_FAIL,
	  "refuses to run as root" },
	{ "bad: template value", root_guest, { "pgbench", "--template=1" }, HARNESS_USAGE, REC_FAIL,
	  "bad --template '1': auto, yes or no" },
	{ "bad: zero seconds", root_guest, { "pgbench", "--seconds=0" }, HARNESS_USAGE, REC_FAIL,
	  "--seconds=0 is out of range" },
	{ "bad: more than memory", root_small, { "pgbench", "--scale=40" }, HARNESS_USAGE, REC_FAIL,
	  "a smaller --scale or more guest --memory" },
	{ "skip: no PostgreSQL", root_none, { "pgbench" }, HARNESS_SKIPPED, REC_SKIP,
	  "the guest image needs postgresql" },
	{ "skip: no such user", root_nouser, { "pgbench" }, HARNESS_SKIPPED, REC_SKIP, "no user 'postgres'" },
	{ "bad: the user is uid 0", root_nouser, { "pgbench", "--user=toor" }, HARNESS_USAGE, REC_FAIL,
	  "is uid 0" },
};

static void test_bad(void **state)
{
	const struct wlt_bad *c = *state;

	wlt_expect_bad(c->root, c->argv, N(c->argv), c->rc, c->type, c->reason, NULL);
}

/* check() never writes the guest's passwd: only a run does */
static void test_check_writes_nothing(void **state)
{
	const struct workload *w = workload_find("pgbench");
	const struct wl_env env = { .root = root_guest };
	struct pgbench_opts opts;
	struct wl_common common;
	struct err e = ERR_INIT;
	char path[256];

	(void)state;
	assert_int_equal(harness_parse_args(w, 0, NULL, &common, &opts, &e), 0);
	assert_int_equal(w->check(&opts, &env, &e), 0);
	snprintf(path, sizeof(path), "%s/etc/passwd", root_guest);
	assert_int_not_equal(access(path, F_OK), 0);
}

/* ---- a real run ------------------------------------------------------------------------ */

static const char *real_skip(void)
{
	static char why[160];
	char lib[] = PG_LIBDIR;
	unsigned v;

	if (geteuid())
		return "PostgreSQL runs as its own user: switching to it needs root";
	if (pg_find_version(lib, &v)) {
		snprintf(why, sizeof(why), "no PostgreSQL under %s (apt-get install postgresql)", PG_LIBDIR);
		return why;
	}
	return NULL;
}

static void real_run(const char *dir, const char *setup_want)
{
	const char *argv[] = { "pgbench", "--scale=2", "--shared-buffers=8M", "--seconds=1", "--template=yes", dir,
			       "--label=guest_thp=test" };
	static const char *const positive[] = { "select_tx_per_s", "select_lat_ms", "tpcb_tx_per_s", "tpcb_lat_ms",
						"select_tx", "tpcb_tx", "db_bytes", NULL };
	struct wlt_out o;
	uint64_t db, want;
	double pct;

	wlt_run("", argv, N(argv), &o);
	if (o.rc == HARNESS_SKIPPED) {
		print_message("skipped: %s\n", o.msg);
		wlt_free(&o);
		skip();
	}
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	assert_int_equal(o.n, 1);
	wlt_declared("pgbench", &o.rec[0], "guest_thp");
	wlt_positive(&o.rec[0], positive);
	assert_string_equal(rec_get(&o.rec[0], "setup"), setup_want);
	assert_null(rec_get(&o.rec[0], "variant"));	/* --shmem-thp=keep */
	assert_int_equal(rec_get_u64(&o.rec[0], "db_bytes", &db), 0);
	assert_true(db > 8u << 20);	/* the point: more than shared_buffers */
	assert_int_equal(rec_get_u64(&o.rec[0], "shmem_huge_want", &want), 0);
	assert_int_equal(want, pg_shmem_want(rec_get(&o.rec[0], "shmem_enabled")));
	if (rec_get_f64(&o.rec[0], "shmem_pmd_pct", &pct) == 0)
		assert_true(pct >= 0 && pct <= 100);
	else
		assert_non_null(rec_get(&o.rec[0], "cov_note"));
	wlt_free(&o);
}

static char real_dir[] = "/tmp/thpeval-pg-real-XXXXXX";	/* removed by teardown, a failed run's too */

/* two runs on one --dir: the first makes the template, the second copies it */
static void test_real_runs(void **state)
{
	const char *why = real_skip();
	char arg[64];

	(void)state;
	if (why) {
		print_message("skipped: %s\n", why);
		skip();
	}
	assert_non_null(mkdtemp(real_dir));
	assert_int_equal(chmod(real_dir, 0755), 0);	/* the user goes through it */
	snprintf(arg, sizeof(arg), "--dir=%s", real_dir);
	real_run(arg, "init");
	real_run(arg, "copy");
}

static char planted_dir[] = "/tmp/thpeval-pg-planted-XXXXXX";

/*
 * Something not the user's at the template's name (here a root-owned 0755
 * directory with a "complete" mark and data that is no cluster): neither
 * used nor removed; the run makes its cluster afresh.
 */
static void test_planted_template(void **state)
{
	const char *why = real_skip();
	char arg[64], tdir[256], path[320], lib[] = PG_LIBDIR;
	unsigned v;

	(void)state;
	if (why) {
		print_message("skipped: %s\n", why);
		skip();
	}
	assert_int_equal(pg_find_version(lib, &v), 0);
	assert_non_null(mkdtemp(planted_dir));
	assert_int_equal(chmod(planted_dir, 0755), 0);
	snprintf(tdir, sizeof(tdir), "%s/thpeval-pgbench-template-%u-s2", planted_dir, v);
	assert_int_equal(mkdir(tdir, 0755), 0);
	snprintf(path, sizeof(path), "%s/data", tdir);
	assert_int_equal(mkdir(path, 0755), 0);
	wlt_put(tdir, "/complete", "1\n");
	wlt_put(tdir, "/data/postgresql.conf", "planted\n");
	snprintf(arg, sizeof(arg), "--dir=%s", planted_dir);
	real_run(arg, "init");
	snprintf(path, sizeof(path), "%s/data/postgresql.conf", tdir);
	assert_int_equal(access(path, F_OK), 0);	/* left alone */
}

/* its traits: coverage as the record's shmem_huge_want says, the gate's metrics, the split */
static void test_traits(void **state)
{
	const struct wl_rule *r = wltraits_rule("pgbench", "shmem-always");
	const struct wl_split *sp = wltraits_split("pgbench");
	const char *const *pk = wltraits_packages("pgbench");
	const struct workload *w = workload_find("pgbench");

	(void)state;
	assert_string_equal(r->cov_field, "shmem_pmd_pct");
	assert_int_equal(r->want, WL_WANT_FIELD);
	assert_string_equal(r->want_field, "shmem_huge_want");
	assert_true(wltraits_primary("pgbench", "select_tx_per_s"));
	assert_true(wltraits_primary("pgbench", "tpcb_tx_per_s"));
	assert_false(wltraits_primary("pgbench", "setup_s"));
	assert_non_null(sp);
	assert_null(sp->fault_metric);
	assert_string_equal(sp->variant, "");
	assert_true(workload_has_field(w, sp->access_metric));
	assert_non_null(pk);
	assert_string_equal(pk[0], "postgresql");
}

static int setup(void **state)
{
	(void)state;
	if (!wlt_tree(root_guest, false, 4096000) || !wlt_tree(root_nouser, false, 4096000) ||
	    !wlt_tree(root_none, false, 4096000) || !wlt_tree(root_small, false, 204800))
		return -1;
	wlt_put(root_guest, "/etc/thpeval-image", "id=0123456789abcdef\n");
	fake_pg(root_guest, "15", true);
	fake_pg(root_guest, "13", false);
	wlt_put(root_guest, PG_LIBDIR "/abc/bin/postgres", "");
	fake_tmp(root_guest);
	wlt_put(root_nouser, "/etc/passwd", "root:x:0:0:root:/root:/bin/sh\ntoor:x:0:0::/:/bin/sh\n");
	fake_pg(root_nouser, "15", true);
	fake_tmp(root_nouser);
	fake_tmp(root_none);
	wlt_put(root_small, "/etc/thpeval-image", "id=0123456789abcdef\n");
	fake_pg(root_small, "15", true);
	fake_tmp(root_small);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	wlt_tree_free(root_guest);
	wlt_tree_free(root_nouser);
	wlt_tree_free(root_none);
	wlt_tree_free(root_small);
	if (!strstr(real_dir, "XXXXXX"))
		wlt_tree_free(real_dir);
	if (!strstr(planted_dir, "XXXXXX"))
		wlt_tree_free(planted_dir);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[N(report_cases) + N(pidfile_cases) + N(bad_cases) + 9];
	size_t i, n = 0;

	for (i = 0; i < N(report_cases); i++)
		tests[n++] = (struct CMUnitTest){ report_cases[i].name, test_report, NULL, NULL, &report_cases[i] };
	tests[n++] = (struct CMUnitTest){ "report: oversized, a long line, a NUL", test_report_oversized, NULL, NULL,
					  NULL };
	for (i = 0; i < N(pidfile_cases); i++)
		tests[n++] = (struct CMUnitTest){ pidfile_cases[i].name, test_pidfile, NULL, NULL, &pidfile_cases[i] };
	tests[n++] = (struct CMUnitTest){ "shmem_enabled values", test_shmem_values, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "version: the highest complete one", test_find_version, NULL, NULL, NULL };
	for (i = 0; i < N(bad_cases); i++)
		tests[n++] = (struct CMUnitTest){ bad_cases[i].name, test_bad, NULL, NULL, &bad_cases[i] };
	tests[n++] = (struct CMUnitTest){ "check writes no passwd", test_check_writes_nothing, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a template not the user's is neither used nor removed",
					  test_planted_template, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "two short real runs: template made, then copied", test_real_runs, NULL,
					  NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "traits", test_traits, NULL, NULL, NULL };
	return _cmocka_run_group_tests("pgbench", tests, n, setup, teardown);
}
