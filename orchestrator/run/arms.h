/*
 * arms: the host arms beyond a THP setting: the fragmented host and the
 * hugetlbfs reference arms.
 */
#ifndef THPEVAL_ORCH_RUN_ARMS_H
#define THPEVAL_ORCH_RUN_ARMS_H

#include "orchestrator/run/internal.h"

int fragment_host(const struct run_config *cfg, const struct run_io *io, struct host_session *hs,
	const struct host_plan *hp, const struct host_group *hg, unsigned round, struct frag *fr,
	struct frag_log *fl, struct err *e);
void frag_vmstat(struct frag_log *fl, const struct vmstat *vm0);
void frag_undo(const struct run_io *io, struct host_session *hs, struct frag *fr, struct frag_log *fl);
/* a hugetlbfs arm can run here: the host has the pool and libvirt a mount of that page size */
int hugetlb_arm_check(const struct run_config *cfg, uint64_t kb, struct err *e);
/* the journal key of the pool of that page size */
void pool_key(char *buf, size_t len, uint64_t kb);
int pool_reserve(struct host_session *hs, const struct run_config *cfg, uint64_t kb, char *orig, size_t len,
		 struct err *e);

#endif
