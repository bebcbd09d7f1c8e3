/*
 * harness: what every workload shares. It parses `--name=value` arguments
 * against the workload tables, runs the machine checks, owns the timing
 * (CLOCK_MONOTONIC, getrusage) and writes the output records (one result, or
 * one skip/fail with a reason). Workloads only measure. Never calls exit().
 */
#ifndef THPEVAL_GUEST_HARNESS_H
#define THPEVAL_GUEST_HARNESS_H

#include <stdint.h>
#include <stdio.h>

#include "lib/err.h"
#include "lib/record.h"
#include "workload.h"

/* exit codes of `thpeval-guest workload ...` */
enum harness_exit {
	HARNESS_OK = 0,		/* result record written */
	HARNESS_FAILED = 1,	/* the run failed: fail record written */
	HARNESS_USAGE = 2,	/* bad parameters: fail record written */
};

struct harness_usage {
	uint64_t minflt, majflt;
	uint64_t user_us, sys_us;
};

uint64_t harness_now_ns(void);	/* CLOCK_MONOTONIC */
int64_t harness_now_ms(void);
void harness_sleep_ms(unsigned ms);
void harness_usage_now(struct harness_usage *u);

/* Defaults, then argv[0..argc) ("--name=value", "--label=key=value"). */
int harness_parse_args(const struct workload *w, int argc, char *const argv[],
		       struct wl_args *a, struct err *e);

/*
 * `workload NAME [--name=value ...]`: argv[0] is NAME. Runs one repetition
 * and writes its records to out_fd, seq from 0. Returns an enum harness_exit.
 */
/* e holds why when the return is not HARNESS_OK (the record says it too). */
int harness_workload_main(int argc, char *const argv[], const struct wl_env *env, int out_fd,
			  struct err *e);

/* `workloads`: name, description, parameters with defaults, result fields. */
void harness_list(FILE *f);

#endif
