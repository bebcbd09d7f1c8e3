/*
 * tests for lib/fstree.c's readers of a file a user named: a regular file
 * is read whole; a FIFO (refused at once, never waited on), a character
 * device, a directory, a link under RF_NOFOLLOW and a file over the size
 * bound are refused with one line naming the path and what it is; a
 * missing file is -ENOENT. The path and sync helpers: fstree_join refuses a
 * path of PATH_MAX or more, write_file_synced writes 0644 whatever the umask
 * and replaces what was there, fsync_path fails on a missing path.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/fstree.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static char dir[] = "/tmp/thpeval-fstree-XXXXXX";

struct read_case {
	const char *name;
	const char *path;	/* under dir, or absolute */
	unsigned flags;
	size_t max;
	int ret;
	const char *msg;	/* in the error; the content read when ret is 0 */
};

static const struct read_case read_cases[] = {
	{ "regular file read whole", "plain", 0, 64, 0, "hello\n" },
	{ "regular file at the bound", "plain", 0, 6, 0, "hello\n" },
	{ "regular file through a link", "link-plain", 0, 64, 0, "hello\n" },
	{ "over the size bound", "plain", 0, 5, -EFBIG, "'@/plain' is 6 bytes, over the limit of 5" },
	{ "FIFO refused, not waited on", "fifo", 0, 64, -EINVAL, "thing '@/fifo' is a FIFO, not a regular file" },
	{ "FIFO through a link", "link-fifo", 0, 64, -EINVAL, "is a FIFO, not a regular file" },
	{ "character device", "/dev/zero", 0, 64, -EINVAL,
	  "thing '/dev/zero' is a character device, not a regular file" },
	{ "directory", "sub", 0, 64, -EINVAL, "thing '@/sub' is a directory, not a regular file" },
	{ "link refused under RF_NOFOLLOW", "link-plain", RF_NOFOLLOW, 64, -EINVAL,
	  "thing '@/link-plain' is a symbolic link, not a regular file" },
	{ "missing", "none", 0, 64, -ENOENT, "cannot open thing '@/none': No such file or directory" },
};

static void path_of(const char *rel, char *buf, size_t len)
{
	if (rel[0] == '/')
		snprintf(buf, len, "%s", rel);
	else
		snprintf(buf, len, "%s/%s", dir, rel);
}

/* msg with '@' replaced by dir */
static void expand(const char *msg, char *buf, size_t len)
{
	size_t o = 0;

	for (; *msg && o + 1 < len; msg++) {
		if (*msg == '@')
			o += (size_t)snprintf(buf + o, len - o, "%s", dir);
		else
			buf[o++] = *msg;
	}
	buf[o < len ? o : len - 1] = '\0';
}

static void test_read(void **state)
{
	const struct read_case *c = *state;
	struct err e = ERR_INIT;
	char path[256], want[512], *buf = (char *)1;
	struct timespec t0, t1;
	size_t len = 99;
	int r;

	path_of(c->path, path, sizeof(path));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	r = read_regular(path, "thing", "", c->flags, c->max, &buf, &len, &e);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 2);	/* nothing waited on */
	assert_int_equal(r, c->ret);
	if (!r) {
		assert_int_equal(len, strlen(c->msg));
		assert_string_equal(buf, c->msg);
		free(buf);
		return;
	}
	assert_null(buf);
	assert_int_equal(len, 0);
	expand(c->msg, want, sizeof(want));
	if (!strstr(e.msg, want))
		fail_msg("error '%s' does not say '%s'", e.msg, want);
	assert_null(strchr(e.msg, '\n'));
}

/* check_regular opens nothing: the kinds without a descriptor */
static void test_check(void **state)
{
	struct err e = ERR_INIT;
	char path[256];

	(void)state;
	path_of("plain", path, sizeof(path));
	assert_int_equal(check_regular(path, "db", 0, &e), 0);
	path_of("none", path, sizeof(path));
	assert_int_equal(check_regular(path, "db", 0, &e), -ENOENT);
	assert_false(err_isset(&e));
	path_of("fifo", path, sizeof(path));
	assert_int_equal(check_regular(path, "db", 0, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "is a FIFO"));
	err_clear(&e);
	assert_int_equal(check_regular("/dev/zero", "db", 0, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "db '/dev/zero' is a character device"));
}

/* open_regular_flags hands back a blocking descriptor of the regular file */
static void test_open_blocking(void **state)
{
	struct err e = ERR_INIT;
	struct stat st;
	char path[256];
	int fd;

	(void)state;
	path_of("plain", path, sizeof(path));
	fd = open_regular_flags(path, "", "", RF_NOFOLLOW, &st, &e);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	assert_int_equal(st.st_size, 6);
	close(fd);
}

/* fstree_join: "dir/name", or -ENAMETOOLONG naming both when it does not fit */
static void test_join(void **state)
{
	char dst[PATH_MAX], name[PATH_MAX];
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(fstree_join(dst, "/var/cache", "abc", &e), 0);
	assert_string_equal(dst, "/var/cache/abc");
	memset(name, 'x', PATH_MAX - 5);
	name[PATH_MAX - 5] = '\0';
	assert_int_equal(fstree_join(dst, "/abc", name, &e), -ENAMETOOLONG);	/* 5 + (PATH_MAX - 5) */
	assert_non_null(strstr(e.msg, "path too long: '/abc/xxx"));
	err_clear(&e);
	assert_int_equal(fstree_join(dst, "/ab", name, &e), 0);	/* 4 + (PATH_MAX - 5): room for the NUL */
	assert_int_equal(strlen(dst), PATH_MAX - 1);
}

/* write_file_synced: the content whole, 0644 whatever the umask, what was there replaced */
static void test_write_synced(void **state)
{
	struct err e = ERR_INIT;
	char path[256], *buf = NULL;
	struct stat st;
	size_t len = 0;
	mode_t old;

	(void)state;
	path_of("written", path, sizeof(path));
	old = umask(077);
	assert_int_equal(write_file_synced(path, "a longer first content\n", &e), 0);
	assert_int_equal(write_file_synced(path, "id=1\n", &e), 0);
	umask(old);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(read_regular(path, "", "", 0, 64, &buf, &len, &e), 0);
	assert_string_equal(buf, "id=1\n");
	free(buf);
	assert_true(is_regular_file(path));
	assert_int_equal(fsync_path(path, &e), 0);
	assert_int_equal(fsync_path(dir, &e), 0);	/* a directory too */
	assert_int_equal(write_file_synced(path, "", &e), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
	unlink(path);
}

/* the refusals: a missing directory, a missing path to sync; kinds that are not regular files */
static void test_write_refused(void **state)
{
	struct err e = ERR_INIT;
	char path[256];

	(void)state;
	path_of("none/file", path, sizeof(path));
	assert_int_equal(write_file_synced(path, "x", &e), -ENOENT);
	assert_non_null(strstr(e.msg, "cannot create '"));
	err_clear(&e);
	assert_int_equal(fsync_path(path, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "cannot open '"));
	assert_false(is_regular_file(path));
	path_of("fifo", path, sizeof(path));
	assert_false(is_regular_file(path));
	path_of("sub", path, sizeof(path));
	assert_false(is_regular_file(path));
	path_of("link-plain", path, sizeof(path));
	assert_true(is_regular_file(path));
}

static int setup(void **state)
{
	char p[256], t[256];

	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(p, sizeof(p), "%s/plain", dir);
	{
		FILE *f = fopen(p, "w");

		if (!f || fputs("hello\n", f) < 0 || fclose(f))
			return -1;
	}
	snprintf(p, sizeof(p), "%s/fifo", dir);
	if (mkfifo(p, 0600))
		return -1;
	snprintf(p, sizeof(p), "%s/sub", dir);
	if (mkdir(p, 0700))
		return -1;
	snprintf(p, sizeof(p), "%s/link-plain", dir);
	snprintf(t, sizeof(t), "%s/plain", dir);
	if (symlink(t, p))
		return -1;
	snprintf(p, sizeof(p), "%s/link-fifo", dir);
	snprintf(t, sizeof(t), "%s/fifo", dir);
	return symlink(t, p);
}

static int teardown(void **state)
{
	(void)state;
	fstree_remove(dir);
	return 0;
}

int main(void)
{
	struct CMUnitTest tests[N(read_cases) + 5];
	size_t i, n = 0;

	if (access("/dev/zero", R_OK)) {
		printf("skipped: no /dev/zero here\n");
		return 77;
	}
	for (i = 0; i < N(read_cases); i++)
		tests[n++] = (struct CMUnitTest){ read_cases[i].name, test_read, NULL, NULL,
						  (void *)(uintptr_t)&read_cases[i] };
	tests[n++] = (struct CMUnitTest){ "check_regular opens nothing", test_check, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "open_regular_flags: a blocking descriptor", test_open_blocking, NULL,
					  NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "fstree_join: joined, or too long", test_join, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "write_file_synced: whole, 0644, replaced", test_write_synced, NULL,
					  NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "write_file_synced, fsync_path, is_regular_file: refusals",
					  test_write_refused, NULL, NULL, NULL };
	return _cmocka_run_group_tests("lib/fstree", tests, n, setup, teardown);
}
