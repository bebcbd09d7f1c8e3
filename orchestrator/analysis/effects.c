#include "orchestrator/analysis/effects.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/thp.h"
#include "lib/stats.h"
#include "lib/wltraits.h"

double effect_pct(double d)
{
	return (1.0 - exp(-d)) * 100.0;
}

double mde_pct(double cv_pct, size_t n)
{
	/* (t_.975 + t_.80) * sqrt(2/n) * cv; t_.80 ~ 0.84 for large df, larger for small */
	double t80 = n > 30 ? 0.842 : 0.9;

	if (n < 2 || !isfinite(cv_pct))
		return NAN;
	return (t95(2 * n - 2) + t80) * sqrt(2.0 / (double)n) * cv_pct;
}

static const char *cell_state(const struct cell *c)
{
	return c->host_state[0] ? c->host_state : "fresh";
}

/* the split is the guests' without a balloon; the reporting arm is analysis/balloon.c's */
static bool cell_no_balloon(const struct cell *c)
{
	return !c->balloon[0] || !strcmp(c->balloon, "none");
}

static const struct cell *find_v(const struct results *r, const char *hs, const char *w, const char *host,
				 const char *pf, const char *guest, const char *variant)
{
	size_t i;

	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];

		if (!strcmp(c->target, "guest") && !strcmp(c->workload, w) && !strcmp(c->variant, variant) &&
		    !strcmp(c->host_thp, host) && !strcmp(c->prefault, pf) && !strcmp(c->guest_thp, guest) &&
		    !strcmp(cell_state(c), hs) && cell_no_balloon(c))
			return c;
	}
	return NULL;
}

const struct cell *effects_find(const struct results *r, const char *hs, const char *w, const char *variant,
				const char *host, const char *pf, const char *guest)
{
	return find_v(r, hs, w, host, pf, guest, variant);
}

/* within a host state */
#define find(r, w, host, pf, guest, variant) find_v(r, hs, w, host, pf, guest, variant)

static bool has_prefault(const struct results *r, const char *hs, const char *w, const char *pf,
			 const char *variant)
{
	return find(r, w, "never", pf, "never", variant) != NULL;
}

/* C: the variant of the workload's host-cold series (NULL: none) */
static bool has_cold(const struct results *r, const char *hs, const char *w, const char *C, const char *host,
		     const char *pf, const char *guest)
{
	return C && find(r, w, "never", pf, guest, C) && find(r, w, host, pf, guest, C);
}

/*
 * One arm of a contrast: the boots of one host group (host setting x
 * allocation). Each boot gives q_b = sum of a_j * (mean log time of cell j in
 * that boot) over the arm's cells, which share the boot; the arm's value is
 * the mean of q_b over its boots, weighted w in the contrast.
 */
struct arm_cell {
	const char *guest;
	const char *variant;		/* NULL: the contrast's base variant */
	double a;
};

struct arm {
	const char *host, *pf;
	double w;
	struct arm_cell c[2];
	size_t nc;
};

/* what one arm contributes: its mean, the variance of that mean, its df */
struct arm_est {
	double mean, var, df;
	size_t boots;
	double within_var, within_dfden;	/* one boot: from the repetitions inside it */
	bool within_ok;
	size_t nq;
	double q[BOOTS_MAX];			/* the arm's value in each of its boots */
	unsigned qboot[BOOTS_MAX];		/* and that boot's id */
};

static int arm_estimate(const struct results *r, struct effect *e, const struct arm *arm, const char *basevar,
			struct arm_est *out)
{
	struct boot_mean bm[2][BOOTS_MAX];
	size_t nb[2], j, k, nq = 0;
	double q[BOOTS_MAX], sum = 0, ss = 0, mean;
	const char *hs = e->host_state;

	memset(out, 0, sizeof(*out));
	for (j = 0; j < arm->nc; j++) {
		const char *var = arm->c[j].variant ? arm->c[j].variant : basevar;
		const struct cell *c = find(r, e->workload, arm->host, arm->pf, arm->c[j].guest, var);
		const struct metric *m;

		if (!c) {
			snprintf(e->note, sizeof(e->note), "cell host=%s/%s guest=%s%s%s was not run", arm->host,
				 arm->pf, arm->c[j].guest, *var ? " " : "", var);
			return -ENOENT;
		}
		if (!c->valid) {
			snprintf(e->note, sizeof(e->note), "cell host=%s/%s guest=%s is invalid: %.150s", arm->host,
				 arm->pf, arm->c[j].guest, c->invalid_reason);
			return -EINVAL;
		}
		m = cell_metric_find(c, e->metric);
		if (!m || m->n == 0) {
			snprintf(e->note, sizeof(e->note), "cell host=%s/%s guest=%s has no sample of %s", arm->host,
				 arm->pf, arm->c[j].guest, e->metric);
			return -ENODATA;
		}
		if (boots_group(m, bm[j], BOOTS_MAX, &nb[j])) {
			snprintf(e->note, sizeof(e->note), "cell host=%s/%s guest=%s has a %s sample that is not "
				 "positive (no ratio)", arm->host, arm->pf, arm->c[j].guest, e->metric);
			return -EDOM;
		}
	}
	/* the boots every cell of the arm ran in: the within-boot quantity */
	for (k = 0; k < nb[0]; k++) {
		double v = arm->c[0].a * bm[0][k].mean_log;
		double wv = arm->c[0].a * arm->c[0].a * bm[0][k].var_log / (double)bm[0][k].n;
		double wd = bm[0][k].n > 1 ? wv * wv / (double)(bm[0][k].n - 1) : NAN;

		for (j = 1; j < arm->nc; j++) {
			const struct boot_mean *b = boots_find(bm[j], nb[j], bm[0][k].boot);
			double x;

			if (!b)
				break;
			v += arm->c[j].a * b->mean_log;
			x = arm->c[j].a * arm->c[j].a * b->var_log / (double)b->n;
			wv += x;
			wd += b->n > 1 ? x * x / (double)(b->n - 1) : NAN;
		}
		if (j < arm->nc)
			continue;
		out->qboot[nq] = bm[0][k].boot;
		q[nq++] = v;
		out->within_var = wv;
		out->within_dfden = wd;
	}
	if (nq == 0) {
		snprintf(e->note, sizeof(e->note), "no boot of host %s/%s ran every cell the contrast needs",
			 arm->host, arm->pf);
		return -ENODATA;
	}
	for (k = 0; k < nq; k++)
		sum += q[k];
	mean = sum / (double)nq;
	for (k = 0; k < nq; k++)
		ss += (q[k] - mean) * (q[k] - mean);
	out->mean = mean;
	out->boots = nq;
	out->nq = nq;
	memcpy(out->q, q, nq * sizeof(q[0]));
	if (nq >= 2) {
		out->var = ss / (double)(nq - 1) / (double)nq;
		out->df = (double)(nq - 1);
	} else {
		out->var = NAN;
		out->within_ok = isfinite(out->within_var) && isfinite(out->within_dfden);
	}
	return 0;
}

/* the round a boot ran in (results.guests); false when the results do not say */
static bool boot_round(const struct results *r, unsigned boot, unsigned *round)
{
	if (boot >= r->nguests)
		return false;
	*round = r->guests[boot].round;
	return true;
}

/* arm k's mean value over its boots in round rd; false when it had none there */
static bool arm_in_round(const struct results *r, const struct arm_est *a, unsigned rd, double *v)
{
	double sum = 0;
	size_t i, n = 0;
	unsigned b;

	for (i = 0; i < a->nq; i++)
		if (boot_round(r, a->qboot[i], &b) && b == rd) {
			sum += a->q[i];
			n++;
		}
	if (n)
		*v = sum / (double)n;
	return n > 0;
}

/*
 * The contrast per round, in the rounds where every arm ran (each round
 * boots each host setting once, ABBA): dr[] and their count; -1 when a boot
 * has no round in the results.
 */
static int round_contrasts(const struct results *r, const struct arm *arms, const struct arm_est *est, size_t n,
			   double *dr, size_t max)
{
	size_t i, j, k, nr = 0;
	unsigned rd, seen[BOOTS_MAX];

	for (i = 0; i < est[0].nq; i++) {
		double d = 0, v;

		if (!boot_round(r, est[0].qboot[i], &rd))
			return -1;
		for (j = 0; j < nr && seen[j] != rd; j++)
			;
		if (j < nr || nr >= max)
			continue;
		for (k = 0; k < n && arm_in_round(r, &est[k], rd, &v); k++)
			d += arms[k].w * v;
		if (k < n)
			continue;	/* incomplete: not a block */
		seen[nr] = rd;
		dr[nr++] = d;
	}
	return (int)nr;
}

/*
 * Rounds as blocks, method of moments: the rounds' shared drift q_kr = m_k +
 * u_r + e_kr cancels in a contrast (sum w_k = 0) taken inside each round, so
 * the per-round contrasts D_r give the variance s_D^2 / R with R - 1 df. The
 * round variance component is (sum w_k^2 s_k^2 - s_D^2) / sum w_k^2, the
 * round correlation 1 - s_D^2 / sum w_k^2 s_k^2 (s_k^2: arm k's variance over
 * boots). The blocked estimate is taken where that component is above 0;
 * else it is truncated at 0 and the unpaired variance (Welch's) stays, with
 * the blocked df, since the rounds chose it. So the interval is never wider
 * than Welch's beyond the t quantile of the fewer df (doc/method.md).
 */
static void eval_rounds(const struct results *r, struct effect *e, const struct arm *arms,
			const struct arm_est *est, size_t n, double *d, double *var, double *df)
{
	double dr[BOOTS_MAX], mean = 0, ss = 0, sw2 = 0, sws = 0, sd2;
	int nr = round_contrasts(r, arms, est, n, dr, BOOTS_MAX);
	size_t k;

	e->log_se_unpaired = sqrt(*var);
	e->df_unpaired = *df;
	snprintf(e->round_estimator, sizeof(e->round_estimator), "unpaired");
	if (nr < 0) {
		snprintf(e->round_note, sizeof(e->round_note), "the results do not say which round each boot ran in");
		return;
	}
	e->rounds = (unsigned)nr;
	if (nr < 3) {
		snprintf(e->round_note, sizeof(e->round_note), "%d complete round%s: too few to estimate the round "
			 "component", nr, nr == 1 ? "" : "s");
		return;
	}
	for (k = 0; k < (size_t)nr; k++)
		mean += dr[k];
	mean /= nr;
	for (k = 0; k < (size_t)nr; k++)
		ss += (dr[k] - mean) * (dr[k] - mean);
	sd2 = ss / (nr - 1);
	for (k = 0; k < n; k++) {
		sw2 += arms[k].w * arms[k].w;
		sws += arms[k].w * arms[k].w * est[k].var * (double)est[k].boots;
	}
	if (!(sws > 0))
		return;
	e->round_corr = 1 - sd2 / sws;
	e->round_var = e->round_corr > 0 ? (sws - sd2) / sw2 : 0;
	if (e->round_corr <= 0) {
		/* the choice was made from these rounds: the df stay the blocked design's */
		snprintf(e->round_note, sizeof(e->round_note), "rounds do not correlate (component 0): boots "
			 "unpaired, on the %d rounds' df", nr);
		*df = (double)(nr - 1);
		return;
	}
	snprintf(e->round_estimator, sizeof(e->round_estimator), "paired by round");
	snprintf(e->round_note, sizeof(e->round_note), "%d rounds as blocks", nr);
	*d = mean;
	*var = sd2 / nr;
	*df = (double)(nr - 1);
}

/*
 * The contrast sum(w_k * arm_k) of log times: Welch over boots with
 * Satterthwaite's df; a single arm with one boot uses the repetitions inside
 * that boot (method "one-boot"); host-side contrasts (two or more arms) need
 * two boots in every arm.
 */
static void eval_arms(const struct results *r, struct effect *e, const struct arm *arms, size_t n,
		      const char *basevar)
{
	struct arm_est est[4];
	double d = 0, var = 0, dfden = 0, df, half, t;
	size_t k;

	if (!e)
		return;
	e->boots_min = UINT16_MAX;
	for (k = 0; k < n; k++) {
		if (arm_estimate(r, e, &arms[k], basevar, &est[k]))
			return;
		if (est[k].boots < e->boots_min)
			e->boots_min = (unsigned)est[k].boots;
	}
	if (n == 1 && est[0].boots == 1) {
		if (!est[0].within_ok) {
			snprintf(e->note, sizeof(e->note), "one boot with fewer than 2 repetitions per cell: "
				 "no interval (--reps or --boots)");
			return;
		}
		d = arms[0].w * est[0].mean;
		var = est[0].within_var;
		dfden = est[0].within_dfden;
		snprintf(e->method, sizeof(e->method), "one-boot");
		snprintf(e->note, sizeof(e->note), "one boot: its repetitions are the samples, so boot-to-boot "
			 "variation is not in the interval (--boots=2 or more)");
	} else {
		for (k = 0; k < n; k++) {
			double v;

			if (est[k].boots < 2) {
				snprintf(e->note, sizeof(e->note), "host %s/%s ran %zu boot: %s effects replicate over "
					 "boots and need 2 or more per host setting (--boots)", arms[k].host,
					 arms[k].pf, est[k].boots, n > 1 ? "host-side" : "guest-side");
				return;
			}
			v = arms[k].w * arms[k].w * est[k].var;
			d += arms[k].w * est[k].mean;
			var += v;
			dfden += v * v / est[k].df;
		}
		snprintf(e->method, sizeof(e->method), "boots");
	}
	df = dfden > 0 ? var * var / dfden : 1e9;
	if (n > 1 && !strcmp(e->method, "boots"))	/* host-side: rounds as blocks where they correlate */
		eval_rounds(r, e, arms, est, n, &d, &var, &df);
	e->df = df;
	t = t975(e->df);
	half = t * sqrt(var);
	e->log_est = d;
	e->log_se = sqrt(var);
	e->estimate_pct = effect_pct(d);
	e->ci95_low_pct = effect_pct(d - half);
	e->ci95_high_pct = effect_pct(d + half);
	e->available = true;
	e->significant = d - half > 0 || d + half < 0;
}

static struct effect *new_effect(struct effects *fx, const char *hs, const char *w, const char *side,
				 const char *comp, const char *metric, const char *host, const char *guest,
				 const char *at_guest)
{
	struct effect *e;

	if (fx->n >= EFFECTS_MAX)
		return NULL;
	e = &fx->e[fx->n++];
	memset(e, 0, sizeof(*e));
	snprintf(e->workload, sizeof(e->workload), "%s", w);
	snprintf(e->side, sizeof(e->side), "%s", side);
	snprintf(e->component, sizeof(e->component), "%s", comp);
	snprintf(e->metric, sizeof(e->metric), "%s", metric);
	snprintf(e->host_thp, sizeof(e->host_thp), "%s", host);
	snprintf(e->guest_thp, sizeof(e->guest_thp), "%s", guest);
	snprintf(e->at_guest, sizeof(e->at_guest), "%s", at_guest ? at_guest : "");
	snprintf(e->host_state, sizeof(e->host_state), "%s", hs);
	e->estimate_pct = e->ci95_low_pct = e->ci95_high_pct = e->df = e->share_pct = NAN;
	e->log_est = e->log_se = NAN;
	e->round_corr = e->round_var = e->log_se_unpaired = e->df_unpaired = NAN;
	return e;
}

/*
 * host prefault at guest setting G: host THP's effect on the guest's first
 * touch of memory the host never backed (the host-cold cells, variant C: the
 * host faults inside the window) beyond what it does where the host no longer
 * faults: with QEMU preallocating (immediate) or, with one allocation mode,
 * on host-warm memory
 */
static void host_prefault(const struct results *r, struct effects *fx, const char *hs, const char *w,
			  const char *V, const char *F, const char *C, const char *X, const char *Y, const char *G)
{
	bool both = has_prefault(r, hs, w, "ondemand", V) && has_prefault(r, hs, w, "immediate", V);
	struct effect *e = new_effect(fx, hs, w, "host", "prefault", F ? F : "", X, Y, G);

	if (!e)
		return;
	if (!F) {
		snprintf(e->note, sizeof(e->note), "%s times no fault phase", w);
	} else if (both && has_cold(r, hs, w, C, X, "ondemand", G) && has_cold(r, hs, w, C, X, "immediate", G)) {
		const struct arm a[] = {
			{ "never", "ondemand", 1, { { G, C, 1 } }, 1 },
			{ X, "ondemand", -1, { { G, C, 1 } }, 1 },
			{ "never", "immediate", -1, { { G, C, 1 } }, 1 },
			{ X, "immediate", 1, { { G, C, 1 } }, 1 },
		};

		eval_arms(r, e, a, 4, V);
		if (e->available)
			snprintf(e->note, sizeof(e->note), "host THP effect on host-cold first touch, ondemand "
				 "minus immediate allocation");
	} else if (has_cold(r, hs, w, C, X, "ondemand", G)) {
		const struct arm a[] = {
			{ "never", "ondemand", 1, { { G, C, 1 }, { G, NULL, -1 } }, 2 },
			{ X, "ondemand", -1, { { G, C, 1 }, { G, NULL, -1 } }, 2 },
		};

		eval_arms(r, e, a, 2, V);
		if (e->available)
			snprintf(e->note, sizeof(e->note), "host THP effect on host-cold first touch minus on "
				 "host-warm first touch (ondemand)");
	} else {
		snprintf(e->note, sizeof(e->note), "needs host-cold cells (--cold-reps above 0) with allocation "
			 "ondemand at guest %s", G);
	}
}

/*
 * One metric's decomposition on host-warm cells: host (at guest never) +
 * guest (at host never) + interaction = total, exactly, on the log scale.
 */
static void decompose(const struct results *r, struct effects *fx, const char *hs, const char *w,
		      const char *V, const char *pf, const char *M, const char *host_comp,
		      const char *comp, const char *X, const char *Y)
{
	const struct arm host[] = {
		{ "never", pf, 1, { { "never", NULL, 1 } }, 1 },
		{ X, pf, -1, { { "never", NULL, 1 } }, 1 },
	};
	const struct arm guest[] = { { "never", pf, 1, { { "never", NULL, 1 }, { Y, NULL, -1 } }, 2 } };
	const struct arm inter[] = {
		{ X, pf, 1, { { "never", NULL, 1 }, { Y, NULL, -1 } }, 2 },
		{ "never", pf, -1, { { "never", NULL, 1 }, { Y, NULL, -1 } }, 2 },
	};
	const struct arm total[] = {
		{ "never", pf, 1, { { "never", NULL, 1 } }, 1 },
		{ X, pf, -1, { { Y, NULL, 1 } }, 1 },
	};
	size_t first = fx->n, i;
	struct effect *t;

	eval_arms(r, new_effect(fx, hs, w, "host", host_comp, M, X, Y, "never"), host, 2, V);
	if (!strcmp(Y, "never"))
		return;		/* no guest treatment was run: the host-side effect is all there is */
	eval_arms(r, new_effect(fx, hs, w, "guest", comp, M, X, Y, NULL), guest, 1, V);
	eval_arms(r, new_effect(fx, hs, w, "interaction", comp, M, X, Y, NULL), inter, 2, V);
	t = new_effect(fx, hs, w, "total", comp, M, X, Y, NULL);
	eval_arms(r, t, total, 2, V);
	/* shares of this table's total on the printed (% of time saved) scale, for the parts
	 * measured to be non-zero of a total measured to be non-zero */
	for (i = first; t && t->available && t->significant && i + 1 < fx->n; i++)
		if (fx->e[i].available && fx->e[i].significant)
			fx->e[i].share_pct = fx->e[i].estimate_pct / t->estimate_pct * 100.0;
}

static void workload_effects(const struct results *r, struct effects *fx, const char *hs, const char *w,
			     const struct wl_split *sp, const char *X, const char *Y)
{
	const char *V = sp->variant, *F = sp->fault_metric, *A = sp->access_metric, *C = sp->cold_variant;
	/* guest-side effects and the interaction use the ondemand arm when present */
	const char *pf = has_prefault(r, hs, w, "ondemand", V) ? "ondemand" : "immediate";

	host_prefault(r, fx, hs, w, V, F, C, X, Y, "never");
	if (strcmp(Y, "never"))
		host_prefault(r, fx, hs, w, V, F, C, X, Y, Y);
	if (F)
		decompose(r, fx, hs, w, V, pf, F, "warm", "prefault", X, Y);
	decompose(r, fx, hs, w, V, pf, A, "tlb", "tlb", X, Y);
}

/* the variance components of every guest cell of a split workload, per phase metric */
static void add_var(const struct results *r, struct effects *fx, const char *w, const char *F, const char *A)
{
	size_t i, k;

	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		const char *ms[2] = { F, A };

		if (strcmp(c->workload, w) || strcmp(c->target, "guest"))
			continue;
		for (k = 0; k < 2; k++) {
			const struct metric *m = ms[k] ? cell_metric_find(c, ms[k]) : NULL;
			struct effect_var *v;

			if (!m || m->n == 0 || fx->nvar >= EFFECTS_MAX_VAR)
				continue;
			v = &fx->var[fx->nvar];
			if (varcomp_compute(m, &v->vc))
				continue;
			fx->nvar++;
			snprintf(v->workload, sizeof(v->workload), "%s", w);
			snprintf(v->metric, sizeof(v->metric), "%s", m->name);
			snprintf(v->label, sizeof(v->label), "host %s/%s guest %s%s%s%s%s", c->host_thp,
				 c->prefault, c->guest_thp, c->variant[0] ? " " : "", c->variant,
				 strcmp(cell_state(c), "fresh") ? " " : "", strcmp(cell_state(c), "fresh") ?
				 cell_state(c) : "");
		}
	}
}

int effects_attach(struct results *r, struct err *e)
{
	if (!r->effects)
		r->effects = malloc(sizeof(*r->effects));
	if (!r->effects)
		return err_set(e, -ENOMEM, "out of memory computing the split");
	effects_compute(r, r->effects);
	return 0;
}

void effects_compute(const struct results *r, struct effects *out)
{
	static const char *const states[] = { "fresh", "fragmented", "ksm" };
	const struct wl_traits *t;
	size_t i, j, k, h, g, si;

	out->n = 0;
	out->nvar = 0;
	out->tcg = !strcmp(r->accel, "tcg");
	out->nested = r->host.reporting;
	/* the workloads the split decomposes, and their phase metrics: lib/wltraits.c */
	for (i = 0; (t = wltraits_split_at(i)); i++)
		add_var(r, out, t->name, t->split->fault_metric, t->split->access_metric);
	for (si = 0; si < sizeof(states) / sizeof(states[0]); si++)
	for (i = 0; (t = wltraits_split_at(i)); i++) {
		const char *hs = states[si];
		const char *w = t->name;
		char hosts[THP_LIST_MAX][RES_NAME_MAX], guests[8][RES_NAME_MAX];
		size_t nh = 0, ng = 0;

		/* the treatment levels present (everything but never) */
		for (j = 0; j < r->ncells; j++) {
			const struct cell *c = &r->cells[j];
			bool seen = false;

			if (strcmp(c->workload, w) || strcmp(c->target, "guest") || strcmp(cell_state(c), hs) ||
			    !cell_no_balloon(c))
				continue;
			for (k = 0; k < nh; k++)
				seen |= !strcmp(hosts[k], c->host_thp);
			if (!seen && strcmp(c->host_thp, "never") && nh < THP_LIST_MAX)
				snprintf(hosts[nh++], RES_NAME_MAX, "%s", c->host_thp);
			seen = false;
			for (k = 0; k < ng; k++)
				seen |= !strcmp(guests[k], c->guest_thp);
			if (!seen && strcmp(c->guest_thp, "never") && ng < 8)
				snprintf(guests[ng++], RES_NAME_MAX, "%s", c->guest_thp);
		}
		if (ng == 0)	/* guest THP never only: the host-side effects at guest never */
			snprintf(guests[ng++], RES_NAME_MAX, "never");
		for (h = 0; h < nh; h++)
			for (g = 0; g < ng; g++)
				workload_effects(r, out, hs, w, t->split, hosts[h], guests[g]);
	}
}

