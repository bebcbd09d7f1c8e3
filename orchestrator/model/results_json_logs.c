#include "orchestrator/model/results_json_logs.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/procfs.h"
#include "lib/record.h"
#include "orchestrator/model/results.h"

/* ---- guest ---------------------------------------------------------------------------- */

/* a mean kept as a sum over a count (one sample once loaded) */
static json_object *w_mean(const void *base, const struct jt_field *f)
{
	double sum;
	unsigned n;

	memcpy(&sum, (const char *)base + f->off, sizeof(sum));
	memcpy(&n, (const char *)base + f->count, sizeof(n));
	return jt_num(n ? sum / n : NAN);
}

static int l_mean(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	unsigned one = 1;
	char why[160];
	double d;

	if (jt_get_num(c, v, at, true, &d))
		return -EINVAL;
	if (isfinite(d) && rec_value_check(f->key, d, why, sizeof(why)))
		return err_set(c->e, -ERANGE, "'%s': '%s' is out of range: %s", c->name, at, why);
	if (isfinite(d)) {
		memcpy((char *)base + f->off, &d, sizeof(d));
		memcpy((char *)base + f->count, &one, sizeof(one));
	}
	return 0;
}

#define CS(k, kind, m, ...) JT_F(k, kind, struct guest_cellstat, m, __VA_ARGS__)
static const struct jt_field cellstat_fields[] = {
	{ CS("guest_thp", JT_STR, guest_thp, 0) },
	{ CS("workload", JT_STR, workload, 0) },
	{ CS("reps", JT_INT, reps, 0) },
	{ CS("host_huge_pct", JT_CUSTOM, cov_sum, JT_NULL, .count = offsetof(struct guest_cellstat, ncov),
	  .write = w_mean, .load = l_mean) },
	{ CS("fault_ns_per_4k", JT_CUSTOM, fault_sum, JT_NULL, .count = offsetof(struct guest_cellstat, nfault),
	  .write = w_mean, .load = l_mean) },
	{ CS("access_ns", JT_CUSTOM, access_sum, JT_NULL, .count = offsetof(struct guest_cellstat, naccess),
	  .write = w_mean, .load = l_mean) },
	{ .key = "mean_kind", .kind = JT_CONST, .flags = JT_OPT, .def = "arithmetic over this guest's repetitions" },
};
static const struct jt_table cellstat_jt = JT_TABLE(struct guest_cellstat, cellstat_fields);

#define GL(k, kind, m, ...) JT_F(k, kind, struct guest_log, m, __VA_ARGS__)
#define TIME JT_RANGE, .lo = 0, .hi = LLONG_MAX	/* a duration: 0 and up */
static const struct jt_field guest_fields[] = {
	{ GL("name", JT_STR, name, 0) },
	{ GL("host_thp", JT_STR, host_thp, 0) },
	{ GL("host_prefault", JT_STR, prefault, JT_OPT | JT_NULL, .def = "ondemand") },
	{ GL("round", JT_INT, round, JT_OPT) },
	{ GL("status", JT_STR, status, 0) },
	{ GL("error", JT_STR, error, JT_NULL | JT_WNULL) },
	{ GL("domain_xml", JT_STR, xml_path, 0) },
	{ GL("console_log", JT_STR, console_path, 0) },
	{ GL("guest_kernel", JT_STR, guest_kernel, 0) },
	{ GL("create_to_first_record_s", JT_DOUBLE, create_to_first_record_s, TIME) },
	{ GL("boot_create_s", JT_DOUBLE, boot_create_s, JT_OPT | TIME) },
	/* the rest of create to first record: below 0 only where the guest's clock ran ahead */
	{ GL("boot_firmware_s", JT_DOUBLE, boot_firmware_s, JT_OPT) },
	{ GL("boot_kernel_s", JT_DOUBLE, boot_kernel_s, JT_OPT | TIME) },
	{ GL("boot_initrd_s", JT_DOUBLE, boot_initrd_s, JT_OPT | TIME) },
	{ GL("boot_runner_s", JT_DOUBLE, boot_runner_s, JT_OPT | TIME) },
	{ GL("teardown_s", JT_DOUBLE, teardown_s, TIME) },
	{ GL("total_s", JT_DOUBLE, total_s, TIME) },
	{ GL("records", JT_INT, records, 0) },
	{ GL("rejected_lines", JT_INT, rejected, 0) },
	{ GL("host_state", JT_STR, host_state, JT_OPT | JT_NULL | JT_WDEF, .def = "fresh") },
	{ GL("balloon", JT_STR, balloon, JT_OPT | JT_NULL | JT_WDEF, .def = "none") },
	{ GL("index", JT_INT, index, JT_OPT) },
	{ GL("concurrency", JT_INT, concurrency, JT_OPT | JT_WDEF, .idef = 1) },
	{ GL("guest_mthp_sizes_kb", JT_STR, mthp_sizes_kb, JT_OPT | JT_NULL | JT_WNULL) },
	/* --emulator: the QEMU binary of this boot and, with two, its A/B arm */
	{ GL("emulator", JT_STR, emulator, JT_OPT | JT_IFSET, .cond = offsetof(struct guest_log, emulator)) },
	{ GL("ab_arm", JT_STR, arm, JT_OPT | JT_IFSET, .cond = offsetof(struct guest_log, arm)) },
	{ GL("cells", JT_ARR, cs, JT_OPT | JT_INLINE, .count = offsetof(struct guest_log, ncs),
	  .cap = GLOG_MAX_CELLS, .sub = &cellstat_jt) },
};

static void guest_init(void *elem)
{
	struct guest_log *g = elem;

	g->create_to_first_record_s = g->teardown_s = g->total_s = NAN;
	g->boot_create_s = g->boot_firmware_s = g->boot_kernel_s = g->boot_initrd_s = g->boot_runner_s = NAN;
}

static int guest_put(const struct jt_ctx *c, void *parent, void *elem, const char *at)
{
	struct guest_log *g = results_guest_add(parent, c->e);

	(void)at;
	if (!g)
		return -ENOMEM;
	*g = *(struct guest_log *)elem;
	return 0;
}

const struct jt_table guest_jt = { sizeof(struct guest_log), guest_init, guest_put,
					  sizeof(guest_fields) / sizeof(guest_fields[0]), guest_fields };

/* ---- fragmented arm ------------------------------------------------------------------- */

/* free blocks per order, as many as the arm's orders */
static json_object *w_buddy(const void *base, const struct jt_field *f)
{
	const struct frag_log *fr = base;
	const unsigned long long *v = (const void *)((const char *)base + f->off);
	json_object *a = json_object_new_array();
	unsigned i;

	for (i = 0; i < fr->orders; i++)
		json_object_array_add(a, json_object_new_int64((int64_t)v[i]));
	return a;
}

static int l_buddy(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	struct frag_log *fr = base;
	unsigned long long *dst = (void *)((char *)base + f->off);
	size_t i, len;

	if (!json_object_is_type(v, json_type_array))
		return jt_bad_type(c, at, "an array", v);
	len = json_object_array_length(v);
	if (len > RES_BUDDY_ORDERS)
		return err_set(c->e, -E2BIG, "'%s': '%s' has %zu orders, more than %d", c->name, at, len,
			       RES_BUDDY_ORDERS);
	for (i = 0; i < len; i++) {
		json_object *x = json_object_array_get_idx(v, i);

		if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 0)
			return err_set(c->e, -EINVAL, "'%s': '%s[%zu]' must be a non-negative integer", c->name, at, i);
		dst[i] = (unsigned long long)json_object_get_int64(x);
	}
	if (len > fr->orders)
		fr->orders = (unsigned)len;
	return 0;
}

/* the unusable free space index for 2M (order 9) of a buddyinfo */
static json_object *w_unusable(const void *base, const struct jt_field *f)
{
	return jt_num(buddy_unusable_pct((const void *)((const char *)base + f->off),
					 ((const struct frag_log *)base)->orders, 9));
}

/* vm.compaction_proactiveness: kept as text, written as a number; "" none */
static json_object *w_proactive(const void *base, const struct jt_field *f)
{
	const struct frag_log *fr = base;

	(void)f;
	return fr->proactiveness[0] ? json_object_new_int64(strtoll(fr->proactiveness, NULL, 10)) : NULL;
}

static int l_proactive(const struct jt_ctx *c, json_object *v, const char *at, void *base,
		       const struct jt_field *f)
{
	struct frag_log *fr = base;
	int64_t x;

	(void)f;
	if (jt_get_int(c, v, at, 0, 100, &x))
		return -EINVAL;
	snprintf(fr->proactiveness, sizeof(fr->proactiveness), "%lld", (long long)x);
	return 0;
}

#define FR(k, kind, m, ...) JT_F(k, kind, struct frag_log, m, __VA_ARGS__)
#define UNDONE JT_IF, .cond = offsetof(struct frag_log, have_undone)
#define LATER (JT_OPT | JT_NULLSKIP)	/* added later: absent or null leaves the field as it is */
static const struct jt_field frag_fields[] = {
	{ FR("host_thp", JT_STR, host_thp, 0) },
	{ FR("host_prefault", JT_STR, prefault, 0) },
	{ FR("round", JT_INT, round, 0) },
	{ FR("bytes", JT_INT, bytes, 0) },
	{ FR("huge_kb", JT_INT, huge_kb, 0) },
	{ FR("held_kb", JT_INT, held_kb, 0) },
	{ FR("seconds", JT_DOUBLE, seconds, 0) },
	{ FR("stopped", JT_STR, stopped, JT_OPT | JT_NULL | JT_WNULL) },
	{ FR("free_2m_kb_before", JT_INT, free2m_before_kb, 0) },
	{ FR("free_2m_kb_after", JT_INT, free2m_after_kb, 0) },
	{ FR("free_2m_kb_undone", JT_INT, free2m_undone_kb, LATER | UNDONE) },
	{ FR("unusable_2m_pct_before", JT_DOUBLE, buddy_before, JT_OPT | JT_DERIVED, .write = w_unusable) },
	{ FR("unusable_2m_pct_after", JT_DOUBLE, buddy_after, JT_OPT | JT_DERIVED, .write = w_unusable) },
	{ FR("unusable_2m_pct_undone", JT_DOUBLE, buddy_undone, JT_OPT | JT_DERIVED | UNDONE, .write = w_unusable) },
	{ FR("mem_available_kb_before", JT_INT, avail_before_kb, LATER) },
	{ FR("mem_available_kb_undone", JT_INT, avail_undone_kb, LATER | UNDONE) },
	{ FR("buddyinfo_before", JT_CUSTOM, buddy_before, LATER, .write = w_buddy, .load = l_buddy) },
	{ FR("buddyinfo_after", JT_CUSTOM, buddy_after, LATER, .write = w_buddy, .load = l_buddy) },
	{ FR("buddyinfo_undone", JT_CUSTOM, buddy_undone, LATER | UNDONE, .write = w_buddy, .load = l_buddy) },
	{ FR("restored", JT_BOOL, restored, 0) },
	{ FR("compact_memory_needed", JT_BOOL, compacted, 0) },
	{ FR("pcp_low_fragmenting", JT_BOOL, pcp_low, LATER) },
	{ FR("pcp_drained", JT_BOOL, pcp_drained, LATER) },
	{ FR("compact_migrate_scanned_undo", JT_INT, compact_scanned, LATER) },
	{ FR("compaction_proactiveness_before", JT_CUSTOM, proactiveness, LATER, .write = w_proactive,
	  .load = l_proactive) },
	{ FR("compact_migrate_scanned_fragmenting", JT_INT, frag_compact_scanned, LATER) },
	{ FR("compact_stall", JT_INT, compact_stall, 0) },
	{ FR("compact_success", JT_INT, compact_success, 0) },
	{ FR("compact_fail", JT_INT, compact_fail, 0) },
	{ FR("thp_fault_alloc", JT_INT, thp_fault_alloc, 0) },
	{ FR("thp_fault_fallback", JT_INT, thp_fault_fallback, 0) },
	{ FR("compact_migrate_scanned", JT_INT, compact_scanned_guests, LATER) },
	{ FR("pgmigrate_success", JT_INT, pgmigrate_success, LATER) },
	{ FR("pgsteal_direct", JT_INT, pgsteal_direct, LATER) },
	{ FR("error", JT_STR, error, JT_NULL | JT_WNULL) },
};

static void frag_init(void *elem)
{
	((struct frag_log *)elem)->seconds = NAN;
}

static int frag_put(const struct jt_ctx *c, void *parent, void *elem, const char *at)
{
	struct frag_log *f = results_frag_add(parent, c->e);

	(void)at;
	if (!f)
		return -ENOMEM;
	*f = *(struct frag_log *)elem;
	return 0;
}

const struct jt_table frag_jt = { sizeof(struct frag_log), frag_init, frag_put,
					 sizeof(frag_fields) / sizeof(frag_fields[0]), frag_fields };

/* ---- recovery arm ----------------------------------------------------------------------- */

#define CP(k, kind, m, ...) JT_F(k, kind, struct cov_point, m, __VA_ARGS__)
static const struct jt_field cov_point_fields[] = {
	{ CP("t_s", JT_DOUBLE, t_s, 0) },
	{ CP("huge_pct", JT_DOUBLE, huge_pct, JT_RANGE, .lo = 0, .hi = 100) },
};
static const struct jt_table cov_point_jt = JT_TABLE(struct cov_point, cov_point_fields);

/* collapse-khugepaged: khugepaged's settings over the interval, its counters' and CPU time's deltas */
#define KH(k, kind, m, ...) JT_F(k, kind, struct khp_log, m, __VA_ARGS__)
static const struct jt_field khp_fields[] = {
	{ KH("knobs_set_by_run", JT_BOOL, knobs_set, 0) },
	{ KH("pages_to_scan", JT_INT, pages_to_scan, 0) },
	{ KH("scan_sleep_millisecs", JT_INT, scan_sleep_ms, 0) },
	{ KH("alloc_sleep_millisecs", JT_INT, alloc_sleep_ms, 0) },
	{ KH("defrag", JT_INT, defrag, 0) },
	{ KH("max_ptes_none", JT_INT, max_ptes_none, 0) },
	{ KH("max_ptes_swap", JT_INT, max_ptes_swap, 0) },
	{ KH("max_ptes_shared", JT_INT, max_ptes_shared, 0) },
	{ KH("full_scans", JT_INT, full_scans, 0) },
	{ KH("pages_collapsed", JT_INT, pages_collapsed, 0) },
	{ KH("pid", JT_INT, pid, 0) },
	{ KH("cpu_s", JT_DOUBLE, cpu_s, 0) },
};
static const struct jt_table khp_jt = JT_TABLE(struct khp_log, khp_fields);

/* collapse-khugepaged: the guest's fresh-buffer touch that puts QEMU on khugepaged's list */
#define KR(k, kind, m, ...) JT_F(k, kind, struct khp_reg, m, __VA_ARGS__)
static const struct jt_field khp_reg_fields[] = {
	{ KR("method", JT_STR, method, 0) },
	{ KR("sent_s", JT_DOUBLE, sent_s, 0) },
	{ KR("done_s", JT_DOUBLE, done_s, 0) },
	{ KR("touch_s", JT_DOUBLE, touch_s, 0) },
	{ KR("bytes", JT_INT, bytes, 0) },
	{ KR("huge_pct_after_touch", JT_DOUBLE, huge_pct_after_touch, 0) },
};
static const struct jt_table khp_reg_jt = JT_TABLE(struct khp_reg, khp_reg_fields);

/* both collapse arms: the guest's access passes, before, through and after the interval */
#define AP(k, kind, m, ...) JT_F(k, kind, struct access_point, m, __VA_ARGS__)
static const struct jt_field access_point_fields[] = {
	{ AP("t_s", JT_DOUBLE, t_s, 0) },
	{ AP("access_ns", JT_DOUBLE, access_ns, 0) },
};
static const struct jt_table access_point_jt = JT_TABLE(struct access_point, access_point_fields);

#define PR(k, kind, m, ...) JT_F(k, kind, struct probe_log, m, __VA_ARGS__)
static const struct jt_field probe_fields[] = {
	{ PR("guest_thp", JT_STR, guest_thp, 0) },
	{ PR("period_s", JT_DOUBLE, period_s, 0) },
	{ PR("buffer_mib", JT_INT, buffer_mib, 0) },
	{ PR("accesses", JT_INT, accesses, 0) },
	{ PR("access_ns_before", JT_DOUBLE, before_ns, 0) },
	{ PR("access_ns_during", JT_DOUBLE, during_ns, 0) },
	{ PR("access_ns_after", JT_DOUBLE, after_ns, 0) },
	{ PR("passes_before", JT_INT, n_before, 0) },
	{ PR("passes_during", JT_INT, n_during, 0) },
	{ PR("passes_after", JT_INT, n_after, 0) },
	{ PR("series", JT_ARR, series, JT_INLINE, .count = offsetof(struct probe_log, n), .cap = RES_ACCESS_MAX,
	     .sub = &access_point_jt) },
};
static const struct jt_table probe_jt = JT_TABLE(struct probe_log, probe_fields);

static void collapse_init(void *elem)
{
	struct collapse_log *c = elem;

	c->cov_before_pct = c->cov_after_pct = c->call_s = c->t50_s = c->t90_s = NAN;
	c->resident_huge_pct_after = NAN;
	c->interval_s = c->khp.cpu_s = NAN;
	c->probe.before_ns = c->probe.during_ns = c->probe.after_ns = c->probe.period_s = NAN;
	c->reg.sent_s = c->reg.done_s = c->reg.touch_s = c->reg.huge_pct_after_touch = NAN;
}

static int collapse_put(const struct jt_ctx *c, void *parent, void *elem, const char *at)
{
	struct collapse_log *cl = results_collapse_add(parent, c->e);

	(void)at;
	if (!cl)
		return -ENOMEM;
	*cl = *(struct collapse_log *)elem;
	return 0;
}

#define CO(k, kind, m, ...) JT_F(k, kind, struct collapse_log, m, __VA_ARGS__)
static const struct jt_field collapse_fields[] = {
	{ CO("host_thp", JT_STR, host_thp, 0) },
	{ CO("host_prefault", JT_STR, prefault, 0) },
	{ CO("method", JT_STR, method, 0) },
	{ CO("round", JT_INT, round, 0) },
	{ CO("boot", JT_INT, boot, 0) },
	{ CO("mapping_kb", JT_INT, mapping_kb, 0) },
	{ CO("ranges", JT_INT, ranges, 0) },
	{ CO("huge_pct_before", JT_DOUBLE, cov_before_pct, 0) },
	{ CO("huge_pct_after", JT_DOUBLE, cov_after_pct, 0) },
	{ CO("resident_kb_after", JT_INT, resident_kb_after, 0) },
	{ CO("resident_huge_pct_after", JT_DOUBLE, resident_huge_pct_after, 0) },
	{ CO("collapse_call_s", JT_DOUBLE, call_s, 0) },
	{ CO("collapse_result", JT_STR, call_result, JT_NULL | JT_WNULL) },
	{ CO("blocks_2m", JT_INT, blocks, 0) },
	{ CO("blocks_collapsed", JT_INT, collapsed, 0) },
	{ CO("blocks_refused", JT_INT, refused, 0) },
	{ CO("blocks_busy", JT_INT, busy, 0) },
	{ CO("blocks_nomem", JT_INT, nomem, 0) },
	{ CO("time_to_50pct_s", JT_DOUBLE, t50_s, 0) },
	{ CO("time_to_90pct_s", JT_DOUBLE, t90_s, 0) },
	{ CO("series", JT_ARR, series, JT_INLINE, .count = offsetof(struct collapse_log, n),
	     .cap = RES_COVSERIES_MAX, .sub = &cov_point_jt) },
	{ CO("error", JT_STR, error, JT_NULL | JT_WNULL) },
	{ CO("stopped_by", JT_STR, stopped, JT_OPT | JT_NULL | JT_WNULL) },
	{ CO("interval_s", JT_DOUBLE, interval_s, JT_OPT) },
	{ CO("khugepaged", JT_OBJ, khp, JT_OPT | JT_IF | JT_NULL, .cond = offsetof(struct collapse_log, has_khp),
	     .sub = &khp_jt) },
	{ CO("khugepaged_registration", JT_OBJ, reg, JT_OPT | JT_IF | JT_NULL,
	     .cond = offsetof(struct collapse_log, has_reg), .sub = &khp_reg_jt) },
	{ CO("access", JT_OBJ, probe, JT_OPT | JT_IF | JT_NULL, .cond = offsetof(struct collapse_log, has_probe),
	     .sub = &probe_jt) },
};

const struct jt_table collapse_jt = { sizeof(struct collapse_log), collapse_init, collapse_put,
					     sizeof(collapse_fields) / sizeof(collapse_fields[0]), collapse_fields };

/* ---- KSM arm ----------------------------------------------------------------------------- */

#define KP(k, kind, m, ...) JT_F(k, kind, struct ksm_point, m, __VA_ARGS__)
static const struct jt_field ksm_point_fields[] = {
	{ KP("t_s", JT_DOUBLE, t_s, 0) },
	{ KP("pages_shared", JT_INT, pages_shared, 0) },
	{ KP("pages_sharing", JT_INT, pages_sharing, 0) },
	{ KP("full_scans", JT_INT, full_scans, 0) },
};
static const struct jt_table ksm_point_jt = JT_TABLE(struct ksm_point, ksm_point_fields);

#define KC(k, kind, m, ...) JT_F(k, kind, struct ksm_cov_point, m, __VA_ARGS__)
static const struct jt_field ksm_cov_fields[] = {
	{ KC("t_s", JT_DOUBLE, t_s, 0) },
	{ KC("guest", JT_INT, guest, JT_RANGE, .lo = 0, .hi = RUN_GUESTS_MAX - 1) },
	{ KC("huge_pct", JT_DOUBLE, huge_pct, JT_RANGE, .lo = 0, .hi = 100) },
};
static const struct jt_table ksm_cov_jt = JT_TABLE(struct ksm_cov_point, ksm_cov_fields);

static void ksm_init(void *elem)
{
	struct ksm_log *k = elem;

	k->t_sharing_s = k->waited_s = k->access_before_ns = k->access_after_ns = NAN;
}

static int ksm_put(const struct jt_ctx *c, void *parent, void *elem, const char *at)
{
	struct ksm_log *k = results_ksm_add(parent, c->e);

	(void)at;
	if (!k)
		return -ENOMEM;
	*k = *(struct ksm_log *)elem;
	return 0;
}

#define KL(k, kind, m, ...) JT_F(k, kind, struct ksm_log, m, __VA_ARGS__)
static const struct jt_field ksm_fields[] = {
	{ KL("ksm", JT_STR, ksm, 0) },
	{ KL("host_thp", JT_STR, host_thp, 0) },
	{ KL("host_prefault", JT_STR, prefault, 0) },
	{ KL("round", JT_INT, round, 0) },
	{ KL("guests", JT_INT, guests, JT_RANGE, .lo = RUN_GUESTS_MIN, .hi = RUN_GUESTS_MAX) },
	{ KL("first_boot", JT_INT, first_boot, 0) },
	{ KL("pages_to_scan", JT_INT, pages_to_scan, 0) },
	{ KL("sleep_millisecs", JT_INT, sleep_millisecs, 0) },
	{ KL("thp_split_pmd", JT_INT, thp_split_pmd, 0) },
	{ KL("pages_shared_max", JT_INT, pages_shared_max, 0) },
	{ KL("pages_sharing_max", JT_INT, pages_sharing_max, 0) },
	{ KL("full_scans", JT_INT, full_scans, 0) },
	{ KL("time_to_sharing_s", JT_DOUBLE, t_sharing_s, 0) },
	{ KL("waited_s", JT_DOUBLE, waited_s, 0) },
	{ KL("access_ns_before_merge", JT_DOUBLE, access_before_ns, 0) },
	{ KL("access_ns_after_merge", JT_DOUBLE, access_after_ns, 0) },
	{ KL("reps_before_merge", JT_INT, n_before, 0) },
	{ KL("reps_after_merge", JT_INT, n_after, 0) },
	{ KL("series", JT_ARR, series, JT_INLINE, .count = offsetof(struct ksm_log, n),
	     .cap = RES_KSM_SERIES_MAX, .sub = &ksm_point_jt) },
	{ KL("coverage", JT_ARR, cov, JT_INLINE, .count = offsetof(struct ksm_log, ncov),
	     .cap = RES_KSM_COV_MAX, .sub = &ksm_cov_jt) },
	{ KL("error", JT_STR, error, JT_NULL | JT_WNULL) },
};

const struct jt_table ksm_jt = { sizeof(struct ksm_log), ksm_init, ksm_put,
					sizeof(ksm_fields) / sizeof(ksm_fields[0]), ksm_fields };
/* ---- migration arms ---------------------------------------------------------------------- */

#define MP(k, kind, m, ...) JT_F(k, kind, struct mig_pass, m, __VA_ARGS__)
static const struct jt_field mig_pass_fields[] = {
	{ MP("t_s", JT_DOUBLE, t_s, 0) },
	{ MP("write_ns_per_4k", JT_DOUBLE, write_ns_per_4k, 0) },
	{ MP("access_ns", JT_DOUBLE, access_ns, 0) },
};
static const struct jt_table mig_pass_jt = JT_TABLE(struct mig_pass, mig_pass_fields);

static void migration_init(void *elem)
{
	struct migration_log *m = elem;

	m->src_cov_pct = m->dst_cov_first_pct = m->dst_cov_last_pct = m->t90_s = m->migrate_s = NAN;
	m->total_ms = m->downtime_ms = m->setup_ms = m->settled_s = NAN;
	m->access_before_ns = m->access_after_ns = m->access_settled_ns = NAN;
	m->write_before_ns = m->write_after_ns = m->write_settled_ns = NAN;
}

static int migration_put(const struct jt_ctx *c, void *parent, void *elem, const char *at)
{
	struct migration_log *m = results_migration_add(parent, c->e);

	(void)at;
	if (!m)
		return -ENOMEM;
	*m = *(struct migration_log *)elem;
	return 0;
}

#define MG(k, kind, m, ...) JT_F(k, kind, struct migration_log, m, __VA_ARGS__)
static const struct jt_field migration_fields[] = {
	{ MG("arm", JT_STR, arm, 0) },
	{ MG("host_thp", JT_STR, host_thp, 0) },
	{ MG("round", JT_INT, round, 0) },
	{ MG("boot", JT_INT, boot, 0) },
	{ MG("source_huge_pct_before", JT_DOUBLE, src_cov_pct, 0) },
	{ MG("dest_huge_pct_first", JT_DOUBLE, dst_cov_first_pct, 0) },
	{ MG("dest_huge_pct_last", JT_DOUBLE, dst_cov_last_pct, 0) },
	{ MG("dest_time_to_90pct_s", JT_DOUBLE, t90_s, 0) },
	{ MG("dest_never_90pct_why", JT_STR, t90_why, JT_NULL | JT_WNULL) },
	{ MG("dest_settled_s", JT_DOUBLE, settled_s, 0) },
	{ MG("migrate_call_s", JT_DOUBLE, migrate_s, 0) },
	{ MG("postcopy_switched", JT_BOOL, postcopy_switched, JT_OPT) },
	{ MG("job_stats", JT_BOOL, have_stats, 0) },
	{ MG("job_total_ms", JT_DOUBLE, total_ms, 0) },
	{ MG("job_downtime_ms", JT_DOUBLE, downtime_ms, 0) },
	{ MG("job_setup_ms", JT_DOUBLE, setup_ms, 0) },
	{ MG("job_data_bytes", JT_INT, data_bytes, 0) },
	{ MG("job_memory_bytes", JT_INT, memory_bytes, 0) },
	{ MG("job_memory_total_bytes", JT_INT, memory_total_bytes, 0) },
	{ MG("job_bandwidth_bytes_s", JT_INT, bandwidth_bps, 0) },
	{ MG("job_dirty_rate_pages_s", JT_INT, dirty_rate_pps, 0) },
	{ MG("job_postcopy_requests", JT_INT, postcopy_requests, 0) },
	{ MG("job_iterations", JT_INT, iterations, 0) },
	{ MG("access_before_ns", JT_DOUBLE, access_before_ns, 0) },
	{ MG("access_after_ns", JT_DOUBLE, access_after_ns, 0) },
	{ MG("access_settled_ns", JT_DOUBLE, access_settled_ns, 0) },
	{ MG("write_before_ns_per_4k", JT_DOUBLE, write_before_ns, 0) },
	{ MG("write_after_ns_per_4k", JT_DOUBLE, write_after_ns, 0) },
	{ MG("write_settled_ns_per_4k", JT_DOUBLE, write_settled_ns, 0) },
	{ MG("dest_series", JT_ARR, series, JT_INLINE, .count = offsetof(struct migration_log, n),
	     .cap = RES_COVSERIES_MAX, .sub = &cov_point_jt) },
	{ MG("passes", JT_ARR, pass, JT_INLINE, .count = offsetof(struct migration_log, npass),
	     .cap = RES_MIGPASS_MAX, .sub = &mig_pass_jt) },
	{ MG("error", JT_STR, error, JT_NULL | JT_WNULL) },
};

const struct jt_table migration_jt = { sizeof(struct migration_log), migration_init, migration_put,
				       sizeof(migration_fields) / sizeof(migration_fields[0]), migration_fields };

static void migsum_init(void *elem)
{
	struct mig_summary *m = elem;

	m->mean = m->ci_lo = m->ci_hi = m->effect_pct = m->effect_lo_pct = m->effect_hi_pct = NAN;
}

static int migsum_put(const struct jt_ctx *c, void *parent, void *elem, const char *at)
{
	struct mig_summary *m = results_migsum_add(parent, c->e);

	(void)at;
	if (!m)
		return -ENOMEM;
	*m = *(struct mig_summary *)elem;
	return 0;
}

#define MS(k, kind, m, ...) JT_F(k, kind, struct mig_summary, m, __VA_ARGS__)
static const struct jt_field migsum_fields[] = {
	{ MS("arm", JT_STR, arm, 0) },
	{ MS("host_thp", JT_STR, host_thp, 0) },
	{ MS("metric", JT_STR, metric, 0) },
	{ MS("phase", JT_STR, phase, 0) },
	{ MS("boots", JT_INT, boots, 0) },
	{ MS("mean", JT_DOUBLE, mean, 0) },
	{ MS("ci95_lo", JT_DOUBLE, ci_lo, 0) },
	{ MS("ci95_hi", JT_DOUBLE, ci_hi, 0) },
	{ MS("effect_vs_none_pct", JT_DOUBLE, effect_pct, 0) },
	{ MS("effect_ci95_lo_pct", JT_DOUBLE, effect_lo_pct, 0) },
	{ MS("effect_ci95_hi_pct", JT_DOUBLE, effect_hi_pct, 0) },
};

const struct jt_table migsum_jt = { sizeof(struct mig_summary), migsum_init, migsum_put,
				    sizeof(migsum_fields) / sizeof(migsum_fields[0]), migsum_fields };
