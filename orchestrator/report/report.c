#include "orchestrator/report/report.h"
#include "orchestrator/report/sizing.h"
#include "orchestrator/report/text.h"

#include <errno.h>
#include <libxml/xmlwriter.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/parse.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/model/results_load.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static const struct {
	const char *name, *file;
} formats[] = {
	[REPORT_TEXT] = { "text", "results.txt" },
	[REPORT_JSON] = { "json", "results.json" },
	[REPORT_CSV] = { "csv", "results.csv" },
	[REPORT_HTML] = { "html", "report.html" },
	[REPORT_JUNIT] = { "junit", "junit.xml" },
};
_Static_assert(ARRAY_SIZE(formats) == REPORT__COUNT, "formats table");

/* headline metrics: charted in HTML, first columns of tables */
static const struct {
	const char *metric, *title, *unit;
} main_metrics[] = {
	{ "fault_ns_per_4k", "First-touch cost (page faults)", "ns per 4 KiB, lower is better" },
	{ "access_ns", "Access latency (TLB reach)", "ns per access, lower is better" },
};

const char *report_format_name(enum report_format f)
{
	return (unsigned)f < REPORT__COUNT ? formats[f].name : "?";
}

const char *report_format_file(enum report_format f)
{
	return (unsigned)f < REPORT__COUNT ? formats[f].file : "?";
}

int report_formats_parse(const char *list, unsigned *mask, struct err *e)
{
	const char *p = list;

	*mask = 0;
	if (parse_list_check(list))
		return err_set(e, -EINVAL, "empty item in format list '%s': use %s", list,
			       REPORT_FORMATS_HELP);
	while (*p) {
		size_t n = strcspn(p, ","), i;
		bool found = false;

		for (i = 0; i < REPORT__COUNT; i++) {
			if (strlen(formats[i].name) == n && !strncmp(p, formats[i].name, n)) {
				*mask |= REPORT_BIT(i);
				found = true;
			}
		}
		if (!found)
			return err_set(e, -EINVAL, "'%.*s' is not a report format: use %s", (int)n, p,
				       REPORT_FORMATS_HELP);
		p += n;
		if (*p == ',')
			p++;
	}
	if (!*mask)
		return err_set(e, -EINVAL, "empty format list: use %s", REPORT_FORMATS_HELP);
	return 0;
}

void fmt_double_exact(char *buf, size_t len, double v)
{
	int prec;

	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static void fmt_time(char *buf, size_t len, time_t t)
{
	struct tm tm;

	if (t <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "-");
}

/* metric i of a cell with the coverage series appended: n = nmetrics + 2 */
static const struct metric *metric_at(const struct cell *c, size_t i)
{
	if (i < c->nmetrics)
		return &c->metrics[i];
	return i == c->nmetrics ? &c->host_cov : &c->guest_cov;
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

static size_t count_invalid(const struct results *r)
{
	size_t i, n = 0;

	for (i = 0; i < r->ncells; i++)
		n += !r->cells[i].valid;
	return n;
}

/* ---- text ---------------------------------------------------------------------------- */

static int render_text(const struct report_input *in, FILE *out, struct err *e)
{
	results_print_table(in->res, out);
	if (in->cmp) {
		fprintf(out, "\nagainst the baseline %s:\n", in->base_name ? in->base_name : "");
		compare_print(in->cmp, in->base, in->res, out);
	}
	return 0;
}

/* ---- json ---------------------------------------------------------------------------- */

static int render_json(const struct report_input *in, FILE *out, struct err *e)
{
	char *text;
	size_t len;

	if (results_to_json_text(in->res, &text, &len, e))
		return e->code;
	fwrite(text, 1, len, out);
	free(text);
	return 0;
}

/* ---- csv (RFC 4180) ---------------------------------------------------------------- */

static void csv_field(FILE *out, const char *s, bool last)
{
	size_t n = strlen(s);
	bool quote = strpbrk(s, ",\"\r\n") || (n && (s[0] == ' ' || s[n - 1] == ' '));

	if (quote) {
		fputc('"', out);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', out);
			fputc(*s, out);
		}
		fputc('"', out);
	} else {
		fputs(s, out);
	}
	fputs(last ? "\r\n" : ",", out);
}

static int render_csv(const struct report_input *in, FILE *out, struct err *e)
{
	const struct results *r = in->res;
	size_t i, j, k;

	fputs(REPORT_CSV_HEADER "\r\n", out);
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];

		for (j = 0; j < c->nmetrics + 2; j++) {
			const struct metric *m = metric_at(c, j);

			for (k = 0; k < m->n; k++) {
				char rep[24], val[40];

				snprintf(rep, sizeof(rep), "%zu", k + 1);
				fmt_double_exact(val, sizeof(val), m->samples[k]);
				csv_field(out, c->host_thp, false);
				csv_field(out, c->guest_thp, false);
				csv_field(out, c->workload, false);
				csv_field(out, c->target, false);
				csv_field(out, m->name, false);
				csv_field(out, rep, false);
				csv_field(out, val, false);
				csv_field(out, c->prefault[0] ? c->prefault : "ondemand", false);
				csv_field(out, c->variant, true);
			}
		}
	}
	return 0;
}

/* ---- html ---------------------------------------------------------------------------- */

/* every piece of data goes through esc(): & < > " ' */
static void esc(FILE *o, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", o); break;
		case '<': fputs("&lt;", o); break;
		case '>': fputs("&gt;", o); break;
		case '"': fputs("&quot;", o); break;
		case '\'': fputs("&#39;", o); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fputs("&#xFFFD;", o);	/* control characters are not XML */
			else
				fputc(*s, o);
		}
	}
}

__attribute__((format(printf, 2, 3)))
static void escf(FILE *o, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	esc(o, buf);
}

static void summary_ci(char *buf, size_t len, const struct summary *s)
{
	char a[20], b[20];

	if (!s || s->n == 0) {
		snprintf(buf, len, "n/a");
		return;
	}
	fmt_value(a, sizeof(a), s->mean);
	if (!isfinite(s->ci95_high)) {
		snprintf(buf, len, "%s", a);
		return;
	}
	fmt_value(b, sizeof(b), s->ci95_high - s->mean);
	snprintf(buf, len, "%s ±%s", a, b);
}

static void mean_ci(char *buf, size_t len, const struct metric *m)
{
	summary_ci(buf, len, m ? &m->s : NULL);
}

static const char html_css[] =
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

static void td_num(FILE *o, const char *s)
{
	fputs("<td class=\"num\">", o);
	esc(o, s);
	fputs("</td>", o);
}

/* fill class by treatment: c0 never/never, c1 guest only, c2 host only, c3 both */
static int cell_colour(const struct cell *c)
{
	return (strcmp(c->host_thp, "never") ? 2 : 0) + (strcmp(c->guest_thp, "never") ? 1 : 0);
}

static double nice_step(double range)
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

#define CH_W 1000
#define CH_LABEL 250
#define CH_RIGHT 200
#define CH_ROW 30
#define CH_TOP 8
#define CH_AXIS 30

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
	a->step = nice_step(maxv / 5);
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
		esc(o, t);
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
	esc(o, label);
	fputs("</text>", o);
}

/* one horizontal bar per cell: mean, 95% CI whisker, baseline mean marker, validity */
static void html_metric_chart(const struct report_input *in, FILE *o, size_t mi)
{
	const struct results *r = in->res;
	const char *name = main_metrics[mi].metric;
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
	esc(o, main_metrics[mi].title);
	fputs(" <small>(<code>", o);
	esc(o, name);
	fputs("</code>: ", o);
	esc(o, main_metrics[mi].unit);
	fputs(")</small></h3>\n", o);
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" role=\"img\">",
		CH_W, h, CH_W, h);
	fputs("<title>", o);
	escf(o, "%s: mean per cell with 95%% confidence interval", name);
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
		mean_ci(v, sizeof(v), m);
		fprintf(o, "<rect class=\"bar c%d%s\" x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"18\">",
			cell_colour(c), c->valid ? "" : " invalid", CH_LABEL, y + 6, ax_x(&ax, m->s.mean) - CH_LABEL);
		fputs("<title>", o);
		escf(o, "%s %s: %s (n=%zu)%s%s", c->host_thp, name, v, m->n, c->valid ? "" : "; invalid: ",
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
			escf(o, "baseline mean %s", bv);
			fputs("</title></line>", o);
		}
		fprintf(o, "<text x=\"%.1f\" y=\"%.1f\">", fmin(xe + 8, (double)CH_W - CH_RIGHT + 8), ym + 4);
		esc(o, v);
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
	fputs("<span>├─┤ 95% confidence interval of the mean</span>", o);
	if (with_base)
		fputs("<span>┆ baseline mean</span>", o);
	fputs("<span><i class=\"sw\" style=\"background:#f3c9c5;border:1px dashed #b3261e\"></i>invalid cell</span></p>\n", o);
}

static void html_charts(const struct report_input *in, FILE *o)
{
	size_t i;

	html_legend(o, in->base != NULL);
	for (i = 0; i < ARRAY_SIZE(main_metrics); i++)
		html_metric_chart(in, o, i);
}

static void html_coverage(const struct report_input *in, FILE *o)
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
			escf(o, "%s huge pages: %.1f%% (min %.1f%%, n=%zu)", k ? "guest" : "host", v,
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
		esc(o, txt);
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

static void kv_row(FILE *o, const char *k, const char *v)
{
	fputs("<tr><th>", o);
	esc(o, k);
	fputs("</th><td>", o);
	esc(o, v && *v ? v : "-");
	fputs("</td></tr>\n", o);
}

/* the effects split: per workload and treatment pair, a forest plot of the
 * effects (% faster with THP, 95% CI) and the same numbers as a table */
static bool same_group(const struct effect *a, const struct effect *b)
{
	return !strcmp(a->workload, b->workload) && !strcmp(a->host_thp, b->host_thp) &&
	       !strcmp(a->guest_thp, b->guest_thp);
}

static void fmt_effect(char *buf, size_t len, const struct effect *e)
{
	if (!e->available)
		snprintf(buf, len, "not available");
	else if (!isfinite(e->ci95_low_pct))
		snprintf(buf, len, "%+.1f%%", e->estimate_pct);
	else
		snprintf(buf, len, "%+.1f%% [%+.1f, %+.1f]%s", e->estimate_pct, e->ci95_low_pct, e->ci95_high_pct,
			 e->significant ? "" : " (no measurable effect)");
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
	step = nice_step(maxv / 2);
	maxv = ceil(maxv / step - 1e-9) * step;
	fputs("<h3>", o);
	escf(o, "%s: host THP %s, guest THP %s, each against never", fx[0].workload, fx[0].host_thp, fx[0].guest_thp);
	fputs("</h3>\n", o);
	fprintf(o, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" role=\"img\">",
		CH_W, h, CH_W, h);
	fputs("<title>", o);
	escf(o, "effects of THP on %s, percent faster with 95%% confidence intervals", fx[0].workload);
	fputs("</title>", o);
	for (v = -maxv; v <= maxv + step / 2; v += step) {
		double x = cx + v / maxv * half;

		fprintf(o, "<line class=\"%s\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\"/>",
			fabs(v) < step / 2 ? "axis" : "grid", x, CH_TOP, x, CH_TOP + (double)n * CH_ROW);
		snprintf(t, sizeof(t), "%+.4g%%", fabs(v) < step / 2 ? 0.0 : v);
		fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", x,
			CH_TOP + (double)n * CH_ROW + 14);
		esc(o, t);
		fputs("</text>", o);
	}
	for (i = 0; i < n; i++) {
		const struct effect *e = &fx[i];
		double ym = CH_TOP + (double)i * CH_ROW + CH_ROW / 2.0;

		if (e->at_guest[0])
			snprintf(t, sizeof(t), "%s %s, guest %s (%s)", e->side, e->component, e->at_guest, e->metric);
		else
			snprintf(t, sizeof(t), "%s %s (%s)", e->side, e->component, e->metric);
		fprintf(o, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", CH_LABEL - 10, ym + 4);
		esc(o, t);
		fputs("</text>", o);
		if (!e->available) {
			fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", cx, ym + 4);
			escf(o, "not available: %.70s%s", e->note, strlen(e->note) > 70 ? "…" : "");
			fputs("</text>", o);
			continue;
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
		fmt_effect(t, sizeof(t), e);
		esc(o, t);
		if (e->note[0]) {
			fputs(": ", o);
			esc(o, e->note);
		}
		fputs("</title></circle>", o);
		fprintf(o, "<text x=\"%d\" y=\"%.1f\">", CH_W - CH_RIGHT + 8, ym + 4);
		snprintf(t, sizeof(t), "%+.1f%%%s", e->estimate_pct, e->significant ? "" : " (n.s.)");
		esc(o, t);
		fputs("</text>", o);
	}
	fputs("</svg>\n<table>\n<tr><th>side</th><th>component</th><th>metric</th><th>effect (95% CI)</th>"
	      "<th>share of total</th><th>note</th></tr>\n", o);
	for (i = 0; i < n; i++) {
		const struct effect *e = &fx[i];

		fputs("<tr><td>", o);
		esc(o, e->side);
		fputs("</td><td>", o);
		esc(o, e->component);
		if (e->at_guest[0])
			escf(o, " (guest %s)", e->at_guest);
		fputs("</td><td><code>", o);
		esc(o, e->metric);
		fputs("</code></td>", o);
		fmt_effect(t, sizeof(t), e);
		td_num(o, t);
		if (e->available && isfinite(e->share_pct))
			snprintf(t, sizeof(t), "%.0f%%", e->share_pct);
		else
			snprintf(t, sizeof(t), "-");
		td_num(o, t);
		fputs("<td>", o);
		esc(o, e->note);
		fputs("</td></tr>\n", o);
	}
	fputs("</table>\n", o);
}

static void html_effects(const struct report_input *in, FILE *o)
{
	const struct effects *fx = in->res->effects;
	size_t i, j;

	fputs("<p class=\"sub\">Where the THP benefit comes from: each effect is a ratio of geometric means"
	      " shown as the share of time THP saves (positive = faster with THP), with a 95% confidence"
	      " interval computed on the log scale; host-side effects replicate over guest boots (Welch over"
	      " boots), guest-side ones are paired inside each boot; filled dots are significant (the interval"
	      " excludes 0). Shares add up within a table on the log scale and are shown only against a"
	      " significant total.</p>\n", o);
	if (fx->tcg) {
		fputs("<p class=\"sub\"><b>TCG run:</b> ", o);
		esc(o, EFFECTS_TCG_NOTE);
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
		escf(o, "%s %s", v->workload, v->label);
		fputs("</td><td><code>", o);
		esc(o, v->metric);
		fputs("</code></td>", o);
		snprintf(t, sizeof(t), "%zu", v->vc.boots);
		td_num(o, t);
		snprintf(t, sizeof(t), "%zu", v->vc.samples);
		td_num(o, t);
		fmt_value(t, sizeof(t), v->vc.within_cv_pct);
		td_num(o, t);
		fmt_value(t, sizeof(t), v->vc.between_cv_pct);
		td_num(o, t);
		fputs("</tr>\n", o);
	}
	fputs("</table>\n", o);
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
	fmt_time(t0, sizeof(t0), r->started);
	fmt_time(t1, sizeof(t1), r->finished);
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
	for (k = 0; k < ARRAY_SIZE(main_metrics); k++) {
		fputs("<th>", o);
		esc(o, main_metrics[k].metric);
		fputs("</th>", o);
	}
	fputs("<th>host huge %</th><th>guest huge %</th><th>reps ok / failed</th><th>valid</th></tr>\n", o);
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		char buf[64];

		fputs("<tr><td>", o);
		esc(o, c->host_thp);
		if (c->prefault[0] && strcmp(c->prefault, "ondemand"))
			escf(o, " (prefault %s)", c->prefault);
		fputs("</td><td>", o);
		esc(o, c->guest_thp);
		fputs("</td><td>", o);
		esc(o, c->workload);
		if (c->variant[0])
			escf(o, ":%s", c->variant);
		if (strcmp(c->target, "guest"))
			escf(o, " [%s]", c->target);
		fputs("</td>", o);
		for (k = 0; k < ARRAY_SIZE(main_metrics); k++) {
			mean_ci(buf, sizeof(buf), cell_metric_find(c, main_metrics[k].metric));
			td_num(o, buf);
		}
		mean_ci(buf, sizeof(buf), &c->host_cov);
		td_num(o, buf);
		mean_ci(buf, sizeof(buf), &c->guest_cov);
		td_num(o, buf);
		snprintf(buf, sizeof(buf), "%u / %u", c->reps_ok, c->reps_failed);
		td_num(o, buf);
		if (c->valid) {
			fputs("<td class=\"mark-ok\">✓</td></tr>\n", o);
		} else {
			fputs("<td><span class=\"mark-bad\">✗</span> ", o);
			esc(o, c->invalid_reason);
			fputs("</td></tr>\n", o);
		}
	}
	fputs("</table>\n<p class=\"sub\">mean ±95% confidence-interval half-width over the measured repetitions.</p>\n", o);
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
		esc(o, label);
		fputs("</b>: ", o);
		if (c->valid)
			fputs("<span class=\"mark-ok\">✓ valid</span>", o);
		else {
			fputs("<span class=\"mark-bad\">✗ invalid</span>: ", o);
			esc(o, c->invalid_reason);
		}
		for (k = 0; k < c->nfailures; k++) {
			fputs("<br/>failed repetition: ", o);
			esc(o, c->failures[k]);
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
		esc(o, r->label);
		fputs("</td><td>", o);
		esc(o, r->metric[0] ? r->metric : "(whole cell)");
		fputs("</td><td>", o);
		esc(o, r->metric[0] ? metric_dir_name(r->dir) : "");
		fputs("</td>", o);
		summary_ci(b, sizeof(b), &r->base);
		summary_ci(cur, sizeof(cur), &r->cur);
		td_num(o, b);
		td_num(o, cur);
		if (isnan(r->change_pct))
			snprintf(ch, sizeof(ch), "-");
		else if (isfinite(r->change_lo_pct))
			snprintf(ch, sizeof(ch), "%+.1f%% [%+.1f, %+.1f]", r->change_pct, r->change_lo_pct,
				 r->change_hi_pct);
		else
			snprintf(ch, sizeof(ch), "%+.1f%%", r->change_pct);
		td_num(o, ch);
		if (isnan(r->p_holm))
			snprintf(ch, sizeof(ch), "-");
		else
			snprintf(ch, sizeof(ch), "%.3f", r->p_holm);
		td_num(o, ch);
		fprintf(o, "<td class=\"v-%s\">", cmp_verdict_name(r->verdict));
		esc(o, cmp_verdict_name(r->verdict));
		if (r->why[0] && r->verdict != CMP_INFO)
			escf(o, ": %s", r->why);
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
	esc(o, in->base_name ? in->base_name : "-");
	escf(o, ". Change: ratio of geometric means with its 95%% interval (log scale, over guest boots where"
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
		esc(o, g->name);
		fputs("</td><td>", o);
		esc(o, g->host_thp);
		fputs("</td><td>", o);
		esc(o, g->status);
		if (g->error[0]) {
			fputs(": ", o);
			esc(o, g->error);
		}
		fputs("</td><td>", o);
		esc(o, g->guest_kernel);
		fputs("</td>", o);
		if (isfinite(g->create_to_first_record_s))
			snprintf(buf, sizeof(buf), "%.1f s", g->create_to_first_record_s);
		else
			snprintf(buf, sizeof(buf), "-");
		td_num(o, buf);
		if (isfinite(g->total_s))
			snprintf(buf, sizeof(buf), "%.1f s", g->total_s);
		else
			snprintf(buf, sizeof(buf), "-");
		td_num(o, buf);
		snprintf(buf, sizeof(buf), "%u", g->records);
		td_num(o, buf);
		snprintf(buf, sizeof(buf), "%u", g->rejected);
		td_num(o, buf);
		fputs("<td><code>", o);
		esc(o, g->console_path);
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

static bool has_guests(const struct report_input *in)
{
	return in->res->nguests > 0;
}

/*
 * The page is this table: a new section is one entry and a renderer;
 * present() says whether the results have anything for it.
 */
static const struct html_section {
	const char *id, *title;
	bool (*present)(const struct report_input *in);
	void (*render)(const struct report_input *in, FILE *o);
} html_sections[] = {
	{ "cells", "Cells", has_cells, html_cells },
	{ "charts", "Main metrics", has_cells, html_charts },
	{ "coverage", "Huge-page coverage", has_cells, html_coverage },
	{ "effects", "Where the benefit comes from", has_effects, html_effects },
	{ "sizing", "Host sizing", has_sizing, html_sizing },
	{ "validity", "Validity and failed repetitions", has_problems, html_validity },
	{ "comparison", "Against the baseline", has_cmp, html_comparison },
	{ "run", "Run", NULL, html_run },
	{ "guests", "Guests", has_guests, html_guests },
};

static void html_banner(const struct report_input *in, FILE *o)
{
	const struct results *r = in->res;
	size_t bad = count_invalid(r);

	if (strcmp(r->status, "complete")) {
		fputs("<div class=\"banner bad\">Run ", o);
		esc(o, r->status);
		if (r->error[0]) {
			fputs(": ", o);
			esc(o, r->error);
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

static int render_html(const struct report_input *in, FILE *o, struct err *e)
{
	const struct results *r = in->res;
	char when[32];
	size_t i;

	fmt_time(when, sizeof(when), r->started);
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n<title>", o);
	escf(o, "thpeval report %s", when);
	fputs("</title>\n<style>", o);
	fputs(html_css, o);
	fputs("</style>\n</head>\n<body>\n<main>\n<h1>thpeval report</h1>\n<p class=\"sub\">", o);
	escf(o, "%s run started %s on %s, %s (%s), host kernel %s", r->status, when, r->host.cpu_model,
	     r->accel, r->hypervisor_version[0] ? r->hypervisor_version : "QEMU ?", r->host.kernel);
	fputs("</p>\n", o);
	html_banner(in, o);
	fputs("<nav>", o);
	for (i = 0; i < ARRAY_SIZE(html_sections); i++) {
		const struct html_section *s = &html_sections[i];

		if (s->present && !s->present(in))
			continue;
		fprintf(o, "<a href=\"#%s\">", s->id);
		esc(o, s->title);
		fputs("</a>", o);
	}
	fputs("</nav>\n", o);
	for (i = 0; i < ARRAY_SIZE(html_sections); i++) {
		const struct html_section *s = &html_sections[i];

		if (s->present && !s->present(in))
			continue;
		fprintf(o, "<section id=\"%s\">\n<h2>", s->id);
		esc(o, s->title);
		fputs("</h2>\n", o);
		s->render(in, o);
		fputs("</section>\n", o);
	}
	fprintf(o, "<p class=\"sub\">Generated by thpeval %s from results schema %d.</p>\n</main>\n</body>\n</html>\n",
		THPEVAL_VERSION, RESULTS_SCHEMA_VERSION);
	return 0;
}

/* ---- junit (libxml2 xmlTextWriter) ------------------------------------------------ */

#define X(s) ((const xmlChar *)(s))

struct junit_case {
	char classname[CELL_LABEL_MAX + 16];
	char name[REC_KEY_MAX + 8];
	const char *fail_type;		/* NULL: passed */
	char message[600];
	char detail[600];
	const char *skipped;		/* reason, NULL if not skipped */
};

static void junit_metric_case(const struct report_input *in, size_t ci, const struct metric *m,
			      struct junit_case *jc)
{
	const struct cell *c = &in->res->cells[ci];
	const struct cmp_row *row = comparison_find(in->cmp, ci, m->name);
	char v[64], b[64];

	memset(jc, 0, sizeof(*jc));
	cell_label(c, jc->classname, sizeof(jc->classname));
	snprintf(jc->name, sizeof(jc->name), "%s", m->name);
	mean_ci(v, sizeof(v), m);
	snprintf(jc->detail, sizeof(jc->detail), "current %s (n=%zu)", v, m->n);
	if (!c->valid && (!row || !row->fails)) {
		jc->fail_type = "invalid";
		snprintf(jc->message, sizeof(jc->message), "cell invalid: %s", c->invalid_reason);
		return;
	}
	if (!row)
		return;
	if (row->verdict == CMP_REGRESSION) {
		summary_ci(b, sizeof(b), &row->base);
		jc->fail_type = "regression";
		snprintf(jc->message, sizeof(jc->message),
			 "%s regressed %+.1f%% [%+.1f, %+.1f] (baseline %s, current %s; Holm-adjusted p=%.3g over "
			 "%zu gated metrics; threshold %g%%, %s)", m->name, row->change_pct, row->change_lo_pct,
			 row->change_hi_pct, b, v, row->p_holm, in->cmp->ngated, in->cmp->threshold_pct,
			 metric_dir_name(row->dir));
	} else if (row->fails) {
		jc->fail_type = row->verdict == CMP_INVALID ? "invalid" : "gate";
		snprintf(jc->message, sizeof(jc->message), "%s: %s", m->name, row->why);
	} else if (row->verdict == CMP_INCONCLUSIVE) {
		snprintf(jc->message, sizeof(jc->message), "inconclusive: %+.1f%% [%+.1f, %+.1f] can neither "
			 "exclude nor confirm the %g%% threshold (more boots would decide it)", row->change_pct,
			 row->change_lo_pct, row->change_hi_pct, in->cmp->threshold_pct);
		jc->skipped = jc->message;
	} else if (row->verdict == CMP_UNTESTED && row->gated) {
		jc->skipped = "fewer than 2 samples on a side: the regression gate could not test this metric";
	}
}

static int jw_case(xmlTextWriterPtr w, const struct junit_case *jc)
{
	int r = 0;

	r |= xmlTextWriterStartElement(w, X("testcase")) < 0;
	r |= xmlTextWriterWriteAttribute(w, X("classname"), X(jc->classname)) < 0;
	r |= xmlTextWriterWriteAttribute(w, X("name"), X(jc->name)) < 0;
	r |= xmlTextWriterWriteAttribute(w, X("time"), X("0")) < 0;
	if (jc->fail_type) {
		r |= xmlTextWriterStartElement(w, X("failure")) < 0;
		r |= xmlTextWriterWriteAttribute(w, X("type"), X(jc->fail_type)) < 0;
		r |= xmlTextWriterWriteAttribute(w, X("message"), X(jc->message)) < 0;
		r |= xmlTextWriterWriteString(w, X(jc->message)) < 0;
		r |= xmlTextWriterEndElement(w) < 0;
	} else if (jc->skipped) {
		r |= xmlTextWriterStartElement(w, X("skipped")) < 0;
		r |= xmlTextWriterWriteAttribute(w, X("message"), X(jc->skipped)) < 0;
		r |= xmlTextWriterEndElement(w) < 0;
	}
	if (jc->detail[0])
		r |= xmlTextWriterWriteElement(w, X("system-out"), X(jc->detail)) < 0;
	r |= xmlTextWriterEndElement(w) < 0;
	return r ? -EIO : 0;
}

static int jw_property(xmlTextWriterPtr w, const char *name, const char *value)
{
	int r = 0;

	r |= xmlTextWriterStartElement(w, X("property")) < 0;
	r |= xmlTextWriterWriteAttribute(w, X("name"), X(name)) < 0;
	r |= xmlTextWriterWriteAttribute(w, X("value"), X(value)) < 0;
	r |= xmlTextWriterEndElement(w) < 0;
	return r ? -EIO : 0;
}

/* the cases, in order: the run itself, then per cell "valid" and each metric */
static int junit_cases(const struct report_input *in, struct junit_case **out, size_t *n)
{
	const struct results *r = in->res;
	struct junit_case *jc;
	size_t i, j, cap = 1, k = 0;

	for (i = 0; i < r->ncells; i++)
		cap += 1 + r->cells[i].nmetrics + 2;
	jc = calloc(cap, sizeof(*jc));
	if (!jc)
		return -ENOMEM;
	snprintf(jc[k].classname, sizeof(jc[k].classname), "thpeval");
	snprintf(jc[k].name, sizeof(jc[k].name), "run");
	snprintf(jc[k].detail, sizeof(jc[k].detail), "status %s", r->status);
	if (strcmp(r->status, "complete")) {
		jc[k].fail_type = "run";
		snprintf(jc[k].message, sizeof(jc[k].message), "run %s%s%s", r->status, r->error[0] ? ": " : "",
			 r->error);
	}
	k++;
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];

		cell_label(c, jc[k].classname, sizeof(jc[k].classname));
		snprintf(jc[k].name, sizeof(jc[k].name), "valid");
		snprintf(jc[k].detail, sizeof(jc[k].detail), "host huge %.1f%%, guest huge %.1f%%, %u reps ok, %u failed",
			 c->host_cov.n ? c->host_cov.s.mean : 0.0, c->guest_cov.n ? c->guest_cov.s.mean : 0.0,
			 c->reps_ok, c->reps_failed);
		if (!c->valid) {
			jc[k].fail_type = "invalid";
			snprintf(jc[k].message, sizeof(jc[k].message), "%s", c->invalid_reason);
		}
		k++;
		for (j = 0; j < c->nmetrics + 2; j++) {
			const struct metric *m = metric_at(c, j);

			if (m->n == 0)
				continue;
			junit_metric_case(in, i, m, &jc[k++]);
		}
	}
	*out = jc;
	*n = k;
	return 0;
}

static int render_junit(const struct report_input *in, FILE *out, struct err *e)
{
	const struct results *r = in->res;
	struct junit_case *jc = NULL;
	xmlBufferPtr buf = NULL;
	xmlTextWriterPtr w = NULL;
	char tests[24], fails[24], skips[24], when[32];
	size_t n = 0, i, nf = 0, ns = 0;
	int bad = 0, rc = 0;

	if (junit_cases(in, &jc, &n))
		return err_set(e, -ENOMEM, "out of memory rendering junit");
	for (i = 0; i < n; i++) {
		nf += jc[i].fail_type != NULL;
		ns += !jc[i].fail_type && jc[i].skipped;
	}
	snprintf(tests, sizeof(tests), "%zu", n);
	snprintf(fails, sizeof(fails), "%zu", nf);
	snprintf(skips, sizeof(skips), "%zu", ns);
	fmt_time(when, sizeof(when), r->started);
	buf = xmlBufferCreate();
	if (buf)
		w = xmlNewTextWriterMemory(buf, 0);
	if (!w) {
		rc = err_set(e, -ENOMEM, "cannot create the junit xml writer");
		goto out;
	}
	bad |= xmlTextWriterSetIndent(w, 1) < 0;
	bad |= xmlTextWriterStartDocument(w, NULL, "UTF-8", NULL) < 0;
	bad |= xmlTextWriterStartElement(w, X("testsuites")) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("name"), X("thpeval")) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("tests"), X(tests)) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("failures"), X(fails)) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("errors"), X("0")) < 0;
	bad |= xmlTextWriterStartElement(w, X("testsuite")) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("name"), X("thpeval")) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("tests"), X(tests)) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("failures"), X(fails)) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("errors"), X("0")) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("skipped"), X(skips)) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("timestamp"), X(when)) < 0;
	bad |= xmlTextWriterStartElement(w, X("properties")) < 0;
	bad |= jw_property(w, "thpeval_version", r->thpeval_version) < 0;
	bad |= jw_property(w, "status", r->status) < 0;
	bad |= jw_property(w, "accel", r->accel) < 0;
	bad |= jw_property(w, "host_kernel", r->host.kernel) < 0;
	bad |= jw_property(w, "cpu_model", r->host.cpu_model) < 0;
	bad |= jw_property(w, "hypervisor_version", r->hypervisor_version) < 0;
	bad |= jw_property(w, "libvirt_version", r->libvirt_version) < 0;
	bad |= jw_property(w, "image_id", r->image_id) < 0;
	if (in->cmp)
		bad |= jw_property(w, "baseline", in->base_name ? in->base_name : "") < 0;
	bad |= xmlTextWriterEndElement(w) < 0;
	for (i = 0; i < n && !bad; i++)
		bad |= jw_case(w, &jc[i]) < 0;
	bad |= xmlTextWriterEndDocument(w) < 0;
	xmlFreeTextWriter(w);
	w = NULL;
	if (bad) {
		rc = err_set(e, -EIO, "cannot render junit xml (a string that is not UTF-8?)");
		goto out;
	}
	fwrite(xmlBufferContent(buf), 1, (size_t)xmlBufferLength(buf), out);
out:
	if (w)
		xmlFreeTextWriter(w);
	if (buf)
		xmlBufferFree(buf);
	free(jc);
	return rc;
}

/* ---- dispatch ------------------------------------------------------------------------- */

int report_render(const struct report_input *in, enum report_format f, FILE *out, struct err *e)
{
	static int (*const fn[])(const struct report_input *, FILE *, struct err *) = {
		[REPORT_TEXT] = render_text,
		[REPORT_JSON] = render_json,
		[REPORT_CSV] = render_csv,
		[REPORT_HTML] = render_html,
		[REPORT_JUNIT] = render_junit,
	};
	_Static_assert(ARRAY_SIZE(fn) == REPORT__COUNT, "renderer table");
	int r;

	if ((unsigned)f >= REPORT__COUNT)
		return err_set(e, -EINVAL, "internal: unknown report format %d", (int)f);
	r = fn[f](in, out, e);
	if (!r && ferror(out))
		r = err_set(e, -EIO, "cannot write the %s report", formats[f].name);
	return r;
}

static int mkdir_p(const char *dir, mode_t mode, struct err *e)
{
	char p[PATH_MAX];
	size_t i, n = strlen(dir);

	if (n == 0 || n >= sizeof(p))
		return err_set(e, -ENAMETOOLONG, "bad output directory '%s'", dir);
	memcpy(p, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (mkdir(p, mode) < 0 && errno != EEXIST)
			return err_set(e, -errno, "cannot create directory '%s': %s", p, strerror(errno));
		p[i] = i == n ? '\0' : '/';
	}
	return 0;
}

int report_write_dir(const struct report_input *in, unsigned mask, const char *dir, struct err *e)
{
	char path[PATH_MAX];
	unsigned f;

	if (mkdir_p(dir, 0755, e))
		return e->code;
	for (f = 0; f < REPORT__COUNT; f++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mem;
		int r;

		if (!(mask & REPORT_BIT(f)))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, formats[f].file) >= (int)sizeof(path))
			return err_set(e, -ENAMETOOLONG, "output path too long: '%s'", dir);
		if (f == REPORT_JSON) {
			if (results_write_json(in->res, path, e))
				return e->code;
			continue;
		}
		mem = open_memstream(&buf, &len);
		if (!mem)
			return err_set(e, -ENOMEM, "out of memory rendering %s", formats[f].name);
		r = report_render(in, (enum report_format)f, mem, e);
		if (fclose(mem) && !r)
			r = err_set(e, -ENOMEM, "out of memory rendering %s", formats[f].name);
		if (!r)
			r = write_file_atomic(path, buf, len, 0644, e);
		free(buf);
		if (r)
			return r;
	}
	return 0;
}
