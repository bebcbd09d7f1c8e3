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

/* the run loop's side (run/internal.h has the types) */
struct guest_ctx;
struct record;
struct results;
struct virt;

void balloon_echo(const struct run_config *cfg, struct results *res);
/* before the host is touched: memset runs, and libvirt and each QEMU have free page reporting */
int balloon_check(const struct run_config *cfg, struct virt *v, const char *libvirt_version, struct err *e);
/* the guest's workload options: --workload-opts, plus memset's refault-wait with the axis */
const char *balloon_wlopts(const struct run_config *cfg, char *buf, size_t len);
/* a guest's info record (its free and retouch marks), its result, and a poll round */
int balloon_on_info(struct guest_ctx *gc, const struct record *rec);
void balloon_on_result(struct guest_ctx *gc, const struct record *rec);
void balloon_tick(struct guest_ctx *gc);

#endif
