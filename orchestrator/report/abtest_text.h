/*
 * abtest_text: the "emulator B vs A" section of results.txt and of what
 * `thpeval run` prints: each gated metric and split effect of arm B against
 * arm A with its ratio, 95% interval and Holm verdict. Writes only to the
 * FILE* it is given.
 */
#ifndef THPEVAL_ORCH_REPORT_ABTEST_TEXT_H
#define THPEVAL_ORCH_REPORT_ABTEST_TEXT_H

#include <stdio.h>

#include "orchestrator/model/results.h"

void abtest_print(const struct abtest *ab, FILE *out);

#endif
