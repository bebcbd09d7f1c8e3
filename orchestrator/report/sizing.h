/*
 * sizing: the host-sizing summary (analysis/sizing.c) rendered as text and
 * as an HTML section, for teams sizing hosts. Writes only to the FILE* it
 * is given; never exits.
 */
#ifndef THPEVAL_ORCH_REPORT_SIZING_H
#define THPEVAL_ORCH_REPORT_SIZING_H

#include <stdio.h>

#include "orchestrator/analysis/sizing.h"

void sizing_print(const struct results *r, FILE *out);
void sizing_html(const struct results *r, FILE *o);

#endif
