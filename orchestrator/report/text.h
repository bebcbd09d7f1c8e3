/*
 * text: the plain-text rendering of a run, as `thpeval run` prints it and
 * results.txt holds: the cell table, the host-cold evidence, the split and
 * its variance components, and the sizing summary. Writes only to the FILE*
 * it is given.
 */
#ifndef THPEVAL_ORCH_REPORT_TEXT_H
#define THPEVAL_ORCH_REPORT_TEXT_H

#include <stdio.h>

#include "orchestrator/analysis/effects.h"
#include "orchestrator/model/results.h"

void results_print_table(const struct results *r, FILE *out);
void effects_print(const struct effects *fx, FILE *out);

#endif
