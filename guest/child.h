/*
 * child: run a program for a workload (coreutils dd, make): fork + execve
 * with a fixed environment, stdin from /dev/null, its stdout and/or stderr
 * through a pipe whose chunks go to a callback, killed with the workload
 * (PR_SET_PDEATHSIG), reaped with its rusage. No shell is ever involved.
 */
#ifndef THPEVAL_GUEST_CHILD_H
#define THPEVAL_GUEST_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "lib/err.h"

struct child_opts {
	char *const *envp;	/* the whole environment */
	bool out_to_pipe;	/* stdout into the pipe (else /dev/null) */
	bool err_to_pipe;	/* stderr into the pipe (else /dev/null) */
};

struct child_result {
	int status;		/* from wait4 */
	struct rusage ru;	/* the child and everything it waited for */
	uint64_t wall_ns;	/* fork to reaped */
};

typedef void (*child_chunk_fn)(void *opaque, const char *buf, size_t n);

/*
 * Run path with argv, passing every chunk of its piped output to fn (may be
 * NULL) until it exits. 0 with res filled whatever the exit status; a
 * negative errno with e set when it could not be started ("cannot execute
 * 'PATH': ...").
 */
int child_run(const char *path, char *const argv[], const struct child_opts *o, child_chunk_fn fn,
	      void *opaque, struct child_result *res, struct err *e);

#endif
