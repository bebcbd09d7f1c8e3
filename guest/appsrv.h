/*
 * appsrv: what the application workloads (redis, pgbench) share: a server
 * started as a child (optionally as another user) and stopped by its pid, a
 * client run to its end with its output kept, and the memory evidence of a
 * process from smaps. fork/execve with argv, never a shell; the parsers are
 * pure and bounded; never prints, never exits.
 */
#ifndef THPEVAL_GUEST_APPSRV_H
#define THPEVAL_GUEST_APPSRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/err.h"

/*
 * What the application workloads (redis, pgbench) share. A server
 * program started as a child, optionally under another user (setgroups,
 * setgid, setuid after fork, then PR_SET_PDEATHSIG, which a credential change
 * clears), its output to a log file, stopped by its pid (never by name); a
 * client program run to its end with its output kept (bounded) and a
 * periodic tick while it runs; the memory evidence of a process
 * (smaps_rollup, the largest shared mapping in smaps), its children (by
 * ppid), and a user's ids from a passwd file. fork/execve with argv, never a
 * shell. Parsers are pure and bounded; nothing here prints or exits. Its
 * text helpers (a whole small file, the next or the last line) serve the
 * runner and the exec workload too.
 */

#define APPSRV_OUT_MAX 16384		/* bytes of a client's output kept */
#define APPSRV_SMAPS_MAX (8u << 20)	/* bytes of one smaps file read at most */
#define APPSRV_LINE_MAX 4608		/* a smaps header holds a path */
#define APPSRV_SMAPS_LINES 400000u	/* lines of one smaps file at most */
#define APPSRV_TAIL_MAX 160		/* bytes of the last line of a log kept */

/* who a child runs as: root (set = false) or uid/gid with no supplementary groups */
struct appsrv_user {
	bool set;
	uid_t uid;
	gid_t gid;
};

/*
 * Start path with argv and envp (the whole environment): stdin /dev/null,
 * stdout and stderr appended to log (created 0600, before the credentials
 * change; NULL: /dev/null), as user u (NULL: as is), killed with this
 * process. 0 with *pid set once it has executed, or a negative errno with e
 * set ("cannot execute 'PATH': ...").
 */
int appsrv_start(const char *path, char *const argv[], char *const envp[], const struct appsrv_user *u,
		 const char *log, pid_t *pid, struct err *e);
/* true when the child pid has exited (reaped, *status set); false while it runs */
bool appsrv_exited(pid_t pid, int *status);
/*
 * Stop the child pid: signal sig, wait for its exit up to timeout_ms, then
 * SIGKILL it; always reaped. 0 when it exited after sig (status set),
 * -ETIMEDOUT when it had to be killed, -ECHILD when it was gone already.
 */
int appsrv_stop(pid_t pid, int sig, unsigned timeout_ms, int *status);

/* a client's output: the first cap bytes kept (NUL-terminated), truncated when it said more */
struct appsrv_out {
	char buf[APPSRV_OUT_MAX + 1];
	size_t len;
	bool truncated;
};

typedef void (*appsrv_tick_fn)(void *opaque);

struct appsrv_run_opts {
	char *const *envp;
	const struct appsrv_user *user;	/* NULL: as is */
	uint64_t timeout_ms;		/* 0: none; past it the child is killed (-ETIMEDOUT) */
	unsigned tick_ms;		/* 0: no ticks */
	appsrv_tick_fn tick;		/* called about every tick_ms while the child runs */
	void *opaque;
	const char *err_log;		/* NULL: stderr into out too; else appended to this file */
};

/*
 * Run path with argv to its end: stdout (and stderr, unless o->err_log) into
 * out, stdin /dev/null. 0 with *status (wait status) and *wall_ns set whatever the exit
 * status; -ETIMEDOUT (killed) or another negative errno with e set.
 */
int appsrv_run(const char *path, char *const argv[], const struct appsrv_run_opts *o, struct appsrv_out *out,
	       int *status, uint64_t *wall_ns, struct err *e);

/*
 * The last non-empty line of text[0..n), printable ASCII ('?' for other
 * bytes), cut to len - 1 bytes; "" when there is none.
 */
void appsrv_last_line(const char *text, size_t n, char *out, size_t len);
/* the same of a file's last 4 KiB; "" when it cannot be read */
void appsrv_log_tail(const char *path, char *out, size_t len);
/* the next line of text[*pos..n) into [*s, *s + *len), without its newline; false at the end */
bool appsrv_next_line(const char *text, size_t n, size_t *pos, const char **s, size_t *len);

/* What smaps_rollup says of a process, in bytes. */
struct proc_mem {
	uint64_t rss, anon, anon_huge, shmem_pmd;
	bool have_anon_huge, have_shmem_pmd;
};

/*
 * smaps_rollup text (lib/smaps, every line checked): one header, Rss and
 * Anonymous required, AnonHugePages and ShmemPmdMapped optional (kernels
 * without THP). 0, or -EBADMSG with e set.
 */
int proc_mem_parse(const char *text, size_t n, struct proc_mem *m, struct err *e);
/* <root>/proc/<pid>/smaps_rollup */
int proc_mem_read(const char *root, pid_t pid, struct proc_mem *m, struct err *e);

/* The largest shared (rw-s) mapping of a process, from its smaps. */
struct shm_vma {
	uint64_t start, end;
	uint64_t rss, shmem_pmd;
	bool have_shmem_pmd;
	char name[64];		/* the mapping's path, cut ("/dev/zero (deleted)"); "" for none */
};

/*
 * smaps text: the rw-s mapping with the most bytes (the first of equals).
 * 0, -ENOENT when there is no shared writable mapping, -EBADMSG on text that
 * is not smaps (e set).
 */
int shm_vma_parse(const char *text, size_t n, struct shm_vma *v, struct err *e);
int shm_vma_read(const char *root, pid_t pid, struct shm_vma *v, struct err *e);

/*
 * The ppid field of /proc/<pid>/stat text (after the last ')'); 0, or
 * -EBADMSG.
 */
int proc_stat_ppid(const char *text, size_t n, pid_t *ppid);
/* the pids whose parent is ppid, from <root>/proc; at most max of them, *n set */
int proc_children(const char *root, pid_t ppid, pid_t *pids, size_t max, size_t *n, struct err *e);

/*
 * The uid and gid of user name in passwd text (name:x:uid:gid:gecos:home:
 * shell, seven fields per line). 0, -ENOENT when no line names it, -EBADMSG
 * when the line that names it is malformed.
 */
int passwd_find(const char *text, size_t n, const char *name, uid_t *uid, gid_t *gid);

/* a whole small file into buf (NUL-terminated); -E2BIG past len - 1 bytes */
int appsrv_read_file(const char *path, char *buf, size_t len, size_t *n, struct err *e);

#endif
