/*
 * bare: the bare-host rows: the same workload binary run directly on the
 * host, each host setting applied anew every round.
 */
#ifndef THPEVAL_ORCH_RUN_BARE_H
#define THPEVAL_ORCH_RUN_BARE_H

#include "orchestrator/run/internal.h"

int run_host_target(const struct run_config *cfg, const struct run_io *io, struct host_session *hs,
	const struct host_plan *hp, const struct srcdisk *sd, const struct thp_setting *thp, unsigned round,
	struct results *res, struct err *e);

#endif
