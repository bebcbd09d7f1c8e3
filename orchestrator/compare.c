#include "orchestrator/compare.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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
	[CMP_NOISE] = "noise",
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
	       same_name(a->host_state, b->host_state, "fresh");
}

/* ---- statistics ----------------------------------------------------------------- */

/* continued fraction of the incomplete beta function (modified Lentz) */
static double betacf(double a, double b, double x)
{
	const double eps = 1e-15, tiny = 1e-300;
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 - qab * x / qap, h;
	int m;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 500; m++) {
		double m2 = 2.0 * m, aa, del;

		aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* regularized incomplete beta I_x(a, b) */
static double betai(double a, double b, double x)
{
	double bt;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return bt * betacf(a, b, x) / a;
	return 1 - bt * betacf(b, a, 1 - x) / b;
}

double student_t_p2(double t, double df)
{
	if (!isfinite(df) || df <= 0 || isnan(t))
		return NAN;
	if (isinf(t))
		return 0;
	return betai(df / 2, 0.5, df / (df + t * t));
}

int welch_test(const struct summary *a, const struct summary *b, double *t, double *df, double *p)
{
	double va, vb, se2;

	*t = *df = *p = NAN;
	if (a->n < 2 || b->n < 2 || !isfinite(a->sd) || !isfinite(b->sd))
		return -EDOM;
	va = a->sd * a->sd / (double)a->n;
	vb = b->sd * b->sd / (double)b->n;
	se2 = va + vb;
	if (se2 == 0) {
		*t = a->mean == b->mean ? 0 : (b->mean > a->mean ? INFINITY : -INFINITY);
		*p = a->mean == b->mean ? 1 : 0;
		return 0;
	}
	*t = (b->mean - a->mean) / sqrt(se2);
	*df = se2 * se2 / (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
	*p = student_t_p2(*t, *df);
	return 0;
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
	row->change_pct = row->p = NAN;
	summarize(NULL, 0, &row->base);
	summarize(NULL, 0, &row->cur);
	return row;
}

static double change_pct(double base, double cur)
{
	if (!isfinite(base) || !isfinite(cur))
		return NAN;
	if (base == 0)
		return cur == 0 ? 0 : (cur > 0 ? INFINITY : -INFINITY);
	return (cur - base) / fabs(base) * 100.0;
}

static void judge(struct cmp_row *row, bool invalid, double threshold)
{
	double t, df;
	bool worse;

	row->change_pct = change_pct(row->base.mean, row->cur.mean);
	if (invalid) {
		row->verdict = CMP_INVALID;
		return;
	}
	if (row->dir == DIR_INFO) {
		row->verdict = CMP_INFO;
		return;
	}
	if (welch_test(&row->base, &row->cur, &t, &df, &row->p)) {
		row->verdict = CMP_UNTESTED;
		return;
	}
	if (isnan(row->change_pct) || fabs(row->change_pct) <= threshold) {
		row->verdict = CMP_OK;
		return;
	}
	if (!(row->p < COMPARE_ALPHA)) {
		row->verdict = CMP_NOISE;
		return;
	}
	worse = row->dir == DIR_LOWER ? row->cur.mean > row->base.mean : row->cur.mean < row->base.mean;
	row->verdict = worse ? CMP_REGRESSION : CMP_BETTER;
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
			size_t ci, struct err *e)
{
	bool invalid = !bc->valid || !cc->valid;
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
		judge(row, invalid, out->threshold_pct);
		switch (row->verdict) {
		case CMP_REGRESSION: out->nregressions++; break;
		case CMP_UNTESTED: out->nuntested++; break;
		default: break;
		}
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
	}
	if (invalid)
		out->ninvalid++;
	return 0;
}

int compare_results(const struct results *base, const struct results *cur, double threshold_pct,
		    struct comparison *out, struct err *e)
{
	struct cmp_row *row;
	size_t i, j;

	memset(out, 0, sizeof(*out));
	out->threshold_pct = threshold_pct;
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
		if (compare_cell(out, bc, cc, i, e))
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
	return 0;
fail:
	comparison_release(out);
	return e->code;
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

void compare_print(const struct comparison *c, const struct results *base,
		   const struct results *cur, FILE *out)
{
	const char *last = NULL;
	size_t i;

	if (base && cur)
		print_identity_diff(base, cur, out);
	for (i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];
		char bs[48], cs[48], ch[24], p[16];

		if (!r->metric[0]) {
			fprintf(out, "%s %s: %s\n", r->verdict == CMP_NEW ? "only in current: " : "only in baseline:",
				r->label, r->verdict == CMP_NEW ? "no baseline to compare with" : "not measured now");
			continue;
		}
		if (!last || strcmp(last, r->label)) {
			fprintf(out, "%scell %s (host/guest/workload)\n  %-22s %-22s %-22s %8s %7s  %s\n",
				last ? "\n" : "", r->label, "metric", "baseline", "current", "change", "p",
				"verdict");
			last = r->label;
		}
		fmt_mean_ci(bs, sizeof(bs), &r->base);
		fmt_mean_ci(cs, sizeof(cs), &r->cur);
		fmt_change(ch, sizeof(ch), r->change_pct);
		if (isnan(r->p))
			snprintf(p, sizeof(p), "-");
		else
			snprintf(p, sizeof(p), "%.3f", r->p);
		fputs("  ", out);
		fput_padded(out, r->metric, 22, false);
		fputc(' ', out);
		fput_padded(out, bs, 22, false);
		fputc(' ', out);
		fput_padded(out, cs, 22, false);
		fprintf(out, " %8s %7s  %s\n", ch, p, cmp_verdict_name(r->verdict));
	}
	fprintf(out, "\nvalues: mean ±95%% CI half-width; regression = change beyond %g%% in the bad direction"
		     " and significant (Welch t-test, two-sided p < %g)\n", c->threshold_pct, COMPARE_ALPHA);
	if (c->nuntested)
		fprintf(out, "%zu metric(s) untested: fewer than 2 repetitions on a side; use --reps of 3 or more\n",
			c->nuntested);
	if (c->ninvalid)
		fprintf(out, "%zu cell(s) invalid in either run: not gated; see the validity marks in the report\n",
			c->ninvalid);
	if (c->nregressions)
		fprintf(out, "%zu regression(s) in %zu matched cell(s)\n", c->nregressions, c->ncells_matched);
	else
		fprintf(out, "no regression in %zu matched cell(s)\n", c->ncells_matched);
}
