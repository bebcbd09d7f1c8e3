/*
 * gatedb: the history gate's storage. Each recorded run keeps one row per
 * metric kind (analysis/gate.h's point: log mean, standard error over boots,
 * boots, cells) and the verdict it got; gating a run reads the points of the
 * earlier complete runs of its host and setup, passing or not. Never prints,
 * never exits.
 */
#ifndef THPEVAL_ORCH_GATEDB_H
#define THPEVAL_ORCH_GATEDB_H

#include <time.h>

#include "lib/err.h"
#include "orchestrator/analysis/gate.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/history/history.h"
#include "orchestrator/model/results.h"

/*
 * A history_hook (history.h): inside the append transaction of run (the runs
 * row id), r's points, each with its kind's verdict from arg (a const struct
 * gate_result *; NULL: not gated, verdicts NULL), and the run's verdict.
 */
int gatedb_insert(struct histdb *h, long long run, const struct results *r, const void *arg, struct err *e);
/* history_append with the run's points and the verdicts of g (NULL: not gated) */
int history_append_gated(const char *db, const struct results *r, bool gate_passed, const struct gate_result *g,
			 struct err *e);

/*
 * Gate cur against the earlier complete runs of the same host (host, or
 * cur's host.name when NULL), CPU model, accelerator and settings in db,
 * passing their gates or not: the newest o->k + 2 of them. A run recorded
 * before the points were kept is read from its stored results.json. A
 * database with no run yet gives every kind no-history. out is initialised
 * here; newest (may be NULL) names the newest such run (id 0: none).
 */
int history_gate(const char *db, const struct results *cur, const char *host, const struct gate_opts *o,
		 struct gate_result *out, struct history_run_ref *newest, struct err *e);

/*
 * Mark run (its id in the history) as the first after a known change of the
 * host (kernel, QEMU, BIOS): the gate then reads the runs of its key from it
 * on. why is kept with it; marking again replaces it. -ENOENT: no such run.
 */
int history_mark_change(const char *db, long long run, const char *why, struct err *e);

/* one run of a series: when, on what software, its point of the kind, its mark */
struct series_run {
	long long id;
	time_t started;
	char kernel[64], qemu[32], libvirt[32];
	double y;
	char why[201];			/* "" unless marked as the first after a known change */
};

/* one metric kind's series of one host and setup, oldest first */
struct gate_series {
	char host[65];
	char kind[GATE_KIND_LEN];
	size_t n;
	struct series_run *runs;
};

/*
 * Every series of the history (or of host's runs): per host, CPU,
 * accelerator and settings, per metric kind, the complete runs that have a
 * point of it with the newest run's cells. Free with gate_series_free.
 */
int history_series_load(const char *db, const char *host, struct gate_series **out, size_t *nout, struct err *e);
void gate_series_free(struct gate_series *s, size_t n);

/* one split effect pooled over a segment's runs, beside the newest run's own */
struct pooled_effect {
	char host[65];
	char label[320];		/* workload, side, component, metric, levels, host state */
	size_t k;			/* runs pooled */
	long long from_run, to_run;	/* the segment: from the newest mark (or the first run) */
	double est_pct, lo_pct, hi_pct;	/* pooled (random effects), 95% CI with t(k-1) */
	double tau_pct, i2_pct;		/* between-run SD (as % of time) and I^2 */
	double new_pct, new_lo_pct, new_hi_pct;	/* the newest run's estimate and its interval */
};

/*
 * Each split effect of each host and setup (of host's runs, or every host's)
 * pooled over the complete runs from the newest --mark-change on: random
 * effects (DerSimonian-Laird) over the runs' own estimates and standard
 * errors. Effects available in fewer than 2 runs are left out. Free *out.
 */
int history_effects_pool(const char *db, const char *host, struct pooled_effect **out, size_t *nout,
			 struct err *e);

#endif
