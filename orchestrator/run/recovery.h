/*
 * recovery: the on-demand recovery arm (--host-state=collapse-madvise):
 * after each guest's series, the group's setting applied and guest RAM
 * collapsed while its coverage is sampled.
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
};

/*
 * One guest of a recovery group, its series done: the group's setting
 * applied (once), its guest RAM collapsed, the coverage series into a new
 * results.recovery entry (which keeps the error too).
 */
int recovery_run(struct recovery *rc, const struct run_io *io, struct guest_ctx *gc, struct results *res,
		 struct err *e);

#endif
