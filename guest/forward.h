/*
 * forward: one workload child of the runner: fork + exec, its records
 * checked and re-sequenced onto the runner's stream, killed at its timeout,
 * a fail record for whatever it did not report itself. Never exits.
 */
#ifndef THPEVAL_GUEST_FORWARD_H
#define THPEVAL_GUEST_FORWARD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "emit.h"
#include "lib/err.h"
#include "lib/record.h"

#define RUNNER_MAX_BAD_LINES 8	/* malformed child lines reported, then dropped */

/* What one child printed, as the forwarder saw it. */
struct fwd_stats {
	unsigned lines;		/* complete lines read */
	unsigned forwarded;	/* valid records re-sequenced onto the stream */
	unsigned malformed;	/* lines replaced by a fail record (or dropped past the cap) */
	unsigned by_type[REC__COUNT];	/* forwarded records per type */
};

/*
 * Read a child's stdout from in_fd until end of file or deadline_ns
 * (CLOCK_MONOTONIC; 0 = none): each line is parsed with rec_parse; valid
 * records (result, skip, fail, info, numbered 0, 1, ...) are renumbered by em
 * and written; anything else is replaced by a fail record with the context's
 * fields and reason "workload printed a malformed record: ...".
 * 0 at end of file, -ETIMEDOUT at the deadline, else a write error (e set).
 */
int runner_forward(int in_fd, struct emitter *em, const struct record *context,
		   uint64_t deadline_ns, struct fwd_stats *st, struct err *e);

/*
 * What the host may say while a child runs: with stop_file set, the runner
 * reads its stream's fd too, and the host's REC_PROBE_STOP word creates
 * stop_file (removed before the child starts), which the child polls.
 */
struct fwd_watch {
	const char *stop_file;
};

/*
 * fork + exec argv[0] (stdout to a pipe, stdin /dev/null, stderr inherited),
 * forward its records, kill it with SIGKILL after timeout_ms (fail record,
 * reason "timeout"), and add a fail record when it died or exited non-zero
 * without one of its own, or exited 0 without a result. Returns 0 while the
 * output stream works, whatever the child did; a negative errno otherwise.
 */
int runner_exec(char *const argv[], struct emitter *em, const struct record *context,
		uint64_t timeout_ms, struct fwd_stats *st, struct err *e);
/*
 * runner_exec for a child that reports and then keeps running (memset --hold=1):
 * when it closed its output after a result and no fail/skip record, *held is
 * its pid and it is left running for runner_release(); otherwise *held is -1
 * and the child was handled as by runner_exec.
 */
int runner_exec_hold(char *const argv[], struct emitter *em, const struct record *context,
		     uint64_t timeout_ms, struct fwd_stats *st, pid_t *held, struct err *e);
/* runner_exec while the host's words are watched for (w->stop_file) */
int runner_exec_watch(char *const argv[], struct emitter *em, const struct record *context,
		      uint64_t timeout_ms, const struct fwd_watch *w, struct fwd_stats *st, struct err *e);
/* SIGKILL and reap the held children (entries <= 0 are skipped); sets them to -1 */
void runner_release(pid_t *pids, size_t n);

#endif
