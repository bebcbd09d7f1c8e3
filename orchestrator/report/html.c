#include "orchestrator/report/html.h"
#include "orchestrator/report/migreport.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "orchestrator/analysis/compare.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/report/balloon.h"
#include "orchestrator/report/sizing.h"

static size_t count_invalid(const struct results *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->ncells; i++)
		n += !r->cells[i].valid;
	return n;
}

const char html_css[] =
	"body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;color:#1d2733;margin:0;background:#f6f7f9}"
	"main{max-width:1100px;margin:0 auto;padding:18px 28px 40px;background:#fff}"
	"h1{font-size:24px;margin:6px 0 2px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #dde2e8;padding-bottom:4px}"
	"h3{font-size:15px;margin:18px 0 4px}.sub{color:#5b6774;margin:0 0 10px}"
	"nav a{margin-right:14px;color:#2c5d9e;text-decoration:none}"
	".banner{padding:8px 12px;border-radius:6px;margin:10px 0;font-weight:600}"
	".ok{background:#e3f4e6;color:#1c6b2c}.bad{background:#fde6e4;color:#9c1c12}.warn{background:#fff4d6;color:#7a5a00}"
	"table{border-collapse:collapse;margin:6px 0 12px;font-size:13px}"
	"th,td{border-bottom:1px solid #e5e9ee;padding:4px 10px;text-align:left;vertical-align:top}"
	"th{background:#f0f3f6;font-weight:600}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}"
	".mark-ok{color:#1c7c32;font-weight:700}.mark-bad{color:#b3261e;font-weight:700}"
	".v-REGRESSION{color:#b3261e;font-weight:700}.v-better{color:#1c7c32}.v-noise,.v-untested,.v-info{color:#6b7785}"
	"svg{display:block;margin:4px 0 2px}svg text{font:12px system-ui,sans-serif;fill:#1d2733}"
	"svg .grid{stroke:#e3e7ec}svg .axis{stroke:#8893a0}svg .tick{fill:#5b6774;font-size:11px}"
	"svg .bar{stroke:none}svg .c0{fill:#8da0cb}svg .c1{fill:#66c2a5}svg .c2{fill:#fc8d62}svg .c3{fill:#e5a50a}"
	"svg .cov-host{fill:#3d6fb6}svg .cov-guest{fill:#9cc3ef}"
	"svg .invalid{fill-opacity:.3;stroke:#b3261e;stroke-width:1.5;stroke-dasharray:4 2}"
	"svg .ci{stroke:#1d2733;stroke-width:1.5}svg .base{stroke:#000;stroke-width:2.5;stroke-dasharray:3 2}"
	"svg .minline{stroke:#b3261e;stroke-dasharray:5 3}svg .bad{fill:#b3261e;font-weight:700}"
	"svg .fx-pos{fill:#1c7c32}svg .fx-neg{fill:#b3261e}svg .fx-ns{fill:#fff;stroke:#8893a0;stroke-width:2}"
	".legend span{display:inline-block;margin-right:16px;font-size:12px;color:#3c4652}"
	".sw{display:inline-block;width:12px;height:12px;margin-right:5px;vertical-align:-2px;border-radius:2px}"
	"details{margin:6px 0}code{font-size:12px}";

static void kv_row(FILE *o, const char *k, const char *v)
{
	fputs("<tr><th>", o);
	html_esc(o, k);
	fputs("</th><td>", o);
	html_esc(o, v && *v ? v : "-");
	fputs("</td></tr>\n", o);
}

static void html_run(const struct report_input *in, FILE *o)
{
	const struct results *r = in->res;
	const struct run_settings *s = &r->settings;
	char buf[1024], t0[32], t1[32];
	size_t i;

	fputs("<table>\n", o);
	kv_row(o, "thpeval", r->thpeval_version);
	snprintf(buf, sizeof(buf), "%s%s%s", r->status, r->error[0] ? ": " : "", r->error);
	kv_row(o, "status", buf);
	report_fmt_time(t0, sizeof(t0), r->started);
	report_fmt_time(t1, sizeof(t1), r->finished);
	snprintf(buf, sizeof(buf), "%s to %s", t0, t1);
	kv_row(o, "time (UTC)", buf);
	snprintf(buf, sizeof(buf), "%s (%s)", r->accel, r->accel_reason);
	kv_row(o, "accelerator", buf);
	kv_row(o, "host kernel", r->host.kernel);
	snprintf(buf, sizeof(buf), "%s, %u CPUs, %llu MiB", r->host.cpu_model, r->host.cpus,
		 (unsigned long long)(r->host.mem_total_kb >> 10));
	kv_row(o, "host", buf);
	kv_row(o, "QEMU", r->hypervisor_version);
	kv_row(o, "libvirt", r->libvirt_version);
	kv_row(o, "guest image", r->image_id);
	snprintf(buf, sizeof(buf), "host THP %s; guest THP %s; workloads %s", s->host_thp_list,
		 s->guest_thp_list, s->workloads);
	kv_row(o, "cells", buf);
	snprintf(buf, sizeof(buf), "%u reps (+%u warm-up), %u vCPU, %llu MiB guest, %llu MiB buffer, %llu accesses, seed %llu, min coverage %.0f%%",
		 s->reps, s->warmup, s->vcpus, s->memory_bytes >> 20, s->size_bytes >> 20, s->accesses, s->seed,
		 s->min_coverage_pct);
	kv_row(o, "settings", buf);
	kv_row(o, "libvirt URI", s->uri);
	fputs("</table>\n<details><summary>host THP settings before the run</summary><table>\n", o);
	for (i = 0; i < r->thp_before.n; i++) {
		const char *after = r->have_thp_after ? thp_settings_get(&r->thp_after, r->thp_before.s[i].key) : NULL;

		if (after && strcmp(after, r->thp_before.s[i].value))
			snprintf(buf, sizeof(buf), "%s (after the run: %s)", r->thp_before.s[i].value, after);
		else
			snprintf(buf, sizeof(buf), "%s", r->thp_before.s[i].value);
		kv_row(o, r->thp_before.s[i].key, buf);
	}
	fputs("</table></details>\n", o);
}

static void html_cells(const struct report_input *in, FILE *o)
{
	const struct results *r = in->res;
	size_t i, k;

	fputs("<table>\n<tr><th>host THP</th><th>guest THP</th><th>workload</th>", o);
	for (k = 0; k < ARRAY_SIZE(html_main_metrics); k++) {
		fputs("<th>", o);
		html_esc(o, html_main_metrics[k].metric);
		fputs("</th>", o);
	}
	fputs("<th>host huge %</th><th>guest huge %</th><th>reps ok / failed</th><th>valid</th></tr>\n", o);
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		char buf[64];

		fputs("<tr><td>", o);
		html_esc(o, c->host_thp);
		if (c->prefault[0] && strcmp(c->prefault, "ondemand"))
			html_escf(o, " (prefault %s)", c->prefault);
		fputs("</td><td>", o);
		html_esc(o, c->guest_thp);
		fputs("</td><td>", o);
		html_esc(o, c->workload);
		if (c->variant[0])
			html_escf(o, ":%s", c->variant);
		if (strcmp(c->target, "guest"))
			html_escf(o, " [%s]", c->target);
		fputs("</td>", o);
		for (k = 0; k < ARRAY_SIZE(html_main_metrics); k++) {
			report_mean_ci(buf, sizeof(buf), cell_metric_find(c, html_main_metrics[k].metric));
			html_td_num(o, buf);
		}
		report_mean_ci(buf, sizeof(buf), &c->host_cov);
		html_td_num(o, buf);
		report_mean_ci(buf, sizeof(buf), &c->guest_cov);
		html_td_num(o, buf);
		snprintf(buf, sizeof(buf), "%u / %u", c->reps_ok, c->reps_failed);
		html_td_num(o, buf);
		if (c->valid) {
			fputs("<td class=\"mark-ok\">✓</td></tr>\n", o);
		} else {
			fputs("<td><span class=\"mark-bad\">✗</span> ", o);
			html_esc(o, c->invalid_reason);
			fputs("</td></tr>\n", o);
		}
	}
	fputs("</table>\n<p class=\"sub\">geometric mean ±95% confidence interval on the log scale, in % (over boot means where a cell ran in 2 or more boots, else over repetitions); an arithmetic mean ± half-width where a sample is 0.</p>\n", o);
}

static void html_validity(const struct report_input *in, FILE *o)
{
	const struct results *r = in->res;
	size_t i, k;

	fputs("<ul>\n", o);
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		char label[CELL_LABEL_MAX];

		if (c->valid && !c->nfailures)
			continue;
		cell_label(c, label, sizeof(label));
		fputs("<li><b>", o);
		html_esc(o, label);
		fputs("</b>: ", o);
		if (c->valid)
			fputs("<span class=\"mark-ok\">✓ valid</span>", o);
		else {
			fputs("<span class=\"mark-bad\">✗ invalid</span>: ", o);
			html_esc(o, c->invalid_reason);
		}
		for (k = 0; k < c->nfailures; k++) {
			fputs("<br/>failed repetition: ", o);
			html_esc(o, c->failures[k]);
		}
		fputs("</li>\n", o);
	}
	fputs("</ul>\n", o);
}

static bool cmp_notable(const struct cmp_row *r)
{
	return r->fails || (r->gated && r->verdict != CMP_OK);
}

static void html_cmp_table(FILE *o, const struct comparison *c, bool notable_only)
{
	size_t i;

	fputs("<table>\n<tr><th>cell</th><th>metric</th><th>direction</th><th>baseline</th><th>current</th>"
	      "<th>change [95% CI]</th><th>p (Holm)</th><th>verdict</th></tr>\n", o);
	for (i = 0; i < c->nrows; i++) {
		const struct cmp_row *r = &c->rows[i];
		char b[48], cur[48], ch[64];

		if (notable_only && !cmp_notable(r))
			continue;
		fputs("<tr><td>", o);
		html_esc(o, r->label);
		fputs("</td><td>", o);
		html_esc(o, r->metric[0] ? r->metric : "(whole cell)");
		fputs("</td><td>", o);
		html_esc(o, r->metric[0] ? metric_dir_name(r->dir) : "");
		fputs("</td>", o);
		report_summary_ci(b, sizeof(b), &r->base);
		report_summary_ci(cur, sizeof(cur), &r->cur);
		html_td_num(o, b);
		html_td_num(o, cur);
		if (isnan(r->change_pct))
			snprintf(ch, sizeof(ch), "-");
		else if (isfinite(r->change_lo_pct))
			snprintf(ch, sizeof(ch), "%+.1f%% [%+.1f, %+.1f]", r->change_pct, r->change_lo_pct,
				 r->change_hi_pct);
		else
			snprintf(ch, sizeof(ch), "%+.1f%%", r->change_pct);
		html_td_num(o, ch);
		if (isnan(r->p_holm))
			snprintf(ch, sizeof(ch), "-");
		else
			snprintf(ch, sizeof(ch), "%.3f", r->p_holm);
		html_td_num(o, ch);
		fprintf(o, "<td class=\"v-%s\">", cmp_verdict_name(r->verdict));
		html_esc(o, cmp_verdict_name(r->verdict));
		if (r->why[0] && r->verdict != CMP_INFO)
			html_escf(o, ": %s", r->why);
		fputs("</td></tr>\n", o);
	}
	fputs("</table>\n", o);
}

static void html_comparison(const struct report_input *in, FILE *o)
{
	const struct comparison *c = in->cmp;
	size_t i, notable = 0;

	for (i = 0; i < c->nrows; i++)
		notable += cmp_notable(&c->rows[i]);
	fputs("<p class=\"sub\">Baseline: ", o);
	html_esc(o, in->base_name ? in->base_name : "-");
	html_escf(o, ". Change: ratio of geometric means with its 95%% interval (log scale, over guest boots where"
		" both runs have 2 or more). Gated: %s, %zu metric(s). A regression is worse beyond %g%% at a"
		" family-wise error rate of %g (one-sided, Holm); ok: the interval shows the change within the"
		" threshold; inconclusive: neither (%zu). Gate: %s.", c->gate == GATE_ALL ?
		"every metric with a direction" : "each workload's primary metrics", c->ngated, c->threshold_pct,
		COMPARE_ALPHA, c->ninconclusive, comparison_failed(c) ? "FAIL" : "pass");
	fputs("</p>\n", o);
	if (notable)
		html_cmp_table(o, c, true);
	else
		fputs("<p>Every gated metric is within the threshold.</p>\n", o);
	fprintf(o, "<details><summary>all %zu comparisons</summary>\n", c->nrows);
	html_cmp_table(o, c, false);
	fputs("</details>\n", o);
}

static void html_guests(const struct report_input *in, FILE *o)
{
	const struct results *r = in->res;
	size_t i;

	fputs("<table>\n<tr><th>guest</th><th>host THP</th><th>status</th><th>kernel</th><th>boot to first record</th>"
	      "<th>total</th><th>records</th><th>rejected lines</th><th>console log</th></tr>\n", o);
	for (i = 0; i < r->nguests; i++) {
		const struct guest_log *g = &r->guests[i];
		char buf[32];

		fputs("<tr><td>", o);
		html_esc(o, g->name);
		fputs("</td><td>", o);
		html_esc(o, g->host_thp);
		fputs("</td><td>", o);
		html_esc(o, g->status);
		if (g->error[0]) {
			fputs(": ", o);
			html_esc(o, g->error);
		}
		fputs("</td><td>", o);
		html_esc(o, g->guest_kernel);
		fputs("</td>", o);
		if (isfinite(g->create_to_first_record_s))
			snprintf(buf, sizeof(buf), "%.1f s", g->create_to_first_record_s);
		else
			snprintf(buf, sizeof(buf), "-");
		html_td_num(o, buf);
		if (isfinite(g->total_s))
			snprintf(buf, sizeof(buf), "%.1f s", g->total_s);
		else
			snprintf(buf, sizeof(buf), "-");
		html_td_num(o, buf);
		snprintf(buf, sizeof(buf), "%u", g->records);
		html_td_num(o, buf);
		snprintf(buf, sizeof(buf), "%u", g->rejected);
		html_td_num(o, buf);
		fputs("<td><code>", o);
		html_esc(o, g->console_path);
		fputs("</code></td></tr>\n", o);
	}
	fputs("</table>\n", o);
}

static bool has_sizing(const struct report_input *in)
{
	return sizing_applies(in->res);
}

static void html_sizing(const struct report_input *in, FILE *o)
{
	sizing_html(in->res, o);
}

static bool has_balloon(const struct report_input *in)
{
	return balloon_applies(in->res);
}

static void html_balloon(const struct report_input *in, FILE *o)
{
	balloon_html(in->res, o);
	html_balloon_charts(in, o);
}

static bool has_cells(const struct report_input *in)
{
	return in->res->ncells > 0;
}

static bool has_problems(const struct report_input *in)
{
	size_t i;

	for (i = 0; i < in->res->ncells; i++)
		if (!in->res->cells[i].valid || in->res->cells[i].nfailures)
			return true;
	return false;
}

static bool has_effects(const struct report_input *in)
{
	return in->res->effects && in->res->effects->n > 0;
}

static bool has_cmp(const struct report_input *in)
{
	return in->cmp != NULL;
}

static bool has_recovery(const struct report_input *in)
{
	return in->res->ncollapses > 0;
}

static bool has_ksm(const struct report_input *in)
{
	return in->res->nksms > 0;
}

static bool has_guests(const struct report_input *in)
{
	return in->res->nguests > 0;
}

/*
 * The page is this table: a new section is one entry and a renderer;
 * present() says whether the results have anything for it.
 */
static bool has_migration(const struct report_input *in)
{
	return migreport_present(in->res);
}

static void html_migration(const struct report_input *in, FILE *o)
{
	migreport_html(in->res, o);
}

static const struct html_section {
	const char *id, *title;
	bool (*present)(const struct report_input *in);
	void (*render)(const struct report_input *in, FILE *o);
} html_sections[] = {
	{ "cells", "Cells", has_cells, html_cells },
	{ "charts", "Main metrics", has_cells, html_charts },
	{ "coverage", "Huge-page coverage", has_cells, html_coverage },
	{ "effects", "Where the benefit comes from", has_effects, html_effects },
	{ "recovery", "Recovery over time", has_recovery, html_recovery },
	{ "ksm", "KSM over time", has_ksm, html_ksm },
	{ "sizing", "Host sizing", has_sizing, html_sizing },
	{ "balloon", "Free page reporting", has_balloon, html_balloon },
	{ "validity", "Validity and failed repetitions", has_problems, html_validity },
	{ "comparison", "Against the baseline", has_cmp, html_comparison },
	{ "migration", "Live migration", has_migration, html_migration },
	{ "run", "Run", NULL, html_run },
	{ "guests", "Guests", has_guests, html_guests },
};

static void html_banner(const struct report_input *in, FILE *o)
{
	const struct results *r = in->res;
	size_t bad = count_invalid(r);

	if (strcmp(r->status, "complete")) {
		fputs("<div class=\"banner bad\">Run ", o);
		html_esc(o, r->status);
		if (r->error[0]) {
			fputs(": ", o);
			html_esc(o, r->error);
		}
		fputs("</div>\n", o);
	}
	if (!r->ncells)
		fputs("<div class=\"banner warn\">No cells were measured.</div>\n", o);
	else if (bad)
		fprintf(o, "<div class=\"banner bad\">✗ %zu of %zu cells invalid: the intended THP state did not hold"
			   " (see Validity).</div>\n", bad, r->ncells);
	else
		fprintf(o, "<div class=\"banner ok\">✓ All %zu cells valid: the intended THP state held in every"
			   " repetition.</div>\n", r->ncells);
	if (in->cmp) {
		if (comparison_failed(in->cmp))
			fprintf(o, "<div class=\"banner bad\">✗ The gate fails: %zu regression(s), %zu gated metric(s)"
				   " failing against the baseline.</div>\n", in->cmp->nregressions, in->cmp->nfailed);
		else if (in->cmp->ninconclusive)
			fprintf(o, "<div class=\"banner warn\">The gate passes with %zu of %zu gated metric(s)"
				   " inconclusive (threshold %g%%): more boots would decide them.</div>\n",
				in->cmp->ninconclusive, in->cmp->ngated, in->cmp->threshold_pct);
		else
			fprintf(o, "<div class=\"banner ok\">✓ No regression against the baseline: every gated metric"
				   " within the threshold (%g%%).</div>\n", in->cmp->threshold_pct);
	}
}

int report_html(const struct report_input *in, FILE *o, struct err *e)
{
	const struct results *r = in->res;
	char when[32];
	size_t i;

	report_fmt_time(when, sizeof(when), r->started);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>", o);
	html_escf(o, "thpeval report %s", when);
	fputs("</title>\n<style>", o);
	fputs(html_css, o);
	fputs("</style>\n</head>\n<body>\n<main>\n<h1>thpeval report</h1>\n<p class=\"sub\">", o);
	html_escf(o, "%s run started %s on %s, %s (%s), host kernel %s", r->status, when, r->host.cpu_model,
	     r->accel, r->hypervisor_version[0] ? r->hypervisor_version : "QEMU ?", r->host.kernel);
	fputs("</p>\n", o);
	html_banner(in, o);
	fputs("<nav>", o);
	for (i = 0; i < ARRAY_SIZE(html_sections); i++) {
		const struct html_section *s = &html_sections[i];

		if (s->present && !s->present(in))
			continue;
		fprintf(o, "<a href=\"#%s\">", s->id);
		html_esc(o, s->title);
		fputs("</a>", o);
	}
	fputs("</nav>\n", o);
	for (i = 0; i < ARRAY_SIZE(html_sections); i++) {
		const struct html_section *s = &html_sections[i];

		if (s->present && !s->present(in))
			continue;
		fprintf(o, "<section id=\"%s\">\n<h2>", s->id);
		html_esc(o, s->title);
		fputs("</h2>\n", o);
		s->render(in, o);
		fputs("</section>\n", o);
	}
	fprintf(o, "<p class=\"sub\">Generated by thpeval %s from results schema %d.</p>\n</main>\n</body>\n</html>\n",
		THPEVAL_VERSION, RESULTS_SCHEMA_VERSION);
	return 0;
}
