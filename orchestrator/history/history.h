/*
 * history: the run history through histdb.h: one row per run (host,
 * identity, gate verdict, results.json) and one per cell x metric. Owns the
 * one schema both backends share and its migrations, the run key that makes
 * recording a run twice a no-op, and the import of results.json files.
 * Never prints except to the FILE* it is given; never exits.
 */
#ifndef THPEVAL_ORCH_HISTORY_H
#define THPEVAL_ORCH_HISTORY_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "lib/err.h"
#include "orchestrator/model/results.h"

#define HISTORY_DEFAULT_DB "/var/lib/thpeval/history.db"
#define HISTORY_SCHEMA_VERSION 3
#define HISTORY_BUSY_MS 5000		/* = HISTDB_RETRY_MS */
#define HISTORY_DEFAULT_LAST 10

/*
 * The schema, step by step: history_migrations[k] takes a database from
 * version k to k + 1, in each backend's dialect (the same text where they
 * agree). Append, never edit a shipped step. Applied in one transaction per
 * upgrade, each step recorded in the schema_version table.
 */
struct history_migration {
	unsigned version;		/* the version the step makes */
	const char *sqlite;
	const char *postgres;
};
extern const struct history_migration history_migrations[HISTORY_SCHEMA_VERSION];

/*
 * Which earlier run is a fair baseline. Both require the same host (name;
 * runs recorded before thpeval kept names match any), CPU model,
 * accelerator and settings (every run_settings field but the seed: the THP
 * lists, workloads, reps, sizes, ...) and status "complete", passing its gate
 * or not (a baseline that had to pass would ratchet: a fast night stays it).
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
	const char *host;	/* NULL: every host */
};

/*
 * Record a finished run. db: an SQLite path or a postgresql:// URI
 * (histdb_target_parse). Creates the database (SQLite: the file and missing
 * parent directories) or its tables when absent, and migrates an older
 * schema; -EBUSY when another process holds it locked past the busy timeout;
 * -EINVAL when it is not a thpeval history database; -ECONNREFUSED when the
 * server is down or refuses. Nothing is written unless the whole run is (one
 * transaction, retried on conflicts). A run already recorded (same run key)
 * is left as it is.
 */
int history_append(const char *db, const struct results *r, bool gate_passed, struct err *e);

/* more rows of a run, written inside its append transaction (run: its runs row id); not for a run recorded before */
struct histdb;
typedef int (*history_hook)(struct histdb *h, long long run, const struct results *r, const void *arg, struct err *e);
int history_append_hooked(const char *db, const struct results *r, bool gate_passed, history_hook hook,
			  const void *hook_arg, struct err *e);

/*
 * A run's identity across databases and imports: host name, CPU model,
 * kernel, start time, each part escaped so that two runs never share a key
 * (the key of an older thpeval where no part holds ';', '=' or '\\'; a run
 * an older thpeval recorded under its unescaped key is still found by its
 * parts). HISTORY_RUN_KEY_MAX holds any key whole.
 */
#define HISTORY_RUN_KEY_MAX 1024
void history_run_key(const struct results *r, char *buf, size_t len);

struct history_import_opts {
	const char *host;	/* record under this host name; NULL: each file's host.name */
	bool gate_passed;	/* what the runs' regression gate said (kept; the gate uses every complete run) */
	history_hook hook;	/* more rows of each new run (NULL: none); called with a NULL arg */
};

/*
 * Record the runs of results.json files: each path a file, or a directory
 * searched for files named results.json (sorted, so the order is stable).
 * One transaction per run; a run already recorded is skipped, so importing
 * again is safe. One line per run to out ("imported run N ..." or "already
 * recorded as run N ..."). Stops at the first file that cannot be read or
 * recorded (the ones before it stay recorded).
 */
int history_import(const char *db, char *const *paths, size_t npaths, const struct history_import_opts *o,
		   FILE *out, struct err *e);

/*
 * The newest complete run matching current (see enum history_match), loaded into out from its stored results.json. -ENOENT when there is
 * none (or no database yet). ref may be NULL.
 */
int history_baseline_last(const char *db, const struct results *current, enum history_match match,
			  struct history_run_ref *ref, struct results *out, struct err *e);

/*
 * The trend table (of q->host's runs, or every host's): per cell, the headline metrics (fault_ns_per_4k,
 * access_ns, host/guest huge %) of the last runs, oldest first. Rendered
 * in memory and written to out only when complete.
 */
int history_print_trend(const char *db, const struct history_query *q, FILE *out, struct err *e);

/* one recorded run as the fleet page reads it (its results.json text kept to recompute the split) */
struct history_run_row {
	long long id;
	time_t started;
	char cpu_model[128], kernel[128], status[32];
	bool gate_passed;
	char gate_verdict[16];	/* the history gate's verdict on it, "" when it was not gated so */
	char change_why[201];	/* "" unless marked as the first after a known change */
	char *results_json;	/* owned */
};

/* a host of the history: its name ('' for runs recorded before names), all its runs, the newest few */
struct history_host {
	char name[65];
	long long nruns;
	size_t n;
	struct history_run_row *runs;	/* newest first, at most the last asked for */
};

/*
 * Every host of the history (or those named, in that order, one with no run
 * included with nruns 0), sorted by name, each with its newest last runs.
 * An empty or new database gives no hosts (or the named ones, without
 * runs). Free with history_hosts_free().
 */
int history_hosts_load(const char *db, const char *const *names, size_t nnames, unsigned last,
		       struct history_host **out, size_t *nout, struct err *e);
void history_hosts_free(struct history_host *h, size_t n);

/* the settings part of the identity: every run_settings field but the seed */
void history_settings_key(const struct run_settings *s, char *buf, size_t len);

#endif
