/*
 * tests for orchestrator/cmd/commands.c: where thpeval finds its guest program
 * (cmd_guest_bin_lookup()): beside the executable (a checkout's bin/) first,
 * then PREFIX/libexec/thpeval/ (the installed package), else an error naming
 * both places; on fake trees under a temporary directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/err.h"
#include "orchestrator/cmd/commands.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* a file of the fake tree: its path under the root and its mode */
struct file {
	const char *path;
	mode_t mode;
};

struct lookup_case {
	const char *name;
	const char *exe;		/* under the root */
	struct file files[3];
	const char *found;		/* under the root; NULL: not found */
};

static const struct lookup_case lookup_cases[] = {
	{ "checkout: beside the executable", "/src/bin/thpeval",
	  { { "/src/bin/thpeval-guest", 0755 } }, "/src/bin/thpeval-guest" },
	{ "installed: prefix libexec", "/usr/bin/thpeval",
	  { { "/usr/libexec/thpeval/thpeval-guest", 0755 } }, "/usr/libexec/thpeval/thpeval-guest" },
	{ "both: beside wins", "/usr/bin/thpeval",
	  { { "/usr/bin/thpeval-guest", 0755 }, { "/usr/libexec/thpeval/thpeval-guest", 0755 } },
	  "/usr/bin/thpeval-guest" },
	{ "beside not executable: libexec", "/usr/bin/thpeval",
	  { { "/usr/bin/thpeval-guest", 0644 }, { "/usr/libexec/thpeval/thpeval-guest", 0755 } },
	  "/usr/libexec/thpeval/thpeval-guest" },
	{ "local prefix", "/usr/local/bin/thpeval",
	  { { "/usr/local/libexec/thpeval/thpeval-guest", 0755 }, { "/usr/libexec/thpeval/thpeval-guest", 0755 } },
	  "/usr/local/libexec/thpeval/thpeval-guest" },
	{ "libexec of another prefix is not looked at", "/opt/t/bin/thpeval",
	  { { "/usr/libexec/thpeval/thpeval-guest", 0755 } }, NULL },
	{ "libexec without the thpeval directory", "/usr/bin/thpeval",
	  { { "/usr/libexec/thpeval-guest", 0755 } }, NULL },
	{ "neither", "/usr/bin/thpeval", { { NULL, 0 } }, NULL },
	{ "a directory named thpeval-guest", "/usr/bin/thpeval",
	  { { "/usr/libexec/thpeval/thpeval-guest/x", 0755 } }, NULL },
};

/* mkdir -p of path's parent */
static void mkparents(const char *path)
{
	char buf[PATH_MAX];
	char *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			fail_msg("cannot create '%s': %s", buf, strerror(errno));
		*p = '/';
	}
}

static void put_file(const char *path, mode_t mode)
{
	FILE *f;

	mkparents(path);
	f = fopen(path, "w");
	if (!f)
		fail_msg("cannot create '%s': %s", path, strerror(errno));
	fputs("#!/bin/sh\n", f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static void test_lookup(void **state)
{
	size_t i, j;

	for (i = 0; i < N(lookup_cases); i++) {
		const struct lookup_case *c = &lookup_cases[i];
		char root[] = "/tmp/thpeval-lookup.XXXXXX";
		char exe[PATH_MAX], path[PATH_MAX], buf[PATH_MAX], want[PATH_MAX], cmd[PATH_MAX + 16];
		struct err e = ERR_INIT;
		int r;

		assert_non_null(mkdtemp(root));
		snprintf(exe, sizeof(exe), "%s%s", root, c->exe);
		put_file(exe, 0755);
		for (j = 0; j < N(c->files) && c->files[j].path; j++) {
			snprintf(path, sizeof(path), "%s%s", root, c->files[j].path);
			put_file(path, c->files[j].mode);
		}
		buf[0] = '\0';
		r = cmd_guest_bin_lookup(exe, buf, sizeof(buf), &e);
		if (c->found) {
			snprintf(want, sizeof(want), "%s%s", root, c->found);
			if (r || strcmp(buf, want))
				fail_msg("%s: got %d '%s' (%s), want '%s'", c->name, r, buf, e.msg, want);
		} else {
			char beside[PATH_MAX], installed[PATH_MAX], *d;

			snprintf(beside, sizeof(beside), "%s", exe);
			d = strrchr(beside, '/');
			strcpy(d + 1, "thpeval-guest");
			snprintf(installed, sizeof(installed), "%s", exe);
			*strrchr(installed, '/') = '\0';
			d = strrchr(installed, '/');
			strcpy(d, "/libexec/thpeval/thpeval-guest");
			if (r != -ENOENT || !strstr(e.msg, beside) || !strstr(e.msg, installed) ||
			    !strstr(e.msg, "--guest-bin"))
				fail_msg("%s: got %d '%s', want -ENOENT naming '%s' and '%s'", c->name, r, e.msg,
					 beside, installed);
		}
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		assert_int_equal(system(cmd), 0);
	}
}

/* the executable at the filesystem root: PREFIX is "/", no "//libexec" */
static void test_lookup_root_prefix(void **state)
{
	char buf[PATH_MAX];
	struct err e = ERR_INIT;

	assert_int_equal(cmd_guest_bin_lookup("/nonexistent-thpeval", buf, sizeof(buf), &e), -ENOENT);
	assert_non_null(strstr(e.msg, "'/thpeval-guest'"));
	/* "/nonexistent-thpeval" -> EXEDIR "" -> PREFIX "": the libexec path stays absolute */
	assert_non_null(strstr(e.msg, "'/libexec/thpeval/thpeval-guest'"));
}

/* a found path that does not fit buf is an error, never a truncated path */
static void test_lookup_small_buffer(void **state)
{
	char root[] = "/tmp/thpeval-lookup.XXXXXX";
	char exe[PATH_MAX], guest[PATH_MAX], buf[8], cmd[PATH_MAX + 16];
	struct err e = ERR_INIT;

	assert_non_null(mkdtemp(root));
	snprintf(exe, sizeof(exe), "%s/bin/thpeval", root);
	snprintf(guest, sizeof(guest), "%s/bin/thpeval-guest", root);
	put_file(exe, 0755);
	put_file(guest, 0755);
	assert_int_equal(cmd_guest_bin_lookup(exe, buf, sizeof(buf), &e), -ENAMETOOLONG);
	assert_non_null(strstr(e.msg, "too long"));
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_lookup_root_prefix),
		cmocka_unit_test(test_lookup_small_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
