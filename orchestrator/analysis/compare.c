#include "orchestrator/analysis/compare.h"
#include "lib/array.h"
#include "lib/textesc.h"
#include "lib/wltraits.h"
#include "orchestrator/analysis/boots.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const dir_names[] = {
	[DIR_LOWER] = "lower is better",
	[DIR_HIGHER] = "higher is better",
	[DIR_INFO] = "info",
};
_Static_assert(ARRAY_SIZE(dir_names) == DIR__COUNT, "dir_names");

static const char *const verdict_names[] = {
	[CMP_OK] = "ok",
	[CMP_BETTER] = "better",
	[CMP_REGRESSION] = "REGRESSION",
	[CMP_INCONCLUSIVE] = "inconclusive",
	[CMP_UNTESTED] = "untested",
	[CMP_INFO] = "info",
	[CMP_INVALID] = "invalid",
	[CMP_NEW] = "new",
	[CMP_GONE] = "gone",
};
_Static_assert(ARRAY_SIZE(verdict_names) == CMP__COUNT, "verdict_names");

const char *metric_dir_name(enum metric_dir d)
{
	return (unsigned)d < DIR__COUNT ? dir_names[d] : "?";
}

const char *cmp_verdict_name(enum cmp_verdict v)
{
	return (unsigned)v < CMP__COUNT ? verdict_names[v] : "?";
}

/* ---- direction table ---------------------------------------------------------- */

enum rule_kind { RULE_EXACT, RULE_SUFFIX, RULE_CONTAINS, RULE_COVERAGE };

static const struct dir_rule {
	const char *pattern;
	enum rule_kind kind;
	enum metric_dir dir;
} dir_rules[] = {
	{ "fault_minflt", RULE_EXACT, DIR_LOWER },
	{ "fault_majflt", RULE_EXACT, DIR_LOWER },
	{ "vma_bytes", RULE_EXACT, DIR_INFO },
	{ "rss_bytes", RULE_EXACT, DIR_INFO },
	{ "anon_huge_bytes", RULE_EXACT, DIR_INFO },
	/* exec: the user's number, with the direction given with its pattern */
	{ "metric_higher", RULE_EXACT, DIR_HIGHER },
	{ "metric_lower", RULE_EXACT, DIR_LOWER },
	{ "_mib_s", RULE_SUFFIX, DIR_HIGHER },
	{ "_gib_s", RULE_SUFFIX, DIR_HIGHER },
	{ "_per_s", RULE_SUFFIX, DIR_HIGHER },
	{ "_huge_pct", RULE_COVERAGE, DIR_HIGHER },
	{ "_ns_per_", RULE_CONTAINS, DIR_LOWER },
	{ "_us_per_", RULE_CONTAINS, DIR_LOWER },
	{ "_cycles_per_", RULE_CONTAINS, DIR_LOWER },
	{ "_ns", RULE_SUFFIX, DIR_LOWER },
	{ "_us", RULE_SUFFIX, DIR_LOWER },
	{ "_ms", RULE_SUFFIX, DIR_LOWER },
	{ "_cycles", RULE_SUFFIX, DIR_LOWER },
	{ "_s", RULE_SUFFIX, DIR_LOWER },
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

enum metric_dir metric_direction(const char *metric, const struct cell *c)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(dir_rules); i++) {
		const struct dir_rule *r = &dir_rules[i];
		const char *side = NULL;

		switch (r->kind) {
		case RULE_EXACT:
			if (strcmp(metric, r->pattern))
				continue;
			return r->dir;
		case RULE_SUFFIX:
			if (!ends_with(metric, r->pattern))
				continue;
			return r->dir;
		case RULE_CONTAINS:
			if (!strstr(metric, r->pattern))
				continue;
			return r->dir;
		case RULE_COVERAGE:
			if (!ends_with(metric, r->pattern))
				continue;
			if (c && !strcmp(metric, "host_huge_pct"))
				side = c->host_thp;
			else if (c && !strcmp(metric, "guest_huge_pct"))
				side = c->guest_thp;
			return side && !strcmp(side, "never") ? DIR_LOWER : DIR_HIGHER;
		}
	}
	return DIR_INFO;
}

/* ---- cells -------------------------------------------------------------------- */

void cell_key_label(const char *target, const char *host_thp, const char *prefault,
		    const char *guest_thp, const char *workload, const char *variant, char *buf, size_t len)
{
	bool pf = prefault && prefault[0] && strcmp(prefault, "ondemand");
	bool var = variant && variant[0];
	int n;

	n = snprintf(buf, len, "%s/%s/%s%s%s%s%s%s", host_thp, guest_thp, workload, var ? ":" : "",
		     var ? variant : "", pf ? " prefault=" : "", pf ? prefault : "",
		     strcmp(target, "guest") ? (strcmp(target, "host") ? " [?]" : " [host]") : "");
	if (n < 0 || (size_t)n >= len)
		buf[len - 1] = '\0';
}

void cell_label(const struct cell *c, char *buf, size_t len)
{
	cell_key_label(c->target, c->host_thp, c->prefault, c->guest_thp, c->workload, c->variant, buf, len);
	if (c->host_state[0] && strcmp(c->host_state, "fresh")) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, " host=%s", c->host_state);
	}
	if (c->balloon[0] && strcmp(c->balloon, "none")) {
		size_t n = strlen(buf);

		snprintf(buf + n, len - n, " balloon=%s", c->balloon);
	}
}

static bool same_name(const char *a, const char *b, const char *def)
{
	return !strcmp(a[0] ? a : def, b[0] ? b : def);
}

bool cell_same_key(const struct cell *a, const struct cell *b)
{
	return !strcmp(a->target, b->target) && !strcmp(a->host_thp, b->host_thp) &&
	       same_name(a->prefault, b->prefault, "ondemand") && !strcmp(a->guest_thp, b->guest_thp) &&
	       !strcmp(a->workload, b->workload) && !strcmp(a->variant, b->variant) &&
	       same_name(a->host_state, b->host_state, "fresh") && same_name(a->balloon, b->balloon, "none");
}

/* ---- statistics ----------------------------------------------------------------- */

/* continued fraction of the incomplete beta function (modified Lentz) */
double student_t_p2(double t, double df)
{
	if (!isfinite(df) || df <= 0 || isnan(t))
		return NAN;
	if (isinf(t))
		return 0;
	return 2 * t_cdf(-fabs(t), df);	/* the lower tail: no cancellation for small p */
}

/* ---- comparison ------------------------------------------------------------------- */

static struct cmp_row *add_row(struct comparison *c, struct err *e)
{
	struct cmp_row *row;

	if (c->nrows == c->cap) {
		size_t ncap = c->cap ? c->cap * 2 : 64;
		struct cmp_row *p = realloc(c->rows, ncap * sizeof(*p));

		if (!p) {
			err_set(e, -ENOMEM, "out of memory comparing results");
			return NULL;
		}
		c->rows = p;
		c->cap = ncap;
	}
	row = &c->rows[c->nrows++];
	memset(row, 0, sizeof(*row));
	row->change_pct = row->change_lo_pct = row->change_hi_pct = row->p = row->p_holm = NAN;
	summarize(NULL, 0, &row->base);
	summarize(NULL, 0, &row->cur);
	return row;
}

bool metric_is_primary(const char *workload, const char *metric)
{
	return wltraits_primary(workload, metric);
}

int cmp_gate_parse(const char *s, enum cmp_gate *g, struct err *e)
{
	if (!strcmp(s, "primary"))
		*g = GATE_PRIMARY;
	else if (!strcmp(s, "all"))
		*g = GATE_ALL;
	else
		return err_set(e, -EINVAL, "'%.40s' is not a gate: use primary (each workload's primary metrics) "
			       "or all (every metric with a direction)", s);
	return 0;
}

/* the mean and variance of the mean of ln(samples): over boots, or over repetitions */
struct logmean {
	double mean, var, df;
	size_t n;
};

static int log_over_boots(const struct metric *m, struct logmean *out)
{
	struct boot_mean b[BOOTS_MAX];
	double sum = 0, ss = 0;
	size_t nb, k;

	if (boots_group(m, b, BOOTS_MAX, &nb) || nb < 2)
		return -EDOM;
	for (k = 0; k < nb; k++)
		sum += b[k].mean_log;
	out->mean = sum / (double)nb;
	for (k = 0; k < nb; k++)
		ss += (b[k].mean_log - out->mean) * (b[k].mean_log - out->mean);
	out->var = ss / (double)(nb - 1) / (double)nb;
	out->df = (double)(nb - 1);
	out->n = nb;
	return 0;
}

static int log_over_reps(const struct metric *m, struct logmean *out)
{
	double sum = 0, ss = 0;
	size_t i;

	if (m->n < 2)
		return -EDOM;
	for (i = 0; i < m->n; i++) {
		if (!(m->samples[i] > 0))
			return -EDOM;
		sum += log(m->samples[i]);
	}
	out->mean = sum / (double)m->n;
	for (i = 0; i < m->n; i++)
		ss += (log(m->samples[i]) - out->mean) * (log(m->samples[i]) - out->mean);
	out->var = ss / (double)(m->n - 1) / (double)m->n;
	out->df = (double)(m->n - 1);
	out->n = m->n;
	return 0;
}

/* one-sided p of t with df: P(T > t) */
static double p_upper(double t, double df)
{
	double p2;

	if (isinf(t))
		return t > 0 ? 0 : 1;
	p2 = student_t_p2(t, df);
	return t > 0 ? p2 / 2 : 1 - p2 / 2;
}

/*
 * The change of one metric as a ratio of geometric means with its 95%
 * interval, and the one-sided p of "worse by more than the threshold".
 */
static void test_row(struct cmp_row *row, const struct metric *bm, const struct metric *cm, double threshold)
{
	struct logmean b, c;
	double d, se, df, half, bad, lim;

	if (log_over_boots(bm, &b) == 0 && log_over_boots(cm, &c) == 0) {
		snprintf(row->unit, sizeof(row->unit), "boots");
	} else if (log_over_reps(bm, &b) == 0 && log_over_reps(cm, &c) == 0) {
		snprintf(row->unit, sizeof(row->unit), "reps");
	} else {
		row->verdict = CMP_UNTESTED;
		snprintf(row->why, sizeof(row->why), "fewer than 2 samples on a side, or a value <= 0 (no ratio)");
		return;
	}
	d = c.mean - b.mean;
	se = sqrt(b.var + c.var);
	df = se > 0 ? pow(se, 4) / (b.var * b.var / b.df + c.var * c.var / c.df) : 1e9;
	half = t975(df) * se;
	row->change_pct = (exp(d) - 1) * 100.0;
	row->change_lo_pct = (exp(d - half) - 1) * 100.0;
	row->change_hi_pct = (exp(d + half) - 1) * 100.0;
	/* on the log scale, "worse": d up for lower-is-better, down for higher-is-better */
	bad = row->dir == DIR_LOWER ? d : -d;
	lim = log1p(threshold / 100.0);
	row->p = se > 0 ? p_upper((bad - lim) / se, df) : (bad > lim ? 0 : 1);
	if (bad + half < lim && bad - half > -lim)
		row->verdict = CMP_OK;
	else if (bad + half < -lim)
		row->verdict = CMP_BETTER;
	else
		row->verdict = CMP_INCONCLUSIVE;	/* until Holm says regression */
	if (strcmp(row->unit, "boots"))
		snprintf(row->why, sizeof(row->why), "over repetitions: a run has 1 boot, so boot-to-boot "
			 "spread is not in the interval");
}

/* Holm's step-down over the gated rows: regression where the adjusted p < alpha */
static void holm(struct comparison *c)
{
	size_t *idx = NULL, m = 0, i, j;
	double run = 0;

	for (i = 0; i < c->nrows; i++)
		m += c->rows[i].gated && isfinite(c->rows[i].p);
	if (m == 0 || !(idx = malloc(m * sizeof(*idx))))
		return;
	for (i = 0, j = 0; i < c->nrows; i++)
		if (c->rows[i].gated && isfinite(c->rows[i].p))
			idx[j++] = i;
	for (i = 1; i < m; i++)	/* insertion sort by p: m is small */
		for (j = i; j > 0 && c->rows[idx[j]].p < c->rows[idx[j - 1]].p; j--) {
			size_t t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	for (i = 0; i < m; i++) {
		struct cmp_row *row = &c->rows[idx[i]];
		double adj = fmin(1.0, (double)(m - i) * row->p);

		run = fmax(run, adj);
		row->p_holm = run;
		if (run < COMPARE_ALPHA && row->verdict != CMP_INVALID) {
			char was[sizeof(row->why)];

			snprintf(was, sizeof(was), "%s", row->why);	/* an invalid cell's note stays */
			row->verdict = CMP_REGRESSION;
			row->fails = true;
			snprintf(row->why, sizeof(row->why), "worse than the threshold: Holm-adjusted p %.3g over "
				 "%zu gated metrics%s%.150s", run, m, was[0] ? "; " : "", was);
		}
	}
	free(idx);
}

/*
 * a sample of m that no measurement gives: below 0 (or not a number), or 0
 * where zero_too (a primary time: from a nanosecond clock, never 0; rusage's
 * microseconds of a short phase can be)
 */
static bool has_damage(const struct metric *m, bool zero_too)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!(m->samples[i] > 0) && (zero_too || !(m->samples[i] == 0)))
			return true;
	return false;
}

/* a sample <= 0 (or not a number) in m: no ratio can be formed */
static bool has_nonpositive(const struct metric *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		if (!(m->samples[i] > 0))
			return true;
	return false;
}

/* the change as a ratio of geometric means, with no interval (one sample will do); NAN if none */
static double point_change_pct(const struct metric *bm, const struct metric *cm)
{
	double lb = 0, lc = 0;
	size_t i;

	if (!bm->n || !cm->n || has_nonpositive(bm) || has_nonpositive(cm))
		return NAN;
	for (i = 0; i < bm->n; i++)
		lb += log(bm->samples[i]);
	for (i = 0; i < cm->n; i++)
		lc += log(cm->samples[i]);
	return (exp(lc / (double)cm->n - lb / (double)bm->n) - 1) * 100.0;
}

static void judge(struct cmp_row *row, const struct cell *bc, const struct cell *cc, const struct metric *bm,
		  const struct metric *cm, const struct compare_opts *o)
{
	bool primary_metric = metric_is_primary(cc->workload, cm->name), zero_too;

	row->gated = row->dir != DIR_INFO && (o->gate == GATE_ALL || primary_metric);
	if (!row->gated) {
		row->verdict = CMP_INFO;
		row->change_pct = bm->s.mean > 0 && cm->s.mean > 0 ? (cm->s.mean / bm->s.mean - 1) * 100.0 : NAN;
		return;
	}
	test_row(row, bm, cm, o->threshold_pct);
	/*
	 * A negative sample, or a primary time of 0, is a damaged run (a guest
	 * that misbehaved, an edited file): it cannot be tested, so it cannot
	 * pass. A count, a coverage or a coarse time of 0 is a measurement
	 * (untested: no ratio).
	 */
	zero_too = primary_metric && rec_key_is_time(cm->name);
	if (has_damage(bm, zero_too) || has_damage(cm, zero_too)) {
		row->verdict = CMP_UNTESTED;
		row->fails = true;
		snprintf(row->why, sizeof(row->why), "a sample %s in the %s run: a gated metric that cannot be "
			 "tested fails the gate", zero_too ? "<= 0" : "< 0",
			 has_damage(cm, zero_too) ? "current" : "baseline");
		return;
	}
	if (!bc->valid) {	/* nothing to hold the run against: counted, never a pass */
		row->verdict = CMP_UNTESTED;
		row->p = NAN;
		snprintf(row->why, sizeof(row->why), "untested: baseline invalid: %.150s", bc->invalid_reason);
	} else if (!cc->valid && row->verdict == CMP_UNTESTED) {
		/* no interval (one repetition): the point change of the means says "worse",
		 * so a run compared with itself never fails */
		double change = point_change_pct(bm, cm);
		bool worse = isfinite(change) &&
			     (row->dir == DIR_LOWER ? change > o->threshold_pct : change < -o->threshold_pct);

		row->gated = false;
		row->verdict = CMP_INVALID;
		row->fails = worse || !isfinite(change);
		snprintf(row->why, sizeof(row->why), "cell invalid in the current run and no interval: %.120s%s",
			 cc->invalid_reason, row->fails ? " (and worse beyond the threshold: the gate cannot pass it)" : "");
	} else if (!cc->valid) {	/* judged on its interval, as a valid one */
		snprintf(row->why, sizeof(row->why), "cell invalid in the current run: %.150s", cc->invalid_reason);
	}
}

/* metric i of a cell, coverage included: n = nmetrics + 2 */
static const struct metric *cell_metric_at(const struct cell *c, size_t i)
{
	if (i < c->nmetrics)
		return &c->metrics[i];
	if (i == c->nmetrics)
		return &c->host_cov;
	return &c->guest_cov;
}

static const struct metric *cell_metric_any(const struct cell *c, const char *name)
{
	if (!strcmp(name, c->host_cov.name))
		return &c->host_cov;
	if (!strcmp(name, c->guest_cov.name))
		return &c->guest_cov;
	return cell_metric_find(c, name);
}

static int compare_cell(struct comparison *out, const struct cell *bc, const struct cell *cc,
			size_t ci, const struct compare_opts *o, struct err *e)
{
	struct cmp_row *row;
	size_t i;

	for (i = 0; i < cc->nmetrics + 2; i++) {
		const struct metric *cm = cell_metric_at(cc, i);
		const struct metric *bm = cell_metric_any(bc, cm->name);

		if (!(row = add_row(out, e)))
			return -ENOMEM;
		row->cell = ci;
		cell_label(cc, row->label, sizeof(row->label));
		snprintf(row->metric, sizeof(row->metric), "%s", cm->name);
		row->dir = metric_direction(cm->name, cc);
		row->cur = cm->s;
		if (!bm || bm->n == 0) {
			if (cm->n == 0) {	/* no evidence on either side (e.g. failed cell) */
				out->nrows--;
				continue;
			}
			row->verdict = CMP_NEW;
			continue;
		}
		row->base = bm->s;
		judge(row, bc, cc, bm, cm, o);
	}
	for (i = 0; i < bc->nmetrics; i++) {
		if (cell_metric_find(cc, bc->metrics[i].name) || bc->metrics[i].n == 0)
			continue;
		if (!(row = add_row(out, e)))
			return -ENOMEM;
		row->cell = ci;
		cell_label(cc, row->label, sizeof(row->label));
		snprintf(row->metric, sizeof(row->metric), "%s", bc->metrics[i].name);
		row->dir = metric_direction(bc->metrics[i].name, bc);
		row->base = bc->metrics[i].s;
		row->verdict = CMP_GONE;
		if (metric_is_primary(bc->workload, bc->metrics[i].name)) {
			/* a primary metric that stopped being measured cannot pass the gate */
			row->fails = true;
			snprintf(row->why, sizeof(row->why), "a primary metric the baseline has was not measured");
		}
	}
	if (!bc->valid || !cc->valid)
		out->ninvalid++;
	out->nbase_invalid += !bc->valid;
	return 0;
}

int compare_results(const struct results *base, const struct results *cur, const struct compare_opts *o,
		    struct comparison *out, struct err *e)
{
	struct cmp_row *row;
	size_t i, j;

	memset(out, 0, sizeof(*out));
	out->threshold_pct = o->threshold_pct;
	out->gate = o->gate;
	for (i = 0; i < cur->ncells; i++) {
		const struct cell *cc = &cur->cells[i], *bc = NULL;

		for (j = 0; j < base->ncells && !bc; j++)
			if (cell_same_key(&base->cells[j], cc))
				bc = &base->cells[j];
		if (!bc) {
			if (!(row = add_row(out, e)))
				goto fail;
			row->cell = i;
			cell_label(cc, row->label, sizeof(row->label));
			row->verdict = CMP_NEW;
			continue;
		}
		out->ncells_matched++;
		if (compare_cell(out, bc, cc, i, o, e))
			goto fail;
	}
	for (j = 0; j < base->ncells; j++) {
		bool found = false;

		for (i = 0; i < cur->ncells && !found; i++)
			found = cell_same_key(&base->cells[j], &cur->cells[i]);
		if (found)
			continue;
		if (!(row = add_row(out, e)))
			goto fail;
		row->cell = SIZE_MAX;
		cell_label(&base->cells[j], row->label, sizeof(row->label));
		row->verdict = CMP_GONE;
	}
	if (out->ncells_matched == 0 && (cur->ncells || base->ncells)) {
		comparison_release(out);
		return err_set(e, -EINVAL, "nothing to compare: no cell of the current run is in the baseline "
			       "(different --host-thp, --guest-thp or --workloads?)");
	}
	holm(out);
	for (i = 0; i < out->nrows; i++) {
		const struct cmp_row *r = &out->rows[i];

		out->ngated += r->gated;
		out->nregressions += r->verdict == CMP_REGRESSION;
		out->ninconclusive += r->gated && r->verdict == CMP_INCONCLUSIVE;
		out->nuntested += r->gated && r->verdict == CMP_UNTESTED;
		out->nfailed += r->fails;
	}
	return 0;
fail:
	comparison_release(out);
	return e->code;
}

bool comparison_failed(const struct comparison *c)
{
	return c->nfailed > 0;
}

void comparison_release(struct comparison *c)
{
	if (!c)
		return;
	free(c->rows);
	c->rows = NULL;
	c->nrows = c->cap = 0;
}

const struct cmp_row *comparison_find(const struct comparison *c, size_t cell, const char *metric)
{
	size_t i;

	if (!c)
		return NULL;
	for (i = 0; i < c->nrows; i++)
		if (c->rows[i].cell == cell && !strcmp(c->rows[i].metric, metric))
			return &c->rows[i];
	return NULL;
}

/* ---- printing ------------------------------------------------------------------- */

void fmt_value(char *buf, size_t len, double v)
{
	double a = fabs(v);

	if (!isfinite(v))
		snprintf(buf, len, "n/a");
	else if (a >= 1e9)
		snprintf(buf, len, "%.3e", v);
	else if (a >= 1000 || v == 0)
		snprintf(buf, len, "%.0f", v);
	else if (a >= 100)
		snprintf(buf, len, "%.1f", v);
	else if (a >= 1)
		snprintf(buf, len, "%.2f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

static void fmt_mean_ci(char *buf, size_t len, const struct summary *s)
{
	char m[20], h[20];

	if (s->n == 0) {
		snprintf(buf, len, "-");
		return;
	}
	fmt_value(m, sizeof(m), s->mean);
	if (!isfinite(s->ci95_high)) {
		snprintf(buf, len, "%s", m);
		return;
	}
	if (s->geo) {	/* geometric: the log-scale half-width, as a ratio */
		snprintf(buf, len, "%s ±%.1f%%", m, (s->ci95_high / s->mean - 1) * 100);
		return;
	}
	fmt_value(h, sizeof(h), s->ci95_high - s->mean);
	snprintf(buf, len, "%s ±%s", m, h);
}

static void fmt_change(char *buf, size_t len, double pct)
{
	if (isnan(pct))
		snprintf(buf, len, "-");
	else if (isinf(pct))
		snprintf(buf, len, "%s", pct > 0 ? "+inf%" : "-inf%");
	else
		snprintf(buf, len, "%+.1f%%", pct);
}

static void print_identity_diff(const struct results *b, const struct results *c, FILE *out)
{
	const struct {
		const char *what, *bv, *cv;
	} f[] = {
		{ "host kernel", b->host.kernel, c->host.kernel },
		{ "QEMU", b->hypervisor_version, c->hypervisor_version },
		{ "libvirt", b->libvirt_version, c->libvirt_version },
		{ "thpeval", b->thpeval_version, c->thpeval_version },
		{ "CPU", b->host.cpu_model, c->host.cpu_model },
		{ "accel", b->accel, c->accel },
		{ "guest image", b->image_id, c->image_id },
	};
	size_t i;
	bool any = false;

	for (i = 0; i < ARRAY_SIZE(f); i++) {
		if (!strcmp(f[i].bv, f[i].cv))
			continue;
		if (!any)
			fprintf(out, "changed since the baseline:\n");
		any = true;
		fprintf(out, "  %-12s %s -> %s\n", f[i].what, f[i].bv, f[i].cv);
	}
	if (any)
		fputc('\n', out);
}

void fput_padded(FILE *out, const char *s, int width, bool right)
{
	int cols = 0;
	const char *p;

	for (p = s; *p; p++)
		cols += ((unsigned char)*p & 0xc0) != 0x80;
	if (right)
		fprintf(out, "%*s%s", width > cols ? width - cols : 0, "", s);
	else
		fprintf(out, "%s%*s", s, width > cols ? width - cols : 0, "");
}

static void print_rows(const struct comparison *c, const struct results *base, const struct results *cur,
		       FILE *out)
{
	const char *last = NULL;
	size_t i;

	if (base && cur)
		print_identity_diff(base, cur, out);
	for (i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];
		char bs[48], cs[48], ch[48], p[16];

		if (!r->metric[0]) {
			fprintf(out, "%s %s: %s\n", r->verdict == CMP_NEW ? "only in current: " : "only in baseline:",
				r->label, r->verdict == CMP_NEW ? "no baseline to compare with" : "not measured now");
			continue;
		}
		if (!last || strcmp(last, r->label)) {
			fprintf(out, "%scell %s (host/guest/workload)\n  %-22s %-22s %-22s %-26s %7s  %s\n",
				last ? "\n" : "", r->label, "metric", "baseline", "current", "change [95% CI]",
				"p Holm", "verdict");
			last = r->label;
		}
		fmt_mean_ci(bs, sizeof(bs), &r->base);
		fmt_mean_ci(cs, sizeof(cs), &r->cur);
		if (isfinite(r->change_lo_pct))
			snprintf(ch, sizeof(ch), "%+.1f%% [%+.1f, %+.1f]", r->change_pct, r->change_lo_pct,
				 r->change_hi_pct);
		else
			fmt_change(ch, sizeof(ch), r->change_pct);
		if (isnan(r->p_holm))
			snprintf(p, sizeof(p), "-");
		else
			snprintf(p, sizeof(p), "%.3f", r->p_holm);
		fputs("  ", out);
		fput_padded(out, r->metric, 22, false);
		fputc(' ', out);
		fput_padded(out, bs, 22, false);
		fputc(' ', out);
		fput_padded(out, cs, 22, false);
		fputc(' ', out);
		fput_padded(out, ch, 26, false);
		fprintf(out, " %7s  %s%s%s%s%s\n", p, cmp_verdict_name(r->verdict),
			r->gated && strcmp(r->unit, "boots") ? " (reps)" : "", r->why[0] ? ": " : "",
			r->verdict == CMP_INFO ? "" : r->why, r->verdict == CMP_INFO && r->dir != DIR_INFO ?
			" (not gated)" : "");
	}
	fprintf(out, "\nbaseline, current: geometric mean ±95%% CI on the log scale, in %% (arithmetic, with its "
		     "half-width, where a sample is 0)\n");
	fprintf(out, "change: ratio of geometric means with its 95%% CI (log scale, over boots where both runs have"
		     " 2 or more); gated: %s; regression = worse beyond %g%% at a family-wise 5%% (one-sided, Holm"
		     " over %zu gated metric(s)); ok = the interval shows the change within %g%%; inconclusive ="
		     " neither\n", c->gate == GATE_ALL ? "every metric with a direction" :
		     "each workload's primary metrics (--gate=all for every metric)", c->threshold_pct, c->ngated,
		c->threshold_pct);
	if (c->nuntested)
		fprintf(out, "%zu gated metric(s) untested: fewer than 2 samples on a side; use --reps of 3 or more\n",
			c->nuntested);
	if (c->nbase_invalid)
		fprintf(out, "%zu cell(s) untested: baseline invalid (nothing to hold the run against)\n",
			c->nbase_invalid);
	if (c->ninvalid > c->nbase_invalid)
		fprintf(out, "%zu cell(s) invalid in the current run: judged on their intervals (without one, they "
			     "fail the gate)\n", c->ninvalid - c->nbase_invalid);
	fprintf(out, "%zu gated metric(s): %zu regression(s), %zu inconclusive, %zu failing the gate in %zu matched"
		     " cell(s): %s\n", c->ngated, c->nregressions, c->ninconclusive, c->nfailed, c->ncells_matched,
		comparison_failed(c) ? "FAIL" : c->ninconclusive ? "pass (inconclusive metrics: more boots"
		" would decide them)" : "pass");
}

/* names, reasons and versions come from results.json files: escaped as a whole */
void compare_print(const struct comparison *c, const struct results *base,
		   const struct results *cur, FILE *out)
{
	struct textesc_sink s;
	FILE *m = textesc_open(&s, out, TEXTESC_KEEP_LINES);

	if (m)
		print_rows(c, base, cur, m);
	textesc_close(&s);
}
