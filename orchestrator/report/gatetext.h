/*
 * gatetext: the history gate's verdicts as text: one line per metric kind
 * (earlier runs, between-run SD, this run's change with its 95% prediction
 * interval, the newest 3 runs' change, Holm-adjusted p, verdict), then the
 * summary line. Writes only to the FILE* it is given.
 */
#ifndef THPEVAL_ORCH_GATETEXT_H
#define THPEVAL_ORCH_GATETEXT_H

#include <stdio.h>

#include "orchestrator/analysis/gate.h"
#include "orchestrator/history/gatedb.h"

/* where: what the runs were read from ("'DB', host NAME") */
void gate_print(const struct gate_result *g, const char *where, FILE *out);
/* "4 kind(s): 3 ok, 1 suspect, 0 regression(s), 0 no-history: pass" */
void gate_summary(const struct gate_result *g, char *buf, size_t len);

/*
 * thpeval history --changes: per host and metric kind the change points of
 * its series (analysis/changes.h) with the kernel, QEMU and libvirt on both
 * sides, and the runs marked as the first after a known change.
 */
void changes_print(const struct gate_series *s, size_t n, FILE *out);

/* thpeval history --effects: each pooled split effect beside the newest run's */
void effects_pooled_print(const struct pooled_effect *p, size_t n, FILE *out);

#endif
