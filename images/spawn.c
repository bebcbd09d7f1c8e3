#include "images/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define SPAWN_TAIL_MAX 1024	/* stderr bytes kept for the message */
#define SPAWN_TAIL_SHOWN 240	/* at most this much of it in the message */

struct tail {
	char buf[SPAWN_TAIL_MAX];
	size_t len;		/* bytes in buf (the most recent ones) */
};

static void tail_add(struct tail *t, const char *p, size_t n)
{
	if (n >= sizeof(t->buf)) {
		memcpy(t->buf, p + n - sizeof(t->buf), sizeof(t->buf));
		t->len = sizeof(t->buf);
		return;
	}
	if (t->len + n > sizeof(t->buf)) {
		size_t drop = t->len + n - sizeof(t->buf);

		memmove(t->buf, t->buf + drop, t->len - drop);
		t->len -= drop;
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

/*
 * The last lines of the tail as one line, "a; b; c", control chars dropped;
 * if it does not fit in size, the end is kept (the error is usually last).
 */
static void tail_format(const struct tail *t, char *dst, size_t size)
{
	char one[2 * SPAWN_TAIL_MAX + 1];
	size_t n = t->len, i, o = 0, skip;
	bool sep = false;

	if (size == 0)
		return;
	while (n > 0 && (t->buf[n - 1] == '\n' || t->buf[n - 1] == ' '))
		n--;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)t->buf[i];

		if (c == '\n') {
			sep = o > 0;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			c = ' ';
		if (sep) {
			one[o++] = ';';
			one[o++] = ' ';
			sep = false;
		}
		one[o++] = (char)c;
	}
	one[o] = '\0';
	skip = 0;
	if (o + 1 > size) {
		const char *cut;

		skip = o + 1 - size;
		/* start after a separator if one is near */
		cut = strstr(one + skip, "; ");
		if (cut && (size_t)(cut - one) < skip + size / 2)
			skip = (size_t)(cut - one) + 2;
	}
	memcpy(dst, one + skip, o - skip + 1);
}

static bool env_overridden(const char *entry, const char *const *env_add)
{
	const char *eq = strchr(entry, '=');
	size_t len = eq ? (size_t)(eq - entry) : strlen(entry);

	for (; env_add && *env_add; env_add++)
		if (!strncmp(*env_add, entry, len) && (*env_add)[len] == '=')
			return true;
	return false;
}

/* posix_spawn wants char *const[]; the strings are never written to. */
static char *unconst(const char *s)
{
	union {
		const char *c;
		char *m;
	} u = { .c = s };

	return u.m;
}

static char **vec_build(const char *const *a, const char *const *b, bool filter)
{
	size_t na = 0, nb = 0, i, o = 0;
	char **v;

	while (a && a[na])
		na++;
	while (b && b[nb])
		nb++;
	v = calloc(na + nb + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < na; i++)
		if (!filter || !env_overridden(a[i], b))
			v[o++] = unconst(a[i]);
	for (i = 0; i < nb; i++)
		v[o++] = unconst(b[i]);
	v[o] = NULL;
	return v;
}

/* what a child wrote to stdout: up to size - 1 bytes kept, more is an overflow */
struct sink {
	char *out;		/* NULL: stdout goes to /dev/null */
	size_t size, len;
	bool overflow;
};

/*
 * Start av[0] from PATH with envp: stdin /dev/null, stdout to outfd (-1:
 * /dev/null), stderr to errfd. *pid is the child, or -1 when none started.
 */
static int spawn_start(const char *prog, char **av, char **envp, int outfd, int errfd, pid_t *pid,
		       struct err *e)
{
	posix_spawn_file_actions_t fa;
	int rc;

	*pid = -1;
	rc = posix_spawn_file_actions_init(&fa);
	if (rc)
		return err_set(e, -rc, "cannot run '%s': %s", prog, strerror(rc));
	rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc && outfd >= 0)
		rc = posix_spawn_file_actions_adddup2(&fa, outfd, 1);
	else if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null",
						      O_WRONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, errfd, 2);
	if (!rc)
		rc = posix_spawnp(pid, av[0], &fa, NULL, av, envp);
	posix_spawn_file_actions_destroy(&fa);
	if (rc) {
		*pid = -1;
		if (rc == ENOENT)
			return err_set(e, -ENOENT,
				       "cannot run '%s': not found in PATH", prog);
		return err_set(e, -rc, "cannot run '%s': %s", prog,
			       strerror(rc));
	}
	return 0;
}

/* read the child's stderr (into tail) and stdout (into sink) until both reach EOF; each closed then */
static int spawn_drain(const char *prog, int *errfd, int *outfd, struct tail *tail, struct sink *sink,
		       struct err *e)
{
	for (;;) {
		struct pollfd pfd[2];
		char buf[4096];
		nfds_t n = 0;
		ssize_t r;
		nfds_t i;

		if (*errfd >= 0)
			pfd[n++] = (struct pollfd){ .fd = *errfd, .events = POLLIN };
		if (*outfd >= 0)
			pfd[n++] = (struct pollfd){ .fd = *outfd, .events = POLLIN };
		if (n == 0)
			return 0;
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return err_set(e, -errno, "cannot read the output of '%s': %s",
				       prog, strerror(errno));
		}
		for (i = 0; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			r = read(pfd[i].fd, buf, sizeof(buf));
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r <= 0) {
				close(pfd[i].fd);
				if (pfd[i].fd == *errfd)
					*errfd = -1;
				else
					*outfd = -1;
				continue;
			}
			if (pfd[i].fd == *errfd) {
				tail_add(tail, buf, (size_t)r);
			} else if (sink->len + (size_t)r < sink->size) {
				memcpy(sink->out + sink->len, buf, (size_t)r);
				sink->len += (size_t)r;
			} else {
				sink->overflow = true;
			}
		}
	}
}

/* a wait status other than exit 0 as the error, with the end of stderr */
static int spawn_status(const char *prog, int status, const struct tail *tail, struct err *e)
{
	char msg[SPAWN_TAIL_SHOWN + 8];

	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	tail_format(tail, msg, sizeof(msg));
	if (WIFSIGNALED(status))
		return err_set(e, -ECHILD, "'%s' was killed by signal %d%s%s",
			       prog, WTERMSIG(status), msg[0] ? ": " : "", msg);
	return err_set(e, -ECHILD, "'%s' failed with exit status %d%s%s",
		       prog, WEXITSTATUS(status), msg[0] ? ": " : "",
		       msg);
}

int spawn_run(const char *const *argv, const char *const *env_add,
	      char *out, size_t out_size, struct err *e)
{
	const char *prog = argv && argv[0] ? argv[0] : "(null)";
	int errp[2] = { -1, -1 }, outp[2] = { -1, -1 };
	struct sink sink = { out, out_size, 0, false };
	char **av = NULL, **envp = NULL;
	struct tail *tail = NULL;
	pid_t pid = -1;
	int ret, status, i;

	if (!argv || !argv[0] || (out && out_size == 0))
		return err_set(e, -EINVAL, "cannot run a program: no argv given");
	tail = calloc(1, sizeof(*tail));
	av = vec_build(argv, NULL, false);
	envp = vec_build((const char *const *)environ, env_add, true);
	if (!tail || !av || !envp) {
		ret = err_set(e, -ENOMEM, "cannot run '%s': out of memory", prog);
		goto cleanup;
	}
	if (pipe2(errp, O_CLOEXEC) || (out && pipe2(outp, O_CLOEXEC))) {
		ret = err_set(e, -errno, "cannot create a pipe for '%s': %s",
			      prog, strerror(errno));
		goto cleanup;
	}
	ret = spawn_start(prog, av, envp, out ? outp[1] : -1, errp[1], &pid, e);
	if (ret)
		goto cleanup;
	close(errp[1]);
	errp[1] = -1;
	if (out) {
		close(outp[1]);
		outp[1] = -1;
	}
	ret = spawn_drain(prog, &errp[0], &outp[0], tail, &sink, e);
	if (ret)
		goto cleanup;

	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			ret = err_set(e, -errno, "cannot wait for '%s': %s", prog,
				      strerror(errno));
			pid = -1;
			goto cleanup;
		}
	}
	pid = -1;
	if (out)
		out[sink.len] = '\0';
	ret = spawn_status(prog, status, tail, e);
	if (!ret && sink.overflow)
		ret = err_set(e, -EOVERFLOW,
			      "output of '%s' is longer than %zu bytes", prog,
			      out_size - 1);

cleanup:
	if (pid > 0) {
		/* only reached on a read error: do not leave a zombie behind */
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	for (i = 0; i < 2; i++) {
		if (errp[i] >= 0)
			close(errp[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	free(envp);
	free(av);
	free(tail);
	return ret;
}
