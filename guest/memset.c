#include "memset.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "prng.h"
#include "sysinfo.h"

static const struct wl_param memset_params[] = {
	{ "size", WL_P_SIZE, offsetof(struct memset_opts, size), "256M", MEMSET_HUGE, 1ull << 43,
	  "buffer size: a multiple of 2M, at most MemAvailable - 32M - size/1024" },
	/* a default that keeps the access phase near a second under TCG (bench/README.md) */
	{ "accesses", WL_P_U64, offsetof(struct memset_opts, accesses), "1000000", 1,
	  1000000000000ull, "dependent loads timed in the access phase" },
	{ "madvise", WL_P_BOOL, offsetof(struct memset_opts, madvise), "0", 0, 1,
	  "1: madvise(MADV_HUGEPAGE) the buffer (needed when THP is 'madvise')" },
	{ "hold", WL_P_BOOL, offsetof(struct memset_opts, hold), "0", 0, 1,
	  "1: fault phase only; report, then keep the buffer mapped until killed (host-cold series)" },
	/* one mincore() per 2M block, its time left out: < 0.1% of a block's fault */
	{ "probe", WL_P_BOOL, offsetof(struct memset_opts, probe), "1", 0, 1,
	  "1: probe each 2M block's first touch with mincore() (first_touch_huge_pct); "
	  "0: one memset, no probe" },
	{ "populate-read", WL_P_BOOL, offsetof(struct memset_opts, populate_read), "0", 0, 1,
	  "1: stress-ng --vm's loop instead of the first touch: MADV_POPULATE_READ, then a "
	  "64-bit store pass, both timed as the fault phase (no probe; for the fidelity bench)" },
	/* stress-ng's loop runs in one process; one pass a process misses its warm steady state */
	{ "passes", WL_P_U64, offsetof(struct memset_opts, passes), "1", 1, 100000,
	  "fault cycles (map, fault phase, unmap) in this process; the last one also runs the "
	  "access phase; loop_mib_s is the throughput over all of them (for the fidelity bench)" },
	/* the host chooses these for its live-migration arms (thpeval run --migrate) */
	{ "keep", WL_P_U64, offsetof(struct memset_opts, keep), "0", 0, 86400,
	  "seconds at most: after the access phase keep the buffer and loop passes (a store to every "
	  "4K page, then the access chase), one info record each (event=keep), until the host's "
	  "stop word or this limit, while the host "
	  "migrates the guest; 0: none" },
	{ "keep-rep", WL_P_U64, offsetof(struct memset_opts, keep_rep), "0", 0, 1000000,
	  "the repetition (--rep) that keeps; the others do not" },
	{ "keep-thp", WL_P_WORD, offsetof(struct memset_opts, keep_thp), "any", 0,
	  sizeof(((struct memset_opts *)0)->keep_thp),
	  "the guest_thp cell that keeps (never, always, madvise), or any" },
	/* the host watches QEMU's RSS meanwhile: free page reporting waits 2 s, then reports */
	{ "refault-wait", WL_P_U64, offsetof(struct memset_opts, refault_wait_ms), "0", 0, 600000,
	  "0: off; N: after the access phase the freed buffer is left N ms to the host (info "
	  "records balloon_event=free and retouch mark the window), then a fresh buffer of the same "
	  "size is touched and timed (refault_ns_per_4k); measured repetitions only" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

static const struct wl_metric memset_metrics[] = {
	{ "size_bytes", "buffer size" },
	{ "accesses", "dependent loads in the access phase" },
	{ "madvise", "1 if the buffer was madvise(MADV_HUGEPAGE)d" },
	{ "populate_read", "1 if the fault phase was stress-ng's loop (populate read, stores)" },
	{ "fault_elapsed_ns", "wall time of the first-touch memset (less the probe's mincore time)" },
	{ "populate_ns", "populate-read mode: the MADV_POPULATE_READ part of fault_elapsed_ns" },
	{ "fault_ns_per_4k", "fault phase time per 4K page" },
	{ "fault_mib_s", "fault phase throughput" },
	{ "fault_minflt", "minor page faults during the fault phase" },
	{ "fault_majflt", "major page faults during the fault phase" },
	{ "fault_user_us", "user CPU time of the fault phase" },
	{ "fault_sys_us", "system CPU time of the fault phase" },
	{ "vma_bytes", "size of the smaps mapping holding the buffer (= size_bytes)" },
	{ "rss_bytes", "Rss of that mapping after the fault phase" },
	{ "anon_huge_bytes", "AnonHugePages of that mapping" },
	{ "guest_huge_pct", "AnonHugePages / Rss * 100 (huge page coverage)" },
	{ "first_touch_blocks", "probe: 2M blocks probed (absent without the probe)" },
	{ "first_touch_huge_blocks", "probe: blocks whose first touch mapped the whole 2M" },
	{ "first_touch_huge_pct", "probe: first_touch_huge_blocks / first_touch_blocks * 100" },
	{ "probe_ns", "probe: time in mincore(), left out of fault_elapsed_ns" },
	{ "passes", "fault cycles run (--passes)" },
	{ "loop_mib_s", "passes x size over the summed fault phase and munmap times of every pass" },
	{ "access_elapsed_ns", "wall time of the pointer chase" },
	{ "access_ns", "access phase time per dependent load" },
	{ "fault_vm_pgfault", "guest /proc/vmstat deltas over the fault phase (whole guest): pgfault," },
	{ "fault_vm_thp_fault_alloc", "  thp_fault_alloc (huge pages faulted in)," },
	{ "fault_vm_thp_fault_fallback", "  thp_fault_fallback," },
	{ "fault_vm_thp_collapse_alloc", "  thp_collapse_alloc (khugepaged)" },
	{ "access_vm_pgfault", "the same four over the access phase: pgfault," },
	{ "access_vm_thp_fault_alloc", "  thp_fault_alloc," },
	{ "access_vm_thp_fault_fallback", "  thp_fault_fallback," },
	{ "access_vm_thp_collapse_alloc", "  thp_collapse_alloc" },
	{ "unmap_ns", "munmap() of the buffer after the access phase" },
	{ "cycle_mib_s", "size / (fault phase + munmap): one stress-ng --vm pass's work" },
	{ "keep_passes", "keep phase: passes run (0: none) (their info records carry keep_pass, keep_t_ms, "
	  "keep_write_ns_per_4k, keep_access_ns)" },
	{ "refault_wait_ms", "--refault-wait: the time the freed buffer was left to the host" },
	{ "refault_elapsed_ns", "wall time of the touch of the fresh buffer after that wait" },
	{ "refault_ns_per_4k", "that time per 4K page: the re-fault cost after the free" },
	{ NULL, NULL },
};

static int memset_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const struct memset_opts *a = opts;
	char s[32], m[32];
	uint64_t avail, need;
	int r;

	if (a->hold && a->passes > 1)
		return err_set(e, -EINVAL, "--hold=1 keeps one buffer: it takes --passes=1, not %" PRIu64,
			       a->passes);
	if (a->keep && a->hold)
		return err_set(e, -EINVAL, "--keep loops the access phase, which --hold=1 leaves out");
	if (strcmp(a->keep_thp, "any") && strcmp(a->keep_thp, "never") && strcmp(a->keep_thp, "always") &&
	    strcmp(a->keep_thp, "madvise"))
		return err_set(e, -EINVAL, "--keep-thp=%s: give never, always, madvise or any", a->keep_thp);
	fmt_size(a->size, s, sizeof(s));
	if (a->size < MEMSET_HUGE || a->size % MEMSET_HUGE)
		return err_set(e, -EINVAL, "size %s is not a multiple of 2M", s);
	r = meminfo_get(env->root, "MemAvailable", &avail, e);
	if (r)
		return err_wrap(e, "cannot check the size against available memory");
	/* the buffer, the chain builder's scratch (4 bytes per 4K page) and a margin */
	need = a->size + a->size / 1024 + MEMSET_MARGIN;
	if (need > avail) {
		fmt_size(avail, m, sizeof(m));
		return err_set(e, -ENOMEM, "size %s exceeds available memory %s (32M kept free)", s,
			       m);
	}
	return 0;
}

static size_t node_offset(uint64_t seed, size_t page)
{
	/* one of the 64 cache lines of the page, so nodes spread over cache sets */
	return (size_t)(prng_mix(seed ^ ((uint64_t)page * 0x9e3779b97f4a7c15ull)) & 63) * 64;
}

void *memset_chain_build(char *buf, size_t npages, uint64_t seed, uint32_t *scratch)
{
	uint64_t st = seed;
	size_t i;

	for (i = 0; i < npages; i++)
		scratch[i] = (uint32_t)i;
	/* Sattolo: j < i, so the permutation i -> scratch[i] is one cycle */
	for (i = npages - 1; i > 0; i--) {
		size_t j = (size_t)prng_below(&st, i);
		uint32_t t = scratch[i];

		scratch[i] = scratch[j];
		scratch[j] = t;
	}
	for (i = 0; i < npages; i++) {
		void **node = (void **)(buf + i * MEMSET_PAGE + node_offset(seed, i));
		size_t nx = scratch[i];

		*node = buf + nx * MEMSET_PAGE + node_offset(seed, nx);
	}
	return buf + node_offset(seed, 0);
}

__attribute__((noinline)) void *memset_chase(void *p, uint64_t n)
{
	void **q = p;

	while (n--)
		q = (void **)*q;	/* each load's address is the previous load's value */
	return q;
}

int memset_touch_probed(char *buf, size_t len, int c, struct memset_probe *out)
{
	unsigned char vec;
	uint64_t t0;
	size_t off;

	memset(out, 0, sizeof(*out));
	for (off = 0; off + MEMSET_HUGE <= len; off += MEMSET_HUGE) {
		char *blk = buf + off;

		*(volatile char *)blk = (char)c;	/* the block's first fault */
		t0 = harness_now_ns();
		if (mincore(blk + MEMSET_PROBE_SUBPAGE * MEMSET_PAGE, MEMSET_PAGE, &vec))
			return -errno;
		out->probe_ns += harness_now_ns() - t0;
		out->huge_blocks += vec & 1;
		out->blocks++;
		memset(blk + 1, c, MEMSET_HUGE - 1);
	}
	return 0;
}

void memset_store64(char *buf, size_t len, uint64_t v)
{
	uint64_t *p = (uint64_t *)(void *)buf, *end = p + len / sizeof(*p);
	size_t k;

	/* 32 stores (256 bytes) a block, as the tool's write64; the barrier keeps it a loop */
	for (; end - p >= 32; p += 32) {
		for (k = 0; k < 32; k++)
			p[k] = v;
		__asm__ volatile("" : : "r"(p) : "memory");
	}
	while (p < end)
		*p++ = v;
}

/* What the phases measured. */
struct memset_times {
	const char *root;		/* where /proc is read */
	struct guest_vmstat vm0, vm1;	/* around the fault phase */
	struct guest_vmstat vm2, vm3;	/* around the access phase */
	uint64_t fault_ns, access_ns, unmap_ns;
	uint64_t refault_ns;	/* the re-touch after --refault-wait; 0: not run */
	uint64_t populate_ns;	/* populate-read mode: the MADV_POPULATE_READ part of fault_ns */
	uint64_t loop_ns;	/* fault phase + munmap of every pass before the last */
	struct harness_usage u0, u1;
	struct smaps_vma vma;
	struct memset_probe probe;
	bool probed;
	uint64_t keep_passes;	/* the keep phase ran this many passes (0: it did not run) */
};

static int add_metrics(struct record *res, const struct memset_opts *a,
		       const struct memset_times *t)
{
	const struct harness_usage *u0 = &t->u0, *u1 = &t->u1;
	const struct smaps_vma *vma = &t->vma;
	uint64_t fault_ns = t->fault_ns, access_ns = t->access_ns;
	double pages = (double)(a->size / MEMSET_PAGE);
	double fault_s = fault_ns ? (double)fault_ns / 1e9 : 1e-9;
	double cycle_s = (double)(fault_ns + t->unmap_ns) / 1e9, loop_s;
	double huge_pct = vma->rss_bytes ?
		100.0 * (double)vma->anon_huge_bytes / (double)vma->rss_bytes : 0.0;
	int r = 0;

	r |= rec_add_u64(res, "size_bytes", a->size);
	if (!a->hold)
		r |= rec_add_u64(res, "accesses", a->accesses);
	r |= rec_add_u64(res, "madvise", a->madvise);
	r |= rec_add_u64(res, "populate_read", a->populate_read);
	r |= rec_add_u64(res, "fault_elapsed_ns", fault_ns);
	if (a->populate_read)
		r |= rec_add_u64(res, "populate_ns", t->populate_ns);
	r |= rec_add_f64(res, "fault_ns_per_4k", (double)fault_ns / pages);
	r |= rec_add_f64(res, "fault_mib_s", (double)a->size / (1024.0 * 1024.0) / fault_s);
	r |= rec_add_u64(res, "fault_minflt", u1->minflt - u0->minflt);
	r |= rec_add_u64(res, "fault_majflt", u1->majflt - u0->majflt);
	r |= rec_add_u64(res, "fault_user_us", u1->user_us - u0->user_us);
	r |= rec_add_u64(res, "fault_sys_us", u1->sys_us - u0->sys_us);
	r |= rec_add_u64(res, "vma_bytes", vma->end - vma->start);
	r |= rec_add_u64(res, "rss_bytes", vma->rss_bytes);
	r |= rec_add_u64(res, "anon_huge_bytes", vma->anon_huge_bytes);
	r |= rec_add_f64(res, "guest_huge_pct", huge_pct);
	if (t->probed) {
		r |= rec_add_u64(res, "first_touch_blocks", t->probe.blocks);
		r |= rec_add_u64(res, "first_touch_huge_blocks", t->probe.huge_blocks);
		r |= rec_add_f64(res, "first_touch_huge_pct",
				 t->probe.blocks ? 100.0 * (double)t->probe.huge_blocks /
							   (double)t->probe.blocks : 0.0);
		r |= rec_add_u64(res, "probe_ns", t->probe.probe_ns);
	}
	r |= guest_vmstat_add(res, "fault_vm_", &t->vm0, &t->vm1);
	if (a->hold)
		return r ? -EINVAL : 0;	/* fault phase only: nothing else was measured */
	r |= rec_add_u64(res, "access_elapsed_ns", access_ns);
	r |= rec_add_f64(res, "access_ns", (double)access_ns / (double)a->accesses);
	r |= guest_vmstat_add(res, "access_vm_", &t->vm2, &t->vm3);
	r |= rec_add_u64(res, "unmap_ns", t->unmap_ns);
	r |= rec_add_u64(res, "keep_passes", t->keep_passes);
	r |= rec_add_f64(res, "cycle_mib_s",
			 (double)a->size / (1024.0 * 1024.0) / (cycle_s > 0 ? cycle_s : 1e-9));
	r |= rec_add_u64(res, "passes", a->passes);
	loop_s = cycle_s + (double)t->loop_ns / 1e9;
	r |= rec_add_f64(res, "loop_mib_s",
			 (double)a->passes * (double)a->size / (1024.0 * 1024.0) / (loop_s > 0 ? loop_s : 1e-9));
	if (t->refault_ns) {
		r |= rec_add_u64(res, "refault_wait_ms", a->refault_wait_ms);
		r |= rec_add_u64(res, "refault_elapsed_ns", t->refault_ns);
		r |= rec_add_f64(res, "refault_ns_per_4k", (double)t->refault_ns / pages);
	}
	return r ? -EINVAL : 0;
}

/*
 * The fault phase on the fresh buffer: the first-touch memset (probed or
 * not), or stress-ng --vm's loop (populate read, then 64-bit stores).
 */
static int fault_phase(const struct memset_opts *a, char *buf, struct memset_times *t,
		       struct err *e)
{
	uint64_t t0;
	int r = 0;

	guest_vmstat_read(t->root, &t->vm0);
	harness_usage_now(&t->u0);
	t0 = harness_now_ns();
	if (a->populate_read) {
		if (madvise(buf, a->size, MADV_POPULATE_READ))
			r = -errno;
		t->populate_ns = harness_now_ns() - t0;
		if (!r)
			memset_store64(buf, a->size, 1);
	} else if (a->probe) {
		r = memset_touch_probed(buf, a->size, 1, &t->probe);
		t->probed = true;
	} else {
		memset(buf, 1, a->size);
	}
	t->fault_ns = harness_now_ns() - t0 - t->probe.probe_ns;
	harness_usage_now(&t->u1);
	guest_vmstat_read(t->root, &t->vm1);
	if (r == -EINVAL && a->populate_read)
		return err_set(e, -EOPNOTSUPP,
			       "madvise(MADV_POPULATE_READ) is not supported (Linux 5.14 or later)");
	if (r)
		return err_set(e, r, "%s failed: %s",
			       a->populate_read ? "madvise(MADV_POPULATE_READ)" : "mincore()",
			       strerror(-r));
	return 0;
}

/* the mapping that holds the buffer: the buffer, 2M of alignment slack and a guard page each side */
static size_t buffer_map_len(const struct memset_opts *a)
{
	return a->size + MEMSET_HUGE + 2 * MEMSET_PAGE;
}

/*
 * Map the buffer: 2M-aligned so THP can back all of it, with PROT_NONE slack
 * (at least one page) on either side, so no neighbour merges with its mapping
 * and its smaps entry is the buffer alone.
 */
static int buffer_map(const struct memset_opts *a, char **map_out, char **buf_out, struct err *e)
{
	size_t map_len = buffer_map_len(a);
	char *map, *buf;
	int r;

	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return err_set(e, -errno, "cannot map %zu bytes: %s", map_len, strerror(errno));
	buf = (char *)(((uintptr_t)map + MEMSET_PAGE + MEMSET_HUGE - 1) &
		       ~(uintptr_t)(MEMSET_HUGE - 1));
	if (mprotect(map, (size_t)(buf - map), PROT_NONE) ||
	    mprotect(buf + a->size, (size_t)(map + map_len - buf - a->size), PROT_NONE)) {
		r = err_set(e, -errno, "cannot protect the guard pages: %s", strerror(errno));
		munmap(map, map_len);
		return r;
	}
	if (a->madvise && madvise(buf, a->size, MADV_HUGEPAGE)) {
		r = err_set(e, -errno, "madvise(MADV_HUGEPAGE) failed: %s", strerror(errno));
		munmap(map, map_len);
		return r;
	}
	*map_out = map;
	*buf_out = buf;
	return 0;
}

/* the passes before the last: map, fault phase, unmap; their time summed into loop_ns */
static int early_passes(const struct memset_opts *a, struct memset_times *t, struct err *e)
{
	size_t map_len = buffer_map_len(a);
	struct memset_times pass;
	uint64_t i, t0;
	char *map, *buf;
	int r;

	for (i = 1; i < a->passes; i++) {
		memset(&pass, 0, sizeof(pass));
		pass.root = t->root;
		if ((r = buffer_map(a, &map, &buf, e)))
			return r;
		r = fault_phase(a, buf, &pass, e);
		t0 = harness_now_ns();
		munmap(map, map_len);
		if (r)
			return r;
		t->loop_ns += pass.fault_ns + (harness_now_ns() - t0);
	}
	return 0;
}

/* this repetition keeps: asked for, not a warm-up, its rep and its guest_thp cell */
static bool keep_here(const struct memset_opts *a, const struct wl_env *env)
{
	const struct wl_common *c = env->common;
	size_t i;

	if (!a->keep || !c || c->warmup || c->rep != a->keep_rep)
		return false;
	if (!strcmp(a->keep_thp, "any"))
		return true;
	for (i = 0; i < c->nlabels; i++)
		if (!strcmp(c->labels[i].key, "guest_thp"))
			return !strcmp(c->labels[i].val, a->keep_thp);
	return false;
}

/*
 * The keep phase: for a->keep seconds, passes over the mapped buffer, each a
 * store to every 4K page (beside its chain node, which it leaves intact:
 * the pages stay dirty for a precopy migration, and a page not yet on a
 * postcopy destination is fetched by the store) and then the timed chase.
 * One info record per pass; the host reads them as the series around the
 * migration it runs meanwhile.
 */
static int keep_phase(const struct memset_opts *a, const struct wl_env *env, char *buf, void **pp,
		      struct memset_times *t, struct err *e)
{
	size_t npages = a->size / MEMSET_PAGE, i;
	uint64_t start = harness_now_ns(), end = start + a->keep * 1000000000ull, t0, w_ns, a_ns;
	uint64_t seed = env->common->seed;
	void *p = *pp;
	struct record r;
	int ret;

	while (harness_now_ns() < end && access(MEMSET_KEEP_STOP_FILE, F_OK) != 0) {
		t0 = harness_now_ns();
		for (i = 0; i < npages; i++)
			*(volatile uint64_t *)(void *)(buf + i * MEMSET_PAGE + node_offset(seed, i) + 8) =
				t->keep_passes;
		w_ns = harness_now_ns() - t0;
		t0 = harness_now_ns();
		p = memset_chase(p, a->accesses);
		a_ns = harness_now_ns() - t0;
		harness_record_init(env, REC_INFO, &r);
		ret = rec_add_str(&r, "event", "keep");
		ret |= rec_add_u64(&r, "keep_pass", t->keep_passes);
		ret |= rec_add_u64(&r, "keep_t_ms", (harness_now_ns() - start) / 1000000);
		ret |= rec_add_f64(&r, "keep_write_ns_per_4k", (double)w_ns / (double)npages);
		ret |= rec_add_f64(&r, "keep_access_ns", (double)a_ns / (double)a->accesses);
		if (ret)
			return err_set(e, -EINVAL, "cannot build a keep record");
		if ((ret = harness_emit(env, &r, e)))
			return ret;
		t->keep_passes++;
	}
	*pp = p;
	return 0;
}

/* an info record marking the re-fault step for the host: balloon_event=EVENT */
static int refault_mark(const struct wl_env *env, const char *event, uint64_t size, struct err *e)
{
	struct record r;

	harness_record_init(env, REC_INFO, &r);
	if (rec_add_str(&r, "balloon_event", event) || rec_add_u64(&r, "freed_bytes", size))
		return err_set(e, -E2BIG, "cannot build the %s record", event);
	return harness_emit(env, &r, e);
}

/*
 * The re-fault step, the buffer freed: wait the host's time (free page
 * reporting hands the freed memory back meanwhile, where the guest has it),
 * then touch a fresh buffer of the same size and time it
 */
static int refault_step(const struct memset_opts *a, const struct wl_env *env, struct memset_times *t,
			struct err *e)
{
	char *map, *buf;
	uint64_t t0;
	int r;

	harness_sleep_ms((unsigned)a->refault_wait_ms);
	if ((r = refault_mark(env, "retouch", a->size, e)) || (r = buffer_map(a, &map, &buf, e)))
		return r;
	t0 = harness_now_ns();
	memset(buf, 1, a->size);
	t->refault_ns = harness_now_ns() - t0;
	if (!t->refault_ns)
		t->refault_ns = 1;
	munmap(map, buffer_map_len(a));
	return 0;
}

static int memset_run(const void *opts, const struct wl_env *env, struct record *res, struct err *e)
{
	const struct memset_opts *a = opts;
	size_t map_len = buffer_map_len(a), npages = a->size / MEMSET_PAGE;
	struct memset_times t;
	uint32_t *scratch = NULL;
	char *map = NULL, *buf;
	uint64_t t0;
	bool refault;
	void *p;
	int ret;

	memset(&t, 0, sizeof(t));
	t.root = env->root;
	if (npages > UINT32_MAX)
		return err_set(e, -E2BIG, "size too large for the chain (more than 2^32 pages)");
	if ((ret = early_passes(a, &t, e)) || (ret = buffer_map(a, &map, &buf, e)))
		return ret;

	ret = fault_phase(a, buf, &t, e);
	if (ret)
		goto cleanup;
	ret = smaps_self(env->root, (uint64_t)(uintptr_t)buf, &t.vma, e);
	if (ret)
		goto cleanup;
	if (a->hold) {
		/* host-cold series: the buffer stays mapped (the harness keeps this process
		 * alive after the record) so the next fresh buffer gets other guest memory */
		ret = add_metrics(res, a, &t);
		if (ret)
			return err_set(e, ret, "cannot add the metrics to the record");
		harness_hold_after_result(env);
		return 0;
	}

	/* access phase: the buffer is mapped; chase a random cycle through its pages */
	scratch = malloc(npages * sizeof(*scratch));
	if (!scratch) {
		ret = err_set(e, -ENOMEM, "cannot allocate the chain's scratch (%zu pages)", npages);
		goto cleanup;
	}
	p = memset_chain_build(buf, npages, env->common->seed, scratch);
	free(scratch);
	scratch = NULL;
	p = memset_chase(p, 1024);	/* warm the code path */
	guest_vmstat_read(t.root, &t.vm2);
	t0 = harness_now_ns();
	p = memset_chase(p, a->accesses);
	t.access_ns = harness_now_ns() - t0;
	guest_vmstat_read(t.root, &t.vm3);
	__asm__ volatile("" : : "r"(p) : "memory");	/* the sink: the chase cannot be dropped */
	if (keep_here(a, env) && (ret = keep_phase(a, env, buf, &p, &t, e)))
		goto cleanup;

	refault = a->refault_wait_ms && !env->common->warmup;
	if (refault && (ret = refault_mark(env, "free", a->size, e)))
		goto cleanup;
	/* freeing the buffer: stress-ng's loop counts it, so it is timed too */
	t0 = harness_now_ns();
	munmap(map, map_len);
	t.unmap_ns = harness_now_ns() - t0;
	map = NULL;
	if (refault && (ret = refault_step(a, env, &t, e)))
		goto cleanup;

	ret = add_metrics(res, a, &t);
	if (ret)
		err_set(e, ret, "cannot add the metrics to the record");
cleanup:
	free(scratch);
	if (map)
		munmap(map, map_len);
	return ret;
}

const struct workload wl_memset = {
	.name = "memset",
	.description = "fault phase (first touch of a fresh 2M-aligned buffer: ns per 4K, "
		       "faults, sys time, huge coverage, per-2M first-touch probe) and access phase (dependent random "
		       "pointer chase, one node per 4K page: ns per access)",
	.params = memset_params,
	.opts_size = sizeof(struct memset_opts),
	.metrics = memset_metrics,
	.check = memset_check,
	.run = memset_run,
};
