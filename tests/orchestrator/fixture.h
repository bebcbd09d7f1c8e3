/*
 * fixture: the files the orchestrator tests read and the scratch directories
 * they write, one copy for every test: paths under THPEVAL_SRCDIR (else the
 * working directory, the repository root under make unit), a whole file read
 * into memory, the TCG 2x2 results loaded, /tmp/thpeval-test-* directories
 * made and removed, a command run in this process with its output redirected.
 * Header-only, for tests; include it after <cmocka.h>.
 */
#ifndef THPEVAL_TESTS_ORCHESTRATOR_FIXTURE_H
#define THPEVAL_TESTS_ORCHESTRATOR_FIXTURE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orchestrator/model/results.h"
#include "orchestrator/model/results_load.h"

#define FIXTURE_2X2 "tests/orchestrator/fixtures/results-tcg-2x2.json"

/* rel (a path from the repository root) under THPEVAL_SRCDIR when it is set */
static inline void fixture_path(char *buf, size_t len, const char *rel)
{
	const char *src = getenv("THPEVAL_SRCDIR");

	snprintf(buf, len, "%s%s%s", src ? src : "", src ? "/" : "", rel);
}

/* the whole file, NUL-terminated, its length in *len (len may be NULL; 0 when unreadable); NULL if unreadable */
static inline char *fixture_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (len)
		*len = 0;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = (size_t)n;
	}
	return buf;
}

/* doc/thpeval.1 as text: font escapes removed, \- as - (the test fails if it cannot be read) */
static inline char *fixture_man_text(void)
{
	char path[4096], *raw, *out, *o;
	const char *p;
	size_t n;

	fixture_path(path, sizeof(path), "doc/thpeval.1");
	raw = fixture_slurp(path, &n);
	if (!raw)
		fail_msg("%s missing (run from the repository root)", path);
	out = calloc(1, n + 1);
	assert_non_null(out);
	for (p = raw ? raw : "", o = out; *p; p++) {
		if (p[0] == '\\' && p[1] == 'f' && p[2]) {	/* \fB \fI \fR \fP */
			p += 2;
			continue;
		}
		if (p[0] == '\\' && (p[1] == '-' || p[1] == '&')) {
			if (p[1] == '-')
				*o++ = '-';
			p++;
			continue;
		}
		*o++ = *p;
	}
	free(raw);
	return out;
}

/* the results file rel loaded (the test fails if it cannot be); free with fixture_results_free() */
static inline struct results *fixture_results_at(const char *rel)
{
	struct results *r = malloc(sizeof(*r));
	struct err e = ERR_INIT;
	char path[4096];

	assert_non_null(r);
	fixture_path(path, sizeof(path), rel);
	if (results_load(path, r, &e))
		fail_msg("%s (run from the repository root)", e.msg);
	return r;
}

/* FIXTURE_2X2 loaded */
static inline struct results *fixture_results(void)
{
	return fixture_results_at(FIXTURE_2X2);
}

static inline void fixture_results_free(struct results *r)
{
	results_release(r);
	free(r);
}

/* a new /tmp/thpeval-test-<who>-XXXXXX, malloc'd; remove with fixture_rm_rf() */
static inline char *fixture_tmpdir(const char *who)
{
	char *d = malloc(64);

	assert_non_null(d);
	snprintf(d, 64, "/tmp/thpeval-test-%s-XXXXXX", who);
	assert_non_null(mkdtemp(d));
	return d;
}

static inline void fixture_rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

/*
 * cmd (a cmd_NAME of orchestrator/cmd/commands.h) run with argv name, args[0..n-1]:
 * its stdout into the file stdout_path (NULL: discarded), its stderr discarded;
 * returns its exit code
 */
static inline int fixture_run_cmd(int (*cmd)(int, char **), const char *name,
				  const char *const *args, size_t n, const char *stdout_path)
{
	char *argv[16];
	int out, err, fd, rc;
	size_t i;

	assert_true(n < 15);
	argv[0] = strdup(name);
	for (i = 0; i < n; i++)
		argv[i + 1] = strdup(args[i]);
	argv[n + 1] = NULL;
	fflush(stdout);
	fflush(stderr);
	out = dup(1);
	err = dup(2);
	fd = open(stdout_path ? stdout_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	close(fd);
	fd = open("/dev/null", O_WRONLY);
	dup2(fd, 2);
	close(fd);
	rc = cmd((int)n + 1, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(out, 1);
	dup2(err, 2);
	close(out);
	close(err);
	for (i = 0; i <= n; i++)
		free(argv[i]);
	return rc;
}

#endif
