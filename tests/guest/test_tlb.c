/*
 * tests for guest/tlb.c: the chain (one cycle, distinct lines), the sweep's
 * points, parameter checks (fail records with reasons, fake /proc), a
 * short real run whose records are parsed and checked, and the default sweep
 * on the fixture machines' CPUs (tests/guest/fixtures).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/region.h"
#include "guest/sysinfo.h"
#include "guest/tlb.h"
#include "thppolicy.h"
#include "wltest.h"

#define N(a) WLT_N(a)

static char small_root[] = "/tmp/thpeval-tlb-XXXXXX";	/* MemAvailable 900M */

/* ---- the chain --------------------------------------------------------------- */

struct chain_case {
	const char *name;
	size_t npages, per_page;
	uint64_t seed;
};

static struct chain_case chain_cases[] = {
	{ "one node per page, 512 pages", 512, 1, 1 },
	{ "one node per page, seed 0", 300, 1, 0 },
	{ "two pages", 2, 1, 9 },
	{ "baseline: 64 lines of one page", 1, 64, 1 },
	{ "4 pages x 16 lines", 4, 16, 77 },
};

static void test_chain(void **state)
{
	const struct chain_case *c = *state;
	size_t bytes = c->npages * 4096, nodes = c->npages * c->per_page, i;
	char *buf = aligned_alloc(4096, bytes);
	uint32_t *scratch = malloc(nodes * sizeof(*scratch));
	unsigned char *seen = calloc(bytes / 64, 1);
	unsigned *per_page = calloc(c->npages, sizeof(unsigned));
	void *start, *p;

	assert_non_null(buf);
	assert_non_null(scratch);
	assert_non_null(seen);
	assert_non_null(per_page);
	memset(buf, 0, bytes);
	start = tlb_chain_build(buf, c->npages, c->per_page, c->seed, scratch);
	p = start;
	for (i = 0; i < nodes; i++) {
		size_t off = (size_t)((char *)p - buf);

		assert_true(off < bytes);
		assert_int_equal(off % 64, 0);
		assert_int_equal(seen[off / 64], 0);	/* every node once before the cycle closes */
		seen[off / 64] = 1;
		per_page[off / 4096]++;
		p = *(void **)p;
	}
	assert_ptr_equal(p, start);
	assert_ptr_equal(tlb_chase(start, nodes), start);
	for (i = 0; i < c->npages; i++)
		assert_int_equal(per_page[i], c->per_page);
	free(per_page);
	free(seen);
	free(scratch);
	free(buf);
}

/* nodes of one page per page spread over many cache lines (different sets) */
static void test_chain_lines_spread(void **state)
{
	size_t npages = 512, i, lines = 0;
	char *buf = aligned_alloc(4096, npages * 4096);
	uint32_t *scratch = malloc(npages * sizeof(*scratch));
	unsigned char used[64] = { 0 };
	void *p;

	(void)state;
	assert_non_null(buf);
	assert_non_null(scratch);
	p = tlb_chain_build(buf, npages, 1, 5, scratch);
	for (i = 0; i < npages; i++) {
		size_t line = ((size_t)((char *)p - buf) % 4096) / 64;

		lines += !used[line]++;
		p = *(void **)p;
	}
	assert_true(lines >= 48);
	free(scratch);
	free(buf);
}

struct points_case {
	const char *name;
	uint64_t min, max;
	size_t n;
	uint64_t want[TLB_MAX_POINTS];
};

static struct points_case points_cases[] = {
	{ "defaults", 16, 16384, 6, { 16, 64, 256, 1024, 4096, 16384 } },
	{ "max not a 4x step", 16, 100, 3, { 16, 64, 100 } },
	{ "min = max", 64, 64, 1, { 64 } },
	{ "one page", 1, 1, 1, { 1 } },
	{ "1 to 8", 1, 8, 3, { 1, 4, 8 } },
	{ "capped at 16 points", 1, 1ull << 40, TLB_MAX_POINTS, { 1, 4, 16 } },
};

static void test_points(void **state)
{
	const struct points_case *c = *state;
	uint64_t out[TLB_MAX_POINTS];
	size_t n = tlb_points(c->min, c->max, out), i;

	assert_int_equal(n, c->n);
	assert_int_equal(out[n - 1], c->max);	/* the last point is the largest working set */
	for (i = 0; i + 1 < n; i++) {
		assert_true(out[i + 1] > out[i]);
		if (c->want[i])
			assert_int_equal(out[i], c->want[i]);
	}
}

/* the walk point: one line per page fits in L2, clamped to the sweep's range */
static void test_walk_point(void **state)
{
	uint64_t out[TLB_MAX_POINTS + 1];
	size_t n;

	(void)state;
	assert_int_equal(tlb_walk_pages(512ull << 10, 16, 16384), 8192);
	assert_int_equal(tlb_walk_pages(1ull << 20, 16, 16384), 16384);
	assert_int_equal(tlb_walk_pages(2ull << 20, 16, 16384), 16384);	/* clamped to max */
	assert_int_equal(tlb_walk_pages(1280ull << 10, 16, 65536), 16384);	/* power of 2 below */
	assert_int_equal(tlb_walk_pages(256ull << 10, 16, 64), 64);
	assert_int_equal(tlb_walk_pages(512, 16, 16384), 16);		/* clamped to min */
	/* inserted in its sorted place */
	n = tlb_points_with(16, 16384, 8192, out);
	assert_int_equal(n, 7);
	assert_int_equal(out[4], 4096);
	assert_int_equal(out[5], 8192);
	assert_int_equal(out[6], 16384);
	/* already a point: not twice */
	assert_int_equal(tlb_points_with(16, 16384, 4096, out), 6);
	assert_int_equal(tlb_points_with(16, 16384, 16384, out), 6);
	/* a full sweep still takes one more */
	n = tlb_points_with(1, 1ull << 40, 3, out);
	assert_int_equal(n, TLB_MAX_POINTS + 1);
	assert_int_equal(out[1], 3);
	assert_int_equal(out[n - 1], 1ull << 40);
}

/* ---- parameter checks --------------------------------------------------------- */

struct bad_case {
	const char *name;
	const char *argv[5];
	int rc;
	const char *reason;
};

static struct bad_case bad_cases[] = {
	{ "zero pages", { "tlb", "--pages-min=0" }, HARNESS_USAGE, "--pages-min=0 is out of range" },
	{ "min above max", { "tlb", "--pages-min=64", "--pages-max=16" }, HARNESS_USAGE,
	  "--pages-min=64 is above --pages-max=16" },
	{ "more than MemAvailable", { "tlb", "--pages-max=1048576" }, HARNESS_USAGE,
	  "--pages-max=1048576 needs 8228M" },
	{ "too few loads", { "tlb", "--loads=10" }, HARNESS_USAGE, "--loads=10 is out of range" },
	{ "no trials", { "tlb", "--trials=0" }, HARNESS_USAGE, "--trials=0 is out of range" },
	{ "too many trials", { "tlb", "--trials=1002" }, HARNESS_USAGE, "out of range (1 to 1001)" },
	{ "not a number", { "tlb", "--loads=many" }, HARNESS_USAGE, "bad value 'many' for --loads" },
	{ "a parameter of another workload", { "tlb", "--size=8M" }, HARNESS_USAGE,
	  "unknown option '--size' for workload tlb" },
	{ "split not 0 or 1", { "tlb", "--split=2" }, HARNESS_USAGE,
	  "bad value '2' for --split: expected 0 or 1" },
	{ "pin not 0 or 1", { "tlb", "--pin=yes" }, HARNESS_USAGE,
	  "bad value 'yes' for --pin: expected 0 or 1" },
	{ "too many walk trials", { "tlb", "--walk-trials=1002" }, HARNESS_USAGE,
	  "--walk-trials=1002 is out of range (0 to 1001)" },
	{ "too few walk loads", { "tlb", "--walk-loads=999" }, HARNESS_USAGE,
	  "--walk-loads=999 is out of range (1000 to 1000000000000)" },
	{ "walk loads not a number", { "tlb", "--walk-loads=1e6" }, HARNESS_USAGE,
	  "bad value '1e6' for --walk-loads" },
};

static void test_bad(void **state)
{
	const struct bad_case *c = *state;

	wlt_expect_bad(small_root, c->argv, N(c->argv), c->rc, REC_FAIL, c->reason, "tlb");
}

/* ---- the 4K arm's split and the pinning --------------------------------------- */

/* this host's THP 'enabled' allows MADV_HUGEPAGE regions (always or madvise) */
/* the physical frame of a page from /proc/self/pagemap; 0 when hidden (not root) */
static uint64_t pfn_of(const void *p)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, sizeof(ent), (off_t)((uintptr_t)p / 4096 * 8)) != sizeof(ent))
		ent = 0;
	close(fd);
	return (ent >> 63) ? ent & ((1ull << 55) - 1) : 0;
}

/*
 * A huge-faulted region split: smaps shows no huge mapping any more, the
 * region is still one mapping with all its memory, the data and (where
 * pagemap shows frames) the physical pages stay where they were
 */
static void test_split_pmds(void **state)
{
	struct region r = { 0 };
	struct smaps_vma vma;
	struct err e = { 0 };
	size_t len = 4 * REGION_HUGE, i;
	struct tp_policy pol;
	long long fb0, fb1;
	uint64_t pfn[4];
	double pct;

	(void)state;
	tp_anon_pmd("", &pol);
	if (!tp_allows(&pol, true) || tp_self_thp_disabled()) {
		print_message("skipped: PMD THP is off for anonymous memory here (%s): nothing to "
			      "split\n", tp_self_thp_disabled() ? "prctl PR_SET_THP_DISABLE" : pol.why);
		skip();
	}
	fb0 = tp_vmstat("thp_fault_fallback");
	assert_int_equal(region_map(&r, len, MADV_HUGEPAGE, &e), 0);
	for (i = 0; i < len; i += 4096)
		r.buf[i] = (char)(i / 4096);
	fb1 = tp_vmstat("thp_fault_fallback");
	assert_int_equal(region_smaps("", &r, &vma, &pct, &e), 0);
	if (vma.anon_huge_bytes == 0) {
		region_release(&r);
		print_message("skipped: the madvised region got no huge page (%s; thp_fault_fallback "
			      "%lld -> %lld): nothing to split\n", pol.why, fb0, fb1);
		skip();
	}
	for (i = 0; i < 4; i++)
		pfn[i] = pfn_of(r.buf + i * REGION_HUGE + 77 * 4096);
	assert_int_equal(tlb_split_pmds(r.buf, len), 0);
	assert_int_equal(region_smaps("", &r, &vma, &pct, &e), 0);
	assert_int_equal(vma.anon_huge_bytes, 0);
	assert_int_equal(vma.end - vma.start, len);	/* the mprotect()ed pieces merged back */
	assert_int_equal(vma.rss_bytes, len);
	for (i = 0; i < len; i += 4096)
		assert_int_equal(r.buf[i], (char)(i / 4096));
	for (i = 0; i < 4; i++)
		assert_int_equal(pfn_of(r.buf + i * REGION_HUGE + 77 * 4096), pfn[i]);
	region_release(&r);
}

static void test_split_error(void **state)
{
	(void)state;
	/* not a mapping: mprotect() fails and its errno comes back */
	assert_int_equal(tlb_split_pmds((char *)(uintptr_t)REGION_HUGE, REGION_HUGE), -ENOMEM);
}

static void test_pin_here(void **state)
{
	cpu_set_t old, now;
	int cpu;

	(void)state;
	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	cpu = tlb_pin_here();
	assert_true(cpu >= 0);
	assert_int_equal(sched_getaffinity(0, sizeof(now), &now), 0);
	assert_int_equal(CPU_COUNT(&now), 1);
	assert_true(CPU_ISSET(cpu, &now));
	assert_int_equal(sched_setaffinity(0, sizeof(old), &old), 0);
}

/* ---- a short real run --------------------------------------------------------- */

static void check_point(const struct record *r, const char *backing, uint64_t ws)
{
	static const char *const positive[] = { "access_ns", "access_ns_min", "ws_pages", "nodes",
						 "loads", "trials", NULL };
	uint64_t u;
	double pct;

	wlt_declared("tlb", r, "guest_thp");
	wlt_positive(r, positive);
	assert_int_equal(rec_get_u64(r, "ws_pages", &u), 0);
	assert_int_equal(u, ws);
	if (backing)
		assert_string_equal(rec_get(r, "backing"), backing);
	assert_int_equal(rec_get_f64(r, "huge_pct", &pct), 0);
	assert_true(pct >= 0 && pct <= 100);
	if (backing && !strcmp(backing, "4k"))
		assert_true(pct == 0);	/* MADV_NOHUGEPAGE */
	if (strcmp(rec_get(r, "tsc"), "none")) {
		static const char *const cyc[] = { "access_cycles", NULL };

		wlt_positive(r, cyc);
	}
}

/*
 * The same-frame walk point, by tlb.c's rule: its figures when the shared
 * buffer's 2M view is at least TLB_HUGE_VALID_PCT PMD-mapped and its 4K view
 * not at all, else a note that says why (the coverage it found, naming
 * shmem_enabled, or the buffer it could not get); never both. Against the
 * effective shmem PMD policy (thppolicy.h): no figures when it is off, and
 * figures when it allows 2M pages and no 2M file allocation failed during the
 * run (file_fallback: thp_file_fallback's rise, -1 when /proc/vmstat lacks it).
 */
static void check_shared(const struct record *s, uint64_t loads, long long file_fallback)
{
	static const char *const pos[] = { "walk_shared_4k_access_ns", "walk_shared_2m_access_ns",
					   "walk_shared_trials", NULL };
	const char *note = rec_get(s, "walk_shared_note");
	struct tp_policy pol;
	bool allowed;
	double pct, lo, hi, mid, sp;
	uint64_t u;

	tp_shmem_pmd("", &pol);
	allowed = tp_allows(&pol, true) && !tp_self_thp_disabled();
	if (note) {
		assert_null(rec_get(s, "walk_frames"));
		assert_null(rec_get(s, "tlb_walk_shared_extra_ns"));
		assert_null(rec_get(s, "walk_shared_huge_pct"));
		if (sscanf(note, "shared buffer: 2M view %lf%% PMD-mapped, 4K view %lf%%", &pct,
			   &sp) == 2) {
			/* a note exactly when the coverage is below the bar */
			if (!(pct < TLB_HUGE_VALID_PCT || sp > 0))
				fail_msg("note '%s' with a 2M view over %.0f%% and no 4K PMD", note,
					 TLB_HUGE_VALID_PCT);
			assert_non_null(strstr(note, "shmem_enabled '"));
		} else if (strncmp(note, "no shared buffer: ", 18)) {
			fail_msg("walk_shared_note '%s' gives no reason tlb.c writes", note);
		}
		if (allowed && file_fallback == 0)
			fail_msg("shmem THP allowed (%s), no 2M file allocation failed, yet: %s",
				 pol.why, note);
		if (allowed)
			print_message("shared walk not measured (%s; thp_file_fallback rose by %lld): "
				      "%s\n", pol.why, file_fallback, note);
		return;
	}
	if (!allowed)
		fail_msg("shared walk measured though shmem THP is off here (%s)", pol.why);
	assert_string_equal(rec_get(s, "walk_frames"), "shared");
	assert_non_null(rec_get(s, "tlb_walk_shared_extra_pct"));
	wlt_positive(s, pos);
	assert_int_equal(rec_get_u64(s, "walk_shared_loads", &u), 0);
	assert_int_equal(u, loads);
	assert_int_equal(rec_get_f64(s, "walk_shared_huge_pct", &pct), 0);
	assert_true(pct >= TLB_HUGE_VALID_PCT && pct <= 100);
	/* 1001 trials by default: the drift within the run, lowest block <= highest */
	assert_int_equal(rec_get_f64(s, "walk_shared_block_min_ns", &lo), 0);
	assert_int_equal(rec_get_f64(s, "walk_shared_block_max_ns", &hi), 0);
	assert_int_equal(rec_get_f64(s, "tlb_walk_shared_extra_ns", &mid), 0);
	assert_true(lo <= hi);
	assert_true(isfinite(mid));
}

static void test_real_run(void **state)
{
	const char *argv[] = { "tlb", "--pages-min=4", "--pages-max=64", "--loads=2000",
			       "--trials=3", "--walk-loads=3000", "--label=guest_thp=test" };
	static const char *const sum_pos[] = { "base_access_ns", "large_4k_access_ns",
					       "large_2m_access_ns", "points", NULL };
	static const uint64_t ws[] = { 4, 16, 64 };
	const struct record *s;
	struct wlt_out o;
	char v[32];
	uint64_t u, valid;
	long long fb0, fb1;
	size_t i;

	(void)state;
	fb0 = tp_vmstat("thp_file_fallback");
	wlt_run("", argv, N(argv), &o);
	fb1 = tp_vmstat("thp_file_fallback");
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	/* base, 4k and 2m per point, summary */
	assert_int_equal(o.n, 1 + 2 * N(ws) + 1);
	for (i = 0; i < o.n; i++)
		assert_int_equal(o.rec[i].type, REC_RESULT);
	check_point(wlt_variant(&o, "base"), NULL, 1);
	for (i = 0; i < N(ws); i++) {
		snprintf(v, sizeof(v), "ws%llu_4k", (unsigned long long)ws[i]);
		check_point(wlt_variant(&o, v), "4k", ws[i]);
		snprintf(v, sizeof(v), "ws%llu_2m", (unsigned long long)ws[i]);
		check_point(wlt_variant(&o, v), "2m", ws[i]);
	}
	s = wlt_variant(&o, "summary");
	assert_ptr_equal(s, &o.rec[o.n - 1]);	/* the summary comes last */
	wlt_declared("tlb", s, "guest_thp");
	wlt_positive(s, sum_pos);
	assert_int_equal(rec_get_u64(s, "points", &u), 0);
	assert_int_equal(u, N(ws));
	assert_int_equal(rec_get_u64(s, "huge_valid", &valid), 0);
	/* the per-miss figure only when the 2M region was huge; otherwise a note says why */
	assert_int_equal(rec_get(s, "tlb_miss_extra_ns") != NULL, valid == 1);
	assert_int_equal(rec_get(s, "tlb_walk_extra_ns") != NULL, valid == 1);
	assert_int_equal(rec_get(s, "note") != NULL, valid == 0);
	/* 64 pages of lines fit any L2: the walk point is the largest set, already swept */
	assert_int_equal(rec_get_u64(s, "walk_ws_pages", &u), 0);
	assert_int_equal(u, 64);
	assert_int_equal(rec_get_u64(s, "l2_bytes", &u), 0);
	assert_true(u >= 4096);
	assert_int_equal(rec_get_u64(s, "split", &u), 0);
	assert_int_equal(u, 0);		/* the default: a fresh MADV_NOHUGEPAGE region */
	assert_non_null(rec_get(s, "cpu"));	/* pinned by default */
	check_shared(s, 3000, fb0 < 0 || fb1 < 0 ? -1 : fb1 - fb0);
	wlt_free(&o);
}

/* --walk-trials=0: no same-frame walk point, the note says so */
static void test_real_run_no_shared(void **state)
{
	const char *argv[] = { "tlb", "--pages-min=16", "--pages-max=16", "--loads=2000",
			       "--trials=3", "--walk-trials=0", "--label=guest_thp=test" };
	const struct record *s;
	struct wlt_out o;

	(void)state;
	wlt_run("", argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	s = wlt_variant(&o, "summary");
	assert_string_equal(rec_get(s, "walk_shared_note"), "--walk-trials=0");
	assert_null(rec_get(s, "walk_frames"));
	assert_null(rec_get(s, "tlb_walk_shared_extra_ns"));
	wlt_free(&o);
}

/* --split=1: the 4K points show no huge mapping, the summary says split */
static void test_real_run_split(void **state)
{
	const char *argv[] = { "tlb", "--pages-min=512", "--pages-max=1024", "--loads=2000",
			       "--trials=3", "--split=1", "--pin=0", "--label=guest_thp=test" };
	const struct record *s;
	struct wlt_out o;
	uint64_t u;

	(void)state;
	wlt_run("", argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	check_point(wlt_variant(&o, "ws512_4k"), "4k", 512);
	check_point(wlt_variant(&o, "ws1024_4k"), "4k", 1024);
	s = wlt_variant(&o, "summary");
	assert_int_equal(rec_get_u64(s, "split", &u), 0);
	assert_int_equal(u, 1);
	assert_non_null(rec_get(s, "split_4k_huge_pct"));
	assert_null(rec_get(s, "cpu"));	/* --pin=0 */
	wlt_free(&o);
}

/* ---- the CPUs of the fixture machines (tests/guest/fixtures) ------------------ */

struct cpu_case {
	const char *name, *fixture;
	uint64_t l2_bytes, walk;	/* what the summary must say */
	uint64_t ws[8];			/* the sweep's points, 0-terminated */
};

static const struct cpu_case cpu_cases[] = {
	/* 512K: 8192 pages of one line each fit, a point of its own between 4096 and 16384 */
	{ "AMD EPYC, 512K L2: walk point 8192, a sweep point of its own", "cpu-amd-epyc-512k",
	  512 << 10, 8192, { 16, 64, 256, 1024, 4096, 8192, 16384 } },
	/* 2M: 32768 pages would fit, clamped to the largest set, already a point */
	{ "Intel Xeon, 2M L2: walk point at the largest set", "cpu-intel-xeon-2m", 2 << 20, 16384,
	  { 16, 64, 256, 1024, 4096, 16384 } },
};

/*
 * The default sweep on each fixture CPU: the walk point and the points follow the
 * L2 its sysfs describes, and the summary names that L2
 */
static void test_cpu(void **state)
{
	const struct cpu_case *c = *state;
	const char *argv[] = { "tlb", "--loads=1000", "--trials=1", "--walk-trials=0", "--pin=0",
			       "--label=guest_thp=test" };
	char root[] = "/tmp/thpeval-tlb-cpu-XXXXXX", v[32];
	const struct record *s;
	struct wlt_out o;
	size_t i, npoints = 0;
	uint64_t u;

	assert_non_null(wlt_cpu_tree(root, c->fixture));
	wlt_run(root, argv, N(argv), &o);
	if (o.rc != HARNESS_OK)
		fail_msg("exit %d: %s", o.rc, o.msg);
	for (; npoints < N(c->ws) && c->ws[npoints]; npoints++) {
		snprintf(v, sizeof(v), "ws%llu_4k", (unsigned long long)c->ws[npoints]);
		check_point(wlt_variant(&o, v), "4k", c->ws[npoints]);
		snprintf(v, sizeof(v), "ws%llu_2m", (unsigned long long)c->ws[npoints]);
		check_point(wlt_variant(&o, v), "2m", c->ws[npoints]);
	}
	/* base, 4k and 2m per point, summary: no other point */
	assert_int_equal(o.n, 1 + 2 * npoints + 1);
	for (i = 0; i < o.n; i++)
		assert_int_equal(o.rec[i].type, REC_RESULT);
	s = wlt_variant(&o, "summary");
	assert_int_equal(rec_get_u64(s, "l2_bytes", &u), 0);
	assert_int_equal(u, c->l2_bytes);
	assert_int_equal(rec_get_u64(s, "walk_ws_pages", &u), 0);
	assert_int_equal(u, c->walk);
	assert_int_equal(rec_get_u64(s, "points", &u), 0);
	assert_int_equal(u, npoints);
#if defined(__x86_64__)
	assert_string_equal(rec_get(s, "tsc"), "rdtscp");	/* both list rdtscp in cpuinfo */
#endif
	wlt_free(&o);
	wlt_tree_free(root);
}

static int setup(void **state)
{
	(void)state;
	return wlt_tree(small_root, false, 921600) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	wlt_tree_free(small_root);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[N(chain_cases) + N(points_cases) + N(bad_cases) + N(cpu_cases) + 8];
	size_t i, n = 0;

	for (i = 0; i < N(chain_cases); i++)
		tests[n++] = (struct CMUnitTest){ chain_cases[i].name, test_chain, NULL, NULL,
						  &chain_cases[i] };
	tests[n++] = (struct CMUnitTest){ "nodes spread over cache lines", test_chain_lines_spread,
					  NULL, NULL, NULL };
	for (i = 0; i < N(points_cases); i++)
		tests[n++] = (struct CMUnitTest){ points_cases[i].name, test_points, NULL, NULL,
						  &points_cases[i] };
	for (i = 0; i < N(bad_cases); i++)
		tests[n++] = (struct CMUnitTest){ bad_cases[i].name, test_bad, NULL, NULL,
						  &bad_cases[i] };
	tests[n++] = (struct CMUnitTest){ "split: same memory, 4K page tables", test_split_pmds,
					  NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "split: error", test_split_error, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "walk point from the L2 size", test_walk_point, NULL, NULL,
					  NULL };
	tests[n++] = (struct CMUnitTest){ "pin to the current CPU", test_pin_here, NULL, NULL,
					  NULL };
	tests[n++] = (struct CMUnitTest){ "short real run: records parse, fields positive",
					  test_real_run, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "short real run, 4K arm split", test_real_run_split,
					  NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "short real run, no same-frame walk point",
					  test_real_run_no_shared, NULL, NULL, NULL };
	for (i = 0; i < N(cpu_cases); i++)
		tests[n++] = (struct CMUnitTest){ cpu_cases[i].name, test_cpu, NULL, NULL,
						  (void *)(uintptr_t)&cpu_cases[i] };
	return _cmocka_run_group_tests("tlb", tests, n, setup, teardown);
}
