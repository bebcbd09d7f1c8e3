#include "orchestrator/model/results_json_cell.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/record.h"
#include "lib/wltraits.h"
#include "orchestrator/model/results.h"

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
	{ CL("balloon", JT_STR, balloon, JT_OPT | JT_NULL | JT_WDEF, .def = "none") },
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
			      s->host_state, s->balloon };
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

const struct jt_table cell_jt = { sizeof(struct cell), NULL, cell_put,
					 sizeof(cell_fields) / sizeof(cell_fields[0]), cell_fields };
