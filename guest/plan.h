/*
 * plan: what the runner does, read from the kernel command line
 * (thpeval.KEY=VALUE words; every other word is the kernel's). plan_parse()
 * is pure: strict values, unknown or repeated thpeval.* keys rejected with a
 * reason, defaults for the keys not given. No I/O, never exits.
 */
#ifndef THPEVAL_GUEST_PLAN_H
#define THPEVAL_GUEST_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"
#include "lib/wlopts.h"

#define PLAN_PREFIX "thpeval."
#define PLAN_MAX_WORKLOADS 16	/* as many as thpeval reads from a guest program's list */
#define PLAN_VALUE_MAX 128	/* longest value accepted, in bytes */
#define PLAN_PORT_MAX 64
#define PLAN_CMDLINE_MAX 65536
#define PLAN_MAX_SHMEM 6	/* shmem_enabled has six values */
#define PLAN_SHMEM_LEN 16

enum guest_thp { GUEST_THP_ALWAYS, GUEST_THP_MADVISE, GUEST_THP_NEVER, GUEST_THP__COUNT };

const char *guest_thp_name(enum guest_thp t);
int guest_thp_parse(const char *s, enum guest_thp *out);

struct plan {
	size_t nthp;
	enum guest_thp guest_thp[GUEST_THP__COUNT];	/* distinct, in command-line order */
	size_t nworkloads;
	const struct workload *workloads[PLAN_MAX_WORKLOADS];
	uint64_t reps;		/* measured rounds, >= 1 */
	uint64_t warmup;	/* warm-up rounds before them */
	uint64_t cold;		/* memset host-cold series: fresh buffers per guest THP setting, 0 = none */
	uint64_t size;		/* bytes, multiple of 2M */
	uint64_t accesses;
	uint64_t seed;
	uint64_t timeout_ms;	/* per workload run */
	char port[PLAN_PORT_MAX];	/* virtio-serial port name */
	/*
	 * guest_shmem_thp=VALUE,...: distinct shmem_enabled values, each a run
	 * (a variant) of the workloads that take --shmem-thp (pgbench); none:
	 * they leave the guest's shmem_enabled as it is
	 */
	size_t nshmem;
	char shmem_thp[PLAN_MAX_SHMEM][PLAN_SHMEM_LEN];
	/*
	 * wlopts=WORKLOAD:PARAM=VALUE,...: each workload's own parameters, as
	 * --PARAM=VALUE (kcompile's build, exec's command: the workload checks them)
	 */
	size_t nwlopts;
	struct wlopt wlopts[WLOPTS_MAX];
	/* probe=N, probe_period=MS: after the series, at most N timed access passes
	 * one period apart, for a host recovery arm (guest/probe.h); 0: none */
	uint64_t probe, probe_period_ms;
};

/* The plan when the command line says nothing. */
void plan_defaults(struct plan *p);
/*
 * 0, or -EINVAL with a one-line reason in why. On error out still holds the
 * defaults and the keys read before the bad one (so the port name can be used
 * to report the error).
 */
int plan_parse(const char *cmdline, struct plan *out, char *why, size_t len);

#endif
