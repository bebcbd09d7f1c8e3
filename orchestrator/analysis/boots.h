/*
 * boots: a metric's samples grouped by the guest boot they came from, on
 * the log scale: the boot is the unit of replication of a host-side effect
 * and the block of a guest-side one. Also a cell's variance components
 * (between and within boots). Pure: never prints, never writes the model.
 */
#ifndef THPEVAL_ORCH_ANALYSIS_BOOTS_H
#define THPEVAL_ORCH_ANALYSIS_BOOTS_H

#include <stddef.h>

#include "orchestrator/model/results.h"

#define BOOTS_MAX 128

struct boot_mean {
	unsigned boot;		/* the id the samples carry (metric.boot[]) */
	size_t n;		/* samples in this boot */
	double mean_log;	/* mean of ln(sample) */
	double var_log;		/* sample variance of ln(sample); NAN when n < 2 */
};

/*
 * The samples of m per boot, in the order the boots first appear. -EDOM when a
 * sample is not > 0 (no log), -E2BIG past max boots.
 */
int boots_group(const struct metric *m, struct boot_mean *out, size_t max, size_t *n);
const struct boot_mean *boots_find(const struct boot_mean *b, size_t n, unsigned boot);

/*
 * One-way random-effects decomposition of ln(samples) by boot: the pooled
 * within-boot variance and the between-boot variance (variance of the boot
 * means less the part the within-boot noise explains, never below 0), each
 * given as a coefficient of variation of the raw values (sqrt(exp(s^2) - 1)).
 * within is NAN without a boot of 2 samples; between is NAN with fewer than 2
 * boots.
 * (struct varcomp: model/results.h)
 */
int varcomp_compute(const struct metric *m, struct varcomp *vc);

#endif
