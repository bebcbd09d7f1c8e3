/* tests for host/journal.c: save -> journal -> apply -> restore on fake trees */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "host/frag.h"
#include "host/journal.h"
#include "host/ksm.h"
#include "tests/host/fixtures/fakefs.h"

#define THP_REL(x) FAKE_THP "/" x

struct paths {
	char root[PATH_MAX];	/* fake filesystem root, resolved */
	char state[PATH_MAX];
};

static void make_paths(const struct fx *f, struct paths *p)
{
	char tmp[PATH_MAX];

	assert_int_equal(fake_join(tmp, sizeof(tmp), f->dir, "root"), 0);
	assert_int_equal(fake_mkdir_p(tmp), 0);
	assert_non_null(realpath(tmp, p->root));
	assert_int_equal(fake_join(p->state, sizeof(p->state), f->dir, "state"), 0);
	assert_int_equal(fake_thp_tree(p->root, true), 0);
}

static char *journal_text(const struct paths *p, char *buf, size_t len)
{
	return fake_read(p->state, HOST_JOURNAL_NAME, buf, len);
}

static void test_set_restore_byte_for_byte(void **state)
{
	struct fx *f = *state;
	struct host_session s;
	struct err e = ERR_INIT;
	struct paths p;
	char want[PATH_MAX + 256], got[PATH_MAX + 256], buf[128];
	char *before, *after;
	bool stale = true;

	make_paths(f, &p);
	before = fake_snapshot(p.root, "sys");
	assert_int_equal(host_session_begin(&s, p.root, p.state, &stale, &e), 0);
	assert_false(stale);
	assert_false(fake_exists(p.state, HOST_JOURNAL_NAME));
	assert_int_equal(fake_mode(f->dir, "state"), 0700);

	assert_int_equal(host_session_set(&s, "enabled", "always", &e), 0);
	/* on disk, complete and private before anything else happens */
	snprintf(want, sizeof(want), "thpeval-journal 1\npid %ld\nroot %s\nset enabled madvise\n",
		 (long)getpid(), p.root);
	assert_string_equal(journal_text(&p, got, sizeof(got)), want);
	assert_int_equal(fake_mode(f->dir, "state/" HOST_JOURNAL_NAME), 0600);
	assert_false(fake_exists(p.state, HOST_JOURNAL_NAME ".tmp"));
	assert_string_equal(fake_read(p.root, THP_REL("enabled"), buf, sizeof(buf)),
			    "[always] madvise never\n");

	assert_int_equal(host_session_set(&s, "khugepaged/max_ptes_none", "64", &e), 0);
	assert_int_equal(host_session_set(&s, "hugepages-64kB/enabled", "always", &e), 0);
	assert_int_equal(host_session_set(&s, "defrag", "never", &e), 0);
	snprintf(want, sizeof(want),
		 "thpeval-journal 1\npid %ld\nroot %s\nset enabled madvise\nset khugepaged/max_ptes_none 511\n"
		 "set hugepages-64kB/enabled never\nset defrag madvise\n",
		 (long)getpid(), p.root);
	assert_string_equal(journal_text(&p, got, sizeof(got)), want);
	after = fake_snapshot(p.root, "sys");
	assert_string_not_equal(before, after);
	free(after);

	assert_int_equal(host_session_restore(&s, &e), 0);
	after = fake_snapshot(p.root, "sys");
	assert_string_equal(before, after);
	assert_false(fake_exists(p.state, HOST_JOURNAL_NAME));
	/* idempotent */
	assert_int_equal(host_session_restore(&s, &e), 0);
	assert_int_equal(host_session_end(&s, &e), 0);
	assert_int_equal(e.code, 0);
	free(after);
	free(before);
}

static void test_unchanged_not_journaled(void **state)
{
	struct fx *f = *state;
	struct host_session s;
	struct err e = ERR_INIT;
	struct paths p;

	make_paths(f, &p);
	assert_int_equal(host_session_begin(&s, p.root, p.state, NULL, &e), 0);
	assert_int_equal(host_session_set(&s, "enabled", "madvise", &e), 0);
	assert_int_equal(host_session_set(&s, "khugepaged/pages_to_scan", "04096", &e), 0);
	assert_false(fake_exists(p.state, HOST_JOURNAL_NAME));
	assert_int_equal(s.original.n, 0);
	assert_int_equal(host_session_end(&s, &e), 0);
}

static void test_invalid_not_journaled(void **state)
{
	struct fx *f = *state;
	struct host_session s;
	struct err e = ERR_INIT;
	struct paths p;
	char *before, *after;

	make_paths(f, &p);
	before = fake_snapshot(p.root, "sys");
	assert_int_equal(host_session_begin(&s, p.root, p.state, NULL, &e), 0);
	assert_int_equal(host_session_set(&s, "enabled", "sometimes", &e), -EINVAL);
	assert_non_null(strstr(e.msg, "choose one of"));
	err_clear(&e);
	assert_int_equal(host_session_set(&s, "hugepages-8kB/enabled", "always", &e), -EOPNOTSUPP);
	assert_false(fake_exists(p.state, HOST_JOURNAL_NAME));
	err_clear(&e);
	assert_int_equal(host_session_end(&s, &e), 0);
	after = fake_snapshot(p.root, "sys");
	assert_string_equal(before, after);
	free(before);
	free(after);
}

static void test_first_original_wins(void **state)
{
	struct fx *f = *state;
	struct host_session s;
	struct err e = ERR_INIT;
	struct paths p;
	char got[PATH_MAX + 256], buf[128];

	make_paths(f, &p);
	assert_int_equal(host_session_begin(&s, p.root, p.state, NULL, &e), 0);
	assert_int_equal(host_session_set(&s, "enabled", "always", &e), 0);
	assert_int_equal(host_session_set(&s, "enabled", "never", &e), 0);
	assert_int_equal(host_session_set(&s, "enabled", "madvise", &e), 0);	/* back, still journaled */
	assert_non_null(journal_text(&p, got, sizeof(got)));
	assert_non_null(strstr(got, "set enabled madvise\n"));
	assert_null(strstr(got, "set enabled always"));
	assert_null(strstr(got, "set enabled never"));
	assert_int_equal(host_session_set(&s, "enabled", "never", &e), 0);
	assert_int_equal(host_session_end(&s, &e), 0);
	assert_string_equal(fake_read(p.root, THP_REL("enabled"), buf, sizeof(buf)),
			    "always [madvise] never\n");
	assert_false(fake_exists(p.state, HOST_JOURNAL_NAME));
}

static void test_end_safe(void **state)
{
	struct fx *f = *state;
	struct host_session s, t;
	struct err e = ERR_INIT;
	struct paths p;

	make_paths(f, &p);
	assert_int_equal(host_session_begin(&s, p.root, p.state, NULL, &e), 0);
	/* a second session while the first holds the lock: begin fails, end is harmless */
	assert_int_equal(host_session_begin(&t, p.root, p.state, NULL, &e), -EBUSY);
	assert_non_null(strstr(e.msg, "host settings are locked by pid"));
	err_clear(&e);
	assert_int_equal(host_session_end(&t, &e), 0);
	assert_int_equal(host_session_end(&t, &e), 0);
	assert_int_equal(host_session_set(&t, "enabled", "always", &e), -EINVAL);
	err_clear(&e);
	/* ... and did not release the first session's lock */
	assert_int_equal(host_session_begin(&t, p.root, p.state, NULL, &e), -EBUSY);
	err_clear(&e);
	assert_int_equal(host_session_set(&s, "enabled", "always", &e), 0);
	assert_int_equal(host_session_end(&s, &e), 0);
	assert_int_equal(host_session_end(&s, &e), 0);
	assert_int_equal(host_session_end(NULL, &e), 0);
	/* bad root fails begin, end still fine */
	assert_int_equal(host_session_begin(&t, "/nonexistent/thpeval-root", p.state, NULL, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "cannot resolve filesystem root"));
	assert_int_equal(host_session_end(&t, NULL), 0);
}

/* a run that changes settings and is killed before it can restore */
/* a child sets key[i] = val[i] in a session and exits without restoring */
static pid_t crashed_run_with(const struct paths *p, const char *const *key, const char *const *val, size_t n)
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		struct host_session s;
		struct err e = ERR_INIT;
		size_t i;

		alarm(20);
		if (host_session_begin(&s, p->root, p->state, NULL, &e))
			_exit(1);
		for (i = 0; i < n; i++)
			if (host_session_set(&s, key[i], val[i], &e))
				_exit(1);
		_exit(0);	/* no restore, no release: as SIGKILL leaves it */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	return pid;
}

static pid_t crashed_run(const struct paths *p)
{
	static const char *const key[] = { "enabled", "hugepages-2048kB/enabled", "khugepaged/scan_sleep_millisecs" };
	static const char *const val[] = { "always", "never", "100" };

	return crashed_run_with(p, key, val, 3);
}

static void test_crash_restore_journal(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	struct paths p;
	char info[128], want[64], buf[128];
	char *before, *after;
	bool restored = false;
	pid_t child;

	make_paths(f, &p);
	before = fake_snapshot(p.root, "sys");
	child = crashed_run(&p);
	assert_true(fake_exists(p.state, HOST_JOURNAL_NAME));
	assert_string_equal(fake_read(p.root, THP_REL("enabled"), buf, sizeof(buf)),
			    "[always] madvise never\n");
	after = fake_snapshot(p.root, "sys");
	assert_string_not_equal(before, after);
	free(after);

	assert_int_equal(host_restore_journal(p.root, p.state, &restored, info, sizeof(info), &e), 0);
	assert_true(restored);
	snprintf(want, sizeof(want), "pid %ld", (long)child);
	assert_string_equal(info, want);
	after = fake_snapshot(p.root, "sys");
	assert_string_equal(before, after);
	free(after);
	assert_false(fake_exists(p.state, HOST_JOURNAL_NAME));
	/* nothing left: a second restore is a no-op */
	assert_int_equal(host_restore_journal(p.root, p.state, &restored, info, sizeof(info), &e), 0);
	assert_false(restored);
	free(before);
}

static void test_crash_begin_restores_stale(void **state)
{
	struct fx *f = *state;
	struct host_session s;
	struct err e = ERR_INIT;
	struct paths p;
	char *before, *after;
	bool stale = false;
	pid_t child;

	make_paths(f, &p);
	before = fake_snapshot(p.root, "sys");
	child = crashed_run(&p);
	assert_int_equal(host_session_begin(&s, p.root, p.state, &stale, &e), 0);
	assert_true(stale);
	assert_int_equal(s.stale_pid, child);
	assert_true(s.stale_lock);
	after = fake_snapshot(p.root, "sys");
	assert_string_equal(before, after);
	free(after);
	assert_false(fake_exists(p.state, HOST_JOURNAL_NAME));
	/* the session goes on normally */
	assert_int_equal(host_session_set(&s, "enabled", "never", &e), 0);
	assert_int_equal(host_session_end(&s, &e), 0);
	after = fake_snapshot(p.root, "sys");
	assert_string_equal(before, after);
	free(after);
	free(before);
}

static void test_restore_journal_busy(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	struct paths p;
	char info[128], want[64];
	int ready[2], go[2], status;
	bool restored = true;
	char c = 0;
	pid_t pid;

	make_paths(f, &p);
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct host_session s;
		struct err ce = ERR_INIT;

		alarm(20);
		c = host_session_begin(&s, p.root, p.state, NULL, &ce) ||
		    host_session_set(&s, "enabled", "always", &ce) ? 'E' : 'R';
		if (write(ready[1], &c, 1) != 1 || c == 'E')
			_exit(1);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(host_session_end(&s, &ce) ? 3 : 0);
	}
	assert_int_equal(read(ready[0], &c, 1), 1);
	assert_int_equal(c, 'R');
	assert_int_equal(host_restore_journal(p.root, p.state, &restored, info, sizeof(info), &e), -EBUSY);
	assert_false(restored);
	snprintf(want, sizeof(want), "pid %ld (thpeval run started ", (long)pid);
	assert_true(!strncmp(info, want, strlen(want)));
	assert_non_null(strstr(e.msg, "wait for it or stop it"));
	/* the live run's journal was not touched */
	assert_true(fake_exists(p.state, HOST_JOURNAL_NAME));
	assert_int_equal(write(go[1], "x", 1), 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_false(fake_exists(p.state, HOST_JOURNAL_NAME));
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
}

static void test_restore_journal_nothing(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	struct paths p;
	char info[64] = "junk";
	bool restored = true;

	make_paths(f, &p);
	/* no state directory at all: nothing to do, and nothing created */
	assert_int_equal(host_restore_journal(p.root, p.state, &restored, info, sizeof(info), &e), 0);
	assert_false(restored);
	assert_string_equal(info, "");
	assert_false(fake_exists(f->dir, "state"));
	/* state directory without a journal */
	assert_int_equal(fake_mkdir_p(p.state), 0);
	assert_int_equal(chmod(p.state, 0700), 0);
	assert_int_equal(host_restore_journal(p.root, p.state, &restored, NULL, 0, &e), 0);
	assert_false(restored);
	assert_int_equal(e.code, 0);
}

/*
 * `host restore` under a fake root with no journal and a fragmenter record
 * whose fake comm names a real process of ours: nothing is signalled and
 * nothing is said to be restored.
 */
static void test_restore_fake_root_frag(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	struct paths p;
	char info[64] = "junk", rel[64], rec[32];
	bool restored = true;
	int st;
	pid_t child;

	make_paths(f, &p);
	assert_int_equal(fake_mkdir_p(p.state), 0);
	assert_int_equal(chmod(p.state, 0700), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	snprintf(rel, sizeof(rel), "proc/%d/comm", (int)child);
	assert_int_equal(fake_write(p.root, rel, FRAG_COMM "\n"), 0);
	snprintf(rec, sizeof(rec), "pid %d\n", (int)child);
	assert_int_equal(fake_write(p.state, FRAG_PID_FILE, rec), 0);
	assert_int_equal(host_restore_journal(p.root, p.state, &restored, info, sizeof(info), &e), 0);
	assert_false(restored);
	assert_string_equal(info, "");
	assert_int_equal(waitpid(child, &st, WNOHANG), 0);	/* still running */
	assert_false(fake_exists(p.state, FRAG_PID_FILE));
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &st, 0), child);
}

static void test_partial_restore_failure(void **state)
{
	struct fx *f = *state;
	struct host_session s;
	struct err e = ERR_INIT;
	struct paths p;
	char got[PATH_MAX + 256], want[PATH_MAX + 256], buf[128];
	bool restored = false;

	make_paths(f, &p);
	assert_int_equal(host_session_begin(&s, p.root, p.state, NULL, &e), 0);
	assert_int_equal(host_session_set(&s, "hugepages-64kB/enabled", "always", &e), 0);
	assert_int_equal(host_session_set(&s, "enabled", "always", &e), 0);
	assert_int_equal(host_session_set(&s, "defrag", "never", &e), 0);
	/* the 64kB knob disappears under us */
	assert_int_equal(fake_write(p.root, THP_REL("hugepages-64kB/enabled"), NULL), 0);
	assert_int_equal(host_session_end(&s, &e), -EOPNOTSUPP);
	assert_non_null(strstr(e.msg, "cannot restore thp setting 'hugepages-64kB/enabled' to 'never'"));
	assert_non_null(strstr(e.msg, "thpeval host restore"));
	/* the others were still put back */
	assert_string_equal(fake_read(p.root, THP_REL("enabled"), buf, sizeof(buf)),
			    "always [madvise] never\n");
	assert_string_equal(fake_read(p.root, THP_REL("defrag"), buf, sizeof(buf)),
			    "always defer defer+madvise [madvise] never\n");
	/* only what failed stays journaled */
	snprintf(want, sizeof(want), "thpeval-journal 1\npid %ld\nroot %s\nset hugepages-64kB/enabled never\n",
		 (long)getpid(), p.root);
	assert_string_equal(journal_text(&p, got, sizeof(got)), want);
	/* the knob comes back: `thpeval host restore` finishes the job */
	assert_int_equal(fake_write(p.root, THP_REL("hugepages-64kB/enabled"),
				    "[always] inherit madvise never\n"), 0);
	err_clear(&e);
	assert_int_equal(host_restore_journal(p.root, p.state, &restored, NULL, 0, &e), 0);
	assert_true(restored);
	assert_string_equal(fake_read(p.root, THP_REL("hugepages-64kB/enabled"), buf, sizeof(buf)),
			    "always inherit madvise [never]\n");
	assert_false(fake_exists(p.state, HOST_JOURNAL_NAME));
}

static void test_root_mismatch(void **state)
{
	struct fx *f = *state;
	struct host_session s;
	struct err e = ERR_INIT;
	struct paths p;
	bool restored = true;

	make_paths(f, &p);
	assert_int_equal(fake_mkdir_p(p.state), 0);
	assert_int_equal(chmod(p.state, 0700), 0);
	assert_int_equal(fake_write(p.state, HOST_JOURNAL_NAME,
				    "thpeval-journal 1\npid 77\nroot /elsewhere\nset enabled never\n"), 0);
	assert_int_equal(host_session_begin(&s, p.root, p.state, NULL, &e), -EXDEV);
	assert_non_null(strstr(e.msg, "was written for root '/elsewhere'"));
	err_clear(&e);
	assert_int_equal(host_restore_journal(p.root, p.state, &restored, NULL, 0, &e), -EXDEV);
	assert_false(restored);
	assert_true(fake_exists(p.state, HOST_JOURNAL_NAME));
	assert_int_equal(host_session_end(&s, NULL), 0);
}

struct corrupt_case {
	const char *name;
	const char *text;	/* @ROOT@ is replaced by the fake root */
	unsigned line;
	const char *why;
};

static struct corrupt_case corrupt_cases[] = {
	{ "corrupt/empty_file", "", 1, "missing header" },
	{ "corrupt/bad_magic", "thpeval-journal 2\npid 9\nroot @ROOT@\n", 1, "not a thpeval journal" },
	{ "corrupt/bad_pid", "thpeval-journal 1\npid nine\nroot @ROOT@\n", 2, "expected 'pid N'" },
	{ "corrupt/pid_zero", "thpeval-journal 1\npid 0\nroot @ROOT@\n", 2, "expected 'pid N'" },
	{ "corrupt/relative_root", "thpeval-journal 1\npid 9\nroot tmp\n", 3, "expected 'root /PATH'" },
	{ "corrupt/header_only_two_lines", "thpeval-journal 1\npid 9\n", 3, "missing header" },
	{ "corrupt/unknown_key", "thpeval-journal 1\npid 9\nroot @ROOT@\nset bogus 1\n", 4,
	  "unknown thp setting" },
	{ "corrupt/traversal_key", "thpeval-journal 1\npid 9\nroot @ROOT@\nset ../../../etc/passwd x\n", 4,
	  "unknown thp setting" },
	{ "corrupt/value_with_space", "thpeval-journal 1\npid 9\nroot @ROOT@\nset enabled always never\n", 4,
	  "bad value" },
	{ "corrupt/missing_value", "thpeval-journal 1\npid 9\nroot @ROOT@\nset enabled\n", 4,
	  "expected 'set KEY VALUE'" },
	{ "corrupt/empty_value", "thpeval-journal 1\npid 9\nroot @ROOT@\nset enabled \n", 4, "bad value" },
	{ "corrupt/duplicate_key", "thpeval-journal 1\npid 9\nroot @ROOT@\nset enabled never\nset enabled always\n",
	  5, "setting listed twice" },
	{ "corrupt/truncated_last_line", "thpeval-journal 1\npid 9\nroot @ROOT@\nset enabled nev", 4,
	  "truncated line" },
	{ "corrupt/garbage_line", "thpeval-journal 1\npid 9\nroot @ROOT@\nset enabled never\nrm -rf /\n", 5,
	  "expected 'set KEY VALUE'" },
	{ "corrupt/blank_line", "thpeval-journal 1\npid 9\nroot @ROOT@\n\nset enabled never\n", 4,
	  "expected 'set KEY VALUE'" },
};

static void test_corrupt(void **state)
{
	struct fx *f = *state;
	const struct corrupt_case *c = f->row;
	struct host_session s;
	struct host_lock l = HOST_LOCK_INIT;
	struct err e = ERR_INIT;
	struct paths p;
	char text[PATH_MAX + 512], want[PATH_MAX + 64];
	const char *at, *src;
	char *before, *after;
	bool restored = true;
	size_t o = 0;

	make_paths(f, &p);
	for (src = c->text; (at = strstr(src, "@ROOT@")); src = at + 6) {
		memcpy(text + o, src, (size_t)(at - src));
		o += (size_t)(at - src);
		memcpy(text + o, p.root, strlen(p.root));
		o += strlen(p.root);
	}
	snprintf(text + o, sizeof(text) - o, "%s", src);
	assert_int_equal(fake_mkdir_p(p.state), 0);
	assert_int_equal(chmod(p.state, 0700), 0);
	assert_int_equal(fake_write(p.state, HOST_JOURNAL_NAME, text), 0);
	before = fake_snapshot(p.root, "sys");

	assert_int_equal(host_session_begin(&s, p.root, p.state, NULL, &e), -EBADMSG);
	snprintf(want, sizeof(want), "corrupt host journal '%s/" HOST_JOURNAL_NAME "' line %u: %s", p.state,
		 c->line, c->why);
	assert_string_equal(strstr(e.msg, "corrupt") ? want : e.msg, want);
	assert_true(!strncmp(e.msg, want, strlen(want)));
	assert_non_null(strstr(e.msg, "then remove it with 'rm "));
	err_clear(&e);
	assert_int_equal(host_restore_journal(p.root, p.state, &restored, NULL, 0, &e), -EBADMSG);
	assert_false(restored);
	/* kept for a human, tree untouched, lock free again */
	assert_true(fake_exists(p.state, HOST_JOURNAL_NAME));
	after = fake_snapshot(p.root, "sys");
	assert_string_equal(before, after);
	err_clear(&e);
	assert_int_equal(host_lock_take(&l, p.state, NULL, &e), 0);
	host_lock_release(&l);
	free(before);
	free(after);
}

/*
 * The fragmented arm's sysctls (/proc/sys/vm): journaled like a THP knob, the
 * kernel's ranges enforced before anything is written, put back by a normal
 * end and, after a crash, by host_restore_journal.
 */
static void test_sysctl_keys(void **state)
{
	static const char *const rel[] = { "proc/sys/vm/compaction_proactiveness",
					   "proc/sys/vm/percpu_pagelist_high_fraction" };
	static const char *const key[] = { "sysctl/vm/compaction_proactiveness",
					   "sysctl/vm/percpu_pagelist_high_fraction" };
	static const char *const val[] = { "0", "1000000" };
	struct fx *f = *state;
	struct host_session s;
	struct err e = ERR_INIT;
	struct paths p;
	char buf[64], info[128];
	char *before, *after;
	bool stale = true, restored = false;

	make_paths(f, &p);
	assert_int_equal(fake_write(p.root, rel[0], "20\n"), 0);
	assert_int_equal(fake_write(p.root, rel[1], "0\n"), 0);
	before = fake_snapshot(p.root, "proc");
	assert_int_equal(host_session_begin(&s, p.root, p.state, &stale, &e), 0);
	assert_int_equal(host_session_set(&s, key[0], val[0], &e), 0);
	assert_int_equal(host_session_set(&s, key[1], val[1], &e), 0);
	assert_string_equal(fake_read(p.root, rel[0], buf, sizeof(buf)), "0\n");
	assert_string_equal(fake_read(p.root, rel[1], buf, sizeof(buf)), "1000000\n");
	/* out of the kernel's range, or not a sysctl thpeval knows: refused, nothing written */
	assert_int_not_equal(host_session_set(&s, "sysctl/vm/compaction_proactiveness", "101", &e), 0);
	assert_int_not_equal(host_session_set(&s, "sysctl/vm/percpu_pagelist_high_fraction", "-1", &e), 0);
	assert_int_not_equal(host_session_set(&s, "sysctl/vm/swappiness", "0", &e), 0);
	assert_int_not_equal(host_session_set(&s, "sysctl/../../etc/passwd", "0", &e), 0);
	assert_string_equal(fake_read(p.root, rel[0], buf, sizeof(buf)), "0\n");
	assert_int_equal(host_session_end(&s, &e), 0);
	after = fake_snapshot(p.root, "proc");
	assert_string_equal(before, after);
	free(after);

	/* a run killed with both changed: the journal puts them back */
	crashed_run_with(&p, key, val, 2);
	assert_string_equal(fake_read(p.root, rel[0], buf, sizeof(buf)), "0\n");
	assert_int_equal(host_restore_journal(p.root, p.state, &restored, info, sizeof(info), &e), 0);
	assert_true(restored);
	after = fake_snapshot(p.root, "proc");
	assert_string_equal(before, after);
	free(after);
	free(before);
}

/*
 * The KSM arm's knobs (/sys/kernel/mm/ksm): journaled like a THP knob, the
 * kernel's ranges enforced, put back by a normal end and, after a crash, by
 * host_restore_journal; the counters read as numbers
 */
static void test_ksm_keys(void **state)
{
	static const char *const rel[] = { "sys/kernel/mm/ksm/run", "sys/kernel/mm/ksm/pages_to_scan",
					   "sys/kernel/mm/ksm/sleep_millisecs" };
	static const char *const key[] = { "ksm/run", "ksm/pages_to_scan", "ksm/sleep_millisecs" };
	static const char *const val[] = { "1", "10000", "10" };
	struct fx *f = *state;
	struct host_session s;
	struct ksm_stats ks;
	struct err e = ERR_INIT;
	struct paths p;
	char buf[64], info[128];
	char *before, *after;
	bool stale = true, restored = false;
	size_t i;

	make_paths(f, &p);
	assert_false(ksm_present(p.root));
	assert_int_equal(fake_write(p.root, rel[0], "0\n"), 0);
	assert_int_equal(fake_write(p.root, rel[1], "100\n"), 0);
	assert_int_equal(fake_write(p.root, rel[2], "20\n"), 0);
	assert_true(ksm_present(p.root));
	assert_int_not_equal(ksm_stats_read(p.root, &ks, &e), 0);	/* no counters yet */
	err_clear(&e);
	assert_int_equal(fake_write(p.root, "sys/kernel/mm/ksm/pages_shared", "7\n"), 0);
	assert_int_equal(fake_write(p.root, "sys/kernel/mm/ksm/pages_sharing", "4093\n"), 0);
	assert_int_equal(fake_write(p.root, "sys/kernel/mm/ksm/full_scans", "2\n"), 0);
	assert_int_equal(ksm_stats_read(p.root, &ks, &e), 0);
	assert_int_equal(ks.pages_shared, 7);
	assert_int_equal(ks.pages_sharing, 4093);
	assert_int_equal(ks.full_scans, 2);
	before = fake_snapshot(p.root, "sys");
	assert_int_equal(host_session_begin(&s, p.root, p.state, &stale, &e), 0);
	for (i = 0; i < 3; i++)
		assert_int_equal(host_session_set(&s, key[i], val[i], &e), 0);
	assert_string_equal(fake_read(p.root, rel[0], buf, sizeof(buf)), "1\n");
	assert_string_equal(fake_read(p.root, rel[1], buf, sizeof(buf)), "10000\n");
	/* out of the kernel's range, or not a knob thpeval sets: refused, nothing written */
	assert_int_not_equal(host_session_set(&s, "ksm/run", "3", &e), 0);
	assert_int_not_equal(host_session_set(&s, "ksm/pages_sharing", "0", &e), 0);
	assert_int_not_equal(host_session_set(&s, "ksm/../../../etc/passwd", "0", &e), 0);
	assert_string_equal(fake_read(p.root, rel[0], buf, sizeof(buf)), "1\n");
	assert_int_equal(host_session_end(&s, &e), 0);
	after = fake_snapshot(p.root, "sys");
	assert_string_equal(before, after);
	free(after);

	/* a run killed with KSM running: the journal puts every knob back */
	crashed_run_with(&p, key, val, 3);
	assert_string_equal(fake_read(p.root, rel[0], buf, sizeof(buf)), "1\n");
	assert_int_equal(host_restore_journal(p.root, p.state, &restored, info, sizeof(info), &e), 0);
	assert_true(restored);
	after = fake_snapshot(p.root, "sys");
	assert_string_equal(before, after);
	free(after);
	free(before);
}

/* the hugetlbfs arm's pool: journaled like a THP knob, restored byte for byte */
static void test_hugetlb_pool(void **state)
{
	struct fx *f = *state;
	struct host_session s;
	struct err e = ERR_INIT;
	struct paths p;
	char buf[64];
	char *before, *after;
	bool stale = true;

	make_paths(f, &p);
	assert_int_equal(fake_write(p.root, "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", "4\n"), 0);
	before = fake_snapshot(p.root, "sys");
	assert_int_equal(host_session_begin(&s, p.root, p.state, &stale, &e), 0);
	assert_int_equal(host_session_set(&s, "hugetlb/hugepages-2048kB/nr_hugepages", "520", &e), 0);
	assert_string_equal(fake_read(p.root, "sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages", buf,
				      sizeof(buf)), "520\n");
	assert_non_null(strstr(journal_text(&p, buf, sizeof(buf)) ? buf : "", "thpeval-journal"));
	/* nonsense is refused before anything is written */
	assert_int_not_equal(host_session_set(&s, "hugetlb/hugepages-2048kB/nr_hugepages", "-1", &e), 0);
	assert_int_not_equal(host_session_set(&s, "hugetlb/hugepages-3kB/nr_hugepages", "1", &e), 0);
	assert_int_not_equal(host_session_set(&s, "hugetlb/hugepages-2048kB/free_hugepages", "1", &e), 0);
	assert_int_equal(host_session_end(&s, &e), 0);
	after = fake_snapshot(p.root, "sys");
	assert_string_equal(before, after);
	free(after);
	free(before);
}

int main(void)
{
	struct CMUnitTest tests[64];
	size_t i, n = 0;

	ADD_ONE("session/set_restore_byte_for_byte", test_set_restore_byte_for_byte);
	ADD_ONE("session/unchanged_key_not_journaled", test_unchanged_not_journaled);
	ADD_ONE("session/invalid_value_not_journaled", test_invalid_not_journaled);
	ADD_ONE("session/first_original_wins", test_first_original_wins);
	ADD_ONE("session/hugetlb_pool", test_hugetlb_pool);
	ADD_ONE("session/sysctl_keys", test_sysctl_keys);
	ADD_ONE("session/ksm_keys", test_ksm_keys);
	ADD_ONE("session/end_twice_and_after_failed_begin", test_end_safe);
	ADD_ONE("session/partial_restore_failure_keeps_journal", test_partial_restore_failure);
	ADD_ONE("crash/host_restore_journal", test_crash_restore_journal);
	ADD_ONE("crash/begin_restores_stale", test_crash_begin_restores_stale);
	ADD_ONE("restore_journal/live_run_busy", test_restore_journal_busy);
	ADD_ONE("restore_journal/nothing_to_do", test_restore_journal_nothing);
	ADD_ONE("restore_journal/fake_root_never_signals", test_restore_fake_root_frag);
	ADD_ONE("journal/root_mismatch", test_root_mismatch);
	ADD_TABLE(corrupt_cases, test_corrupt);
	return _cmocka_run_group_tests("host/journal", tests, n, NULL, NULL);
}
