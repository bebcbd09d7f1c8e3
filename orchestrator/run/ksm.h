/*
 * ksm: the KSM arm (--ksm=off,on): its host groups in two arms, KSM's knobs
 * through the journal, the counters and each guest's host coverage sampled
 * every second while the guests run (results.ksm).
 */
#ifndef THPEVAL_ORCH_RUN_KSM_H
#define THPEVAL_ORCH_RUN_KSM_H

#include "orchestrator/run/internal.h"

/* refuse a host without KSM; the arms into the settings echo */
int ksm_prepare(const struct run_config *cfg, struct results *res, struct err *e);
/* each group in the arms --ksm asks for (off,on: the groups twice, the copies on); cap: the array's */
int ksm_groups(const struct run_config *cfg, struct host_session *hs, struct host_group *g, size_t *n, size_t cap,
	       struct err *e);
/* the host state of the group's cells and guests: "ksm" for the on arm */
const char *group_state_name(const struct host_group *hg);
/* KSM stopped (both arms) and the on arm's scan rate, through the journal */
int ksm_group_enter(struct host_session *hs, const struct run_config *cfg, const struct host_group *hg,
		    struct err *e);
/*
 * One group's KSM series (NULL without --ksm): begin before its guests boot,
 * tick in the poll loop (a sample a second; the on arm starts KSM once every
 * guest has a measured repetition), end before they are torn down (ok: all
 * finished; the on arm then waits a bounded time for merging if none yet).
 */
struct ksm_arm;
struct ksm_arm *ksm_arm_begin(const struct run_config *cfg, const struct run_io *io, const struct host_group *hg,
			      unsigned round, unsigned first_boot, struct results *res);
void ksm_arm_tick(struct ksm_arm *ka, const struct group_shared *grp);
void ksm_arm_end(struct ksm_arm *ka, const struct group_shared *grp, bool ok);

#endif
