/*
 * history: the run history in SQLite (sqlite3 C API, prepared statements only):
 * one row per run (its identity, whether it passed its gate, its results.json
 * text) and one per cell x metric (n, mean, sd, 95% CI). Owns the schema
 * (PRAGMA user_version, migrations), file modes (db 0600, new dirs 0700) and
 * lock handling (busy timeout). Never prints except to the FILE* it is given;
 * never exits.
 */
#ifndef THPEVAL_ORCH_HISTORY_H
#define THPEVAL_ORCH_HISTORY_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "lib/err.h"
#include "orchestrator/model/results.h"

#define HISTORY_DEFAULT_DB "/var/lib/thpeval/history.db"
#define HISTORY_SCHEMA_VERSION 1
#define HISTORY_BUSY_MS 5000
#define HISTORY_DEFAULT_LAST 10

/*
 * Which earlier run is a fair baseline. Both require the same CPU model,
 * accelerator and settings (every run_settings field but the seed: the THP
 * lists, workloads, reps, sizes, ...), status "complete" and a passed gate.
 *   SAME_SETUP  the software may differ (host kernel, QEMU, libvirt, thpeval,
 *               guest image): the nightly gate that catches regressions from
 *               updates. compare_print() shows what changed.
 *   SAME_STACK  all of those equal too: only drift on an unchanged stack.
 */
enum history_match { HISTORY_SAME_SETUP, HISTORY_SAME_STACK };

struct history_run_ref {
	long long id;
	time_t started;
	char desc[512];		/* "run 12 of 'db' (started ..., kernel ..., thpeval ...)" */
};

struct history_query {
	const char *workload;	/* NULL: all */
	unsigned last;		/* runs, newest first; 0: HISTORY_DEFAULT_LAST */
};

/*
 * Record a finished run. Creates the database (and missing parent
 * directories) when absent; -EBUSY when another process holds it locked past
 * the busy timeout; -EINVAL when the file is not a thpeval history database.
 * Nothing is written unless the whole run is (one transaction).
 */
int history_append(const char *db, const struct results *r, bool gate_passed, struct err *e);

/*
 * The newest run matching current (see enum history_match) that passed its
 * gate, loaded into out from its stored results.json. -ENOENT when there is
 * none (or no database yet). ref may be NULL.
 */
int history_baseline_last(const char *db, const struct results *current, enum history_match match,
			  struct history_run_ref *ref, struct results *out, struct err *e);

/*
 * The trend table: per cell, the headline metrics (fault_ns_per_4k,
 * access_ns, host/guest huge %) of the last runs, oldest first. Rendered
 * in memory and written to out only when complete.
 */
int history_print_trend(const char *db, const struct history_query *q, FILE *out, struct err *e);

/* the settings part of the identity: every run_settings field but the seed */
void history_settings_key(const struct run_settings *s, char *buf, size_t len);

#endif
