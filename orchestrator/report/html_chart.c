#include "orchestrator/report/html.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "orchestrator/analysis/effects.h"
#include "orchestrator/model/balloon.h"

const struct html_metric html_main_metrics[] = {
	{ "fault_ns_per_4k", "First-touch cost (page faults)", "ns per 4 KiB, lower is better" },
	{ "access_ns", "Access latency (TLB reach)", "ns per access, lower is better" },
};

void html_td_num(FILE *o, const char *s)
{
	fputs("<td class=\"num\">", o);
	html_esc(o, s);
	fputs("</td>", o);
}

static const struct cell *base_cell(const struct report_input *in, const struct cell *c)
{
	size_t i;

	if (!in->base)
		return NULL;
	for (i = 0; i < in->base->ncells; i++)
		if (cell_same_key(&in->base->cells[i], c))
			return &in->base->cells[i];
	return NULL;
}

/* fill class by treatment: c0 never/never, c1 guest only, c2 host only, c3 both */
static int cell_colour(const struct cell *c)
{
	return (strcmp(c->host_thp, "never") ? 2 : 0) + (strcmp(c->guest_thp, "never") ? 1 : 0);
}

double html_nice_step(double range)
{
	double mag = pow(10, floor(log10(range))), f = range / mag;

	if (f <= 1)
		return mag;
	if (f <= 2)
		return 2 * mag;
	if (f <= 2.5)
		return 2.5 * mag;
	if (f <= 5)
		return 5 * mag;
	return 10 * mag;
}

struct axis {
	double max, step;
};

static double ax_x(const struct axis *a, double v)
{
	if (!isfinite(v) || v < 0)
		v = 0;
	if (v > a->max)
		v = a->max;
	return CH_LABEL + v / a->max * (CH_W - CH_LABEL - CH_RIGHT);
}

static void axis_fit(struct axis *a, double maxv)
{
	if (!isfinite(maxv) || maxv <= 0)
		maxv = 1;
	a->step = html_nice_step(maxv / 5);
	a->max = ceil(maxv / a->step - 1e-9) * a->step;
}

static void svg_axis(FILE *o, const struct axis *a, double y0, double y1)
{
	double v;
	char t[24];

	for (v = 0; v <= a->max + a->step / 2; v += a->step) {
		double x = ax_x(a, v);

		fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x, y0, x, y1);
		snprintf(t, sizeof(t), "%.6g", v);
		fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x, y1 + 14);
		html_esc(o, t);
		fputs("</text>", o);
	}
	fprintf(o, "<line class=\"axis\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", CH_LABEL, y1,
		CH_W - CH_RIGHT, y1);
}

static void svg_label(FILE *o, double y, const struct cell *c)
{
	char label[CELL_LABEL_MAX];

	cell_label(c, label, sizeof(label));
	fprintf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", CH_LABEL - 10, y);
	html_esc(o, label);
	fputs("</text>", o);
}

/* one horizontal bar per cell: geometric mean, 95% CI whisker, baseline's marker, validity */
static void html_metric_chart(const struct report_input *in, FILE *o, size_t mi)
{
	const struct results *r = in->res;
	const char *name = html_main_metrics[mi].metric;
	double maxv = 0, h;
	struct axis ax;
	size_t i;
	bool clipped = false;

	for (i = 0; i < r->ncells; i++) {
		const struct metric *m = cell_metric_find(&r->cells[i], name);
		const struct cell *bc = base_cell(in, &r->cells[i]);
		const struct metric *bm = bc ? cell_metric_find(bc, name) : NULL;

		if (m && m->n) {
			maxv = fmax(maxv, m->s.mean);
			if (isfinite(m->s.ci95_high))
				maxv = fmax(maxv, m->s.ci95_high);
		}
		if (bm && bm->n)
			maxv = fmax(maxv, bm->s.mean);
	}
	axis_fit(&ax, maxv);
	h = CH_TOP + (double)r->ncells * CH_ROW + CH_AXIS;
	fputs("<h3>", o);
	html_esc(o, html_main_metrics[mi].title);
	fputs(" <small>(<code>", o);
	html_esc(o, name);
	fputs("</code>: ", o);
	html_esc(o, html_main_metrics[mi].unit);
	fputs(")</small></h3>\n", o);
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" role=\"img\">",
		CH_W, h, CH_W, h);
	fputs("<title>", o);
	html_escf(o, "%s: geometric mean per cell with 95%% confidence interval (log scale)", name);
	fputs("</title>", o);
	svg_axis(o, &ax, CH_TOP, CH_TOP + (double)r->ncells * CH_ROW);
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		const struct metric *m = cell_metric_find(c, name);
		const struct cell *bc = base_cell(in, c);
		const struct metric *bm = bc ? cell_metric_find(bc, name) : NULL;
		double y = CH_TOP + (double)i * CH_ROW, ym = y + CH_ROW / 2.0, xe;
		char v[64];

		svg_label(o, ym + 4, c);
		if (!m || m->n == 0) {
			fprintf(o, "<text x=\"%d\" y=\"%.1f\" class=\"bad\">no data</text>", CH_LABEL + 6, ym + 4);
			continue;
		}
		report_mean_ci(v, sizeof(v), m);
		fprintf(o, "<rect class=\"bar c%d%s\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"18\">",
			cell_colour(c), c->valid ? "" : " invalid", CH_LABEL, y + 6, ax_x(&ax, m->s.mean) - CH_LABEL);
		fputs("<title>", o);
		html_escf(o, "%s %s: %s (n=%zu)%s%s", c->host_thp, name, v, m->n, c->valid ? "" : "; invalid: ",
		     c->valid ? "" : c->invalid_reason);
		fputs("</title></rect>", o);
		xe = ax_x(&ax, m->s.mean);
		if (isfinite(m->s.ci95_low)) {
			double x0 = ax_x(&ax, m->s.ci95_low), x1 = ax_x(&ax, m->s.ci95_high);

			clipped |= m->s.ci95_low < 0;
			fprintf(o, "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0, ym, x1, ym);
			if (m->s.ci95_low >= 0)
				fprintf(o, "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x0,
					ym - 6, x0, ym + 6);
			fprintf(o, "<line class=\"ci\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>", x1, ym - 6,
				x1, ym + 6);
			xe = fmax(xe, x1);
		}
		if (bm && bm->n) {
			char bv[20];

			fmt_value(bv, sizeof(bv), bm->s.mean);
			fprintf(o, "<line class=\"base\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"><title>",
				ax_x(&ax, bm->s.mean), y + 3, ax_x(&ax, bm->s.mean), y + CH_ROW - 3);
			html_escf(o, "baseline geometric mean %s", bv);
			fputs("</title></line>", o);
		}
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\">", fmin(xe + 8, (double)CH_W - CH_RIGHT + 8), ym + 4);
		html_esc(o, v);
		fputs("</text>", o);
		if (!c->valid)
			fprintf(o, "<text class=\"bad\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">✗ invalid</text>",
				CH_W - 4, ym + 4);
	}
	fputs("</svg>\n", o);
	if (clipped)
		fputs("<p class=\"sub\">Whiskers that reach below 0 are cut at 0 (too few repetitions for a tight interval).</p>\n", o);
}

static void html_legend(FILE *o, bool with_base)
{
	static const char *const names[] = { "host never, guest never", "host never, guest on",
					     "host on, guest never", "host on, guest on" };
	static const char *const colours[] = { "#8da0cb", "#66c2a5", "#fc8d62", "#e5a50a" };
	size_t i;

	fputs("<p class=\"legend\">", o);
	for (i = 0; i < ARRAY_SIZE(names); i++)
		fprintf(o, "<span><i class=\"sw\" style=\"background:%s\"></i>%s</span>", colours[i], names[i]);
	fputs("<span>├─┤ 95% confidence interval of the geometric mean (log scale)</span>", o);
	if (with_base)
		fputs("<span>┆ baseline geometric mean</span>", o);
	fputs("<span><i class=\"sw\" style=\"background:#f3c9c5;border:1px dashed #b3261e\"></i>invalid cell</span></p>\n", o);
}

void html_charts(const struct report_input *in, FILE *o)
{
	size_t i;

	html_legend(o, in->base != NULL);
	for (i = 0; i < ARRAY_SIZE(html_main_metrics); i++)
		html_metric_chart(in, o, i);
}

void html_coverage(const struct report_input *in, FILE *o)
{
	const struct results *r = in->res;
	double minc = isfinite(r->settings.min_coverage_pct) ? r->settings.min_coverage_pct : NAN;
	double h = CH_TOP + (double)r->ncells * CH_ROW + CH_AXIS;
	struct axis ax = { 100, 20 };
	size_t i;

	fputs("<p class=\"sub\">Share of guest RAM on host huge pages (QEMU smaps) and of the workload buffer on"
	      " guest huge pages. A cell is valid when every repetition shows the intended state: at least the"
	      " minimum where THP is on, at most 1% where it is never.</p>\n", o);
	fputs("<p class=\"legend\"><span><i class=\"sw\" style=\"background:#3d6fb6\"></i>host huge %</span>"
	      "<span><i class=\"sw\" style=\"background:#9cc3ef\"></i>guest huge %</span>", o);
	if (isfinite(minc))
		fputs("<span>╎ minimum for an 'on' cell</span>", o);
	fputs("</p>\n", o);
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" role=\"img\">",
		CH_W, h, CH_W, h);
	fputs("<title>huge-page coverage per cell</title>", o);
	svg_axis(o, &ax, CH_TOP, CH_TOP + (double)r->ncells * CH_ROW);
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		double y = CH_TOP + (double)i * CH_ROW, ym = y + CH_ROW / 2.0;
		const struct metric *cov[2] = { &c->host_cov, &c->guest_cov };
		const char *cls[2] = { "cov-host", "cov-guest" };
		char txt[64], hv[20], gv[20];
		int k;

		svg_label(o, ym + 4, c);
		for (k = 0; k < 2; k++) {
			double v = cov[k]->n ? cov[k]->s.mean : 0;

			fprintf(o, "<rect class=\"bar %s%s\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"10\"><title>",
				cls[k], c->valid ? "" : " invalid", CH_LABEL, y + 5 + k * 11, ax_x(&ax, v) - CH_LABEL);
			html_escf(o, "%s huge pages: %.1f%% (min %.1f%%, n=%zu)", k ? "guest" : "host", v,
			     cov[k]->n ? cov[k]->s.min : 0, cov[k]->n);
			fputs("</title></rect>", o);
		}
		if (c->host_cov.n)
			snprintf(hv, sizeof(hv), "%.1f%%", c->host_cov.s.mean);
		else
			snprintf(hv, sizeof(hv), "n/a");
		if (c->guest_cov.n)
			snprintf(gv, sizeof(gv), "%.1f%%", c->guest_cov.s.mean);
		else
			snprintf(gv, sizeof(gv), "n/a");
		snprintf(txt, sizeof(txt), "host %s, guest %s", hv, gv);
		fprintf(o, "<text x=\"%d\" y=\"%.1f\">", CH_W - CH_RIGHT + 8, ym + 4);
		html_esc(o, txt);
		fputs("</text>", o);
		if (!c->valid)
			fprintf(o, "<text class=\"bad\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">✗</text>", CH_W - 4,
				ym + 4);
	}
	if (isfinite(minc))
		fprintf(o, "<line class=\"minline\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>", ax_x(&ax, minc),
			CH_TOP, ax_x(&ax, minc), CH_TOP + (double)r->ncells * CH_ROW);
	fputs("</svg>\n", o);
}

/*
 * The recovery arms: per guest, host huge-page coverage of guest RAM over
 * time from the setting going in (a line, 0-100% on the left axis) and the
 * guest's access passes (dots, ns on the right axis), the interval's end
 * marked; the figures below each chart.
 */
#define RC_H 240
#define RC_TOP 10
#define RC_LEFT 60
#define RC_RIGHT 70

static double rc_y(double v, double maxv)
{
	if (!isfinite(v) || v < 0)
		v = 0;
	if (v > maxv)
		v = maxv;
	return RC_TOP + RC_H - v / maxv * RC_H;
}

static void html_recovery_one(const struct results *r, const struct collapse_log *c, FILE *o)
{
	const struct probe_log *p = &c->probe;
	double tmin = 0, tmax = 1, nsmax = 0, ref = results_recovery_ref_ns(r, c), w = CH_W - RC_LEFT - RC_RIGHT;
	char t50[24] = "not reached", t90[24] = "not reached", refs[64] = "no fresh boot on the setting in this run";
	struct axis ax;
	size_t i;
#define RC_X(t) (RC_LEFT + ((t) - tmin) / (tmax - tmin) * w)

	for (i = 0; i < c->n; i++)
		tmax = fmax(tmax, c->series[i].t_s);
	for (i = 0; c->has_probe && i < p->n; i++) {
		tmin = fmin(tmin, p->series[i].t_s);
		tmax = fmax(tmax, p->series[i].t_s);
		nsmax = fmax(nsmax, p->series[i].access_ns);
	}
	if (isfinite(ref))
		nsmax = fmax(nsmax, ref);
	axis_fit(&ax, nsmax);
	fputs("<h3>", o);
	html_escf(o, "guest %u, host %s/%s, %s, round %u", c->boot, c->host_thp, c->prefault, c->method, c->round + 1);
	fputs("</h3>\n", o);
	if (c->error[0]) {
		fputs("<p class=\"bad\">", o);
		html_escf(o, "failed: %s", c->error);
		fputs("</p>\n", o);
		return;
	}
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">",
		CH_W, RC_H + RC_TOP + 34, CH_W, RC_H + RC_TOP + 34);
	fputs("<title>host huge-page coverage and guest access time over the recovery</title>", o);
	for (i = 0; i <= 5; i++) {
		double y = rc_y(i * 20.0, 100);

		fprintf(o, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", RC_LEFT, y,
			CH_W - RC_RIGHT, y);
		fprintf(o, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%zu%%</text>", RC_LEFT - 6, y + 4,
			i * 20);
		fprintf(o, "<text class=\"tick\" x=\"%d\" y=\"%.1f\">%.4g ns</text>", CH_W - RC_RIGHT + 6, y + 4,
			ax.max * (double)i / 5);
	}
	fprintf(o, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", RC_LEFT, RC_TOP + RC_H,
		CH_W - RC_RIGHT, RC_TOP + RC_H);
	{
		/* round ticks from the first at or after tmin; 0 s (the setting going in) among them */
		double step = html_nice_step((tmax - tmin) / 6), t;

		for (t = ceil(tmin / step) * step; t <= tmax + step / 100; t += step)
			fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.4g s</text>", RC_X(t),
				RC_TOP + RC_H + 16, fabs(t) < step / 100 ? 0 : t);
		fprintf(o, "<line class=\"axis\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"><title>the setting goes in</title></line>",
			RC_X(0), RC_TOP, RC_X(0), RC_TOP + RC_H);
	}
	if (isfinite(c->interval_s))
		fprintf(o, "<line class=\"minline\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"><title>interval end</title></line>",
			RC_X(c->interval_s), RC_TOP, RC_X(c->interval_s), RC_TOP + RC_H);
	if (isfinite(ref))
		fprintf(o, "<line stroke=\"#c0392b\" stroke-dasharray=\"4 3\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\">"
			   "<title>fresh boot: %.1f ns</title></line>",
			RC_LEFT, rc_y(ref, ax.max), CH_W - RC_RIGHT, rc_y(ref, ax.max), ref);
	fputs("<polyline fill=\"none\" stroke=\"#3d6fb6\" stroke-width=\"2.5\" points=\"", o);
	for (i = 0; i < c->n; i++)
		fprintf(o, "%.1f,%.1f ", RC_X(c->series[i].t_s), rc_y(c->series[i].huge_pct, 100));
	fputs("\"/>", o);
	for (i = 0; c->has_probe && i < p->n; i++) {
		fprintf(o, "<circle fill=\"#e08a2c\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>", RC_X(p->series[i].t_s),
			rc_y(p->series[i].access_ns, ax.max));
		html_escf(o, "%.1f s: %.1f ns per access", p->series[i].t_s, p->series[i].access_ns);
		fputs("</title></circle>", o);
	}
	fputs("</svg>\n<p class=\"sub\">", o);
	if (isfinite(c->t50_s))
		snprintf(t50, sizeof(t50), "%.2f s", c->t50_s);
	if (isfinite(c->t90_s))
		snprintf(t90, sizeof(t90), "%.2f s", c->t90_s);
	if (isfinite(ref))
		snprintf(refs, sizeof(refs), "a fresh boot on the setting: %.1f", ref);
	html_escf(o, "host%% %.1f -> %.1f (the guest ever touched %llu MiB, %.1f%% of it huge at the end); 50%% at %s, 90%% at %s;"
		  " stopped by %s after %.1f s", c->cov_before_pct, c->cov_after_pct, c->resident_kb_after / 1024,
		  c->resident_huge_pct_after, t50, t90, c->stopped[0] ? c->stopped : "the end", c->interval_s);
	if (c->has_khp)
		html_escf(o, "; khugepaged pages_to_scan %llu, scan_sleep_millisecs %llu, CPU %.2f s, %llu pages collapsed",
			  c->khp.pages_to_scan, c->khp.scan_sleep_ms, c->khp.cpu_s, c->khp.pages_collapsed);
	else
		html_escf(o, "; collapse calls %.2f s, %llu of %llu 2M blocks", c->call_s, c->collapsed, c->blocks);
	if (c->has_probe)
		html_escf(o, ". Access ns before %.1f, during %.1f, after %.1f; %s", p->before_ns, p->during_ns, p->after_ns,
			  refs);
	fputs("</p>\n", o);
#undef RC_X
}

void html_recovery(const struct report_input *in, FILE *o)
{
	size_t i;

	fputs("<p class=\"sub\">The guests booted and ran on host THP never; at 0 s the setting went in and guest RAM"
	      " was collapsed (madvise) or left to khugepaged. Line: host huge pages over the guest-RAM mapping"
	      " (left axis); dots: the guest's access passes (right axis), each at its arrival; dashed: a fresh"
	      " boot's access time on the setting; the vertical line: the interval's end.</p>\n", o);
	for (i = 0; i < in->res->ncollapses; i++)
		html_recovery_one(in->res, &in->res->collapses[i], o);
}

/*
 * The KSM arm over time: per group, each guest's host huge-page share (0-100%)
 * and pages_sharing (scaled to its maximum, right axis) against seconds from
 * the group's first boot
 */
#define KSM_H 180

static double ksm_x(double t, double tmax)
{
	return CH_LABEL + (tmax > 0 ? t / tmax : 0) * (CH_W - CH_LABEL - CH_RIGHT);
}

static double ksm_y(double frac)
{
	if (!isfinite(frac) || frac < 0)
		frac = 0;
	return CH_TOP + (1 - fmin(frac, 1)) * KSM_H;
}

static void ksm_chart(const struct ksm_log *k, FILE *o)
{
	static const char *const colour[] = { "#3d6fb6", "#9cc3ef", "#2e8b57", "#8fbc8f" };
	double tmax = 0, smax = (double)k->pages_sharing_max, step, t;
	size_t i;
	unsigned g;

	for (i = 0; i < k->n; i++)
		tmax = fmax(tmax, k->series[i].t_s);
	for (i = 0; i < k->ncov; i++)
		tmax = fmax(tmax, k->cov[i].t_s);
	step = html_nice_step(fmax(tmax, 1) / 6);
	tmax = ceil(fmax(tmax, 1) / step) * step;
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">",
		CH_W, CH_TOP + KSM_H + CH_AXIS, CH_W, CH_TOP + KSM_H + CH_AXIS);
	fputs("<title>", o);
	html_escf(o, "KSM %s, host %s/%s, round %u", k->ksm, k->host_thp, k->prefault, k->round + 1);
	fputs("</title>", o);
	for (t = 0; t <= tmax + step / 2; t += step) {
		fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>", ksm_x(t, tmax), CH_TOP,
			ksm_x(t, tmax), CH_TOP + KSM_H);
		fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.6g s</text>", ksm_x(t, tmax),
			CH_TOP + KSM_H + 14, t);
	}
	for (i = 0; i <= 4; i++)
		fprintf(o, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%zu%%</text>", CH_LABEL - 6,
			ksm_y((double)i / 4) + 4, i * 25);
	fprintf(o, "<text class=\"tick\" x=\"%d\" y=\"%d\">pages_sharing %llu</text>", CH_W - CH_RIGHT + 6, CH_TOP + 10,
		k->pages_sharing_max);
	for (g = 0; g < k->guests; g++) {
		fprintf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", colour[g % 4]);
		for (i = 0; i < k->ncov; i++)
			if (k->cov[i].guest == g)
				fprintf(o, "%.1f,%.1f ", ksm_x(k->cov[i].t_s, tmax), ksm_y(k->cov[i].huge_pct / 100));
		fprintf(o, "\"><title>guest %u: host huge %%</title></polyline>", k->first_boot + g);
	}
	if (smax > 0) {
		fputs("<polyline fill=\"none\" stroke=\"#c0392b\" stroke-width=\"2\" stroke-dasharray=\"5,3\" points=\"", o);
		for (i = 0; i < k->n; i++)
			fprintf(o, "%.1f,%.1f ", ksm_x(k->series[i].t_s, tmax),
				ksm_y((double)k->series[i].pages_sharing / smax));
		fputs("\"><title>pages_sharing</title></polyline>", o);
	}
	fprintf(o, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", CH_LABEL, CH_TOP + KSM_H,
		CH_W - CH_RIGHT, CH_TOP + KSM_H);
	fputs("</svg>\n", o);
}

void html_ksm(const struct report_input *in, FILE *o)
{
	const struct results *r = in->res;
	size_t i;

	fputs("<p class=\"sub\">Each group of the KSM arm over time (seconds from its first boot): every guest's share"
	      " of guest RAM on host huge pages (QEMU smaps; solid lines, left axis) and the host's KSM pages_sharing"
	      " (dashed, scaled to its maximum). In the on arm KSM starts after every guest's first measured"
	      " repetition; merging a page inside a huge page splits it.</p>\n", o);
	fputs("<p class=\"legend\"><span><i class=\"sw\" style=\"background:#3d6fb6\"></i>guest 1 host huge %</span>"
	      "<span><i class=\"sw\" style=\"background:#9cc3ef\"></i>guest 2</span>"
	      "<span><i class=\"sw\" style=\"background:#c0392b\"></i>pages_sharing</span></p>\n", o);
	for (i = 0; i < r->nksms; i++) {
		const struct ksm_log *k = &r->ksms[i];

		fputs("<h3>", o);
		html_escf(o, "KSM %s, host %s/%s, round %u: pages_sharing up to %llu, %llu full scan(s), host "
			  "thp_split_pmd +%llu", k->ksm, k->host_thp, k->prefault, k->round + 1, k->pages_sharing_max,
			  k->full_scans, k->thp_split_pmd);
		fputs("</h3>\n", o);
		ksm_chart(k, o);
	}
}

/*
 * The free page reporting arm: per window of the reporting arm, QEMU's RSS
 * (MiB, left axis; a line and a dot per sample) against seconds from the
 * guest's free mark, the RSS at the free dashed and that less the freed
 * buffer marked, and host huge-page coverage at the free, the least RSS and
 * the re-touch as labelled dots on the right axis (0-100%).
 */
static void balloon_chart(const struct balloon_log *b, FILE *o)
{
	double tmax = b->window_s, mmax = 0, tmin_rss = NAN, w = CH_W - RC_LEFT - RC_RIGHT, step, t, least = INFINITY;
	double cov[3] = { b->cov_before_pct, b->cov_after_free_pct, b->cov_after_retouch_pct }, ct[3];
	static const char *const cov_name[3] = { "at the free", "while left", "after the re-touch" };
	struct axis ax;
	size_t i;
	int k;
#define BL_X(t) (RC_LEFT + (t) / tmax * w)

	if (!isfinite(tmax) || tmax < 0)
		tmax = 0;
	for (i = 0; i < b->n; i++) {
		if (!isfinite(b->series[i].t_s))
			continue;
		tmax = fmax(tmax, b->series[i].t_s);
		mmax = fmax(mmax, (double)b->series[i].rss_kb / 1024);
		if ((double)b->series[i].rss_kb < least) {
			least = (double)b->series[i].rss_kb;
			tmin_rss = b->series[i].t_s;
		}
	}
	mmax = fmax(mmax, fmax((double)b->rss_before_kb, (double)b->rss_after_retouch_kb) / 1024);
	ct[2] = tmax;	/* the re-touch: the window's end or the last sample, before the axis is rounded */
	step = html_nice_step(fmax(tmax, 1) / 6);
	tmax = ceil(fmax(tmax, 1) / step - 1e-9) * step;
	axis_fit(&ax, mmax);
	ct[0] = 0;
	ct[1] = isfinite(tmin_rss) ? tmin_rss : ct[2] / 2;
	fprintf(o, "<svg class=\"balloon-chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		   "viewBox=\"0 0 %d %d\" role=\"img\">", CH_W, RC_H + RC_TOP + 34, CH_W, RC_H + RC_TOP + 34);
	fputs("<title>", o);
	html_escf(o, "QEMU RSS over the free page reporting window, guest %u, host %s/%s", b->boot, b->host_thp,
		  b->prefault);
	fputs("</title>", o);
	for (i = 0; i <= 5; i++) {
		double y = rc_y(ax.max * (double)i / 5, ax.max);

		fprintf(o, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", RC_LEFT, y,
			CH_W - RC_RIGHT, y);
		fprintf(o, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.6g MiB</text>", RC_LEFT - 6,
			y + 4, ax.max * (double)i / 5);
		fprintf(o, "<text class=\"tick\" x=\"%d\" y=\"%.1f\">%zu%%</text>", CH_W - RC_RIGHT + 6, y + 4, i * 20);
	}
	for (t = 0; t <= tmax + step / 100; t += step)
		fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.4g s</text>", BL_X(t),
			RC_TOP + RC_H + 16, t);
	fprintf(o, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>", RC_LEFT, RC_TOP + RC_H,
		CH_W - RC_RIGHT, RC_TOP + RC_H);
	if (b->rss_before_kb) {
		double mb = (double)b->rss_before_kb / 1024, y = rc_y(mb, ax.max);

		fprintf(o, "<line stroke=\"#8893a0\" stroke-dasharray=\"4 3\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\">"
			   "<title>RSS at the free: %.0f MiB</title></line>", RC_LEFT, y, CH_W - RC_RIGHT, y, mb);
		if (b->freed_kb && b->freed_kb <= b->rss_before_kb) {
			double fm = (double)b->freed_kb / 1024, yf = rc_y(mb - fm, ax.max);

			fprintf(o, "<line class=\"minline\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"><title>RSS at the "
				   "free less the %.0f MiB freed</title></line>", RC_LEFT, yf, CH_W - RC_RIGHT, yf, fm);
			fprintf(o, "<text class=\"tick\" x=\"%d\" y=\"%.1f\">-%.0f MiB freed</text>", RC_LEFT + 6,
				yf - 4, fm);
		}
	}
	fputs("<polyline fill=\"none\" stroke=\"#3d6fb6\" stroke-width=\"2\" points=\"", o);
	for (i = 0; i < b->n; i++)
		if (isfinite(b->series[i].t_s))
			fprintf(o, "%.1f,%.1f ", BL_X(b->series[i].t_s),
				rc_y((double)b->series[i].rss_kb / 1024, ax.max));
	fputs("\"/>", o);
	for (i = 0; i < b->n; i++) {
		if (!isfinite(b->series[i].t_s))
			continue;
		fprintf(o, "<circle class=\"bl-rss\" fill=\"#3d6fb6\" cx=\"%.1f\" cy=\"%.1f\" r=\"2\"><title>",
			BL_X(b->series[i].t_s), rc_y((double)b->series[i].rss_kb / 1024, ax.max));
		html_escf(o, "%.2f s: %.0f MiB", b->series[i].t_s, (double)b->series[i].rss_kb / 1024);
		fputs("</title></circle>", o);
	}
	for (k = 0; k < 3; k++) {
		if (!isfinite(cov[k]))
			continue;
		fprintf(o, "<circle class=\"bl-cov\" fill=\"#e08a2c\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>", BL_X(ct[k]),
			rc_y(cov[k], 100));
		html_escf(o, "host huge %s: %.1f%%", cov_name[k], cov[k]);
		fputs("</title></circle>", o);
		fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%.0f%%</text>", BL_X(ct[k]),
			rc_y(cov[k], 100) - 8, k == 2 ? "end" : k ? "middle" : "start", cov[k]);
	}
	fputs("</svg>\n", o);
#undef BL_X
}

void html_balloon_charts(const struct report_input *in, FILE *o)
{
	const struct results *r = in->res;
	size_t i;
	bool any = false;

	for (i = 0; i < r->nballoons; i++) {
		const struct balloon_log *b = &r->balloons[i];

		if (strcmp(b->balloon, "reporting") || b->error[0])
			continue;
		if (!any)
			fputs("<p class=\"sub\">Each window of the reporting arm: QEMU's RSS (line, left axis) against"
			      " seconds from the guest's free mark to its re-touch, sampled every 250 ms; dashed: the RSS"
			      " at the free; red: that less the freed buffer, where the RSS would be if the host got all"
			      " of it back; dots: guest RAM on host huge pages (right axis) at the free, at the least RSS"
			      " and after the re-touch.</p>\n", o);
		any = true;
		fputs("<h3>", o);
		html_escf(o, "guest %u, host %s/%s, guest THP %s, round %u, rep %u: %.0f MiB freed", b->boot, b->host_thp,
			  b->prefault, b->guest_thp, b->round + 1, b->rep, (double)b->freed_kb / 1024);
		fputs("</h3>\n", o);
		balloon_chart(b, o);
	}
}
