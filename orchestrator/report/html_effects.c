/*
 * html_effects: the HTML report's effects section, a forest plot per
 * workload and treatment pair with its table; the same effect text the
 * fleet page uses (html_fmt_effect).
 */
#include "orchestrator/report/html.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "orchestrator/analysis/effects.h"

/* the effects split: per workload and treatment pair, a forest plot of the
 * effects (% faster with THP, 95% CI) and the same numbers as a table */
static bool same_group(const struct effect *a, const struct effect *b)
{
	return !strcmp(a->workload, b->workload) && !strcmp(a->host_thp, b->host_thp) &&
	       !strcmp(a->guest_thp, b->guest_thp);
}

void html_fmt_effect(char *buf, size_t len, const struct effect *e)
{
	if (!e->available)
		snprintf(buf, len, "not available");
	else if (!isfinite(e->ci95_low_pct))
		snprintf(buf, len, "%+.1f%%", e->estimate_pct);
	else
		snprintf(buf, len, "%+.1f%% [%+.1f, %+.1f]%s", e->estimate_pct, e->ci95_low_pct, e->ci95_high_pct,
			 e->significant ? "" : " (no measurable effect)");
}

/* one effect's row of the forest plot: its label, interval, dot and value; ym its middle */
static void effect_row_svg(FILE *o, const struct effect *e, double ym, double cx, double half, double maxv)
{
	char t[160];

	if (e->at_guest[0])
		snprintf(t, sizeof(t), "%s %s, guest %s (%s)", e->side, e->component, e->at_guest, e->metric);
	else
		snprintf(t, sizeof(t), "%s %s (%s)", e->side, e->component, e->metric);
	fprintf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", CH_LABEL - 10, ym + 4);
	html_esc(o, t);
	fputs("</text>", o);
	if (!e->available) {
		fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", cx, ym + 4);
		html_escf(o, "not available: %.70s%s", e->note, strlen(e->note) > 70 ? "…" : "");
		fputs("</text>", o);
		return;
	}
	if (isfinite(e->ci95_low_pct)) {
		double x0 = cx + e->ci95_low_pct / maxv * half, x1 = cx + e->ci95_high_pct / maxv * half;

		fprintf(o, "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, ym, x1, ym);
		fprintf(o, "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, ym - 6, x0, ym + 6);
		fprintf(o, "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x1, ym - 6, x1, ym + 6);
	}
	fprintf(o, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"6\"><title>",
		!e->significant ? "fx-ns" : e->estimate_pct >= 0 ? "fx-pos" : "fx-neg",
		cx + e->estimate_pct / maxv * half, ym);
	html_fmt_effect(t, sizeof(t), e);
	html_esc(o, t);
	if (e->note[0]) {
		fputs(": ", o);
		html_esc(o, e->note);
	}
	fputs("</title></circle>", o);
	fprintf(o, "<text x=\"%d\" y=\"%.1f\">", CH_W - CH_RIGHT + 8, ym + 4);
	snprintf(t, sizeof(t), "%+.1f%%%s", e->estimate_pct, e->significant ? "" : " (n.s.)");
	html_esc(o, t);
	fputs("</text>", o);
}

/* the same effects as a table */
static void effect_table(FILE *o, const struct effect *fx, size_t n)
{
	size_t i;
	char t[160];

	fputs("<table>\n<tr><th>side</th><th>component</th><th>metric</th><th>effect (95% CI)</th>"
	      "<th>share of total</th><th>note</th></tr>\n", o);
	for (i = 0; i < n; i++) {
		const struct effect *e = &fx[i];

		fputs("<tr><td>", o);
		html_esc(o, e->side);
		fputs("</td><td>", o);
		html_esc(o, e->component);
		if (e->at_guest[0])
			html_escf(o, " (guest %s)", e->at_guest);
		fputs("</td><td><code>", o);
		html_esc(o, e->metric);
		fputs("</code></td>", o);
		html_fmt_effect(t, sizeof(t), e);
		html_td_num(o, t);
		if (e->available && isfinite(e->share_pct))
			snprintf(t, sizeof(t), "%.0f%%", e->share_pct);
		else
			snprintf(t, sizeof(t), "-");
		html_td_num(o, t);
		fputs("<td>", o);
		html_esc(o, e->note);
		fputs("</td></tr>\n", o);
	}
	fputs("</table>\n", o);
}

static void html_effect_group(FILE *o, const struct effect *fx, size_t n)
{
	const double cx = CH_LABEL + (CH_W - CH_LABEL - CH_RIGHT) / 2.0, half = (CH_W - CH_LABEL - CH_RIGHT) / 2.0;
	double maxv = 0, h = CH_TOP + (double)n * CH_ROW + CH_AXIS, step, v;
	size_t i;
	char t[160];

	for (i = 0; i < n; i++) {
		if (!fx[i].available)
			continue;
		maxv = fmax(maxv, fabs(fx[i].estimate_pct));
		if (isfinite(fx[i].ci95_low_pct))
			maxv = fmax(maxv, fmax(fabs(fx[i].ci95_low_pct), fabs(fx[i].ci95_high_pct)));
	}
	if (!(maxv > 0))
		maxv = 1;
	step = html_nice_step(maxv / 2);
	maxv = ceil(maxv / step - 1e-9) * step;
	fputs("<h3>", o);
	html_escf(o, "%s: host THP %s, guest THP %s, each against never", fx[0].workload, fx[0].host_thp, fx[0].guest_thp);
	fputs("</h3>\n", o);
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" role=\"img\">",
		CH_W, h, CH_W, h);
	fputs("<title>", o);
	html_escf(o, "effects of THP on %s, percent faster with 95%% confidence intervals", fx[0].workload);
	fputs("</title>", o);
	for (v = -maxv; v <= maxv + step / 2; v += step) {
		double x = cx + v / maxv * half;

		fprintf(o, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>",
			fabs(v) < step / 2 ? "axis" : "grid", x, CH_TOP, x, CH_TOP + (double)n * CH_ROW);
		snprintf(t, sizeof(t), "%+.4g%%", fabs(v) < step / 2 ? 0.0 : v);
		fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x,
			CH_TOP + (double)n * CH_ROW + 14);
		html_esc(o, t);
		fputs("</text>", o);
	}
	for (i = 0; i < n; i++)
		effect_row_svg(o, &fx[i], CH_TOP + (double)i * CH_ROW + CH_ROW / 2.0, cx, half, maxv);
	fputs("</svg>\n", o);
	effect_table(o, fx, n);
}

void html_effects(const struct report_input *in, FILE *o)
{
	const struct effects *fx = in->res->effects;
	size_t i, j;

	fputs("<p class=\"sub\">Where the THP benefit comes from: each effect is a ratio of geometric means"
	      " shown as the share of time THP saves (positive = faster with THP), with a 95% confidence"
	      " interval computed on the log scale; host-side effects replicate over guest boots (rounds as"
	      " blocks where they correlate, else Welch over boots), guest-side ones are paired inside each"
	      " boot; filled dots are significant (the interval excludes 0). A share is the part's % over the"
	      " total's, shown only for significant parts of a significant total.</p>\n", o);
	if (fx->tcg) {
		fputs("<p class=\"sub\"><b>TCG run:</b> ", o);
		html_esc(o, EFFECTS_TCG_NOTE);
		fputs(".</p>\n", o);
	}
	if (fx->nested) {
		fputs("<p class=\"sub\"><b>Nested host:</b> ", o);
		html_esc(o, EFFECTS_NESTED_NOTE);
		fputs(".</p>\n", o);
	}
	fputs(
	      "<p class=\"legend\"><span><i class=\"sw\" style=\"background:#1c7c32\"></i>faster with THP</span>"
	      "<span><i class=\"sw\" style=\"background:#b3261e\"></i>slower with THP</span>"
	      "<span><i class=\"sw\" style=\"background:#fff;border:2px solid #8893a0\"></i>no measurable effect</span></p>\n", o);
	for (i = 0; i < fx->n; i = j) {
		for (j = i + 1; j < fx->n && same_group(&fx->e[i], &fx->e[j]); j++)
			;
		html_effect_group(o, &fx->e[i], j - i);
	}
	if (!fx->nvar)
		return;
	fputs("<p class=\"sub\">Variance components: the spread of each cell's samples within a boot and of"
	      " its boot means beyond that (coefficients of variation, log scale). Host-side intervals are as"
	      " wide as the between-boot spread makes them.</p>\n<table>\n<tr><th>cell</th><th>metric</th>"
	      "<th>boots</th><th>samples</th><th>within a boot</th><th>between boots</th></tr>\n", o);
	for (i = 0; i < fx->nvar; i++) {
		const struct effect_var *v = &fx->var[i];
		char t[32];

		fputs("<tr><td>", o);
		html_escf(o, "%s %s", v->workload, v->label);
		fputs("</td><td><code>", o);
		html_esc(o, v->metric);
		fputs("</code></td>", o);
		snprintf(t, sizeof(t), "%zu", v->vc.boots);
		html_td_num(o, t);
		snprintf(t, sizeof(t), "%zu", v->vc.samples);
		html_td_num(o, t);
		fmt_value(t, sizeof(t), v->vc.within_cv_pct);
		html_td_num(o, t);
		fmt_value(t, sizeof(t), v->vc.between_cv_pct);
		html_td_num(o, t);
		fputs("</tr>\n", o);
	}
	fputs("</table>\n", o);
}
