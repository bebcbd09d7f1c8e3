/*
 * child: run a program for a workload (dd, make, an exec command): fork +
 * execve with a fixed environment, stdin from /dev/null, output through a
 * pipe, killed with the workload, an execve failure reported back.
 * child_run() reads and reaps it; child_spawn() leaves that to the caller.
 * No shell is ever involved.
 */
#ifndef THPEVAL_GUEST_CHILD_H
#define THPEVAL_GUEST_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "lib/err.h"

struct child_opts {
	char *const *envp;	/* the whole environment */
	bool out_to_pipe;	/* stdout into the pipe (else /dev/null) */
	bool err_to_pipe;	/* stderr into the pipe (else /dev/null) */
	bool own_group;		/* in a process group of its own (setpgid on both sides) */
	bool unblock_signals;	/* with an empty signal mask (else the caller's) */
	const char *cwd;	/* its working directory, "/" when that fails (NULL: the caller's) */
};

struct child_result {
	int status;		/* from wait4 */
	struct rusage ru;	/* the child and everything it waited for */
	uint64_t wall_ns;	/* fork to reaped */
};

/* a started child: its pid, the read ends of its output and of its execve report */
struct child_proc {
	pid_t pid;
	int out_fd;
	int report_fd;
	uint64_t t0;		/* harness_now_ns() just before the fork */
};

/*
 * Fork path with argv as o says. 0 with cp filled (the caller closes both
 * fds, child_exec_errno() closes report_fd), or a negative errno with e set
 * when no pipe or no fork could be had (nothing left open).
 */
int child_spawn(const char *path, char *const argv[], const struct child_opts *o, struct child_proc *cp,
		struct err *e);
/*
 * Read and close the report fd: the child's errno when execve (or what came
 * before it) failed, 0 once it executed (the close-on-exec pipe closes
 * without a word).
 */
int child_exec_errno(int report_fd);

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
