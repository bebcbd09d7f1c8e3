/*
 * workloads: what the guest program offers, and running it on the bare host.
 * The same static binary (thpeval-guest) runs inside guests and, for the
 * bare-metal rows, directly on the host: its records are parsed with the
 * same strict parser as a guest's. Never prints; no shell is involved.
 */
#ifndef THPEVAL_ORCH_WORKLOADS_H
#define THPEVAL_ORCH_WORKLOADS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/record.h"
#include "lib/wlopts.h"

#define WORKLOADS_MAX 16
#define WORKLOAD_NAME_MAX 32
#define WORKLOAD_PARAMS_MAX 32	/* --name=value options of one workload (common ones included) */
#define WORKLOAD_PARAM_NAME_MAX 32
#define WORKLOAD_DEFAULT_MAX 64	/* a parameter's default, NUL included */
#define WORKLOADS_JSON_MAX (256 * 1024)	/* bytes of `workloads --format=json` read at most */
#define WORKLOADS_JSON_DEPTH 8	/* nesting the document may have (it uses 5) */
#define WORKLOADS_SCHEMA 1	/* the schema_version read: guest/registry.h REGISTRY_LIST_SCHEMA */

struct workload_info {
	char name[WORKLOAD_NAME_MAX];
	char params[WORKLOAD_PARAMS_MAX][WORKLOAD_PARAM_NAME_MAX];	/* its options, listed order */
	char defaults[WORKLOAD_PARAMS_MAX][WORKLOAD_DEFAULT_MAX];	/* each one's default */
	size_t nparams;
	/* derived from params: the ones thpeval run sets itself */
	bool has_size, has_accesses, has_madvise;
	bool has_src;		/* takes --src: reads the kernel source disk (its host tree on the bare host) */
};

/*
 * The workloads of `guest_bin workloads --format=json` (guest/harness.h has
 * the document's shape), at most max of them. The guest program is a file
 * the user may point at: its document is parsed strictly and bounded
 * (WORKLOADS_JSON_MAX bytes, WORKLOADS_JSON_DEPTH, names shorter than
 * WORKLOAD_NAME_MAX); anything else is refused with a one-line error naming
 * the program and what is wrong.
 */
int workloads_list(const char *guest_bin, struct workload_info *wl, size_t max, size_t *n, struct err *e);
/* The same from the document text[0..len); prog names its source in errors. */
int workloads_parse_json(const char *prog, const char *text, size_t len, struct workload_info *wl,
			 size_t max, size_t *n, struct err *e);
/* Whether the workload takes --name=value. */
bool workload_has_param(const struct workload_info *wi, const char *name);
/* the full listing text (for `thpeval workloads`, for people), NUL-terminated in buf */
int workloads_describe(const char *guest_bin, char *buf, size_t len, struct err *e);
/*
 * "memset,tlb" or "all" -> names, each checked against the listing.
 * Error names the unknown workload and lists the available ones.
 */
int workloads_select(const char *spec, const struct workload_info *avail, size_t navail,
		     char out[][WORKLOAD_NAME_MAX], size_t max, size_t *n, struct err *e);
const struct workload_info *workload_find(const struct workload_info *wl, size_t n, const char *name);
/*
 * --workload-opts: each WORKLOAD:PARAM=VALUE (lib/wlopts syntax) names a
 * selected workload (sel[0..nsel)) and a parameter it takes; 0, or -EINVAL
 * with a one-line reason (the value is the workload's to check)
 */
int workload_opts_check(const char *spec, const char (*sel)[WORKLOAD_NAME_MAX], size_t nsel,
			const struct workload_info *avail, size_t navail, struct err *e);
/*
 * The value of wi's parameter param in this run: spec's (--workload-opts)
 * when it names it, else the default, into buf; NULL when wi has no such
 * parameter.
 */
const char *workload_opt_value(const char *spec, const struct workload_info *wi, const char *param, char *buf,
			       size_t len);
/*
 * One run's own limit (ms) of a workload that has a "timeout" parameter
 * (seconds, guest/workload.h), with the margin in which it reports its own
 * timeout (ARGV_EXEC_MARGIN_MS); 0 for a workload without one.
 */
uint64_t workload_run_limit_ms(const char *spec, const struct workload_info *wi);
/* "--PARAM=VALUE" for each item of spec naming workload, into out[0..max); their count */
size_t workload_opts_args(const char *spec, const char *workload, char (*out)[WLOPT_NAME_MAX + WLOPT_VALUE_MAX + 8],
			  size_t max);

typedef int (*local_record_fn)(void *opaque, const struct record *rec, const char *rejected_reason);

/*
 * Run `guest_bin workload NAME args...` on this host, feed each stdout line
 * (parsed strictly) to fn; kill it after timeout_ms or when *stop is set.
 * Returns 0 when it exited 0; -ETIMEDOUT, -EINTR, or -EIO (non-zero exit,
 * with the status in the message) otherwise.
 */
int workload_run_local(const char *guest_bin, const char *const *args, int timeout_ms,
		       volatile const sig_atomic_t *stop, local_record_fn fn, void *opaque, struct err *e);

#endif
