/*
 * htmlesc: the one HTML escaper of every HTML renderer (html.c, html_chart.c,
 * sizing.c): data goes through html_esc(), never straight to the page.
 * Writes only to the FILE* it is given.
 */
#ifndef THPEVAL_ORCH_REPORT_HTMLESC_H
#define THPEVAL_ORCH_REPORT_HTMLESC_H

#include <stdio.h>

/* & < > " ' escaped; control characters other than \n and \t replaced */
void html_esc(FILE *o, const char *s);
__attribute__((format(printf, 2, 3)))
void html_escf(FILE *o, const char *fmt, ...);

#endif
