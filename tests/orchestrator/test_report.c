/*
 * tests for orchestrator/report/ (formats.c and the formats it dispatches to:
 * text.c, csv.c, html.c, html_chart.c, junit.c) and `thpeval report` (cmd/report.c):
 * CSV parsed back (RFC 4180) equals the samples; JUnit and HTML accepted by
 * xmllint; everything escaped; files appear only complete; exit codes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libxml/parser.h>

#include "lib/textesc.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/report/report.h"
#include "orchestrator/model/balloon.h"
#include "orchestrator/model/results.h"
#include "orchestrator/report/text.h"
#include "orchestrator/model/results_load.h"
#include "tests/orchestrator/fixture.h"

#define HOSTILE "w,\"<b>&'x\r\n"

/* a model with names and reasons that need escaping in every format, and an invalid cell */
static struct results *hostile_results(void)
{
	static const double odd[] = { 1e-300, -2.5, 123456789.12345679, 0.1, 3.0 };
	struct results *r = malloc(sizeof(*r));
	struct cell *c;
	struct guest_log *g;
	size_t k;

	assert_non_null(r);
	results_init(r);
	snprintf(r->host.kernel, sizeof(r->host.kernel), "6.1 <b>\"k\"</b>");
	snprintf(r->host.cpu_model, sizeof(r->host.cpu_model), "CPU & <Co>");
	snprintf(r->accel, sizeof(r->accel), "tcg");
	snprintf(r->status, sizeof(r->status), "complete");
	r->settings.min_coverage_pct = 90;
	c = results_cell(r, "guest", "always", "never", HOSTILE, NULL);
	assert_non_null(c);
	for (k = 0; k < sizeof(odd) / sizeof(odd[0]); k++) {
		assert_int_equal(metric_add(cell_metric(c, "access_ns", NULL), odd[k]), 0);
		assert_int_equal(metric_add(cell_metric(c, "weird,\"metric\"", NULL), odd[k] * 3), 0);
	}
	metric_add(&c->host_cov, 95);
	metric_add(&c->guest_cov, 0);
	c->reps_ok = 5;
	c = results_cell(r, "guest", "never", "never", "memset", NULL);
	metric_add(cell_metric(c, "fault_ns_per_4k", NULL), 100);
	metric_add(cell_metric(c, "fault_ns_per_4k", NULL), 110);
	metric_add(&c->host_cov, 40);
	metric_add(&c->guest_cov, 0);
	c->reps_ok = 2;
	cell_add_failure(c, "guest said <script>alert(1)</script> & left");
	g = results_guest_add(r, NULL);
	snprintf(g->name, sizeof(g->name), "guest<1>");
	snprintf(g->status, sizeof(g->status), "failed");
	snprintf(g->error, sizeof(g->error), "console said \"</td><script>\"");
	results_finish(r, 90);
	assert_false(r->cells[1].valid);	/* host never with 40% huge */
	return r;
}

static char *render(const struct report_input *in, enum report_format f, size_t *len)
{
	struct err e = ERR_INIT;
	char *buf = NULL;
	size_t n = 0;
	FILE *m = open_memstream(&buf, &n);

	assert_non_null(m);
	if (report_render(in, f, m, &e))
		fail_msg("render %s: %s", report_format_name(f), e.msg);
	fclose(m);
	if (len)
		*len = n;
	return buf;
}

static void write_text(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

/* run a shell command; its stdout+stderr into *out; returns the exit status */
static int run_tool(const char *cmd, char **out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len), *p = popen(cmd, "r");
	char chunk[4096];
	size_t n;
	int st;

	assert_non_null(m);
	assert_non_null(p);
	while ((n = fread(chunk, 1, sizeof(chunk), p)) > 0)
		fwrite(chunk, 1, n, m);
	st = pclose(p);
	fclose(m);
	*out = buf;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static bool have_xmllint(void)
{
	return system("command -v xmllint >/dev/null 2>&1") == 0;
}

/* ---- formats -------------------------------------------------------------------------- */

static void test_formats_parse(void **state)
{
	static const struct {
		const char *list;
		int rc;
		unsigned mask;
	} cases[] = {
		{ "text", 0, REPORT_BIT(REPORT_TEXT) },
		{ "html,junit", 0, REPORT_BIT(REPORT_HTML) | REPORT_BIT(REPORT_JUNIT) },
		{ "text,json,csv,html,junit", 0, REPORT_BIT(REPORT_TEXT) | REPORT_BIT(REPORT_JSON) |
		  REPORT_BIT(REPORT_CSV) | REPORT_BIT(REPORT_HTML) | REPORT_BIT(REPORT_JUNIT) },
		{ "csv,csv", 0, REPORT_BIT(REPORT_CSV) },
		{ "pdf", -EINVAL, 0 },
		{ "html,", -EINVAL, 0 },
		{ ",html", -EINVAL, 0 },
		{ ",", -EINVAL, 0 },
		{ "HTML", -EINVAL, 0 },
		{ "htmlx", -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err e = ERR_INIT;
		unsigned mask = 0;
		int rc = report_formats_parse(cases[i].list, &mask, &e);

		if (rc != cases[i].rc || (!rc && mask != cases[i].mask))
			fail_msg("'%s': rc %d mask %#x (%s)", cases[i].list, rc, mask, e.msg);
		if (rc && !strstr(e.msg, "text, json, csv, html, junit"))
			fail_msg("'%s': message '%s' does not list the formats", cases[i].list, e.msg);
	}
	assert_string_equal(report_format_file(REPORT_HTML), "report.html");
	assert_string_equal(report_format_file(REPORT_JUNIT), "junit.xml");
}

/* the registry: every format parses by its name alone, has its own file and a
 * description, and the help text is exactly the names in order, ", " joined */
static void test_formats_registry(void **state)
{
	char help[256] = "";
	unsigned f, g;

	for (f = 0; f < REPORT__COUNT; f++) {
		const char *name = report_format_name((enum report_format)f);
		struct err e = ERR_INIT;
		unsigned mask = 0;

		if (report_formats_parse(name, &mask, &e) || mask != REPORT_BIT(f))
			fail_msg("'%s': mask %#x, want %#x (%s)", name, mask, REPORT_BIT(f), e.msg);
		assert_true(report_format_description((enum report_format)f)[0] != '\0');
		for (g = 0; g < f; g++)
			if (!strcmp(report_format_file((enum report_format)f), report_format_file((enum report_format)g)))
				fail_msg("'%s' and '%s' share the file %s", name, report_format_name((enum report_format)g),
					 report_format_file((enum report_format)f));
		snprintf(help + strlen(help), sizeof(help) - strlen(help), "%s%s", f ? ", " : "", name);
	}
	assert_string_equal(REPORT_FORMATS_HELP, help);
	assert_string_equal(report_format_name(REPORT__COUNT), "?");
	assert_string_equal(report_format_file(REPORT__COUNT), "?");
}

/* ---- csv ---------------------------------------------------------------------------------- */

#define CSV_MAX_FIELDS 16

struct csv_row {
	size_t n;
	char *f[CSV_MAX_FIELDS];
};

/* a strict RFC 4180 reader: CRLF records, quoted fields with "" escapes */
static size_t csv_parse(const char *s, size_t len, struct csv_row *rows, size_t max)
{
	size_t nrows = 0, i = 0;

	while (i < len) {
		struct csv_row *row;

		assert_true(nrows < max);
		row = &rows[nrows++];
		row->n = 0;
		for (;;) {
			char *field = malloc(len + 1);
			size_t k = 0;

			assert_non_null(field);
			if (s[i] == '"') {
				i++;
				for (;;) {
					assert_true(i < len);	/* unterminated quote */
					if (s[i] == '"' && i + 1 < len && s[i + 1] == '"') {
						field[k++] = '"';
						i += 2;
					} else if (s[i] == '"') {
						i++;
						break;
					} else {
						field[k++] = s[i++];
					}
				}
			} else {
				while (i < len && s[i] != ',' && s[i] != '\r') {
					assert_true(s[i] != '"' && s[i] != '\n');	/* must have been quoted */
					field[k++] = s[i++];
				}
			}
			field[k] = '\0';
			assert_true(row->n < CSV_MAX_FIELDS);
			row->f[row->n++] = field;
			if (i < len && s[i] == ',') {
				i++;
				continue;
			}
			assert_true(i + 1 < len + 1 && s[i] == '\r' && s[i + 1] == '\n');	/* CRLF */
			i += 2;
			break;
		}
	}
	return nrows;
}

static void csv_free(struct csv_row *rows, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++)
		for (k = 0; k < rows[i].n; k++)
			free(rows[i].f[k]);
}

static void check_csv(const struct results *r)
{
	struct report_input in = { .res = r };
	struct csv_row *rows = calloc(4096, sizeof(*rows));
	size_t len, n, i, j, k, row = 1, total = 0;
	char *csv = render(&in, REPORT_CSV, &len);

	n = csv_parse(csv, len, rows, 4096);
	assert_true(n >= 1);
	/* header */
	{
		char *hdr = strdup(REPORT_CSV_HEADER), *tok, *save = NULL;

		for (k = 0, tok = strtok_r(hdr, ",", &save); tok; tok = strtok_r(NULL, ",", &save), k++)
			assert_string_equal(rows[0].f[k], tok);
		assert_int_equal(rows[0].n, k);
		free(hdr);
	}
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];

		for (j = 0; j < c->nmetrics + 2; j++) {
			const struct metric *m = j < c->nmetrics ? &c->metrics[j] : j == c->nmetrics ? &c->host_cov : &c->guest_cov;

			for (k = 0; k < m->n; k++, row++) {
				char rep[24];
				char *end;

				total++;
				assert_true(row < n);
				assert_int_equal(rows[row].n, 9);
				assert_string_equal(rows[row].f[0], c->host_thp);
				assert_string_equal(rows[row].f[1], c->guest_thp);
				assert_string_equal(rows[row].f[2], c->workload);
				assert_string_equal(rows[row].f[3], c->target);
				assert_string_equal(rows[row].f[4], m->name);
				snprintf(rep, sizeof(rep), "%zu", k + 1);
				assert_string_equal(rows[row].f[5], rep);
				/* the value reads back as exactly the sample */
				if (strtod(rows[row].f[6], &end) != m->samples[k] || *end)
					fail_msg("row %zu: '%s' != %.17g", row, rows[row].f[6], m->samples[k]);
			}
		}
	}
	assert_int_equal(n, total + 1);	/* one row per sample, nothing else */
	csv_free(rows, n);
	free(rows);
	free(csv);
}

/* the split's line: significant parts show their share, host-side ones how rounds were used */
struct split_case {
	const char *name;
	const char *side;
	bool significant;
	const char *estimator;
	double corr;
	const char *want, *not;
};

static const struct split_case split_cases[] = {
	{ "blocked host effect", "host", true, "paired by round", 0.66, "30% (rounds as blocks, round r 0.66)", NULL },
	{ "unpaired host effect", "host", true, "unpaired", -0.12, "(unpaired, round r -0.12)", NULL },
	{ "guest effect: no rounds", "guest", true, "", NAN, "30%\n", "round r" },
	{ "not significant: no share", "host", false, "unpaired", 0.1, "n.s.       (unpaired, round r 0.10)", "30%" },
};

static void test_split_line(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(split_cases) / sizeof(split_cases[0]); i++) {
		const struct split_case *c = &split_cases[i];
		struct effects *fx = calloc(1, sizeof(*fx));
		struct effect *e;
		char *out = NULL;
		size_t len = 0;
		FILE *f;

		assert_non_null(fx);
		e = &fx->e[fx->n++];
		snprintf(e->workload, sizeof(e->workload), "memset");
		snprintf(e->side, sizeof(e->side), "%s", c->side);
		snprintf(e->component, sizeof(e->component), "tlb");
		snprintf(e->metric, sizeof(e->metric), "access_ns");
		snprintf(e->host_state, sizeof(e->host_state), "fresh");
		snprintf(e->method, sizeof(e->method), "boots");
		snprintf(e->round_estimator, sizeof(e->round_estimator), "%s", c->estimator);
		e->available = true;
		e->significant = c->significant;
		e->estimate_pct = c->significant ? 15 : 2;
		e->ci95_low_pct = c->significant ? 10 : -3;
		e->ci95_high_pct = 20;
		e->share_pct = c->significant ? 30 : NAN;
		e->round_corr = c->corr;
		f = open_memstream(&out, &len);
		assert_non_null(f);
		effects_print(fx, f);
		fclose(f);
		if (!strstr(out, c->want) || (c->not && strstr(out, c->not)))
			fail_msg("%s: '%s' %s in:\n%s", c->name, strstr(out, c->want) ? c->not : c->want,
				 strstr(out, c->want) ? "present" : "missing", out);
		free(out);
		free(fx);
	}
}

static void test_csv_fixture(void **state)
{
	struct results *r = fixture_results();

	check_csv(r);
	fixture_results_free(r);
}

static void test_csv_quoting(void **state)
{
	struct results *r = hostile_results();
	struct report_input in = { .res = r };
	char *csv = render(&in, REPORT_CSV, NULL);

	/* the hostile workload is quoted with its quote doubled */
	assert_non_null(strstr(csv, ",\"w,\"\"<b>&'x\r\n\","));
	assert_non_null(strstr(csv, ",\"weird,\"\"metric\"\"\","));
	free(csv);
	check_csv(r);
	fixture_results_free(r);
}

/* text fields that a spreadsheet would take for a formula get a leading '; numbers stay numbers */
static void test_csv_formula(void **state)
{
	static const struct {
		const char *name, *field;	/* the text */
		size_t col;			/* its column */
		const char *want;		/* the cell as it reads back */
	} cases[] = {
		{ "equals in the workload", "=cmd|' /C calc'!A0", 2, "'=cmd|' /C calc'!A0" },
		{ "plus in host_thp", "+1+1", 0, "'+1+1" },
		{ "minus in guest_thp", "-2+3", 1, "'-2+3" },
		{ "at in the metric", "@SUM(A1)", 4, "'@SUM(A1)" },
		{ "tab in the variant", "\t=1", 8, "'\t=1" },
		{ "carriage return in the prefault", "\r=1", 7, "'\r=1" },
		{ "comma after equals, quoted too", "=a,b", 2, "'=a,b" },
		{ "equals inside is harmless", "a=b", 2, "a=b" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct results *r = malloc(sizeof(*r));
		const char *f[9] = { "always", "never", "memset", "guest", "m", "", "", "ondemand", "v" };
		struct report_input in = { .res = r };
		struct csv_row rows[4] = { 0 };
		struct cell *c;
		size_t len, n;
		char *csv;

		assert_non_null(r);
		results_init(r);
		f[cases[i].col] = cases[i].field;
		c = results_cell_key(r, &(struct cell_key){ .target = f[3], .host_thp = f[0], .prefault = f[7],
							    .guest_thp = f[1], .workload = f[2], .variant = f[8] },
				     NULL);
		assert_non_null(c);
		assert_int_equal(metric_add(cell_metric(c, f[4], NULL), -3.25), 0);
		csv = render(&in, REPORT_CSV, &len);
		n = csv_parse(csv, len, rows, 4);
		if (n != 2 || rows[1].n != 9)
			fail_msg("%s: %zu rows, %zu fields:\n%s", cases[i].name, n, n > 1 ? rows[1].n : 0, csv);
		if (strcmp(rows[1].f[cases[i].col], cases[i].want))
			fail_msg("%s: '%s', want '%s'", cases[i].name, rows[1].f[cases[i].col], cases[i].want);
		assert_string_equal(rows[1].f[5], "1");
		assert_string_equal(rows[1].f[6], "-3.25");	/* a negative number is a number */
		csv_free(rows, n);
		free(csv);
		results_release(r);
		free(r);
	}
}

/* ---- control characters ---------------------------------------------------------------------- */

/* ESC sequences, a BEL, DEL, a C1 CSI, a byte that is not UTF-8, NUL-free */
#define CTL "\x1b[31m\x07x\x7f\xc2\x9b\xff\x01\r"

/* CTL appended to the field (its text cut to make room) */
static void poison(char *field, size_t size)
{
	size_t n = strlen(field), c = strlen(CTL);

	if (c >= size)
		c = size - 1;
	if (n + c >= size)
		n = size - 1 - c;
	memcpy(field + n, CTL, c);
	field[n + c] = '\0';
}

#define POISON(f) poison((f), sizeof(f))

/* control characters in every string of the model (as a results.json or a guest could give them) */
static void poison_results(struct results *r)
{
	size_t i, j, k;

	POISON(r->thpeval_version);
	POISON(r->accel_reason);
	POISON(r->libvirt_version);
	POISON(r->hypervisor_version);
	POISON(r->image_id);
	POISON(r->kvm_stats_note);
	POISON(r->pmu_note);
	POISON(r->host.name);
	POISON(r->host.kernel);
	POISON(r->host.cpu_model);
	POISON(r->error);
	POISON(r->settings.workloads);
	POISON(r->settings.uri);
	for (i = 0; i < r->ncells; i++) {
		struct cell *c = &r->cells[i];

		POISON(c->host_thp);
		POISON(c->prefault);
		POISON(c->guest_thp);
		POISON(c->workload);
		POISON(c->variant);
		POISON(c->guest);
		POISON(c->treatment_note);
		c->valid = false;
		POISON(c->invalid_reason);
		for (k = 0; k < RES_MAX_FAILURES; k++)
			POISON(c->failures[k]);
		c->nfailures = RES_MAX_FAILURES;
		for (j = 0; j < c->nmetrics; j++)
			POISON(c->metrics[j].name);
	}
	for (i = 0; i < r->nguests; i++) {
		POISON(r->guests[i].name);
		POISON(r->guests[i].error);
		POISON(r->guests[i].guest_kernel);
	}
}

/* junit.xml stays well-formed XML 1.0; text has no control character but \n and \t; both with a baseline */
static void test_control_chars(void **state)
{
	static const struct {
		const char *name;
		bool baseline;
		bool failed;		/* the run failed: its error in the run case */
	} cases[] = {
		{ "alone", false, false },
		{ "with a baseline", true, false },
		{ "a failed run", false, true },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct results *base = fixture_results(), *cur = fixture_results();
		struct report_input in = { .res = cur };
		const struct compare_opts o = { 5, GATE_PRIMARY };
		struct comparison c;
		struct err e = ERR_INIT;
		char *out;
		size_t len;
		xmlDocPtr doc;

		poison_results(cur);
		poison_results(base);
		if (cases[i].failed)
			snprintf(cur->status, sizeof(cur->status), "failed" CTL);
		if (cases[i].baseline) {
			assert_int_equal(compare_results(base, cur, &o, &c, &e), 0);
			in.base = base;
			in.cmp = &c;
			in.base_name = "run " CTL;
		}
		out = render(&in, REPORT_JUNIT, &len);
		doc = xmlReadMemory(out, (int)len, "junit.xml", NULL, XML_PARSE_NONET | XML_PARSE_NOERROR |
				    XML_PARSE_NOWARNING);
		if (!doc)
			fail_msg("%s: junit.xml is not well-formed XML:\n%s", cases[i].name, out);
		xmlFreeDoc(doc);
		assert_non_null(strstr(out, "\\x1b[31m\\x07x\\x7f\\xc2\\x9b\\xff\\x01\\x0d"));
		free(out);
		out = render(&in, REPORT_TEXT, &len);
		if (!textesc_clean(out, len, TEXTESC_KEEP_LINES))
			fail_msg("%s: a control character in the text:\n%s", cases[i].name, out);
		assert_non_null(strstr(out, "\\x1b[31m"));
		free(out);
		/* the text printers on their own, as 'thpeval run' and 'compare' use them */
		{
			FILE *m = open_memstream(&out, &len);

			assert_non_null(m);
			results_print_table(cur, m);
			if (cases[i].baseline)
				compare_print(&c, base, cur, m);
			fclose(m);
			if (!textesc_clean(out, len, TEXTESC_KEEP_LINES))
				fail_msg("%s: a control character printed:\n%s", cases[i].name, out);
			free(out);
		}
		if (cases[i].baseline)
			comparison_release(&c);
		fixture_results_free(base);
		fixture_results_free(cur);
	}
}

/* ---- junit ------------------------------------------------------------------------------- */

static void xmllint_ok(const char *path, bool html)
{
	char cmd[4300], *out = NULL, *line, *save = NULL;
	int rc;

	snprintf(cmd, sizeof(cmd), "xmllint %s--noout '%s' 2>&1", html ? "--html " : "", path);
	rc = run_tool(cmd, &out);
	if (rc != 0)
		fail_msg("%s: exit %d\n%s", cmd, rc, out);
	if (!html && out[0])
		fail_msg("%s:\n%s", cmd, out);
	/* libxml2's HTML parser knows HTML 4 only: svg, nav, section... are "invalid tags"; nothing else may be */
	for (line = strtok_r(out, "\n", &save); html && line; line = strtok_r(NULL, "\n", &save))
		if (strstr(line, "parser error") && !(strstr(line, "HTML parser error : Tag ") && strstr(line, " invalid")))
			fail_msg("%s: %s", cmd, line);
	free(out);
}

static void test_junit(void **state)
{
	struct results *r = hostile_results();
	struct report_input in = { .res = r };
	char *dir = fixture_tmpdir("report"), path[4200];
	struct err e = ERR_INIT;
	char *xml;

	xml = render(&in, REPORT_JUNIT, NULL);
	if (getenv("DUMP"))
		write_text(getenv("DUMP"), xml, strlen(xml));
	/* run + per cell "valid" + 2 metrics + 2 coverage, and 1 + fault + 2 coverage for the invalid one */
	assert_non_null(strstr(xml, "<testsuites name=\"thpeval\" tests=\"10\" failures=\"4\""));
	assert_non_null(strstr(xml, "classname=\"never/never/memset\" name=\"valid\""));
	assert_non_null(strstr(xml, "<failure type=\"invalid\" message=\"host THP is never but 40.0% of guest RAM is on host huge pages\""));
	assert_non_null(strstr(xml, "message=\"cell invalid: host THP is never but 40.0%"));
	assert_null(strstr(xml, "<b>"));
	assert_non_null(strstr(xml, "&lt;b&gt;"));
	free(xml);
	snprintf(path, sizeof(path), "%s/junit.xml", dir);
	assert_int_equal(report_write_dir(&in, REPORT_BIT(REPORT_JUNIT), dir, &e), 0);
	if (have_xmllint())
		xmllint_ok(path, false);
	else
		print_message("xmllint check skipped: xmllint not installed (apt-get install libxml2-utils)\n");
	fixture_results_free(r);
	fixture_rm_rf(dir);
	free(dir);
}

/* later compare gates add failures with figures */
static void test_junit_regression(void **state)
{
	struct results *base = fixture_results(), *cur = fixture_results();
	struct report_input in = { 0 };
	struct comparison c;
	struct err e = ERR_INIT;
	char *xml;
	size_t i, k;

	for (i = 0; i < cur->ncells; i++) {
		struct metric *m = cell_metric(&cur->cells[i], "access_ns", NULL);

		for (k = 0; k < m->n; k++)
			m->samples[k] *= 2.0;
		summarize(m->samples, m->n, &m->s);
	}
	{
		const struct compare_opts o = { 5, GATE_PRIMARY };

		assert_int_equal(compare_results(base, cur, &o, &c, &e), 0);
	}
	in.res = cur;
	in.base = base;
	in.cmp = &c;
	in.base_name = "nightly run 41";
	xml = render(&in, REPORT_JUNIT, NULL);
	if (getenv("DUMP"))
		write_text(getenv("DUMP"), xml, strlen(xml));
	/* twice as slow in every cell: 3 of the 4 are beyond doubt with 2 repetitions each, the
	 * widest one is inconclusive (a skipped case with its interval) */
	assert_non_null(strstr(xml, "failures=\"3\""));
	assert_non_null(strstr(xml, "<skipped message=\"inconclusive: +100.0% ["));
	assert_non_null(strstr(xml, "<failure type=\"regression\" message=\"access_ns regressed +100.0% ["));
	assert_non_null(strstr(xml, "Holm-adjusted p="));
	assert_non_null(strstr(xml, "<property name=\"baseline\" value=\"nightly run 41\"/>"));
	free(xml);
	/* and the HTML shows the comparison with the regressions */
	xml = render(&in, REPORT_HTML, NULL);
	assert_non_null(strstr(xml, "The gate fails:"));
	assert_non_null(strstr(xml, "<td class=\"v-REGRESSION\">REGRESSION: worse than the threshold"));
	assert_non_null(strstr(xml, "class=\"base\""));	/* baseline marker in the charts */
	free(xml);
	comparison_release(&c);
	fixture_results_free(base);
	fixture_results_free(cur);
}

/* ---- html ---------------------------------------------------------------------------------- */

static void test_html(void **state)
{
	struct results *r = hostile_results(), *f = fixture_results();
	struct report_input in = { .res = r };
	char *dir = fixture_tmpdir("report"), path[4200];
	struct err e = ERR_INIT;
	char *html;
	size_t len;

	html = render(&in, REPORT_HTML, &len);
	/* escaped everywhere */
	assert_null(strstr(html, "<b>\"k"));
	assert_null(strstr(html, "<b>&"));
	assert_null(strstr(html, "<Co>"));
	assert_null(strstr(html, "<script"));
	assert_null(strstr(html, "</td><script>"));
	assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; left"));
	assert_non_null(strstr(html, "CPU &amp; &lt;Co&gt;"));
	assert_non_null(strstr(html, "w,&quot;&lt;b&gt;&amp;&#39;x"));
	/* self-contained: inline CSS and SVG, nothing fetched */
	assert_non_null(strstr(html, "<style>"));
	assert_non_null(strstr(html, "<svg xmlns=\"http://www.w3.org/2000/svg\""));
	assert_null(strstr(html, "src="));
	assert_null(strstr(html, "<link"));
	assert_null(strstr(html, "url("));
	assert_null(strstr(html, "@import"));
	assert_null(strstr(html, "href=\"http"));
	/* validity marks, CI whiskers, coverage chart */
	assert_non_null(strstr(html, "✗ 1 of 2 cells invalid"));
	assert_non_null(strstr(html, "class=\"bar c0 invalid\""));
	assert_non_null(strstr(html, "class=\"ci\""));
	assert_non_null(strstr(html, "class=\"bar cov-host"));
	assert_non_null(strstr(html, "id=\"validity\""));
	write_text((snprintf(path, sizeof(path), "%s/hostile.html", dir), path), html, len);
	if (have_xmllint()) {
		xmllint_ok(path, false);	/* well-formed XML: every tag closed, everything escaped */
		xmllint_ok(path, true);
	}
	free(html);
	/* the fixture: all valid, both main metric charts */
	in.res = f;
	html = render(&in, REPORT_HTML, &len);
	assert_non_null(strstr(html, "✓ All 4 cells valid"));
	assert_non_null(strstr(html, "<code>fault_ns_per_4k</code>"));
	assert_non_null(strstr(html, "<code>access_ns</code>"));
	assert_null(strstr(html, "id=\"comparison\""));	/* no baseline, no section */
	write_text((snprintf(path, sizeof(path), "%s/report.html", dir), path), html, len);
	if (have_xmllint()) {
		xmllint_ok(path, false);
		xmllint_ok(path, true);
	} else {
		print_message("xmllint checks skipped: xmllint not installed (apt-get install libxml2-utils)\n");
	}
	free(html);
	(void)e;
	fixture_results_free(r);
	fixture_results_free(f);
	fixture_rm_rf(dir);
	free(dir);
}

/* ---- text / json / files ---------------------------------------------------------------- */

static void test_text_json(void **state)
{
	struct results *r = fixture_results();
	struct report_input in = { .res = r };
	char *dir = fixture_tmpdir("report"), path[4200], *txt, *json, *file;
	struct err e = ERR_INIT;
	size_t len, flen;
	FILE *f;

	/* text is the terminal table, exactly */
	txt = render(&in, REPORT_TEXT, &len);
	{
		char *table = NULL;
		size_t tlen = 0;

		f = open_memstream(&table, &tlen);
		results_print_table(r, f);
		fclose(f);
		assert_int_equal(len, tlen);
		assert_memory_equal(txt, table, len);
		assert_non_null(strstr(txt, "5142.0 ±4.4%"));
		free(table);
	}
	free(txt);
	json = render(&in, REPORT_JSON, &len);
	snprintf(path, sizeof(path), "%s/direct.json", dir);
	assert_int_equal(results_write_json(r, path, &e), 0);
	f = fopen(path, "r");
	file = calloc(1, len + 16);
	flen = fread(file, 1, len + 16, f);
	fclose(f);
	assert_int_equal(flen, len);
	assert_memory_equal(file, json, len);
	free(file);
	free(json);
	fixture_results_free(r);
	fixture_rm_rf(dir);
	free(dir);
}

/* a host that reports free memory to its hypervisor gets the nested-host note, in text and HTML */
static void test_nested_note(void **state)
{
	struct results *r = fixture_results();
	struct report_input in = { .res = r };
	struct err e = ERR_INIT;
	char *txt, *html;
	int pass;

	(void)state;
	for (pass = 0; pass < 2; pass++) {
		r->host.have_nested = true;
		r->host.reporting = pass == 1;
		assert_int_equal(effects_attach(r, &e), 0);
		txt = render(&in, REPORT_TEXT, NULL);
		html = render(&in, REPORT_HTML, NULL);
		if (pass == 1) {
			assert_non_null(strstr(txt, "note: this host is itself a virtual machine that reports free memory"));
			assert_non_null(strstr(html, "<b>Nested host:</b>"));
		} else {
			assert_null(strstr(txt, "reports free memory"));
			assert_null(strstr(html, "Nested host"));
		}
		free(txt);
		free(html);
	}
	fixture_results_free(r);
}

/* the KSM arm: its figures in the text report and its chart in HTML; neither without --ksm */
static void test_ksm_sections(void **state)
{
	struct results *r = fixture_results();
	struct report_input in = { .res = r };
	struct ksm_log *k;
	struct err e = ERR_INIT;
	char *txt, *html;
	size_t i;

	(void)state;
	assert_int_equal(effects_attach(r, &e), 0);
	txt = render(&in, REPORT_TEXT, NULL);
	html = render(&in, REPORT_HTML, NULL);
	assert_null(strstr(txt, "KSM (--ksm"));
	assert_null(strstr(html, "KSM over time"));
	free(txt);
	free(html);
	snprintf(r->settings.ksm, sizeof(r->settings.ksm), "on");
	k = results_ksm_add(r, &e);
	assert_non_null(k);
	snprintf(k->ksm, sizeof(k->ksm), "on");
	snprintf(k->host_thp, sizeof(k->host_thp), "always");
	snprintf(k->prefault, sizeof(k->prefault), "ondemand");
	k->guests = 2;
	k->first_boot = 4;
	k->pages_sharing_max = 14007;
	k->pages_shared_max = 9471;
	k->full_scans = 34;
	k->thp_split_pmd = 120;
	k->access_before_ns = 2256;
	k->access_after_ns = 3058;
	k->n_before = 2;
	k->n_after = 13;
	for (i = 0; i < 3; i++) {
		k->series[k->n++] = (struct ksm_point){ (double)i, 0, 7000 * i, i };
		k->cov[k->ncov++] = (struct ksm_cov_point){ (double)i, 0, 100 - 30 * (double)i };
		k->cov[k->ncov++] = (struct ksm_cov_point){ (double)i, 1, 100 - 20 * (double)i };
	}
	txt = render(&in, REPORT_TEXT, NULL);
	html = render(&in, REPORT_HTML, NULL);
	assert_non_null(strstr(txt, "KSM (--ksm=on)"));
	assert_non_null(strstr(txt, "pages_sharing up to 14007, pages_shared up to 9471, 34 full scan(s)"));
	assert_non_null(strstr(txt, "host thp_split_pmd +120"));
	assert_non_null(strstr(txt, "before merging 2256 ns (2 reps), after 3058 ns (13 reps)"));
	assert_non_null(strstr(txt, "guest 4: host% 100.0 at 0 s -> 40.0 at 2 s"));
	assert_non_null(strstr(html, "KSM over time"));
	assert_non_null(strstr(html, "<title>pages_sharing</title></polyline>"));
	assert_non_null(strstr(html, "<title>guest 5: host huge %</title></polyline>"));
	free(txt);
	free(html);
	fixture_results_free(r);
}

/* a recovery arm: its figures in the text report, "not reached" for a level never reached,
 * its error alone for one that failed; no section without one */
static void test_text_recovery(void **state)
{
	struct results *r = fixture_results();
	struct report_input in = { .res = r };
	struct collapse_log *c;
	struct err e = ERR_INIT;
	char *txt;

	(void)state;
	assert_int_equal(effects_attach(r, &e), 0);
	txt = render(&in, REPORT_TEXT, NULL);
	assert_null(strstr(txt, "recovery:"));
	free(txt);
	c = results_collapse_add(r, &e);
	assert_non_null(c);
	snprintf(c->host_thp, sizeof(c->host_thp), "always");
	snprintf(c->prefault, sizeof(c->prefault), "ondemand");
	c->boot = 2;
	c->mapping_kb = 524288;
	c->ranges = 1;
	c->cov_before_pct = 0;
	c->cov_after_pct = 82.4;
	c->resident_kb_after = 430080;
	c->resident_huge_pct_after = 100;
	c->call_s = 0.8;
	c->t50_s = 0.49;
	c->blocks = 256;
	c->collapsed = 211;
	c->refused = 45;
	c->n = 2;
	c->series[0] = (struct cov_point){ 0, 0 };
	c->series[1] = (struct cov_point){ 0.8, 82.4 };
	c = results_collapse_add(r, &e);
	assert_non_null(c);
	snprintf(c->host_thp, sizeof(c->host_thp), "never");
	snprintf(c->prefault, sizeof(c->prefault), "ondemand");
	c->boot = 3;
	snprintf(c->error, sizeof(c->error), "process 4242 is gone: cannot collapse its memory");
	c = results_collapse_add(r, &e);
	assert_non_null(c);
	snprintf(c->host_thp, sizeof(c->host_thp), "always");
	snprintf(c->prefault, sizeof(c->prefault), "ondemand");
	snprintf(c->method, sizeof(c->method), "khugepaged");
	snprintf(c->stopped, sizeof(c->stopped), "90%% reached");
	c->boot = 4;
	c->mapping_kb = 524288;
	c->ranges = 1;
	c->cov_before_pct = 0;
	c->cov_after_pct = 91;
	c->t50_s = 5;
	c->t90_s = 9.5;
	c->interval_s = 10;
	c->has_khp = true;
	c->khp = (struct khp_log){ true, 4096, 100, 60000, 1, 511, 64, 256, 2, 240000, 77, 1.25 };
	c->has_reg = true;
	c->reg = (struct khp_reg){ "guest_touch", 0, 1.5, 1.3, 240ull << 20, 44.5 };
	c->has_probe = true;
	snprintf(c->probe.guest_thp, sizeof(c->probe.guest_thp), "always");
	c->probe.period_s = 1;
	c->probe.buffer_mib = 256;
	c->probe.before_ns = 900;
	c->probe.during_ns = 850;
	c->probe.after_ns = 800;
	c->probe.n_before = 3;
	c->probe.n_during = 10;
	c->probe.n_after = 5;
	txt = render(&in, REPORT_TEXT, NULL);
	assert_non_null(strstr(txt, "guest 4, host always/ondemand, round 1 (khugepaged): 512 MiB in 1 range, host% 0.0 -> 91.0;"
				    " 50% at 5.00 s, 90% at 9.50 s\n"));
	assert_non_null(strstr(txt, "stopped by: 90% reached, 10.0 s after the setting went in"));
	assert_non_null(strstr(txt, "khugepaged (set by --khugepaged): pages_to_scan 4096, scan_sleep_millisecs 100"));
	assert_non_null(strstr(txt, "2 full scans, 240000 pages collapsed, CPU 1.25 s"));
	assert_non_null(strstr(txt, "khugepaged's list: the guest touched 240 MiB of fresh memory (1.3 s), done 1.5 s after"
				    " the setting went in; host% 44.5 after it"));
	assert_non_null(strstr(txt, "access ns (guest always, 256 MiB, one pass a 1 s): before 900.0 (3 passes), during 850.0 (10),"
				    " after 800.0 (5); a fresh always boot: "));
	assert_non_null(strstr(txt, "guest 2, host always/ondemand, round 1: 512 MiB in 1 range, host% 0.0 -> 82.4;"
				    " 50% at 0.49 s, 90% at not reached; collapse 0.80 s"));
	assert_non_null(strstr(txt, "resident (ever touched) 420 MiB, 100.0% of it on huge pages at the end"));
	assert_non_null(strstr(txt, "2M blocks: 211 collapsed of 256; refused 45 (EINVAL"));
	assert_non_null(strstr(txt, "series (s host%): 0.0 0.0, 0.8 82.4\n"));
	assert_non_null(strstr(txt, "guest 3, host never/ondemand, round 1: failed: process 4242 is gone"));
	free(txt);
	fixture_results_free(r);
}

/* the free page reporting axis: each arm's re-fault time with its interval, the RSS drop, the effect */
static void test_text_balloon(void **state)
{
	static const double jitter[3] = { 1, 1.01, 0.99 };
	struct results *r = calloc(1, sizeof(*r));
	struct report_input in = { .res = r };
	struct err e = ERR_INIT;
	unsigned boot, a;
	char *txt;

	(void)state;
	assert_non_null(r);
	results_init(r);
	snprintf(r->status, sizeof(r->status), "complete");
	snprintf(r->accel, sizeof(r->accel), "tcg");
	txt = render(&in, REPORT_TEXT, NULL);
	assert_null(strstr(txt, "balloon:"));
	free(txt);
	snprintf(r->settings.balloon_list, sizeof(r->settings.balloon_list), "none,reporting");
	for (a = 0; a < 2; a++) {
		struct cell_key k = { "guest", "always", "ondemand", "never", "memset", NULL, NULL,
				      a ? "reporting" : NULL };
		struct cell *c = results_cell_key(r, &k, &e);

		assert_non_null(c);
		for (boot = 0; boot < 3; boot++) {
			struct balloon_log *b = results_balloon_add(r, &e);

			metric_add_boot(cell_metric(c, "refault_ns_per_4k", &e), (a ? 2000 : 1000) * jitter[boot],
					3 * a + boot);
			metric_add_boot(cell_metric(c, "fault_ns_per_4k", &e), 900, 3 * a + boot);
			c->reps_ok++;
			assert_non_null(b);
			snprintf(b->balloon, sizeof(b->balloon), "%s", a ? "reporting" : "none");
			snprintf(b->host_thp, sizeof(b->host_thp), "always");
			snprintf(b->prefault, sizeof(b->prefault), "ondemand");
			snprintf(b->guest_thp, sizeof(b->guest_thp), "never");
			b->boot = 3 * a + boot;
			b->freed_kb = 256 * 1024;
			b->rss_before_kb = 800 * 1024;
			b->rss_after_free_kb = (a ? 600 : 800) * 1024;
			b->rss_after_retouch_kb = 800 * 1024;
			b->rss_drop_kb = (double)b->rss_before_kb - (double)b->rss_after_free_kb;
			b->drop_pct_of_freed = b->rss_drop_kb / (double)b->freed_kb * 100;
			b->cov_before_pct = 98;
			b->cov_after_free_pct = a ? 60 : 98;
			b->cov_after_retouch_pct = a ? 90 : 98;
		}
	}
	txt = render(&in, REPORT_TEXT, NULL);
	assert_non_null(strstr(txt, "\nballoon: free page reporting"));
	assert_non_null(strstr(txt, "  host always/ondemand, guest never:\n    none       re-fault 1000 ns/4K [95% CI "));
	assert_non_null(strstr(txt, "    reporting  re-fault 2000 ns/4K [95% CI "));
	assert_non_null(strstr(txt, "QEMU RSS 800 -> 600 -> 800 MiB, drop 200 MiB = 78% of the 256 MiB freed (3 of 3 "
				    "windows half or more); host% 98% -> 60% -> 90%"));
	assert_non_null(strstr(txt, "QEMU RSS 800 -> 800 -> 800 MiB, drop 0 MiB = 0% of the 256 MiB freed (0 of 3"));
	assert_non_null(strstr(txt, "reporting vs none, re-fault time: x2.00 [95% CI x1."));
	assert_non_null(strstr(txt, ": reporting slower"));
	free(txt);
	txt = render(&in, REPORT_HTML, NULL);
	assert_non_null(strstr(txt, "<a href=\"#balloon\">"));
	assert_non_null(strstr(txt, "800 → 600 → 800"));
	free(txt);
	results_release(r);
	free(r);
}

static size_t count_str(const char *s, const char *needle)
{
	size_t n = 0;

	for (; (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/* the reporting window's chart: a dot per RSS sample, the three coverage dots, no NaN; none without windows */
static void test_html_balloon_chart(void **state)
{
	struct results *r = calloc(1, sizeof(*r));
	struct report_input in = { .res = r };
	struct err e = ERR_INIT;
	struct cell_key k = { "guest", "always", "ondemand", "never", "memset", NULL, NULL, "reporting" };
	struct balloon_log *b;
	struct cell *c;
	char *txt;
	size_t i;

	(void)state;
	assert_non_null(r);
	results_init(r);
	snprintf(r->status, sizeof(r->status), "complete");
	snprintf(r->accel, sizeof(r->accel), "tcg");
	snprintf(r->settings.balloon_list, sizeof(r->settings.balloon_list), "none,reporting");
	c = results_cell_key(r, &k, &e);
	assert_non_null(c);
	metric_add_boot(cell_metric(c, "refault_ns_per_4k", &e), 2000, 0);
	c->reps_ok++;
	txt = render(&in, REPORT_HTML, NULL);
	assert_null(strstr(txt, "<svg class=\"balloon-chart\""));
	free(txt);
	b = results_balloon_add(r, &e);
	assert_non_null(b);
	snprintf(b->balloon, sizeof(b->balloon), "reporting");
	snprintf(b->host_thp, sizeof(b->host_thp), "always");
	snprintf(b->prefault, sizeof(b->prefault), "ondemand");
	snprintf(b->guest_thp, sizeof(b->guest_thp), "never");
	b->freed_kb = 256 * 1024;
	b->rss_before_kb = 800 * 1024;
	b->rss_after_free_kb = 600 * 1024;
	b->rss_after_retouch_kb = 800 * 1024;
	b->cov_before_pct = 98;
	b->cov_after_free_pct = 60;
	b->cov_after_retouch_pct = 90;
	b->window_s = 2;
	b->n = 8;
	for (i = 0; i < b->n; i++) {
		b->series[i].t_s = 0.25 * (double)i;
		b->series[i].rss_kb = (800 - 25 * i) * 1024;
	}
	txt = render(&in, REPORT_HTML, NULL);
	assert_int_equal(count_str(txt, "<svg class=\"balloon-chart\""), 1);
	assert_int_equal(count_str(txt, "<circle class=\"bl-rss\""), 8);
	assert_int_equal(count_str(txt, "<circle class=\"bl-cov\""), 3);
	assert_non_null(strstr(txt, "<title>RSS at the free: 800 MiB</title>"));
	assert_non_null(strstr(txt, "-256 MiB freed</text>"));
	assert_non_null(strstr(txt, "<title>host huge while left: 60.0%</title>"));
	assert_null(strstr(txt, "nan"));
	free(txt);
	/* a missing coverage point is left out, not printed */
	b->cov_after_free_pct = NAN;
	txt = render(&in, REPORT_HTML, NULL);
	assert_int_equal(count_str(txt, "<circle class=\"bl-cov\""), 2);
	assert_null(strstr(txt, "nan"));
	free(txt);
	results_release(r);
	free(r);
}

/* the phase columns are headed in ns: an application's split metric carries its own unit */
static void test_text_units(void **state)
{
	struct results *r = malloc(sizeof(*r));
	struct report_input in = { .res = r };
	struct cell *c;
	char *txt;

	(void)state;
	assert_non_null(r);
	results_init(r);
	snprintf(r->accel, sizeof(r->accel), "tcg");
	snprintf(r->status, sizeof(r->status), "complete");
	c = results_cell(r, "guest", "always", "never", "redis", NULL);
	assert_non_null(c);
	assert_int_equal(metric_add(cell_metric(c, "get_avg_ms", NULL), 5.25), 0);
	c->reps_ok = 1;
	c = results_cell(r, "guest", "always", "never", "memset", NULL);
	assert_non_null(c);
	assert_int_equal(metric_add(cell_metric(c, "access_ns", NULL), 480.0), 0);
	c->reps_ok = 1;
	results_finish(r, 90);
	txt = render(&in, REPORT_TEXT, NULL);
	assert_non_null(strstr(txt, "5.2 ms") ? strstr(txt, "5.2 ms") : strstr(txt, "5.3 ms"));
	assert_non_null(strstr(txt, "480.0 "));
	assert_null(strstr(txt, "480.0 ns"));
	free(txt);
	fixture_results_free(r);
}

static void test_write_dir(void **state)
{
	static const char *const files[] = { "results.txt", "results.json", "results.csv", "report.html", "junit.xml" };
	struct results *r = fixture_results();
	struct report_input in = { .res = r };
	char *dir = fixture_tmpdir("report"), out[4200], path[4300];
	struct err e = ERR_INIT;
	struct dirent *de;
	struct stat st;
	size_t i, n = 0;
	DIR *d;

	snprintf(out, sizeof(out), "%s/new/sub", dir);
	if (report_write_dir(&in, REPORT_ALL, out, &e))
		fail_msg("%s", e.msg);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", out, files[i]);
		assert_int_equal(stat(path, &st), 0);
		assert_true(st.st_size > 100);
	}
	for (i = 0; i < REPORT__COUNT; i++) {
		snprintf(path, sizeof(path), "%s/%s", out, report_format_file((enum report_format)i));
		if (stat(path, &st) || st.st_size == 0)
			fail_msg("%s: no %s report", path, report_format_name((enum report_format)i));
	}
	d = opendir(out);
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			n++;
			assert_null(strstr(de->d_name, ".tmp."));	/* no temporary left */
		}
	closedir(d);
	assert_int_equal(n, REPORT__COUNT);
	/* an output "directory" that is a file: an error, and no partial report anywhere */
	snprintf(path, sizeof(path), "%s/plainfile", dir);
	write_text(path, "x", 1);
	err_clear(&e);
	assert_true(report_write_dir(&in, REPORT_BIT(REPORT_HTML), path, &e) < 0);
	assert_non_null(strstr(e.msg, "plainfile"));
	fixture_results_free(r);
	fixture_rm_rf(dir);
	free(dir);
}

/* ---- the command ---------------------------------------------------------------------------- */

static int run_report(const char *const *args, size_t n, const char *stdout_path)
{
	return fixture_run_cmd(cmd_report, "report", args, n, stdout_path);
}

static void test_cmd_report(void **state)
{
	char *dir = fixture_tmpdir("report"), fixture[4096], out[4200], file[4300], bogus[4200];
	struct stat st;

	fixture_path(fixture, sizeof(fixture), FIXTURE_2X2);
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(bogus, sizeof(bogus), "%s/bogus.json", dir);
	write_text(bogus, "{\"schema_version\": 99, \"cells\": []}", 35);
	{
		const char *a[] = { fixture };

		snprintf(file, sizeof(file), "%s/stdout.txt", dir);
		assert_int_equal(run_report(a, 1, file), 0);
		assert_int_equal(stat(file, &st), 0);
		assert_true(st.st_size > 200);	/* the text table went to stdout */
	}
	{	/* options after the positional argument */
		const char *a[] = { fixture, "--format=html,junit,csv", "--out", out };

		assert_int_equal(run_report(a, 4, NULL), 0);
		snprintf(file, sizeof(file), "%s/report.html", out);
		assert_int_equal(stat(file, &st), 0);
		snprintf(file, sizeof(file), "%s/junit.xml", out);
		assert_int_equal(stat(file, &st), 0);
		snprintf(file, sizeof(file), "%s/results.csv", out);
		assert_int_equal(stat(file, &st), 0);
		snprintf(file, sizeof(file), "%s/results.txt", out);
		assert_int_equal(stat(file, &st), -1);	/* not asked for */
	}
	{
		const char *a[] = { "--baseline", fixture, "--format=html", "--out", out, fixture };

		assert_int_equal(run_report(a, 6, NULL), 0);
	}
	{	/* usage errors: 2 */
		const char *none[] = { "--format=html" };
		const char *two[] = { fixture, fixture };
		const char *fmt[] = { fixture, "--format=pdf" };
		const char *multi[] = { fixture, "--format=html,csv" };
		const char *thr[] = { fixture, "--threshold=-1" };

		assert_int_equal(run_report(none, 1, NULL), 2);
		assert_int_equal(run_report(two, 2, NULL), 2);
		assert_int_equal(run_report(fmt, 2, NULL), 2);
		assert_int_equal(run_report(multi, 2, NULL), 2);
		assert_int_equal(run_report(thr, 2, NULL), 2);
		{	/* --fleet with one run's options, and --fleet's options without it */
			const char *ff[] = { "--fleet", "--format=csv" };
			const char *fb[] = { "--fleet", "--baseline", fixture };
			const char *fr[] = { "--fleet", fixture };
			const char *db[] = { fixture, "--db=/tmp/x.db" };
			const char *host[] = { fixture, "--host=lab-a" };
			const char *last[] = { fixture, "--last=3" };

			assert_int_equal(run_report(ff, 2, NULL), 2);
			assert_int_equal(run_report(fb, 3, NULL), 2);
			assert_int_equal(run_report(fr, 2, NULL), 2);
			assert_int_equal(run_report(db, 2, NULL), 2);
			assert_int_equal(run_report(host, 2, NULL), 2);
			assert_int_equal(run_report(last, 2, NULL), 2);
		}
	}
	{	/* errors: 1, and no report file appears */
		const char *missing[] = { "/nonexistent/results.json", "--out", out, "--format=html" };
		const char *bad[] = { bogus, "--out", dir, "--format=html" };

		assert_int_equal(run_report(missing, 4, NULL), 1);
		assert_int_equal(run_report(bad, 4, NULL), 1);
		snprintf(file, sizeof(file), "%s/report.html", dir);
		assert_int_equal(stat(file, &st), -1);
	}
	fixture_rm_rf(dir);
	free(dir);
}

/* cmd_args_permute: options after positionals, separated values, "--" */
static void test_args_permute(void **state)
{
	static const struct {
		const char *in[8], *out[8];
	} cases[] = {
		{ { "report", "dir", "--out", "o", "--format=html" }, { "report", "--out", "o", "--format=html", "dir" } },
		{ { "report", "--out=o", "dir" }, { "report", "--out=o", "dir" } },
		{ { "report", "a", "--", "-b" }, { "report", "--", "a", "-b" } },
		{ { "report", "-", "--help" }, { "report", "--help", "-" } },
		{ { "report", "a", "--out" }, { "report", "--out", "a" } },
	};
	size_t i, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[8] = { 0 }, *out[9] = { 0 };
		int argc = 0, n;

		while (cases[i].in[argc]) {
			argv[argc] = strdup(cases[i].in[argc]);
			argc++;
		}
		n = cmd_args_permute(&report_cmd, argc, argv, out);
		assert_int_equal(n, argc);
		for (k = 0; k < (size_t)n; k++)
			if (strcmp(out[k], cases[i].out[k]))
				fail_msg("case %zu: argv[%zu] '%s', want '%s'", i, k, out[k], cases[i].out[k]);
		assert_null(out[n]);
		for (k = 0; k < (size_t)argc; k++)
			free(argv[k]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_formats_parse),
		cmocka_unit_test(test_formats_registry),
		cmocka_unit_test(test_csv_fixture),
		cmocka_unit_test(test_split_line),
		cmocka_unit_test(test_csv_quoting),
		cmocka_unit_test(test_csv_formula),
		cmocka_unit_test(test_control_chars),
		cmocka_unit_test(test_junit),
		cmocka_unit_test(test_junit_regression),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_text_json),
		cmocka_unit_test(test_nested_note),
		cmocka_unit_test(test_text_units),
		cmocka_unit_test(test_text_recovery),
		cmocka_unit_test(test_text_balloon),
		cmocka_unit_test(test_html_balloon_chart),
		cmocka_unit_test(test_ksm_sections),
		cmocka_unit_test(test_write_dir),
		cmocka_unit_test(test_cmd_report),
		cmocka_unit_test(test_args_permute),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
