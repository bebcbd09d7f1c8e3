/*
 * wlopts: the syntax of extra workload parameters (thpeval run
 * --workload-opts=WORKLOAD:PARAM=VALUE,...), carried to the guest on its
 * kernel command line and to the bare host by argv. Pure syntax, shared by
 * the orchestrator and the guest plan; never prints, never exits.
 */
#ifndef THPEVAL_LIB_WLOPTS_H
#define THPEVAL_LIB_WLOPTS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Extra workload parameters given to a run (thpeval run
 * --workload-opts=WORKLOAD:PARAM=VALUE,...: redis:dataset=4G,pgbench:scale=400),
 * carried to the guest on its kernel command line (thpeval.wlopts) and to
 * the bare host by argv. Pure syntax, shared by the orchestrator and the
 * guest plan: names of [a-z0-9_-], values of [A-Za-z0-9_./:+-] (no shell, no
 * quoting, nothing the command line would split), the parameters a runner
 * sets for every run refused. Whether WORKLOAD runs and takes PARAM is the
 * caller's check, and the workload checks VALUE. Never prints, never exits.
 */

#define WLOPTS_MAX 16		/* items in one list */
#define WLOPTS_SPEC_MAX 1536	/* bytes of the whole list (a kernel command line value) */
#define WLOPT_NAME_MAX 32	/* a workload or parameter name, NUL included */
#define WLOPT_VALUE_MAX 1280	/* a value, NUL included: room for an exec command, lib/argv-encoded */

struct wlopt {
	char workload[WLOPT_NAME_MAX];
	char param[WLOPT_NAME_MAX];
	char value[WLOPT_VALUE_MAX];
};

/*
 * The parameters every runner sets itself (rep, warmup, seed, label, size,
 * accesses, madvise, src, shmem-thp, hold): not for a list.
 */
bool wlopt_reserved(const char *param);

/*
 * "WORKLOAD:PARAM=VALUE,..." into out[0..max), *n items; 0, or -EINVAL with
 * a one-line reason in why (empty item, bad name or value, a reserved
 * parameter, a parameter given twice for a workload, too long, too many).
 */
int wlopts_parse(const char *spec, struct wlopt *out, size_t max, size_t *n, char *why, size_t len);

#endif
