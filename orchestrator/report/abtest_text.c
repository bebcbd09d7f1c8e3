#include "orchestrator/report/abtest_text.h"

#include <math.h>
#include <string.h>

/* "1.234 [1.100, 1.380]", or the reason there is none */
static void fmt_ratio(const struct ab_row *r, char *buf, size_t len)
{
	if (r->tested)
		snprintf(buf, len, "%.3f [%.3f, %.3f]", r->ratio, r->ratio_lo, r->ratio_hi);
	else
		snprintf(buf, len, "-");
}

static void fmt_num(double v, bool pct, char *buf, size_t len)
{
	if (!isfinite(v))
		snprintf(buf, len, "n/a");
	else if (pct)
		snprintf(buf, len, "%+.1f%%", v);
	else if (fabs(v) >= 1000)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.4g", v);
}

static void print_family(const struct abtest *ab, const char *what, FILE *out)
{
	bool effect = !strcmp(what, "effect");
	size_t i;

	fprintf(out, "  %-64s %-18s %10s %10s  %-24s %7s  %s\n", effect ? "split effect (% of time THP saves)" :
		strcmp(what, "kind") ? "cell" : "metric kind (geometric mean over its cells)", "metric", "A", "B", effect ? "THP speed-up B/A" : "B/A [95% CI]",
		"p Holm", "verdict");
	for (i = 0; i < ab->n; i++) {
		const struct ab_row *r = &ab->rows[i];
		char a[24], b[24], ratio[48], p[16];

		if (strcmp(r->what, what))
			continue;
		fmt_num(r->a, effect, a, sizeof(a));
		fmt_num(r->b, effect, b, sizeof(b));
		fmt_ratio(r, ratio, sizeof(ratio));
		if (isfinite(r->p_holm))
			snprintf(p, sizeof(p), "%.3f", r->p_holm);
		else
			snprintf(p, sizeof(p), "-");
		fprintf(out, "  %-64.64s %-18s %10s %10s  %-24s %7s  %s", r->label, r->metric, a, b, ratio, p,
			r->tested ? (r->differs ? "DIFFERS" : "same") : "untested");
		if (r->tested)
			fprintf(out, " (%s, %u %s)\n", r->method, !strcmp(r->method, "paired") ? r->pairs :
				(r->boots_a < r->boots_b ? r->boots_a : r->boots_b),
				!strcmp(r->method, "paired") ? "rounds" : "boots");
		else
			fprintf(out, ": %s\n", r->note);
	}
}

void abtest_print(const struct abtest *ab, FILE *out)
{
	if (!ab || ab->n == 0)
		return;
	fprintf(out, "\n%s B vs A, inside this run (A: %s, B: %s): B/A as a ratio of geometric means over boots, "
		     "95%% CI on the log scale, paired by round (each round boots every host setting once with "
		     "each); DIFFERS = Holm-adjusted two-sided p < 0.05 in its family\n", ab->axis, ab->a, ab->b);
	print_family(ab, "kind", out);
	fprintf(out, "\n");
	print_family(ab, "metric", out);
	fprintf(out, "\n");
	print_family(ab, "effect", out);
	fprintf(out, "\n%s B vs A: %zu of %zu metric kind(s), %zu of %zu gated cell metric(s), %zu of %zu split "
		     "effect(s) differ (the cell table and the split above pool both arms' boots)\n", ab->axis,
		ab->kinds_differ, ab->kinds_tested, ab->metrics_differ, ab->metrics_tested, ab->effects_differ,
		ab->effects_tested);
}
