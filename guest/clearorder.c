#include "clearorder.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "prng.h"
#include "region.h"
#include "sysinfo.h"

#define CLEARORDER_MAX_PASSES 1000

static const char *const order_names[] = {
	[CLEAR_SEQ_SEQ] = "seq-seq",
	[CLEAR_SEQ_REV] = "seq-rev",
	[CLEAR_REV_SEQ] = "rev-seq",
	[CLEAR_REV_REV] = "rev-rev",
};
_Static_assert(sizeof(order_names) / sizeof(order_names[0]) == CLEAR__COUNT,
	       "order_names out of sync with enum clear_order");

static const struct wl_param clearorder_params[] = {
	/* 16M per task: past the L2, about half this machine's L3 */
	{ "regions", WL_P_U64, offsetof(struct clearorder_opts, regions), "8", 1, 1u << 20,
	  "2M regions in each task's buffer" },
	{ "passes", WL_P_U64, offsetof(struct clearorder_opts, passes), "4", 1,
	  CLEARORDER_MAX_PASSES,
	  "passes over the buffer per combination (combinations shuffled per pass)" },
	{ "tasks", WL_P_U64, offsetof(struct clearorder_opts, tasks), "1", 1, CLEARORDER_MAX_TASKS,
	  "processes clearing their own buffers at the same time" },
	{ "madvise", WL_P_BOOL, offsetof(struct clearorder_opts, madvise), "0", 0, 1,
	  "1: madvise(MADV_HUGEPAGE) the buffers (needed when THP is 'madvise')" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

static const struct wl_metric clearorder_metrics[] = {
	{ "variant", "seq-seq, seq-rev, rev-seq or rev-rev: page order - order inside a page" },
	{ "page_order", "order of the 4K pages in each 2M region: seq or rev" },
	{ "line_order", "order of the 8-byte stores inside a page: seq or rev" },
	{ "tasks", "processes, each with its own buffer" },
	{ "regions", "2M regions per task" },
	{ "passes", "passes per combination" },
	{ "bytes_per_task", "buffer size of each task" },
	{ "madvise", "1 if the buffers were madvise(MADV_HUGEPAGE)d" },
	{ "mib_s", "all tasks together: sum of the tasks' throughputs" },
	{ "task_mib_s", "mean throughput of one task" },
	{ "task_mib_s_min", "slowest task's throughput" },
	{ "ns_per_4k", "mean time to clear one 4K page" },
	{ "huge_pct", "mean AnonHugePages / Rss of the tasks' buffers" },
	{ "llc_bytes", "last-level cache size (cpu0 sysfs; absent if unknown)" },
	{ "llc_per_task_bytes", "llc_bytes / tasks" },
	{ NULL, NULL },
};

const char *clear_order_name(enum clear_order o)
{
	return (unsigned)o < CLEAR__COUNT ? order_names[o] : "?";
}

static void clear_page_seq(volatile uint64_t *w)
{
	size_t i;

	for (i = 0; i < REGION_PAGE / 8; i += 8) {
		w[i] = 0;
		w[i + 1] = 0;
		w[i + 2] = 0;
		w[i + 3] = 0;
		w[i + 4] = 0;
		w[i + 5] = 0;
		w[i + 6] = 0;
		w[i + 7] = 0;
	}
}

static void clear_page_rev(volatile uint64_t *w)
{
	size_t i;

	for (i = REGION_PAGE / 8; i > 0; i -= 8) {
		w[i - 1] = 0;
		w[i - 2] = 0;
		w[i - 3] = 0;
		w[i - 4] = 0;
		w[i - 5] = 0;
		w[i - 6] = 0;
		w[i - 7] = 0;
		w[i - 8] = 0;
	}
}

void clear_regions(char *buf, size_t nregions, enum clear_order o)
{
	const size_t pages = REGION_HUGE / REGION_PAGE;
	bool rev_pages = o == CLEAR_REV_SEQ || o == CLEAR_REV_REV;
	bool rev_lines = o == CLEAR_SEQ_REV || o == CLEAR_REV_REV;
	size_t r, i;

	for (r = 0; r < nregions; r++) {
		char *region = buf + r * REGION_HUGE;

		for (i = 0; i < pages; i++) {
			size_t pg = rev_pages ? pages - 1 - i : i;
			volatile uint64_t *w = (volatile uint64_t *)(void *)(region + pg * REGION_PAGE);

			if (rev_lines)
				clear_page_rev(w);
			else
				clear_page_seq(w);
		}
	}
}

/* What the tasks share with the parent (MAP_SHARED). */
struct co_shared {
	unsigned arrived;	/* barrier counter (atomics) */
	int err[CLEARORDER_MAX_TASKS];
	char msg[CLEARORDER_MAX_TASKS][160];
	double huge_pct[CLEARORDER_MAX_TASKS];
	uint64_t ns[CLEARORDER_MAX_TASKS][CLEAR__COUNT];	/* summed over the passes */
};

static uint64_t co_need(const struct clearorder_opts *a)
{
	return a->tasks * a->regions * (uint64_t)REGION_HUGE + CLEARORDER_MARGIN;
}

static int clearorder_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const struct clearorder_opts *a = opts;
	char need[32], avail_s[32];
	uint64_t avail;

	if (meminfo_get(env->root, "MemAvailable", &avail, e))
		return err_wrap(e, "cannot check the buffers against available memory");
	if (co_need(a) > avail) {
		fmt_size(co_need(a), need, sizeof(need));
		fmt_size(avail, avail_s, sizeof(avail_s));
		return err_set(e, -ENOMEM,
			       "%" PRIu64 " tasks x %" PRIu64 " regions of 2M need %s "
			       "(32M kept free) but only %s is available",
			       a->tasks, a->regions, need, avail_s);
	}
	return 0;
}

/* all tasks wait here until every one has arrived for the gen-th time */
static void barrier(struct co_shared *sh, unsigned tasks, unsigned *gen)
{
	unsigned want = tasks * ++*gen;

	__atomic_add_fetch(&sh->arrived, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(&sh->arrived, __ATOMIC_ACQUIRE) < want)
		sched_yield();
}

/* one task, in a child process: 0 or a negative errno with sh->msg[id] set */
static int task_main(const struct clearorder_opts *a, const struct wl_env *env,
		     struct co_shared *sh, unsigned id, const unsigned char *order)
{
	size_t len = (size_t)(a->regions * REGION_HUGE);
	struct err e = ERR_INIT;
	struct smaps_vma vma;
	struct region rg;
	unsigned gen = 0;
	uint64_t p, k, t0;
	int ret;

	ret = region_map(&rg, len, a->madvise ? MADV_HUGEPAGE : REGION_NO_ADVICE, &e);
	if (!ret) {
		memset(rg.buf, 1, len);	/* prefault: the passes measure stores, not faults */
		ret = region_smaps(env->root, &rg, &vma, &sh->huge_pct[id], &e);
	}
	if (ret)
		snprintf(sh->msg[id], sizeof(sh->msg[id]), "task %u: %.140s", id, e.msg);
	/* a task that failed still meets the others at every barrier */
	barrier(sh, (unsigned)a->tasks, &gen);
	for (p = 0; p < a->passes; p++) {
		for (k = 0; k < CLEAR__COUNT; k++) {
			enum clear_order o = order[p * CLEAR__COUNT + k];

			barrier(sh, (unsigned)a->tasks, &gen);
			if (ret)
				continue;
			t0 = harness_now_ns();
			clear_regions(rg.buf, (size_t)a->regions, o);
			sh->ns[id][o] += harness_now_ns() - t0;
		}
	}
	region_release(&rg);
	return ret;
}

static void task_exit(const struct clearorder_opts *a, const struct wl_env *env,
		      struct co_shared *sh, unsigned id, const unsigned char *order, pid_t parent)
{
	int r;

	/* a runner that kills the workload on timeout takes its tasks with it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);	/* it died before the line above */
	r = task_main(a, env, sh, id, order);
	sh->err[id] = r;
	_exit(r ? 1 : 0);
}

static int send_combo(const struct clearorder_opts *a, const struct wl_env *env,
		      const struct co_shared *sh, enum clear_order o, uint64_t llc, struct err *e)
{
	double bytes = (double)(a->regions * REGION_HUGE), mib = bytes / (1024.0 * 1024.0);
	double sum = 0, min = 0, ns = 0, pct = 0;
	const char *name = clear_order_name(o);
	char half[8];
	struct record r;
	uint64_t t;
	int ret = 0;

	for (t = 0; t < a->tasks; t++) {
		double s = (double)sh->ns[t][o] / 1e9 / (double)a->passes;
		double mib_s = mib / (s > 0 ? s : 1e-9);

		sum += mib_s;
		min = t == 0 || mib_s < min ? mib_s : min;
		ns += (double)sh->ns[t][o] / (double)a->passes / (bytes / REGION_PAGE);
		pct += sh->huge_pct[t];
	}
	harness_record_init(env, REC_RESULT, &r);
	ret |= rec_add_str(&r, "variant", name);
	snprintf(half, sizeof(half), "%.3s", name);
	ret |= rec_add_str(&r, "page_order", half);
	ret |= rec_add_str(&r, "line_order", name + 4);
	ret |= rec_add_u64(&r, "tasks", a->tasks);
	ret |= rec_add_u64(&r, "regions", a->regions);
	ret |= rec_add_u64(&r, "passes", a->passes);
	ret |= rec_add_u64(&r, "bytes_per_task", a->regions * REGION_HUGE);
	ret |= rec_add_u64(&r, "madvise", a->madvise);
	ret |= rec_add_f64(&r, "mib_s", sum);
	ret |= rec_add_f64(&r, "task_mib_s", sum / (double)a->tasks);
	ret |= rec_add_f64(&r, "task_mib_s_min", min);
	ret |= rec_add_f64(&r, "ns_per_4k", ns / (double)a->tasks);
	ret |= rec_add_f64(&r, "huge_pct", pct / (double)a->tasks);
	if (llc) {
		ret |= rec_add_u64(&r, "llc_bytes", llc);
		ret |= rec_add_u64(&r, "llc_per_task_bytes", llc / a->tasks);
	}
	if (ret)
		return err_set(e, -EINVAL, "cannot build the %s record", name);
	return harness_emit(env, &r, e);
}

static uint64_t llc_bytes(const char *root)
{
	struct cache_geom g;
	unsigned level;

	for (level = 4; level >= 2; level--)
		if (!cache_geom_get(root, level, "Unified", &g, NULL))
			return g.size_bytes;
	return 0;
}

static int clearorder_run(const void *opts, const struct wl_env *env, struct record *res,
			  struct err *e)
{
	const struct clearorder_opts *a = opts;
	unsigned char order[CLEARORDER_MAX_PASSES * CLEAR__COUNT];
	pid_t pids[CLEARORDER_MAX_TASKS];
	uint64_t st = prng_mix(env->common->seed ^ 0xc1ea7), p, t, k, n = 0, left;
	struct co_shared *sh;
	pid_t self = getpid();
	int ret = 0, status;

	/* every pass runs the four combinations in its own seeded order, the same in every task */
	for (p = 0; p < a->passes; p++) {
		unsigned char *o = order + p * CLEAR__COUNT;

		for (k = 0; k < CLEAR__COUNT; k++)
			o[k] = (unsigned char)k;
		for (k = CLEAR__COUNT - 1; k > 0; k--) {
			uint64_t j = prng_below(&st, k + 1);
			unsigned char x = o[k];

			o[k] = o[j];
			o[j] = x;
		}
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return err_set(e, -errno, "cannot map the tasks' shared page: %s", strerror(errno));
	for (n = 0; n < a->tasks; n++) {
		pids[n] = fork();
		if (pids[n] == 0)
			task_exit(a, env, sh, (unsigned)n, order, self);
		if (pids[n] < 0) {
			ret = err_set(e, -errno, "cannot fork task %" PRIu64 ": %s", n,
				      strerror(errno));
			break;
		}
	}
	if (ret) {
		/* the tasks started wait at the first barrier for ever: end them */
		for (t = 0; t < n; t++)
			kill(pids[t], SIGKILL);
	}
	/* reap in exit order: a task that dies leaves the others at a barrier, so end them */
	for (left = n; left > 0;) {
		pid_t w = waitpid(-1, &status, 0);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			ret = ret ? ret : err_set(e, -errno, "cannot wait for the tasks: %s",
						  strerror(errno));
			break;
		}
		for (t = 0; t < n && pids[t] != w; t++)
			;
		if (t == n)
			continue;	/* not one of ours */
		left--;
		if (ret)
			continue;
		if (WIFSIGNALED(status)) {
			ret = err_set(e, -EIO, "task %" PRIu64 " killed by signal %d (%s)", t,
				      WTERMSIG(status), strsignal(WTERMSIG(status)));
		} else if (sh->err[t] || !WIFEXITED(status) || WEXITSTATUS(status)) {
			ret = err_set(e, sh->err[t] ? sh->err[t] : -EIO, "%s",
				      sh->msg[t][0] ? sh->msg[t] : "a task failed");
		}
		if (ret)
			for (k = 0; k < n; k++)
				if (k != t)
					kill(pids[k], SIGKILL);
	}
	for (k = 0; !ret && k < CLEAR__COUNT; k++)
		ret = send_combo(a, env, sh, (enum clear_order)k, llc_bytes(env->root), e);
	munmap(sh, sizeof(*sh));
	(void)res;	/* one record per combination, no summary */
	return ret;
}

const struct workload wl_clearorder = {
	.name = "clearorder",
	.description = "clear order (seeds/002): the 4K pages of 2M regions cleared in seq or "
		       "rev page order x seq or rev order inside a page; MiB/s per combination, "
		       "optionally in N tasks at once (one record per combination)",
	.params = clearorder_params,
	.opts_size = sizeof(struct clearorder_opts),
	.metrics = clearorder_metrics,
	.check = clearorder_check,
	.run = clearorder_run,
};
