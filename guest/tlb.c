#include "tlb.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "harness.h"
#include "prng.h"
#include "sysinfo.h"
#include "region.h"
#include "twinmap.h"

#define TLB_MAX_PAGES (1ull << 24)	/* 64G of working set */
#define TLB_MAX_TRIALS 1001
#define TLB_BLOCKS 10	/* drift within a run: medians of this many blocks of trials */

static const struct wl_param tlb_params[] = {
	{ "pages-min", WL_P_U64, offsetof(struct tlb_opts, pages_min), "16", 1, TLB_MAX_PAGES,
	  "smallest working set, in 4K pages (one chain node per page)" },
	/* 64M: past the reach of the L1 dTLB and the STLB of current x86 cores */
	{ "pages-max", WL_P_U64, offsetof(struct tlb_opts, pages_max), "16384", 1, TLB_MAX_PAGES,
	  "largest working set, in 4K pages; the sweep grows 4x per point up to it" },
	/*
	 * Many short trials, 4K and 2M back to back: the median of the paired
	 * differences resists the drift of a shared host better than a few long
	 * trials (on this noisy development VM: CV 9% over 5 runs with 101 x 20000,
	 * 11-40% with 21 x 30000). 101 x 20000 loads per backing take ~1 s at the
	 * largest point natively, a few seconds under TCG.
	 */
	{ "loads", WL_P_U64, offsetof(struct tlb_opts, loads), "20000", 1000, 1000000000000ull,
	  "dependent loads per timed trial" },
	{ "trials", WL_P_U64, offsetof(struct tlb_opts, trials), "101", 1, TLB_MAX_TRIALS,
	  "timed trials per point, 4K and 2M back to back; medians are reported" },
	/*
	 * A fresh MADV_NOHUGEPAGE region is scattered over physical memory where
	 * the 2M region is in 2M-contiguous frames; in a VM the host's own
	 * translation of the two then differs too. Split, only the guest page
	 * size differs, but on this shared development VM (load 3 on 2 CPUs, 5
	 * runs each, pinned) the split difference at 64M was smaller (27 ns) and
	 * less stable (CV 19%) than the fresh one (84 ns, CV 7%; another batch of
	 * 5 at load 1.4: 81 ns, CV 26%): fresh stays the default.
	 */
	{ "split", WL_P_BOOL, offsetof(struct tlb_opts, split), "0", 0, 1,
	  "1: the 4K-backed region is faulted huge, then its PMDs are split (same kind of "
	  "physical memory as the 2M region, only the guest page size differs); 0: a fresh "
	  "MADV_NOHUGEPAGE region" },
	/*
	 * Two fresh regions are two sets of cache lines: at the walk point (the
	 * L2's worth of lines) each arm's trials evict the other's lines, and the
	 * difference moves with how slow the shared L3 and memory are that
	 * minute. One buffer seen through both page sizes keeps one set of
	 * lines: on this shared VM, runs interleaved in the same minutes had the
	 * fresh 2M arm at 46-243 ns per load and the shared one at 33-47 ns.
	 */
	{ "walk-trials", WL_P_U64, offsetof(struct tlb_opts, walk_trials), "1001", 0,
	  TLB_MAX_TRIALS,
	  "timed trials of the same-frame walk point (one memfd buffer through a 2M and a 4K "
	  "view; needs shmem THP, shmem_enabled advise or always); 0: skip it" },
	/*
	 * Longer trials average more of a shared host's drift into each run: on
	 * this development VM sets of 5 runs at 200000 (about 15 s of walk trials
	 * each) had a CV of 5-16%, at 20000 (1.6 s) 13-23%, at 500000 (37 s) 8%
	 * (the drift is minute-scale too). 20000 keeps the guest run short under
	 * TCG; bench/tlb_cv.sh uses 200000.
	 */
	{ "walk-loads", WL_P_U64, offsetof(struct tlb_opts, walk_loads), "20000", 1000,
	  1000000000000ull,
	  "dependent loads per timed trial of the same-frame walk point" },
	/* unpinned, 5 runs had a CV of 28% (the batch next to it, pinned: 7%) */
	{ "pin", WL_P_BOOL, offsetof(struct tlb_opts, pin), "1", 0, 1,
	  "1: pin to the CPU the workload starts on (caches and TLB stay warm)" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

static const struct wl_metric tlb_metrics[] = {
	{ "variant", "base, ws<pages>_4k, ws<pages>_2m or summary (one record each)" },
	{ "backing", "points: 4k (MADV_NOHUGEPAGE) or 2m (MADV_HUGEPAGE)" },
	{ "ws_pages", "points: working set in 4K pages (= chain nodes)" },
	{ "nodes", "points: chain nodes (base: 64 lines of one page)" },
	{ "loads", "dependent loads per trial" },
	{ "trials", "timed trials per point" },
	{ "tsc", "cycle counter: rdtscp, rdtsc (lfence-fenced) or none" },
	{ "access_ns", "points: median ns per dependent load" },
	{ "access_ns_min", "points: fastest trial, ns per load" },
	{ "access_cv_pct", "points: coefficient of variation over the trials" },
	{ "access_cycles", "points: median TSC cycles per load" },
	{ "extra_vs_base_ns", "points: access_ns - the baseline's (TLB + cache cost)" },
	{ "extra_vs_base_cycles", "points: the same in TSC cycles" },
	{ "huge_pct", "AnonHugePages / Rss of the region the chain lives in" },
	{ "pages_min", "summary: smallest working set" },
	{ "pages_max", "summary: largest working set" },
	{ "points", "summary: working sets in the sweep" },
	{ "base_access_ns", "summary: baseline ns per load (one page: TLB and L1 hits)" },
	{ "base_access_cycles", "summary: baseline TSC cycles per load" },
	{ "large_4k_access_ns", "summary: ns per load, largest working set, 4K-backed" },
	{ "large_2m_access_ns", "summary: ns per load, largest working set, 2M-backed" },
	{ "large_4k_access_cycles", "summary: the same in TSC cycles, 4K-backed" },
	{ "large_2m_access_cycles", "summary: the same in TSC cycles, 2M-backed" },
	{ "tlb_cache_miss_ns", "summary: large_4k_access_ns - base_access_ns (TLB + cache miss)" },
	{ "tlb_cache_miss_cycles", "summary: the same in TSC cycles (seeds/001's ~450)" },
	{ "tlb_miss_extra_ns",
	  "summary: 4K-backed minus 2M-backed ns per load at the largest working set, median "
	  "of the back-to-back trial pairs (cost per TLB miss: same lines, only the page size "
	  "differs); absent when huge_valid is 0" },
	{ "tlb_miss_extra_cycles", "summary: the same in TSC cycles" },
	{ "tlb_miss_extra_pct",
	  "summary: the same as a share: median of the paired 4K / 2M ns per load - 1 (steadier "
	  "than ns where the memory latency of a shared host drifts)" },
	{ "small_4k_minus_2m_ns", "summary: the same difference at the smallest working set (~0)" },
	{ "l2_bytes", "summary: the L2 cache size the walk point was chosen by (sysfs; 512K if unknown)" },
	{ "walk_ws_pages",
	  "summary: the walk point: the largest working set (a power of 4 times pages_min, or "
	  "l2_bytes / 64) whose chain lines fit in the L2 cache, added to the sweep if missing" },
	{ "tlb_walk_extra_ns",
	  "summary: 4K-backed minus 2M-backed ns per load at walk_ws_pages, paired median: the "
	  "cost of TLB misses whose page walk and data stay in the core's caches, so it does not "
	  "move with the memory latency of a shared host (the figure the tlb_cv bench holds to CV "
	  "<= 5%); absent when huge_valid is 0" },
	{ "tlb_walk_extra_cycles", "summary: the same in TSC cycles" },
	{ "tlb_walk_extra_pct", "summary: the same as a share of the 2M-backed time per load" },
	{ "walk_frames", "summary: 'shared' when the same-frame walk point ran (else walk_shared_note)" },
	{ "tlb_walk_shared_extra_ns",
	  "summary: 4K view minus 2M view ns per load at walk_ws_pages over one shared buffer "
	  "(same frames, same cache lines; paired median of walk_shared_trials): the page walk "
	  "alone, the figure the tlb_cv bench holds to CV <= 5%" },
	{ "tlb_walk_shared_extra_cycles", "summary: the same in TSC cycles" },
	{ "tlb_walk_shared_extra_pct", "summary: the same as a share of the 2M view's time per load" },
	{ "walk_shared_4k_access_ns", "summary: median ns per load through the 4K view" },
	{ "walk_shared_2m_access_ns", "summary: median ns per load through the 2M view" },
	{ "walk_shared_huge_pct", "summary: ShmemPmdMapped / Rss of the 2M view (>= 90 to count)" },
	{ "walk_shared_trials", "summary: timed trials of the same-frame walk point" },
	{ "walk_shared_loads", "summary: dependent loads per trial there" },
	{ "walk_shared_block_min_ns",
	  "summary: the lowest median of 10 consecutive blocks of those trials (with >= 100 "
	  "trials): with walk_shared_block_max_ns, how far the host drifted within the run" },
	{ "walk_shared_block_max_ns", "summary: the highest such block median" },
	{ "walk_shared_note", "summary: why the same-frame walk point did not run" },
	{ "huge_valid", "summary: 1 if the 2M-backed region got >= 90% huge pages" },
	{ "split", "summary: 1 if the 4K region's PMDs were split (4K PTEs over huge frames)" },
	{ "split_4k_huge_pct", "summary: huge coverage of the 4K region before the split" },
	{ "cpu", "summary: the CPU the workload was pinned to (absent: not pinned)" },
	{ "note", "summary: why tlb_miss_extra_* is absent" },
	{ NULL, NULL },
};

uint64_t tlb_walk_pages(uint64_t l2_bytes, uint64_t pages_min, uint64_t pages_max)
{
	uint64_t fit = l2_bytes / 64, p = 1;	/* one 64-byte line per page */

	while (p * 2 <= fit)
		p *= 2;
	if (p < pages_min)
		p = pages_min;
	return p > pages_max ? pages_max : p;
}

size_t tlb_points_with(uint64_t pages_min, uint64_t pages_max, uint64_t extra, uint64_t *out)
{
	size_t n = tlb_points(pages_min, pages_max, out), i;

	for (i = 0; i < n && out[i] < extra; i++)
		;
	if (i < n && out[i] == extra)
		return n;
	memmove(out + i + 1, out + i, (n - i) * sizeof(*out));
	out[i] = extra;
	return n + 1;
}

size_t tlb_points(uint64_t pages_min, uint64_t pages_max, uint64_t *out)
{
	uint64_t p = pages_min;
	size_t n = 0;

	while (p < pages_max && n < TLB_MAX_POINTS - 1) {
		out[n++] = p;
		if (p > pages_max / TLB_STEP)
			break;
		p *= TLB_STEP;
	}
	out[n++] = pages_max;
	return n;
}

int tlb_split_pmds(char *buf, size_t len)
{
	size_t off;

	for (off = 0; off + REGION_HUGE <= len; off += REGION_HUGE) {
		char *sub = buf + off + REGION_PAGE;

		if (mprotect(sub, REGION_PAGE, PROT_READ) ||
		    mprotect(sub, REGION_PAGE, PROT_READ | PROT_WRITE))
			return -errno;
	}
	return madvise(buf, len, MADV_NOHUGEPAGE) ? -errno : 0;
}

int tlb_pin_here(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : cpu;
}

/* both regions, the chain's scratch and the margin */
static uint64_t tlb_need(const struct tlb_opts *a)
{
	return 2 * region_round_huge(a->pages_max * REGION_PAGE) +
	       a->pages_max * sizeof(uint32_t) + TLB_MARGIN;
}

static int tlb_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const struct tlb_opts *a = opts;
	char need[32], avail_s[32];
	uint64_t avail;

	if (a->pages_min > a->pages_max)
		return err_set(e, -EINVAL, "--pages-min=%" PRIu64 " is above --pages-max=%" PRIu64,
			       a->pages_min, a->pages_max);
	if (meminfo_get(env->root, "MemAvailable", &avail, e))
		return err_wrap(e, "cannot check the working set against available memory");
	if (tlb_need(a) > avail) {
		fmt_size(tlb_need(a), need, sizeof(need));
		fmt_size(avail, avail_s, sizeof(avail_s));
		return err_set(e, -ENOMEM,
			       "--pages-max=%" PRIu64 " needs %s (two regions and 32M kept free) "
			       "but only %s is available",
			       a->pages_max, need, avail_s);
	}
	return 0;
}

static size_t node_line(uint64_t seed, size_t page, size_t slot)
{
	/* a pseudo-random first line per page; 37 is odd, so slots 0..63 get distinct lines */
	uint64_t first = prng_mix(seed ^ ((uint64_t)page * 0x9e3779b97f4a7c15ull)) & 63;

	return (size_t)((first + slot * 37) & 63);
}

static void *node_at(char *buf, size_t npages, uint64_t seed, size_t k)
{
	size_t page = k % npages;

	return buf + page * REGION_PAGE + node_line(seed, page, k / npages) * 64;
}

void *tlb_chain_build(char *buf, size_t npages, size_t per_page, uint64_t seed, uint32_t *scratch)
{
	size_t n = npages * per_page, i;
	uint64_t st = seed;

	for (i = 0; i < n; i++)
		scratch[i] = (uint32_t)i;
	/* Sattolo: j < i, so i -> scratch[i] is a single cycle through all nodes */
	for (i = n - 1; i > 0; i--) {
		size_t j = (size_t)prng_below(&st, i);
		uint32_t t = scratch[i];

		scratch[i] = scratch[j];
		scratch[j] = t;
	}
	for (i = 0; i < n; i++)
		*(void **)node_at(buf, npages, seed, i) = node_at(buf, npages, seed, scratch[i]);
	return node_at(buf, npages, seed, 0);
}

uint64_t tlb_chain_build_off(char *buf, size_t npages, uint64_t seed, uint32_t *scratch)
{
	char *start = tlb_chain_build(buf, npages, 1, seed, scratch);
	size_t i;

	for (i = 0; i < npages; i++) {
		uintptr_t *node = node_at(buf, npages, seed, i);

		*node -= (uintptr_t)buf;
	}
	return (uint64_t)(start - buf);
}

__attribute__((noinline)) uint64_t tlb_chase_off(const char *base, uint64_t off, uint64_t n)
{
	while (n--)
		off = *(const uint64_t *)(base + off);	/* the same dependency, one add more */
	return off;
}

__attribute__((noinline)) void *tlb_chase(void *p, uint64_t n)
{
	void **q = p;

	while (n--)
		q = (void **)*q;	/* each load's address is the previous load's value */
	return q;
}

/* per-load times of one chain's trials */
struct series {
	size_t n;
	double ns[TLB_MAX_TRIALS], cycles[TLB_MAX_TRIALS];
};

struct tstat {
	double ns, ns_min, cv_pct, cycles;
};

/* 4K-backed minus 2M-backed, trial by trial (the pairs ran back to back) */
struct pair_diff {
	double ns, cycles;	/* medians of the paired differences */
	double pct;		/* median of the paired 4K / 2M - 1, in percent */
	bool blocks;		/* enough trials for block_min/max */
	double block_min, block_max;	/* ns: the lowest and highest median of TLB_BLOCKS
					 * consecutive blocks of trials */
};

struct chain {
	void *p;		/* where the chase stands: a pointer, or an offset into base */
	const char *base;	/* NULL: a pointer chain (tlb_chase) */
	struct series s;
};

/* follow n links of either kind of chain */
static void advance(struct chain *c, uint64_t n)
{
	if (c->base)
		c->p = (void *)(uintptr_t)tlb_chase_off(c->base, (uint64_t)(uintptr_t)c->p, n);
	else
		c->p = tlb_chase(c->p, n);
}

static void trial(struct chain *c, uint64_t loads, enum harness_tsc tsc)
{
	uint64_t t0, t1, c0, c1;

	t0 = harness_now_ns();
	c0 = harness_cycles(tsc);
	advance(c, loads);
	c1 = harness_cycles(tsc);
	t1 = harness_now_ns();
	__asm__ volatile("" : : "r"(c->p) : "memory");	/* the chase cannot be dropped */
	c->s.ns[c->s.n] = (double)(t1 - t0) / (double)loads;
	c->s.cycles[c->s.n] = (double)(c1 - c0) / (double)loads;
	c->s.n++;
}

static struct tstat summarize(struct series *s)
{
	struct tstat st;
	size_t i;

	st.cv_pct = harness_cv_pct(s->ns, s->n);
	st.ns_min = s->ns[0];
	for (i = 1; i < s->n; i++)
		if (s->ns[i] < st.ns_min)
			st.ns_min = s->ns[i];
	st.ns = harness_median(s->ns, s->n);
	st.cycles = harness_median(s->cycles, s->n);
	return st;
}

struct tlb_run {
	const struct tlb_opts *a;
	const struct wl_env *env;
	enum harness_tsc tsc;
	struct region r4k, r2m;
	double pct4k, pct2m;
	double pct4k_before;	/* split: the 4K region's coverage before the split */
	int cpu;		/* pinned to, or -1 */
	uint32_t *scratch;
	struct tstat base;
	uint64_t l2_bytes, walk_ws;	/* the walk point and the L2 size it was chosen by */
};

static int send_point(struct tlb_run *t, const char *backing, uint64_t ws, const struct tstat *st,
		      double huge_pct, struct err *e)
{
	struct record r;
	char variant[48];
	bool base = !strcmp(backing, "base");
	int ret = 0;

	harness_record_init(t->env, REC_RESULT, &r);
	if (base)
		snprintf(variant, sizeof(variant), "base");
	else
		snprintf(variant, sizeof(variant), "ws%" PRIu64 "_%s", ws, backing);
	ret |= rec_add_str(&r, "variant", variant);
	if (!base)
		ret |= rec_add_str(&r, "backing", backing);
	ret |= rec_add_u64(&r, "ws_pages", ws);
	ret |= rec_add_u64(&r, "nodes", base ? TLB_BASE_NODES : ws);
	ret |= rec_add_u64(&r, "loads", t->a->loads);
	ret |= rec_add_u64(&r, "trials", t->a->trials);
	ret |= rec_add_str(&r, "tsc", harness_tsc_name(t->tsc));
	ret |= rec_add_f64(&r, "access_ns", st->ns);
	ret |= rec_add_f64(&r, "access_ns_min", st->ns_min);
	ret |= rec_add_f64(&r, "access_cv_pct", st->cv_pct);
	if (t->tsc != HARNESS_TSC_NONE)
		ret |= rec_add_f64(&r, "access_cycles", st->cycles);
	if (!base) {
		ret |= rec_add_f64(&r, "extra_vs_base_ns", st->ns - t->base.ns);
		if (t->tsc != HARNESS_TSC_NONE)
			ret |= rec_add_f64(&r, "extra_vs_base_cycles", st->cycles - t->base.cycles);
	}
	ret |= rec_add_f64(&r, "huge_pct", huge_pct);
	if (ret)
		return err_set(e, -EINVAL, "cannot build the %s record", variant);
	return harness_emit(t->env, &r, e);
}

static void warm(struct chain *c, uint64_t nodes)
{
	advance(c, nodes < 4096 ? 8192 : 2 * nodes);
}

/* Both chains, trials interleaved (order alternating), then the paired differences. */
static void measure_chains(struct chain *c4k, struct chain *c2m, uint64_t nodes, uint64_t trials,
			   uint64_t loads, enum harness_tsc tsc, struct tstat *s4k, struct tstat *s2m,
			   struct pair_diff *d)
{
	double dns[TLB_MAX_TRIALS], dcyc[TLB_MAX_TRIALS], dpct[TLB_MAX_TRIALS];
	uint64_t i;

	warm(c4k, nodes);
	warm(c2m, nodes);
	for (i = 0; i < trials; i++) {
		if (i % 2 == 0) {
			trial(c4k, loads, tsc);
			trial(c2m, loads, tsc);
		} else {
			trial(c2m, loads, tsc);
			trial(c4k, loads, tsc);
		}
	}
	for (i = 0; i < trials; i++) {
		dns[i] = c4k->s.ns[i] - c2m->s.ns[i];
		dcyc[i] = c4k->s.cycles[i] - c2m->s.cycles[i];
		dpct[i] = c2m->s.ns[i] > 0 ? 100.0 * (c4k->s.ns[i] / c2m->s.ns[i] - 1.0) : 0.0;
	}
	d->blocks = trials >= 10 * TLB_BLOCKS;
	if (d->blocks) {
		/* in trial order, before the medians sort: how far the host drifted within the run */
		uint64_t per = trials / TLB_BLOCKS, b;
		double blk[TLB_MAX_TRIALS];

		for (b = 0; b < TLB_BLOCKS; b++) {
			double m;

			memcpy(blk, dns + b * per, per * sizeof(*blk));
			m = harness_median(blk, per);
			if (b == 0 || m < d->block_min)
				d->block_min = m;
			if (b == 0 || m > d->block_max)
				d->block_max = m;
		}
	}
	d->ns = harness_median(dns, c4k->s.n);
	d->cycles = harness_median(dcyc, c4k->s.n);
	d->pct = harness_median(dpct, c4k->s.n);
	*s4k = summarize(&c4k->s);	/* sorts the series: after the pairs */
	*s2m = summarize(&c2m->s);
}

/* One working set on both backings. */
static void measure_point(struct tlb_run *t, uint64_t ws, struct tstat *s4k, struct tstat *s2m,
			  struct pair_diff *d)
{
	struct chain c4k = { NULL, NULL, { 0 } }, c2m = { NULL, NULL, { 0 } };

	c4k.p = tlb_chain_build(t->r4k.buf, ws, 1, t->env->common->seed, t->scratch);
	c2m.p = tlb_chain_build(t->r2m.buf, ws, 1, t->env->common->seed, t->scratch);
	measure_chains(&c4k, &c2m, ws, t->a->trials, t->a->loads, t->tsc, s4k, s2m, d);
}

/* the walk point on one buffer through both page sizes */
struct shared_walk {
	bool done;
	struct tstat s4k, s2m;
	struct pair_diff d;
	double huge_pct;
	char note[REC_VAL_MAX];
};

static void measure_shared(struct tlb_run *t, uint64_t ws, struct shared_walk *w)
{
	struct chain c4k = { NULL, NULL, { 0 } }, c2m = { NULL, NULL, { 0 } };
	char knob[THP_VALUE_MAX];
	struct err e = ERR_INIT;
	struct twinmap tm;
	double small_pct = 0;

	if (!t->a->walk_trials) {
		snprintf(w->note, sizeof(w->note), "--walk-trials=0");
		return;
	}
	if (twinmap_open(&tm, (size_t)region_round_huge(ws * REGION_PAGE), &e) ||
	    twinmap_coverage(t->env->root, &tm, &w->huge_pct, &small_pct, &e)) {
		snprintf(w->note, sizeof(w->note), "no shared buffer: %.120s", e.msg);
	} else if (w->huge_pct < TLB_HUGE_VALID_PCT || small_pct > 0) {
		thp_knob_get(t->env->root, "shmem_enabled", knob, sizeof(knob), NULL);
		snprintf(w->note, sizeof(w->note),
			 "shared buffer: 2M view %.0f%% PMD-mapped, 4K view %.0f%% (shmem_enabled '%s'; "
			 "advise or always needed)",
			 w->huge_pct, small_pct, knob);
	} else {
		c4k.base = tm.small;
		c2m.base = tm.huge;
		c4k.p = (void *)(uintptr_t)tlb_chain_build_off(tm.huge, ws, t->env->common->seed,
							       t->scratch);
		c2m.p = c4k.p;
		measure_chains(&c4k, &c2m, ws, t->a->walk_trials, t->a->walk_loads, t->tsc, &w->s4k,
			       &w->s2m, &w->d);
		w->done = true;
	}
	twinmap_close(&tm);	/* fine after a failed open too */
}

static int add_shared(struct tlb_run *t, struct record *res, const struct shared_walk *w)
{
	int r = 0;

	if (!w->done)
		return rec_add_str(res, "walk_shared_note", w->note);
	r |= rec_add_str(res, "walk_frames", "shared");
	r |= rec_add_f64(res, "tlb_walk_shared_extra_ns", w->d.ns);
	if (t->tsc != HARNESS_TSC_NONE)
		r |= rec_add_f64(res, "tlb_walk_shared_extra_cycles", w->d.cycles);
	r |= rec_add_f64(res, "tlb_walk_shared_extra_pct", w->d.pct);
	r |= rec_add_f64(res, "walk_shared_4k_access_ns", w->s4k.ns);
	r |= rec_add_f64(res, "walk_shared_2m_access_ns", w->s2m.ns);
	r |= rec_add_f64(res, "walk_shared_huge_pct", w->huge_pct);
	if (w->d.blocks) {
		r |= rec_add_f64(res, "walk_shared_block_min_ns", w->d.block_min);
		r |= rec_add_f64(res, "walk_shared_block_max_ns", w->d.block_max);
	}
	r |= rec_add_u64(res, "walk_shared_trials", t->a->walk_trials);
	r |= rec_add_u64(res, "walk_shared_loads", t->a->walk_loads);
	return r;
}

static int add_summary(struct tlb_run *t, struct record *res, size_t npoints,
		       const struct pair_diff *small, const struct pair_diff *walk, const struct pair_diff *large,
		       const struct tstat *large4k, const struct tstat *large2m, const struct shared_walk *sw)
{
	bool cyc = t->tsc != HARNESS_TSC_NONE, valid = t->pct2m >= TLB_HUGE_VALID_PCT;
	char note[REC_VAL_MAX];
	int r = 0;

	r |= rec_add_str(res, "variant", "summary");
	r |= rec_add_u64(res, "pages_min", t->a->pages_min);
	r |= rec_add_u64(res, "pages_max", t->a->pages_max);
	r |= rec_add_u64(res, "points", npoints);
	r |= rec_add_u64(res, "loads", t->a->loads);
	r |= rec_add_u64(res, "trials", t->a->trials);
	r |= rec_add_str(res, "tsc", harness_tsc_name(t->tsc));
	r |= rec_add_f64(res, "base_access_ns", t->base.ns);
	r |= rec_add_f64(res, "large_4k_access_ns", large4k->ns);
	r |= rec_add_f64(res, "large_2m_access_ns", large2m->ns);
	r |= rec_add_f64(res, "tlb_cache_miss_ns", large4k->ns - t->base.ns);
	if (cyc) {
		r |= rec_add_f64(res, "base_access_cycles", t->base.cycles);
		r |= rec_add_f64(res, "large_4k_access_cycles", large4k->cycles);
		r |= rec_add_f64(res, "large_2m_access_cycles", large2m->cycles);
		r |= rec_add_f64(res, "tlb_cache_miss_cycles", large4k->cycles - t->base.cycles);
	}
	r |= rec_add_u64(res, "l2_bytes", t->l2_bytes);
	r |= rec_add_u64(res, "walk_ws_pages", t->walk_ws);
	r |= rec_add_f64(res, "huge_pct", t->pct2m);
	r |= rec_add_u64(res, "huge_valid", valid);
	r |= rec_add_u64(res, "split", t->a->split);
	if (t->a->split)
		r |= rec_add_f64(res, "split_4k_huge_pct", t->pct4k_before);
	if (t->cpu >= 0)
		r |= rec_add_u64(res, "cpu", (uint64_t)t->cpu);
	if (valid) {
		r |= rec_add_f64(res, "tlb_miss_extra_ns", large->ns);
		if (cyc)
			r |= rec_add_f64(res, "tlb_miss_extra_cycles", large->cycles);
		r |= rec_add_f64(res, "tlb_miss_extra_pct", large->pct);
		r |= rec_add_f64(res, "small_4k_minus_2m_ns", small->ns);
		r |= rec_add_f64(res, "tlb_walk_extra_ns", walk->ns);
		if (cyc)
			r |= rec_add_f64(res, "tlb_walk_extra_cycles", walk->cycles);
		r |= rec_add_f64(res, "tlb_walk_extra_pct", walk->pct);
	} else {
		snprintf(note, sizeof(note),
			 "the 2M-backed region got %.0f%% huge pages (THP never, or none free): "
			 "no tlb_miss_extra", t->pct2m);
		r |= rec_add_str(res, "note", note);
	}
	r |= add_shared(t, res, sw);
	return r ? -EINVAL : 0;
}

static int tlb_run(const void *opts, const struct wl_env *env, struct record *res, struct err *e)
{
	const struct tlb_opts *a = opts;
	struct tlb_run t = { .a = a, .env = env, .cpu = -1 };
	uint64_t ws[TLB_MAX_POINTS + 1], walk_ws, l2 = 512ull << 10;
	size_t npoints, i;
	size_t len = (size_t)region_round_huge(a->pages_max * REGION_PAGE);
	struct tstat s4k, s2m;
	struct pair_diff d, small = { 0 }, walk = { 0 };
	struct cache_geom g;
	struct chain base = { NULL, NULL, { 0 } };
	struct shared_walk sw = { .done = false };
	struct smaps_vma vma;
	int ret;

	if (cache_geom_get(env->root, 2, "Unified", &g, NULL) == 0 && g.size_bytes)
		l2 = g.size_bytes;
	walk_ws = tlb_walk_pages(l2, a->pages_min, a->pages_max);
	npoints = tlb_points_with(a->pages_min, a->pages_max, walk_ws, ws);
	t.l2_bytes = l2;
	t.walk_ws = walk_ws;
	t.tsc = harness_tsc_probe(env->root);
	if (a->pin)
		t.cpu = tlb_pin_here();	/* not pinned (-errno) only costs stability */
	t.scratch = malloc(a->pages_max * sizeof(*t.scratch) + TLB_BASE_NODES * sizeof(uint32_t));
	if (!t.scratch)
		return err_set(e, -ENOMEM, "cannot allocate the chain's scratch");
	if ((ret = region_map(&t.r4k, len, a->split ? MADV_HUGEPAGE : MADV_NOHUGEPAGE, e)) ||
	    (ret = region_map(&t.r2m, len, MADV_HUGEPAGE, e)))
		goto cleanup;
	/* fault both in now: the chase measures translation, not page faults */
	memset(t.r4k.buf, 0, len);
	memset(t.r2m.buf, 0, len);
	if (a->split) {
		if ((ret = region_smaps(env->root, &t.r4k, &vma, &t.pct4k_before, e)))
			goto cleanup;
		if ((ret = tlb_split_pmds(t.r4k.buf, len))) {
			err_set(e, ret, "cannot split the 4K region's huge mappings: %s",
				strerror(-ret));
			goto cleanup;
		}
	}
	if ((ret = region_smaps(env->root, &t.r4k, &vma, &t.pct4k, e)) ||
	    (ret = region_smaps(env->root, &t.r2m, &vma, &t.pct2m, e)))
		goto cleanup;

	/* baseline: 64 nodes, every line of one page: TLB and L1 hits */
	base.p = tlb_chain_build(t.r4k.buf, 1, TLB_BASE_NODES, env->common->seed, t.scratch);
	warm(&base, TLB_BASE_NODES);
	for (i = 0; i < a->trials; i++)
		trial(&base, a->loads, t.tsc);
	t.base = summarize(&base.s);
	if ((ret = send_point(&t, "base", 1, &t.base, t.pct4k, e)))
		goto cleanup;

	for (i = 0; i < npoints; i++) {
		measure_point(&t, ws[i], &s4k, &s2m, &d);
		if ((ret = send_point(&t, "4k", ws[i], &s4k, t.pct4k, e)) ||
		    (ret = send_point(&t, "2m", ws[i], &s2m, t.pct2m, e)))
			goto cleanup;
		if (i == 0)
			small = d;
		if (ws[i] == walk_ws)
			walk = d;
	}
	/* the sweep's regions go first: the shared buffer takes their place */
	region_release(&t.r4k);
	region_release(&t.r2m);
	measure_shared(&t, walk_ws, &sw);
	ret = add_summary(&t, res, npoints, &small, &walk, &d, &s4k, &s2m, &sw);
	if (ret)
		err_set(e, ret, "cannot add the summary to the record");
cleanup:
	region_release(&t.r4k);
	region_release(&t.r2m);
	free(t.scratch);
	return ret;
}

const struct workload wl_tlb = {
	.name = "tlb",
	.description = "TLB miss cost: dependent random pointer chase, one node per 4K page, "
		       "over a working-set sweep on 4K- and 2M-backed memory plus a one-page "
		       "baseline; ns and TSC cycles per load (one record per point + summary)",
	.params = tlb_params,
	.opts_size = sizeof(struct tlb_opts),
	.metrics = tlb_metrics,
	.check = tlb_check,
	.run = tlb_run,
};
