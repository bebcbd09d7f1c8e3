/* tests for lib/stats.c and orchestrator/model/results.c */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fstree.h"
#include "orchestrator/model/results.h"
#include "orchestrator/model/results_load.h"
#include "lib/stats.h"

static void test_summary(void **state)
{
	const double x[] = { 10, 12, 14, 16, 18 };
	struct summary s;

	summarize(x, 5, &s);
	assert_int_equal(s.n, 5);
	assert_true(fabs(s.mean - 14.0) < 1e-12);
	assert_true(fabs(s.sd - sqrt(10.0)) < 1e-12);
	/* t(4) = 2.7764451051978: half width = t * sqrt(10) / sqrt(5) */
	assert_true(fabs((s.ci95_high - s.mean) - 2.7764451051977944 * sqrt(2.0)) < 1e-9);
	assert_true(fabs(s.cv_pct - sqrt(10.0) / 14.0 * 100) < 1e-9);
	summarize(x, 1, &s);
	assert_true(isnan(s.sd) && isnan(s.ci95_low));
	assert_true(s.mean == 10);
	summarize(x, 0, &s);
	assert_true(isnan(s.mean));
	assert_true(isnan(t95(0)));
	assert_true(fabs(t95(1000) - 1.9623390808264085) < 1e-12);
}

/* Coverage of a simulated noisy measurement: the 95% CI should contain the
 * true mean in roughly 95% of trials. Deterministic PRNG, Box-Muller. */
static double rnd01(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return ((double)(*s >> 11) + 0.5) / 9007199254740992.0;
}

static void test_ci_coverage(void **state)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	int hits = 0, trials = 2000, t, i;

	for (t = 0; t < trials; t++) {
		double x[5];
		struct summary s;

		for (i = 0; i < 5; i++) {
			double u1 = rnd01(&seed), u2 = rnd01(&seed);

			x[i] = 100.0 + 7.0 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
		}
		summarize(x, 5, &s);
		if (s.ci95_low <= 100.0 && 100.0 <= s.ci95_high)
			hits++;
	}
	/* 95% +- 3 sigma of a binomial(2000, .95): [92.6%, 97.4%] */
	assert_in_range(hits, 1852, 1948);
}

struct vcase {
	const char *name, *host, *guest;
	double host_pct, guest_pct;
	int reps_ok;
	bool valid;
	const char *why;
};

static void test_validation(void **state)
{
	static const struct vcase cases[] = {
		{ "on/on ok", "always", "always", 97, 99, 3, true, NULL },
		{ "off/off ok", "never", "never", 0, 0, 3, true, NULL },
		{ "host never with huge", "never", "never", 40, 0, 3, false, "host THP is never but" },
		{ "host always low", "always", "never", 20, 0, 3, false, "host THP is always but only" },
		{ "guest never with huge", "always", "never", 97, 50, 3, false, "guest THP is never but" },
		{ "guest always low", "never", "always", 0, 10, 3, false, "guest THP is always but only" },
		{ "no reps", "never", "never", 0, 0, 0, false, "no successful repetition" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct vcase *v = &cases[i];
		struct results r;
		struct cell *c;
		int k;

		results_init(&r);
		c = results_cell(&r, "guest", v->host, v->guest, "memset", NULL);
		assert_non_null(c);
		for (k = 0; k < v->reps_ok; k++) {
			metric_add(&c->host_cov, v->host_pct);
			metric_add(&c->guest_cov, v->guest_pct);
			metric_add(cell_metric(c, "access_ns", NULL), 200 + k);
			c->reps_ok++;
		}
		results_finish(&r, 90.0);
		if (c->valid != v->valid)
			fail_msg("case '%s': valid=%d (%s)", v->name, c->valid, c->invalid_reason);
		if (!v->valid && !strstr(c->invalid_reason, v->why))
			fail_msg("case '%s': reason '%s' lacks '%s'", v->name, c->invalid_reason, v->why);
		results_release(&r);
	}
}

/*
 * Validity per boot: a host-always cell over boots whose host coverage is
 * given per boot (3 repetitions each, access time 100 * (boot + 1)); a boot
 * below 90% is left out with its reason, its samples out of the summaries;
 * the cell is invalid only when fewer than 2 boots remain.
 */
struct boot_case {
	const char *name;
	double cov[4];		/* host coverage per boot; < 0: no more boots */
	bool valid;
	size_t left;		/* boots left out */
	double mean;		/* access_ns mean of the kept boots (valid cells) */
	const char *why;	/* invalid_reason, or the first left-out reason */
};

static const struct boot_case boot_cases[] = {
	{ "every boot valid", { 97, 98, 99, -1 }, true, 0, 200, NULL },
	{ "one boot of 3 left out", { 97, 20, 99, -1 }, true, 1, 200,
	  "host THP is always but only 20.0% of guest RAM is on host huge pages" },
	{ "two of 4 left out: 2 remain", { 10, 97, 20, 99, }, true, 2, 300, "only 10.0%" },
	{ "two of 3 left out: 1 remains", { 97, 20, 30, -1 }, false, 2, NAN,
	  "2 of 3 boots left out, 1 valid (2 needed): host THP is always but only 20.0%" },
	{ "the one boot fails: its reason", { 20, -1, -1, -1 }, false, 1, NAN,
	  "host THP is always but only 20.0% of guest RAM is on host huge pages (need 90%)" },
	{ "one boot, valid", { 95, -1, -1, -1 }, true, 0, 100, NULL },
};

static void fill_boots(struct results *r, const struct boot_case *v)
{
	struct cell *c = results_cell(r, "guest", "always", "never", "memset", NULL);
	unsigned b;
	int k;

	assert_non_null(c);
	for (b = 0; b < 4 && v->cov[b] >= 0; b++)
		for (k = 0; k < 3; k++) {
			metric_add_boot(&c->host_cov, v->cov[b], b);
			metric_add_boot(&c->guest_cov, 0, b);
			metric_add_boot(cell_metric(c, "access_ns", NULL), 100.0 * (b + 1) + k - 1, b);
			c->reps_ok++;
		}
}

static void check_boots(const struct boot_case *v, const struct cell *c, const char *when)
{
	const struct metric *m = cell_metric_find(c, "access_ns");

	if (c->valid != v->valid)
		fail_msg("case '%s' %s: valid=%d (%s)", v->name, when, c->valid, c->invalid_reason);
	if (c->nleft != v->left)
		fail_msg("case '%s' %s: %zu boots left out, want %zu", v->name, when, c->nleft, v->left);
	if (!v->valid && !strstr(c->invalid_reason, v->why))
		fail_msg("case '%s' %s: reason '%s' lacks '%s'", v->name, when, c->invalid_reason, v->why);
	if (v->valid && v->left && !strstr(c->left[0].reason, v->why))
		fail_msg("case '%s' %s: left-out reason '%s' lacks '%s'", v->name, when, c->left[0].reason, v->why);
	assert_int_equal(metric_nall(m), 3 * c->boots_run);
	if (v->valid) {
		assert_int_equal(m->n, 3 * (c->boots_run - v->left));
		if (fabs(m->s.arith_mean - v->mean) > 1e-9)
			fail_msg("case '%s' %s: mean %.3f, want %.3f (left-out boots in it?)", v->name, when,
				 m->s.arith_mean, v->mean);
	} else {
		assert_int_equal(m->n, metric_nall(m));	/* an invalid cell keeps every sample */
	}
}

static void test_boot_validity(void **state)
{
	const struct boot_case *v = *state;
	struct results r, back;
	struct err e = ERR_INIT;
	char *text;
	size_t len;

	results_init(&r);
	/* settings within the ranges the loader checks, so that the run reads back */
	r.settings.reps = 3;
	r.settings.boots = 4;
	r.settings.vcpus = 1;
	r.settings.memory_bytes = RUN_MEMORY_MIN;
	r.settings.size_bytes = RUN_SIZE_ALIGN;
	r.settings.accesses = RUN_ACCESSES_MIN;
	r.settings.seed = RUN_SEED_MIN;
	r.settings.guests = 1;
	fill_boots(&r, v);
	results_finish(&r, 90.0);
	check_boots(v, &r.cells[0], "finished");
	/* judged again (the run loop finishes after every round): the same */
	results_finish(&r, 90.0);
	check_boots(v, &r.cells[0], "finished twice");
	/* written and read back: every sample kept, the same boots left out */
	if (results_to_json_text(&r, &text, &len, &e) || results_load_text(text, len, "t.json", &back, &e))
		fail_msg("case '%s': %s", v->name, e.msg);
	check_boots(v, &back.cells[0], "loaded");
	/* a new boot's samples join: every sample is analysed until validity runs again */
	metric_add_boot(cell_metric(&r.cells[0], "access_ns", NULL), 500, 9);
	assert_int_equal(cell_metric_find(&r.cells[0], "access_ns")->n, 3 * r.cells[0].boots_run + 1);
	free(text);
	results_release(&back);
	results_release(&r);
}

/* a run in which no cell measured anything is told apart, with the first reason there is */
static void test_any_rep_ok(void **state)
{
	struct results r;
	struct guest_log *g;
	struct cell *c, *d;
	char why[ERR_MSG_MAX];

	(void)state;
	results_init(&r);
	assert_false(results_any_rep_ok(&r, why, sizeof(why)));
	assert_string_equal(why, "no cell ran");
	c = results_cell(&r, "guest", "never", "never", "memset", NULL);
	d = results_cell(&r, "guest", "always", "never", "memset", NULL);
	assert_non_null(c);
	assert_non_null(d);
	cell_add_failure(d, "guest thpeval-1-1 stopped before it finished");
	assert_false(results_any_rep_ok(&r, why, sizeof(why)));
	assert_string_equal(why, "guest thpeval-1-1 stopped before it finished");
	g = results_guest_add(&r, NULL);
	assert_non_null(g);
	snprintf(g->name, sizeof(g->name), "thpeval-1-0");
	snprintf(g->status, sizeof(g->status), "failed");
	snprintf(g->error, sizeof(g->error), "cannot start the guest: out of memory");
	assert_false(results_any_rep_ok(&r, why, sizeof(why)));
	assert_string_equal(why, "guest thpeval-1-0: cannot start the guest: out of memory");
	snprintf(g->error, sizeof(g->error), "guest thpeval-1-0 did not finish within 25 s");
	assert_false(results_any_rep_ok(&r, why, sizeof(why)));
	assert_string_equal(why, "guest thpeval-1-0 did not finish within 25 s");
	d->reps_ok = 1;
	assert_true(results_any_rep_ok(&r, why, sizeof(why)));
	results_release(&r);
}

static void test_json(void **state)
{
	char dir[] = "/tmp/thpeval-test-results-XXXXXX", path[256];
	struct results r;
	struct cell *c;
	json_object *o, *cells, *cell, *m, *v;
	struct err e = ERR_INIT;

	assert_non_null(mkdtemp(dir));
	results_init(&r);
	snprintf(r.accel, sizeof(r.accel), "tcg");
	thp_settings_put(&r.thp_before, "enabled", "madvise", NULL);
	c = results_cell(&r, "guest", "always", "always", "memset", NULL);
	metric_add(cell_metric(c, "access_ns", NULL), 150.0);
	metric_add(cell_metric(c, "access_ns", NULL), 170.0);
	metric_add(cell_metric(c, "only_one", NULL), 1.0);
	metric_add(&c->host_cov, 99);
	metric_add(&c->guest_cov, 98);
	c->reps_ok = 2;
	results_finish(&r, 90);
	snprintf(path, sizeof(path), "%s/results.json", dir);
	assert_int_equal(results_write_json(&r, path, &e), 0);
	o = json_object_from_file(path);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "schema_version", &v));
	assert_int_equal(json_object_get_int(v), RESULTS_SCHEMA_VERSION);
	assert_true(json_object_object_get_ex(o, "accel", &v));
	assert_string_equal(json_object_get_string(v), "tcg");
	assert_true(json_object_object_get_ex(o, "host", &v));
	assert_true(json_object_object_get_ex(v, "thp_before", &v));
	assert_true(json_object_object_get_ex(v, "enabled", &v));
	assert_string_equal(json_object_get_string(v), "madvise");
	assert_true(json_object_object_get_ex(o, "cells", &cells));
	assert_int_equal(json_object_array_length(cells), 1);
	cell = json_object_array_get_idx(cells, 0);
	assert_true(json_object_object_get_ex(cell, "metrics", &m));
	assert_true(json_object_object_get_ex(m, "access_ns", &m));
	/* one kind of mean: geometric, named so; the arithmetic one kept and named so */
	assert_true(json_object_object_get_ex(m, "mean", &v));
	assert_true(fabs(json_object_get_double(v) - sqrt(150.0 * 170.0)) < 1e-9);
	assert_true(json_object_object_get_ex(m, "mean_kind", &v));
	assert_string_equal(json_object_get_string(v), "geometric");
	assert_true(json_object_object_get_ex(m, "arith_mean", &v));
	assert_true(fabs(json_object_get_double(v) - 160.0) < 1e-9);
	assert_true(json_object_object_get_ex(m, "samples", &v));
	assert_int_equal(json_object_array_length(v), 2);
	/* one sample: the interval is undefined and written as null, never NaN */
	assert_true(json_object_object_get_ex(cell, "metrics", &m));
	assert_true(json_object_object_get_ex(m, "only_one", &m));
	assert_true(json_object_object_get_ex(m, "ci95_low", &v));
	assert_null(v);
	assert_true(json_object_object_get_ex(cell, "coverage", &v));
	assert_true(json_object_object_get_ex(v, "host_huge_pct", &v));
	assert_true(fabs(json_object_get_double(v) - 99) < 1e-9);
	assert_true(json_object_object_get_ex(cell, "valid", &v));
	assert_true(json_object_get_boolean(v));
	json_object_put(o);
	unlink(path);
	rmdir(dir);
	results_release(&r);
}

/* ---- cells built from workload records (what run.c's on_result does with them) ---- */

/* a result record of workload/variant with "k=v" fields (numbers or text) */
static void mk_record(struct record *r, const char *workload, const char *variant, const char *const *kv)
{
	rec_init(r, REC_RESULT, 0);
	assert_int_equal(rec_add_str(r, "workload", workload), 0);
	if (variant)
		assert_int_equal(rec_add_str(r, "variant", variant), 0);
	for (; *kv; kv += 2)
		assert_int_equal(rec_add_str(r, kv[0], kv[1]), 0);
}

/* one repetition into the cell: numeric fields as metrics, then the treatment evidence */
static void take(struct cell *c, const struct record *r)
{
	double v;
	size_t i;

	for (i = 0; i < r->nfields; i++)
		if (strcmp(r->f[i].key, "workload") && strcmp(r->f[i].key, "variant") &&
		    !rec_get_f64(r, r->f[i].key, &v))
			assert_int_equal(metric_add(cell_metric(c, r->f[i].key, NULL), v), 0);
	cell_take_evidence(c, r, strcmp(c->target, "host") ? &c->guest_cov : &c->host_cov, 0);
	if (strcmp(c->target, "host"))
		metric_add(&c->host_cov, 99);	/* QEMU's guest RAM, as sample_host_coverage adds it */
	c->reps_ok++;
}

struct rcase {
	const char *name, *target, *host, *guest, *workload, *variant;
	const char *kv[12];
	bool valid;
	const char *why;
	const char *evidence, *rule;	/* coverage.evidence and coverage.rule in results.json */
};

#define ZP_REASON "reads allocated Rss 1G of 1G (AnonHugePages 1G) with use_zero_page=1, THP madvise, " \
		  "madvise=1; thp_zero_page_alloc +0 _failed +0: no huge zero page"

static const struct rcase rcases[] = {
	{ "hzp zp1 not in effect, guest", "guest", "always", "madvise", "hzp", "zp1",
	  { "memcmp_ns", "1000", "zero_page_in_effect", "0", "zero_page_reason", ZP_REASON,
	    "zero_page_mapped", "none", NULL },
	  false, "huge zero page not in effect (zero_page_in_effect=0): " ZP_REASON,
	  "zero_page_in_effect", "none" },
	{ "hzp zp1 not in effect, host", "host", "madvise", "none", "hzp", "zp1",
	  { "memcmp_ns", "1000", "zero_page_in_effect", "0", "zero_page_reason", ZP_REASON, NULL },
	  false, "huge zero page not in effect (zero_page_in_effect=0): " ZP_REASON,
	  "zero_page_in_effect", "none" },
	{ "hzp zp1 in effect", "host", "madvise", "none", "hzp", "zp1",
	  { "memcmp_ns", "1000", "zero_page_in_effect", "1", "zero_page_mapped", "huge", NULL },
	  true, NULL, "zero_page_in_effect", "none" },
	{ "hzp zp0 real huge pages", "guest", "always", "always", "hzp", "zp0",
	  { "memcmp_ns", "3000", "huge_pct", "100", NULL }, true, NULL, "huge_pct", "setting" },
	{ "color under host never", "host", "never", "none", "color", NULL,
	  { "huge_pct", "0", "l1d_nways_ns", "1.5", NULL },
	  false, "the arm asks for huge pages (MADV_HUGEPAGE, host THP never) but only 0.0% of the region",
	  "huge_pct", "huge" },
	{ "tlb 4k point, guest", "guest", "always", "always", "tlb", "ws16_4k",
	  { "huge_pct", "0", "access_ns", "2.5", NULL }, true, NULL, "huge_pct", "base" },
	{ "dd null: unmeasured", "guest", "always", "always", "dd", "null-4k",
	  { "mib_s", "900", "cov_note", "dd's own buffer is in the dd process", NULL },
	  false, "coverage of dd's buffer not measured: dd's own buffer is in the dd process", NULL,
	  "unmeasured" },
	{ "memset guest without guest_huge_pct", "guest", "always", "always", "memset", NULL,
	  { "access_ns", "100", NULL }, false, "no coverage evidence: the records lack guest_huge_pct",
	  "guest_huge_pct", "setting" },
};

static void test_record_cells(void **state)
{
	char dir[] = "/tmp/thpeval-test-rcells-XXXXXX", path[256];
	const struct rcase *v = *state;
	struct results *r = malloc(sizeof(*r)), *back = malloc(sizeof(*back));
	struct cell_key k = { v->target, v->host, NULL, v->guest, v->workload, v->variant, NULL, NULL };
	struct err e = ERR_INIT;
	json_object *o, *cell, *x;
	struct record rec;
	struct cell *c;
	int rep;

	assert_non_null(r);
	assert_non_null(back);
	results_init(r);
	c = results_cell_key(r, &k, NULL);
	assert_non_null(c);
	for (rep = 0; rep < 2; rep++) {
		mk_record(&rec, v->workload, v->variant, v->kv);
		take(c, &rec);
	}
	results_finish(r, 90.0);
	/* settings in the ranges the loader checks, as a run echoes them */
	r->settings.reps = 2;
	r->settings.boots = 1;
	r->settings.vcpus = 1;
	r->settings.memory_bytes = 1ull << 30;
	r->settings.size_bytes = 256ull << 20;
	r->settings.accesses = 1000000;
	r->settings.seed = 1;
	r->settings.min_coverage_pct = 90;
	if (c->valid != v->valid)
		fail_msg("valid=%d (%s)", c->valid, c->invalid_reason);
	if (!v->valid && !strstr(c->invalid_reason, v->why))
		fail_msg("reason '%s' lacks '%s'", c->invalid_reason, v->why);

	/* results.json says what decided, and the workload's note; loaded back, the same verdict */
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/results.json", dir);
	assert_int_equal(results_write_json(r, path, &e), 0);
	o = json_object_from_file(path);
	assert_non_null(o);
	assert_true(json_object_object_get_ex(o, "cells", &x));
	cell = json_object_array_get_idx(x, 0);
	assert_true(json_object_object_get_ex(cell, "coverage", &x));
	assert_true(json_object_object_get_ex(x, "rule", &x));
	assert_string_equal(json_object_get_string(x), v->rule);
	assert_true(json_object_object_get_ex(cell, "coverage", &x));
	assert_true(json_object_object_get_ex(x, "evidence", &x));
	if (v->evidence)
		assert_string_equal(json_object_get_string(x), v->evidence);
	else
		assert_null(x);
	assert_true(json_object_object_get_ex(cell, "treatment_note", &x));
	if (c->treatment_note[0])
		assert_string_equal(json_object_get_string(x), c->treatment_note);
	else
		assert_null(x);
	json_object_put(o);
	if (results_load(path, back, &e))
		fail_msg("load: %s", e.msg);
	assert_string_equal(back->cells[0].treatment_note, c->treatment_note);
	results_finish(back, 90.0);
	assert_int_equal(back->cells[0].valid, v->valid);
	assert_string_equal(back->cells[0].invalid_reason, c->invalid_reason);
	unlink(path);
	rmdir(dir);
	results_release(back);
	results_release(r);
	free(back);
	free(r);
}

/* the earlier file is intact and nothing but it is left in dir */
static void assert_only_first(const char *dir)
{
	char path[256], buf[16] = { 0 };
	struct dirent *d;
	size_t n = 0;
	DIR *dp;
	FILE *f;

	snprintf(path, sizeof(path), "%s/out.json", dir);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fread(buf, 1, sizeof(buf) - 1, f), 5);
	fclose(f);
	assert_string_equal(buf, "first");
	dp = opendir(dir);
	assert_non_null(dp);
	while ((d = readdir(dp)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			n++;
	closedir(dp);
	assert_int_equal(n, 1);	/* no temporary left behind */
}

/*
 * A failing write keeps the earlier file intact and leaves no temporary
 * behind, for root too: the temporary cannot be created (its name is taken
 * by a directory: what a read-only or full directory does to anyone), or
 * cannot be written (RLIMIT_FSIZE of 2 bytes, which binds root as well: a
 * full disk mid-write).
 */
/* per-position geometric means: the k-th sample of each boot, whatever the boots' order */
struct pos_case {
	const char *name;
	size_t n;
	double v[8];
	unsigned boot[8];
	size_t npos;
	double want[4];
};

static const struct pos_case pos_cases[] = {
	{ "one boot: each sample its own position", 3, { 2, 4, 8 }, { 0, 0, 0 }, 3, { 2, 4, 8 } },
	{ "two boots interleaved", 4, { 2, 1, 8, 4 }, { 0, 1, 0, 1 }, 2, { 1.4142135623730951, 5.6568542494923806 } },
	{ "a boot with fewer repetitions", 3, { 2, 8, 4 }, { 0, 0, 1 }, 2, { 2.8284271247461903, 8 } },
	{ "a sample not positive: NAN", 2, { 0, 4 }, { 0, 1 }, 1, { NAN } },
	{ "no samples", 0, { 0 }, { 0 }, 0, { 0 } },
};

static void test_position_geomeans(void **state)
{
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(pos_cases) / sizeof(pos_cases[0]); i++) {
		const struct pos_case *c = &pos_cases[i];
		static struct metric m;
		double g[4];
		size_t n;

		memset(&m, 0, sizeof(m));
		for (k = 0; k < c->n; k++)
			assert_int_equal(metric_add_boot(&m, c->v[k], c->boot[k]), 0);
		n = metric_position_geomeans(&m, g, 4);
		if (n != c->npos)
			fail_msg("%s: %zu positions, want %zu", c->name, n, c->npos);
		for (k = 0; k < n; k++)
			if (isnan(c->want[k]) ? !isnan(g[k]) : fabs(g[k] - c->want[k]) > 1e-9)
				fail_msg("%s: position %zu is %g, want %g", c->name, k + 1, g[k], c->want[k]);
	}
}

static void test_atomic_write(void **state)
{
	char dir[] = "/tmp/thpeval-test-atomic-XXXXXX", path[256], tmp[300];
	struct err e = ERR_INIT;
	struct rlimit old, tiny = { 2, 2 };
	struct sigaction ign = { .sa_handler = SIG_IGN }, was;
	int r;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.json", dir);
	assert_int_equal(write_file_atomic(path, "first", 5, 0644, &e), 0);

	/* cannot create the temporary */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
	assert_int_equal(mkdir(tmp, 0700), 0);
	assert_int_not_equal(write_file_atomic(path, "second", 6, 0644, &e), 0);
	assert_non_null(strstr(e.msg, "cannot create"));
	assert_int_equal(rmdir(tmp), 0);
	assert_only_first(dir);

	/* cannot write it: EFBIG past 2 bytes (SIGXFSZ ignored so that write() fails instead) */
	err_clear(&e);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(sigaction(SIGXFSZ, &ign, &was), 0);
	tiny.rlim_max = old.rlim_max;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &tiny), 0);
	r = write_file_atomic(path, "second", 6, 0644, &e);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	assert_int_equal(sigaction(SIGXFSZ, &was, NULL), 0);
	assert_int_equal(r, -EFBIG);
	assert_non_null(strstr(e.msg, "cannot write"));
	assert_only_first(dir);

	snprintf(path, sizeof(path), "%s/missing-dir/out.json", dir);
	err_clear(&e);
	assert_int_not_equal(write_file_atomic(path, "x", 1, 0644, &e), 0);
	assert_only_first(dir);
	snprintf(path, sizeof(path), "%s/out.json", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	static const struct CMUnitTest fixed[] = {
		cmocka_unit_test(test_summary),
		cmocka_unit_test(test_ci_coverage),
		cmocka_unit_test(test_validation),
		cmocka_unit_test(test_any_rep_ok),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_atomic_write),
		cmocka_unit_test(test_position_geomeans),
	};
	struct CMUnitTest tests[sizeof(fixed) / sizeof(fixed[0]) + sizeof(rcases) / sizeof(rcases[0]) +
			       sizeof(boot_cases) / sizeof(boot_cases[0])];
	size_t i, n = 0;

	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		tests[n++] = fixed[i];
	for (i = 0; i < sizeof(rcases) / sizeof(rcases[0]); i++)
		tests[n++] = (struct CMUnitTest){ rcases[i].name, test_record_cells, NULL, NULL,
						  (void *)(uintptr_t)&rcases[i] };
	for (i = 0; i < sizeof(boot_cases) / sizeof(boot_cases[0]); i++)
		tests[n++] = (struct CMUnitTest){ boot_cases[i].name, test_boot_validity, NULL, NULL,
						  (void *)(uintptr_t)&boot_cases[i] };
	return _cmocka_run_group_tests("orchestrator/results", tests, n, NULL, NULL);
}
