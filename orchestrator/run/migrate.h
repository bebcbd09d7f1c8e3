/*
 * migrate: the live-migration axis of a run (--migrate=precopy,postcopy;
 * "none" is the arm without). Each round's guests take one arm in turn.
 * After a guest's warm series the memset keep phase loops passes; after
 * MIGRATE_BEFORE_PASSES of them the guest is live-migrated to a second
 * libvirt daemon (virt/migrate.h) while the passes go on, its record
 * channel is re-attached on the destination, and the destination QEMU's
 * coverage of guest RAM is sampled every second until it settles. Never
 * prints but through run_note, never exits.
 */
#ifndef THPEVAL_ORCH_RUN_MIGRATE_H
#define THPEVAL_ORCH_RUN_MIGRATE_H

#include <stdbool.h>

#include "lib/err.h"
#include "orchestrator/run/config.h"
#include "orchestrator/run/run.h"
#include "orchestrator/virt/virt.h"

#define MIGRATE_BEFORE_PASSES 3		/* keep passes on the source before the migration starts */
#define MIGRATE_KEEP_S 90		/* the longest keep phase: the host's stop word ends it sooner */
#define MIGRATE_AFTER_PASSES 3		/* keep passes after the coverage settled, then the stop word */
#define MIGRATE_SETTLE_CAP_S 60		/* coverage sampled at most this long after the migration */

/* "precopy,postcopy[,none]" into c->migrate (the migrating arms, then "none", implied); 0 or -EINVAL */
int migrate_opt_parse(struct run_config *c, const char *arg, struct err *e);
/*
 * Before the first boot: the axis needs the memset workload and a guest
 * target; the keep phase goes into the workload options (keep, keep-rep:
 * the last round, keep-thp: the first guest THP setting), the guest's
 * timeout grows by it. 0 without the axis.
 */
int migrate_config_check(struct run_config *c, struct err *e);
struct guest_ctx;
struct record;
struct results;

/*
 * What the axis calls in the rest of the run layer, given by its callers
 * (loop.c, guests.c): the notes and the record callback. Passed in, not
 * called by name, so that this module stays out of the loop's call circle.
 */
struct migrate_cb {
	void (*note)(const struct run_io *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
	guest_record_fn on_record;
};

/*
 * At the run's start: a second daemon a killed run left is removed (always);
 * with a migrating arm, the second daemon is started (*io->migd), or the run
 * refused with the reason.
 */
int migrate_axis_start(const struct run_config *cfg, struct run_io *io, const struct migrate_cb *cb,
		       struct err *e);
/* at the run's end: the daemon stopped, the summary computed into res */
void migrate_axis_stop(struct run_io *io, struct results *res, const struct migrate_cb *cb);

/* one guest of round: its arm's state (gc->mig), none without the axis */
int migrate_guest_begin(struct guest_ctx *gc, unsigned round, const struct migrate_cb *cb, struct err *e);
/* an info record of the guest (the keep passes) */
void migrate_on_info(struct guest_ctx *gc, const struct record *rec);
/*
 * Before the guest is polled: starts the migration, switches to postcopy,
 * re-attaches the guest on the destination, samples coverage. *handled: this
 * call polled the guest itself (while its migration runs), the caller must
 * not. < 0: the guest failed (e).
 */
int migrate_tick(struct guest_ctx *gc, bool *handled, struct err *e);
/* the guest's series is over (or failed: status < 0): the coverage series finished, the log written */
void migrate_guest_end(struct guest_ctx *gc, int status);

#endif
