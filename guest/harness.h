/*
 * harness: what every workload shares. It parses `--name=value` arguments
 * against the workload tables into the common parameters and the workload's
 * own options, runs the machine checks, owns the timing (CLOCK_MONOTONIC,
 * getrusage, the TSC) and writes the output records (one result, or one per
 * variant through harness_emit(), or a skip/fail with a reason). Workloads
 * only measure. Never calls exit().
 */
#ifndef THPEVAL_GUEST_HARNESS_H
#define THPEVAL_GUEST_HARNESS_H

#include <stdint.h>

#include "lib/err.h"
#include "lib/record.h"
#include "workload.h"

/* exit codes of `thpeval-guest workload ...` */
enum harness_exit {
	HARNESS_OK = 0,		/* result record written */
	HARNESS_FAILED = 1,	/* the run failed: fail record written */
	HARNESS_USAGE = 2,	/* bad parameters: fail record written */
	HARNESS_SKIPPED = 3,	/* cannot run here: skip record written */
};

/* How harness_cycles() reads the time-stamp counter; never with cpuid (it traps in a VM). */
enum harness_tsc {
	HARNESS_TSC_NONE,	/* not x86: no cycle counts */
	HARNESS_TSC_RDTSC,	/* lfence; rdtsc; lfence (CPUs without rdtscp, e.g. QEMU's qemu64) */
	HARNESS_TSC_RDTSCP,	/* rdtscp; lfence */
	HARNESS_TSC__COUNT
};

struct harness_usage {
	uint64_t minflt, majflt;
	uint64_t user_us, sys_us;
};

uint64_t harness_now_ns(void);	/* CLOCK_MONOTONIC */
int64_t harness_now_ms(void);
void harness_sleep_ms(unsigned ms);
void harness_usage_now(struct harness_usage *u);

/* Median of v[0..n) (n > 0; sorts v). */
double harness_median(double *v, size_t n);
/* Coefficient of variation of v[0..n) in percent (0 for n < 2 or a zero mean). */
double harness_cv_pct(const double *v, size_t n);

/* The TSC reader for this CPU, from the flags in <root>/proc/cpuinfo. */
enum harness_tsc harness_tsc_probe(const char *root);
const char *harness_tsc_name(enum harness_tsc t);

/*
 * Time-stamp counter ticks (TSC "reference cycles", constant rate). rdtscp
 * waits for the loads before it; the lfence keeps later loads from starting
 * before the read. 0 with HARNESS_TSC_NONE.
 */
static inline uint64_t harness_cycles(enum harness_tsc t)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi, aux;

	if (t == HARNESS_TSC_RDTSCP) {
		__asm__ volatile("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
		return (uint64_t)hi << 32 | lo;
	}
	if (t == HARNESS_TSC_RDTSC) {
		__asm__ volatile("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
		return (uint64_t)hi << 32 | lo;
	}
#endif
	(void)t;
	return 0;
}

/*
 * For workloads that send several records (one per variant): r becomes a
 * record of type t holding the fields every record of this run carries
 * (workload, rep, seed, THP knobs, labels).
 */
void harness_record_init(const struct wl_env *env, enum rec_type t, struct record *r);
/* Send r (a result, skip or info record) now; -ENOTCONN outside a harness run. */
int harness_emit(const struct wl_env *env, struct record *r, struct err *e);

/*
 * For a workload that keeps what it mapped after its result (memset --hold=1):
 * once the result record is out, the harness closes the output (the runner
 * sees end of file) and keeps this process until it is killed.
 */
void harness_hold_after_result(const struct wl_env *env);

/*
 * Zero c and opts (w->opts_size bytes, the workload's options), set the
 * defaults, then argv[0..argc) ("--name=value", "--label=key=value"): w's own
 * parameters into opts, the common ones and the labels into c.
 */
int harness_parse_args(const struct workload *w, int argc, char *const argv[],
		       struct wl_common *c, void *opts, struct err *e);

/*
 * Run w, the workload argv[0] names (NULL: it names none, a fail record),
 * with argv[1..argc) as its parameters; the records go to out_fd, seq from 0.
 * Returns an enum harness_exit, e holds why when it is not HARNESS_OK.
 */
int harness_run(const struct workload *w, int argc, char *const argv[], const struct wl_env *env,
		int out_fd, struct err *e);

#endif
