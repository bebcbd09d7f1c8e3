/*
 * migration: the migration arms' summary, a pure function of the model: per
 * host setting, arm, metric (access_ns, write_ns_per_4k) and phase (before,
 * right_after, settled) the mean of the boots' means with its 95% interval
 * (Student's t over boots), and the effect against the none arm (the
 * difference of the means over none's mean, Welch's interval of the
 * difference over the same mean). Prints nothing.
 */
#ifndef THPEVAL_ORCH_ANALYSIS_MIGRATION_H
#define THPEVAL_ORCH_ANALYSIS_MIGRATION_H

#include "lib/err.h"
#include "orchestrator/model/results.h"

/* replace r->migsum with the summary of r->migrations */
int migration_summarize(struct results *r, struct err *e);

#endif
