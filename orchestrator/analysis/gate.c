#include "orchestrator/analysis/gate.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array.h"
#include "lib/stats.h"
#include "lib/wltraits.h"
#include "orchestrator/analysis/boots.h"

static const char *const verdict_names[] = {
	[GATE_V_OK] = "ok",
	[GATE_V_SUSPECT] = "suspect",
	[GATE_V_REGRESSION] = "regression",
	[GATE_V_NO_HISTORY] = "no-history",
};
_Static_assert(ARRAY_SIZE(verdict_names) == GATE_V__COUNT, "verdict_names");

const char *gate_verdict_name(enum gate_verdict v)
{
	return (unsigned)v < GATE_V__COUNT ? verdict_names[v] : "?";
}

int gate_verdict_parse(const char *s, enum gate_verdict *v)
{
	size_t i;

	for (i = 0; i < GATE_V__COUNT; i++)
		if (!strcmp(s, verdict_names[i])) {
			*v = (enum gate_verdict)i;
			return 0;
		}
	return -EINVAL;
}

int gate_fail_on_parse(const char *s, enum gate_fail_on *f, struct err *e)
{
	if (!strcmp(s, "regression"))
		*f = GATE_FAIL_ON_REGRESSION;
	else if (!strcmp(s, "suspect"))
		*f = GATE_FAIL_ON_SUSPECT;
	else
		return err_set(e, -EINVAL, "'%.40s' is not a verdict to fail on: use regression or suspect", s);
	return 0;
}

/* ---- a run's points ---------------------------------------------------------------- */

/* a cell's mean of ln(value) and its variance: over boots (2 or more), else over repetitions */
static int cell_logmean(const struct metric *m, double *mean, double *var, size_t *nboots)
{
	struct boot_mean b[BOOTS_MAX];
	double sum = 0, ss = 0;
	size_t nb = 0, k;

	if (boots_group(m, b, BOOTS_MAX, &nb) == 0 && nb >= 2) {
		for (k = 0; k < nb; k++)
			sum += b[k].mean_log;
		*mean = sum / (double)nb;
		for (k = 0; k < nb; k++)
			ss += (b[k].mean_log - *mean) * (b[k].mean_log - *mean);
		*var = ss / (double)(nb - 1) / (double)nb;
		*nboots = nb;
		return 0;
	}
	if (m->n < 2)
		return -EDOM;
	for (k = 0; k < m->n; k++) {
		if (!(m->samples[k] > 0) || !isfinite(m->samples[k]))
			return -EDOM;
		sum += log(m->samples[k]);
	}
	*mean = sum / (double)m->n;
	for (k = 0; k < m->n; k++)
		ss += (log(m->samples[k]) - *mean) * (log(m->samples[k]) - *mean);
	*var = ss / (double)(m->n - 1) / (double)m->n;
	*nboots = 1;
	return 0;
}

static void kind_name(const struct cell *c, const char *metric, char *buf, size_t len)
{
	bool cold = wltraits_cold(c->workload, c->variant);
	bool state = c->host_state[0] && strcmp(c->host_state, "fresh");
	bool balloon = c->balloon[0] && strcmp(c->balloon, "none");
	int n = snprintf(buf, len, "%s%s%s %s%s%s%s%s", c->workload, cold ? ":" : "", cold ? c->variant : "", metric,
			 state ? " host=" : "", state ? c->host_state : "", balloon ? " balloon=" : "",
			 balloon ? c->balloon : "");

	if (n < 0 || (size_t)n >= len)
		buf[len - 1] = '\0';
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

struct kind_acc {
	char kind[GATE_KIND_LEN];
	enum metric_dir dir;
	double sum, var;
	unsigned ncells;
	uint64_t cells;			/* sum of the cells' label hashes: the same whatever their order */
	uint8_t seen[65536 / 8];	/* boots behind it */
};

static struct kind_acc *acc_find(struct kind_acc **v, size_t *n, const char *kind, struct err *e)
{
	struct kind_acc *p;
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*v)[i].kind, kind))
			return &(*v)[i];
	p = realloc(*v, (*n + 1) * sizeof(**v));
	if (!p) {
		err_set(e, -ENOMEM, "out of memory computing the gate's points");
		return NULL;
	}
	*v = p;
	p = &(*v)[(*n)++];
	memset(p, 0, sizeof(*p));
	snprintf(p->kind, sizeof(p->kind), "%s", kind);
	return p;
}

static int add_cell_metric(struct kind_acc **acc, size_t *nacc, const struct cell *c, const struct metric *m,
			   struct err *e)
{
	char kind[GATE_KIND_LEN], label[CELL_LABEL_MAX];
	enum metric_dir dir = metric_direction(m->name, c);
	struct kind_acc *a;
	double mean, var;
	size_t nb, k;

	if (dir == DIR_INFO || !wltraits_primary(c->workload, m->name) || cell_logmean(m, &mean, &var, &nb))
		return 0;
	kind_name(c, m->name, kind, sizeof(kind));
	if (!(a = acc_find(acc, nacc, kind, e)))
		return -ENOMEM;
	a->dir = dir;
	a->sum += mean;
	a->var += var;
	a->ncells++;
	cell_label(c, label, sizeof(label));
	a->cells += fnv1a(label);
	for (k = 0; k < m->n; k++)
		a->seen[m->boot[k] / 8] |= (uint8_t)(1u << (m->boot[k] % 8));
	return 0;
}

int gate_points_compute(const struct results *r, struct gate_points *out, struct err *e)
{
	struct kind_acc *acc = NULL;
	size_t nacc = 0, i, j, b;

	memset(out, 0, sizeof(*out));
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];

		if (!c->valid)
			continue;
		for (j = 0; j < c->nmetrics; j++)
			if (add_cell_metric(&acc, &nacc, c, &c->metrics[j], e)) {
				free(acc);
				return e->code;
			}
	}
	if (nacc && !(out->v = calloc(nacc, sizeof(*out->v)))) {
		free(acc);
		return err_set(e, -ENOMEM, "out of memory computing the gate's points");
	}
	for (i = 0; i < nacc; i++) {
		struct gate_point *p = &out->v[i];
		const struct kind_acc *a = &acc[i];

		snprintf(p->kind, sizeof(p->kind), "%s", a->kind);
		p->dir = a->dir;
		p->ncells = a->ncells;
		p->mean_log = a->sum / a->ncells;
		p->se_log = sqrt(a->var) / a->ncells;
		for (b = 0; b < sizeof(a->seen); b++)
			p->boots += (unsigned)__builtin_popcount(a->seen[b]);
		snprintf(p->cells_key, sizeof(p->cells_key), "%016llx", (unsigned long long)a->cells);
	}
	out->n = nacc;
	free(acc);
	return 0;
}

void gate_points_release(struct gate_points *p)
{
	if (!p)
		return;
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

const struct gate_point *gate_points_find(const struct gate_points *p, const char *kind, const char *cells_key)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].kind, kind) && !strcmp(p->v[i].cells_key, cells_key))
			return &p->v[i];
	return NULL;
}

/* ---- the tests --------------------------------------------------------------------- */

/* the smallest squared standard error taken: a run whose boots agree exactly is not infinitely precise */
#define SE2_FLOOR 1e-12


/*
 * DerSimonian-Laird over k runs: w = 1/se^2, Q = sum w (y - y_w)^2,
 * tau^2 = max(0, (Q - (k - 1)) / (sum w - sum w^2 / sum w)); then the
 * random-effects mean with weights 1/(se^2 + tau^2) and its variance.
 */
static void dersimonian_laird(const double *y, const double *se, size_t k, struct re_pool *f)
{
	double sw = 0, sw2 = 0, swy = 0, yw, q = 0, c, sws = 0, swsy = 0;
	size_t i;

	for (i = 0; i < k; i++) {
		double w = 1 / fmax(se[i] * se[i], SE2_FLOOR);

		sw += w;
		sw2 += w * w;
		swy += w * y[i];
	}
	yw = swy / sw;
	for (i = 0; i < k; i++)
		q += (y[i] - yw) * (y[i] - yw) / fmax(se[i] * se[i], SE2_FLOOR);
	c = sw - sw2 / sw;
	f->tau2 = c > 0 ? fmax(0, (q - (double)(k - 1)) / c) : 0;
	for (i = 0; i < k; i++) {
		double w = 1 / (fmax(se[i] * se[i], SE2_FLOOR) + f->tau2);

		sws += w;
		swsy += w * y[i];
	}
	f->mu = swsy / sws;
	f->var_mu = 1 / sws;
	f->q = q;
}

void gate_re_pool(const double *y, const double *se, size_t k, struct re_pool *out)
{
	dersimonian_laird(y, se, k, out);
}

/* P(T > t) with df (INFINITY: the normal) */
static double upper_p(double t, double df)
{
	if (isnan(t))
		return NAN;
	if (isinf(t))
		return t > 0 ? 0 : 1;
	return t_cdf(-t, df);
}

/*
 * The p of "worse" for a change bad (> 0: worse) with its SD: one-sided
 * against no change, and 1 unless the change is beyond the threshold lim (the
 * smallest change that counts; the test says whether it is more than drift).
 */
static double worse_p(double bad, double lim, double sd, double df)
{
	if (!(bad > lim))
		return 1;
	return sd > 0 ? upper_p(bad / sd, df) : 0;
}

void gate_result_init(struct gate_result *g, const struct gate_opts *o)
{
	memset(g, 0, sizeof(*g));
	g->threshold_pct = o->threshold_pct;
	g->k = o->k;
	g->fail_on = o->fail_on;
	g->verdict = GATE_V_NO_HISTORY;
}

void gate_result_release(struct gate_result *g)
{
	if (!g)
		return;
	free(g->kinds);
	g->kinds = NULL;
	g->n = g->cap = 0;
}

/* the suspect test: this run against the K runs before it */
static void test_suspect(struct gate_kind *k, const struct gate_opts *o, const double *y, const double *se, size_t n)
{
	double sign = k->cur.dir == DIR_HIGHER ? -1 : 1, lim = log1p(o->threshold_pct / 100.0);
	size_t nk = n < o->k ? n : o->k;
	struct re_pool f;
	double sd, d, df;

	dersimonian_laird(y + n - nk, se + n - nk, nk, &f);
	df = o->normal ? INFINITY : (double)(nk - 1);
	k->nk = nk;
	k->tau = sqrt(f.tau2);
	d = k->cur.mean_log - f.mu;
	sd = sqrt(k->cur.se_log * k->cur.se_log + f.tau2 + f.var_mu);
	k->change_pct = expm1(d) * 100.0;
	k->lo_pct = expm1(d - t975(df) * sd) * 100.0;
	k->hi_pct = expm1(d + t975(df) * sd) * 100.0;
	k->p_suspect = worse_p(sign * d, lim, sd, df);
}

/* the regression test: the newest GATE_NEWEST runs' mean against the K runs before them */
static void test_regression(struct gate_kind *k, const struct gate_opts *o, const double *y, const double *se,
			    size_t n)
{
	double sign = k->cur.dir == DIR_HIGHER ? -1 : 1, lim = log1p(o->threshold_pct / 100.0);
	size_t before = n - (GATE_NEWEST - 1), nk = before < o->k ? before : o->k, i, nbeyond = 0;
	double m3 = k->cur.mean_log, v3 = k->cur.se_log * k->cur.se_log, sd, d, df;
	struct re_pool f;

	for (i = n - (GATE_NEWEST - 1); i < n; i++) {
		m3 += y[i];
		v3 += se[i] * se[i];
	}
	m3 /= GATE_NEWEST;
	v3 /= GATE_NEWEST * GATE_NEWEST;
	dersimonian_laird(y + before - nk, se + before - nk, nk, &f);
	df = o->normal ? INFINITY : (double)(nk - 1);
	k->nk_reg = nk;
	d = m3 - f.mu;
	sd = sqrt(f.tau2 / GATE_NEWEST + v3 + f.var_mu);
	k->change3_pct = expm1(d) * 100.0;
	/*
	 * Sustained, and this run's: the current run and one more of the newest
	 * are beyond the threshold themselves, so one outlier is a suspect only.
	 */
	for (i = n - (GATE_NEWEST - 1); i < n; i++)
		nbeyond += sign * (y[i] - f.mu) > lim;
	if (!(sign * (k->cur.mean_log - f.mu) > lim) || nbeyond < 1)
		k->p_regression = 1;
	else
		k->p_regression = worse_p(sign * d, lim, sd, df);
}

int gate_add_kind(struct gate_result *g, const struct gate_opts *o, const struct gate_point *cur,
		  const double *y, const double *se, size_t nhist, struct err *e)
{
	struct gate_kind *k;

	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct gate_kind *p = realloc(g->kinds, cap * sizeof(*p));

		if (!p)
			return err_set(e, -ENOMEM, "out of memory gating the run");
		g->kinds = p;
		g->cap = cap;
	}
	k = &g->kinds[g->n++];
	memset(k, 0, sizeof(*k));
	k->cur = *cur;
	k->nhist = nhist;
	k->tau = k->change_pct = k->lo_pct = k->hi_pct = k->change3_pct = NAN;
	k->p_suspect = k->p_regression = k->holm_suspect = k->holm_regression = NAN;
	k->verdict = GATE_V_NO_HISTORY;
	if (nhist < GATE_MIN_K)
		return 0;
	test_suspect(k, o, y, se, nhist);
	if (nhist >= GATE_MIN_K + GATE_NEWEST - 1)
		test_regression(k, o, y, se, nhist);
	return 0;
}

/* Holm's step-down over the kinds' finite p's at field offset: adjusted p into the hfield */
static void holm(struct gate_result *g, size_t off, size_t hoff)
{
	size_t idx[256], m = 0, i, j;
	double run = 0;

#define P_AT(i) (*(double *)((char *)&g->kinds[i] + off))
	for (i = 0; i < g->n && m < ARRAY_SIZE(idx); i++)
		if (isfinite(P_AT(i)))
			idx[m++] = i;
	for (i = 1; i < m; i++)
		for (j = i; j > 0 && P_AT(idx[j]) < P_AT(idx[j - 1]); j--) {
			size_t t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	for (i = 0; i < m; i++) {
		run = fmax(run, fmin(1.0, (double)(m - i) * P_AT(idx[i])));
		*(double *)((char *)&g->kinds[idx[i]] + hoff) = run;
	}
#undef P_AT
}

void gate_finish(struct gate_result *g)
{
	size_t i;

	holm(g, offsetof(struct gate_kind, p_suspect), offsetof(struct gate_kind, holm_suspect));
	holm(g, offsetof(struct gate_kind, p_regression), offsetof(struct gate_kind, holm_regression));
	g->nok = g->nsuspect = g->nregression = g->nnohistory = 0;
	for (i = 0; i < g->n; i++) {
		struct gate_kind *k = &g->kinds[i];

		if (k->nhist < GATE_MIN_K)
			k->verdict = GATE_V_NO_HISTORY;
		else if (k->holm_regression < GATE_ALPHA)
			k->verdict = GATE_V_REGRESSION;
		else if (k->holm_suspect < GATE_ALPHA)
			k->verdict = GATE_V_SUSPECT;
		else
			k->verdict = GATE_V_OK;
		g->nok += k->verdict == GATE_V_OK;
		g->nsuspect += k->verdict == GATE_V_SUSPECT;
		g->nregression += k->verdict == GATE_V_REGRESSION;
		g->nnohistory += k->verdict == GATE_V_NO_HISTORY;
	}
	g->verdict = g->nregression ? GATE_V_REGRESSION : g->nsuspect ? GATE_V_SUSPECT :
		     g->nok ? GATE_V_OK : GATE_V_NO_HISTORY;
}

bool gate_failed(const struct gate_result *g)
{
	return g->nregression > 0 || (g->fail_on == GATE_FAIL_ON_SUSPECT && g->nsuspect > 0);
}
