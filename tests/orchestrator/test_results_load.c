/* tests for orchestrator/model/results_load.c: round trip and strict rejection of bad files */
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
#include <sys/stat.h>
#include <unistd.h>

#include "orchestrator/analysis/effects.h"
#include "orchestrator/model/results.h"
#include "orchestrator/model/results_load.h"
#include "host/procfs.h"
#include "tests/orchestrator/fixture.h"

static char *fixture_text(size_t *len)
{
	char path[4096];
	char *t;

	fixture_path(path, sizeof(path), FIXTURE_2X2);
	t = fixture_slurp(path, len);
	if (!t)
		fail_msg("fixture %s missing (run from the repository root)", path);
	return t;
}

static void test_load_fixture(void **state)
{
	char path[4096];
	struct results *r = malloc(sizeof(*r));
	struct err e = ERR_INIT;
	const struct metric *m;

	fixture_path(path, sizeof(path), FIXTURE_2X2);
	if (results_load(path, r, &e))
		fail_msg("load: %s", e.msg);
	assert_int_equal(r->ncells, 4);
	assert_int_equal(r->nguests, 2);
	assert_string_equal(r->accel, "tcg");
	assert_string_equal(r->status, "complete");
	assert_string_equal(r->cells[0].host_thp, "never");
	assert_string_equal(r->cells[3].guest_thp, "always");
	assert_string_equal(r->cells[0].prefault, "ondemand");	/* absent key: the default */
	assert_string_equal(r->cells[0].variant, "");
	assert_true(r->have_thp_after);
	assert_string_equal(thp_settings_get(&r->thp_before, "enabled"), "madvise");
	assert_int_equal(r->settings.seed, 2120196044ull);
	assert_true(r->settings.min_coverage_pct == 90.0);
	assert_int_equal(r->started, 1795989451);
	m = cell_metric_find(&r->cells[3], "access_ns");
	assert_non_null(m);
	assert_int_equal(m->n, 2);
	assert_true(m->samples[0] == 347.66743700000001);
	/* statistics recomputed from the samples: the arithmetic mean equals
	 * the stored one (written before the geometric mean); the stored
	 * ci95_high 423.399364 used the old table's t(1) = 12.706. The mean
	 * is now geometric, over the two repetitions of the one boot, with its
	 * interval exp(mean log +- t(1) se) */
	assert_true(fabs(m->s.arith_mean - 353.19289500000002) < 1e-9);
	assert_true(m->s.geo);
	assert_true(fabs(m->s.mean - sqrt(m->samples[0] * m->samples[1])) < 1e-9);
	{
		double l0 = log(m->samples[0]), l1 = log(m->samples[1]), ml = (l0 + l1) / 2;
		double se = fabs(l0 - l1) / 2;	/* sd sqrt(2) |l0 - l1| / 2 over sqrt(2) */

		assert_true(fabs(m->s.ci95_high - exp(ml + t95(1) * se)) < 1e-6);
	}
	assert_true(m->s.min == m->samples[0]);
	assert_true(r->cells[3].valid);
	assert_true(isfinite(r->guests[0].total_s));
	assert_string_equal(r->guests[0].prefault, "ondemand");	/* absent key: the default */
	assert_string_equal(r->guests[0].host_state, "fresh");
	/* the loader keeps the model only; the analysis recomputes the split
	 * (this file predates it) */
	assert_null(r->effects);
	assert_int_equal(effects_attach(r, &e), 0);
	assert_non_null(r->effects);
	assert_true(r->effects->n > 0);
	results_release(r);
	free(r);
}

/*
 * r written to DIR/a.json, that loaded into back and written to DIR/b.json: the
 * two files are the same bytes; returns a's text, its length in *len
 */
static char *write_load_write(const struct results *r, struct results *back, const char *dir,
			      size_t *len)
{
	char a[4200], b[4200], *ta, *tb;
	struct err e = ERR_INIT;
	size_t lb;

	snprintf(a, sizeof(a), "%s/a.json", dir);
	snprintf(b, sizeof(b), "%s/b.json", dir);
	if (results_write_json(r, a, &e) || results_load(a, back, &e) || results_write_json(back, b, &e))
		fail_msg("%s", e.msg);
	ta = fixture_slurp(a, len);
	tb = fixture_slurp(b, &lb);
	assert_non_null(ta);
	assert_non_null(tb);
	assert_int_equal(*len, lb);
	assert_memory_equal(ta, tb, lb);
	free(tb);
	return ta;
}

/* write -> load -> write gives byte-identical JSON */
static void test_round_trip(void **state)
{
	char *dir = fixture_tmpdir("load"), src[4096];
	struct results *r1 = malloc(sizeof(*r1)), *r2 = malloc(sizeof(*r2));
	struct err e = ERR_INIT;
	char *ta, *txt;
	size_t la, lt;

	fixture_path(src, sizeof(src), FIXTURE_2X2);
	if (results_load(src, r1, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(r1->host.name, "");	/* the fixture predates host.name */
	snprintf(r1->host.name, sizeof(r1->host.name), "lab-7");
	ta = write_load_write(r1, r2, dir, &la);
	assert_string_equal(r2->host.name, "lab-7");
	/* the text form is the same bytes */
	if (results_to_json_text(r2, &txt, &lt, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(lt, la);
	assert_memory_equal(txt, ta, la);
	/* and loading the text directly gives the same model */
	results_release(r2);
	if (results_load_text(txt, lt, "text", r2, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(r2->ncells, r1->ncells);
	assert_true(r2->cells[2].metrics[1].samples[1] == r1->cells[2].metrics[1].samples[1]);
	free(txt);
	free(ta);
	results_release(r1);
	results_release(r2);
	free(r1);
	free(r2);
	fixture_rm_rf(dir);
	free(dir);
}

/* a directory is read as DIR/results.json */
static void test_load_directory(void **state)
{
	char *dir = fixture_tmpdir("load"), src[4096], dst[4200];
	struct results *r = malloc(sizeof(*r));
	struct err e = ERR_INIT;
	char *t;
	size_t len;
	FILE *f;

	fixture_path(src, sizeof(src), FIXTURE_2X2);
	t = fixture_slurp(src, &len);
	assert_non_null(t);
	snprintf(dst, sizeof(dst), "%s/results.json", dir);
	f = fopen(dst, "w");
	assert_non_null(f);
	fwrite(t, 1, len, f);
	fclose(f);
	if (results_load(dir, r, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(r->ncells, 4);
	results_release(r);
	free(r);
	free(t);
	fixture_rm_rf(dir);
	free(dir);
}

enum edit { E_REPLACE, E_TRUNCATE, E_APPEND, E_WHOLE };

struct bad_case {
	const char *name;
	enum edit edit;
	const char *from, *to;	/* E_REPLACE: first occurrence; E_APPEND: to; E_WHOLE: to */
	const char *want[3];	/* substrings of the message */
};

static const struct bad_case bad_cases[] = {
	{ "truncated", E_TRUNCATE, NULL, NULL, { "is not valid JSON", "line ", "truncated" } },
	{ "trailing data", E_APPEND, NULL, "}\n", { "data after the end of the document", "line 880" } },
	{ "not json", E_WHOLE, NULL, "hello, world\n", { "is not JSON", "not a thpeval results file" } },
	{ "empty file", E_WHOLE, NULL, "", { "is empty" } },
	{ "other json", E_WHOLE, NULL, "{\"name\": \"x\", \"version\": 3}\n", { "is not a thpeval results file" } },
	{ "json array", E_WHOLE, NULL, "[1, 2, 3]\n", { "is not a thpeval results file" } },
	{ "unknown schema", E_REPLACE, "\"schema_version\":1", "\"schema_version\":7",
	  { "unknown schema version 7 in '", "this thpeval reads version 1" } },
	{ "schema as string", E_REPLACE, "\"schema_version\":1", "\"schema_version\":\"1\"",
	  { "'schema_version' must be an integer, not a string" } },
	{ "reps_ok as string", E_REPLACE, "\"reps_ok\":2", "\"reps_ok\":\"2\"",
	  { "'cells[0].reps_ok' must be an integer, not a string" } },
	{ "sample as string", E_REPLACE, "358831227.0", "\"358831227\"",
	  { "'cells[0].metrics.fault_elapsed_ns.samples[0]' must be a number, not a string" } },
	{ "valid as number", E_REPLACE, "\"valid\":true", "\"valid\":1",
	  { "'cells[0].valid' must be true or false, not an integer" } },
	{ "metrics as array", E_REPLACE, "\"metrics\":{", "\"metrics\":[],\"x\":{",
	  { "'cells[0].metrics' must be an object, not an array" } },
	{ "host as null", E_REPLACE, "\"host\":{", "\"host\":null,\"x\":{",
	  { "'host' must be an object, not null" } },
	{ "missing guests", E_REPLACE, "\"guests\":[", "\"guestz\":[", { "missing key 'guests'" } },
	{ "missing kernel", E_REPLACE, "\"kernel\":", "\"kernal\":", { "missing key 'host.kernel'" } },
	{ "n disagrees", E_REPLACE, "\"n\":2", "\"n\":3", { "is 3 but there are 2 samples" } },
	{ "negative reps", E_REPLACE, "\"reps\":2", "\"reps\":-2", { "'settings.reps' is out of range" } },
	{ "long workload", E_REPLACE, "\"workload\":\"memset\"",
	  "\"workload\":\"memset-with-a-name-far-too-long-for-the-model\"", { "'cells[0].workload' is longer than" } },
	{ "effects as object", E_REPLACE, "\"guests\":[", "\"effects\":{},\"guests\":[",
	  { "'effects' must be an array, not an object" } },
	/* json-c's lenient tokener took these: the strict parse refuses them */
	{ "repeated key", E_REPLACE, "\"reps_ok\":2", "\"reps_ok\":2,\"reps_ok\":3",
	  { "is not valid JSON", "an object repeats the key 'reps_ok'" } },
	{ "repeated key, escaped", E_REPLACE, "\"valid\":true", "\"valid\":true,\"v\\u0061lid\":false",
	  { "an object repeats the key 'valid'" } },
	{ "repeated top key", E_REPLACE, "\"status\":", "\"status\":\"x\",\"status\":",
	  { "an object repeats the key 'status'", "line 4," } },
	{ "repeated key, object then string", E_REPLACE, "\"status\":", "\"status\":{\"a\":[{}]},\"status\":",
	  { "an object repeats the key 'status'", "line 4," } },
	{ "repeated key, two objects", E_REPLACE, "\"host\":{", "\"host\":{\"x\":1},\"host\":{",
	  { "an object repeats the key 'host'" } },
	{ "repeated key, NUL in the name", E_REPLACE, "\"reps_ok\":2", "\"reps_ok\\u0000a\":2,\"reps_ok\\u0000b\":2",
	  { "an object repeats the key 'reps_ok'" } },
	{ "comment", E_REPLACE, "\"reps_ok\":2", "\"reps_ok\":/* two */2", { "is not valid JSON" } },
	{ "leading zero", E_REPLACE, "\"reps_ok\":2", "\"reps_ok\":02", { "is not valid JSON" } },
	{ "lone surrogate", E_REPLACE, "\"workload\":\"memset\"", "\"workload\":\"mem\\ud800set\"",
	  { "a lone UTF-16 surrogate in a string" } },
	{ "NaN", E_REPLACE, "358831227.0", "NaN", { "an unexpected character" } },
	{ "infinity", E_REPLACE, "358831227.0", "infinity", { "a word that is not true, false or null" } },
	{ "single quote", E_REPLACE, "\"reps_ok\":2", "'reps_ok':2", { "a single quote" } },
	/* values the run command refuses, or a guest cannot measure, are refused with the key */
	{ "memory 0", E_REPLACE, "\"memory_bytes\":536870912", "\"memory_bytes\":0",
	  { "'settings.memory_bytes' is out of range (268435456 to 1099511627776)" } },
	{ "reps 2^31", E_REPLACE, "\"reps\":2,", "\"reps\":2147483648,", { "'settings.reps' is out of range (1 to 100)" } },
	{ "accesses 0", E_REPLACE, "\"accesses\":300000", "\"accesses\":0", { "'settings.accesses' is out of range" } },
	{ "min coverage 150", E_REPLACE, "\"min_coverage_pct\":90.0", "\"min_coverage_pct\":150.0",
	  { "'settings.min_coverage_pct' is 150, out of range (0 to 100)" } },
	{ "negative sample", E_REPLACE, "358831227.0", "-358831227.0",
	  { "'cells[0].metrics.fault_elapsed_ns.samples[0]' is out of range", "a time or rate cannot be negative" } },
	{ "coverage 201", E_REPLACE, "\"guest_huge_pct_samples\":{\n          \"samples\":[\n            0.0",
	  "\"guest_huge_pct_samples\":{\n          \"samples\":[\n            201.0",
	  { "'cells[0].coverage.guest_huge_pct_samples.samples[0]' is out of range", "from 0 to 100 percent" } },
	{ "negative guest time", E_REPLACE, "\"total_s\":18.9", "\"total_s\":-18.9",
	  { "'guests[0].total_s' is -18.9", "out of range" } },
	{ "duplicate cell", E_REPLACE, "\"guest_thp\":\"always\"", "\"guest_thp\":\"never\"",
	  { "repeats the cell never/never/memset" } },
};

static char *apply_edit(const struct bad_case *c, const char *orig, size_t olen, size_t *len)
{
	char *out = NULL;
	const char *at;

	switch (c->edit) {
	case E_TRUNCATE:
		out = strndup(orig, olen / 2);
		break;
	case E_APPEND:
		if (asprintf(&out, "%s%s", orig, c->to) < 0)
			out = NULL;
		break;
	case E_WHOLE:
		out = strdup(c->to);
		break;
	case E_REPLACE:
		at = strstr(orig, c->from);
		if (!at)
			fail_msg("case '%s': '%s' not in the fixture", c->name, c->from ? c->from : "?");
		if (asprintf(&out, "%.*s%s%s", (int)(at - orig), orig, c->to, at + strlen(c->from)) < 0)
			out = NULL;
		break;
	}
	assert_non_null(out);
	*len = strlen(out);
	return out;
}

static void test_bad_files(void **state)
{
	char *dir = fixture_tmpdir("load"), path[4200];
	size_t olen, i, k;
	char *orig = fixture_text(&olen);
	struct results *r = malloc(sizeof(*r));

	snprintf(path, sizeof(path), "%s/results.json", dir);
	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct err e = ERR_INIT;
		size_t len;
		char *txt = apply_edit(c, orig, olen, &len);
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fwrite(txt, 1, len, f);
		fclose(f);
		if (!results_load(path, r, &e))
			fail_msg("case '%s': loaded", c->name);
		if (e.code >= 0)
			fail_msg("case '%s': code %d", c->name, e.code);
		for (k = 0; k < 3 && c->want[k]; k++)
			if (!strstr(e.msg, c->want[k]))
				fail_msg("case '%s': message '%s' lacks '%s'", c->name, e.msg, c->want[k]);
		if (!strstr(e.msg, path))
			fail_msg("case '%s': message '%s' does not name the file", c->name, e.msg);
		/* one line, lower-case start, no full stop */
		if (strchr(e.msg, '\n') || e.msg[strlen(e.msg) - 1] == '.')
			fail_msg("case '%s': message '%s' is not one clean line", c->name, e.msg);
		/* nothing half-loaded */
		assert_int_equal(r->ncells, 0);
		assert_null(r->cells);
		assert_int_equal(r->nguests, 0);
		print_message("  %-18s -> %s\n", c->name, e.msg);
		free(txt);
	}
	free(r);
	free(orig);
	fixture_rm_rf(dir);
	free(dir);
}

/*
 * A fragmented arm's record survives write -> load -> write, the fields the
 * arm added later (proactive compaction, per-CPU lists, migration and reclaim
 * while the guests ran) included; a proactiveness over 100 is refused, and a
 * null one (a kernel without the sysctl) loads as "none".
 */
static void test_frag_round_trip(void **state)
{
	char *dir = fixture_tmpdir("load"), src[4096];
	struct results *r1 = malloc(sizeof(*r1)), *r2 = malloc(sizeof(*r2));
	struct err e = ERR_INIT;
	struct frag_log *f;
	struct bad_case c = { "proactiveness", E_REPLACE, "\"compaction_proactiveness_before\":20", NULL, { NULL } };
	char *ta, *edited;
	size_t la, len;

	(void)state;
	fixture_path(src, sizeof(src), FIXTURE_2X2);
	if (results_load(src, r1, &e))
		fail_msg("%s", e.msg);
	f = results_frag_add(r1, &e);
	assert_non_null(f);
	snprintf(f->host_thp, sizeof(f->host_thp), "always");
	snprintf(f->prefault, sizeof(f->prefault), "ondemand");
	snprintf(f->stopped, sizeof(f->stopped), "exhausted");
	snprintf(f->proactiveness, sizeof(f->proactiveness), "20");
	f->bytes = 21504ull << 20;
	f->orders = 11;
	f->buddy_before[10] = 4000;
	f->buddy_after[8] = 10000;
	f->buddy_undone[10] = 3900;
	f->free2m_before_kb = 4000ull * 4096;
	f->free2m_after_kb = 0;
	f->free2m_undone_kb = 3900ull * 4096;
	f->have_undone = f->restored = f->pcp_low = f->pcp_drained = true;
	f->frag_compact_scanned = 7;
	f->compact_stall = 64;
	f->compact_fail = 64;
	f->compact_scanned_guests = 680;
	f->pgmigrate_success = 3;
	f->pgsteal_direct = 824;
	ta = write_load_write(r1, r2, dir, &la);
	assert_int_equal(r2->nfrags, 1);
	f = &r2->frags[0];
	assert_string_equal(f->proactiveness, "20");
	assert_true(f->pcp_low && f->pcp_drained && f->restored && f->have_undone);
	assert_int_equal(f->frag_compact_scanned, 7);
	assert_int_equal(f->compact_scanned_guests, 680);
	assert_int_equal(f->pgmigrate_success, 3);
	assert_int_equal(f->pgsteal_direct, 824);
	assert_int_equal(f->free2m_undone_kb, 3900ull * 4096);
	/* buddyinfo comes back, so the report's unusable index is the one written */
	assert_int_equal(f->orders, 11);
	assert_int_equal(f->buddy_after[8], 10000);
	assert_true(buddy_unusable_pct(f->buddy_after, f->orders, 9) == 100.0);

	results_release(r2);
	c.to = "\"compaction_proactiveness_before\":101";
	edited = apply_edit(&c, ta, la, &len);
	assert_int_not_equal(results_load_text(edited, len, "frag.json", r2, &e), 0);
	assert_non_null(strstr(e.msg, "compaction_proactiveness_before' is out of range (0 to 100)"));
	free(edited);
	err_clear(&e);
	c.to = "\"compaction_proactiveness_before\":null";
	edited = apply_edit(&c, ta, la, &len);
	if (results_load_text(edited, len, "frag.json", r2, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(r2->frags[0].proactiveness, "");
	free(edited);
	free(ta);
	results_release(r1);
	results_release(r2);
	free(r1);
	free(r2);
	fixture_rm_rf(dir);
	free(dir);
}

static void test_missing_file(void **state)
{
	struct results *r = malloc(sizeof(*r));
	struct err e = ERR_INIT;

	assert_int_equal(results_load("/nonexistent/thpeval/results.json", r, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "'/nonexistent/thpeval/results.json' does not exist"));
	err_clear(&e);
	assert_true(results_load("/dev/null", r, &e) < 0);
	assert_non_null(strstr(e.msg, "not a regular file"));
	free(r);
}

/* `{"schema_version": 1, "KEY": [ITEM,ITEM,...]}` with n items, into a temporary file */
static char *plant(const char *key, const char *item, size_t n)
{
	char *path = strdup("/tmp/thpeval-test-big-XXXXXX");
	FILE *f;
	size_t i;
	int fd;

	assert_non_null(path);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f, "{\"schema_version\": 1, \"%s\": [", key);
	for (i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? "," : "", item);
	fprintf(f, "]}\n");
	assert_int_equal(fclose(f), 0);
	return path;
}

struct big_case {
	const char *name;
	const char *key, *item;
	size_t n;
	const char *msg;	/* in the error */
};

static const struct big_case big_cases[] = {
	{ "one cell over the cap", "cells", "{}", RESULTS_MAX_CELLS + 1, "has 2001 cells, more than the 2000" },
	{ "values over the cap", "x", "0", RESULTS_MAX_VALUES + 1, "JSON values, more than the 4194304" },
};

/* refused by counting, before json-c builds anything: the message says which cap */
static void test_too_big(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(big_cases) / sizeof(big_cases[0]); i++) {
		const struct big_case *c = &big_cases[i];
		struct results *r = malloc(sizeof(*r));
		struct err e = ERR_INIT;
		char *path = plant(c->key, c->item, c->n);

		assert_non_null(r);
		assert_int_equal(results_load(path, r, &e), -EFBIG);
		if (!strstr(e.msg, c->msg))
			fail_msg("%s: '%s' does not say '%s'", c->name, e.msg, c->msg);
		unlink(path);
		free(path);
		free(r);
	}
}

/* a FIFO is refused at once, never opened blocking */
static void test_fifo(void **state)
{
	char path[] = "/tmp/thpeval-test-fifo-XXXXXX", fifo[64];
	struct results *r = malloc(sizeof(*r));
	struct err e = ERR_INIT;

	(void)state;
	assert_non_null(r);
	assert_non_null(mkdtemp(path));
	snprintf(fifo, sizeof(fifo), "%s/results.json", path);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	assert_int_equal(results_load(path, r, &e), -EINVAL);	/* the run directory */
	assert_non_null(strstr(e.msg, "results.json' is a FIFO, not a regular file"));
	unlink(fifo);
	rmdir(path);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_fixture),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_frag_round_trip),
		cmocka_unit_test(test_load_directory),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_fifo),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
