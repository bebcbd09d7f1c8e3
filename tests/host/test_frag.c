/*
 * tests for host/frag.c (the fragmented-host arm) and the procfs readers it
 * uses: buddyinfo and MemAvailable on fake trees; the fragmenter for real
 * with a small size on real memory, its drop_caches and compact_memory
 * writes caught in a proc tree of its own (the host's knobs are never
 * written), its undo (holder gone), and the crash path (a holder left by a
 * killed run is ended by frag_reap_stale and, as root, by `thpeval host
 * restore`).
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/frag.h"
#include "host/journal.h"
#include "host/procfs.h"
#include "tests/host/fixtures/fakefs.h"

static const char buddy6[] =
	"Node 0, zone      DMA      0      0      0      0      0      0      0      0      1      1      3 \n"
	"Node 0, zone    DMA32      3      3      0      2      3      2      2      5      5      3    751 \n"
	"Node 0, zone   Normal   2675   3425   4153   3172   2047   1607   1050    573    266    174    524 \n";

static void test_buddyinfo_fake(void **state)
{
	struct fx *f = *state;
	struct buddyinfo b;
	struct err e = ERR_INIT;

	assert_int_equal(fake_write(f->dir, "buddyinfo", buddy6), 0);
	assert_int_equal(buddyinfo_read(f->dir, &b, &e), 0);
	assert_int_equal(b.orders, 11);
	assert_int_equal(b.free[0], 2678);
	assert_int_equal(b.free[10], 3 + 751 + 524);
	/* order 9 and 10 blocks: (1+3+174) * 2M + (3+751+524) * 4M */
	assert_int_equal(buddy_free_kb(&b, 9), (1 + 3 + 174) * 2048ull + (3 + 751 + 524) * 4096ull);
	assert_true(buddy_free_kb(&b, 0) > buddy_free_kb(&b, 9));
}

/* the kernel's unusable free space index, worked by hand */
static void test_buddy_unusable(void **state)
{
	/* 4 free order-0 pages, 1 order-1 block, 1 order-9 block: 4 + 2 + 512 pages */
	unsigned long long mixed[11] = { 4, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0 };
	unsigned long long none[11] = { 0 };
	unsigned long long small[11] = { 100, 50, 0, 0, 0, 0, 0, 0, 7, 0, 0 };
	unsigned long long big[11] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 2 };

	(void)state;
	assert_true(fabs(buddy_unusable_pct(mixed, 11, 9) - (100.0 * 6 / 518)) < 1e-9);
	assert_true(fabs(buddy_unusable_pct(mixed, 11, 0) - (0.0)) < 1e-9);
	assert_true(fabs(buddy_unusable_pct(mixed, 11, 1) - (100.0 * 4 / 518)) < 1e-9);
	assert_true(fabs(buddy_unusable_pct(small, 11, 9) - (100.0)) < 1e-9);
	assert_true(fabs(buddy_unusable_pct(big, 11, 9) - (0.0)) < 1e-9);
	assert_true(isnan(buddy_unusable_pct(none, 11, 9)));
	/* orders beyond what buddyinfo had are not read */
	assert_true(fabs(buddy_unusable_pct(mixed, 2, 1) - (100.0 * 4 / 6)) < 1e-9);
}

static void test_buddyinfo_bad(void **state)
{
	static const char *const bad[] = {
		"", "Node 0, zone Normal\n", "Node 0, zone Normal 1 x 3\n", "Zone 0, zone Normal 1 2\n",
		"Node 0, zone Normal 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n",
	};
	struct fx *f = *state;
	struct buddyinfo b;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct err e = ERR_INIT;

		assert_int_equal(fake_write(f->dir, "buddyinfo", bad[i]), 0);
		assert_int_equal(buddyinfo_read(f->dir, &b, &e), -EBADMSG);
		assert_non_null(strstr(e.msg, "buddyinfo"));
	}
}

static void test_meminfo_available(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	uint64_t kb = 0;

	assert_int_equal(fake_write(f->dir, "meminfo", "MemTotal: 24000000 kB\nMemFree: 1000 kB\nMemAvailable: 23456789 kB\n"), 0);
	assert_int_equal(meminfo_available_kb(f->dir, &kb, &e), 0);
	assert_int_equal(kb, 23456789);
	assert_int_equal(fake_write(f->dir, "meminfo", "MemTotal: 24000000 kB\nMemFree: 1000 kB\n"), 0);
	assert_int_equal(meminfo_available_kb(f->dir, &kb, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "no MemAvailable"));
}

static void test_size_for(void **state)
{
	(void)state;
	/* 24 GiB available, guests need 2 GiB: margin is 3 GiB (more than 10%) */
	assert_int_equal(frag_size_for(24ull << 20, 2ull << 30), 19ull << 30);
	/* 100 GiB: margin 10% */
	assert_int_equal(frag_size_for(100ull << 20, 10ull << 30), 80ull << 30);
	/* nothing left */
	assert_int_equal(frag_size_for(4ull << 20, 2ull << 30), 0);
	assert_int_equal(frag_floor_kb(24ull << 20, 2ull << 30), (2ull << 20) + (3ull << 20));
	/* always a multiple of 2M */
	assert_int_equal(frag_size_for((8ull << 20) + 3, 1) % (2u << 20), 0);
}

static bool alive(int pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	return access(path, F_OK) == 0;
}

/*
 * A proc root for the real fragmenter that keeps it off the host's knobs:
 * buddyinfo, meminfo and vmstat are links to the real files (the memory is
 * real), sys/vm/drop_caches and sys/vm/compact_memory plain files that keep
 * what frag writes to them. Into root (dir/proc).
 */
static void real_proc(const struct fx *f, char *root, size_t len)
{
	static const char *const real[] = { "buddyinfo", "meminfo", "vmstat" };
	char from[64], to[PATH_MAX];
	size_t i;

	assert_int_equal(fake_write(f->dir, "proc/sys/vm/drop_caches", ""), 0);
	assert_int_equal(fake_write(f->dir, "proc/sys/vm/compact_memory", ""), 0);
	assert_int_equal(fake_join(root, len, f->dir, "proc"), 0);
	for (i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		snprintf(from, sizeof(from), "/proc/%s", real[i]);
		assert_int_equal(fake_join(to, sizeof(to), root, real[i]), 0);
		assert_int_equal(symlink(from, to), 0);
	}
}

/* "RssAnon:" of /proc/<pid>/status (0: self) in kB; 0 when unreadable */
static uint64_t rss_anon_kb(int pid)
{
	char path[64], line[128];
	unsigned long long kb = 0;
	FILE *fp;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	fp = fopen(path, "re");
	if (!fp)
		return 0;
	while (fgets(line, sizeof(line), fp))
		if (sscanf(line, "RssAnon: %llu kB", &kb) == 1)
			break;
	fclose(fp);
	return kb;
}

/*
 * The fragmenter for real, on real memory, with its knob writes caught
 * (real_proc): the holder keeps one page of every 2M block it touched (the
 * page size of this machine) and nothing else of them, ran the deferred-split
 * shrinker (drop_caches 2), is recorded for a crash and ended by frag_stop,
 * which compacts only when it says so.
 */
/*
 * What the holder may use for its own needs beside the pages it holds: 8 MiB,
 * and 32 MiB under AddressSanitizer, whose shadow and quarantine count in its
 * RssAnon (a holder keeping its 32 blocks whole would still be 64 MiB over)
 */
#ifdef __SANITIZE_ADDRESS__
#define HOLDER_OWN_KB 32768ull
#else
#define HOLDER_OWN_KB 8192ull
#endif

static void test_frag_real(void **state)
{
	struct fx *f = *state;
	struct frag fr;
	struct err e = ERR_INIT;
	char comm[32], proc[PATH_MAX], buf[16];
	uint64_t page_kb = (uint64_t)sysconf(_SC_PAGESIZE) / 1024, own_kb, holder_kb;
	int pid;

	real_proc(f, proc, sizeof(proc));
	own_kb = rss_anon_kb(0);
	assert_int_equal(frag_start(&fr, proc, f->dir, 64ull << 20, 0, &e), 0);
	pid = fr.pid;
	assert_true(pid > 0);
	assert_true(alive(pid));
	/* recorded for a crash */
	assert_true(fake_exists(f->dir, FRAG_PID_FILE));
	snprintf(comm, sizeof(comm), "%d/comm", pid);
	assert_non_null(fake_read("/proc", comm, comm, sizeof(comm)));
	assert_string_equal(comm, FRAG_COMM "\n");
	/* one page of each of the 32 blocks is held, and that is all it holds of them */
	assert_int_equal(fr.bytes, 64ull << 20);
	assert_int_equal(fr.held_kb, 32 * page_kb);
	holder_kb = rss_anon_kb(pid);
	print_message("holder: RssAnon %llu kB (this process %llu kB at the fork, %llu kB held)\n",
		      (unsigned long long)holder_kb, (unsigned long long)own_kb,
		      (unsigned long long)fr.held_kb);
	assert_true(holder_kb <= own_kb + fr.held_kb + HOLDER_OWN_KB);
	assert_true(fr.after.orders > 0 && fr.before.orders > 0);
	assert_true(fr.memfree_before_kb > 0 && fr.memfree_after_kb > 0);
	assert_non_null(fake_read(f->dir, "proc/sys/vm/drop_caches", buf, sizeof(buf)));
	assert_string_equal(buf, "2");	/* the deferred-split shrinker, once per chunk */
	assert_int_equal(frag_stop(&fr, &e), 0);
	assert_int_equal(fr.pid, 0);
	assert_false(alive(pid));
	assert_false(fake_exists(f->dir, FRAG_PID_FILE));
	assert_true(fr.have_undone);
	assert_non_null(fake_read(f->dir, "proc/sys/vm/compact_memory", buf, sizeof(buf)));
	assert_string_equal(buf, fr.compacted ? "1" : "");
	/* idempotent */
	assert_int_equal(frag_stop(&fr, &e), 0);
}

static void test_frag_reap_stale(void **state)
{
	struct fx *f = *state;
	struct frag fr;
	struct err e = ERR_INIT;
	char proc[PATH_MAX];
	int pid, killed = 0, st;

	real_proc(f, proc, sizeof(proc));
	assert_int_equal(frag_start(&fr, proc, f->dir, 16ull << 20, 0, &e), 0);
	pid = fr.pid;
	/* pretend thpeval crashed: the record stays, nobody stops the holder */
	fr.pid = 0;
	assert_int_equal(frag_reap_stale("/proc", f->dir, &killed, &e), 0);
	assert_int_equal(killed, 1);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_false(fake_exists(f->dir, FRAG_PID_FILE));
	/* no record: nothing to do */
	assert_int_equal(frag_reap_stale("/proc", f->dir, &killed, &e), 0);
	assert_int_equal(killed, 0);
}

static void test_frag_reused_pid(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	char rec[32];
	int killed = 1;

	/* a record naming a live process that is not a fragmenter (ourselves) */
	snprintf(rec, sizeof(rec), "pid %d\n", (int)getpid());
	assert_int_equal(fake_write(f->dir, FRAG_PID_FILE, rec), 0);
	assert_int_equal(frag_reap_stale("/proc", f->dir, &killed, &e), 0);
	assert_int_equal(killed, 0);
	assert_false(fake_exists(f->dir, FRAG_PID_FILE));
	assert_int_equal(fake_write(f->dir, FRAG_PID_FILE, "pid x\n"), 0);
	assert_int_equal(frag_reap_stale("/proc", f->dir, &killed, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "corrupt fragmenter record"));
}

/*
 * A record under a fake proc root whose comm there says "thpeval-frag" for a
 * real pid (a child of ours): that comm says nothing of the real process, so
 * it is never signalled; the record goes.
 */
static void test_frag_fake_proc_never_signals(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	char rec[32], rel[64], proc[PATH_MAX];
	int killed = 1, st;
	pid_t child = fork();

	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	snprintf(rel, sizeof(rel), "proc/%d/comm", (int)child);
	assert_int_equal(fake_write(f->dir, rel, FRAG_COMM "\n"), 0);
	snprintf(rec, sizeof(rec), "pid %d\n", (int)child);
	assert_int_equal(fake_write(f->dir, FRAG_PID_FILE, rec), 0);
	assert_int_equal(fake_join(proc, sizeof(proc), f->dir, "proc"), 0);
	assert_int_equal(frag_reap_stale(proc, f->dir, &killed, &e), 0);
	assert_int_equal(killed, 0);
	assert_int_equal(waitpid(child, &st, WNOHANG), 0);	/* still running */
	assert_false(fake_exists(f->dir, FRAG_PID_FILE));
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &st, 0), child);
}

/* `thpeval host restore` after a crash ends the holder (the journal's restore path) */
static void test_restore_ends_holder(void **state)
{
	struct fx *f = *state;
	struct frag fr;
	struct err e = ERR_INIT;
	char info[64], proc[PATH_MAX];
	bool restored = false;
	int pid, st, r;

	if (geteuid() != 0) {
		print_message("skipped: host restore takes the host lock in " HOST_LOCK_SUBDIR
			      ", which needs root\n");
		skip();
	}
	assert_int_equal(chmod(f->dir, 0700), 0);
	real_proc(f, proc, sizeof(proc));
	assert_int_equal(frag_start(&fr, proc, f->dir, 16ull << 20, 0, &e), 0);
	pid = fr.pid;
	fr.pid = 0;
	r = host_restore_journal("/", f->dir, &restored, info, sizeof(info), &e);
	if (r == -EBUSY) {	/* a real run holds the host lock: cannot test now */
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		print_message("skipped: a thpeval run holds the host lock (%s)\n", info);
		skip();
	}
	assert_int_equal(r, 0);
	assert_false(restored);	/* no journal: only the holder was ended */
	assert_string_equal(info, "ended the host fragmenter it left");
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st));
	assert_false(fake_exists(f->dir, FRAG_PID_FILE));
}

/*
 * A fragmented host to undo, on a fake /proc: buddyinfo before (buddy6),
 * then split (no free 2M block), compact_memory and the pid file ready, a
 * real child as the holder. Returns the holder's pid.
 */
static int undo_fixture(const struct fx *f, struct frag *fr)
{
	static const char split[] =
		"Node 0, zone   Normal   9000   8000   7000   6000   5000   4000   3000   2000   1000      0      0 \n";
	struct err e = ERR_INIT;
	int pid;

	assert_int_equal(fake_write(f->dir, "proc/buddyinfo", buddy6), 0);
	memset(fr, 0, sizeof(*fr));
	assert_int_equal(fake_join(fr->proc_root, sizeof(fr->proc_root), f->dir, "proc"), 0);
	snprintf(fr->state_dir, sizeof(fr->state_dir), "%s", f->dir);
	assert_int_equal(buddyinfo_read(fr->proc_root, &fr->before, &e), 0);
	assert_int_equal(fake_write(f->dir, "proc/buddyinfo", split), 0);
	assert_int_equal(fake_write(f->dir, "proc/sys/vm/compact_memory", ""), 0);
	assert_int_equal(fake_write(f->dir, FRAG_PID_FILE, "pid 1\n"), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	fr->pid = pid;
	return pid;
}

/*
 * Undo on a host whose 2M blocks did not come back (fake /proc: the holder is
 * a real child, buddyinfo stays fragmented): frag_stop reaps the holder, asks
 * for one compact_memory, says the blocks are not restored, and records what
 * the compaction scanned (the fake counters do not move: 0).
 */
static void test_frag_stop_compacts(void **state)
{
	struct fx *f = *state;
	struct frag fr;
	struct err e = ERR_INIT;
	char buf[16];
	int pid = undo_fixture(f, &fr);

	assert_int_equal(fake_write(f->dir, "proc/vmstat", "compact_migrate_scanned 100\ncompact_stall 1\n"), 0);
	assert_int_equal(frag_stop(&fr, &e), 0);
	assert_int_equal(fr.pid, 0);
	assert_false(alive(pid));
	assert_false(fake_exists(f->dir, FRAG_PID_FILE));
	assert_true(fr.have_undone);
	assert_true(fr.compacted);
	assert_false(fr.restored);
	assert_int_equal(fr.compact_scanned, 0);
	assert_non_null(fake_read(f->dir, "proc/sys/vm/compact_memory", buf, sizeof(buf)));
	assert_string_equal(buf, "1");
	/* nothing left to undo: a second call touches nothing */
	assert_int_equal(fake_write(f->dir, "proc/sys/vm/compact_memory", ""), 0);
	assert_int_equal(frag_stop(&fr, &e), 0);
	assert_non_null(fake_read(f->dir, "proc/sys/vm/compact_memory", buf, sizeof(buf)));
	assert_string_equal(buf, "");
}

/* frag_pcp_fn for the test: lowering "merges" the fake buddyinfo, as emptying the lists does */
struct pcp_calls {
	const char *dir;
	unsigned low, back;
};

static int fake_pcp(void *ctx, bool low, struct err *e)
{
	struct pcp_calls *c = ctx;

	(void)e;
	if (low) {
		c->low++;
		return fake_write(c->dir, "proc/buddyinfo", buddy6);
	}
	c->back++;
	return 0;
}

/*
 * Undo whose freed pages wait on the per-CPU lists (fake /proc, real child as
 * the holder): frag_stop lowers the lists' high marks once, sees the blocks
 * back, puts the marks back and does not compact.
 */
static void test_frag_stop_drains_pcp(void **state)
{
	struct fx *f = *state;
	struct pcp_calls calls = { f->dir, 0, 0 };
	struct frag fr;
	struct err e = ERR_INIT;
	char buf[16];
	int pid = undo_fixture(f, &fr);

	fr.pcp = fake_pcp;
	fr.pcp_ctx = &calls;
	assert_int_equal(frag_stop(&fr, &e), 0);
	assert_false(alive(pid));
	assert_int_equal(calls.low, 1);
	assert_int_equal(calls.back, 1);
	assert_true(fr.pcp_drained);
	assert_true(fr.restored);
	assert_false(fr.compacted);
	assert_non_null(fake_read(f->dir, "proc/sys/vm/compact_memory", buf, sizeof(buf)));
	assert_string_equal(buf, "");
	assert_int_equal(buddy_free_kb(&fr.undone, 9), buddy_free_kb(&fr.before, 9));
}

int main(void)
{
	struct CMUnitTest tests[16];
	size_t n = 0;

	ADD_ONE("buddyinfo/fake", test_buddyinfo_fake);
	ADD_ONE("buddyinfo/malformed", test_buddyinfo_bad);
	ADD_ONE("buddyinfo/unusable-index", test_buddy_unusable);
	ADD_ONE("meminfo/available", test_meminfo_available);
	ADD_ONE("frag/size_for", test_size_for);
	ADD_ONE("frag/real_start_stop", test_frag_real);
	ADD_ONE("frag/undo_compacts_when_blocks_missing", test_frag_stop_compacts);
	ADD_ONE("frag/undo_drains_per_cpu_lists", test_frag_stop_drains_pcp);
	ADD_ONE("frag/reap_stale_after_crash", test_frag_reap_stale);
	ADD_ONE("frag/reused_pid_left_alone", test_frag_reused_pid);
	ADD_ONE("frag/fake_proc_never_signals", test_frag_fake_proc_never_signals);
	ADD_ONE("frag/host_restore_ends_holder", test_restore_ends_holder);
	return _cmocka_run_group_tests("host/frag", tests, n, NULL, NULL);
}
