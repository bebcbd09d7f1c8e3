/*
 * forward: one workload child of the runner: fork + exec, its stdout
 * records checked and re-sequenced onto the runner's stream, killed at its
 * timeout, a fail record for whatever it did not report itself. Never exits.
 */
#include "forward.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

#define MALFORMED "workload printed a malformed record: "

/* ---- forwarding a child's records --------------------------------------- */

struct fwd {
	struct emitter *em;
	const struct record *ctx;
	struct fwd_stats *st;
	uint32_t want_seq;
	struct err *e;
};

static int fwd_bad(struct fwd *f, const char *why)
{
	char reason[256];	/* cut to a record value on send */

	f->st->malformed++;
	if (f->st->malformed > RUNNER_MAX_BAD_LINES)
		return 0;	/* reported enough: drop the rest */
	snprintf(reason, sizeof(reason), MALFORMED "%s%s", why,
		 f->st->malformed == RUNNER_MAX_BAD_LINES ? " (further ones dropped)" : "");
	return emitter_send_reason(f->em, REC_FAIL, f->ctx, reason, f->e);
}

static int fwd_line(void *opaque, enum rec_line_kind kind, const char *line, size_t len)
{
	struct fwd *f = opaque;
	struct record r;
	char why[128];
	int ret;

	if (kind == REC_LINE_OVERSIZED) {
		snprintf(why, sizeof(why), "line longer than %d bytes", REC_MAX_LINE);
		return fwd_bad(f, why);
	}
	f->st->lines++;
	if (rec_parse(line, len, &r, why, sizeof(why)))
		return fwd_bad(f, why);
	if (r.type == REC_HELLO || r.type == REC_END) {
		snprintf(why, sizeof(why), "'%s' records belong to the runner",
			 rec_type_name(r.type));
		return fwd_bad(f, why);
	}
	if (r.seq != f->want_seq) {
		snprintf(why, sizeof(why), "sequence %" PRIu32 " where %" PRIu32 " was due", r.seq,
			 f->want_seq);
		f->want_seq = r.seq + 1;
		return fwd_bad(f, why);
	}
	f->want_seq++;
	ret = emitter_send(f->em, &r, f->e);	/* renumbered in the runner's stream */
	if (ret)
		return ret;
	f->st->forwarded++;
	f->st->by_type[r.type]++;
	return 0;
}

/* the host's words on the stream's fd: its stop word creates the stop file; false when the fd is quiet */
static bool watch_read(int fd, const struct fwd_watch *w, char *got, size_t cap, size_t *have)
{
	ssize_t n = read(fd, got + *have, cap - 1 - *have);

	if (n <= 0)
		return false;
	*have += (size_t)n;
	got[*have] = '\0';
	if (strstr(got, REC_PROBE_STOP)) {
		int sf = open(w->stop_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

		if (sf >= 0)
			close(sf);
		*have = 0;
	} else if (*have == cap - 1) {
		*have = 0;	/* no word of ours: drop it */
	}
	return true;
}

static int forward_loop(int in_fd, struct emitter *em, const struct record *context, uint64_t deadline_ns,
			const struct fwd_watch *w, struct fwd_stats *st, struct err *e)
{
	struct fwd f = { em, context, st, 0, e };
	struct rec_reader rd;
	char buf[4096], words[64];
	size_t have = 0;
	uint64_t quiet_until = 0;	/* the host's side hung up: look again after a while */
	int ret;

	rec_reader_init(&rd);
	for (;;) {
		struct pollfd pfd[2] = { { in_fd, POLLIN, 0 }, { w ? em->fd : -1, POLLIN, 0 } };
		uint64_t now = harness_now_ns();
		int wait = -1, r;
		ssize_t n;

		if (pfd[1].fd >= 0 && now < quiet_until) {
			pfd[1].fd = -1;
			wait = (int)((quiet_until - now) / 1000000u) + 1;
		}
		if (deadline_ns) {
			int left;

			if (now >= deadline_ns)
				return -ETIMEDOUT;
			left = (int)((deadline_ns - now) / 1000000u) + 1;
			if ((deadline_ns - now) / 1000000u > 60000)
				left = 60000;
			if (wait < 0 || left < wait)
				wait = left;
		}
		r = poll(pfd, 2, wait);
		if (r < 0 && errno != EINTR)
			return err_set(e, -errno, "cannot poll workload output: %s", strerror(errno));
		if (r <= 0)
			continue;
		if (w && pfd[1].revents &&
		    !((pfd[1].revents & POLLIN) && watch_read(em->fd, w, words, sizeof(words), &have)))
			quiet_until = harness_now_ns() + 100000000u;
		if (!pfd[0].revents)
			continue;
		n = read(in_fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return err_set(e, -errno, "cannot read workload output: %s", strerror(errno));
		if (n == 0)
			break;
		ret = rec_reader_feed(&rd, buf, (size_t)n, fwd_line, &f);
		if (ret)
			return ret;
	}
	if (rd.len && !rd.overflow)
		return fwd_bad(&f, "output ends inside a line (no newline)");
	return 0;
}

int runner_forward(int in_fd, struct emitter *em, const struct record *context,
		   uint64_t deadline_ns, struct fwd_stats *st, struct err *e)
{
	return forward_loop(in_fd, em, context, deadline_ns, NULL, st, e);
}

/* ---- running one child ---------------------------------------------------- */

static int send_fail(struct emitter *em, const struct record *ctx, const char *key,
		     int64_t val, const char *reason, struct err *e)
{
	struct record r = *ctx;

	if (key)
		rec_add_i64(&r, key, val);
	return emitter_send_reason(em, REC_FAIL, &r, reason, e);
}

/* the exit status, waiting until deadline_ns; -ETIMEDOUT if it is still running */
static int wait_child(pid_t pid, uint64_t deadline_ns, int *status)
{
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);

		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (harness_now_ns() >= deadline_ns)
			return -ETIMEDOUT;
		harness_sleep_ms(5);
	}
}

static void child_exec(char *const argv[], int out_fd, int err_fd)
{
	int saved, nul;

	signal(SIGPIPE, SIG_DFL);
	if (dup2(out_fd, STDOUT_FILENO) < 0)
		goto fail;
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (nul >= 0)
		dup2(nul, STDIN_FILENO);
	execv(argv[0], argv);
fail:
	saved = errno;
	if (write(err_fd, &saved, sizeof(saved)) < 0)
		_exit(126);
	_exit(127);
}


static int exec_child(char *const argv[], struct emitter *em, const struct record *context,
		      uint64_t timeout_ms, const struct fwd_watch *w, struct fwd_stats *st, pid_t *held,
		      struct err *e)
{
	uint64_t deadline = harness_now_ns() + timeout_ms * 1000000u;
	int out[2], ep[2], status = 0, exec_errno = 0, ret;
	char reason[REC_VAL_MAX];
	bool timed_out = false;
	ssize_t n;
	pid_t pid;

	memset(st, 0, sizeof(*st));
	if (pipe2(out, O_CLOEXEC))
		return send_fail(em, context, NULL, 0, "runner cannot create a pipe", e);
	if (pipe2(ep, O_CLOEXEC)) {
		close(out[0]);
		close(out[1]);
		return send_fail(em, context, NULL, 0, "runner cannot create a pipe", e);
	}
	pid = fork();
	if (pid == 0)
		child_exec(argv, out[1], ep[1]);
	close(out[1]);
	close(ep[1]);
	if (pid < 0) {
		close(out[0]);
		close(ep[0]);
		snprintf(reason, sizeof(reason), "runner cannot fork: %s", strerror(errno));
		return send_fail(em, context, NULL, 0, reason, e);
	}
	/* exec succeeded when the close-on-exec pipe closes without a word */
	do
		n = read(ep[0], &exec_errno, sizeof(exec_errno));
	while (n < 0 && errno == EINTR);
	close(ep[0]);
	if (n == (ssize_t)sizeof(exec_errno)) {
		close(out[0]);
		waitpid(pid, &status, 0);
		snprintf(reason, sizeof(reason), "cannot execute '%s': %s", argv[0],
			 strerror(exec_errno));
		return send_fail(em, context, NULL, 0, reason, e);
	}

	if (held)
		*held = -1;
	ret = forward_loop(out[0], em, context, deadline, w, st, e);
	close(out[0]);
	if (ret == -ETIMEDOUT)
		timed_out = true;
	else if (ret) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return ret;
	} else if (held && st->by_type[REC_RESULT] && !st->by_type[REC_FAIL] && !st->by_type[REC_SKIP]) {
		*held = pid;	/* it reported and holds its memory until runner_release() */
		return 0;
	} else if (wait_child(pid, deadline, &status) == -ETIMEDOUT) {
		timed_out = true;	/* closed its output but did not exit */
	}
	if (timed_out) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		return send_fail(em, context, "timeout_ms", (int64_t)timeout_ms, "timeout", e);
	}

	if (st->by_type[REC_FAIL] || st->by_type[REC_SKIP]) {
		return 0;	/* the workload said what went wrong */
	} else if (WIFSIGNALED(status)) {
		snprintf(reason, sizeof(reason), "workload killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
		return send_fail(em, context, "signal", WTERMSIG(status), reason, e);
	} else if (WIFEXITED(status) && WEXITSTATUS(status)) {
		snprintf(reason, sizeof(reason), "workload exited with status %d without a fail record",
			 WEXITSTATUS(status));
		return send_fail(em, context, "exit_status", WEXITSTATUS(status), reason, e);
	} else if (!st->by_type[REC_RESULT]) {
		return send_fail(em, context, "exit_status", 0,
				 "workload exited without a result record", e);
	}
	return 0;
}

int runner_exec(char *const argv[], struct emitter *em, const struct record *context,
		uint64_t timeout_ms, struct fwd_stats *st, struct err *e)
{
	return exec_child(argv, em, context, timeout_ms, NULL, st, NULL, e);
}

int runner_exec_hold(char *const argv[], struct emitter *em, const struct record *context,
		     uint64_t timeout_ms, struct fwd_stats *st, pid_t *held, struct err *e)
{
	return exec_child(argv, em, context, timeout_ms, NULL, st, held, e);
}

int runner_exec_watch(char *const argv[], struct emitter *em, const struct record *context,
		      uint64_t timeout_ms, const struct fwd_watch *w, struct fwd_stats *st, struct err *e)
{
	if (w && w->stop_file)
		unlink(w->stop_file);
	return exec_child(argv, em, context, timeout_ms, w && w->stop_file ? w : NULL, st, NULL, e);
}

void runner_release(pid_t *pids, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++) {
		while (pids[i] > 0 && waitpid(pids[i], NULL, 0) < 0 && errno == EINTR)
			;
		pids[i] = -1;
	}
}
