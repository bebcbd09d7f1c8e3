#include "forkwl.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "region.h"
#include "sysinfo.h"

static const struct wl_param fork_params[] = {
	{ "size", WL_P_SIZE, offsetof(struct fork_opts, size), "64M", REGION_HUGE, 1ull << 40,
	  "buffer the parent maps and touches before forking (a multiple of 2M)" },
	{ "passes", WL_P_U64, offsetof(struct fork_opts, passes), "20", 1, 1000,
	  "fork()s timed per repetition (the mean is recorded)" },
	{ "madvise", WL_P_BOOL, offsetof(struct fork_opts, madvise), "0", 0, 1,
	  "1: madvise(MADV_HUGEPAGE) the buffer (needed when THP is 'madvise')" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

static const struct wl_metric fork_metrics[] = {
	{ "bytes", "buffer size" },
	{ "passes", "fork()s timed" },
	{ "madvise", "1 if the buffer was madvise(MADV_HUGEPAGE)d" },
	{ "fork_us", "mean time of the fork() call in the parent" },
	{ "cycle_us", "mean time of fork(), the child's exit and its reap" },
	{ "huge_pct", "AnonHugePages / Rss of the buffer when it was forked" },
	{ NULL, NULL },
};

static int fork_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const struct fork_opts *a = opts;
	uint64_t avail;

	if (a->size % REGION_HUGE)
		return err_set(e, -EINVAL, "--size must be a multiple of 2M");
	if (meminfo_get(env->root, "MemAvailable", &avail, e))
		return err_wrap(e, "cannot check the buffer against available memory");
	if (a->size + FORK_MARGIN > avail)
		return err_set(e, -ENOMEM, "a buffer of %" PRIu64 " MiB (32M kept free) does not fit in the %" PRIu64
			       " MiB available", a->size >> 20, avail >> 20);
	return 0;
}

/* one fork, its child exiting at once: the parent's fork() time and the whole cycle, in ns */
static int fork_once(uint64_t *fork_ns, uint64_t *cycle_ns, struct err *e)
{
	uint64_t t0 = harness_now_ns(), t1;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return err_set(e, -errno, "fork: %s", strerror(errno));
	if (pid == 0)
		_exit(0);
	t1 = harness_now_ns();
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_set(e, -errno, "waitpid: %s", strerror(errno));
	*fork_ns = t1 - t0;
	*cycle_ns = harness_now_ns() - t0;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return err_set(e, -EIO, "the forked child did not exit 0 (status %#x)", status);
	return 0;
}

static int fork_run(const void *opts, const struct wl_env *env, struct record *res, struct err *e)
{
	const struct fork_opts *a = opts;
	uint64_t p, f = 0, c = 0, fork_sum = 0, cycle_sum = 0;
	struct smaps_vma vma;
	struct region rg;
	double pct = 0;
	int ret;

	ret = region_map(&rg, (size_t)a->size, a->madvise ? MADV_HUGEPAGE : REGION_NO_ADVICE, e);
	if (ret)
		return ret;
	memset(rg.buf, 1, rg.len);	/* populated: fork copies its page tables */
	ret = region_smaps(env->root, &rg, &vma, &pct, e);
	for (p = 0; !ret && p < a->passes; p++) {
		ret = fork_once(&f, &c, e);
		fork_sum += f;
		cycle_sum += c;
	}
	region_release(&rg);
	if (ret)
		return ret;
	ret = rec_add_u64(res, "bytes", a->size);
	ret |= rec_add_u64(res, "passes", a->passes);
	ret |= rec_add_u64(res, "madvise", a->madvise);
	ret |= rec_add_f64(res, "fork_us", (double)fork_sum / 1e3 / (double)a->passes);
	ret |= rec_add_f64(res, "cycle_us", (double)cycle_sum / 1e3 / (double)a->passes);
	ret |= rec_add_f64(res, "huge_pct", pct);
	return ret ? err_set(e, -EINVAL, "cannot build the fork record") : 0;
}

const struct workload wl_fork = {
	.name = "fork",
	.description = "fork() of a process with a populated buffer: the parent's fork() call and the "
		       "fork-exit-reap cycle (the copy-on-write setup of a Redis BGSAVE)",
	.params = fork_params,
	.opts_size = sizeof(struct fork_opts),
	.metrics = fork_metrics,
	.check = fork_check,
	.run = fork_run,
};
