/*
 * execwl: any command of the user's, timed: an argv run by fork/execve in
 * a process group of its own with a fixed environment, never through a
 * shell of ours, killed after --timeout. Recorded: times, faults, vmstat
 * deltas and optionally a number read from its output with a regex. Entry
 * point: wl_exec. Never prints.
 */
#ifndef THPEVAL_GUEST_EXECWL_H
#define THPEVAL_GUEST_EXECWL_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#include "lib/err.h"
#include "workload.h"

/*
 * Any command of the user's, timed. The command
 * is an argv (lib/argv.h carries it here encoded), run by fork/execve with
 * a fixed environment (EXEC_ENV_PATH searched for its program), stdin from
 * /dev/null, stdout and stderr into one pipe, in a process group of its own;
 * never through a shell of ours (sh -c '...' is the user's own explicit
 * choice). After --timeout the group is killed; when the command exits,
 * whatever it left in its group is killed too. Recorded: wall time, user and
 * sys time and minor/major faults of the command and what it waited for
 * (wait4), /proc/vmstat deltas with the huge-page share of the faults that
 * tried one (the coverage evidence), the exit status, and optionally a number
 * read from its output (the last EXEC_OUT_KEEP bytes) with a POSIX extended
 * regex of one capture group, recorded as metric_higher or metric_lower by
 * the declared direction. A missing program, a non-zero exit, a signal, a
 * timeout, no match or a capture that is not a number is a fail record with
 * a one-line reason. The logic takes explicit arguments; wl_exec adapts it
 * to the workload table. Never prints.
 */

#define EXEC_OUT_KEEP (1u << 20)	/* bytes of output kept for the pattern: the last MiB */
#define EXEC_REAP_MS 2000		/* after the command: its output drained this long at most */
#define EXEC_ENV_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define EXEC_TIMEOUT_MAX_S (24 * 3600)
#define EXEC_REASON_MAX 160		/* a record value, with its NUL */

enum exec_dir { EXEC_HIGHER, EXEC_LOWER, EXEC_DIR__COUNT };

/* "higher", "lower" */
const char *exec_dir_name(enum exec_dir d);
int exec_dir_parse(const char *s, enum exec_dir *d);
/* the record field the number goes to: metric_higher or metric_lower */
const char *exec_dir_field(enum exec_dir d);

struct exec_result {
	int status;		/* wait4's, when it ended by itself */
	bool timed_out;		/* killed at the deadline */
	struct rusage ru;	/* the command and everything it waited for */
	uint64_t wall_ns;	/* fork to its exit */
	uint64_t out_bytes;	/* everything it printed */
	char *out;		/* the last EXEC_OUT_KEEP bytes at most, from a line start where it
				 * was cut, NUL bytes as '?', NUL-terminated (malloc'd) */
	size_t out_len;
};

/*
 * <root><name> when name holds a '/', else the first executable
 * <root><dir>/<name> of EXEC_ENV_PATH, into path. 0, or -ENOENT.
 */
int exec_which(const char *root, const char *name, char *path, size_t len);

/*
 * Run path with argv (argv[0] as given) until it exits or timeout_ms pass.
 * 0 with r filled whatever the outcome; a negative errno with e set when it
 * could not be started ("cannot execute 'PATH': ..."). exec_result_release()
 * after either.
 */
int exec_command(const char *path, char *const argv[], uint64_t timeout_ms, struct exec_result *r,
		 struct err *e);
void exec_result_release(struct exec_result *r);

/*
 * 0 when the command exited 0; otherwise -EIO and one line in e naming it
 * (name: argv[0]): "'x' timed out after N s (its process group killed)",
 * "'x' killed by signal 9 (Killed)", "'x' exited with status 3: <its last
 * line of output>".
 */
int exec_outcome(const struct exec_result *r, const char *name, uint64_t timeout_ms, struct err *e);

/* Compile pattern (POSIX extended) and insist on exactly one capture group. 0 or -EINVAL. */
int exec_pattern_compile(const char *pattern, regex_t *re, struct err *e);
/*
 * The number the pattern's group captures on the last line of out[0..len)
 * it matches (lines end at '\n'; out is modified while it is read and put
 * back). 0, or -ENOENT (no line matches), -EINVAL (the group took no part,
 * or what it captured is not a finite number) with one line in e.
 */
int exec_metric_read(const regex_t *re, char *out, size_t len, double *v, struct err *e);

/* exec's options: its parameter table points into them */
struct exec_opts {
	char argv[WL_EXEC_ARGV_MAX];		/* the command, lib/argv-encoded */
	char metric[WL_EXEC_METRIC_MAX];	/* the pattern, encoded; "none": none */
	char direction[WL_WORD_MAX];		/* higher or lower */
	uint64_t timeout;			/* seconds */
};

extern const struct workload wl_exec;

#endif
