/*
 * html: internal to the HTML format (html.c: the page, its sections and
 * tables; below it html_chart.c, the inline SVG charts and the headline
 * metrics and number cell both use, and html_effects.c, the effects section).
 * Every piece of data goes through html_esc() (htmlesc.h); nothing here
 * fetches from the network or writes anywhere but the FILE* it is given.
 */
#ifndef THPEVAL_ORCH_REPORT_HTML_H
#define THPEVAL_ORCH_REPORT_HTML_H

#include <stdio.h>

#include "orchestrator/report/htmlesc.h"
#include "orchestrator/report/render.h"

/* headline metrics: charted in HTML, first columns of tables */
struct html_metric {
	const char *metric, *title, *unit;
};
#define HTML_NMAIN_METRICS 2
extern const struct html_metric html_main_metrics[HTML_NMAIN_METRICS];

/* the charts' geometry: width, label column, right margin, row, top and axis heights */
#define CH_W 1000
#define CH_LABEL 250
#define CH_RIGHT 200
#define CH_ROW 30
#define CH_TOP 8
#define CH_AXIS 30

/* the page's inline style sheet (the report's and the fleet page's) */
extern const char html_css[];
/* a round axis step (1, 2, 2.5 or 5 x 10^k) at least range */
double html_nice_step(double range);
struct effect;
/* "+12.3% [+4.0, +20.1]", "(no measurable effect)" when not significant, "not available" */
void html_fmt_effect(char *buf, size_t len, const struct effect *e);

/* <td class="num">s</td> */
void html_td_num(FILE *o, const char *s);

/* sections drawn in html_chart.c */
void html_charts(const struct report_input *in, FILE *o);
void html_coverage(const struct report_input *in, FILE *o);
void html_effects(const struct report_input *in, FILE *o);
/* the recovery arms: coverage and access time over time */
void html_recovery(const struct report_input *in, FILE *o);
/* the KSM arm's series (results.ksm) */
void html_ksm(const struct report_input *in, FILE *o);
/* the free page reporting arm's windows: QEMU's RSS over each (results.balloon) */
void html_balloon_charts(const struct report_input *in, FILE *o);

#endif
