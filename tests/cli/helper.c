/*
 * helper for the scripts in tests/cli/, built by them against build/libthpeval.a
 * (the Makefile does not build it). It stands in for the part of `thpeval run`
 * that the scripts cannot reach without libvirt and a guest image:
 *
 *   helper hold ROOT STATE_DIR [KEY=VALUE...]
 *       host_session_begin + host_session_set on ROOT, as a run does; prints
 *       "ready PID" and waits. SIGTERM/SIGINT end the session (restore +
 *       unlock) and exit 0; SIGKILL leaves a stale lock and the journal.
 *   helper results PATH
 *       results_write_json of an empty result set, as a run ends.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host/journal.h"
#include "lib/err.h"
#include "orchestrator/model/results.h"
#include "orchestrator/model/results_json.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int hold(const char *root, const char *state_dir, int n, char **kv)
{
	struct host_session *s = calloc(1, sizeof(*s));
	struct err e = ERR_INIT;
	struct sigaction sa;
	sigset_t block, old;
	bool stale = false;
	int i, rc = 0;

	if (!s)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &old);

	if (host_session_begin(s, root, state_dir, &stale, &e)) {
		fprintf(stderr, "helper: %s\n", e.msg);
		free(s);
		return 1;
	}
	for (i = 0; i < n; i++) {
		char key[THP_KEY_MAX];
		const char *eq = strchr(kv[i], '=');

		if (!eq || (size_t)(eq - kv[i]) >= sizeof(key)) {
			fprintf(stderr, "helper: '%s' is not KEY=VALUE\n", kv[i]);
			rc = 1;
			break;
		}
		memcpy(key, kv[i], (size_t)(eq - kv[i]));
		key[eq - kv[i]] = '\0';
		if (host_session_set(s, key, eq + 1, &e)) {
			fprintf(stderr, "helper: %s\n", e.msg);
			rc = 1;
			break;
		}
	}
	if (!rc) {
		printf("ready %ld%s\n", (long)getpid(), stale ? " stale" : "");
		fflush(stdout);
		while (!stop)
			sigsuspend(&old);
	}
	err_clear(&e);
	if (host_session_end(s, &e)) {
		fprintf(stderr, "helper: %s\n", e.msg);
		rc = 1;
	}
	free(s);
	return rc;
}

static int results(const char *path)
{
	struct results *r = calloc(1, sizeof(*r));
	struct err e = ERR_INIT;
	int rc = 0;

	if (!r)
		return 1;
	results_init(r);
	if (results_write_json(r, path, &e)) {
		fprintf(stderr, "helper: %s\n", e.msg);
		rc = 1;
	}
	results_release(r);
	free(r);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 4 && !strcmp(argv[1], "hold"))
		return hold(argv[2], argv[3], argc - 4, argv + 4);
	if (argc == 3 && !strcmp(argv[1], "results"))
		return results(argv[2]);
	fprintf(stderr, "usage: helper hold ROOT STATE_DIR [KEY=VALUE...] | helper results PATH\n");
	return 2;
}
