#include "orchestrator/analysis/abtest.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stats.h"
#include "orchestrator/analysis/abrow.h"
#include "orchestrator/analysis/boots.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/analysis/ksmfx.h"

#define AB_ROUNDS_MAX 256

/* the arm of boot b: 0 (A), 1 (B), -1 (none, or not a guest boot) */
static int boot_arm(const struct results *r, unsigned b)
{
	if (b >= r->nguests)
		return -1;
	if (!strcmp(r->guests[b].arm, "A"))
		return 0;
	if (!strcmp(r->guests[b].arm, "B"))
		return 1;
	return -1;
}

bool abtest_applies(const struct results *r)
{
	bool seen[2] = { false, false };
	size_t i;

	for (i = 0; i < r->nguests; i++) {
		int a = boot_arm(r, (unsigned)i);

		if (a >= 0)
			seen[a] = true;
	}
	return seen[0] && seen[1];
}

/* Welch over two independent means with their variances and dfs */
static void welch(double ma, double va, double dfa, double mb, double vb, double dfb, double *d, double *se,
		  double *df)
{
	double v = va + vb;

	*d = mb - ma;
	*se = sqrt(v);
	*df = v > 0 ? v * v / (va * va / dfa + vb * vb / dfb) : 1e9;
}

/* each round's B mean minus its A mean of one metric (log scale), where the round has both */
struct round_diffs {
	double d[AB_ROUNDS_MAX];
	bool have[AB_ROUNDS_MAX];
};

/* a t interval over the rounds' differences: n rounds, their sum and sum of squares */
static void paired_finish(struct ab_row *row, unsigned np, double dsum, double dss)
{
	double mean = dsum / np, var = np > 1 ? (dss - np * mean * mean) / (np - 1) : NAN;

	row->pairs = np;
	snprintf(row->method, sizeof(row->method), "paired");
	ab_row_finish(row, mean, sqrt(fmax(var, 0) / np), np - 1);
}

/*
 * One metric: its boot means (log scale) by arm and round. Paired by round
 * where 2 or more rounds have both arms (each round's B mean minus its A
 * mean, t over rounds); else Welch over each arm's boots. The rounds'
 * differences into rds.
 */
static void metric_row(const struct results *r, const struct metric *m, struct ab_row *row, struct round_diffs *rds)
{
	struct boot_mean bm[BOOTS_MAX];
	double rs[2][AB_ROUNDS_MAX] = { { 0 } }, sum[2] = { 0, 0 }, ss[2] = { 0, 0 };
	unsigned rn[2][AB_ROUNDS_MAX] = { { 0 } }, n[2] = { 0, 0 };
	double dsum = 0, dss = 0, d, se, df;
	size_t nb, k;
	unsigned rd, np = 0;

	if (boots_group(m, bm, BOOTS_MAX, &nb)) {
		snprintf(row->note, sizeof(row->note), "a sample is not positive (no ratio)");
		return;
	}
	for (k = 0; k < nb; k++) {
		int a = boot_arm(r, bm[k].boot);
		unsigned round = bm[k].boot < r->nguests ? r->guests[bm[k].boot].round : AB_ROUNDS_MAX;

		if (a < 0)
			continue;
		sum[a] += bm[k].mean_log;
		n[a]++;
		if (round < AB_ROUNDS_MAX) {
			rs[a][round] += bm[k].mean_log;
			rn[a][round]++;
		}
	}
	row->boots_a = n[0];
	row->boots_b = n[1];
	if (n[0])
		row->a = exp(sum[0] / n[0]);
	if (n[1])
		row->b = exp(sum[1] / n[1]);
	for (rd = 0; rd < AB_ROUNDS_MAX; rd++)
		if (rn[0][rd] && rn[1][rd]) {
			double x = rs[1][rd] / rn[1][rd] - rs[0][rd] / rn[0][rd];

			np++;
			dsum += x;
			dss += x * x;
			rds->d[rd] = x;
			rds->have[rd] = true;
		}
	row->pairs = np;
	if (np >= 2) {
		paired_finish(row, np, dsum, dss);
		return;
	}
	if (n[0] < 2 || n[1] < 2) {
		snprintf(row->note, sizeof(row->note), "fewer than 2 boots of an arm (--boots=2 or more)");
		return;
	}
	for (k = 0; k < nb; k++) {
		int a = boot_arm(r, bm[k].boot);

		if (a >= 0)
			ss[a] += (bm[k].mean_log - sum[a] / n[a]) * (bm[k].mean_log - sum[a] / n[a]);
	}
	welch(sum[0] / n[0], ss[0] / (n[0] - 1) / n[0], n[0] - 1, sum[1] / n[1], ss[1] / (n[1] - 1) / n[1],
	      n[1] - 1, &d, &se, &df);
	snprintf(row->method, sizeof(row->method), "welch");
	ab_row_finish(row, d, se, df);
}

/* metric i of a cell, coverage included: n = nmetrics + 2 */
static const struct metric *metric_at(const struct cell *c, size_t i)
{
	if (i < c->nmetrics)
		return &c->metrics[i];
	return i == c->nmetrics ? &c->host_cov : &c->guest_cov;
}

static struct ab_row *add_row(struct abtest *out, const char *what)
{
	if (out->n >= AB_MAX_ROWS)
		return NULL;
	ab_row_init(&out->rows[out->n], what);
	return &out->rows[out->n++];
}

/*
 * A metric kind: one gated metric of one workload and variant over every
 * valid guest cell that has it (host and guest settings alike), each round's
 * difference the mean of its cells' differences: one answer per kind, with
 * the noise of each cell averaged out.
 */
#define AB_KINDS 16
struct kind {
	char workload[RES_NAME_MAX], variant[RES_NAME_MAX], metric[REC_KEY_MAX];
	unsigned cells;
	double la, lb;			/* sums of the cells' log geometric means */
	unsigned na, nb;
	double sum[AB_ROUNDS_MAX];
	unsigned n[AB_ROUNDS_MAX];
};

static struct kind *kind_of(struct kind *k, size_t *nk, const struct cell *c, const char *metric)
{
	size_t i;

	for (i = 0; i < *nk; i++)
		if (!strcmp(k[i].workload, c->workload) && !strcmp(k[i].variant, c->variant) &&
		    !strcmp(k[i].metric, metric))
			return &k[i];
	if (*nk >= AB_KINDS)
		return NULL;
	memset(&k[*nk], 0, sizeof(k[*nk]));
	snprintf(k[*nk].workload, sizeof(k[*nk].workload), "%s", c->workload);
	snprintf(k[*nk].variant, sizeof(k[*nk].variant), "%s", c->variant);
	snprintf(k[*nk].metric, sizeof(k[*nk].metric), "%s", metric);
	return &k[(*nk)++];
}

static void kind_add(struct kind *k, const struct ab_row *row, const struct round_diffs *rds)
{
	unsigned rd;

	k->cells++;
	if (isfinite(row->a) && row->a > 0) {
		k->la += log(row->a);
		k->na++;
	}
	if (isfinite(row->b) && row->b > 0) {
		k->lb += log(row->b);
		k->nb++;
	}
	for (rd = 0; rd < AB_ROUNDS_MAX; rd++)
		if (rds->have[rd]) {
			k->sum[rd] += rds->d[rd];
			k->n[rd]++;
		}
}

/* a kind's row: paired over the rounds in which every one of its cells had both arms */
static void kind_row(const struct kind *k, struct abtest *out)
{
	struct ab_row *row = add_row(out, "kind");
	double dsum = 0, dss = 0;
	unsigned rd, np = 0;

	if (!row)
		return;
	snprintf(row->label, sizeof(row->label), "%s%s%s: %u cell(s)", k->workload, k->variant[0] ? ":" : "",
		 k->variant, k->cells);
	snprintf(row->metric, sizeof(row->metric), "%s", k->metric);
	row->boots_a = k->na;
	row->boots_b = k->nb;
	if (k->na)
		row->a = exp(k->la / k->na);
	if (k->nb)
		row->b = exp(k->lb / k->nb);
	for (rd = 0; rd < AB_ROUNDS_MAX; rd++)
		if (k->n[rd] && k->n[rd] == k->cells) {
			double x = k->sum[rd] / k->n[rd];

			np++;
			dsum += x;
			dss += x * x;
		}
	if (np < 2) {
		row->pairs = np;
		snprintf(row->note, sizeof(row->note), "fewer than 2 rounds in which every cell booted both arms");
		return;
	}
	paired_finish(row, np, dsum, dss);
}

/*
 * Each gated metric (a direction, a primary metric: what `compare` gates) of
 * each valid guest cell, then each metric kind over its cells
 */
static void metric_rows(const struct results *r, struct abtest *out)
{
	struct kind *kinds = calloc(AB_KINDS, sizeof(*kinds));
	size_t i, j, nk = 0;

	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];

		if (strcmp(c->target, "guest"))
			continue;
		for (j = 0; j < c->nmetrics + 2; j++) {
			const struct metric *m = metric_at(c, j);
			struct ab_row *row;

			if (m->n == 0 || metric_direction(m->name, c) == DIR_INFO ||
			    !metric_is_primary(c->workload, m->name) || !(row = add_row(out, "metric")))
				continue;
			cell_label(c, row->label, sizeof(row->label));
			snprintf(row->metric, sizeof(row->metric), "%s", m->name);
			if (!c->valid) {
				snprintf(row->note, sizeof(row->note), "cell invalid: %.140s", c->invalid_reason);
			} else {
				struct round_diffs rds;
				struct kind *k = kinds ? kind_of(kinds, &nk, c, m->name) : NULL;

				memset(&rds, 0, sizeof(rds));
				metric_row(r, m, row, &rds);
				if (k)
					kind_add(k, row, &rds);
			}
		}
	}
	for (i = 0; i < nk; i++)
		kind_row(&kinds[i], out);
	free(kinds);
}

/*
 * A copy of r's cells whose samples are kept by keep(): arm 0 or 1 alone
 * (ratio < 0), or with ratio set, the B boots' samples divided by the
 * geometric mean of the A boots of the same cell and round: the split of
 * that model is each effect's B minus A, paired by round per host group.
 */
static void filter_metric(const struct results *r, const struct metric *src, struct metric *dst, int arm,
			  bool ratio)
{
	double as[AB_ROUNDS_MAX] = { 0 };
	unsigned an[AB_ROUNDS_MAX] = { 0 };
	size_t i;

	for (i = 0; ratio && i < src->n; i++) {
		unsigned b = src->boot[i];

		if (boot_arm(r, b) == 0 && r->guests[b].round < AB_ROUNDS_MAX && src->samples[i] > 0) {
			as[r->guests[b].round] += log(src->samples[i]);
			an[r->guests[b].round]++;
		}
	}
	dst->n = 0;
	for (i = 0; i < src->n; i++) {
		unsigned b = src->boot[i];
		unsigned rd;

		if (boot_arm(r, b) != arm)
			continue;
		if (!ratio) {
			dst->samples[dst->n] = src->samples[i];
		} else {
			rd = r->guests[b].round;
			if (rd >= AB_ROUNDS_MAX || !an[rd] || !(src->samples[i] > 0))
				continue;
			dst->samples[dst->n] = exp(log(src->samples[i]) - as[rd] / an[rd]);
		}
		dst->boot[dst->n++] = (uint16_t)b;
	}
}

static struct results *filtered(const struct results *r, int arm, bool ratio)
{
	struct results *f = malloc(sizeof(*f));
	size_t i, j;

	if (!f)
		return NULL;
	*f = *r;
	f->effects = NULL;
	f->ab = NULL;
	f->cells = malloc((r->ncells ? r->ncells : 1) * sizeof(*f->cells));
	if (!f->cells) {
		free(f);
		return NULL;
	}
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		struct cell *d = &f->cells[i];

		memcpy(d, c, offsetof(struct cell, metrics));
		for (j = 0; j < c->nmetrics; j++) {
			snprintf(d->metrics[j].name, sizeof(d->metrics[j].name), "%s", c->metrics[j].name);
			d->metrics[j].s = c->metrics[j].s;
			filter_metric(r, &c->metrics[j], &d->metrics[j], arm, ratio);
		}
		memcpy(&d->host_cov, &c->host_cov, sizeof(*c) - offsetof(struct cell, host_cov));
	}
	return f;
}

static void filtered_free(struct results *f)
{
	if (f)
		free(f->cells);
	free(f);
}

static bool same_effect(const struct effect *x, const struct effect *y)
{
	return !strcmp(x->workload, y->workload) && !strcmp(x->side, y->side) && !strcmp(x->component, y->component) &&
	       !strcmp(x->metric, y->metric) && !strcmp(x->host_thp, y->host_thp) &&
	       !strcmp(x->guest_thp, y->guest_thp) && !strcmp(x->at_guest, y->at_guest) &&
	       !strcmp(x->host_state, y->host_state);
}

/* "host tlb memset access_ns, host always guest always (at guest never)" */
static void effect_label(const struct effect *x, char *buf, size_t len)
{
	snprintf(buf, len, "%s %s %s, host %s guest %s%s%s%s%s%s", x->side, x->component, x->workload, x->host_thp,
		 x->guest_thp, x->at_guest[0] ? " (at guest " : "", x->at_guest, x->at_guest[0] ? ")" : "",
		 strcmp(x->host_state, "fresh") ? " host " : "", strcmp(x->host_state, "fresh") ? x->host_state : "");
}

/* each split effect of arm A, B and of the paired B/A model */
static void effect_rows(const struct effects *fa, const struct effects *fb, const struct effects *fr,
			struct abtest *out)
{
	size_t i;

	for (i = 0; i < fa->n && i < fb->n; i++) {
		const struct effect *ea = &fa->e[i], *eb = &fb->e[i];
		const struct effect *er = i < fr->n && same_effect(&fr->e[i], ea) ? &fr->e[i] : NULL;
		struct ab_row *row;

		if (!same_effect(ea, eb) || !(row = add_row(out, "effect")))
			continue;
		effect_label(ea, row->label, sizeof(row->label));
		snprintf(row->metric, sizeof(row->metric), "%s", ea->metric);
		row->boots_a = ea->boots_min;
		row->boots_b = eb->boots_min;
		if (ea->available)
			row->a = ea->estimate_pct;
		if (eb->available)
			row->b = eb->estimate_pct;
		if (er && er->available && er->boots_min >= 2) {
			row->pairs = er->boots_min;
			snprintf(row->method, sizeof(row->method), "paired");
			ab_row_finish(row, er->log_est, er->log_se, er->df);
		} else if (ea->available && eb->available && !strcmp(ea->method, "boots") &&
			   !strcmp(eb->method, "boots")) {
			double d, se, df;

			welch(ea->log_est, ea->log_se * ea->log_se, ea->df, eb->log_est, eb->log_se * eb->log_se,
			      eb->df, &d, &se, &df);
			snprintf(row->method, sizeof(row->method), "welch");
			ab_row_finish(row, d, se, df);
		} else {
			snprintf(row->note, sizeof(row->note), "%.150s", !ea->available ? ea->note :
				 !eb->available ? eb->note : "one boot per arm: no interval over boots");
		}
	}
}

int abtest_compute(const struct results *r, struct abtest *out, struct err *e)
{
	struct results *fa = NULL, *fb = NULL, *fr = NULL;
	struct effects *xa = NULL, *xb = NULL, *xr = NULL;
	const char *comma = strchr(r->settings.emulator, ',');
	int rc = 0;

	memset(out, 0, sizeof(*out));
	snprintf(out->axis, sizeof(out->axis), "emulator");
	snprintf(out->a, sizeof(out->a), "%.*s", comma ? (int)(comma - r->settings.emulator) : 0, r->settings.emulator);
	snprintf(out->b, sizeof(out->b), "%s", comma ? comma + 1 : "");
	if (!abtest_applies(r))
		return 0;
	metric_rows(r, out);
	fa = filtered(r, 0, false);
	fb = filtered(r, 1, false);
	fr = filtered(r, 1, true);
	xa = malloc(sizeof(*xa));
	xb = malloc(sizeof(*xb));
	xr = malloc(sizeof(*xr));
	if (!fa || !fb || !fr || !xa || !xb || !xr) {
		rc = err_set(e, -ENOMEM, "out of memory comparing emulator B with A");
		goto out;
	}
	effects_compute(fa, xa);
	effects_compute(fb, xb);
	effects_compute(fr, xr);
	effect_rows(xa, xb, xr, out);
	out->kinds_differ = ab_holm(out, "kind", &out->kinds_tested);
	out->metrics_differ = ab_holm(out, "metric", &out->metrics_tested);
	out->effects_differ = ab_holm(out, "effect", &out->effects_tested);
out:
	filtered_free(fa);
	filtered_free(fb);
	filtered_free(fr);
	free(xa);
	free(xb);
	free(xr);
	return rc;
}

int abtest_attach(struct results *r, struct err *e)
{
	/* the KSM arm's on-against-off comparison travels with the A/B one */
	int rc = ksmfx_attach(r, e);

	if (rc)
		return rc;
	if (!abtest_applies(r)) {
		free(r->ab);
		r->ab = NULL;
		return 0;
	}
	if (!r->ab)
		r->ab = malloc(sizeof(*r->ab));
	if (!r->ab)
		return err_set(e, -ENOMEM, "out of memory comparing emulator B with A");
	return abtest_compute(r, r->ab, e);
}
