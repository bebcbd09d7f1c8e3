#include "execwl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "appsrv.h"
#include "child.h"
#include "harness.h"
#include "kcompile.h"
#include "sysinfo.h"
#include "lib/argv.h"
#include "lib/parse.h"

static const char *const dir_names[] = { [EXEC_HIGHER] = "higher", [EXEC_LOWER] = "lower" };
static const char *const dir_fields[] = { [EXEC_HIGHER] = "metric_higher", [EXEC_LOWER] = "metric_lower" };
_Static_assert(sizeof(dir_names) / sizeof(dir_names[0]) == EXEC_DIR__COUNT, "dir_names out of sync");
_Static_assert(sizeof(dir_fields) / sizeof(dir_fields[0]) == EXEC_DIR__COUNT, "dir_fields out of sync");

const char *exec_dir_name(enum exec_dir d)
{
	return (unsigned)d < EXEC_DIR__COUNT ? dir_names[d] : "?";
}

const char *exec_dir_field(enum exec_dir d)
{
	return (unsigned)d < EXEC_DIR__COUNT ? dir_fields[d] : "?";
}

int exec_dir_parse(const char *s, enum exec_dir *d)
{
	unsigned i;

	for (i = 0; i < EXEC_DIR__COUNT; i++)
		if (!strcmp(s, dir_names[i])) {
			*d = (enum exec_dir)i;
			return 0;
		}
	return -EINVAL;
}

/* ---- finding and running the program ----------------------------------------- */

int exec_which(const char *root, const char *name, char *path, size_t len)
{
	const char *dir = EXEC_ENV_PATH;

	if (strchr(name, '/')) {
		if ((size_t)snprintf(path, len, "%s%s", root, name) >= len)
			return -ENAMETOOLONG;
		return access(path, X_OK) ? -ENOENT : 0;
	}
	while (*dir) {
		size_t n = strcspn(dir, ":");

		if ((size_t)snprintf(path, len, "%s%.*s/%s", root, (int)n, dir, name) < len &&
		    access(path, X_OK) == 0)
			return 0;
		dir += n + (dir[n] == ':');
	}
	path[0] = '\0';
	return -ENOENT;
}

/* the last EXEC_OUT_KEEP bytes of a stream: a ring, made linear at the end */
struct ring {
	char *buf;
	size_t pos;		/* next write */
	bool full;		/* wrapped at least once */
	uint64_t total;
};

static void ring_put(struct ring *rg, const char *p, size_t n)
{
	rg->total += n;
	if (n > EXEC_OUT_KEEP) {	/* only its end can stay */
		p += n - EXEC_OUT_KEEP;
		n = EXEC_OUT_KEEP;
	}
	while (n) {
		size_t k = EXEC_OUT_KEEP - rg->pos < n ? EXEC_OUT_KEEP - rg->pos : n;

		memcpy(rg->buf + rg->pos, p, k);
		rg->pos += k;
		p += k;
		n -= k;
		if (rg->pos == EXEC_OUT_KEEP) {
			rg->pos = 0;
			rg->full = true;
		}
	}
}

static void reverse(char *a, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		char t = a[i];

		a[i] = a[n - 1 - i];
		a[n - 1 - i] = t;
	}
}

/* the ring's bytes in order into r->out (its own buffer), cut to a line start if it wrapped */
static void ring_finish(struct ring *rg, struct exec_result *r)
{
	size_t n = rg->full ? EXEC_OUT_KEEP : rg->pos, i, skip = 0;

	if (rg->full && rg->pos) {	/* rotate left by pos: three reversals */
		reverse(rg->buf, rg->pos);
		reverse(rg->buf + rg->pos, EXEC_OUT_KEEP - rg->pos);
		reverse(rg->buf, EXEC_OUT_KEEP);
	}
	if (rg->full) {
		char *nl = memchr(rg->buf, '\n', n);

		if (nl)
			skip = (size_t)(nl + 1 - rg->buf);
	}
	memmove(rg->buf, rg->buf + skip, n - skip);
	n -= skip;
	for (i = 0; i < n; i++)
		if (!rg->buf[i])
			rg->buf[i] = '?';
	rg->buf[n] = '\0';
	r->out = rg->buf;
	r->out_len = n;
	r->out_bytes = rg->total;
	rg->buf = NULL;
}

/* a pollable handle on the child's exit (Linux 5.3+), or -1: then a short tick */
static int pid_fd(pid_t pid)
{
#ifdef SYS_pidfd_open
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	return -1;
#endif
}

/* whether pid has exited (it stays a zombie, unreaped) */
static bool exited_unreaped(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* the output until the command ends or the deadline, then its group killed and the rest drained */
static void exec_wait(pid_t pid, int out_fd, uint64_t t0, uint64_t deadline, struct ring *rg,
		      struct exec_result *r)
{
	int pfd_child = pid_fd(pid);
	uint64_t drain_until = 0;
	bool exited = false, eof = false;
	char chunk[65536];

	while (!eof || !exited) {
		struct pollfd pfd[2] = { { eof ? -1 : out_fd, POLLIN, 0 }, { exited ? -1 : pfd_child, POLLIN, 0 } };
		uint64_t now = harness_now_ns(), until = exited ? drain_until : deadline;
		int wait = now >= until ? 0 : (int)((until - now) / 1000000u) + 1;

		if (!exited && pfd_child < 0 && wait > 10)
			wait = 10;	/* no pidfd: look for the exit every 10 ms */
		if (poll(pfd, 2, wait) < 0 && errno != EINTR)
			wait = 0;
		if (!eof && (pfd[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t n = read(out_fd, chunk, sizeof(chunk));

			if (n > 0)
				ring_put(rg, chunk, (size_t)n);
			else if (n == 0 || (errno != EINTR && errno != EAGAIN))
				eof = true;
		}
		if (!exited && exited_unreaped(pid)) {
			/* while it is a zombie its pid, the group's id, cannot be reused: what it
			 * left in its group is killed before it is reaped */
			r->wall_ns = harness_now_ns() - t0;
			kill(-pid, SIGKILL);
			while (wait4(pid, &r->status, 0, &r->ru) < 0 && errno == EINTR)
				;
			exited = true;
		}
		now = harness_now_ns();
		if (!exited && now >= deadline) {
			r->timed_out = true;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);	/* had it left its group */
			while (wait4(pid, &r->status, 0, &r->ru) < 0 && errno == EINTR)
				;
			exited = true;
			r->wall_ns = harness_now_ns() - t0;
		}
		if (exited && !drain_until) {
			/* its group is gone: its output ends soon after */
			drain_until = harness_now_ns() + EXEC_REAP_MS * 1000000ull;
		} else if (exited && harness_now_ns() >= drain_until) {
			break;	/* a process that left the group still holds the pipe */
		}
	}
	if (pfd_child >= 0)
		close(pfd_child);
}

int exec_command(const char *path, char *const argv[], uint64_t timeout_ms, struct exec_result *r,
		 struct err *e)
{
	static char pathv[] = "PATH=" EXEC_ENV_PATH, home[] = "HOME=/tmp", lc[] = "LC_ALL=C",
		    tmpdir[] = "TMPDIR=/tmp";
	static char *const envp[] = { pathv, home, lc, tmpdir, NULL };
	/* its own group (killed as one), a clean signal mask, stdout and stderr into the pipe */
	const struct child_opts o = { .envp = envp, .out_to_pipe = true, .err_to_pipe = true,
				      .own_group = true, .unblock_signals = true, .cwd = "/tmp" };
	struct ring rg = { 0 };
	struct child_proc cp;
	int exec_errno;

	memset(r, 0, sizeof(*r));
	rg.buf = malloc(EXEC_OUT_KEEP + 1);
	if (!rg.buf)
		return err_set(e, -ENOMEM, "no memory for the command's output");
	if (child_spawn(path, argv, &o, &cp, e)) {
		free(rg.buf);
		return e->code;
	}
	/* exec succeeded when the close-on-exec pipe closes without a word */
	exec_errno = child_exec_errno(cp.report_fd);
	if (exec_errno) {
		while (waitpid(cp.pid, NULL, 0) < 0 && errno == EINTR)
			;
		close(cp.out_fd);
		free(rg.buf);
		return err_set(e, -exec_errno, "cannot execute '%s': %s", path, strerror(exec_errno));
	}
	exec_wait(cp.pid, cp.out_fd, cp.t0, cp.t0 + timeout_ms * 1000000ull, &rg, r);
	close(cp.out_fd);
	ring_finish(&rg, r);
	return 0;
}

void exec_result_release(struct exec_result *r)
{
	free(r->out);
	r->out = NULL;
	r->out_len = 0;
}

int exec_outcome(const struct exec_result *r, const char *name, uint64_t timeout_ms, struct err *e)
{
	char tail[EXEC_REASON_MAX];

	if (r->timed_out)
		return err_set(e, -EIO, "'%.60s' timed out after %" PRIu64 " s (its process group killed)", name,
			       timeout_ms / 1000);
	if (WIFSIGNALED(r->status))
		return err_set(e, -EIO, "'%.60s' killed by signal %d (%s)", name, WTERMSIG(r->status),
			       strsignal(WTERMSIG(r->status)));
	if (!WIFEXITED(r->status) || WEXITSTATUS(r->status)) {
		appsrv_last_line(r->out ? r->out : "", r->out_len, tail, sizeof(tail));
		return err_set(e, -EIO, "'%.60s' exited with status %d: %s", name, WEXITSTATUS(r->status),
			       tail[0] ? tail : "no output");
	}
	return 0;
}

/* ---- the number in its output ------------------------------------------------------ */

int exec_pattern_compile(const char *pattern, regex_t *re, struct err *e)
{
	char why[128];
	int r = regcomp(re, pattern, REG_EXTENDED);

	if (r) {
		regerror(r, re, why, sizeof(why));
		return err_set(e, -EINVAL, "bad metric pattern: %s", why);
	}
	if (re->re_nsub != 1) {
		size_t groups = re->re_nsub;

		regfree(re);
		return err_set(e, -EINVAL, "the metric pattern has %zu capture groups: it needs exactly one, "
			       "around the number (e.g. 'ops/s: ([0-9.]+)')", groups);
	}
	return 0;
}

int exec_metric_read(const regex_t *re, char *out, size_t len, double *v, struct err *e)
{
	char cap[EXEC_REASON_MAX], num[64];
	size_t s = 0;
	bool found = false, took_part = false;

	while (s < len) {
		char *nl = memchr(out + s, '\n', len - s);
		size_t end = nl ? (size_t)(nl - out) : len;
		char keep = out[end];
		regmatch_t m[2];

		out[end] = '\0';	/* out[len] is the NUL */
		if (!regexec(re, out + s, 2, m, 0)) {
			found = true;
			took_part = m[1].rm_so >= 0;
			if (took_part) {
				size_t k = (size_t)(m[1].rm_eo - m[1].rm_so);

				k = k < sizeof(cap) - 1 ? k : sizeof(cap) - 1;
				memcpy(cap, out + s + m[1].rm_so, k);
				cap[k] = '\0';
			}
		}
		out[end] = keep;
		s = end + 1;
	}
	if (!found)
		return err_set(e, -ENOENT, "no line of its output (%zu bytes) matches the metric pattern", len);
	if (!took_part)
		return err_set(e, -EINVAL, "the metric pattern's group took no part in the last matching line");
	{
		/* the capture without surrounding blanks */
		const char *p = cap;
		size_t k;

		while (*p == ' ' || *p == '\t')
			p++;
		k = strlen(p);
		while (k && (p[k - 1] == ' ' || p[k - 1] == '\t' || p[k - 1] == '\r'))
			k--;
		if (k >= sizeof(num) || (snprintf(num, sizeof(num), "%.*s", (int)k, p), parse_double(num, v)))
			return err_set(e, -EINVAL, "the metric pattern captured '%.40s', not a number", cap);
	}
	return 0;
}

/* ---- the workload --------------------------------------------------------------- */

static const struct wl_param exec_params[] = {
	{ "argv", WL_P_WORD, offsetof(struct exec_opts, argv), "true", 0, WL_EXEC_ARGV_MAX,
	  "the command, its words in lib/argv's encoding (thpeval run --exec='CMD ARGS' writes it): "
	  "[A-Za-z0-9_./-] as they are, ':XX' for any other byte, '+' between words" },
	{ "metric", WL_P_WORD, offsetof(struct exec_opts, metric), "none", 0, WL_EXEC_METRIC_MAX,
	  "POSIX extended regex with one capture group, encoded the same way: the number it captures on "
	  "the last matching line of the output is recorded; none: no number" },
	{ "direction", WL_P_WORD, offsetof(struct exec_opts, direction), "higher", 0, WL_WORD_MAX,
	  "higher or lower: which way the number is better (metric_higher or metric_lower)" },
	{ "timeout", WL_P_U64, offsetof(struct exec_opts, timeout), "600", 1, EXEC_TIMEOUT_MAX_S,
	  "seconds the command may run; then its process group is killed (a fail record)" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

static const struct wl_metric exec_metrics[] = {
	{ "cmd", "the command, its words quoted where needed (cut to fit a record)" },
	{ "wall_s", "wall time of the command, fork to exit" },
	{ "user_s", "user CPU time of the command and what it waited for (wait4)" },
	{ "sys_s", "system CPU time of the command and what it waited for (wait4)" },
	{ "minflt", "minor page faults of the command and what it waited for (wait4)" },
	{ "majflt", "major page faults of the command and what it waited for (wait4)" },
	{ "exit_status", "its exit status (0: a result; else a fail record)" },
	{ "output_bytes", "bytes it wrote to stdout and stderr" },
	{ "metric_higher", "the number the --metric pattern read, higher is better" },
	{ "metric_lower", "the number the --metric pattern read, lower is better" },
	{ "vm_pgfault", "/proc/vmstat pgfault delta over the command (whole system)" },
	{ "vm_thp_fault_alloc", "/proc/vmstat thp_fault_alloc delta (huge pages faulted in)" },
	{ "vm_thp_fault_fallback", "/proc/vmstat thp_fault_fallback delta" },
	{ "vm_thp_collapse_alloc", "/proc/vmstat thp_collapse_alloc delta (khugepaged)" },
	{ "huge_fault_pct", "thp_fault_alloc / (thp_fault_alloc + thp_fault_fallback) * 100 over the "
			    "command (whole system; 0 when no fault tried a huge page): the coverage evidence" },
	{ "cov_note", "why huge_fault_pct is 0 or absent" },
	{ NULL, NULL },
};

/* the decoded parameters */
struct exec_plan {
	struct argv_list argv;
	bool have_pattern;
	char pattern[ARGV_PATTERN_MAX + 1];
	enum exec_dir dir;
};

static int plan_read(const struct exec_opts *a, struct exec_plan *p, struct err *e)
{
	int r;

	if ((r = argv_decode("--argv", a->argv, &p->argv, e)))
		return r;
	if (exec_dir_parse(a->direction, &p->dir))
		return err_set(e, -EINVAL, "bad --direction '%s': higher or lower", a->direction);
	p->have_pattern = strcmp(a->metric, "none") != 0;
	if (p->have_pattern &&
	    (r = argv_decode_word("--metric", a->metric, p->pattern, sizeof(p->pattern), e)))
		return r;
	return 0;
}

static int exec_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const struct exec_opts *a = opts;
	struct exec_plan *p = malloc(sizeof(*p));
	regex_t re;
	int r;

	(void)env;
	if (!p)
		return err_set(e, -ENOMEM, "no memory for the command");
	r = plan_read(a, p, e);
	if (!r && p->have_pattern && !(r = exec_pattern_compile(p->pattern, &re, e)))
		regfree(&re);
	free(p);
	return r;
}

/* the command's fields of a result record; vmstat around it */
static int exec_record(const struct exec_plan *p, const struct exec_result *r, const struct guest_vmstat *before,
		       const struct guest_vmstat *after, struct record *res)
{
	char cmd[REC_VAL_MAX];
	double pct = 0;
	int ret = 0, h;

	argv_join(&p->argv, cmd, sizeof(cmd));
	ret |= rec_add_str(res, "cmd", cmd);
	ret |= rec_add_f64(res, "wall_s", (double)r->wall_ns / 1e9);
	ret |= rec_add_f64(res, "user_s", (double)r->ru.ru_utime.tv_sec + (double)r->ru.ru_utime.tv_usec / 1e6);
	ret |= rec_add_f64(res, "sys_s", (double)r->ru.ru_stime.tv_sec + (double)r->ru.ru_stime.tv_usec / 1e6);
	ret |= rec_add_u64(res, "minflt", (uint64_t)r->ru.ru_minflt);
	ret |= rec_add_u64(res, "majflt", (uint64_t)r->ru.ru_majflt);
	ret |= rec_add_u64(res, "exit_status", 0);
	ret |= rec_add_u64(res, "output_bytes", r->out_bytes);
	ret |= guest_vmstat_add(res, "vm_", before, after);
	h = kc_huge_fault_pct(before, after, &pct);
	if (h != -ENOENT)
		ret |= rec_add_f64(res, "huge_fault_pct", pct);
	if (h == -ENOENT)
		ret |= rec_add_str(res, "cov_note", "no thp_fault_alloc and thp_fault_fallback in /proc/vmstat");
	else if (h == -ENODATA)
		ret |= rec_add_str(res, "cov_note", "no page fault of the command tried a huge page");
	return ret;
}

static int exec_run(const void *opts, const struct wl_env *env, struct record *res, struct err *e)
{
	const struct exec_opts *a = opts;
	struct exec_plan *p = malloc(sizeof(*p));
	struct guest_vmstat before, after;
	struct exec_result r = { 0 };
	char path[4096 + 256];
	uint64_t timeout_ms = a->timeout * 1000;
	bool have_re = false;
	regex_t re;
	double v = 0;
	int ret;

	if (!p)
		return err_set(e, -ENOMEM, "no memory for the command");
	ret = plan_read(a, p, e);
	if (!ret && p->have_pattern && !(ret = exec_pattern_compile(p->pattern, &re, e)))
		have_re = true;
	if (!ret && exec_which(env->root, p->argv.v[0], path, sizeof(path))) {
		if (strchr(p->argv.v[0], '/'))
			ret = err_set(e, -ENOENT, "'%.60s' is not an executable file here", p->argv.v[0]);
		else
			ret = err_set(e, -ENOENT, "'%.60s' is not in the guest's PATH: add its package with "
				      "--image-packages", p->argv.v[0]);
	}
	if (!ret) {
		guest_vmstat_read(env->root, &before);
		ret = exec_command(path, p->argv.v, timeout_ms, &r, e);
		guest_vmstat_read(env->root, &after);
	}
	if (!ret)
		ret = exec_outcome(&r, p->argv.v[0], timeout_ms, e);
	if (!ret && have_re)
		ret = exec_metric_read(&re, r.out, r.out_len, &v, e);
	if (!ret && (exec_record(p, &r, &before, &after, res) ||
		     (have_re && rec_add_f64(res, exec_dir_field(p->dir), v))))
		ret = err_set(e, -EINVAL, "cannot build the exec record");
	if (have_re)
		regfree(&re);
	exec_result_release(&r);
	free(p);
	return ret;
}

const struct workload wl_exec = {
	.name = "exec",
	.description = "any command of the user's (thpeval run --exec='CMD ARGS'), run by fork/execve "
		       "without a shell, in its own process group, killed after --timeout: wall, user "
		       "and sys time and page faults (wait4), /proc/vmstat deltas, and optionally a "
		       "number read from its output with a pattern and a declared direction",
	.params = exec_params,
	.metrics = exec_metrics,
	.check = exec_check,
	.run = exec_run,
	.opts_size = sizeof(struct exec_opts),
};
