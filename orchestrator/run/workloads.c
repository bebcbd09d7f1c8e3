#include "orchestrator/run/workloads.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "images/spawn.h"
#include "lib/clock.h"
#include "lib/parse.h"

int workloads_describe(const char *guest_bin, char *buf, size_t len, struct err *e)
{
	const char *argv[] = { guest_bin, "workloads", NULL };
	int r = spawn_run(argv, NULL, buf, len, e);

	return r ? err_wrap(e, "cannot list workloads of '%s'", guest_bin) : 0;
}

int workloads_list(const char *guest_bin, struct workload_info *wl, size_t max, size_t *n, struct err *e)
{
	char *buf = malloc(1 << 16), *line, *save = NULL;
	int r;

	*n = 0;
	if (!buf)
		return err_set(e, -ENOMEM, "out of memory");
	r = workloads_describe(guest_bin, buf, 1 << 16, e);
	for (line = r ? NULL : strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t l = strlen(line), i;

		if (line[0] == ' ' || line[0] == '\t') {
			const char *p = line + strspn(line, " \t");

			if (*n == 0)
				continue;
			wl[*n - 1].has_size |= !strncmp(p, "--size=", 7);
			wl[*n - 1].has_accesses |= !strncmp(p, "--accesses=", 11);
			wl[*n - 1].has_madvise |= !strncmp(p, "--madvise=", 10);
			wl[*n - 1].has_src |= !strncmp(p, "--src=", 6);
			continue;
		}
		for (i = 0; i < l; i++)
			if (!((line[i] >= 'a' && line[i] <= 'z') || (line[i] >= '0' && line[i] <= '9') || line[i] == '_'))
				break;
		if (i != l || l >= WORKLOAD_NAME_MAX) {
			r = err_set(e, -EPROTO, "'%s workloads' printed an unexpected line", guest_bin);
			break;
		}
		if (*n >= max) {
			r = err_set(e, -E2BIG, "'%s' offers more than %zu workloads", guest_bin, max);
			break;
		}
		memset(&wl[*n], 0, sizeof(wl[*n]));
		memcpy(wl[(*n)++].name, line, l + 1);
	}
	if (!r && *n == 0)
		r = err_set(e, -EPROTO, "'%s workloads' listed no workload", guest_bin);
	free(buf);
	return r;
}

const struct workload_info *workload_find(const struct workload_info *wl, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(wl[i].name, name))
			return &wl[i];
	return NULL;
}

int workloads_select(const char *spec, const struct workload_info *avail, size_t navail,
		     char out[][WORKLOAD_NAME_MAX], size_t max, size_t *n, struct err *e)
{
	char buf[256], list[WORKLOADS_MAX * WORKLOAD_NAME_MAX] = "", *tok, *save = NULL;
	size_t i, k;

	*n = 0;
	for (i = 0; i < navail; i++) {
		strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, avail[i].name, sizeof(list) - strlen(list) - 1);
	}
	if (!strcmp(spec, "all")) {
		for (i = 0; i < navail && i < max; i++)
			strcpy(out[(*n)++], avail[i].name);
		return 0;
	}
	if (strlen(spec) >= sizeof(buf))
		return err_set(e, -EINVAL, "workload list too long");
	if (parse_list_check(spec))
		return err_set(e, -EINVAL, "empty item in workload list '%s': separate workloads "
			       "with single commas (e.g. memset,tlb)", spec);
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool found = false, dup = false;

		for (i = 0; i < navail; i++)
			found |= !strcmp(avail[i].name, tok);
		if (!found)
			return err_set(e, -EINVAL, "unknown workload '%.64s': available: %s, or all", tok, list);
		for (k = 0; k < *n; k++)
			dup |= !strcmp(out[k], tok);
		if (dup)
			continue;
		if (*n >= max)
			return err_set(e, -E2BIG, "too many workloads");
		strcpy(out[(*n)++], tok);
	}
	if (*n == 0)
		return err_set(e, -EINVAL, "empty workload list: available: %s, or all", list);
	return 0;
}

struct line_ctx {
	local_record_fn fn;
	void *opaque;
	int stop;
};

static int on_line(void *opaque, enum rec_line_kind kind, const char *line, size_t len)
{
	struct line_ctx *lc = opaque;
	struct record rec;
	char why[128];

	if (kind == REC_LINE_OVERSIZED)
		return lc->fn(lc->opaque, NULL, "line longer than the record limit");
	if (rec_parse(line, len, &rec, why, sizeof(why)))
		return lc->fn(lc->opaque, NULL, why);
	return lc->fn(lc->opaque, &rec, NULL);
}

int workload_run_local(const char *guest_bin, const char *const *args, int timeout_ms,
		       volatile const sig_atomic_t *stop, local_record_fn fn, void *opaque, struct err *e)
{
	const char *argv[32];
	struct rec_reader *rd = malloc(sizeof(*rd));
	struct line_ctx lc = { fn, opaque, 0 };
	int p[2], status = 0, r = 0, devnull;
	double deadline = (mono_s() * 1e3) + timeout_ms;
	size_t n = 0;
	pid_t pid;

	if (!rd)
		return err_set(e, -ENOMEM, "out of memory");
	argv[n++] = guest_bin;
	argv[n++] = "workload";
	while (args && *args && n < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC) < 0) {
		free(rd);
		return err_set(e, -errno, "cannot create a pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		r = err_set(e, -errno, "cannot fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		free(rd);
		return r;
	}
	if (pid == 0) {
		devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 2);
		}
		dup2(p[1], 1);
		signal(SIGPIPE, SIG_DFL);
		execv(guest_bin, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(p[1]);
	rec_reader_init(rd);
	for (;;) {
		struct pollfd pfd = { p[0], POLLIN, 0 };
		char buf[4096];
		ssize_t got;
		int left = (int)(deadline - (mono_s() * 1e3));

		if (stop && *stop) {
			r = err_set(e, -EINTR, "interrupted");
			break;
		}
		if (left <= 0) {
			r = err_set(e, -ETIMEDOUT, "workload '%s' did not finish within %d s: killed it", args ? args[0] : "?",
				    timeout_ms / 1000);
			break;
		}
		if (poll(&pfd, 1, left < 100 ? left : 100) < 0) {
			if (errno == EINTR)
				continue;
			r = err_set(e, -errno, "poll: %s", strerror(errno));
			break;
		}
		if (!pfd.revents)
			continue;
		got = read(p[0], buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;	/* EOF: the child closed stdout */
		if (rec_reader_feed(rd, buf, (size_t)got, on_line, &lc)) {
			r = err_set(e, -EPROTO, "stopped reading workload output");
			break;
		}
	}
	if (r)
		kill(pid, SIGKILL);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!r && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		if (WIFSIGNALED(status))
			r = err_set(e, -EIO, "workload '%s' was killed by signal %d", args ? args[0] : "?", WTERMSIG(status));
		else
			r = err_set(e, -EIO, "workload '%s' exited with status %d", args ? args[0] : "?",
				    WEXITSTATUS(status));
	}
	free(rd);
	return r;
}
