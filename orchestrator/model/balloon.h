/*
 * balloon: the model's record of the free page reporting arm (--balloon):
 * per guest and measured memset repetition, QEMU's resident memory and the
 * host huge-page coverage of guest RAM before the guest frees its buffer,
 * while the freed memory is left to the host, and after the guest touched a
 * fresh buffer; its results.json table. The re-fault time itself is a cell
 * metric (refault_ns_per_4k). Never prints, never touches /proc.
 */
#ifndef THPEVAL_ORCH_MODEL_BALLOON_H
#define THPEVAL_ORCH_MODEL_BALLOON_H

#include <stddef.h>

#include "lib/err.h"
#include "orchestrator/model/jtable.h"
#include "orchestrator/model/results.h"

#define BALLOON_SERIES_MAX 128		/* samples of one window (one each 250 ms) */

/* QEMU's VmRSS at t_s after the guest's free mark */
struct rss_point {
	double t_s;
	unsigned long long rss_kb;
};

struct balloon_log {
	char balloon[16];		/* the arm: "none", "reporting" */
	char host_thp[RES_NAME_MAX];
	char prefault[RES_NAME_MAX];
	char guest_thp[RES_NAME_MAX];
	char host_state[24];
	unsigned round, boot, rep;	/* boot: the guest's index in results.guests */
	unsigned long long freed_kb;	/* the buffer the guest freed */
	/* QEMU's VmRSS: at the free mark, the least while the buffer was left to the host, and
	 * once the guest touched a fresh buffer (its result) */
	unsigned long long rss_before_kb, rss_after_free_kb, rss_after_retouch_kb;
	double rss_drop_kb;		/* before - after free: below 0 when it grew */
	double drop_pct_of_freed;	/* that drop over the freed buffer, in % */
	double half_drop_s;		/* first sample with a drop of half the buffer; NAN: none */
	double window_s;		/* free mark to retouch mark, as the host saw them */
	/* huge pages (AnonHugePages, ShmemPmdMapped) over the guest-RAM mapping's size, % */
	double cov_before_pct, cov_after_free_pct, cov_after_retouch_pct;
	double refault_ns_per_4k;	/* the guest's re-touch, as its result gave it */
	size_t n;
	struct rss_point series[BALLOON_SERIES_MAX];
	char error[ERR_MSG_MAX];
};

/* a new entry at the end of r->balloons, NAN where not measured; NULL on ENOMEM */
struct balloon_log *results_balloon_add(struct results *r, struct err *e);

/* results.json "balloon": an array of balloon_log */
extern const struct jt_table balloon_log_jt;

#endif
