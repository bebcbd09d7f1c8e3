#include "orchestrator/model/results_json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/procfs.h"
#include "lib/fstree.h"
#include "lib/record.h"
#include "lib/wltraits.h"

/*
 * The tables below are results.json: each line one key, in the order it is
 * written. A key added after schema 1 was first written is JT_OPT (older
 * files lack it); JT_WNULL, JT_WDEF, JT_IF and JT_IFSET say when a value is
 * written as null, as its default, or not at all.
 */

/* ---- metric: {"samples":[...],"boot":[...],"n":N,"mean":...} ------------------------- */

static json_object *w_samples(const void *base, const struct jt_field *f)
{
	const struct metric *m = base;
	json_object *a = json_object_new_array();
	size_t i;

	(void)f;
	for (i = 0; i < metric_nall(m); i++)
		json_object_array_add(a, jt_num(m->samples[i]));
	return a;
}

static int l_samples(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	struct metric *m = base;
	char here[JT_PATH_MAX];
	size_t len;

	(void)f;
	if (!json_object_is_type(v, json_type_array))
		return jt_bad_type(c, at, "an array", v);
	len = json_object_array_length(v);
	if (len > RES_MAX_SAMPLES)
		return err_set(c->e, -E2BIG, "'%s': '%s' has %zu samples, more than %d", c->name, at, len,
			       RES_MAX_SAMPLES);
	for (m->n = 0; m->n < len; m->n++) {
		snprintf(here, sizeof(here), "%s[%zu]", at, m->n);
		if (jt_get_num(c, json_object_array_get_idx(v, m->n), here, false, &m->samples[m->n]))
			return -EINVAL;
		m->boot[m->n] = 0;	/* files before boot ids: one boot */
	}
	m->nall = m->n;
	return 0;
}

/* the boot id of each sample, as many as samples */
static json_object *w_boots(const void *base, const struct jt_field *f)
{
	const struct metric *m = base;
	json_object *a = json_object_new_array();
	size_t i;

	(void)f;
	for (i = 0; i < metric_nall(m); i++)
		json_object_array_add(a, json_object_new_int(m->boot[i]));
	return a;
}

static int l_boots(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	struct metric *m = base;
	size_t i;

	(void)f;
	if (!json_object_is_type(v, json_type_array) || json_object_array_length(v) != m->n)
		return err_set(c->e, -EINVAL, "'%s': '%s' must be an array of %zu boot ids, one per sample",
			       c->name, at, m->n);
	for (i = 0; i < m->n; i++) {
		json_object *x = json_object_array_get_idx(v, i);
		int64_t id;

		errno = 0;
		id = json_object_is_type(x, json_type_int) ? json_object_get_int64(x) : -1;
		if (errno || id < 0 || id > UINT16_MAX)
			return err_set(c->e, -EINVAL, "'%s': '%s[%zu]' is not a boot id (0 to %d)", c->name, at, i,
				       UINT16_MAX);
		m->boot[i] = (uint16_t)id;
	}
	return 0;
}

/* the number of samples, as the summary counted them */
static json_object *w_n(const void *base, const struct jt_field *f)
{
	(void)f;
	return json_object_new_int64((int64_t)metric_nall(base));
}

/* the samples of boots the cell left out (they follow the others in samples) */
static json_object *w_left_out_n(const void *base, const struct jt_field *f)
{
	const struct metric *m = base;

	(void)f;
	return json_object_new_int64((int64_t)(metric_nall(m) - m->n));
}

static int l_n(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	const struct metric *m = base;
	int64_t n;

	(void)f;
	if (jt_get_int(c, v, at, 0, RES_MAX_SAMPLES, &n))
		return -EINVAL;
	if ((size_t)n != m->n)
		return err_set(c->e, -EINVAL, "'%s': '%s' is %lld but there are %zu samples", c->name, at,
			       (long long)n, m->n);
	return 0;
}

/* what the interval is over: boots or repetitions */
static json_object *w_ci_over(const void *base, const struct jt_field *f)
{
	const struct metric *m = base;

	(void)f;
	return isfinite(m->s.ci95_high) ? jt_str(m->s.ci_blocks ? "boots" : "repetitions") : NULL;
}

/* which mean "mean" and its interval are: geometric over boot means, or arithmetic */
static json_object *w_mean_kind(const void *base, const struct jt_field *f)
{
	const struct metric *m = base;

	(void)f;
	return m->s.n ? jt_str(m->s.geo ? "geometric" : "arithmetic") : NULL;
}

#define MT(k, kind, m, ...) JT_F(k, kind, struct metric, m, __VA_ARGS__)
static const struct jt_field metric_fields[] = {
	{ MT("samples", JT_CUSTOM, samples, 0, .write = w_samples, .load = l_samples) },
	{ MT("boot", JT_CUSTOM, boot, JT_OPT, .write = w_boots, .load = l_boots) },
	{ MT("n", JT_CUSTOM, s.n, JT_DERIVED, .write = w_n, .load = l_n) },
	{ MT("n_left_out", JT_INT, s.n, JT_OPT | JT_DERIVED, .write = w_left_out_n) },
	{ MT("mean", JT_DOUBLE, s.mean, JT_DERIVED) },
	{ .key = "mean_kind", .kind = JT_STR, .size = 16, .flags = JT_OPT | JT_NULL | JT_DERIVED, .write = w_mean_kind },
	{ MT("arith_mean", JT_DOUBLE, s.arith_mean, JT_OPT | JT_DERIVED) },
	{ MT("sd", JT_DOUBLE, s.sd, JT_DERIVED) },
	{ MT("cv_pct", JT_DOUBLE, s.cv_pct, JT_DERIVED) },
	{ MT("ci95_low", JT_DOUBLE, s.ci95_low, JT_DERIVED) },
	{ MT("ci95_high", JT_DOUBLE, s.ci95_high, JT_DERIVED) },
	{ .key = "ci_over", .kind = JT_STR, .size = 16, .flags = JT_OPT | JT_NULL | JT_DERIVED, .write = w_ci_over },
	{ MT("ci_n", JT_INT, s.ci_n, JT_OPT | JT_DERIVED) },
};
static const struct jt_table metric_jt = JT_TABLE(struct metric, metric_fields);

/* ---- cell ---------------------------------------------------------------------------- */

/* {"NAME": metric, ...} in the order the metrics were added */
static json_object *w_metrics(const void *base, const struct jt_field *f)
{
	const struct cell *c = base;
	json_object *o = json_object_new_object();
	size_t i;

	(void)f;
	for (i = 0; i < c->nmetrics; i++)
		json_object_object_add(o, c->metrics[i].name, jt_write(&metric_jt, &c->metrics[i]));
	return o;
}

static int l_metrics(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	struct cell *cell = base;
	char k[JT_PATH_MAX];

	(void)f;
	if (!json_object_is_type(v, json_type_object))
		return jt_bad_type(c, at, "an object", v);
	json_object_object_foreach(v, name, mo) {
		struct metric *m;

		jt_path(k, sizeof(k), at, name);
		if (strlen(name) == 0 || strlen(name) >= REC_KEY_MAX)
			return err_set(c->e, -EINVAL, "'%s': metric name '%s' is empty or too long", c->name, k);
		m = cell_metric(cell, name, c->e);
		if (!m)
			return err_wrap(c->e, "'%s'", c->name);
		if (!json_object_is_type(mo, json_type_object))
			return err_set(c->e, -EINVAL, "'%s': '%s' must be an object, not %s", c->name, k, jt_type(mo));
		if (jt_load(c, &metric_jt, mo, k, m))
			return -EINVAL;
	}
	return 0;
}

/* what decided validity: the workload's coverage field (or effect field) and its rule */
static json_object *w_evidence(const void *base, const struct jt_field *f)
{
	const struct wl_rule *rule = cell_rule(base);

	(void)f;
	return rule->cov_field ? jt_str(rule->cov_field) : rule->effect_field ? jt_str(rule->effect_field) : NULL;
}

static json_object *w_rule(const void *base, const struct jt_field *f)
{
	(void)f;
	return jt_str(wl_want_name(cell_rule(base)->want));
}

static json_object *w_failures(const void *base, const struct jt_field *f)
{
	const struct cell *c = base;
	json_object *a = json_object_new_array();
	size_t i;

	(void)f;
	for (i = 0; i < c->nfailures; i++)
		json_object_array_add(a, jt_str(c->failures[i]));
	return a;
}

static int l_failures(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	struct cell *cell = base;
	char here[JT_PATH_MAX];
	size_t i, n;

	(void)f;
	if (!json_object_is_type(v, json_type_array))
		return jt_bad_type(c, at, "an array", v);
	n = json_object_array_length(v);
	if (n > RES_MAX_FAILURES)
		return err_set(c->e, -E2BIG, "'%s': '%s' has more than %d entries", c->name, at, RES_MAX_FAILURES);
	for (i = 0; i < n; i++) {
		snprintf(here, sizeof(here), "%s[%zu]", at, i);
		if (jt_get_str(c, json_object_array_get_idx(v, i), here, false, cell->failures[i],
			       sizeof(cell->failures[i])))
			return -EINVAL;
	}
	cell->nfailures = n;
	return 0;
}

#define LO(k, kind, m, ...) JT_F(k, kind, struct left_out, m, __VA_ARGS__)
static const struct jt_field left_out_fields[] = {
	{ LO("boot", JT_INT, boot, 0) },
	{ LO("reason", JT_STR, reason, 0) },
};
static const struct jt_table left_out_jt = JT_TABLE(struct left_out, left_out_fields);

/* {"METRIC": [geometric mean over boots of repetition 1, 2, ...], ...} for the primary metrics */
static json_object *w_positions(const void *base, const struct jt_field *f)
{
	const struct cell *c = base;
	json_object *o = json_object_new_object();
	double g[RES_MAX_SAMPLES];
	size_t i, k, n;

	(void)f;
	for (i = 0; i < c->nmetrics; i++) {
		json_object *a;

		if (!wltraits_primary(c->workload, c->metrics[i].name) || !c->metrics[i].n)
			continue;
		n = metric_position_geomeans(&c->metrics[i], g, RES_MAX_SAMPLES);
		a = json_object_new_array();
		for (k = 0; k < n; k++)
			json_object_array_add(a, jt_num(g[k]));
		json_object_object_add(o, c->metrics[i].name, a);
	}
	return o;
}

/* derived from the samples: read and not kept */
static int l_positions(const struct jt_ctx *c, json_object *v, const char *at, void *base,
		       const struct jt_field *f)
{
	(void)base;
	(void)f;
	if (v && !json_object_is_type(v, json_type_object))
		return jt_bad_type(c, at, "an object", v);
	return 0;
}

#define CL(k, kind, m, ...) JT_F(k, kind, struct cell, m, __VA_ARGS__)
/* coverage: the means and validity rule are derived, the samples kept */
static const struct jt_field coverage_fields[] = {
	{ CL("host_huge_pct", JT_DOUBLE, host_cov.s.mean, JT_DERIVED) },
	{ CL("guest_huge_pct", JT_DOUBLE, guest_cov.s.mean, JT_DERIVED) },
	{ CL("host_huge_pct_samples", JT_OBJ, host_cov, 0, .sub = &metric_jt) },
	{ CL("guest_huge_pct_samples", JT_OBJ, guest_cov, 0, .sub = &metric_jt) },
	{ CL("host_source", JT_STR, host_cov_source, JT_OPT | JT_NULL | JT_WDEF, .def = "smaps") },
	{ .key = "evidence", .kind = JT_STR, .size = REC_KEY_MAX, .flags = JT_OPT | JT_NULL | JT_DERIVED,
	  .write = w_evidence },
	{ .key = "rule", .kind = JT_STR, .size = REC_KEY_MAX, .flags = JT_OPT | JT_NULL | JT_DERIVED, .write = w_rule },
};
static const struct jt_table coverage_jt = JT_TABLE(struct cell, coverage_fields);

static const struct jt_field cell_fields[] = {
	{ CL("target", JT_STR, target, 0) },
	{ CL("host_thp", JT_STR, host_thp, 0) },
	{ CL("host_prefault", JT_STR, prefault, JT_OPT | JT_NULL, .def = "ondemand") },
	{ CL("guest_thp", JT_STR, guest_thp, 0) },
	{ CL("workload", JT_STR, workload, 0) },
	{ CL("variant", JT_STR, variant, JT_OPT | JT_NULL | JT_WNULL) },
	{ CL("guest", JT_STR, guest, 0) },
	{ CL("host_state", JT_STR, host_state, JT_OPT | JT_NULL | JT_WDEF, .def = "fresh") },
	{ CL("metrics", JT_CUSTOM, metrics, 0, .sub = &metric_jt, .write = w_metrics, .load = l_metrics) },
	{ .key = "coverage", .kind = JT_OBJ, .size = sizeof(struct cell), .sub = &coverage_jt },
	{ CL("position_geomeans", JT_CUSTOM, metrics, JT_OPT | JT_DERIVED, .write = w_positions, .load = l_positions) },
	{ CL("reps_ok", JT_INT, reps_ok, 0) },
	{ CL("reps_failed", JT_INT, reps_failed, 0) },
	{ CL("warmups", JT_INT, warmups, 0) },
	{ CL("failures", JT_CUSTOM, failures, 0, .write = w_failures, .load = l_failures) },
	{ CL("valid", JT_BOOL, valid, 0) },
	{ CL("invalid_reason", JT_STR, invalid_reason, JT_NULL | JT_UNLESS, .cond = offsetof(struct cell, valid)) },
	{ CL("boots_run", JT_INT, boots_run, JT_OPT) },
	{ CL("left_out", JT_ARR, left, JT_OPT | JT_INLINE, .count = offsetof(struct cell, nleft),
	     .cap = RES_MAX_LEFT_OUT, .sub = &left_out_jt) },
	{ CL("treatment_note", JT_STR, treatment_note, JT_OPT | JT_NULL | JT_WNULL) },
};

/*
 * every sample of a loaded cell in the range its metric's name gives it
 * (rec_value_check: coverage 0-100, times 0 and up): a file is as untrusted
 * as a guest's records, and a negative sample would take a metric out of
 * the gate
 */
static int cell_check_values(const struct jt_ctx *c, const struct cell *s, const char *at)
{
	char why[160];
	size_t i, k;

	for (i = 0; i < s->nmetrics + 2; i++) {
		bool cov = i >= s->nmetrics;
		const struct metric *m = !cov ? &s->metrics[i] : i == s->nmetrics ? &s->host_cov : &s->guest_cov;
		const char *key = !cov ? m->name : i == s->nmetrics ? "host_huge_pct" : "guest_huge_pct";

		for (k = 0; k < m->n; k++)
			if (rec_value_check(m->name, m->samples[k], why, sizeof(why)))
				return err_set(c->e, -ERANGE, "'%s': '%s.%s.%s%s.samples[%zu]' is out of range: %s",
					       c->name, at, cov ? "coverage" : "metrics", key, cov ? "_samples" : "", k,
					       why);
	}
	return 0;
}

/* a loaded cell into the results: a new key (a repeated one is an error), summarised as results_finish does */
static int cell_put(const struct jt_ctx *c, void *parent, void *elem, const char *at)
{
	struct results *r = parent;
	struct cell *s = elem, *cell;
	struct cell_key k = { s->target, s->host_thp, s->prefault, s->guest_thp, s->workload, s->variant,
			      s->host_state };
	size_t before = r->ncells;

	cell = results_cell_key(r, &k, c->e);
	if (!cell)
		return err_wrap(c->e, "'%s': %s", c->name, at);
	if (r->ncells == before)
		return err_set(c->e, -EINVAL, "'%s': '%s' repeats the cell %s/%s/%s", c->name, at, s->host_thp,
			       s->guest_thp, s->workload);
	memcpy(s->host_cov.name, cell->host_cov.name, sizeof(s->host_cov.name));
	memcpy(s->guest_cov.name, cell->guest_cov.name, sizeof(s->guest_cov.name));
	if (cell_check_values(c, s, at))
		return -ERANGE;
	*cell = *s;
	cell_leave_out(cell);
	cell_summarize(cell);
	return 0;
}

static const struct jt_table cell_jt = { sizeof(struct cell), NULL, cell_put,
					 sizeof(cell_fields) / sizeof(cell_fields[0]), cell_fields };

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

static const struct jt_table guest_jt = { sizeof(struct guest_log), guest_init, guest_put,
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

static const struct jt_table frag_jt = { sizeof(struct frag_log), frag_init, frag_put,
					 sizeof(frag_fields) / sizeof(frag_fields[0]), frag_fields };

/* ---- recovery arm ----------------------------------------------------------------------- */

#define CP(k, kind, m, ...) JT_F(k, kind, struct cov_point, m, __VA_ARGS__)
static const struct jt_field cov_point_fields[] = {
	{ CP("t_s", JT_DOUBLE, t_s, 0) },
	{ CP("huge_pct", JT_DOUBLE, huge_pct, JT_RANGE, .lo = 0, .hi = 100) },
};
static const struct jt_table cov_point_jt = JT_TABLE(struct cov_point, cov_point_fields);

static void collapse_init(void *elem)
{
	struct collapse_log *c = elem;

	c->cov_before_pct = c->cov_after_pct = c->call_s = c->t50_s = c->t90_s = NAN;
	c->resident_huge_pct_after = NAN;
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
};

static const struct jt_table collapse_jt = { sizeof(struct collapse_log), collapse_init, collapse_put,
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

static const struct jt_table ksm_jt = { sizeof(struct ksm_log), ksm_init, ksm_put,
					sizeof(ksm_fields) / sizeof(ksm_fields[0]), ksm_fields };

/* ---- effects and variance: the analysis', checked on reading and recomputed ---------- */

static json_object *w_significant(const void *base, const struct jt_field *f)
{
	const struct effect *e = base;

	(void)f;
	return json_object_new_boolean(e->available && e->significant);
}

#define EF(k, kind, m, ...) JT_F(k, kind, struct effect, m, __VA_ARGS__)
#define DER (JT_OPT | JT_NULL)		/* derived: each key optional */
static const struct jt_field effect_fields[] = {
	{ EF("workload", JT_STR, workload, DER) },
	{ EF("side", JT_STR, side, DER) },
	{ EF("component", JT_STR, component, DER) },
	{ EF("metric", JT_STR, metric, DER) },
	{ EF("host_thp", JT_STR, host_thp, DER) },
	{ EF("guest_thp", JT_STR, guest_thp, DER) },
	{ EF("host_state", JT_STR, host_state, DER | JT_WDEF, .def = "fresh") },
	{ EF("available", JT_BOOL, available, DER) },
	{ EF("estimate_pct", JT_DOUBLE, estimate_pct, DER) },
	{ EF("ci95_low_pct", JT_DOUBLE, ci95_low_pct, DER) },
	{ EF("ci95_high_pct", JT_DOUBLE, ci95_high_pct, DER) },
	{ EF("significant", JT_BOOL, significant, DER, .write = w_significant) },
	{ EF("share_of_total_pct", JT_DOUBLE, share_pct, DER) },
	{ EF("df", JT_DOUBLE, df, DER) },
	{ EF("method", JT_STR, method, DER) },
	{ EF("at_guest", JT_STR, at_guest, DER | JT_WNULL) },
	{ EF("log_estimate", JT_DOUBLE, log_est, DER) },
	{ EF("log_se", JT_DOUBLE, log_se, DER) },
	{ EF("boots_min", JT_INT, boots_min, DER) },
	{ EF("round_estimator", JT_STR, round_estimator, DER | JT_WNULL) },
	{ EF("round_note", JT_STR, round_note, DER | JT_WNULL) },
	{ EF("rounds", JT_INT, rounds, DER) },
	{ EF("round_corr", JT_DOUBLE, round_corr, DER) },
	{ EF("round_var_log", JT_DOUBLE, round_var, DER) },
	{ EF("log_se_unpaired", JT_DOUBLE, log_se_unpaired, DER) },
	{ EF("df_unpaired", JT_DOUBLE, df_unpaired, DER) },
	{ EF("note", JT_STR, note, DER | JT_WNULL) },
};
static const struct jt_table effect_jt = JT_TABLE(struct effect, effect_fields);

#define EV(k, kind, m, ...) JT_F(k, kind, struct effect_var, m, __VA_ARGS__)
static const struct jt_field variance_fields[] = {
	{ EV("workload", JT_STR, workload, DER) },
	{ EV("cell", JT_STR, label, DER) },
	{ EV("metric", JT_STR, metric, DER) },
	{ EV("boots", JT_INT, vc.boots, DER) },
	{ EV("samples", JT_INT, vc.samples, DER) },
	{ EV("within_boot_cv_pct", JT_DOUBLE, vc.within_cv_pct, DER) },
	{ EV("between_boot_cv_pct", JT_DOUBLE, vc.between_cv_pct, DER) },
};
static const struct jt_table variance_jt = JT_TABLE(struct effect_var, variance_fields);

/* effects (count in f->count of struct effects, elements at f->off) as an array; none: [] */
static json_object *w_effects(const void *base, const struct jt_field *f)
{
	const struct effects *x = ((const struct results *)base)->effects;
	const struct jt_table *t = f->sub;
	json_object *a = json_object_new_array();
	size_t i, n;

	if (!x)
		return a;
	memcpy(&n, (const char *)x + f->count, sizeof(n));
	for (i = 0; i < n; i++)
		json_object_array_add(a, jt_write(t, (const char *)x + f->off + i * t->size));
	return a;
}

/* each element read into scratch for its types, then dropped: the analysis recomputes them */
static int l_effects(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	char here[JT_PATH_MAX];
	size_t i;
	void *scratch;
	int rc = 0;

	(void)base;
	if (!json_object_is_type(v, json_type_array))
		return jt_bad_type(c, at, "an array", v);
	scratch = malloc(f->sub->size);
	if (!scratch)
		return err_set(c->e, -ENOMEM, "out of memory reading '%s'", c->name);
	for (i = 0; i < json_object_array_length(v) && !rc; i++) {
		json_object *x = json_object_array_get_idx(v, i);

		snprintf(here, sizeof(here), "%s[%zu]", at, i);
		if (!json_object_is_type(x, json_type_object))
			rc = err_set(c->e, -EINVAL, "'%s': '%s' must be an object, not %s", c->name, here, jt_type(x));
		else
			rc = jt_load(c, f->sub, x, here, memset(scratch, 0, f->sub->size));
	}
	free(scratch);
	return rc;
}

/* ---- the in-run A/B comparison: the analysis', checked on reading and recomputed ------- */

/* the rows of an abtest as an array */
static json_object *w_ab_rows(const void *base, const struct jt_field *f)
{
	const struct abtest *ab = base;
	json_object *a = json_object_new_array();
	size_t i;

	for (i = 0; i < ab->n; i++)
		json_object_array_add(a, jt_write(f->sub, &ab->rows[i]));
	return a;
}

#define AR(k, kind, m, ...) JT_F(k, kind, struct ab_row, m, __VA_ARGS__)
static const struct jt_field ab_row_fields[] = {
	{ AR("what", JT_STR, what, DER) },
	{ AR("label", JT_STR, label, DER) },
	{ AR("metric", JT_STR, metric, DER) },
	{ AR("a", JT_DOUBLE, a, DER) },
	{ AR("b", JT_DOUBLE, b, DER) },
	{ AR("ratio_b_a", JT_DOUBLE, ratio, DER) },
	{ AR("ci95_low", JT_DOUBLE, ratio_lo, DER) },
	{ AR("ci95_high", JT_DOUBLE, ratio_hi, DER) },
	{ AR("log_ratio", JT_DOUBLE, log_ratio, DER) },
	{ AR("log_se", JT_DOUBLE, log_se, DER) },
	{ AR("df", JT_DOUBLE, df, DER) },
	{ AR("method", JT_STR, method, DER | JT_WNULL) },
	{ AR("pairs", JT_INT, pairs, DER) },
	{ AR("boots_a", JT_INT, boots_a, DER) },
	{ AR("boots_b", JT_INT, boots_b, DER) },
	{ AR("p", JT_DOUBLE, p, DER) },
	{ AR("p_holm", JT_DOUBLE, p_holm, DER) },
	{ AR("tested", JT_BOOL, tested, DER) },
	{ AR("differs", JT_BOOL, differs, DER) },
	{ AR("note", JT_STR, note, DER | JT_WNULL) },
};
static const struct jt_table ab_row_jt = JT_TABLE(struct ab_row, ab_row_fields);

#define AB(k, kind, m, ...) JT_F(k, kind, struct abtest, m, __VA_ARGS__)
static const struct jt_field ab_fields[] = {
	{ AB("axis", JT_STR, axis, DER) },
	{ AB("a", JT_STR, a, DER) },
	{ AB("b", JT_STR, b, DER) },
	{ AB("kinds_tested", JT_INT, kinds_tested, DER) },
	{ AB("kinds_differ", JT_INT, kinds_differ, DER) },
	{ AB("metrics_tested", JT_INT, metrics_tested, DER) },
	{ AB("metrics_differ", JT_INT, metrics_differ, DER) },
	{ AB("effects_tested", JT_INT, effects_tested, DER) },
	{ AB("effects_differ", JT_INT, effects_differ, DER) },
	{ AB("rows", JT_CUSTOM, rows, DER, .count = offsetof(struct abtest, n), .sub = &ab_row_jt,
	     .write = w_ab_rows, .load = l_effects) },
};
static const struct jt_table ab_jt = JT_TABLE(struct abtest, ab_fields);

/* "ab": the comparison as an object; null with one emulator */
static json_object *w_ab(const void *base, const struct jt_field *f)
{
	const struct abtest *ab = ((const struct results *)base)->ab;

	(void)f;
	return ab ? jt_write(&ab_jt, ab) : NULL;
}

/* "ksm_effects": KSM on against off, the same rows; null without both arms */
static json_object *w_ksm_fx(const void *base, const struct jt_field *f)
{
	const struct abtest *fx = ((const struct results *)base)->ksm_fx;

	(void)f;
	return fx ? jt_write(&ab_jt, fx) : NULL;
}

static int l_ab(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	struct abtest *scratch;
	int rc;

	(void)base;
	(void)f;
	if (!v)
		return 0;
	if (!json_object_is_type(v, json_type_object))
		return jt_bad_type(c, at, "an object or null", v);
	scratch = calloc(1, sizeof(*scratch));
	if (!scratch)
		return err_set(c->e, -ENOMEM, "out of memory reading '%s'", c->name);
	rc = jt_load(c, &ab_jt, v, at, scratch);
	free(scratch);
	return rc;
}

/* ---- the document --------------------------------------------------------------------- */

static json_object *w_schema(const void *base, const struct jt_field *f)
{
	(void)base;
	(void)f;
	return json_object_new_int(RESULTS_SCHEMA_VERSION);
}

static int l_schema(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	(void)base;
	(void)f;
	if (!json_object_is_type(v, json_type_int))
		return jt_bad_type(c, at, "an integer", v);
	if (json_object_get_int64(v) != RESULTS_SCHEMA_VERSION)
		return err_set(c->e, -EPROTO, "unknown schema version %lld in '%s': this thpeval reads version %d",
			       (long long)json_object_get_int64(v), c->name, RESULTS_SCHEMA_VERSION);
	return 0;
}

/* host THP settings: {"enabled": "madvise", "khugepaged/defrag": "1", ...} */
static json_object *w_thp(const void *base, const struct jt_field *f)
{
	const struct thp_settings *s = (const void *)((const char *)base + f->off);
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < s->n; i++)
		json_object_object_add(o, s->s[i].key, jt_str(s->s[i].value));
	return o;
}

static int l_thp(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	struct thp_settings *s = (void *)((char *)base + f->off);
	char k[JT_PATH_MAX], val[THP_VAL_MAX];

	if (!json_object_is_type(v, json_type_object))
		return jt_bad_type(c, at, f->flags & JT_NULL ? "an object or null" : "an object", v);
	s->n = 0;
	json_object_object_foreach(v, key, x) {
		jt_path(k, sizeof(k), at, key);
		if (jt_get_str(c, x, k, false, val, sizeof(val)))
			return -EINVAL;
		if (thp_settings_put(s, key, val, c->e))
			return err_wrap(c->e, "'%s': %s", c->name, k);
	}
	return 0;
}

#define RS(k, kind, m, ...) JT_F(k, kind, struct results, m, __VA_ARGS__)
static const struct jt_field host_fields[] = {
	{ RS("name", JT_STR, host.name, JT_OPT) },	/* the host in a history of many; older files: "" */
	{ RS("kernel", JT_STR, host.kernel, 0) },
	{ RS("cpu_model", JT_STR, host.cpu_model, 0) },
	{ RS("cpus", JT_INT, host.cpus, 0) },
	{ RS("mem_total_kb", JT_INT, host.mem_total_kb, 0) },
	/* the host is itself a guest, reporting free memory to its hypervisor: host-cold
	 * first touches may fault there too (measured since schema 1; absent when not) */
	{ RS("virtualized", JT_BOOL, host.virtualized, JT_OPT | JT_KEYIF, .cond = offsetof(struct results, host.have_virt)) },
	{ RS("free_page_reporting", JT_BOOL, host.reporting, JT_OPT | JT_KEYIF,
	     .cond = offsetof(struct results, host.have_nested)) },
	{ RS("free_page_reporting_order", JT_INT, host.reporting_order, JT_OPT | JT_KEYIF,
	     .cond = offsetof(struct results, host.have_order)) },
	{ RS("libvirt_version", JT_STR, libvirt_version, 0) },
	{ RS("hypervisor_version", JT_STR, hypervisor_version, 0) },
	{ RS("thp_before", JT_CUSTOM, thp_before, 0, .write = w_thp, .load = l_thp) },
	{ RS("thp_after", JT_CUSTOM, thp_after, JT_NULL | JT_IF, .cond = offsetof(struct results, have_thp_after),
	  .write = w_thp, .load = l_thp) },
};
static const struct jt_table host_jt = JT_TABLE(struct results, host_fields);

/* what telemetry was collected: fixed text, and the run's notes on KVM stats and the PMU */
#define TEXT(k, text) .key = (k), .kind = JT_CONST, .flags = JT_OPT, .def = (text)
static const struct jt_field telemetry_fields[] = {
	{ TEXT("host_qemu_minflt", "per repetition, fault and access phase together") },
	{ TEXT("host_vmstat", "host-wide thp_* and compact_* deltas per repetition") },
	{ TEXT("guest_rusage", "per phase, from the workload") },
	{ TEXT("guest_vmstat", "memset: guest-wide pgfault and thp_* deltas per phase (fault_vm_*, access_vm_*); "
	       "kcompile: over the build (vm_*)") },
	{ TEXT("guest_first_touch", "memset: share of 2M blocks whose first touch got a huge page (mincore probe, "
	       "first_touch_huge_pct)") },
	{ RS("kvm_stats", JT_STR, kvm_stats_note, JT_OPT | JT_NULL) },
	{ RS("hardware_counters", JT_STR, pmu_note, JT_OPT | JT_NULL) },
};
static const struct jt_table telemetry_jt = JT_TABLE(struct results, telemetry_fields);

#define NC(k, kind, m, ...) JT_F(k, kind, struct not_chased, m, __VA_ARGS__)
static const struct jt_field not_chased_fields[] = {
	{ NC("effect", JT_STR, effect, 0) },
	{ NC("target_pct", JT_DOUBLE, target_pct, 0) },
	{ NC("boots_needed", JT_INT, boots_needed, 0) },
	{ NC("boots_allowed", JT_INT, boots_allowed, 0) },
};
static const struct jt_table not_chased_jt = JT_TABLE(struct not_chased, not_chased_fields);

#define ST(k, kind, m, ...) JT_F(k, kind, struct run_settings, m, __VA_ARGS__)
#define KCOMPILE JT_IFSET, .cond = offsetof(struct run_settings, kcompile)
static const struct jt_field settings_fields[] = {
	{ ST("uri", JT_STR, uri, 0) },
	{ ST("host_thp", JT_STR, host_thp_list, 0) },
	{ ST("guest_thp", JT_STR, guest_thp_list, 0) },
	{ ST("workloads", JT_STR, workloads, 0) },
	{ ST("kcompile", JT_STR, kcompile, JT_OPT | JT_NULL | KCOMPILE) },
	{ ST("kcompile_source", JT_STR, srcdisk_id, JT_OPT | JT_NULL | KCOMPILE) },
	{ ST("host_prefault", JT_STR, prefault_list, JT_OPT | JT_NULL) },
	{ ST("host_backing", JT_STR, backing, JT_OPT | JT_NULL | JT_WDEF, .def = "anonymous") },
	{ ST("reps", JT_INT, reps, JT_RANGE, .lo = RUN_REPS_MIN, .hi = RUN_REPS_MAX) },
	{ ST("rounds", JT_INT, rounds, JT_OPT) },
	{ ST("boots", JT_INT, boots, JT_OPT | JT_RANGE, .idef = 1, .lo = RUN_BOOTS_MIN,
	  .hi = RUN_BOOTS_MAX) },
	{ ST("pin", JT_STR, pin, JT_OPT | JT_NULL) },
	{ ST("group_order", JT_STR, group_order, JT_OPT | JT_NULL) },
	{ ST("target_ci_host_pct", JT_DOUBLE, target_ci_host, JT_OPT | JT_POS) },
	{ ST("target_ci_guest_pct", JT_DOUBLE, target_ci_guest, JT_OPT | JT_POS) },
	{ ST("budget_s", JT_DOUBLE, budget_s, JT_OPT | JT_POS) },
	{ ST("rounds_stopped", JT_STR, stopped, JT_OPT | JT_NULL | JT_WNULL) },
	{ ST("stopped_at_minimum", JT_BOOL, stopped_at_minimum, JT_OPT) },
	{ ST("not_chased", JT_ARR, not_chased, JT_OPT | JT_INLINE, .count = offsetof(struct run_settings, nnot_chased),
	  .cap = RES_NOT_CHASED_MAX, .sub = &not_chased_jt) },
	{ ST("warmup", JT_INT, warmup, JT_RANGE, .lo = 0, .hi = RUN_WARMUP_MAX) },
	{ ST("cold_reps", JT_INT, cold_reps, JT_OPT | JT_RANGE, .lo = 0, .hi = RUN_COLD_REPS_MAX) },
	{ ST("vcpus", JT_INT, vcpus, JT_RANGE, .lo = RUN_VCPUS_MIN, .hi = RUN_VCPUS_MAX) },
	{ ST("memory_bytes", JT_INT, memory_bytes, JT_RANGE, .lo = RUN_MEMORY_MIN,
	  .hi = RUN_MEMORY_MAX) },
	{ ST("size_bytes", JT_INT, size_bytes, JT_RANGE, .lo = RUN_SIZE_ALIGN, .hi = INT64_MAX) },
	{ ST("accesses", JT_INT, accesses, JT_RANGE, .lo = RUN_ACCESSES_MIN,
	  .hi = RUN_ACCESSES_MAX) },
	{ ST("seed", JT_INT, seed, JT_RANGE, .lo = RUN_SEED_MIN, .hi = RUN_SEED_MAX) },
	{ ST("min_coverage_pct", JT_DOUBLE, min_coverage_pct, JT_RANGE, .lo = 0,
	  .hi = RUN_MIN_COV_MAX) },
	{ ST("guests", JT_INT, guests, JT_OPT | JT_WDEF | JT_RANGE, .idef = 1, .lo = RUN_GUESTS_MIN,
	  .hi = RUN_GUESTS_MAX) },
	{ ST("host_state", JT_STR, host_state_list, JT_OPT | JT_NULL | JT_WDEF, .def = "fresh") },
	{ ST("mthp_sweep", JT_BOOL, mthp_sweep, JT_OPT) },
	{ ST("guest_mthp", JT_STR, guest_mthp, JT_OPT | JT_NULL | JT_WNULL) },
	{ ST("emulator", JT_STR, emulator, JT_OPT | JT_IFSET, .cond = offsetof(struct run_settings, emulator)) },
	{ ST("ksm", JT_STR, ksm, JT_OPT | JT_IFSET, .cond = offsetof(struct run_settings, ksm)) },
};
static const struct jt_table settings_jt = JT_TABLE(struct run_settings, settings_fields);

static const struct jt_field results_fields[] = {
	{ .key = "schema_version", .kind = JT_CUSTOM, .write = w_schema, .load = l_schema },
	{ RS("thpeval_version", JT_STR, thpeval_version, 0) },
	{ RS("status", JT_STR, status, 0) },
	{ RS("error", JT_STR, error, JT_NULL | JT_WNULL) },
	{ RS("started_unix", JT_INT, started, 0) },
	{ RS("finished_unix", JT_INT, finished, JT_NULL | JT_WNULL) },
	{ RS("accel", JT_STR, accel, 0) },
	{ RS("accel_reason", JT_STR, accel_reason, 0) },
	{ .key = "host", .kind = JT_OBJ, .size = sizeof(struct results), .sub = &host_jt },
	{ RS("image_id", JT_STR, image_id, 0) },
	{ .key = "telemetry", .kind = JT_OBJ, .size = sizeof(struct results), .flags = JT_OPT, .sub = &telemetry_jt },
	{ RS("settings", JT_OBJ, settings, 0, .sub = &settings_jt) },
	{ RS("cells", JT_ARR, cells, 0, .count = offsetof(struct results, ncells), .sub = &cell_jt) },
	{ RS("guests", JT_ARR, guests, 0, .count = offsetof(struct results, nguests), .sub = &guest_jt) },
	{ RS("fragmentation", JT_ARR, frags, JT_OPT, .count = offsetof(struct results, nfrags), .sub = &frag_jt) },
	{ RS("recovery", JT_ARR, collapses, JT_OPT, .count = offsetof(struct results, ncollapses),
	     .sub = &collapse_jt) },
	/* in struct effects, which results->effects points to */
	{ JT_F("effects", JT_CUSTOM, struct effects, e, JT_OPT | JT_DERIVED, .count = offsetof(struct effects, n),
	       .sub = &effect_jt, .write = w_effects, .load = l_effects) },
	{ JT_F("variance", JT_CUSTOM, struct effects, var, JT_OPT | JT_DERIVED,
	       .count = offsetof(struct effects, nvar), .sub = &variance_jt, .write = w_effects, .load = l_effects) },
	/* with --emulator=A,B (results->ab); null with one emulator */
	{ .key = "ab", .kind = JT_CUSTOM, .flags = JT_OPT | JT_NULL | JT_DERIVED | JT_IFSET,
	  .cond = offsetof(struct results, settings.emulator), .write = w_ab, .load = l_ab },
	/* with --ksm: each group of each arm (results->ksms), and on against off (results->ksm_fx) */
	{ RS("ksm", JT_ARR, ksms, JT_OPT | JT_IFSET, .cond = offsetof(struct results, settings.ksm),
	     .count = offsetof(struct results, nksms), .sub = &ksm_jt) },
	{ .key = "ksm_effects", .kind = JT_CUSTOM, .flags = JT_OPT | JT_NULL | JT_DERIVED | JT_IFSET,
	  .cond = offsetof(struct results, settings.ksm), .write = w_ksm_fx, .load = l_ab },
};
const struct jt_table results_jt = JT_TABLE(struct results, results_fields);

/* ---- entry points --------------------------------------------------------------------- */

int results_to_json_text(const struct results *r, char **text, size_t *len, struct err *e)
{
	json_object *o = jt_write(&results_jt, r);
	const char *txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n;

	*text = NULL;
	*len = 0;
	if (!txt) {
		json_object_put(o);
		return err_set(e, -ENOMEM, "cannot serialise results");
	}
	n = strlen(txt);
	*text = malloc(n + 2);
	if (!*text) {
		json_object_put(o);
		return err_set(e, -ENOMEM, "out of memory");
	}
	memcpy(*text, txt, n);
	(*text)[n] = '\n';
	(*text)[n + 1] = '\0';
	*len = n + 1;
	json_object_put(o);
	return 0;
}

int results_write_json(const struct results *r, const char *path, struct err *e)
{
	char *text;
	size_t len;
	int rc;

	if (results_to_json_text(r, &text, &len, e))
		return e->code;
	rc = write_file_atomic(path, text, len, 0644, e);
	free(text);
	return rc;
}

int results_from_json(json_object *root, const char *name, struct results *r, struct err *e)
{
	struct jt_ctx c = { name, e };

	if (!json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "schema_version", NULL) ||
	    !json_object_object_get_ex(root, "cells", NULL))
		return err_set(e, -EINVAL, "'%s' is not a thpeval results file (no schema_version and cells)", name);
	return jt_load(&c, &results_jt, root, "", r);
}
