#include "orchestrator/model/results_json_effects.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/model/results.h"

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
const struct jt_table effect_jt = JT_TABLE(struct effect, effect_fields);

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
const struct jt_table variance_jt = JT_TABLE(struct effect_var, variance_fields);

/* effects (count in f->count of struct effects, elements at f->off) as an array; none: [] */
json_object *w_effects(const void *base, const struct jt_field *f)
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
int l_effects(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
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
json_object *w_ab(const void *base, const struct jt_field *f)
{
	const struct abtest *ab = ((const struct results *)base)->ab;

	(void)f;
	return ab ? jt_write(&ab_jt, ab) : NULL;
}

/* "ksm_effects": KSM on against off, the same rows; null without both arms */
json_object *w_ksm_fx(const void *base, const struct jt_field *f)
{
	const struct abtest *fx = ((const struct results *)base)->ksm_fx;

	(void)f;
	return fx ? jt_write(&ab_jt, fx) : NULL;
}

int l_ab(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
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
