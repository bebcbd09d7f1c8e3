/*
 * telemetry: host-side telemetry of a run: the coverage of guest RAM, the
 * per-size mTHP counters and the per-repetition host counters beside each
 * record.
 */
#ifndef THPEVAL_ORCH_RUN_TELEMETRY_H
#define THPEVAL_ORCH_RUN_TELEMETRY_H

#include "orchestrator/run/internal.h"

void mthp_read(const char *root, unsigned kb, struct mthp_snap *m);
void sample_host_coverage(struct guest_ctx *gc, struct cell *c);
void host_snap_take(struct guest_ctx *gc, struct host_snap *s);
void host_telemetry(struct guest_ctx *gc, struct cell *c, bool keep);
void telemetry_notes(struct results *res, enum accel accel, bool guests);

#endif
