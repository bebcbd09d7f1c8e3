#include "orchestrator/report/fleet.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fstree.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/model/results_load.h"
#include "orchestrator/history/history.h"
#include "orchestrator/report/html.h"

/* the trend's series colours (inline attributes: the page has no script and no external style) */
static const char *const fleet_colours[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
					     "#ff7f0e", "#17becf", "#8c564b", "#e377c2" };
#define FLEET_NSERIES ARRAY_SIZE(fleet_colours)

#define TR_W 1000
#define TR_LEFT 70
#define TR_RIGHT 30
#define TR_TOP 10
#define TR_H 220
#define TR_AXIS 34

struct fx_point {
	bool have;
	double est, lo, hi;
};

struct fx_series {
	char key[512];
	char label[256];
	struct fx_point *pts;		/* one per charted run, oldest first */
};

static bool run_failed(const struct history_run_row *r)
{
	return strcmp(r->status, "complete") || !r->gate_passed;
}

/* a headline effect: every side but the interaction, where it has a number */
static bool headline(const struct effect *fx)
{
	return strcmp(fx->side, "interaction") != 0;
}

static void effect_key(const struct effect *fx, char *key, size_t klen, char *label, size_t llen)
{
	snprintf(key, klen, "%s|%s|%s|%s|%s|%s|%s|%s", fx->workload, fx->host_thp, fx->guest_thp, fx->host_state,
		 fx->side, fx->component, fx->at_guest, fx->metric);
	if (fx->at_guest[0])
		snprintf(label, llen, "%s %s %s (guest %s, %s)", fx->workload, fx->side, fx->component, fx->at_guest,
			 fx->metric);
	else
		snprintf(label, llen, "%s %s %s (%s)", fx->workload, fx->side, fx->component, fx->metric);
}

/* a stored run as the model with its effects; false with the reason in why */
static bool run_load(const struct history_run_row *row, struct results *r, char *why, size_t wlen)
{
	struct err e = ERR_INIT;
	char name[64];

	snprintf(name, sizeof(name), "run %lld", row->id);
	if (results_load_text(row->results_json, strlen(row->results_json), name, r, &e) || effects_attach(r, &e)) {
		snprintf(why, wlen, "%s", e.msg);
		results_release(r);
		results_init(r);
		return false;
	}
	return true;
}

static void split_table(FILE *o, const struct results *r)
{
	const struct effects *fx = r->effects;
	char t[200];
	size_t i;

	if (!fx || !fx->n) {
		fputs("<p class=\"sub\">This run has no split: none of its workloads ran the cells a split needs.</p>\n", o);
		return;
	}
	if (fx->tcg) {
		fputs("<p class=\"sub\"><b>TCG run:</b> ", o);
		html_esc(o, EFFECTS_TCG_NOTE);
		fputs(".</p>\n", o);
	}
	fputs("<table class=\"split\">\n<tr><th>workload</th><th>THP (against never)</th><th>side</th><th>component</th>"
	      "<th>metric</th><th>effect (95% CI)</th><th>note</th></tr>\n", o);
	for (i = 0; i < fx->n; i++) {
		const struct effect *f = &fx->e[i];

		fputs("<tr class=\"split-row\"><td>", o);
		html_esc(o, f->workload);
		fputs("</td><td>", o);
		html_escf(o, "host %s, guest %s%s", f->host_thp, f->guest_thp,
			  strcmp(f->host_state, "fragmented") ? "" : ", host fragmented");
		fputs("</td><td>", o);
		html_esc(o, f->side);
		fputs("</td><td>", o);
		html_esc(o, f->component);
		if (f->at_guest[0])
			html_escf(o, " (guest %s)", f->at_guest);
		fputs("</td><td><code>", o);
		html_esc(o, f->metric);
		fputs("</code></td>", o);
		html_fmt_effect(t, sizeof(t), f);
		fprintf(o, "<td class=\"num%s\">", f->available ? "" : " na");
		html_esc(o, t);
		fputs("</td><td>", o);
		html_esc(o, f->note);
		fputs("</td></tr>\n", o);
	}
	fputs("</table>\n", o);
}

static struct fx_series *series_find(struct fx_series *s, size_t *ns, size_t cap, const char *key, const char *label,
				     size_t npts, size_t *dropped, bool *oom)
{
	struct fx_point *pts;
	size_t i;

	for (i = 0; i < *ns; i++)
		if (!strcmp(s[i].key, key))
			return &s[i];
	if (*ns == cap) {
		(*dropped)++;
		return NULL;
	}
	/* into a local, checked, then stored: gcc 12's -fanalyzer loses a pointer stored
	 * in an array element and read back from it there, and calls it a leak */
	pts = calloc(npts, sizeof(*pts));
	if (!pts) {
		*oom = true;
		return NULL;
	}
	s[*ns].pts = pts;
	snprintf(s[*ns].key, sizeof(s[*ns].key), "%s", key);
	snprintf(s[*ns].label, sizeof(s[*ns].label), "%s", label);
	return &s[(*ns)++];
}

static double tr_y(double v, double maxv)
{
	return TR_TOP + (maxv - v) / (2 * maxv) * TR_H;
}

static double tr_x(size_t i, size_t n)
{
	if (n < 2)
		return TR_LEFT + (TR_W - TR_LEFT - TR_RIGHT) / 2.0;
	return TR_LEFT + 20 + (double)i / (double)(n - 1) * (TR_W - TR_LEFT - TR_RIGHT - 40);
}

static void trend_svg(FILE *o, const struct history_host *h, const struct fx_series *s, size_t ns)
{
	double maxv = 0, step, v;
	size_t i, k, n = h->n, every = n > 12 ? (n + 11) / 12 : 1;
	char t[64];

	for (k = 0; k < ns; k++)
		for (i = 0; i < n; i++) {
			const struct fx_point *p = &s[k].pts[i];

			if (!p->have)
				continue;
			maxv = fmax(maxv, fabs(p->est));
			if (isfinite(p->lo))
				maxv = fmax(maxv, fmax(fabs(p->lo), fabs(p->hi)));
		}
	if (!(maxv > 0))
		maxv = 1;
	step = html_nice_step(maxv / 2);
	maxv = ceil(maxv / step - 1e-9) * step;
	fprintf(o, "<svg class=\"trend\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"role=\"img\"><title>", TR_W, TR_TOP + TR_H + TR_AXIS, TR_W, TR_TOP + TR_H + TR_AXIS);
	html_escf(o, "host %s: headline effects over its last %zu run(s), percent faster with THP", h->name, n);
	fputs("</title>", o);
	for (v = -maxv; v <= maxv + step / 2; v += step) {
		double y = tr_y(v, maxv);

		fprintf(o, "<line class=\"%s\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", fabs(v) < step / 2 ? "axis" : "grid",
			TR_LEFT, y, TR_W - TR_RIGHT, y);
		snprintf(t, sizeof(t), "%+.4g%%", fabs(v) < step / 2 ? 0.0 : v);
		fprintf(o, "<text class=\"tick\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", TR_LEFT - 6, y + 4);
		html_esc(o, t);
		fputs("</text>", o);
	}
	for (i = 0; i < n; i++) {
		const struct history_run_row *r = &h->runs[n - 1 - i];
		struct tm tm;

		if (i % every && i != n - 1)
			continue;
		if (!gmtime_r(&r->started, &tm) || !strftime(t, sizeof(t), "%Y-%m-%d %H:%M", &tm))
			snprintf(t, sizeof(t), "?");
		fprintf(o, "<text class=\"%s\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">", run_failed(r) ? "bad" : "tick",
			tr_x(i, n), TR_TOP + TR_H + 16);
		html_escf(o, "%s%s", t, run_failed(r) ? " ✗" : "");
		fputs("</text>", o);
	}
	for (k = 0; k < ns; k++) {
		const char *c = fleet_colours[k];
		bool open = false;

		for (i = 0; i < n; i++) {		/* the line, broken where an effect was not available */
			const struct fx_point *p = &s[k].pts[i];

			if (!p->have) {
				if (open)
					fputs("\"/>", o);
				open = false;
				continue;
			}
			if (!open)
				fprintf(o, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2.5\" points=\"", c);
			fprintf(o, "%s%.1f,%.1f", open ? " " : "", tr_x(i, n), tr_y(p->est, maxv));
			open = true;
		}
		if (open)
			fputs("\"/>", o);
		for (i = 0; i < n; i++) {
			const struct fx_point *p = &s[k].pts[i];
			double x = tr_x(i, n);

			if (!p->have)
				continue;
			if (isfinite(p->lo))
				fprintf(o, "<line stroke=\"%s\" stroke-opacity=\".5\" stroke-width=\"1.5\" x1=\"%.1f\" y1=\"%.1f\" "
					"x2=\"%.1f\" y2=\"%.1f\"/>", c, x, tr_y(p->lo, maxv), x, tr_y(p->hi, maxv));
			fprintf(o, "<circle fill=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>", c, x, tr_y(p->est, maxv));
			if (isfinite(p->lo))
				html_escf(o, "run %lld, %s: %+.1f%% [%+.1f, %+.1f]", h->runs[n - 1 - i].id, s[k].label, p->est,
					  p->lo, p->hi);
			else
				html_escf(o, "run %lld, %s: %+.1f%%", h->runs[n - 1 - i].id, s[k].label, p->est);
			fputs("</title></circle>", o);
		}
	}
	fputs("</svg>\n<p class=\"legend\">", o);
	for (k = 0; k < ns; k++) {
		fprintf(o, "<span><i class=\"sw\" style=\"background:%s\"></i>", fleet_colours[k]);
		html_esc(o, s[k].label);
		fputs("</span>", o);
	}
	fputs("<span>│ 95% confidence interval</span><span class=\"mark-bad\">✗ run failed or failed its gate</span></p>\n", o);
}

/* the trend of the host's headline effects over its loaded runs, oldest first */
static int host_trend(FILE *o, const struct history_host *h, struct results *r, struct err *e)
{
	struct fx_series s[FLEET_NSERIES];
	size_t ns = 0, dropped = 0, unread = 0, i, j, k;
	char key[512], label[256], why[ERR_MSG_MAX];
	bool oom = false;

	memset(s, 0, sizeof(s));
	for (i = 0; i < h->n; i++) {
		if (!run_load(&h->runs[h->n - 1 - i], r, why, sizeof(why))) {
			unread++;
			continue;
		}
		for (j = 0; j < r->effects->n; j++) {
			const struct effect *f = &r->effects->e[j];
			struct fx_series *x;

			if (!headline(f) || !f->available)
				continue;
			effect_key(f, key, sizeof(key), label, sizeof(label));
			x = series_find(s, &ns, FLEET_NSERIES, key, label, h->n, &dropped, &oom);
			if (!x) {
				if (oom) {
					results_release(r);
					results_init(r);
					for (k = 0; k < ns; k++)
						free(s[k].pts);
					return err_set(e, -ENOMEM, "out of memory");
				}
				continue;
			}
			x->pts[i] = (struct fx_point){ true, f->estimate_pct, f->ci95_low_pct, f->ci95_high_pct };
		}
		results_release(r);
		results_init(r);
	}
	if (!ns)
		fputs("<p class=\"sub na\">No headline effect is available in these runs (each needs its cells valid"
		      " and, host-side, two or more boots per host setting).</p>\n", o);
	else
		trend_svg(o, h, s, ns);
	if (dropped)
		fprintf(o, "<p class=\"sub\">Only the first %zu effects are drawn.</p>\n", FLEET_NSERIES);
	if (unread)
		fprintf(o, "<p class=\"sub\">%zu stored run(s) could not be read and are left out.</p>\n", unread);
	for (k = 0; k < ns; k++)
		free(s[k].pts);
	return 0;
}

static void kv(FILE *o, const char *k, const char *v)
{
	fputs("<tr><th>", o);
	html_esc(o, k);
	fputs("</th><td>", o);
	html_esc(o, v);
	fputs("</td></tr>\n", o);
}

/* the shown runs marked as the first after a known change (thpeval history --mark-change) */
static void marked_changes(FILE *o, const struct history_host *h)
{
	char when[32];
	size_t i, n = 0;

	for (i = 0; i < h->n; i++) {
		if (!h->runs[i].change_why[0])
			continue;
		if (!n++)
			fputs("<p>Known changes (the history gate reads from the newest on):</p>\n<ul>\n", o);
		report_fmt_time(when, sizeof(when), h->runs[i].started);
		fputs("<li>", o);
		html_escf(o, "run %lld (%s): %s", h->runs[i].id, when, h->runs[i].change_why);
		fputs("</li>\n", o);
	}
	if (n)
		fputs("</ul>\n", o);
}

static int host_section(FILE *o, size_t idx, const struct history_host *h, struct results *r, struct err *e)
{
	const struct history_run_row *last = h->n ? &h->runs[0] : NULL;
	const char *name = h->name[0] ? h->name : "(unnamed: runs recorded before host names)";
	char when[32], t[64], why[ERR_MSG_MAX];

	fprintf(o, "<section class=\"host\" id=\"host-%zu\">\n<h2>", idx);
	html_escf(o, "host %s", name);
	fputs("</h2>\n", o);
	if (!last) {
		fputs("<div class=\"banner warn\">No run of this host is recorded.</div>\n</section>\n", o);
		return 0;
	}
	report_fmt_time(when, sizeof(when), last->started);
	fputs("<table class=\"kv\">\n", o);
	kv(o, "CPU model", last->cpu_model);
	kv(o, "kernel", last->kernel);
	snprintf(t, sizeof(t), "%lld", h->nruns);
	kv(o, "runs recorded", t);
	snprintf(t, sizeof(t), "%s (run %lld)", when, last->id);
	kv(o, "last run", t);
	fputs("</table>\n", o);
	if (strcmp(last->status, "complete")) {
		fputs("<div class=\"banner bad\">", o);
		html_escf(o, "The last run did not complete: it is %s.", last->status);
		fputs("</div>\n", o);
	} else if (!last->gate_passed) {
		fputs("<div class=\"banner bad\">The last run failed its regression gate.</div>\n", o);
	}
	marked_changes(o, h);
	fputs("<h3>", o);
	html_escf(o, "Split of the latest run (run %lld)", last->id);
	fputs("</h3>\n", o);
	if (run_load(last, r, why, sizeof(why))) {
		split_table(o, r);
		results_release(r);
		results_init(r);
	} else {
		fputs("<div class=\"banner bad\">", o);
		html_escf(o, "The stored results of this run cannot be read: %s", why);
		fputs("</div>\n", o);
	}
	fputs("<h3>", o);
	html_escf(o, "Trend of the headline effects over the last %zu of %lld run(s)", h->n, h->nruns);
	fputs("</h3>\n", o);
	if (host_trend(o, h, r, e))
		return e->code;
	fputs("</section>\n", o);
	return 0;
}

static void summary_table(FILE *o, const struct history_host *v, size_t n)
{
	char when[32], t[32];
	size_t i;

	fputs("<table class=\"hosts\">\n<tr><th>host</th><th>CPU model</th><th>kernel</th><th>runs</th>"
	      "<th>last run (UTC)</th><th>last status</th></tr>\n", o);
	for (i = 0; i < n; i++) {
		const struct history_run_row *last = v[i].n ? &v[i].runs[0] : NULL;

		fprintf(o, "<tr><td><a href=\"#host-%zu\">", i);
		html_esc(o, v[i].name[0] ? v[i].name : "(unnamed)");
		fputs("</a></td><td>", o);
		html_esc(o, last ? last->cpu_model : "-");
		fputs("</td><td>", o);
		html_esc(o, last ? last->kernel : "-");
		fputs("</td>", o);
		snprintf(t, sizeof(t), "%lld", v[i].nruns);
		html_td_num(o, t);
		report_fmt_time(when, sizeof(when), last ? last->started : 0);
		html_td_num(o, when);
		if (!last)
			fputs("<td class=\"mark-bad\">no run</td>", o);
		else if (strcmp(last->status, "complete")) {
			fputs("<td class=\"mark-bad\">", o);
			html_esc(o, last->status);
			fputs("</td>", o);
		}
		else
			fprintf(o, "<td class=\"%s\">%s%s%s%s</td>", last->gate_passed ? "mark-ok" : "mark-bad",
				last->gate_passed ? "complete, gate passed" : "gate failed",
				last->gate_verdict[0] ? " (history gate: " : "", last->gate_verdict,
				last->gate_verdict[0] ? ")" : "");
		fputs("</tr>\n", o);
	}
	fputs("</table>\n", o);
}

int fleet_html(const char *db, const struct fleet_opts *o, FILE *out, struct err *e)
{
	struct history_host *v = NULL;
	struct results *r = malloc(sizeof(*r));
	size_t n = 0, i;
	int rc = 0;

	if (!r)
		return err_set(e, -ENOMEM, "out of memory");
	results_init(r);
	if (history_hosts_load(db, o ? (const char *const *)o->hosts : NULL, o ? o->nhosts : 0, o ? o->last : 0, &v,
			       &n, e)) {
		free(r);
		return e->code;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>thpeval fleet</title>\n<style>",
	      out);
	fputs(html_css, out);
	fputs("td.na{color:#6b7785}</style>\n</head>\n<body>\n<main>\n<h1>thpeval fleet</h1>\n<p class=\"sub\">", out);
	html_escf(out, "%zu host(s) in the history; per host, the split of its latest run and the trend of its"
		  " headline effects (%% of time saved with THP, 95%% CI) over its last runs", n);
	fputs("</p>\n", out);
	if (!n)
		fputs("<div class=\"banner warn\">No runs are recorded in this history yet.</div>\n", out);
	else
		summary_table(out, v, n);
	for (i = 0; i < n && !rc; i++)
		rc = host_section(out, i, &v[i], r, e);
	fprintf(out, "<p class=\"sub\">Generated by thpeval %s.</p>\n</main>\n</body>\n</html>\n", THPEVAL_VERSION);
	history_hosts_free(v, n);
	results_release(r);
	free(r);
	return rc;
}

int fleet_write(const char *db, const struct fleet_opts *o, const char *dir, struct err *e)
{
	char path[PATH_MAX], *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int rc;

	if (snprintf(path, sizeof(path), "%s/%s", dir, FLEET_FILE) >= (int)sizeof(path))
		return err_set(e, -ENAMETOOLONG, "output path too long: '%s'", dir);
	if (mkdir_p(dir, 0755, e))
		return e->code;
	if (!(mem = open_memstream(&buf, &len)))
		return err_set(e, -ENOMEM, "out of memory rendering the fleet page");
	rc = fleet_html(db, o, mem, e);
	if (fclose(mem) && !rc)
		rc = err_set(e, -ENOMEM, "out of memory rendering the fleet page");
	if (!rc)
		rc = write_file_atomic(path, buf, len, 0644, e);
	free(buf);
	return rc;
}
