#include "orchestrator/report/gatetext.h"

#include "orchestrator/analysis/changes.h"

#include <math.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

static void pct(char *buf, size_t len, double v)
{
	if (isfinite(v))
		snprintf(buf, len, "%+.1f%%", v);
	else
		snprintf(buf, len, "-");
}

void gate_summary(const struct gate_result *g, char *buf, size_t len)
{
	snprintf(buf, len, "%zu kind(s): %zu ok, %zu suspect, %zu regression(s), %zu no-history: %s", g->n, g->nok,
		 g->nsuspect, g->nregression, g->nnohistory, gate_failed(g) ? "FAIL" :
		 g->nsuspect ? "pass (suspect: watch the next runs)" : g->n == g->nnohistory ? "pass (no history yet)" :
		 "pass");
}

void gate_print(const struct gate_result *g, const char *where, FILE *out)
{
	char sum[200];
	size_t i;

	fprintf(out, "history gate against the earlier complete runs of this host and setup in %s (threshold %g%%, "
		"K %u, fail on %s):\n", where, g->threshold_pct, g->k,
		g->fail_on == GATE_FAIL_ON_SUSPECT ? "suspect" : "regression");
	fprintf(out, "  %-36s %5s %5s %7s  %-26s %9s %7s %7s  %s\n", "metric kind", "cells", "runs", "tau",
		"this run [95% PI]", "newest 3", "p(sus)", "p(reg)", "verdict");
	for (i = 0; i < g->n; i++) {
		const struct gate_kind *k = &g->kinds[i];
		char tau[16], ch[64], c3[16], ps[16], pr[16];

		if (isfinite(k->tau))
			snprintf(tau, sizeof(tau), "%.1f%%", k->tau * 100.0);
		else
			snprintf(tau, sizeof(tau), "-");
		if (isfinite(k->change_pct))
			snprintf(ch, sizeof(ch), "%+.1f%% [%+.1f, %+.1f]", k->change_pct, k->lo_pct, k->hi_pct);
		else
			snprintf(ch, sizeof(ch), "-");
		pct(c3, sizeof(c3), k->change3_pct);
		if (isfinite(k->holm_suspect))
			snprintf(ps, sizeof(ps), "%.3f", k->holm_suspect);
		else
			snprintf(ps, sizeof(ps), "-");
		if (isfinite(k->holm_regression))
			snprintf(pr, sizeof(pr), "%.3f", k->holm_regression);
		else
			snprintf(pr, sizeof(pr), "-");
		fprintf(out, "  %-36s %5u %5zu %7s  %-26s %9s %7s %7s  %s", k->cur.kind, k->cur.ncells, k->nhist, tau, ch,
			c3, ps, pr, gate_verdict_name(k->verdict));
		if (k->verdict == GATE_V_NO_HISTORY)
			fprintf(out, ": %zu earlier run(s) with these cells, the gate needs %d", k->nhist, GATE_MIN_K);
		else if (!k->nk_reg)
			fprintf(out, " (regression needs %d earlier runs)", GATE_MIN_K + GATE_NEWEST - 1);
		fputc('\n', out);
	}
	fprintf(out, "\nper metric kind, log scale: tau = between-run SD of the last K runs (DerSimonian-Laird); "
		"suspect = this run alone worse beyond %g%%, regression = the newest %d runs' mean worse beyond it "
		"(each one-sided t with K-1 df, Holm over the kinds, family-wise 5%%); p = Holm-adjusted\n",
		g->threshold_pct, GATE_NEWEST);
	gate_summary(g, sum, sizeof(sum));
	fprintf(out, "history gate: %s\n", sum);
}

static void when(char *buf, size_t len, time_t t)
{
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, len, "?");
}

/* "kernel a -> b, QEMU same, ..." */
static void sides(const struct series_run *a, const struct series_run *b, char *buf, size_t len)
{
	snprintf(buf, len, "kernel %s%s%s, QEMU %s%s%s, libvirt %s%s%s", a->kernel, strcmp(a->kernel, b->kernel) ?
		 " -> " : "", strcmp(a->kernel, b->kernel) ? b->kernel : " (same)", a->qemu,
		 strcmp(a->qemu, b->qemu) ? " -> " : "", strcmp(a->qemu, b->qemu) ? b->qemu : " (same)", a->libvirt,
		 strcmp(a->libvirt, b->libvirt) ? " -> " : "", strcmp(a->libvirt, b->libvirt) ? b->libvirt : " (same)");
}

void changes_print(const struct gate_series *s, size_t n, FILE *out)
{
	size_t i, j, shown = 0;

	for (i = 0; i < n; i++) {
		const struct gate_series *g = &s[i];
		struct change_point cp[16];
		double *y = malloc((g->n ? g->n : 1) * sizeof(*y));
		size_t ncp = 0;
		char w[32], sd[400];

		if (!y)
			continue;
		for (j = 0; j < g->n; j++)
			y[j] = g->runs[j].y;
		changes_find(y, g->n, cp, sizeof(cp) / sizeof(cp[0]), &ncp);
		free(y);
		fprintf(out, "host %s, %s: %zu run(s), %zu change point(s)%s\n", g->host[0] ? g->host : "(unnamed)",
			g->kind, g->n, ncp, g->n < 2 * CHANGES_MIN_SEGMENT ? " (too few runs to look)" : "");
		for (j = 0; j < ncp; j++) {
			const struct series_run *a = &g->runs[cp[j].at - 1], *b = &g->runs[cp[j].at];

			when(w, sizeof(w), b->started);
			sides(a, b, sd, sizeof(sd));
			fprintf(out, "  from run %lld (%s): %+.1f%% (permutation p %.3f); %s\n", b->id, w, cp[j].change_pct,
				cp[j].p, sd);
		}
		for (j = 0; j < g->n; j++)
			if (g->runs[j].why[0]) {
				when(w, sizeof(w), g->runs[j].started);
				fprintf(out, "  marked: run %lld (%s) is the first after: %s\n", g->runs[j].id, w, g->runs[j].why);
			}
		shown++;
	}
	if (!shown)
		fprintf(out, "no runs in the history yet\n");
	fprintf(out, "change points: binary segmentation of each series' log means (the split with the largest "
		"Welch t, kept at permutation p < %g over %d permutations, each side %d runs or more)\n", CHANGES_ALPHA,
		CHANGES_PERMUTATIONS, CHANGES_MIN_SEGMENT);
}

void effects_pooled_print(const struct pooled_effect *p, size_t n, FILE *out)
{
	const char *host = NULL;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!host || strcmp(host, p[i].host)) {
			host = p[i].host;
			fprintf(out, "%shost %s: split effects pooled over its runs (from the newest marked change on)\n"
				"  %-64s %5s  %-24s %7s %5s  %s\n", i ? "\n" : "", host[0] ? host : "(unnamed)", "effect",
				"runs", "pooled [95% CI]", "tau", "I2", "newest run [95% CI]");
		}
		fprintf(out, "  %-64s %5zu  %+.1f%% [%+.1f, %+.1f]%*s %6.1f%% %4.0f%%  %+.1f%% [%+.1f, %+.1f]\n",
			p[i].label, p[i].k, p[i].est_pct, p[i].lo_pct, p[i].hi_pct, 1, "", p[i].tau_pct, p[i].i2_pct,
			p[i].new_pct, p[i].new_lo_pct, p[i].new_hi_pct);
	}
	if (!n)
		fprintf(out, "no split effect available in 2 or more runs of any host\n");
	fprintf(out, "pooled: random effects (DerSimonian-Laird) over the runs' own estimates and standard errors, "
		"95%% CI with t(runs-1): the answer with the run-to-run drift inside its interval; %% = time THP saved\n");
}
