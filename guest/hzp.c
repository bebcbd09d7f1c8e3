#include "hzp.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "region.h"
#include "sysinfo.h"

static const struct wl_param hzp_params[] = {
	/* 2x64M: a memcmp pass reads 128M; seconds under TCG, tens of ms natively */
	{ "half", WL_P_SIZE, offsetof(struct wl_args, half), "64M", REGION_HUGE, 1ull << 42,
	  "bytes in each half of the never-written buffer (a multiple of 2M)" },
	{ "passes", WL_P_U64, offsetof(struct wl_args, passes), "4", 2, 1000000,
	  "memcmp passes over the halves (the first one takes the read faults)" },
	{ "stride-passes", WL_P_U64, offsetof(struct wl_args, stride_passes), "32", 1, 100000000,
	  "4K-stride read passes comparing the halves" },
	{ "zero-page", WL_P_KEEP01, offsetof(struct wl_args, zero_page), "keep", 0, 0,
	  "use_zero_page for the run (restored after; 0 or 1 need root), or keep it" },
	{ "madvise", WL_P_BOOL, offsetof(struct wl_args, madvise), "0", 0, 1,
	  "1: madvise(MADV_HUGEPAGE) the buffer (needed when THP is 'madvise')" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

static const struct wl_metric hzp_metrics[] = {
	{ "variant", "zp1 or zp0: use_zero_page during the run (zpna: no such knob)" },
	{ "use_zero_page", "use_zero_page during the run (0, 1 or unsupported)" },
	{ "half_bytes", "bytes in each half" },
	{ "madvise", "1 if the buffer was madvise(MADV_HUGEPAGE)d" },
	{ "passes", "memcmp passes" },
	{ "stride_passes", "4K-stride read passes" },
	{ "memcmp_first_ns", "first memcmp pass (read faults on never-written memory)" },
	{ "memcmp_first_minflt", "minor faults of the first pass" },
	{ "memcmp_first_sys_us", "system CPU time of the first pass" },
	{ "memcmp_ns", "later passes, mean time per pass (memory already mapped)" },
	{ "memcmp_mib_s", "later passes: bytes read (both halves) per second" },
	{ "memcmp_minflt", "minor faults of the later passes (0 expected)" },
	{ "stride_ns", "mean time per 4K-stride pass over both halves" },
	{ "stride_ns_per_compare", "per 4K step: one byte of each half read and compared" },
	{ "stride_minflt", "minor faults of the stride passes (0 expected)" },
	{ "rss_bytes", "Rss of the buffer afterwards (zero pages are not counted)" },
	{ "anon_huge_bytes", "AnonHugePages of the buffer afterwards" },
	{ NULL, NULL },
};

static int hzp_check(const struct wl_args *a, const struct wl_env *env, struct err *e)
{
	char s[32], m[32];
	uint64_t avail, v;
	int r;

	fmt_size(a->half, s, sizeof(s));
	if (a->half % REGION_HUGE)
		return err_set(e, -EINVAL, "half %s is not a multiple of 2M", s);
	if (meminfo_get(env->root, "MemAvailable", &avail, e))
		return err_wrap(e, "cannot check the size against available memory");
	/* with use_zero_page=0 (or no THP zero page) reads can allocate every page */
	if (2 * a->half + HZP_MARGIN > avail) {
		fmt_size(avail, m, sizeof(m));
		return err_set(e, -ENOMEM,
			       "two halves of %s exceed available memory %s (32M kept free)", s, m);
	}
	if (a->zero_page < 0)
		return 0;
	r = thp_knob_get_u64(env->root, HZP_KNOB, &v, e);
	if (r == -ENOENT)
		return err_set(e, -EOPNOTSUPP, "--zero-page=%d: this kernel has no %s knob",
			       a->zero_page, HZP_KNOB);
	if (r)
		return err_wrap(e, "--zero-page=%d", a->zero_page);
	if (geteuid() != 0)
		return err_set(e, -EOPNOTSUPP, "--zero-page=%d writes %s: it needs root",
			       a->zero_page, HZP_KNOB);
	return 0;
}

struct hzp_out {
	uint64_t first_ns, later_ns, stride_ns;
	struct harness_usage u0, u1, u2, u3;	/* around pass 1, later passes, stride */
	struct smaps_vma vma;
};

static int add_metrics(const struct wl_args *a, const char *zp, const struct hzp_out *o,
		       struct record *res)
{
	double later = (double)(a->passes - 1), steps = (double)(a->half / REGION_PAGE);
	double later_ns = (double)o->later_ns / later;
	char variant[32];
	int r = 0;

	snprintf(variant, sizeof(variant), "zp%s", strcmp(zp, THP_UNSUPPORTED) ? zp : "na");
	r |= rec_add_str(res, "variant", variant);
	r |= rec_add_str(res, "use_zero_page", zp);
	r |= rec_add_u64(res, "half_bytes", a->half);
	r |= rec_add_u64(res, "madvise", a->madvise);
	r |= rec_add_u64(res, "passes", a->passes);
	r |= rec_add_u64(res, "stride_passes", a->stride_passes);
	r |= rec_add_u64(res, "memcmp_first_ns", o->first_ns);
	r |= rec_add_u64(res, "memcmp_first_minflt", o->u1.minflt - o->u0.minflt);
	r |= rec_add_u64(res, "memcmp_first_sys_us", o->u1.sys_us - o->u0.sys_us);
	r |= rec_add_f64(res, "memcmp_ns", later_ns);
	r |= rec_add_f64(res, "memcmp_mib_s",
			 2.0 * (double)a->half / (1024.0 * 1024.0) / (later_ns ? later_ns / 1e9 : 1e-9));
	r |= rec_add_u64(res, "memcmp_minflt", o->u2.minflt - o->u1.minflt);
	r |= rec_add_f64(res, "stride_ns", (double)o->stride_ns / (double)a->stride_passes);
	r |= rec_add_f64(res, "stride_ns_per_compare",
			 (double)o->stride_ns / (double)a->stride_passes / steps);
	r |= rec_add_u64(res, "stride_minflt", o->u3.minflt - o->u2.minflt);
	r |= rec_add_u64(res, "rss_bytes", o->vma.rss_bytes);
	r |= rec_add_u64(res, "anon_huge_bytes", o->vma.anon_huge_bytes);
	return r ? -EINVAL : 0;
}

/* the two microbenchmarks on a fresh buffer; o filled */
static int measure(const struct wl_args *a, const struct wl_env *env, struct hzp_out *o,
		   struct err *e)
{
	struct region rg;
	const char *p;
	uint64_t t0, i, off;
	unsigned diff = 0;
	int ret;

	ret = region_map(&rg, (size_t)(2 * a->half), a->madvise ? MADV_HUGEPAGE : REGION_NO_ADVICE,
			 e);
	if (ret)
		return ret;
	p = rg.buf;

	/* (a) memcmp of the never-written halves */
	harness_usage_now(&o->u0);
	t0 = harness_now_ns();
	diff |= memcmp(p, p + a->half, a->half) != 0;
	o->first_ns = harness_now_ns() - t0;
	harness_usage_now(&o->u1);
	t0 = harness_now_ns();
	for (i = 1; i < a->passes; i++) {
		diff |= memcmp(p, p + a->half, a->half) != 0;
		__asm__ volatile("" : : : "memory");
	}
	o->later_ns = harness_now_ns() - t0;
	harness_usage_now(&o->u2);

	/* (b) one byte per 4K of each half, compared */
	t0 = harness_now_ns();
	for (i = 0; i < a->stride_passes; i++) {
		const volatile char *q = p;

		for (off = 0; off < a->half; off += REGION_PAGE)
			diff |= (unsigned)(q[off] ^ q[off + a->half]);
	}
	o->stride_ns = harness_now_ns() - t0;
	harness_usage_now(&o->u3);

	ret = region_smaps(env->root, &rg, &o->vma, &(double){ 0 }, e);
	if (!ret && diff)
		ret = err_set(e, -EIO, "the never-written halves differ: memory is not zero");
	region_release(&rg);
	return ret;
}

static int hzp_run(const struct wl_args *a, const struct wl_env *env, struct record *res,
		   struct err *e)
{
	struct hzp_out o;
	uint64_t saved = 0, now;
	bool restore = false;
	char zp[24];
	int ret;

	memset(&o, 0, sizeof(o));
	if (a->zero_page >= 0) {
		if ((ret = thp_knob_get_u64(env->root, HZP_KNOB, &saved, e)))
			return ret == -ENOENT ? err_set(e, -EOPNOTSUPP, "no %s knob", HZP_KNOB) : ret;
		if ((ret = thp_knob_set_u64(env->root, HZP_KNOB, (uint64_t)a->zero_page, e)))
			return err_wrap(e, "cannot set %s", HZP_KNOB);
		restore = true;
	}
	snprintf(zp, sizeof(zp), "%s", THP_UNSUPPORTED);
	if (!thp_knob_get_u64(env->root, HZP_KNOB, &now, NULL))
		snprintf(zp, sizeof(zp), "%" PRIu64, now);

	ret = measure(a, env, &o, e);
	if (!ret && (ret = add_metrics(a, zp, &o, res)))
		err_set(e, ret, "cannot add the metrics to the record");
	if (restore) {
		struct err re = ERR_INIT;

		if (thp_knob_set_u64(env->root, HZP_KNOB, saved, &re)) {
			err_set(e, re.code, "cannot restore %s to %" PRIu64 ": %s", HZP_KNOB, saved,
				re.msg);
			ret = ret ? ret : re.code;
		}
	}
	return ret;
}

/* the runner measures both settings of the knob in every cell it owns */
static const char *const hzp_variants[] = { "--zero-page=1", "--zero-page=0", NULL };

const struct workload wl_hzp = {
	.name = "hzp",
	.description = "huge zero page (seeds/000): memcmp of two never-written halves and "
		       "4K-stride reads comparing them; time, faults, Rss; use_zero_page "
		       "recorded (and set with --zero-page, restored after)",
	.params = hzp_params,
	.metrics = hzp_metrics,
	.check = hzp_check,
	.run = hzp_run,
	.runner_variants = hzp_variants,
};
