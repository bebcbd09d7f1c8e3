/* tests for host/lock.c: flock-based exclusion, holder records, stale takeover */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "host/lock.h"
#include "tests/host/fixtures/fakefs.h"

enum child_exit {
	CHILD_RELEASE,		/* host_lock_release, then exit */
	CHILD_DIE,		/* _exit with the lock held, as SIGKILL would leave it */
};

struct holder {
	pid_t pid;
	int go;			/* write end: tell the child to finish */
};

/* fork a child that takes the lock in dir and waits; 0 once it holds it */
static int holder_start(struct holder *h, const char *dir, enum child_exit how)
{
	int ready[2], go[2];
	char c = 0;

	if (pipe(ready) || pipe(go))
		return -1;
	h->pid = fork();
	if (h->pid < 0)
		return -1;
	if (h->pid == 0) {
		struct host_lock l = HOST_LOCK_INIT;
		struct err e = ERR_INIT;

		close(ready[0]);
		close(go[1]);
		alarm(20);
		c = host_lock_take(&l, dir, NULL, &e) ? 'E' : 'R';
		if (write(ready[1], &c, 1) != 1 || c == 'E')
			_exit(1);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		if (how == CHILD_RELEASE)
			host_lock_release(&l);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	h->go = go[1];
	if (read(ready[0], &c, 1) != 1 || c != 'R') {
		close(ready[0]);
		return -1;
	}
	close(ready[0]);
	return 0;
}

static int holder_finish(struct holder *h)
{
	int status;

	if (write(h->go, "x", 1) != 1)
		return -1;
	close(h->go);
	if (waitpid(h->pid, &status, 0) != h->pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void state_dir(const struct fx *f, char *buf, size_t len)
{
	assert_int_equal(fake_join(buf, len, f->dir, "state/thpeval"), 0);
}

static void test_take_release(void **state)
{
	struct fx *f = *state;
	struct host_lock l = HOST_LOCK_INIT;
	struct err e = ERR_INIT;
	char sd[PATH_MAX], rec[256], want[128], info[256];
	bool stale = true;

	state_dir(f, sd, sizeof(sd));
	assert_int_equal(host_lock_take(&l, sd, &stale, &e), 0);
	assert_int_equal(e.code, 0);
	assert_false(stale);
	assert_true(l.fd >= 0);
	assert_int_equal(fake_mode(f->dir, "state/thpeval"), 0700);
	assert_int_equal(fake_mode(f->dir, "state/thpeval/lock"), 0600);
	assert_non_null(fake_read(sd, "lock", rec, sizeof(rec)));
	snprintf(want, sizeof(want), "pid %ld\nstarted ", (long)getpid());
	assert_true(!strncmp(rec, want, strlen(want)));
	assert_non_null(strstr(rec, "\ncmd "));
	assert_int_equal(host_lock_holder(sd, info, sizeof(info)), 0);
	snprintf(want, sizeof(want), "pid %ld (thpeval run started ", (long)getpid());
	assert_true(!strncmp(info, want, strlen(want)));
	host_lock_release(&l);
	assert_int_equal(l.fd, -1);
	/* released: the record is emptied, nobody is described */
	assert_string_equal(fake_read(sd, "lock", rec, sizeof(rec)), "");
	assert_int_equal(host_lock_holder(sd, info, sizeof(info)), -ENOENT);
	assert_int_equal(host_lock_take(&l, sd, &stale, &e), 0);
	assert_false(stale);
	host_lock_release(&l);
}

static void test_busy_from_child(void **state)
{
	struct fx *f = *state;
	struct host_lock l = HOST_LOCK_INIT;
	struct err e = ERR_INIT;
	char sd[PATH_MAX], want[128], info[256];
	struct holder h;
	bool stale = false;

	state_dir(f, sd, sizeof(sd));
	assert_int_equal(holder_start(&h, sd, CHILD_DIE), 0);
	assert_int_equal(host_lock_take(&l, sd, &stale, &e), -EBUSY);
	assert_int_equal(l.fd, -1);
	snprintf(want, sizeof(want), "host settings are locked by pid %ld (thpeval run started ",
		 (long)h.pid);
	assert_true(!strncmp(e.msg, want, strlen(want)));
	assert_non_null(strstr(e.msg, "): wait for it or stop it"));
	assert_int_equal(host_lock_holder(sd, info, sizeof(info)), 0);
	snprintf(want, sizeof(want), "pid %ld ", (long)h.pid);
	assert_true(!strncmp(info, want, strlen(want)));
	/* the holder dies without releasing: its flock goes with it */
	assert_int_equal(holder_finish(&h), 0);
	err_clear(&e);
	assert_int_equal(host_lock_take(&l, sd, &stale, &e), 0);
	assert_true(stale);
	snprintf(want, sizeof(want), "pid %ld ", (long)getpid());
	assert_int_equal(host_lock_holder(sd, info, sizeof(info)), 0);
	assert_true(!strncmp(info, want, strlen(want)));
	host_lock_release(&l);
}

static void test_released_not_stale(void **state)
{
	struct fx *f = *state;
	struct host_lock l = HOST_LOCK_INIT;
	struct err e = ERR_INIT;
	char sd[PATH_MAX];
	struct holder h;
	bool stale = true;

	state_dir(f, sd, sizeof(sd));
	assert_int_equal(holder_start(&h, sd, CHILD_RELEASE), 0);
	assert_int_equal(holder_finish(&h), 0);
	assert_int_equal(host_lock_take(&l, sd, &stale, &e), 0);
	assert_false(stale);
	host_lock_release(&l);
}

static void test_two_in_one_process(void **state)
{
	struct fx *f = *state;
	struct host_lock a = HOST_LOCK_INIT, b = HOST_LOCK_INIT;
	struct err e = ERR_INIT;
	char sd[PATH_MAX];

	/* flock is per open file: a second take in the same process is refused too */
	state_dir(f, sd, sizeof(sd));
	assert_int_equal(host_lock_take(&a, sd, NULL, &e), 0);
	assert_int_equal(host_lock_take(&b, sd, NULL, &e), -EBUSY);
	host_lock_release(&a);
	err_clear(&e);
	assert_int_equal(host_lock_take(&b, sd, NULL, &e), 0);
	host_lock_release(&b);
}

struct bad_dir_case {
	const char *name;
	int (*prepare)(const char *dir);	/* makes dir/state bad */
	int want_rc;
	const char *want_msg;
};

static int make_world_writable(const char *dir)
{
	char p[PATH_MAX];

	if (fake_join(p, sizeof(p), dir, "state") || mkdir(p, 0700))
		return -1;
	return chmod(p, 0777);
}

static int make_file(const char *dir)
{
	return fake_write(dir, "state", "not a directory\n");
}

static int make_lock_dir(const char *dir)
{
	char p[PATH_MAX];

	if (fake_join(p, sizeof(p), dir, "state") || mkdir(p, 0700))
		return -1;
	if (fake_join(p, sizeof(p), dir, "state/lock"))
		return -1;
	return mkdir(p, 0700);
}

static int make_lock_symlink(const char *dir)
{
	char p[PATH_MAX], t[PATH_MAX];

	if (fake_join(p, sizeof(p), dir, "state") || mkdir(p, 0700))
		return -1;
	if (fake_join(p, sizeof(p), dir, "state/lock") || fake_join(t, sizeof(t), dir, "target"))
		return -1;
	return symlink(t, p);
}

static struct bad_dir_case bad_dir_cases[] = {
	{ "state_dir/world_writable", make_world_writable, -EPERM, "is writable by others: 'chmod 700" },
	{ "state_dir/is_a_file", make_file, -ENOTDIR, "is not a directory" },
	{ "state_dir/lock_is_a_directory", make_lock_dir, -EISDIR, "cannot open lock file" },
	{ "state_dir/lock_is_a_symlink", make_lock_symlink, -ELOOP, "cannot open lock file" },
};

static void test_bad_dir(void **state)
{
	struct fx *f = *state;
	const struct bad_dir_case *c = f->row;
	struct host_lock l = HOST_LOCK_INIT;
	struct err e = ERR_INIT;
	char sd[PATH_MAX];

	assert_int_equal(c->prepare(f->dir), 0);
	assert_int_equal(fake_join(sd, sizeof(sd), f->dir, "state"), 0);
	assert_int_equal(host_lock_take(&l, sd, NULL, &e), c->want_rc);
	assert_int_equal(l.fd, -1);
	assert_non_null(strstr(e.msg, c->want_msg));
	assert_false(fake_exists(f->dir, "target"));
}

static void test_holder_edge_cases(void **state)
{
	struct fx *f = *state;
	char info[64] = "junk";

	assert_int_equal(host_lock_holder(f->dir, info, sizeof(info)), -ENOENT);
	assert_string_equal(info, "");
	/* a record without a pid line describes nobody */
	assert_int_equal(fake_write(f->dir, "lock", "started 1\n"), 0);
	assert_int_equal(host_lock_holder(f->dir, info, sizeof(info)), -ENOENT);
	assert_int_equal(fake_write(f->dir, "lock", "pid 42\nstarted x\n"), 0);
	assert_int_equal(host_lock_holder(f->dir, info, sizeof(info)), 0);
	assert_string_equal(info, "pid 42 (thpeval run started at an unknown time)");
	/* release is idempotent and NULL-tolerant */
	host_lock_release(NULL);
	{
		struct host_lock l = HOST_LOCK_INIT;

		host_lock_release(&l);
		host_lock_release(&l);
		assert_int_equal(l.fd, -1);
	}
}

int main(void)
{
	struct CMUnitTest tests[32];
	size_t i, n = 0;

	ADD_ONE("lock/take_release", test_take_release);
	ADD_ONE("lock/busy_from_child_then_dead_holder_taken_over", test_busy_from_child);
	ADD_ONE("lock/released_by_child_not_stale", test_released_not_stale);
	ADD_ONE("lock/second_take_same_process", test_two_in_one_process);
	ADD_TABLE(bad_dir_cases, test_bad_dir);
	ADD_ONE("lock/holder_edge_cases", test_holder_edge_cases);
	return _cmocka_run_group_tests("host/lock", tests, n, NULL, NULL);
}
