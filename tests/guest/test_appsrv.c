/*
 * tests for guest/appsrv.c: the smaps_rollup, smaps, stat and passwd parsers
 * on table-driven texts (real shapes, then malformed and oversized ones), the
 * last-line helper, and children run for real: exit status, a program that
 * is not there, output kept and cut, stderr to a file, ticks, a deadline,
 * a server stopped by its pid (and killed when it ignores the signal).
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/appsrv.h"
#include "guest/harness.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- smaps_rollup ----------------------------------------------------------------- */

#define ROLLUP_HEAD "55da50676000-7ffc0b38b000 ---p 00000000 00:00 0                          [rollup]\n"

struct rollup_case {
	const char *name;
	const char *text;
	int rc;
	uint64_t rss, anon, huge;
	bool have_huge;
	const char *why;	/* substring of the error */
};

static struct rollup_case rollup_cases[] = {
	{ "rollup: a real one", ROLLUP_HEAD "Rss:               19140 kB\nPss:               14605 kB\n"
	  "Anonymous:          9640 kB\nKSM:                   0 kB\nAnonHugePages:      4096 kB\n"
	  "ShmemPmdMapped:        0 kB\nLocked:                0 kB\n", 0, 19140u << 10, 9640u << 10, 4096u << 10,
	  true, NULL },
	{ "rollup: no AnonHugePages (no THP)", ROLLUP_HEAD "Rss: 8 kB\nAnonymous: 4 kB\n", 0, 8u << 10, 4u << 10, 0,
	  false, NULL },
	{ "rollup: no Rss", ROLLUP_HEAD "Anonymous: 4 kB\n", -EBADMSG, 0, 0, 0, false, "without Rss" },
	{ "rollup: no Anonymous", ROLLUP_HEAD "Rss: 4 kB\n", -EBADMSG, 0, 0, 0, false, "without Anonymous" },
	{ "rollup: Rss not a number", ROLLUP_HEAD "Rss: abc kB\nAnonymous: 4 kB\n", -EBADMSG, 0, 0, 0, false,
	  "Rss is not 'N kB'" },
	{ "rollup: Rss in MB", ROLLUP_HEAD "Rss: 12 MB\nAnonymous: 4 kB\n", -EBADMSG, 0, 0, 0, false, "Rss is not" },
	{ "rollup: Rss negative", ROLLUP_HEAD "Rss: -12 kB\nAnonymous: 4 kB\n", -EBADMSG, 0, 0, 0, false,
	  "Rss is not" },
	{ "rollup: Rss overflows", ROLLUP_HEAD "Rss: 99999999999999999999999 kB\nAnonymous: 4 kB\n", -EBADMSG, 0, 0, 0,
	  false, "Rss is not" },
	{ "rollup: huge above anonymous", ROLLUP_HEAD "Rss: 8192 kB\nAnonymous: 4096 kB\nAnonHugePages: 6144 kB\n",
	  -EBADMSG, 0, 0, 0, false, "AnonHugePages above Anonymous" },
	{ "rollup: empty", "", -EBADMSG, 0, 0, 0, false, "without Rss" },
};

static void test_rollup(void **state)
{
	const struct rollup_case *c = *state;
	struct err e = ERR_INIT;
	struct proc_mem m;
	int r = proc_mem_parse(c->text, strlen(c->text), &m, &e);

	assert_int_equal(r, c->rc);
	if (c->rc) {
		if (!strstr(e.msg, c->why))
			fail_msg("'%s' lacks '%s'", e.msg, c->why);
		return;
	}
	assert_int_equal(m.rss, c->rss);
	assert_int_equal(m.anon, c->anon);
	assert_int_equal(m.anon_huge, c->huge);
	assert_int_equal(m.have_anon_huge, c->have_huge);
}

/* more lines than a rollup has: refused, not read on */
static void test_rollup_oversized(void **state)
{
	struct err e = ERR_INIT;
	struct proc_mem m;
	size_t i, len = 0, cap = 300 * 32;
	char *text = malloc(cap);

	(void)state;
	assert_non_null(text);
	len += (size_t)snprintf(text, cap, "%s", ROLLUP_HEAD);
	for (i = 0; i < 300; i++)
		len += (size_t)snprintf(text + len, cap - len, "Field%zu: 0\n", i);
	assert_int_equal(proc_mem_parse(text, len, &m, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "more than 256 lines"));
	free(text);
}

/* the real file of this process */
static void test_rollup_self(void **state)
{
	struct err e = ERR_INIT;
	struct proc_mem m;

	(void)state;
	if (access("/proc/self/smaps_rollup", R_OK)) {
		print_message("skipped: no /proc/self/smaps_rollup here\n");
		skip();
	}
	assert_int_equal(proc_mem_read("", getpid(), &m, &e), 0);
	assert_true(m.rss > 0);
	assert_true(m.anon <= m.rss);
}

/* ---- smaps: the largest shared mapping ------------------------------------------------ */

#define VMA(range, perms, path) range " " perms " 00000000 00:01 19400                      " path "\n"

struct shm_case {
	const char *name;
	const char *text;
	int rc;
	uint64_t start, rss, pmd;
	const char *vname;
	const char *why;
};

static struct shm_case shm_cases[] = {
	{ "smaps: the largest rw-s of two", VMA("7f0000000000-7f0000200000", "rw-s", "/SYSV00a7c7e4 (deleted)")
	  "Size: 2048 kB\nRss: 8 kB\nShmemPmdMapped: 0 kB\nVmFlags: rd wr sh mr mw me ms sd\n"
	  VMA("7f1000000000-7f1002000000", "rw-s", "/dev/zero (deleted)")
	  "Size: 32768 kB\nRss: 16384 kB\nShmemPmdMapped: 14336 kB\nTHPeligible:    1\nVmFlags: rd wr sh\n"
	  VMA("7f2000000000-7f2008000000", "rw-p", "")
	  "Size: 131072 kB\nRss: 131072 kB\nShmemPmdMapped: 0 kB\n",
	  0, 0x7f1000000000ull, 16384u << 10, 14336u << 10, "/dev/zero (deleted)", NULL },
	{ "smaps: no shared mapping", VMA("7f2000000000-7f2000001000", "rw-p", "") "Rss: 4 kB\n", -ENOENT, 0, 0, 0,
	  NULL, NULL },
	{ "smaps: read-only shared is not the buffers", VMA("7f2000000000-7f2000001000", "r--s", "/x")
	  "Rss: 4 kB\n", -ENOENT, 0, 0, 0, NULL, NULL },
	{ "smaps: a field before any mapping", "Rss: 4 kB\n" VMA("7f2000000000-7f2000001000", "rw-s", "/x"),
	  -EBADMSG, 0, 0, 0, NULL, "before any mapping" },
	{ "smaps: garbage line", VMA("7f2000000000-7f2000001000", "rw-s", "/x") "hello world\n", -EBADMSG, 0, 0, 0,
	  NULL, "expected 'Name: value'" },
	{ "smaps: Rss not kB", VMA("7f2000000000-7f2000001000", "rw-s", "/x") "Rss: 4 pages\n", -EBADMSG, 0, 0, 0,
	  NULL, "Rss is not 'N kB'" },
	{ "smaps: pmd above rss", VMA("7f2000000000-7f2000400000", "rw-s", "/x")
	  "Rss: 2048 kB\nShmemPmdMapped: 4096 kB\n", -EBADMSG, 0, 0, 0, NULL, "ShmemPmdMapped above Rss" },
	{ "smaps: rss above the size", VMA("7f2000000000-7f2000001000", "rw-s", "/x") "Rss: 8 kB\n", -EBADMSG, 0, 0,
	  0, NULL, "above its size" },
	{ "smaps: empty", "", -ENOENT, 0, 0, 0, NULL, NULL },
};

static void test_shm(void **state)
{
	const struct shm_case *c = *state;
	struct err e = ERR_INIT;
	struct shm_vma v;
	int r = shm_vma_parse(c->text, strlen(c->text), &v, &e);

	assert_int_equal(r, c->rc);
	if (c->rc == -EBADMSG && !strstr(e.msg, c->why))
		fail_msg("'%s' lacks '%s'", e.msg, c->why);
	if (c->rc)
		return;
	assert_int_equal(v.start, c->start);
	assert_int_equal(v.rss, c->rss);
	assert_int_equal(v.shmem_pmd, c->pmd);
	assert_true(v.have_shmem_pmd);
	assert_string_equal(v.name, c->vname);
}

/* this process's own shared mapping, 4 MiB with 1 MiB touched, found among its others */
static void test_shm_self(void **state)
{
	struct err e = ERR_INIT;
	struct shm_vma v;
	char *p = mmap(NULL, 4u << 20, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	(void)state;
	assert_true(p != MAP_FAILED);
	memset(p, 1, 1u << 20);
	assert_int_equal(shm_vma_read("", getpid(), &v, &e), 0);
	assert_int_equal(v.start, (uint64_t)(uintptr_t)p);
	assert_int_equal(v.end - v.start, 4u << 20);
	assert_true(v.rss >= 1u << 20 && v.rss <= 4u << 20);
	munmap(p, 4u << 20);
}

/* ---- /proc/PID/stat and passwd ------------------------------------------------------- */

struct ppid_case {
	const char *name;
	const char *text;
	int rc;
	pid_t ppid;
};

static struct ppid_case ppid_cases[] = {
	{ "stat: plain", "4242 (postgres) S 4200 4242 4242 0 -1 4194560 ...", 0, 4200 },
	{ "stat: ') (' in the name", "17 (a) b) (c) R 1 17 17 0", 0, 1 },
	{ "stat: cut after the state", "17 (x) S", -EBADMSG, 0 },
	{ "stat: no parenthesis", "17 x S 1 2", -EBADMSG, 0 },
	{ "stat: ppid not a number", "17 (x) S abc 1", -EBADMSG, 0 },
	{ "stat: ppid too large", "17 (x) S 99999999999 1", -EBADMSG, 0 },
};

static void test_ppid(void **state)
{
	const struct ppid_case *c = *state;
	pid_t p = -1;

	assert_int_equal(proc_stat_ppid(c->text, strlen(c->text), &p), c->rc);
	if (!c->rc)
		assert_int_equal(p, c->ppid);
}

/* this process is its own children's parent */
static void test_children(void **state)
{
	struct err e = ERR_INIT;
	pid_t kids[64], c = fork();
	size_t n, i;
	bool found = false;
	int st;

	(void)state;
	assert_true(c >= 0);
	if (c == 0) {
		pause();
		_exit(0);
	}
	assert_int_equal(proc_children("", getpid(), kids, N(kids), &n, &e), 0);
	for (i = 0; i < n; i++)
		found |= kids[i] == c;
	kill(c, SIGKILL);
	waitpid(c, &st, 0);
	assert_true(found);
}

struct passwd_case {
	const char *name;
	const char *text;
	const char *user;
	int rc;
	uid_t uid;
	gid_t gid;
};

#define PASSWD "root:x:0:0:root:/root:/bin/bash\npostgres2:x:7:7::/:/bin/sh\n" \
	"postgres:x:101:104:PostgreSQL administrator,,,:/var/lib/postgresql:/bin/bash\n"

static struct passwd_case passwd_cases[] = {
	{ "passwd: found", PASSWD, "postgres", 0, 101, 104 },
	{ "passwd: a prefix is not the name", "postgres2:x:7:7::/:/bin/sh\n", "postgres", -ENOENT, 0, 0 },
	{ "passwd: absent", "root:x:0:0:root:/root:/bin/bash\n", "postgres", -ENOENT, 0, 0 },
	{ "passwd: six fields", "postgres:x:101:104::/var/lib\n", "postgres", -EBADMSG, 0, 0 },
	{ "passwd: eight fields", "postgres:x:101:104::/:/bin/sh:extra\n", "postgres", -EBADMSG, 0, 0 },
	{ "passwd: uid not a number", "postgres:x:abc:104::/:/bin/sh\n", "postgres", -EBADMSG, 0, 0 },
	{ "passwd: empty gid", "postgres:x:101:::/:/bin/sh\n", "postgres", -EBADMSG, 0, 0 },
	{ "passwd: uid too large", "postgres:x:99999999999:1::/:/bin/sh\n", "postgres", -EBADMSG, 0, 0 },
	{ "passwd: no final newline", "postgres:x:5:6::/:/bin/sh", "postgres", 0, 5, 6 },
};

static void test_passwd(void **state)
{
	const struct passwd_case *c = *state;
	uid_t u = 0;
	gid_t g = 0;

	assert_int_equal(passwd_find(c->text, strlen(c->text), c->user, &u, &g), c->rc);
	if (!c->rc) {
		assert_int_equal(u, c->uid);
		assert_int_equal(g, c->gid);
	}
}

struct line_case {
	const char *name;
	const char *text;
	size_t len;
	const char *want;
};

static struct line_case line_cases[] = {
	{ "last line: plain", "a\nb\nFATAL: x\n", 64, "FATAL: x" },
	{ "last line: blank lines after", "a\nlast\n\n \r\n", 64, "last" },
	{ "last line: none", "", 64, "" },
	{ "last line: cut", "0123456789", 5, "0123" },
	{ "last line: control bytes", "x\tz\x01", 64, "x?z?" },
};

static void test_line(void **state)
{
	const struct line_case *c = *state;
	char out[64];

	appsrv_last_line(c->text, strlen(c->text), out, c->len);
	assert_string_equal(out, c->want);
}

/* ---- children for real ------------------------------------------------------------- */

static char env_path[] = "PATH=/usr/bin:/bin";
static char *const envp[] = { env_path, NULL };

static void run_argv(const char *path, const char *const *argv, const struct appsrv_run_opts *o,
		     struct appsrv_out *out, int *st, int *rc, struct err *e)
{
	uint64_t wall;

	*rc = appsrv_run(path, (char *const *)(uintptr_t)argv, o, out, st, &wall, e);
}

static void test_run_status(void **state)
{
	const char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 3", NULL };
	struct appsrv_run_opts o = { envp, NULL, 10000, 0, NULL, NULL, NULL };
	struct appsrv_out *out = malloc(sizeof(*out));
	struct err e = ERR_INIT;
	int st, rc;

	(void)state;
	assert_non_null(out);
	run_argv("/bin/sh", argv, &o, out, &st, &rc, &e);
	assert_int_equal(rc, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 3);
	assert_string_equal(out->buf, "out\nerr\n");
	assert_false(out->truncated);
	free(out);
}

static void test_run_err_log(void **state)
{
	char dir[] = "/tmp/thpeval-appsrv-XXXXXX", log[64], tail[APPSRV_TAIL_MAX];
	const char *argv[] = { "sh", "-c", "echo out; echo 'the error' >&2", NULL };
	struct appsrv_run_opts o = { envp, NULL, 10000, 0, NULL, NULL, log };
	struct appsrv_out *out = malloc(sizeof(*out));
	struct err e = ERR_INIT;
	int st, rc;

	(void)state;
	assert_non_null(out);
	assert_non_null(mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/err", dir);
	run_argv("/bin/sh", argv, &o, out, &st, &rc, &e);
	assert_int_equal(rc, 0);
	assert_string_equal(out->buf, "out\n");
	appsrv_log_tail(log, tail, sizeof(tail));
	assert_string_equal(tail, "the error");
	unlink(log);
	rmdir(dir);
	free(out);
}

static void test_run_missing(void **state)
{
	const char *argv[] = { "nope", NULL };
	struct appsrv_run_opts o = { envp, NULL, 10000, 0, NULL, NULL, NULL };
	struct appsrv_out *out = malloc(sizeof(*out));
	struct err e = ERR_INIT;
	int st, rc;

	(void)state;
	assert_non_null(out);
	run_argv("/nonexistent/nope", argv, &o, out, &st, &rc, &e);
	assert_int_equal(rc, -ENOENT);
	assert_non_null(strstr(e.msg, "cannot execute '/nonexistent/nope'"));
	free(out);
}

static void test_run_truncated(void **state)
{
	/* 20000 lines of 'y': more than APPSRV_OUT_MAX bytes */
	const char *argv[] = { "sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo y; i=$((i+1)); done", NULL };
	struct appsrv_run_opts o = { envp, NULL, 60000, 0, NULL, NULL, NULL };
	struct appsrv_out *out = malloc(sizeof(*out));
	struct err e = ERR_INIT;
	int st, rc;

	(void)state;
	assert_non_null(out);
	run_argv("/bin/sh", argv, &o, out, &st, &rc, &e);
	assert_int_equal(rc, 0);
	assert_true(out->truncated);
	assert_int_equal(out->len, APPSRV_OUT_MAX);
	assert_int_equal(strlen(out->buf), APPSRV_OUT_MAX);
	free(out);
}

static void count_tick(void *opaque)
{
	(*(unsigned *)opaque)++;
}

/* a child that outlives the deadline is killed; the ticks came while it ran */
static void test_run_deadline(void **state)
{
	const char *argv[] = { "sleep", "30", NULL };
	unsigned ticks = 0;
	struct appsrv_run_opts o = { envp, NULL, 600, 100, count_tick, &ticks, NULL };
	struct appsrv_out *out = malloc(sizeof(*out));
	struct err e = ERR_INIT;
	int st, rc;

	(void)state;
	assert_non_null(out);
	run_argv("/bin/sleep", argv, &o, out, &st, &rc, &e);
	assert_int_equal(rc, -ETIMEDOUT);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_non_null(strstr(e.msg, "still running"));
	assert_true(ticks >= 3);
	free(out);
}

/* a server stopped by its pid; one that ignores the signal killed past the wait */
static void test_start_stop(void **state)
{
	const char *sleeper[] = { "sleep", "30", NULL };
	const char *stubborn[] = { "sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done", NULL };
	char dir[] = "/tmp/thpeval-appsrv-XXXXXX", log[64], tail[APPSRV_TAIL_MAX];
	struct err e = ERR_INIT;
	uint64_t t0;
	pid_t pid;
	int st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/log", dir);
	assert_int_equal(appsrv_start("/bin/sleep", (char *const *)(uintptr_t)sleeper, envp, NULL, log, &pid, &e), 0);
	assert_false(appsrv_exited(pid, &st));
	assert_int_equal(appsrv_stop(pid, SIGTERM, 10000, &st), 0);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	assert_int_equal(appsrv_stop(pid, SIGTERM, 10000, &st), -ECHILD);

	assert_int_equal(appsrv_start("/bin/sh", (char *const *)(uintptr_t)stubborn, envp, NULL, log, &pid, &e), 0);
	/* the trap is set once it has said so (bounded: 10 s) */
	for (t0 = harness_now_ns(), tail[0] = '\0'; strcmp(tail, "ready"); appsrv_log_tail(log, tail, sizeof(tail))) {
		assert_false(appsrv_exited(pid, &st));
		assert_true(harness_now_ns() - t0 < 10000000000ull);
	}
	assert_int_equal(appsrv_stop(pid, SIGTERM, 300, &st), -ETIMEDOUT);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	assert_int_equal(appsrv_start("/nonexistent", (char *const *)(uintptr_t)sleeper, envp, NULL, log, &pid, &e),
			 -ENOENT);
	assert_int_equal(pid, -1);
	unlink(log);
	rmdir(dir);
}

/*
 * A log name that is a link to, or a second name of, another file (what the
 * user owning the log's directory could plant): never written or handed over
 */
static void test_log_planted(void **state)
{
	const char *sleeper[] = { "sleep", "30", NULL };
	char dir[] = "/tmp/thpeval-appsrv-XXXXXX", log[64], victim[64], buf[32] = "";
	struct err e = ERR_INIT;
	size_t i;
	pid_t pid;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(log, sizeof(log), "%s/log", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	for (i = 0; i < 2; i++) {
		f = fopen(victim, "w");
		assert_non_null(f);
		fputs("precious\n", f);
		assert_int_equal(fclose(f), 0);
		assert_int_equal(i ? link(victim, log) : symlink(victim, log), 0);
		err_clear(&e);
		assert_true(appsrv_start("/bin/sleep", (char *const *)(uintptr_t)sleeper, envp, NULL, log, &pid,
					 &e) < 0);
		assert_int_equal(pid, -1);
		f = fopen(victim, "r");
		assert_non_null(f);
		assert_non_null(fgets(buf, sizeof(buf), f));
		fclose(f);
		assert_string_equal(buf, "precious\n");
		unlink(log);
		unlink(victim);
	}
	rmdir(dir);
}

/* a child under another user runs with its ids (root only) */
static void test_run_user(void **state)
{
	const char *argv[] = { "id", "-u", NULL };
	struct appsrv_user u = { true, 65534, 65534 };
	struct appsrv_run_opts o = { envp, &u, 10000, 0, NULL, NULL, NULL };
	struct appsrv_out *out;
	struct err e = ERR_INIT;
	int st, rc;

	(void)state;
	if (geteuid()) {
		print_message("skipped: dropping to another user needs root\n");
		skip();
	}
	if (access("/usr/bin/id", X_OK)) {
		print_message("skipped: no /usr/bin/id here\n");
		skip();
	}
	out = malloc(sizeof(*out));
	assert_non_null(out);
	run_argv("/usr/bin/id", argv, &o, out, &st, &rc, &e);
	assert_int_equal(rc, 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(out->buf, "65534\n");
	free(out);
}

int main(void)
{
	struct CMUnitTest tests[N(rollup_cases) + N(shm_cases) + N(ppid_cases) + N(passwd_cases) + N(line_cases) + 13];
	size_t i, n = 0;

	for (i = 0; i < N(rollup_cases); i++)
		tests[n++] = (struct CMUnitTest){ rollup_cases[i].name, test_rollup, NULL, NULL, &rollup_cases[i] };
	tests[n++] = (struct CMUnitTest){ "rollup: 300 lines", test_rollup_oversized, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "rollup: this process", test_rollup_self, NULL, NULL, NULL };
	for (i = 0; i < N(shm_cases); i++)
		tests[n++] = (struct CMUnitTest){ shm_cases[i].name, test_shm, NULL, NULL, &shm_cases[i] };
	tests[n++] = (struct CMUnitTest){ "smaps: this process's shared mapping", test_shm_self, NULL, NULL, NULL };
	for (i = 0; i < N(ppid_cases); i++)
		tests[n++] = (struct CMUnitTest){ ppid_cases[i].name, test_ppid, NULL, NULL, &ppid_cases[i] };
	tests[n++] = (struct CMUnitTest){ "stat: this process's child", test_children, NULL, NULL, NULL };
	for (i = 0; i < N(passwd_cases); i++)
		tests[n++] = (struct CMUnitTest){ passwd_cases[i].name, test_passwd, NULL, NULL, &passwd_cases[i] };
	for (i = 0; i < N(line_cases); i++)
		tests[n++] = (struct CMUnitTest){ line_cases[i].name, test_line, NULL, NULL, &line_cases[i] };
	tests[n++] = (struct CMUnitTest){ "run: exit status and output", test_run_status, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "run: stderr to a file", test_run_err_log, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "start: a planted log link or second name refused", test_log_planted, NULL,
					  NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "run: a program that is not there", test_run_missing, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "run: output cut at the cap", test_run_truncated, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "run: deadline and ticks", test_run_deadline, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "server: stopped by pid, killed when stubborn", test_start_stop, NULL, NULL,
					  NULL };
	tests[n++] = (struct CMUnitTest){ "run: as another user", test_run_user, NULL, NULL, NULL };
	return _cmocka_run_group_tests("appsrv", tests, n, NULL, NULL);
}
