/*
 * abrow: one row of an on-against-off comparison, shared by the A/B
 * emulator axis (abtest.c) and KSM on against off (ksmfx.c). Pure.
 */
#ifndef THPEVAL_ORCH_ANALYSIS_ABROW_H
#define THPEVAL_ORCH_ANALYSIS_ABROW_H

#include <stddef.h>

#include "orchestrator/model/results.h"

/* a row of family what ("kind", "metric", "effect") with every figure NAN */
void ab_row_init(struct ab_row *row, const char *what);
/* its interval and two-sided p from a log difference d with its SE and df ("no interval" else) */
void ab_row_finish(struct ab_row *row, double d, double se, double df);
/* Holm over the tested rows of family what: p_holm and differs; their count in *tested, the differing returned */
size_t ab_holm(struct abtest *out, const char *what, size_t *tested);

#endif
