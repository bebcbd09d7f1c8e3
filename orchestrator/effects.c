#include "orchestrator/effects.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "orchestrator/cli.h"
#include "orchestrator/stats.h"

/* the two phase metrics of each workload that the split is computed from */
static const struct {
	const char *workload;
	const char *variant;		/* the cells the metrics are in ("" = plain) */
	const char *prefault_metric;	/* fault phase: first touch; NULL: none timed */
	const char *tlb_metric;		/* access phase: memory already mapped */
} phase_metrics[] = {
	{ "memset", "", "fault_ns_per_4k", "access_ns" },
	/* the 2M-asking region at the largest working set: huge where the cell's
	 * guest setting gives huge pages, 4K where it does not */
	{ "tlb", "summary", NULL, "large_2m_access_ns" },
};

int contrast_pct(const struct contrast_term *t, size_t n, double base_mean, double *est,
		 double *lo, double *hi, double *df)
{
	double c = 0, var = 0, dfden = 0, half;
	size_t i;

	if (!(base_mean > 0))
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct metric *m = t[i].m;
		double v;

		if (!m || m->s.n < 2 || !isfinite(m->s.sd))
			return -EINVAL;
		v = t[i].w * t[i].w * m->s.sd * m->s.sd / (double)m->s.n;
		c += t[i].w * m->s.mean;
		var += v;
		dfden += v * v / (double)(m->s.n - 1);
	}
	*df = dfden > 0 ? var * var / dfden : 1e9;
	half = t95(*df < 1 ? 1 : (size_t)floor(*df)) * sqrt(var);
	*est = c / base_mean * 100.0;
	*lo = (c - half) / base_mean * 100.0;
	*hi = (c + half) / base_mean * 100.0;
	return 0;
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

static const struct cell *find_v(const struct results *r, const char *hs, const char *w, const char *host,
				 const char *pf, const char *guest, const char *variant)
{
	size_t i;

	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];

		if (!strcmp(c->target, "guest") && !strcmp(c->workload, w) && !strcmp(c->variant, variant) &&
		    !strcmp(c->host_thp, host) && !strcmp(c->prefault, pf) && !strcmp(c->guest_thp, guest) &&
		    !strcmp(cell_state(c), hs))
			return c;
	}
	return NULL;
}

const struct cell *effects_find(const struct results *r, const char *hs, const char *w, const char *host,
				const char *pf, const char *guest)
{
	return find_v(r, hs, w, host, pf, guest, "");
}

/* within a host state */
#define find(r, w, host, pf, guest, variant) find_v(r, hs, w, host, pf, guest, variant)

static bool has_prefault(const struct results *r, const char *hs, const char *w, const char *pf,
			 const char *variant)
{
	return find(r, w, "never", pf, "never", variant) != NULL;
}

static bool has_cold(const struct results *r, const char *hs, const char *w, const char *host, const char *pf)
{
	return find(r, w, "never", pf, "never", "cold") && find(r, w, host, pf, "never", "cold");
}

/* a cell in a contrast: variant NULL is the plain (host-warm) cell */
struct term_spec {
	const char *host, *pf, *guest;
	double w;
	const char *variant;
};

static struct effect *new_effect(struct effects *fx, const char *hs, const char *w, const char *side,
				 const char *comp, const char *metric, const char *host, const char *guest)
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
	snprintf(e->host_state, sizeof(e->host_state), "%s", hs);
	e->estimate_pct = e->ci95_low_pct = e->ci95_high_pct = e->df = e->share_pct = NAN;
	return e;
}

/* evaluate a contrast over cells; base is the first term's cell */
static void eval(const struct results *r, struct effect *e, const struct term_spec *ts, size_t n,
		 const char *basevar)
{
	struct contrast_term t[8];
	const struct cell *base = NULL;
	const char *hs;
	size_t i;

	if (!e)
		return;
	hs = e->host_state;
	for (i = 0; i < n; i++) {
		const char *var = ts[i].variant ? ts[i].variant : basevar;
		const struct cell *c = find(r, e->workload, ts[i].host, ts[i].pf, ts[i].guest, var);

		if (!c) {
			snprintf(e->note, sizeof(e->note), "cell host=%s/%s guest=%s%s%s was not run", ts[i].host,
				 ts[i].pf, ts[i].guest, *var ? " " : "", var);
			return;
		}
		if (!c->valid) {
			snprintf(e->note, sizeof(e->note), "cell host=%s/%s guest=%s is invalid: %.150s", ts[i].host,
				 ts[i].pf, ts[i].guest, c->invalid_reason);
			return;
		}
		t[i].m = cell_metric_find(c, e->metric);
		t[i].w = ts[i].w;
		if (!t[i].m || t[i].m->s.n < 2) {
			snprintf(e->note, sizeof(e->note),
				 "cell host=%s/%s guest=%s has fewer than 2 samples of %s", ts[i].host, ts[i].pf,
				 ts[i].guest, e->metric);
			return;
		}
		if (i == 0)
			base = c;
	}
	if (!base || contrast_pct(t, n, cell_metric_find(base, e->metric)->s.mean, &e->estimate_pct,
				  &e->ci95_low_pct, &e->ci95_high_pct, &e->df)) {
		snprintf(e->note, sizeof(e->note), "baseline mean of %s is not positive", e->metric);
		return;
	}
	e->available = true;
	e->significant = e->ci95_low_pct > 0 || e->ci95_high_pct < 0;
}

static void workload_effects(const struct results *r, struct effects *fx, const char *hs, const char *w,
			     const char *V,
			     const char *F, const char *A, const char *X, const char *Y)
{
	/* guest-side effects and the interaction use the ondemand arm when present */
	const char *pf = has_prefault(r, hs, w, "ondemand", V) ? "ondemand" : "immediate";
	bool both = has_prefault(r, hs, w, "ondemand", V) && has_prefault(r, hs, w, "immediate", V);
	struct effect *e, *hp;
	double total_f = NAN, total_a = NAN, total_cold = NAN;
	size_t first = fx->n, i;

	/*
	 * host prefault: host THP's effect on the guest's first touch of memory the
	 * host never backed (the host-cold 'cold' cells: the host faults inside the
	 * window) that disappears when the host no longer faults there: with QEMU
	 * preallocating (immediate) or, with one allocation mode, on host-warm memory
	 */
	hp = new_effect(fx, hs, w, "host", "prefault", F ? F : "", X, Y);
	if (!F) {
		if (hp)
			snprintf(hp->note, sizeof(hp->note), "%s times no fault phase", w);
	} else if (both && has_cold(r, hs, w, X, "ondemand") && has_cold(r, hs, w, X, "immediate")) {
		const struct term_spec t[] = {
			{ "never", "ondemand", "never", 1, "cold" }, { X, "ondemand", "never", -1, "cold" },
			{ "never", "immediate", "never", -1, "cold" }, { X, "immediate", "never", 1, "cold" },
		};
		eval(r, hp, t, 4, V);
		if (hp && hp->available)
			snprintf(hp->note, sizeof(hp->note),
				 "host THP effect on host-cold first touch, ondemand minus immediate allocation");
	} else if (has_cold(r, hs, w, X, "ondemand")) {
		const struct term_spec t[] = {
			{ "never", "ondemand", "never", 1, "cold" }, { X, "ondemand", "never", -1, "cold" },
			{ "never", "ondemand", "never", -1, NULL }, { X, "ondemand", "never", 1, NULL },
		};
		eval(r, hp, t, 4, V);
		if (hp && hp->available)
			snprintf(hp->note, sizeof(hp->note),
				 "host THP effect on host-cold first touch minus on host-warm first touch (ondemand)");
	} else if (hp) {
		snprintf(hp->note, sizeof(hp->note),
			 "needs host-cold cells (--cold-reps above 0) with allocation ondemand");
	}
	{
		/* the access phase runs on memory already mapped on both sides, so host
		 * faults are outside its window in either allocation mode; the same arm as
		 * the guest effects keeps host + guest + interaction = total */
		const struct term_spec t[] = { { "never", pf, "never", 1, NULL }, { X, pf, "never", -1, NULL } };

		eval(r, new_effect(fx, hs, w, "host", "tlb", A, X, Y), t, 2, V);
	}
	{
		const struct term_spec t[] = { { "never", pf, "never", 1, NULL }, { "never", pf, Y, -1, NULL } };

		e = new_effect(fx, hs, w, "guest", "prefault", F ? F : "", X, Y);
		if (F)
			eval(r, e, t, 2, V);
		else if (e)
			snprintf(e->note, sizeof(e->note), "%s times no fault phase", w);
		eval(r, new_effect(fx, hs, w, "guest", "tlb", A, X, Y), t, 2, V);
	}
	{
		/* total = host + guest + interaction: interaction = (AX0 + A0Y - A00 - AXY) / A00 */
		const struct term_spec t[] = {
			{ "never", pf, "never", -1, NULL }, { X, pf, "never", 1, NULL }, { "never", pf, Y, 1, NULL }, { X, pf, Y, -1, NULL },
		};

		eval(r, new_effect(fx, hs, w, "interaction", "tlb", A, X, Y), t, 4, V);
	}
	/* totals on each metric (all-never vs all-on) for the shares */
	{
		const struct term_spec t[] = { { "never", pf, "never", 1, NULL }, { X, pf, Y, -1, NULL } };
		struct effects one = { 0 };

		e = new_effect(&one, hs, w, "total", "prefault", F ? F : "", X, Y);
		if (F)
			eval(r, e, t, 2, V);
		if (e && e->available)
			total_f = e->estimate_pct;
		e = new_effect(&one, hs, w, "total", "tlb", A, X, Y);
		eval(r, e, t, 2, V);
		if (e && e->available)
			total_a = e->estimate_pct;
	}
	{
		/* the host prefault share is of the total on host-cold first touch */
		const struct term_spec t[] = { { "never", "ondemand", "never", 1, "cold" },
					       { X, "ondemand", Y, -1, "cold" } };
		struct effects one = { 0 };

		e = new_effect(&one, hs, w, "total", "prefault", F ? F : "", X, Y);
		if (F)
			eval(r, e, t, 2, V);
		if (e && e->available)
			total_cold = e->estimate_pct;
	}
	for (i = first; i < fx->n; i++) {
		double total = F && !strcmp(fx->e[i].metric, F) ? total_f : total_a;

		if (&fx->e[i] == hp)
			total = total_cold;

		if (fx->e[i].available && isfinite(total) && fabs(total) > 1e-9)
			fx->e[i].share_pct = fx->e[i].estimate_pct / total * 100.0;
	}
}

void effects_compute(const struct results *r, struct effects *out)
{
	static const char *const states[] = { "fresh", "fragmented" };
	size_t i, j, k, h, g, si;

	out->n = 0;
	for (si = 0; si < 2; si++)
	for (i = 0; i < sizeof(phase_metrics) / sizeof(phase_metrics[0]); i++) {
		const char *hs = states[si];
		const char *w = phase_metrics[i].workload;
		char hosts[CLI_MAX_THP][RES_NAME_MAX], guests[8][RES_NAME_MAX];
		size_t nh = 0, ng = 0;

		/* the treatment levels present (everything but never) */
		for (j = 0; j < r->ncells; j++) {
			const struct cell *c = &r->cells[j];
			bool seen = false;

			if (strcmp(c->workload, w) || strcmp(c->target, "guest") || strcmp(cell_state(c), hs))
				continue;
			for (k = 0; k < nh; k++)
				seen |= !strcmp(hosts[k], c->host_thp);
			if (!seen && strcmp(c->host_thp, "never") && nh < CLI_MAX_THP)
				snprintf(hosts[nh++], RES_NAME_MAX, "%s", c->host_thp);
			seen = false;
			for (k = 0; k < ng; k++)
				seen |= !strcmp(guests[k], c->guest_thp);
			if (!seen && strcmp(c->guest_thp, "never") && ng < 8)
				snprintf(guests[ng++], RES_NAME_MAX, "%s", c->guest_thp);
		}
		for (h = 0; h < nh; h++)
			for (g = 0; g < ng; g++)
				workload_effects(r, out, hs, w, phase_metrics[i].variant,
						 phase_metrics[i].prefault_metric, phase_metrics[i].tlb_metric, hosts[h],
						 guests[g]);
	}
}

void effects_print(const struct effects *fx, FILE *out)
{
	size_t i;

	for (i = 0; i < fx->n; i++) {
		const struct effect *e = &fx->e[i];
		const struct effect *p = i ? &fx->e[i - 1] : NULL;
		char head[64];

		if (!p || strcmp(p->workload, e->workload) || strcmp(p->host_thp, e->host_thp) ||
		    strcmp(p->guest_thp, e->guest_thp) || strcmp(p->host_state, e->host_state)) {
			fprintf(out, "\nsplit: %s, host THP %s / guest THP %s against never%s%s"
				     " (%% faster with THP, 95%% CI, Welch)\n", e->workload, e->host_thp, e->guest_thp,
				strcmp(e->host_state, "fresh") ? ", host " : "",
				strcmp(e->host_state, "fresh") ? e->host_state : "");
			fprintf(out, "  %-12s %-9s %-16s %-30s %s\n", "side", "component", "metric", "effect",
				"share of total");
		}
		snprintf(head, sizeof(head), "  %-12s %-9s %-16s", e->side, e->component, e->metric);
		if (!e->available) {
			fprintf(out, "%s not available: %s\n", head, e->note);
		} else if (!e->significant) {
			fprintf(out, "%s no measurable effect (%+.1f%% [%+.1f, %+.1f])\n", head, e->estimate_pct,
				e->ci95_low_pct, e->ci95_high_pct);
		} else {
			char eff[64], share[32] = "";

			snprintf(eff, sizeof(eff), "%+.1f%% [%+.1f, %+.1f]", e->estimate_pct, e->ci95_low_pct,
				 e->ci95_high_pct);
			if (isfinite(e->share_pct))
				snprintf(share, sizeof(share), "%.0f%%", e->share_pct);
			fprintf(out, "%s %-30s %s\n", head, eff, share);
		}
	}
}
