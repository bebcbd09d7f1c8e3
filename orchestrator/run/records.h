/*
 * records: the guest's records as they arrive, each to its cell with the
 * host telemetry sampled beside it.
 */
#ifndef THPEVAL_ORCH_RUN_RECORDS_H
#define THPEVAL_ORCH_RUN_RECORDS_H

#include "orchestrator/run/internal.h"

bool is_label(const char *key);
int on_record(void *opaque, enum guest_event ev, const struct record *rec, const char *reason);
/* the boot's phases from a hello's boot_*_us times; needs create_to_first_record_s, boot_create_s */
void boot_phases(struct guest_log *l, const struct record *rec);

#endif
