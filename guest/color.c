#include "color.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "harness.h"
#include "region.h"

#define COLOR_MAX_TRIALS 101
#define COLOR_MAX_WAYS 64	/* more ways than this: not a set-associative cache to thrash */

static const struct wl_param color_params[] = {
	{ "loads", WL_P_U64, offsetof(struct color_opts, loads), "1000000", 1000, 1000000000000ull,
	  "dependent 4-byte reads per trial and N" },
	{ "trials", WL_P_U64, offsetof(struct color_opts, trials), "5", 1, COLOR_MAX_TRIALS,
	  "timed trials per N (N = ways and ways + 1 interleaved); the median is reported" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

#define LEVEL_FIELDS(p)                                                                   \
	{ p "_ways", "ways of associativity" },                                          \
	{ p "_sets", "sets" },                                                           \
	{ p "_line_bytes", "line size" },                                                \
	{ p "_size_bytes", "capacity" },                                                 \
	{ p "_stride_bytes", "distance between the frames read (one way's span, >= 4K)" }, \
	{ p "_nways_ns", "ns per read, N = ways frames (they fit in the set)" },         \
	{ p "_nways1_ns", "ns per read, N = ways + 1 frames (the set thrashes)" },       \
	{ p "_nways_cycles", "TSC cycles per read, N = ways" },                          \
	{ p "_nways1_cycles", "TSC cycles per read, N = ways + 1" },                     \
	{ p "_thrash_pct", "nways1_ns / nways_ns - 1, in percent" }

static const struct wl_metric color_metrics[] = {
	{ "geometry", "where the cache geometry came from: sysfs or cpuid" },
	{ "huge_backed", "1 if the region was one huge page (frames physically contiguous)" },
	{ "huge_pct", "AnonHugePages / Rss of the region" },
	{ "region_bytes", "size of the 2M-aligned MADV_HUGEPAGE region" },
	{ "loads", "reads per trial and N" },
	{ "trials", "trials per N" },
	{ "tsc", "cycle counter: rdtscp, rdtsc (lfence-fenced) or none" },
	LEVEL_FIELDS("l1d"),
	LEVEL_FIELDS("l2"),
	{ NULL, NULL },
};

#if defined(__x86_64__) || defined(__i386__)
/* leaf 4 / 0x8000001d format: subleaves until type 0 */
static bool cpuid_deterministic(unsigned leaf, unsigned level, struct cache_geom *g)
{
	unsigned a, b, c, d, i;

	for (i = 0; i < 16; i++) {
		__cpuid_count(leaf, i, a, b, c, d);
		unsigned type = a & 0x1f, lv = (a >> 5) & 7;

		if (type == 0)
			return false;
		/* 1 data, 3 unified: the level-1 data cache or the level-2 cache */
		if (lv != level || !(type == 1 || type == 3) || (level == 1 && type != 1))
			continue;
		g->level = level;
		g->ways = ((b >> 22) & 0x3ff) + 1;
		g->line_bytes = (b & 0xfff) + 1;
		g->sets = (uint64_t)c + 1;
		g->size_bytes = g->ways * (((b >> 12) & 0x3ff) + 1) * g->line_bytes * g->sets;
		return true;
	}
	return false;
}

/* AMD's older leaves: 0x80000005 ECX (L1d), 0x80000006 ECX (L2, encoded ways) */
static bool cpuid_amd_legacy(unsigned level, struct cache_geom *g)
{
	static const unsigned l2_ways[16] = { 0, 1, 2, 3, 4, 6, 8, 0, 16, 0, 32, 48, 64, 96, 128, 0 };
	unsigned a, b, c, d, max = __get_cpuid_max(0x80000000u, NULL);

	if (level == 1 && max >= 0x80000005u) {
		__cpuid(0x80000005u, a, b, c, d);
		g->ways = (c >> 16) & 0xff;
		g->line_bytes = c & 0xff;
		g->size_bytes = (uint64_t)(c >> 24) * 1024;
	} else if (level == 2 && max >= 0x80000006u) {
		__cpuid(0x80000006u, a, b, c, d);
		g->ways = l2_ways[(c >> 12) & 0xf];
		g->line_bytes = c & 0xff;
		g->size_bytes = (uint64_t)(c >> 16) * 1024;
	} else {
		return false;
	}
	(void)a;
	(void)b;
	(void)d;
	if (!g->ways || g->ways == 0xff || !g->line_bytes || !g->size_bytes)
		return false;	/* 0xff: fully associative */
	g->level = level;
	g->sets = g->size_bytes / (g->ways * g->line_bytes);
	return g->sets > 0;
}
#endif

int color_cpuid_geom(unsigned level, struct cache_geom *g, struct err *e)
{
	memset(g, 0, sizeof(*g));
#if defined(__x86_64__) || defined(__i386__)
	if (__get_cpuid_max(0, NULL) >= 4 && cpuid_deterministic(4, level, g))
		return 0;
	if (__get_cpuid_max(0x80000000u, NULL) >= 0x8000001du &&
	    cpuid_deterministic(0x8000001du, level, g))
		return 0;
	if (cpuid_amd_legacy(level, g))
		return 0;
#endif
	return err_set(e, -ENOENT, "the CPU does not describe its level %u cache", level);
}

uint64_t color_stride(const struct cache_geom *g)
{
	uint64_t span;

	if (!g->sets || !g->line_bytes || g->sets > (1u << 20) || g->line_bytes > 4096)
		return 0;
	span = g->sets * g->line_bytes;
	if (span & (span - 1))
		return 0;	/* not a power of two: no plain set-conflicting stride */
	return span < REGION_PAGE ? REGION_PAGE : span;
}

__attribute__((noinline)) uint32_t color_read(const char *buf, uint64_t stride, unsigned n,
					      uint64_t loops)
{
	uint32_t v = 0;
	uint64_t l;
	unsigned k;

	for (l = 0; l < loops; l++)
		for (k = 0; k < n; k++)	/* the value read (0) is part of the next address */
			v = *(const volatile uint32_t *)(const void *)(buf + k * stride + v);
	return v;
}

struct level {
	const char *prefix;	/* l1d, l2 */
	bool have;
	struct cache_geom g;
	uint64_t stride;
};

/* sysfs first, CPUID when sysfs does not say; *source names the one used for L1 */
static void level_get(const char *root, unsigned lv, struct level *l, const char **source)
{
	l->have = !cache_geom_get(root, lv, lv == 1 ? "Data" : "Unified", &l->g, NULL);
	if (l->have && lv == 1)
		*source = "sysfs";
	if (!l->have) {
		l->have = !color_cpuid_geom(lv, &l->g, NULL);
		if (l->have && lv == 1)
			*source = "cpuid";
	}
	l->stride = l->have ? color_stride(&l->g) : 0;
	if (l->g.ways < 1 || l->g.ways > COLOR_MAX_WAYS || !l->stride ||
	    l->stride * (l->g.ways + 1) > (64u << 20))
		l->have = false;
}

static int color_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const char *src = NULL;
	struct level l1 = { "l1d", false, { 0, 0, 0, 0, 0 }, 0 };

	level_get(env->root, 1, &l1, &src);
	if (!l1.have)
		return err_set(e, -EOPNOTSUPP,
			       "no usable level 1 data cache geometry (sysfs "
			       "/sys/devices/system/cpu/cpu0/cache or CPUID)");
	return 0;
}

struct series {
	size_t n;
	double ns[COLOR_MAX_TRIALS], cycles[COLOR_MAX_TRIALS];
};

static void trial(const char *buf, const struct level *l, unsigned n, const struct color_opts *a,
		  enum harness_tsc tsc, struct series *s)
{
	uint64_t loops = a->loads / n ? a->loads / n : 1, t0, t1, c0, c1;
	double reads = (double)(loops * n);
	uint32_t v;

	t0 = harness_now_ns();
	c0 = harness_cycles(tsc);
	v = color_read(buf, l->stride, n, loops);
	c1 = harness_cycles(tsc);
	t1 = harness_now_ns();
	__asm__ volatile("" : : "r"(v) : "memory");
	s->ns[s->n] = (double)(t1 - t0) / reads;
	s->cycles[s->n] = (double)(c1 - c0) / reads;
	s->n++;
}

static int measure_level(const char *buf, const struct level *l, const struct color_opts *a,
			 enum harness_tsc tsc, struct record *res)
{
	struct series sw = { 0, { 0 }, { 0 } }, sw1 = sw;
	unsigned ways = (unsigned)l->g.ways;
	char k[REC_KEY_MAX];
	double nw, nw1;
	uint64_t i;
	int r = 0;

	color_read(buf, l->stride, ways + 1, 1000);	/* warm the TLB and the code */
	for (i = 0; i < a->trials; i++) {
		if (i % 2 == 0) {
			trial(buf, l, ways, a, tsc, &sw);
			trial(buf, l, ways + 1, a, tsc, &sw1);
		} else {
			trial(buf, l, ways + 1, a, tsc, &sw1);
			trial(buf, l, ways, a, tsc, &sw);
		}
	}
	nw = harness_median(sw.ns, sw.n);
	nw1 = harness_median(sw1.ns, sw1.n);
#define F(name) (snprintf(k, sizeof(k), "%s_" name, l->prefix), k)
	r |= rec_add_u64(res, F("ways"), l->g.ways);
	r |= rec_add_u64(res, F("sets"), l->g.sets);
	r |= rec_add_u64(res, F("line_bytes"), l->g.line_bytes);
	r |= rec_add_u64(res, F("size_bytes"), l->g.size_bytes);
	r |= rec_add_u64(res, F("stride_bytes"), l->stride);
	r |= rec_add_f64(res, F("nways_ns"), nw);
	r |= rec_add_f64(res, F("nways1_ns"), nw1);
	if (tsc != HARNESS_TSC_NONE) {
		r |= rec_add_f64(res, F("nways_cycles"), harness_median(sw.cycles, sw.n));
		r |= rec_add_f64(res, F("nways1_cycles"), harness_median(sw1.cycles, sw1.n));
	}
	r |= rec_add_f64(res, F("thrash_pct"), nw > 0 ? 100.0 * (nw1 / nw - 1.0) : 0.0);
#undef F
	return r ? -EINVAL : 0;
}

static int color_run(const void *opts, const struct wl_env *env, struct record *res, struct err *e)
{
	const struct color_opts *a = opts;
	struct level lv[2] = { { "l1d", false, { 0, 0, 0, 0, 0 }, 0 },
			       { "l2", false, { 0, 0, 0, 0, 0 }, 0 } };
	enum harness_tsc tsc = harness_tsc_probe(env->root);
	const char *source = "none";
	uint64_t span = 0;
	struct smaps_vma vma;
	struct region rg;
	double pct;
	size_t i, k;
	int ret, r = 0;

	level_get(env->root, 1, &lv[0], &source);
	level_get(env->root, 2, &lv[1], &source);
	if (!lv[0].have)
		return err_set(e, -EOPNOTSUPP, "no usable level 1 data cache geometry");
	for (i = 0; i < 2; i++)
		if (lv[i].have && lv[i].stride * (lv[i].g.ways + 1) > span)
			span = lv[i].stride * (lv[i].g.ways + 1);
	ret = region_map(&rg, (size_t)region_round_huge(span), MADV_HUGEPAGE, e);
	if (ret)
		return ret;
	/* fault the region in (zero stays at every offset read) */
	for (k = 0; k < rg.len; k += REGION_PAGE)
		rg.buf[k] = 0;
	if ((ret = region_smaps(env->root, &rg, &vma, &pct, e)))
		goto cleanup;

	r |= rec_add_str(res, "geometry", source);
	r |= rec_add_u64(res, "huge_backed", vma.anon_huge_bytes >= rg.len);
	r |= rec_add_f64(res, "huge_pct", pct);
	r |= rec_add_u64(res, "region_bytes", rg.len);
	r |= rec_add_u64(res, "loads", a->loads);
	r |= rec_add_u64(res, "trials", a->trials);
	r |= rec_add_str(res, "tsc", harness_tsc_name(tsc));
	for (i = 0; i < 2; i++)
		if (lv[i].have)
			r |= measure_level(rg.buf, &lv[i], a, tsc, res);
	if (r)
		ret = err_set(e, -EINVAL, "cannot add the metrics to the record");
cleanup:
	region_release(&rg);
	return ret;
}

const struct workload wl_color = {
	.name = "color",
	.description = "cache colour (seeds/004): dependent 4-byte reads at offset 0 of N "
		       "frames one cache way apart in a 2M MADV_HUGEPAGE region, N = ways and "
		       "ways + 1, for the L1d and the L2; ns and TSC cycles per read",
	.params = color_params,
	.opts_size = sizeof(struct color_opts),
	.metrics = color_metrics,
	.check = color_check,
	.run = color_run,
};
