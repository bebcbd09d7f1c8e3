/*
 * recovery: the recovery arms (--host-state=collapse-madvise and
 * collapse-khugepaged): after each guest's series, the group's setting
 * applied and guest RAM collapsed or left to khugepaged while its coverage
 * and the guest's access passes are sampled.
 */
#ifndef THPEVAL_ORCH_RUN_RECOVERY_H
#define THPEVAL_ORCH_RUN_RECOVERY_H

#include "orchestrator/run/internal.h"

/* what a recovery group needs after each guest's series */
struct recovery {
	struct host_session *hs;
	const struct host_plan *hp;
	const struct host_group *hg;	/* hg->thp: the setting applied after the series */
	unsigned round;
	bool applied;			/* that setting is in place */
	guest_record_fn on_record;	/* the loop's record handler, to drain a guest meanwhile */
};

/*
 * One guest of a recovery group, its series done and its access passes
 * started (or its end record in: a guest without them): the group's setting
 * applied (once), guest RAM collapsed (collapse-madvise) or khugepaged left
 * to it (collapse-khugepaged), the coverage series and the access passes
 * into a new results.recovery entry (which keeps the error too); then the
 * guest is told to stop its passes.
 */
int recovery_run(struct recovery *rc, const struct run_io *io, struct guest_ctx *gc, struct results *res,
		 struct err *e);
/* a group whose guests recover after their series: the collapse arms (khugepaged's: not on never) */
bool recovery_group(const struct host_group *hg);
/* the recovery arm's host checks before anything is touched: MADV_COLLAPSE, khugepaged, --khugepaged */
int recovery_check_host(const struct run_config *cfg, struct err *e);
/* the guest's access passes on its kernel command line */
void recovery_cmdline(const struct run_config *cfg, char *buf, size_t len);
/* the guest's passes have started and enough came in before the interval */
bool recovery_due(const struct guest_ctx *gc);
/* an info record of the guest's passes (event probe_start, probe, probe_end); 0, or 1 to stop */
int recovery_on_info(struct guest_ctx *gc, const struct record *rec);

#endif
