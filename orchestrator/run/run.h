/*
 * run: the experiment loop of `thpeval run`. For host THP 'never' and each
 * setting under evaluation: journal + apply the host setting, boot a fresh
 * guest, collect its records, sample the evidence, tear the guest down.
 * Results go to the caller's model and are written after every guest.
 * Host settings are restored on every path out of run_experiment().
 * Never exits; the stop flag (set by signal handlers) ends it early.
 */
#ifndef THPEVAL_ORCH_RUN_H
#define THPEVAL_ORCH_RUN_H

#include <signal.h>

#include "lib/err.h"
#include "orchestrator/run/config.h"
#include "orchestrator/model/results.h"

struct progress;
struct migd;

struct run_io {
	volatile sig_atomic_t *stop;	/* set by SIGINT/SIGTERM */
	FILE *progress;			/* NULL = quiet */
	struct progress *bar;		/* cells done/total, elapsed, ETA; may be NULL */
	struct migd *migd;		/* the migration arms' second daemon (run/migrate.h); NULL */
};

/* returns 0, or a negative errno with e set; -EINTR when stopped by a signal */
int run_experiment(const struct run_config *cfg, const struct run_io *io, struct results *res,
		   char *json_path, size_t json_len, struct err *e);

#endif
