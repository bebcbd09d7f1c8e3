/*
 * render: internal to report/ (no other module includes it): the prototypes
 * of the renderers the registry (REPORT_FORMATS) names, which formats.c
 * dispatches to, and the few helpers more than one format needs. A renderer
 * writes only to the FILE* it is given and reports a failure in e; it never
 * prints otherwise and never exits.
 */
#ifndef THPEVAL_ORCH_REPORT_RENDER_H
#define THPEVAL_ORCH_REPORT_RENDER_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "lib/err.h"
#include "orchestrator/model/results.h"
#include "orchestrator/report/report.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * each format's renderer, named in REPORT_FORMATS (report.h) and defined in
 * the format's own file: int report_<format>(in, out, e)
 */
#define REPORT_DECLARE_(id, name, file, fn, desc) int fn(const struct report_input *in, FILE *out, struct err *e);
REPORT_FORMATS(REPORT_DECLARE_, )

/* UTC "2024-01-02T03:04:05Z", "-" when t is unset */
void report_fmt_time(char *buf, size_t len, time_t t);
/* metric i of a cell with the coverage series appended: n = nmetrics + 2 */
const struct metric *report_metric_at(const struct cell *c, size_t i);
/* "mean ±half-width of the 95% CI", "n/a" without samples */
void report_summary_ci(char *buf, size_t len, const struct summary *s);
void report_mean_ci(char *buf, size_t len, const struct metric *m);

#endif
