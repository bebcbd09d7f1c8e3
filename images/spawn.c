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

int spawn_run(const char *const *argv, const char *const *env_add,
	      char *out, size_t out_size, struct err *e)
{
	const char *prog = argv && argv[0] ? argv[0] : "(null)";
	posix_spawn_file_actions_t fa;
	bool fa_init = false, overflow = false;
	int errp[2] = { -1, -1 }, outp[2] = { -1, -1 };
	char **av = NULL, **envp = NULL;
	struct tail *tail = NULL;
	size_t out_len = 0;
	pid_t pid = -1;
	int ret, status, rc;

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
	rc = posix_spawn_file_actions_init(&fa);
	if (rc) {
		ret = err_set(e, -rc, "cannot run '%s': %s", prog, strerror(rc));
		goto cleanup;
	}
	fa_init = true;
	rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc && out)
		rc = posix_spawn_file_actions_adddup2(&fa, outp[1], 1);
	else if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 1, "/dev/null",
						      O_WRONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, errp[1], 2);
	if (!rc)
		rc = posix_spawnp(&pid, argv[0], &fa, NULL, av, envp);
	if (rc) {
		pid = -1;
		if (rc == ENOENT)
			ret = err_set(e, -ENOENT,
				      "cannot run '%s': not found in PATH", prog);
		else
			ret = err_set(e, -rc, "cannot run '%s': %s", prog,
				      strerror(rc));
		goto cleanup;
	}
	close(errp[1]);
	errp[1] = -1;
	if (out) {
		close(outp[1]);
		outp[1] = -1;
	}

	/* drain stdout and stderr until both reach EOF */
	for (;;) {
		struct pollfd pfd[2];
		char buf[4096];
		nfds_t n = 0;
		ssize_t r;
		nfds_t i;

		if (errp[0] >= 0)
			pfd[n++] = (struct pollfd){ .fd = errp[0], .events = POLLIN };
		if (outp[0] >= 0)
			pfd[n++] = (struct pollfd){ .fd = outp[0], .events = POLLIN };
		if (n == 0)
			break;
		if (poll(pfd, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			ret = err_set(e, -errno, "cannot read the output of '%s': %s",
				      prog, strerror(errno));
			goto cleanup;
		}
		for (i = 0; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			r = read(pfd[i].fd, buf, sizeof(buf));
			if (r < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (r <= 0) {
				close(pfd[i].fd);
				if (pfd[i].fd == errp[0])
					errp[0] = -1;
				else
					outp[0] = -1;
				continue;
			}
			if (pfd[i].fd == errp[0]) {
				tail_add(tail, buf, (size_t)r);
			} else if (out_len + (size_t)r < out_size) {
				memcpy(out + out_len, buf, (size_t)r);
				out_len += (size_t)r;
			} else {
				overflow = true;
			}
		}
	}

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
		out[out_len] = '\0';
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char msg[SPAWN_TAIL_SHOWN + 8];

		tail_format(tail, msg, sizeof(msg));
		if (WIFSIGNALED(status))
			ret = err_set(e, -ECHILD, "'%s' was killed by signal %d%s%s",
				      prog, WTERMSIG(status), msg[0] ? ": " : "", msg);
		else
			ret = err_set(e, -ECHILD, "'%s' failed with exit status %d%s%s",
				      prog, WEXITSTATUS(status), msg[0] ? ": " : "",
				      msg);
		goto cleanup;
	}
	if (overflow) {
		ret = err_set(e, -EOVERFLOW,
			      "output of '%s' is longer than %zu bytes", prog,
			      out_size - 1);
		goto cleanup;
	}
	ret = 0;

cleanup:
	if (pid > 0) {
		/* only reached on a read error: do not leave a zombie behind */
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (fa_init)
		posix_spawn_file_actions_destroy(&fa);
	for (rc = 0; rc < 2; rc++) {
		if (errp[rc] >= 0)
			close(errp[rc]);
		if (outp[rc] >= 0)
			close(outp[rc]);
	}
	free(envp);
	free(av);
	free(tail);
	return ret;
}
