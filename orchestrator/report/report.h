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

enum report_format {
	REPORT_TEXT,		/* results.txt: the terminal table */
	REPORT_JSON,		/* results.json */
	REPORT_CSV,		/* results.csv: one row per sample */
	REPORT_HTML,		/* report.html */
	REPORT_JUNIT,		/* junit.xml: one testcase per cell x metric gate */
	REPORT__COUNT
};

#define REPORT_BIT(f) (1u << (f))
#define REPORT_ALL ((1u << REPORT__COUNT) - 1)
#define REPORT_FORMATS_HELP "text, json, csv, html, junit"
#define REPORT_CSV_HEADER "host_thp,guest_thp,workload,target,metric,rep,value,host_prefault,variant"

struct report_input {
	const struct results *res;
	/* optional: a baseline and the comparison of res against it (compare gates) */
	const struct results *base;
	const struct comparison *cmp;
	const char *base_name;		/* where the baseline came from, for the reader */
};

const char *report_format_name(enum report_format f);
/* file name under --out: results.txt, results.json, results.csv, report.html, junit.xml */
const char *report_format_file(enum report_format f);
/* "text,html" -> bit mask; unknown or empty names are an error */
int report_formats_parse(const char *list, unsigned *mask, struct err *e);

int report_render(const struct report_input *in, enum report_format f, FILE *out, struct err *e);
/* each format in mask to dir/<file> atomically (dir is created, mode 0755) */
int report_write_dir(const struct report_input *in, unsigned mask, const char *dir, struct err *e);

/* shortest "%.Ng" (15..17 digits) that reads back as exactly v */
void fmt_double_exact(char *buf, size_t len, double v);

#endif
