/*
 * results_json_logs: the per-boot logs in results.json as field tables: a
 * guest's boot ("guests"), the fragmented-host arm ("fragmentation"), the
 * recovery arm ("recovery") and the migration arms ("migration", with their
 * summary over boots, "migration_summary"). A part of results_json; never
 * prints, never exits.
 */
#ifndef THPEVAL_ORCH_RESULTS_JSON_LOGS_H
#define THPEVAL_ORCH_RESULTS_JSON_LOGS_H

#include <json-c/json.h>

#include "orchestrator/model/jtable.h"

/* an element of "guests", "fragmentation" and "recovery": loaded ones are added to the results */
extern const struct jt_table guest_jt;
extern const struct jt_table frag_jt;
extern const struct jt_table collapse_jt;
extern const struct jt_table ksm_jt;
/* an element of "migration" and "migration_summary" (--migrate), the same */
extern const struct jt_table migration_jt;
extern const struct jt_table migsum_jt;

#endif
