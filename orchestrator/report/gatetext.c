#include "orchestrator/report/gatetext.h"

#include <math.h>
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
