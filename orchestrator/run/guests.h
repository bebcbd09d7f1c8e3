/*
 * guests: the guest lifecycle of one host group: guests defined, booted,
 * polled to the end of their records and torn down; a lost libvirtd
 * connection reopened.
 */
#ifndef THPEVAL_ORCH_RUN_GUESTS_H
#define THPEVAL_ORCH_RUN_GUESTS_H

#include "orchestrator/run/internal.h"

bool guest_pins(const struct run_config *cfg, unsigned gi, unsigned n, int *pins);
struct recovery;
/* rc: a recovery group (collapse after each guest's series), else NULL */
int run_guests(const struct run_config *cfg, const struct run_io *io, struct virt *v, enum accel accel,
	const struct image *img, const struct srcdisk *sd, const struct host_group *hg, struct recovery *rc,
	unsigned *idx, unsigned round, struct results *res, struct err *e);
int reconnect_if_lost(const struct run_config *cfg, const struct run_io *io, struct virt **v, unsigned idx,
	struct err *e);

#endif
