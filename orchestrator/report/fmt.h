/*
 * fmt: the number, time and interval formatting that more than one format
 * shares; below formats.c's registry and the renderers, which all use it. Pure:
 * writes only to the buffer it is given, never prints, never exits.
 */
#ifndef THPEVAL_ORCH_REPORT_FMT_H
#define THPEVAL_ORCH_REPORT_FMT_H

#include <stddef.h>
#include <time.h>

#include "orchestrator/model/results.h"

/* shortest "%.Ng" (15..17 digits) that reads back as exactly v */
void fmt_double_exact(char *buf, size_t len, double v);
/* UTC "2024-01-02T03:04:05Z", "-" when t is unset */
void report_fmt_time(char *buf, size_t len, time_t t);
/* metric i of a cell with the coverage series appended: n = nmetrics + 2 */
const struct metric *report_metric_at(const struct cell *c, size_t i);
/* "mean ±half-width of the 95% CI", "n/a" without samples */
void report_summary_ci(char *buf, size_t len, const struct summary *s);
void report_mean_ci(char *buf, size_t len, const struct metric *m);

#endif
