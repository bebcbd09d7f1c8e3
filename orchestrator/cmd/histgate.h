/*
 * histgate: the history gate as 'thpeval run --baseline=history' and
 * 'thpeval compare --history' show it: the verdicts per metric kind against
 * the earlier runs of the host and setup, then, as diagnostics, the per-cell
 * A/B comparison with the newest of them (the whole answer while there is no
 * history yet, labelled so; it never fails the gate).
 */
#ifndef THPEVAL_ORCH_HISTGATE_H
#define THPEVAL_ORCH_HISTGATE_H

#include <stdio.h>

#include "lib/err.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/analysis/gate.h"
#include "orchestrator/model/results.h"

/* gate cur from db into g (released by the caller with gate_result_release), printing to out */
int histgate_run(const char *db, const struct results *cur, const struct gate_opts *go,
		 const struct compare_opts *co, struct gate_result *g, FILE *out, struct err *e);

#endif
