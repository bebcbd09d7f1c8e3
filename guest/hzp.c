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
	{ "half", WL_P_SIZE, offsetof(struct hzp_opts, half), "64M", REGION_HUGE, 1ull << 42,
	  "bytes in each half of the never-written buffer (a multiple of 2M)" },
	{ "passes", WL_P_U64, offsetof(struct hzp_opts, passes), "4", 2, 1000000,
	  "memcmp passes over the halves (the first one takes the read faults)" },
	{ "stride-passes", WL_P_U64, offsetof(struct hzp_opts, stride_passes), "32", 1, 100000000,
	  "4K-stride read passes comparing the halves" },
	{ "zero-page", WL_P_KEEP01, offsetof(struct hzp_opts, zero_page), "keep", 0, 0,
	  "use_zero_page for the run (restored after; 0 or 1 need root), or keep it" },
	{ "madvise", WL_P_BOOL, offsetof(struct hzp_opts, madvise), "0", 0, 1,
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
	{ "huge_pct", "AnonHugePages / Rss * 100 of the buffer afterwards (0 when nothing is resident): "
		      "the coverage evidence of the zp0 arm" },
	{ "zero_page_mapped", "what the read faults mapped: huge (the huge zero page: Rss ~0, one fault "
			      "per 2M), small (the 4K zero page: one per 4K), mixed, or none (they "
			      "allocated memory)" },
	{ "vm_thp_zero_page_alloc", "/proc/vmstat thp_zero_page_alloc delta over the first pass (0 "
				    "also when the huge zero page already existed)" },
	{ "vm_thp_zero_page_alloc_failed", "/proc/vmstat thp_zero_page_alloc_failed delta over the "
					   "first pass" },
	{ "zero_page_in_effect", "use_zero_page=1 only: 1 if the read faults mapped the huge zero "
				 "page, else 0 (the cell is invalid)" },
	{ "zero_page_reason", "with zero_page_in_effect=0: what was tried and what the kernel did" },
	{ NULL, NULL },
};

static const char *const mapped_names[] = {
	[HZP_MAPPED_HUGE_ZERO] = "huge",
	[HZP_MAPPED_SMALL_ZERO] = "small",
	[HZP_MAPPED_MIXED_ZERO] = "mixed",
	[HZP_MAPPED_MEMORY] = "none",
};
_Static_assert(sizeof(mapped_names) / sizeof(mapped_names[0]) == HZP_MAPPED__COUNT,
	       "mapped_names out of sync with enum hzp_mapped");

const char *hzp_mapped_name(enum hzp_mapped m)
{
	return (unsigned)m < HZP_MAPPED__COUNT ? mapped_names[m] : "?";
}

void hzp_zpstat_read(const char *root, struct hzp_zpstat *z)
{
	memset(z, 0, sizeof(*z));
	z->have = !guest_vmstat_one(root, "thp_zero_page_alloc", &z->alloc) &&
		  !guest_vmstat_one(root, "thp_zero_page_alloc_failed", &z->failed);
}

int hzp_evidence_read(const char *root, uint64_t addr, uint64_t bytes, uint64_t first_minflt,
		      const struct hzp_zpstat *before, const struct hzp_zpstat *after,
		      struct hzp_evidence *ev, struct err *e)
{
	memset(ev, 0, sizeof(*ev));
	ev->bytes = bytes;
	ev->first_minflt = first_minflt;
	ev->have_zp = before->have && after->have && after->alloc >= before->alloc &&
		      after->failed >= before->failed;
	if (ev->have_zp) {
		ev->zp_alloc = after->alloc - before->alloc;
		ev->zp_failed = after->failed - before->failed;
	}
	return smaps_self(root, addr, &ev->vma, e);
}

enum hzp_mapped hzp_classify(const struct hzp_evidence *ev)
{
	uint64_t blocks = ev->bytes / REGION_HUGE ? ev->bytes / REGION_HUGE : 1;

	if (ev->vma.rss_bytes * 100 > ev->bytes * HZP_RESIDENT_MAX_PCT)
		return HZP_MAPPED_MEMORY;
	if (ev->first_minflt <= blocks * HZP_HUGE_FAULTS_MAX)
		return HZP_MAPPED_HUGE_ZERO;
	if (ev->first_minflt >= blocks * HZP_SMALL_FAULTS_MIN)
		return HZP_MAPPED_SMALL_ZERO;
	return HZP_MAPPED_MIXED_ZERO;
}

bool hzp_zero_page_verdict(const struct hzp_evidence *ev, const char *thp_enabled, bool madvise,
			   char *why, size_t len)
{
	double per2m = (double)ev->first_minflt /
		       (double)(ev->bytes / REGION_HUGE ? ev->bytes / REGION_HUGE : 1);
	char rss[16], huge[16], buf[16], zp[64];

	fmt_size(ev->vma.rss_bytes, rss, sizeof(rss));
	fmt_size(ev->vma.anon_huge_bytes, huge, sizeof(huge));
	fmt_size(ev->bytes, buf, sizeof(buf));
	if (ev->have_zp)
		snprintf(zp, sizeof(zp), "thp_zero_page_alloc +%" PRIu64 " _failed +%" PRIu64,
			 ev->zp_alloc, ev->zp_failed);
	else
		snprintf(zp, sizeof(zp), "thp_zero_page_alloc unreadable");
	switch (hzp_classify(ev)) {
	case HZP_MAPPED_HUGE_ZERO:
		return true;
	case HZP_MAPPED_MEMORY:
		snprintf(why, len, "reads allocated Rss %s of %s (AnonHugePages %s) with use_zero_page=1, "
			 "THP %s, madvise=%d; %s: no huge zero page", rss, buf, huge, thp_enabled,
			 madvise, zp);
		return false;
	case HZP_MAPPED_SMALL_ZERO:
		snprintf(why, len, "reads mapped the 4K zero page (%.0f faults per 2M) with "
			 "use_zero_page=1, THP %s, madvise=%d; %s: no huge zero page", per2m,
			 thp_enabled, madvise, zp);
		return false;
	case HZP_MAPPED_MIXED_ZERO:
	case HZP_MAPPED__COUNT:
		break;
	}
	snprintf(why, len, "reads mapped zero pages of both sizes (%.1f faults per 2M) with "
		 "use_zero_page=1, THP %s, madvise=%d; %s", per2m, thp_enabled, madvise, zp);
	return false;
}

static int hzp_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const struct hzp_opts *a = opts;
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
	struct hzp_zpstat z0, z1;		/* around pass 1 */
	struct hzp_evidence ev;			/* the buffer after the read passes */
};

static int add_metrics(const struct hzp_opts *a, const struct wl_env *env, const char *zp,
		       const struct hzp_out *o, struct record *res)
{
	double later = (double)(a->passes - 1), steps = (double)(a->half / REGION_PAGE);
	double later_ns = (double)o->later_ns / later;
	const struct smaps_vma *vma = &o->ev.vma;
	char variant[32], thp[THP_VALUE_MAX], why[REC_VAL_MAX];
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
	r |= rec_add_u64(res, "rss_bytes", vma->rss_bytes);
	r |= rec_add_u64(res, "anon_huge_bytes", vma->anon_huge_bytes);
	r |= rec_add_f64(res, "huge_pct", vma->rss_bytes ?
		100.0 * (double)vma->anon_huge_bytes / (double)vma->rss_bytes : 0.0);
	r |= rec_add_str(res, "zero_page_mapped", hzp_mapped_name(hzp_classify(&o->ev)));
	if (o->ev.have_zp) {
		r |= rec_add_u64(res, "vm_thp_zero_page_alloc", o->ev.zp_alloc);
		r |= rec_add_u64(res, "vm_thp_zero_page_alloc_failed", o->ev.zp_failed);
	}
	if (!strcmp(zp, "1")) {
		/* the arm asked for the huge zero page: did it get it? */
		bool ok;

		thp_knob_get(env->root, "enabled", thp, sizeof(thp), NULL);
		ok = hzp_zero_page_verdict(&o->ev, thp, a->madvise, why, sizeof(why));
		r |= rec_add_u64(res, "zero_page_in_effect", ok);
		if (!ok)
			r |= rec_add_str(res, "zero_page_reason", why);
	}
	return r ? -EINVAL : 0;
}

/* the two microbenchmarks on a fresh buffer; o filled */
static int measure(const struct hzp_opts *a, const struct wl_env *env, struct hzp_out *o,
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
	hzp_zpstat_read(env->root, &o->z0);
	harness_usage_now(&o->u0);
	t0 = harness_now_ns();
	diff |= memcmp(p, p + a->half, a->half) != 0;
	o->first_ns = harness_now_ns() - t0;
	harness_usage_now(&o->u1);
	hzp_zpstat_read(env->root, &o->z1);
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

	ret = hzp_evidence_read(env->root, (uint64_t)(uintptr_t)rg.buf, rg.len,
				o->u1.minflt - o->u0.minflt, &o->z0, &o->z1, &o->ev, e);
	if (!ret && diff)
		ret = err_set(e, -EIO, "the never-written halves differ: memory is not zero");
	region_release(&rg);
	return ret;
}

static int hzp_run(const void *opts, const struct wl_env *env, struct record *res, struct err *e)
{
	const struct hzp_opts *a = opts;
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
	if (!ret && (ret = add_metrics(a, env, zp, &o, res)))
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
	.opts_size = sizeof(struct hzp_opts),
	.metrics = hzp_metrics,
	.check = hzp_check,
	.run = hzp_run,
	.runner_variants = hzp_variants,
};
