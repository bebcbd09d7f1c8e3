#include "host/frag.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "host/procfs.h"
#include "lib/clock.h"
#include "lib/fstree.h"
#include "lib/parse.h"
#include "lib/smaps.h"

#define BLOCK (2ull << 20)
#define PAGE 4096ull
#define FRAG_TIMEOUT_MS (300 * 1000)
#define HUGE_ORDER 9
#define FRAG_CHUNK (1ull << 30)
#define FRAG_SETTLE_TICK_MS 250		/* undo: buddyinfo read this often... */
#define FRAG_SETTLE_TICKS 8		/* ...until 2 s pass without growth */
#define FRAG_SETTLE_MAX_TICKS 240	/* ...and for 60 s at most */

uint64_t frag_size_for(uint64_t avail_kb, uint64_t guests_need_bytes)
{
	uint64_t avail = avail_kb * 1024, margin = avail / 10;

	if (margin < (3ull << 30))
		margin = 3ull << 30;
	if (avail <= guests_need_bytes + margin)
		return 0;
	return (avail - guests_need_bytes - margin) & ~(BLOCK - 1);
}

/* ---- the holder (child) ------------------------------------------------------ */

/* AnonHugePages of this process from its smaps_rollup; 0 when unreadable or malformed */
static uint64_t self_anon_huge_kb(void)
{
	char line[512];
	struct smaps_parser p;
	struct smaps_map m;
	bool ok = true;
	FILE *f = fopen("/proc/self/smaps_rollup", "re");

	if (!f)
		return 0;
	smaps_init(&p);
	while (ok && fgets(line, sizeof(line), f)) {
		size_t n = strlen(line);

		if (n + 1 == sizeof(line) && line[n - 1] != '\n')
			ok = false;	/* longer than any rollup line */
		else
			ok = smaps_feed(&p, line, n - (line[n - 1] == '\n'), &m) >= 0;
	}
	fclose(f);
	if (!ok || !smaps_finish(&p, &m) || !m.have[SMAPS_ANON_HUGE])
		return 0;
	return m.kb[SMAPS_ANON_HUGE];
}

static void child_report(int fd, const char *msg)
{
	size_t off = 0, len = strlen(msg);

	while (off < len) {
		ssize_t n = write(fd, msg + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(3);
		off += (size_t)n;
	}
}

static uint64_t self_avail_kb(const char *proc_root)
{
	uint64_t kb = 0;

	meminfo_available_kb(proc_root, &kb, NULL);
	return kb;
}

static void drop_slab(const char *proc_root)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/sys/vm/drop_caches", proc_root);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		/* best effort: buddyinfo shows what was freed */
		(void)!write(fd, "2", 1);
		close(fd);
	}
}

/*
 * Chunk by chunk, so that the peak is one chunk and not the whole span: map a
 * chunk with MADV_HUGEPAGE, touch it, keep the first 4K page of every 2M
 * block, give back the rest, run the deferred-split shrinker so the released
 * pages are free at once. The next chunk's huge pages must then come from
 * other 2M blocks. Stop at max bytes, when MemAvailable falls under the floor,
 * or when a chunk gets less than 1/16 of huge pages (no 2M blocks left).
 */
static void __attribute__((noreturn)) child_main(int wfd, const char *proc_root, uint64_t max, uint64_t floor_kb,
						 pid_t parent)
{
	char msg[160];
	uint64_t off, huge_kb = 0, done = 0;
	const char *why = "cap";

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(2);
	prctl(PR_SET_NAME, FRAG_COMM);
	while (done < max) {
		uint64_t chunk = max - done < FRAG_CHUNK ? max - done : FRAG_CHUNK, got;
		char *map, *p;

		if (self_avail_kb(proc_root) < floor_kb + chunk / 1024) {
			why = "floor";
			break;
		}
		map = mmap(NULL, chunk + BLOCK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			   -1, 0);
		if (map == MAP_FAILED) {
			snprintf(msg, sizeof(msg), "err %d mmap\n", errno);
			child_report(wfd, msg);
			_exit(1);
		}
		p = (char *)(((uintptr_t)map + BLOCK - 1) & ~(uintptr_t)(BLOCK - 1));
		if (madvise(p, chunk, MADV_HUGEPAGE) < 0) {
			snprintf(msg, sizeof(msg), "err %d madvise(MADV_HUGEPAGE)\n", errno);
			child_report(wfd, msg);
			_exit(1);
		}
		for (off = 0; off < chunk; off += PAGE)
			p[off] = 1;
		got = self_anon_huge_kb();
		for (off = 0; off < chunk; off += BLOCK)
			if (madvise(p + off + PAGE, BLOCK - PAGE, MADV_DONTNEED) < 0) {
				snprintf(msg, sizeof(msg), "err %d madvise(MADV_DONTNEED)\n", errno);
				child_report(wfd, msg);
				_exit(1);
			}
		/* khugepaged would collapse the blocks back to full huge pages */
		madvise(p, chunk, MADV_NOHUGEPAGE);
		drop_slab(proc_root);
		huge_kb += got;
		done += chunk;
		if (got * 1024 < chunk / 16) {
			why = "exhausted";
			break;
		}
	}
	snprintf(msg, sizeof(msg), "ok %" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n", huge_kb,
		 (uint64_t)(done / BLOCK * (PAGE / 1024)), done, why);
	child_report(wfd, msg);
	close(wfd);
	for (;;)
		pause();
}

/* ---- the parent side -------------------------------------------------------- */

/* pages all compaction has scanned since boot; -1 when /proc/vmstat lacks it */
static int migrate_scanned(const char *proc_root, uint64_t *n)
{
	struct vmstat v;

	*n = 0;
	if (vmstat_read(proc_root, &v, NULL) || vmstat_get(&v, "compact_migrate_scanned", n))
		return -1;
	return 0;
}

static int pid_file(const char *state_dir, char *buf, size_t len, struct err *e)
{
	if ((size_t)snprintf(buf, len, "%s/%s", state_dir, FRAG_PID_FILE) >= len)
		return err_set(e, -ENAMETOOLONG, "state directory path '%s' is too long", state_dir);
	return 0;
}

static int write_pid_file(const char *state_dir, int pid, struct err *e)
{
	char path[PATH_MAX], buf[32];
	int fd, n, saved;

	if (pid_file(state_dir, path, sizeof(path), e))
		return e->code;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		saved = errno;
		return err_set(e, -saved, "cannot record the fragmenter in '%s': %s", path, strerror(saved));
	}
	n = snprintf(buf, sizeof(buf), "pid %d\n", pid);
	if (write(fd, buf, (size_t)n) != n || fsync(fd) < 0) {
		saved = errno ? errno : EIO;
		close(fd);
		unlink(path);
		return err_set(e, -saved, "cannot record the fragmenter in '%s': %s", path, strerror(saved));
	}
	close(fd);
	return 0;
}

static int write_knob(const char *proc_root, const char *rel, const char *val, struct err *e)
{
	char path[PATH_MAX];
	int fd, saved;
	ssize_t n;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", proc_root, rel) >= sizeof(path))
		return err_set(e, -ENAMETOOLONG, "proc root '%s' is too long", proc_root);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		return err_set(e, -saved, "cannot open '%s': %s", path, strerror(saved));
	}
	n = write(fd, val, strlen(val));
	saved = errno;
	close(fd);
	if (n != (ssize_t)strlen(val))
		return err_set(e, -saved, "cannot write '%s': %s", path, strerror(saved));
	return 0;
}

static int avail_kb(const char *proc_root, uint64_t *kb)
{
	return meminfo_available_kb(proc_root, kb, NULL);
}

static void kill_reap(int pid)
{
	int st;

	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* read "ok HUGE HELD" or "err ERRNO WHAT" from the holder within the timeout */
static int read_report(struct frag *f, int rfd, struct err *e)
{
	char buf[160];
	size_t off = 0;
	double t0 = mono_s();

	for (;;) {
		struct pollfd pfd = { rfd, POLLIN, 0 };
		int left = FRAG_TIMEOUT_MS - (int)((mono_s() - t0) * 1000);
		ssize_t n;
		char *nl;

		if (left <= 0)
			return err_set(e, -ETIMEDOUT, "the fragmenter did not finish within %d s", FRAG_TIMEOUT_MS / 1000);
		if (poll(&pfd, 1, left) < 0) {
			if (errno == EINTR)
				continue;
			return err_set(e, -errno, "poll on the fragmenter failed: %s", strerror(errno));
		}
		n = read(rfd, buf + off, sizeof(buf) - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return err_set(e, -EIO, "the fragmenter died before it finished (out of memory?)");
		off += (size_t)n;
		buf[off] = '\0';
		nl = strchr(buf, '\n');
		if (!nl) {
			if (off >= sizeof(buf) - 1)
				return err_set(e, -EPROTO, "the fragmenter sent a malformed report");
			continue;
		}
		*nl = '\0';
		if (sscanf(buf, "ok %" SCNu64 " %" SCNu64 " %" SCNu64 " %15s", &f->huge_kb, &f->held_kb, &f->bytes,
			   f->stopped) == 4)
			return 0;
		{
			int er = 0;
			char what[64] = "";

			if (sscanf(buf, "err %d %63s", &er, what) == 2)
				return err_set(e, -er, "the fragmenter failed: %s: %s", what, strerror(er));
		}
		return err_set(e, -EPROTO, "the fragmenter sent a malformed report");
	}
}

int frag_start(struct frag *f, const char *proc_root, const char *state_dir, uint64_t bytes, uint64_t floor_kb,
	       struct err *e)
{
	pid_t parent = getpid(), pid;
	int fds[2], r;
	double t0 = mono_s();
	uint64_t scanned0, scanned1;
	bool have_scanned;

	memset(f, 0, sizeof(*f));
	if (!bytes || bytes % BLOCK)
		return err_set(e, -EINVAL, "fragmenter size %" PRIu64 " is not a non-zero multiple of 2M", bytes);
	if (strlen(state_dir) >= sizeof(f->state_dir) || strlen(proc_root) >= sizeof(f->proc_root))
		return err_set(e, -ENAMETOOLONG, "state or proc path too long");
	strcpy(f->state_dir, state_dir);
	strcpy(f->proc_root, proc_root);
	f->bytes = bytes;
	r = buddyinfo_read(proc_root, &f->before, e);
	if (r)
		return r;
	avail_kb(proc_root, &f->memfree_before_kb);
	have_scanned = migrate_scanned(proc_root, &scanned0) == 0;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return err_set(e, -errno, "cannot create a pipe for the fragmenter: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		r = -errno;
		close(fds[0]);
		close(fds[1]);
		return err_set(e, r, "cannot start the fragmenter: %s", strerror(-r));
	}
	if (pid == 0) {
		close(fds[0]);
		child_main(fds[1], proc_root, bytes, floor_kb, parent);
	}
	close(fds[1]);
	f->pid = pid;
	r = write_pid_file(state_dir, pid, e);
	if (!r)
		r = read_report(f, fds[0], e);
	close(fds[0]);
	if (r) {
		frag_stop(f, NULL);
		return r;
	}
	r = buddyinfo_read(proc_root, &f->after, e);
	if (r) {
		frag_stop(f, NULL);
		return r;
	}
	avail_kb(proc_root, &f->memfree_after_kb);
	if (have_scanned && !migrate_scanned(proc_root, &scanned1) && scanned1 > scanned0)
		f->frag_compact_scanned = scanned1 - scanned0;
	f->seconds = mono_s() - t0;
	return 0;
}

/*
 * Read buddyinfo into out until free memory in 2M blocks reaches want or
 * stops growing for a while: pages freed by an exiting process sit in the
 * per-CPU free lists first and reach the buddy allocator (and merge) as the
 * kernel decays those lists, about once a second.
 */
static int settle(const char *proc_root, struct buddyinfo *out, uint64_t want, struct err *e)
{
	const struct timespec tick = { 0, FRAG_SETTLE_TICK_MS * 1000000L };
	uint64_t best, got;
	unsigned still = 0, ticks;
	int r;

	if ((r = buddyinfo_read(proc_root, out, e)))
		return r;
	best = buddy_free_kb(out, HUGE_ORDER);
	for (ticks = 0; best < want && still < FRAG_SETTLE_TICKS && ticks < FRAG_SETTLE_MAX_TICKS; ticks++) {
		nanosleep(&tick, NULL);
		if ((r = buddyinfo_read(proc_root, out, e)))
			return r;
		got = buddy_free_kb(out, HUGE_ORDER);
		if (got > best) {
			best = got;
			still = 0;
		} else {
			still++;
		}
	}
	return 0;
}

/* pages the migrate scanner looked at during one compact_memory (0 when unknown) */
static uint64_t compact_run(const char *proc_root)
{
	uint64_t a, b;
	int r = migrate_scanned(proc_root, &a);

	write_knob(proc_root, "sys/vm/compact_memory", "1", NULL);
	if (r || migrate_scanned(proc_root, &b) || b < a)
		return 0;
	return b - a;
}

int frag_stop(struct frag *f, struct err *e)
{
	char path[PATH_MAX];
	uint64_t want, got;
	int r;

	if (!f->pid)
		return 0;
	kill_reap(f->pid);
	f->pid = 0;
	if (!pid_file(f->state_dir, path, sizeof(path), NULL))
		unlink(path);
	want = buddy_free_kb(&f->before, HUGE_ORDER) / 10 * 9;
	r = settle(f->proc_root, &f->undone, want, e);
	if (r)
		return r;
	f->have_undone = true;
	got = buddy_free_kb(&f->undone, HUGE_ORDER);
	/* the lists' decay empties them over seconds: settle sees the blocks grow;
	 * compaction frees the pages it migrates from to those lists too */
	if (got < want && f->pcp && !f->pcp(f->pcp_ctx, true, NULL)) {
		f->pcp_drained = true;
		r = settle(f->proc_root, &f->undone, want, e);
		got = buddy_free_kb(&f->undone, HUGE_ORDER);
	}
	if (!r && got < want) {
		/* pages migrated into the holes while the guests ran keep their blocks split */
		f->compacted = true;
		f->compact_scanned = compact_run(f->proc_root);
		r = settle(f->proc_root, &f->undone, want, e);
		got = buddy_free_kb(&f->undone, HUGE_ORDER);
	}
	if (f->pcp_drained)
		f->pcp(f->pcp_ctx, false, NULL);	/* else the journal puts it back */
	if (r)
		return r;
	f->restored = got >= want;
	return 0;
}

static bool is_fragmenter(const char *proc_root, int pid)
{
	char path[PATH_MAX], comm[32] = "";
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%d/comm", proc_root, pid);
	fp = fopen(path, "re");
	if (!fp)
		return false;
	if (!fgets(comm, sizeof(comm), fp))
		comm[0] = '\0';
	fclose(fp);
	comm[strcspn(comm, "\n")] = '\0';
	if (strcmp(comm, FRAG_COMM))
		return false;
	/* a zombie holds no memory: it is gone for our purpose */
	snprintf(path, sizeof(path), "%s/%d/stat", proc_root, pid);
	fp = fopen(path, "re");
	if (fp) {
		char st[512];
		const char *rp;

		if (fgets(st, sizeof(st), fp) && (rp = strrchr(st, ')')) && rp[1] == ' ' && rp[2] == 'Z') {
			fclose(fp);
			return false;
		}
		fclose(fp);
	}
	return true;
}

int frag_reap_stale(const char *proc_root, const char *state_dir, int *killed, struct err *e)
{
	char path[PATH_MAX], line[64];
	uint64_t pid;
	int i;

	*killed = 0;
	if (pid_file(state_dir, path, sizeof(path), e))
		return e->code;
	{
		struct err why = ERR_INIT;
		size_t n;
		char *text;
		int r;

		/* a FIFO or a link planted there is refused, never waited on */
		r = read_regular(path, "fragmenter record", "", RF_NOFOLLOW, sizeof(line) - 1, &text, &n, &why);
		if (r == -ENOENT)
			return 0;
		if (r && r != -EFBIG)
			return err_set(e, r, "%s: check 'pgrep %s', then remove it", why.msg, FRAG_COMM);
		snprintf(line, sizeof(line), "%s", r ? "" : text);	/* too long: corrupt, below */
		free(text);
	}
	line[strcspn(line, "\n")] = '\0';
	if (strncmp(line, "pid ", 4) || parse_u64_range(line + 4, 2, INT32_MAX, &pid)) {
		unlink(path);
		return err_set(e, -EBADMSG, "corrupt fragmenter record '%s' (removed): check 'pgrep %s'", path,
			       FRAG_COMM);
	}
	/* a fake tree's comm says nothing about the real process of that pid */
	if (!strcmp(proc_root, "/proc") && is_fragmenter(proc_root, (int)pid)) {
		kill((pid_t)pid, SIGKILL);
		*killed = 1;
		/* not our child: wait for it to be gone */
		for (i = 0; i < 100 && is_fragmenter(proc_root, (int)pid); i++)
			usleep(50 * 1000);
	}
	unlink(path);
	return 0;
}

uint64_t frag_floor_kb(uint64_t avail_kb, uint64_t guests_need_bytes)
{
	uint64_t margin = avail_kb / 10;

	if (margin < (3ull << 20))
		margin = 3ull << 20;
	return guests_need_bytes / 1024 + margin;
}
