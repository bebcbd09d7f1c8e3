/*
 * compare: the regression gate between two runs. A matched cell's metrics
 * get a direction and their change as a ratio of geometric means with a
 * 95% interval; each workload's primary metrics are tested one-sided
 * against the threshold with Holm's correction: regression, ok or
 * inconclusive. Pure: prints only in compare_print(); never exits.
 */
#ifndef THPEVAL_ORCH_COMPARE_H
#define THPEVAL_ORCH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lib/err.h"
#include "orchestrator/model/results.h"
#include "lib/stats.h"

/*
 * The regression gate between two runs. Cells match by key (target,
 * host_thp, prefault, guest_thp, workload, variant). Every metric of a matched
 * cell gets a direction (table below) and its change as a ratio of geometric
 * means with a 95% interval on the log scale: over boots where both runs have
 * two or more (a run's boots differ more than the repetitions inside one),
 * else over repetitions (labelled). Only each workload's primary metrics gate
 * by default (gate all: every metric with a direction). Each gated metric is
 * tested one-sided against "worse by no more than the threshold", with Holm's
 * correction across everything gated in the comparison (family-wise error at
 * 5%): rejected = regression. Confirmed within the threshold = ok; neither =
 * inconclusive (counted, never silently ok). A gated metric with a negative
 * sample, or a primary time of 0, in either run cannot be tested and fails the
 * gate. A cell invalid in the baseline is untested ("baseline invalid",
 * counted); one invalid in the current run is judged on its interval, and
 * without one (one repetition) by the ratio of the means: an identical run
 * never fails. Pure: never prints except compare_print() to the FILE* it
 * is given; never exits.
 */

#define COMPARE_DEFAULT_THRESHOLD_PCT 5.0
#define COMPARE_ALPHA 0.05
#define CELL_LABEL_MAX 160

/*
 * Direction of a metric, first match wins:
 *   exact names   fault_minflt, fault_majflt: lower is better;
 *                 vma_bytes, rss_bytes, anon_huge_bytes: info (never gated);
 *                 metric_higher, metric_lower (exec's number): as named
 *   suffixes      _mib_s _gib_s _per_s: higher is better
 *   coverage      *_huge_pct (host_huge_pct, guest_huge_pct): higher is better
 *                 where that side's THP is on, lower where it is "never"
 *   contains      _ns_per_ _us_per_ _cycles_per_ (fault_ns_per_4k): lower is better
 *   suffixes      _ns _us _ms _cycles _s: lower is better
 *   default       info: shown, never a regression (add a rule to gate it)
 */
enum metric_dir { DIR_LOWER, DIR_HIGHER, DIR_INFO, DIR__COUNT };

enum cmp_verdict {
	CMP_OK,			/* the interval shows the change within the threshold */
	CMP_BETTER,		/* the interval shows it better beyond the threshold */
	CMP_REGRESSION,		/* worse beyond the threshold, Holm-corrected one-sided p < 0.05 */
	CMP_INCONCLUSIVE,	/* the interval can neither exclude nor confirm the threshold */
	CMP_UNTESTED,		/* fewer than 2 samples (or a value <= 0) on a side: no test; fails when
				 * a sample is negative, or a primary time is 0 (a damaged run) */
	CMP_INFO,		/* not gated: no direction, or not a primary metric */
	CMP_INVALID,		/* invalid in the current run with no interval: fails */
	CMP_NEW,		/* metric or cell only in the current run */
	CMP_GONE,		/* metric or cell only in the baseline */
	CMP__COUNT
};

/* which metrics gate: each workload's primary ones, or every metric with a direction */
enum cmp_gate { GATE_PRIMARY, GATE_ALL };

struct compare_opts {
	double threshold_pct;
	enum cmp_gate gate;
};

struct cmp_row {
	size_t cell;			/* index into current->cells; SIZE_MAX for CMP_GONE cells */
	char label[CELL_LABEL_MAX];	/* cell label */
	char metric[REC_KEY_MAX];	/* "" for a whole-cell row (CMP_NEW / CMP_GONE) */
	enum metric_dir dir;
	struct summary base, cur;
	bool gated;			/* in the Holm family of this comparison */
	bool fails;			/* makes the comparison fail (regression, invalid and worse) */
	char unit[8];			/* the samples of the interval: "boots" or "reps" */
	double change_pct;		/* current / baseline geometric means - 1, in %; NAN when undefined */
	double change_lo_pct, change_hi_pct;	/* its 95% interval */
	double p;			/* one-sided p of "worse beyond the threshold"; NAN when not tested */
	double p_holm;			/* Holm-adjusted over the gated rows */
	enum cmp_verdict verdict;
	char why[256];			/* the reason, for verdicts that need one */
};

struct comparison {
	double threshold_pct;
	enum cmp_gate gate;
	size_t nrows, cap;
	struct cmp_row *rows;
	size_t ncells_matched;
	size_t ngated, nregressions, ninconclusive, nuntested, ninvalid, nfailed;
	size_t nbase_invalid;		/* cells invalid in the baseline: untested, counted */
};

const char *metric_dir_name(enum metric_dir d);
const char *cmp_verdict_name(enum cmp_verdict v);
enum metric_dir metric_direction(const char *metric, const struct cell *c);

/* "always/never/memset", plus ":variant", " prefault=immediate", " [host]" where set */
void cell_label(const struct cell *c, char *buf, size_t len);
void cell_key_label(const char *target, const char *host_thp, const char *prefault,
		    const char *guest_thp, const char *workload, const char *variant, char *buf, size_t len);
bool cell_same_key(const struct cell *a, const struct cell *b);

/* two-sided p-value of Student's t with df (> 0) degrees of freedom */
double student_t_p2(double t, double df);

/* whether a workload's metric is one of its primary (gated by default) metrics */
bool metric_is_primary(const char *workload, const char *metric);
/* "primary" or "all" */
int cmp_gate_parse(const char *s, enum cmp_gate *g, struct err *e);

/* -EINVAL when no cell of current is in baseline (nothing to gate) */
int compare_results(const struct results *base, const struct results *cur, const struct compare_opts *o,
		    struct comparison *out, struct err *e);
/* the gate's outcome: a regression, or a gated cell invalid now and worse */
bool comparison_failed(const struct comparison *c);
void comparison_release(struct comparison *c);
/* the row for (current cell index, metric), NULL if none */
const struct cmp_row *comparison_find(const struct comparison *c, size_t cell, const char *metric);
/* what differs between the runs (kernel, QEMU, ...), the table, the verdict line */
void compare_print(const struct comparison *c, const struct results *base,
		   const struct results *cur, FILE *out);
/* s padded to width columns (UTF-8 code points, not bytes: "±" is one column) */
void fput_padded(FILE *out, const char *s, int width, bool right);
/* "%.4g"-like for tables: no exponent below 1e9, "n/a" for NAN */
void fmt_value(char *buf, size_t len, double v);

#endif
