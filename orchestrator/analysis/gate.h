/*
 * gate: the history gate. A run is one point of a series per metric kind (a
 * workload's primary metric, its log mean over the kind's valid cells) and is
 * judged against the earlier runs of its host and setup, with the between-run
 * variance estimated from them (DerSimonian-Laird), one-sided against the
 * threshold, Holm over the kinds. doc/gate.md has the formulas. Pure: never
 * prints, never exits.
 */
#ifndef THPEVAL_ORCH_GATE_H
#define THPEVAL_ORCH_GATE_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/model/results.h"

#define GATE_DEFAULT_K 10	/* earlier runs a run is judged against */
#define GATE_MIN_K 5		/* fewer: no-history */
#define GATE_NEWEST 3		/* runs whose mean decides a regression, the current one included */
#define GATE_K_MAX 100
#define GATE_KIND_LEN 96
#define GATE_ALPHA 0.05
#define GATE_DEFAULT_THRESHOLD_PCT 5.0

/* one run's composite of one metric kind, as the history stores it */
struct gate_point {
	char kind[GATE_KIND_LEN];	/* "memset access_ns", "memset:cold fault_ns_per_4k", "... host=fragmented" */
	enum metric_dir dir;		/* DIR_LOWER or DIR_HIGHER */
	double mean_log;		/* mean over the kind's cells of each cell's mean of ln(value) */
	double se_log;			/* its standard error over boots (cells taken as independent) */
	unsigned boots;			/* distinct boots behind it */
	unsigned ncells;		/* valid cells it covers */
	char cells_key[17];		/* hash of those cells' labels: only runs with the same cells form a series */
};

struct gate_points {
	struct gate_point *v;
	size_t n;
};

/* every kind of r's valid cells with a composite (a cell needs 2 boots or 2 repetitions) */
int gate_points_compute(const struct results *r, struct gate_points *out, struct err *e);
void gate_points_release(struct gate_points *p);
/* the point of kind in p with the same cells, NULL when none */
const struct gate_point *gate_points_find(const struct gate_points *p, const char *kind, const char *cells_key);

enum gate_verdict { GATE_V_OK, GATE_V_SUSPECT, GATE_V_REGRESSION, GATE_V_NO_HISTORY, GATE_V__COUNT };
enum gate_fail_on { GATE_FAIL_ON_REGRESSION, GATE_FAIL_ON_SUSPECT };

const char *gate_verdict_name(enum gate_verdict v);
int gate_verdict_parse(const char *s, enum gate_verdict *v);
int gate_fail_on_parse(const char *s, enum gate_fail_on *f, struct err *e);

struct gate_opts {
	double threshold_pct;
	unsigned k;			/* GATE_MIN_K .. GATE_K_MAX */
	enum gate_fail_on fail_on;
	bool normal;			/* the normal instead of Student's t with K - 1 df (for the simulation) */
};

struct gate_kind {
	struct gate_point cur;
	size_t nhist;			/* earlier runs of this kind with the same cells */
	size_t nk, nk_reg;		/* runs the suspect and the regression test are against (0: none) */
	double tau;			/* between-run SD (log scale) of the suspect window */
	double change_pct, lo_pct, hi_pct;	/* this run against the window's mean, 95% prediction interval */
	double change3_pct;		/* the newest 3 runs' mean against the K runs before them */
	double p_suspect, p_regression;	/* one-sided, "worse beyond the threshold"; NAN untested */
	double holm_suspect, holm_regression;
	enum gate_verdict verdict;
};

struct gate_result {
	double threshold_pct;
	unsigned k;
	enum gate_fail_on fail_on;
	size_t n, cap;
	struct gate_kind *kinds;
	enum gate_verdict verdict;	/* the worst kind's: regression, suspect, ok, then no-history */
	size_t nok, nsuspect, nregression, nnohistory;
};

void gate_result_init(struct gate_result *g, const struct gate_opts *o);
void gate_result_release(struct gate_result *g);
/*
 * One kind: cur and its earlier runs' log means and standard errors, oldest
 * first (only the newest K + 2 are used). Tested at once; the verdict waits
 * for gate_finish.
 */
int gate_add_kind(struct gate_result *g, const struct gate_opts *o, const struct gate_point *cur,
		  const double *y, const double *se, size_t nhist, struct err *e);
/* Holm over the kinds (suspect and regression families apart), the verdicts and the counts */
void gate_finish(struct gate_result *g);
/*
 * DerSimonian-Laird over k estimates y with standard errors se: tau^2, the
 * random-effects mean mu and its variance, and Cochran's Q.
 */
struct re_pool {
	double tau2, mu, var_mu, q;
};
void gate_re_pool(const double *y, const double *se, size_t k, struct re_pool *out);

/* exit 1: a regression, or with --fail-on=suspect a suspect */
bool gate_failed(const struct gate_result *g);

#endif
