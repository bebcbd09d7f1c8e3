/*
 * report: pure renderers of the results model (and, when given, a comparison
 * with a baseline): text, JSON, CSV (RFC 4180), self-contained HTML (inline CSS
 * and SVG, no network) and JUnit XML (libxml2 xmlTextWriter). Renderers write
 * only to the FILE* they are given; report_write_dir() makes each file appear
 * only when complete (write_file_atomic). Never prints otherwise, never exits.
 */
#ifndef THPEVAL_ORCH_REPORT_H
#define THPEVAL_ORCH_REPORT_H

#include <stdio.h>

#include "lib/err.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/model/results.h"

/*
 * The formats, one line each: X(id, name, file under --out, renderer, what it
 * is), with SEP between lines. This list is the registry: it expands into
 * enum report_format (REPORT_<id>), the table formats.c works from (names,
 * files, dispatch, parsing), the renderers' prototypes (render.h) and the
 * help text REPORT_FORMATS_HELP. Adding a format is its own .c file under
 * report/ defining the renderer, plus one line here (every line ends in a
 * backslash, so the new line touches no other).
 *
 * Why a macro list and not only a table in formats.c: the option tables that
 * show the formats in --help (cmd/run.c, cmd/report.c) are static const
 * initialisers, so the help must be a string literal concatenated at compile
 * time; SEP is what joins the names there (", ") and nothing everywhere else,
 * which keeps the help free of a leading or trailing separator.
 */
#define REPORT_FORMATS(X, SEP) \
	X(TEXT, "text", "results.txt", report_text, "the terminal table") \
	SEP X(JSON, "json", "results.json", report_json, "the results model (schema_version)") \
	SEP X(CSV, "csv", "results.csv", report_csv, "one row per sample (RFC 4180)") \
	SEP X(HTML, "html", "report.html", report_html, "self-contained report with charts") \
	SEP X(JUNIT, "junit", "junit.xml", report_junit, "one testcase per cell x metric gate") \
	/* a new format: one more SEP X(...) line above this one */

#define REPORT_ENUM_(id, name, file, fn, desc) REPORT_##id,
enum report_format {
	REPORT_FORMATS(REPORT_ENUM_, )
	REPORT__COUNT
};

#define REPORT_BIT(f) (1u << (f))
#define REPORT_ALL ((1u << REPORT__COUNT) - 1)
_Static_assert(REPORT__COUNT < 32, "a format mask is an unsigned");

/* "text, json, csv, html, junit" */
#define REPORT_HELP_(id, name, file, fn, desc) name
#define REPORT_FORMATS_HELP REPORT_FORMATS(REPORT_HELP_, ", ")
#define REPORT_CSV_HEADER "host_thp,guest_thp,workload,target,metric,rep,value,host_prefault,variant"

struct gate_result;

struct report_input {
	const struct results *res;
	/* optional: a baseline and the comparison of res against it (compare gates) */
	const struct results *base;
	const struct comparison *cmp;
	const char *base_name;		/* where the baseline came from, for the reader */
	const struct gate_result *gate;	/* optional: the history gate's verdicts (analysis/gate.h) */
};

/* each from REPORT_FORMATS; "?" for a value out of range */
const char *report_format_name(enum report_format f);
/* file name under --out: results.txt, results.json, results.csv, report.html, junit.xml */
const char *report_format_file(enum report_format f);
const char *report_format_description(enum report_format f);
/* "text,html" -> bit mask; unknown or empty names are an error */
int report_formats_parse(const char *list, unsigned *mask, struct err *e);

int report_render(const struct report_input *in, enum report_format f, FILE *out, struct err *e);
/* each format in mask to dir/<file> atomically (dir is created, mode 0755) */
int report_write_dir(const struct report_input *in, unsigned mask, const char *dir, struct err *e);

#endif
