/*
 * balloon: the free page reporting axis of a run (--balloon=none,reporting).
 * The reporting arm gives its guests a virtio balloon with free page
 * reporting; every guest of a run with the axis runs memset's re-fault step
 * (free, a wait of BALLOON_WAIT_MS, a timed re-touch), and the host watches
 * QEMU's resident memory and guest RAM's huge-page coverage around it
 * (results.balloon). Never prints, never exits.
 */
#ifndef THPEVAL_ORCH_RUN_BALLOON_H
#define THPEVAL_ORCH_RUN_BALLOON_H

#include <stdbool.h>

#include "lib/err.h"
#include "orchestrator/run/config.h"

/*
 * How long the guest leaves its freed buffer to the host: free page
 * reporting waits 2 s after a free, then reports a share of each free list
 * per pass (all of it on an idle guest within some passes); the step's
 * refault-wait (--workload-opts=memset:refault-wait=MS) overrides it
 */
#define BALLOON_WAIT_MS 10000

/* "none", "reporting" or both, in order, duplicates dropped */
int balloon_parse(struct run_config *c, const char *arg, struct err *e);
/* a run with the axis (a reporting arm, or a list): the re-fault step runs */
bool balloon_planned(const struct run_config *c);

#endif
