#include "appsrv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "harness.h"
#include "lib/parse.h"
#include "lib/smaps.h"

/* ---- children ---------------------------------------------------------------- */

/* in the child: credentials, then the death signal (a credential change clears it) */
static void child_setup(const struct appsrv_user *u, int out_fd, int err_fd, pid_t parent, int report_fd)
{
	int nul, saved;

	signal(SIGPIPE, SIG_DFL);
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (err_fd < 0)
		err_fd = out_fd;
	if (nul < 0 || dup2(nul, STDIN_FILENO) < 0 || dup2(out_fd >= 0 ? out_fd : nul, STDOUT_FILENO) < 0 ||
	    dup2(err_fd >= 0 ? err_fd : nul, STDERR_FILENO) < 0)
		goto fail;
	if (u && u->set && (setgroups(0, NULL) || setgid(u->gid) || setuid(u->uid)))
		goto fail;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(126);
	return;
fail:
	saved = errno;
	if (write(report_fd, &saved, sizeof(saved)) < 0)
		_exit(126);
	_exit(127);
}

static void reap(pid_t pid, int *status)
{
	int st = 0;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (status)
		*status = st;
}

/* log opened for appending (created 0600, handed to u); -1 for NULL; < -1 on error (e set) */
static int log_open(const char *log, const struct appsrv_user *u, struct err *e)
{
	int fd;

	if (!log)
		return -1;
	/*
	 * The log's directory may be the user's: a link or a second name of
	 * another file planted there must never be written or handed over
	 */
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
	if (fd < 0) {
		err_set(e, -errno, "cannot create '%s': %s", log, strerror(errno));
		return -2;
	}
	{
		struct stat st;

		if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_nlink != 1 ||
		    (st.st_uid != geteuid() && !(u && u->set && st.st_uid == u->uid))) {
			err_set(e, -EPERM, "log '%s' is not a file of this run's: remove it", log);
			close(fd);
			return -2;
		}
	}
	if (u && u->set && fchown(fd, u->uid, u->gid)) {
		err_set(e, -errno, "cannot hand '%s' to uid %u: %s", log, (unsigned)u->uid, strerror(errno));
		close(fd);
		return -2;
	}
	return fd;
}

int appsrv_start(const char *path, char *const argv[], char *const envp[], const struct appsrv_user *u,
		 const char *log, pid_t *pid, struct err *e)
{
	int rp[2], out_fd, child_errno;
	pid_t self = getpid(), p;

	*pid = -1;
	out_fd = log_open(log, u, e);
	if (out_fd < -1)
		return e->code;
	if (pipe2(rp, O_CLOEXEC)) {
		int saved = errno;

		if (out_fd >= 0)
			close(out_fd);
		return err_set(e, -saved, "cannot create a pipe: %s", strerror(saved));
	}
	p = fork();
	child_errno = errno;
	if (p == 0) {
		close(rp[0]);
		child_setup(u, out_fd, -1, self, rp[1]);
		execve(path, argv, envp);
		child_errno = errno;
		if (write(rp[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(126);
		_exit(127);
	}
	close(rp[1]);
	if (out_fd >= 0)
		close(out_fd);
	if (p < 0) {
		close(rp[0]);
		return err_set(e, -child_errno, "cannot fork: %s", strerror(child_errno));
	}
	child_errno = child_exec_errno(rp[0]);
	if (child_errno) {
		reap(p, NULL);
		return err_set(e, -child_errno, "cannot execute '%s': %s", path, strerror(child_errno));
	}
	*pid = p;
	return 0;
}

bool appsrv_exited(pid_t pid, int *status)
{
	int st = 0;
	pid_t r;

	do
		r = waitpid(pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return false;
	if (status)
		*status = st;
	return true;	/* exited, or not our child (ECHILD): gone either way */
}

int appsrv_stop(pid_t pid, int sig, unsigned timeout_ms, int *status)
{
	uint64_t deadline = harness_now_ns() + (uint64_t)timeout_ms * 1000000u;

	if (pid <= 0)
		return -ECHILD;
	if (appsrv_exited(pid, status))
		return -ECHILD;
	if (kill(pid, sig) && errno == ESRCH) {
		reap(pid, status);
		return -ECHILD;
	}
	/* the exit of a child, polled: no signal handler to race with the runner's */
	while (harness_now_ns() < deadline) {
		if (appsrv_exited(pid, status))
			return 0;
		harness_sleep_ms(5);
	}
	kill(pid, SIGKILL);
	reap(pid, status);
	return -ETIMEDOUT;
}

static void out_add(struct appsrv_out *o, const char *chunk, size_t n)
{
	size_t room = APPSRV_OUT_MAX - o->len;

	if (n > room) {
		o->truncated = true;
		n = room;
	}
	memcpy(o->buf + o->len, chunk, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/*
 * The child's output on fd until end of file into out, with o->tick every
 * tick_ms and the deadline timeout_ms after t0: -ETIMEDOUT when it passes
 * first (the caller kills the child).
 */
static int run_collect(const char *path, int fd, const struct appsrv_run_opts *o, uint64_t t0,
		       struct appsrv_out *out, struct err *e)
{
	uint64_t last_tick, deadline;
	char chunk[4096];
	bool open_out = true;
	int ret = 0;

	last_tick = t0;
	deadline = o->timeout_ms ? t0 + o->timeout_ms * 1000000u : UINT64_MAX;
	while (open_out) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		uint64_t now = harness_now_ns(), wake = deadline;
		int ms, r;

		if (o->tick && o->tick_ms && last_tick + (uint64_t)o->tick_ms * 1000000u < wake)
			wake = last_tick + (uint64_t)o->tick_ms * 1000000u;
		ms = wake <= now ? 0 : (wake - now) / 1000000u > 60000 ? 60000 : (int)((wake - now) / 1000000u) + 1;
		r = poll(&pfd, 1, ms);
		if (r < 0 && errno != EINTR) {
			ret = err_set(e, -errno, "poll: %s", strerror(errno));
			break;
		}
		now = harness_now_ns();
		if (r > 0) {
			ssize_t n = read(fd, chunk, sizeof(chunk));

			if (n < 0 && errno != EINTR && errno != EAGAIN) {
				ret = err_set(e, -errno, "cannot read the output of '%s': %s", path,
					      strerror(errno));
				break;
			}
			if (n == 0)
				open_out = false;
			else if (n > 0)
				out_add(out, chunk, (size_t)n);
		}
		if (o->tick && o->tick_ms && now >= last_tick + (uint64_t)o->tick_ms * 1000000u) {
			o->tick(o->opaque);
			last_tick = harness_now_ns();
		}
		if (open_out && now >= deadline) {
			ret = err_set(e, -ETIMEDOUT, "'%s' still running after %.0f s: killed", path,
				      (double)o->timeout_ms / 1e3);
			break;
		}
	}
	return ret;
}

int appsrv_run(const char *path, char *const argv[], const struct appsrv_run_opts *o, struct appsrv_out *out,
	       int *status, uint64_t *wall_ns, struct err *e)
{
	uint64_t t0;
	int op[2], rp[2], child_errno, ret = 0, err_fd;
	pid_t self = getpid(), p;

	memset(out, 0, sizeof(*out));
	*status = 0;
	*wall_ns = 0;
	err_fd = log_open(o->err_log, o->user, e);
	if (err_fd < -1)
		return e->code;
	if (pipe2(op, O_CLOEXEC)) {
		ret = err_set(e, -errno, "cannot create a pipe: %s", strerror(errno));
		if (err_fd >= 0)
			close(err_fd);
		return ret;
	}
	if (pipe2(rp, O_CLOEXEC)) {
		ret = err_set(e, -errno, "cannot create a pipe: %s", strerror(errno));
		close(op[0]);
		close(op[1]);
		if (err_fd >= 0)
			close(err_fd);
		return ret;
	}
	t0 = harness_now_ns();
	p = fork();
	child_errno = errno;
	if (p == 0) {
		close(op[0]);
		close(rp[0]);
		child_setup(o->user, op[1], err_fd, self, rp[1]);
		execve(path, argv, o->envp);
		child_errno = errno;
		if (write(rp[1], &child_errno, sizeof(child_errno)) < 0)
			_exit(126);
		_exit(127);
	}
	close(op[1]);
	close(rp[1]);
	if (err_fd >= 0)
		close(err_fd);
	if (p < 0) {
		ret = err_set(e, -child_errno, "cannot fork: %s", strerror(child_errno));
		close(op[0]);
		close(rp[0]);
		return ret;
	}
	child_errno = child_exec_errno(rp[0]);
	if (child_errno) {
		close(op[0]);
		reap(p, status);
		return err_set(e, -child_errno, "cannot execute '%s': %s", path, strerror(child_errno));
	}
	ret = run_collect(path, op[0], o, t0, out, e);
	close(op[0]);
	if (ret)
		kill(p, SIGKILL);
	reap(p, status);
	*wall_ns = harness_now_ns() - t0;
	return ret;
}

void appsrv_last_line(const char *text, size_t n, char *out, size_t len)
{
	size_t end = n, start, k, i;

	while (end && (text[end - 1] == '\n' || text[end - 1] == '\r' || text[end - 1] == ' '))
		end--;
	start = end;
	while (start && text[start - 1] != '\n')
		start--;
	k = end - start < len - 1 ? end - start : len - 1;
	for (i = 0; i < k; i++) {
		unsigned char c = (unsigned char)text[start + i];

		out[i] = c >= 0x20 && c <= 0x7e ? (char)c : '?';
	}
	out[k] = '\0';
}

void appsrv_log_tail(const char *path, char *out, size_t len)
{
	char buf[4096];
	ssize_t n = -1;
	off_t size;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;

	out[0] = '\0';
	if (fd < 0)
		return;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size >= 0)
		n = pread(fd, buf, sizeof(buf), size > (off_t)sizeof(buf) ? size - (off_t)sizeof(buf) : 0);
	close(fd);
	if (n > 0)
		appsrv_last_line(buf, (size_t)n, out, len);
}

int appsrv_read_file(const char *path, char *buf, size_t len, size_t *n, struct err *e)
{
	size_t have = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	*n = 0;
	if (fd < 0)
		return err_set(e, -errno, "cannot open '%s': %s", path, strerror(errno));
	for (;;) {
		ssize_t r = read(fd, buf + have, len - 1 - have);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int saved = errno;

			close(fd);
			return err_set(e, -saved, "cannot read '%s': %s", path, strerror(saved));
		}
		if (r == 0)
			break;
		have += (size_t)r;
		if (have == len - 1) {
			close(fd);
			return err_set(e, -E2BIG, "'%s' is longer than %zu bytes", path, len - 2);
		}
	}
	close(fd);
	buf[have] = '\0';
	*n = have;
	return 0;
}

/* ---- parsers ----------------------------------------------------------------- */

bool appsrv_next_line(const char *text, size_t n, size_t *pos, const char **s, size_t *len)
{
	const char *nl;

	if (*pos >= n)
		return false;
	*s = text + *pos;
	nl = memchr(*s, '\n', n - *pos);
	*len = nl ? (size_t)(nl - *s) : n - *pos;
	*pos += *len + (nl ? 1 : 0);
	return true;
}

struct rollup {
	struct proc_mem *m;
	unsigned maps;
};

/* the one pseudo-mapping of smaps_rollup: its sums */
static int rollup_fields(const struct smaps_map *sm, void *ctx, struct err *e)
{
	struct rollup *ru = ctx;
	struct proc_mem *m = ru->m;

	if (ru->maps++)
		return err_set(e, -EBADMSG, "smaps_rollup: more than one mapping header");
	m->rss = sm->kb[SMAPS_RSS] * 1024;
	m->anon = sm->kb[SMAPS_ANON] * 1024;
	m->anon_huge = sm->kb[SMAPS_ANON_HUGE] * 1024;
	m->have_anon_huge = sm->have[SMAPS_ANON_HUGE];
	m->shmem_pmd = sm->kb[SMAPS_SHMEM_PMD] * 1024;
	m->have_shmem_pmd = sm->have[SMAPS_SHMEM_PMD];
	if (!sm->have[SMAPS_RSS] || !sm->have[SMAPS_ANON])
		return err_set(e, -EBADMSG, "smaps_rollup without %s", sm->have[SMAPS_RSS] ? "Anonymous" : "Rss");
	return 0;
}

int proc_mem_parse(const char *text, size_t n, struct proc_mem *m, struct err *e)
{
	struct rollup ru = { m, 0 };
	int r;

	memset(m, 0, sizeof(*m));
	r = smaps_parse_text(text, n, 256, APPSRV_LINE_MAX, rollup_fields, &ru, e);
	if (r)
		return r;
	if (!ru.maps)
		return err_set(e, -EBADMSG, "smaps_rollup without Rss");
	if (m->anon_huge > m->anon)
		return err_set(e, -EBADMSG, "smaps_rollup: AnonHugePages above Anonymous");
	return 0;
}

int proc_mem_read(const char *root, pid_t pid, struct proc_mem *m, struct err *e)
{
	char path[512], buf[8192];
	size_t n;
	int r;

	snprintf(path, sizeof(path), "%s/proc/%d/smaps_rollup", root, (int)pid);
	r = appsrv_read_file(path, buf, sizeof(buf), &n, e);
	if (r)
		return r;
	return proc_mem_parse(buf, n, m, e) ? err_wrap(e, "'%s'", path) : 0;
}

/* the largest rw-s mapping so far in ctx (the first of equals) */
static int largest_shared(const struct smaps_map *m, void *ctx, struct err *e)
{
	struct shm_vma *v = ctx;

	(void)e;
	if (strcmp(m->perms, "rw-s") || (v->end && m->end - m->start <= v->end - v->start))
		return 0;
	v->start = m->start;
	v->end = m->end;
	v->rss = m->kb[SMAPS_RSS] * 1024;
	v->shmem_pmd = m->kb[SMAPS_SHMEM_PMD] * 1024;
	v->have_shmem_pmd = m->have[SMAPS_SHMEM_PMD];
	snprintf(v->name, sizeof(v->name), "%.*s", (int)sizeof(v->name) - 1, m->name);	/* cut */
	return 0;
}

int shm_vma_parse(const char *text, size_t n, struct shm_vma *v, struct err *e)
{
	int r;

	memset(v, 0, sizeof(*v));
	r = smaps_parse_text(text, n, APPSRV_SMAPS_LINES, APPSRV_LINE_MAX, largest_shared, v, e);
	if (r)
		return r;
	if (!v->end)
		return -ENOENT;
	if (v->shmem_pmd > v->rss || v->rss > v->end - v->start)
		return err_set(e, -EBADMSG, "smaps: mapping %" PRIx64 " with ShmemPmdMapped above Rss or Rss "
			       "above its size", v->start);
	return 0;
}

int shm_vma_read(const char *root, pid_t pid, struct shm_vma *v, struct err *e)
{
	char path[512];
	size_t n;
	char *buf = malloc(APPSRV_SMAPS_MAX);
	int r;

	if (!buf)
		return err_set(e, -ENOMEM, "out of memory reading smaps");
	snprintf(path, sizeof(path), "%s/proc/%d/smaps", root, (int)pid);
	r = appsrv_read_file(path, buf, APPSRV_SMAPS_MAX, &n, e);
	if (!r)
		r = shm_vma_parse(buf, n, v, e);
	free(buf);
	return r;
}

int proc_stat_ppid(const char *text, size_t n, pid_t *ppid)
{
	const char *p = NULL, *q;
	char num[16];
	size_t i, d;
	uint64_t v;

	for (i = n; i > 0; i--)
		if (text[i - 1] == ')') {
			p = text + i;
			break;
		}
	/* ") S 123 ...": a space, the state letter, a space, the ppid */
	if (!p || (size_t)(text + n - p) < 5 || p[0] != ' ' || p[2] != ' ')
		return -EBADMSG;
	q = p + 3;
	for (d = 0; q + d < text + n && q[d] >= '0' && q[d] <= '9'; d++)
		;
	if (d == 0 || d >= sizeof(num) || q + d >= text + n || q[d] != ' ')
		return -EBADMSG;
	memcpy(num, q, d);
	num[d] = '\0';
	if (parse_u64(num, &v) || v > INT32_MAX)
		return -EBADMSG;
	*ppid = (pid_t)v;
	return 0;
}

int proc_children(const char *root, pid_t ppid, pid_t *pids, size_t max, size_t *n, struct err *e)
{
	char path[512], buf[1024];
	struct dirent *d;
	DIR *dir;

	*n = 0;
	snprintf(path, sizeof(path), "%s/proc", root);
	dir = opendir(path);
	if (!dir)
		return err_set(e, -errno, "cannot list '%s': %s", path, strerror(errno));
	while ((d = readdir(dir)) && *n < max) {
		struct err ignore = ERR_INIT;
		uint64_t pid;
		pid_t parent;
		size_t len;

		if (parse_u64(d->d_name, &pid) || pid == 0 || pid > INT32_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/proc/%s/stat", root, d->d_name);
		/* a process that exits meanwhile is not a child any more */
		if (appsrv_read_file(path, buf, sizeof(buf), &len, &ignore) ||
		    proc_stat_ppid(buf, len, &parent) || parent != ppid)
			continue;
		pids[(*n)++] = (pid_t)pid;
	}
	closedir(dir);
	return 0;
}

int passwd_find(const char *text, size_t n, const char *name, uid_t *uid, gid_t *gid)
{
	size_t pos = 0, len, nl = strlen(name);
	const char *l;

	while (appsrv_next_line(text, n, &pos, &l, &len)) {
		const char *f[7];
		char num[16];
		size_t nf = 1, i, flen;
		uint64_t v[2];

		if (len <= nl || memcmp(l, name, nl) || l[nl] != ':')
			continue;
		f[0] = l;
		for (i = 0; i < len && nf < 8; i++)
			if (l[i] == ':') {
				if (nf == 7)
					return -EBADMSG;
				f[nf++] = l + i + 1;
			}
		if (nf != 7)
			return -EBADMSG;
		for (i = 0; i < 2; i++) {
			flen = (size_t)(f[3 + i] - f[2 + i]) - 1;
			if (flen == 0 || flen >= sizeof(num))
				return -EBADMSG;
			memcpy(num, f[2 + i], flen);
			num[flen] = '\0';
			if (parse_u64(num, &v[i]) || v[i] > INT32_MAX)
				return -EBADMSG;
		}
		*uid = (uid_t)v[0];
		*gid = (gid_t)v[1];
		return 0;
	}
	return -ENOENT;
}
