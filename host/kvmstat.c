#include "host/kvmstat.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "lib/parse.h"

static const char *const stat_names[KVM_STAT__COUNT] = {
	[KVM_PAGES_4K] = "pages_4k",
	[KVM_PAGES_2M] = "pages_2m",
	[KVM_PAGES_1G] = "pages_1g",
	[KVM_NX_LPAGE_SPLITS] = "nx_lpage_splits",
};

const char *kvm_stat_name(enum kvm_stat s)
{
	return (unsigned)s < KVM_STAT__COUNT ? stat_names[s] : "?";
}

static const char *root_or_empty(const char *root)
{
	return root && strcmp(root, "/") ? root : "";
}

/*
 * a small file holding one decimal number (a u64 is at most 20 digits and a
 * newline): 0, -ENOENT when missing, -EFBIG when longer than any u64,
 * -EBADMSG when empty or not a number, another negative errno when unreadable
 */
static int read_number(const char *path, uint64_t *v)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), saved;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	saved = errno;
	close(fd);
	if (n < 0)
		return -saved;
	if (n == (ssize_t)sizeof(buf))
		return -EFBIG;
	if (n == 0)
		return -EBADMSG;
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return parse_u64(buf, v) ? -EBADMSG : 0;
}

/* "<pid>-<digits>": the directory KVM makes for a VM (the digits are the VM's fd) */
static bool vm_dir_of(const char *name, int pid)
{
	char want[24];
	size_t n = (size_t)snprintf(want, sizeof(want), "%d-", pid);
	const char *p;

	if (strncmp(name, want, n) || !name[n])
		return false;
	for (p = name + n; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* the files of one VM directory into s; how many there were, or a negative errno with e set */
static int vm_dir_read(const char *dir, const char *vm, struct kvm_vm_stats *s, struct err *e)
{
	char path[PATH_MAX + 128];
	int r, found = 0;
	size_t i;

	for (i = 0; i < KVM_STAT__COUNT; i++) {
		if (snprintf(path, sizeof(path), "%s/%s/%s", dir, vm, stat_names[i]) >= (int)sizeof(path))
			return err_set(e, -ENAMETOOLONG, "debugfs path too long");
		r = read_number(path, &s->v[i]);
		if (r == -ENOENT)
			continue;	/* not exposed by this kernel */
		if (r == -EFBIG)
			return err_set(e, -EBADMSG, "malformed '%s': longer than any number", path);
		if (r == -EBADMSG)
			return err_set(e, -EBADMSG, "malformed '%s': expected a number", path);
		if (r)
			return err_set(e, r, "cannot read '%s': %s", path, strerror(-r));
		s->have[i] = true;
		found++;
	}
	return found;
}

int kvm_vm_stats_read(const char *root, int pid, struct kvm_vm_stats *out, struct err *e)
{
	struct kvm_vm_stats sum, one;
	char dir[PATH_MAX];
	struct dirent *d;
	DIR *dp;
	size_t i;
	int r = 0;

	/* cleared here and on every failure: a field is there only when it was read */
	memset(out, 0, sizeof(*out));
	memset(&sum, 0, sizeof(sum));
	if (pid <= 0)
		return err_set(e, -EINVAL, "bad QEMU pid %d", pid);
	if (snprintf(dir, sizeof(dir), "%s%s", root_or_empty(root), KVMSTAT_DIR) >= (int)sizeof(dir))
		return err_set(e, -ENAMETOOLONG, "debugfs path too long");
	dp = opendir(dir);
	if (!dp)
		return err_set(e, -ENOENT, "'%s' is not readable (%s): mount debugfs on /sys/kernel/debug", dir,
			       strerror(errno));
	/* every VM of the process, summed: the guest memory KVM maps for it */
	while ((d = readdir(dp))) {
		if (!vm_dir_of(d->d_name, pid))
			continue;
		memset(&one, 0, sizeof(one));
		r = vm_dir_read(dir, d->d_name, &one, e);
		if (r < 0)
			break;
		if (r == 0) {
			r = err_set(e, -ENOENT, "no KVM statistics in '%s/%s' (kernel too old?)", dir, d->d_name);
			break;
		}
		for (i = 0; i < KVM_STAT__COUNT; i++) {
			/* a sum is there only when every VM has the file */
			sum.have[i] = (sum.vms == 0 || sum.have[i]) && one.have[i];
			if (__builtin_add_overflow(sum.v[i], one.v[i], &sum.v[i])) {
				r = err_set(e, -EOVERFLOW, "%s of the VMs of process %d overflows", stat_names[i], pid);
				break;
			}
		}
		if (r < 0)
			break;
		sum.vms++;
	}
	closedir(dp);
	if (r < 0)
		return r;
	if (!sum.vms)
		return err_set(e, -ENOENT, "no KVM VM of process %d under '%s' (not a KVM guest?)", pid, dir);
	for (i = 0; i < KVM_STAT__COUNT; i++)
		if (!sum.have[i])
			sum.v[i] = 0;
	*out = sum;
	return 0;
}

double kvm_huge_pct(const struct kvm_vm_stats *s)
{
	double small, huge;

	if (!s->have[KVM_PAGES_4K] || !s->have[KVM_PAGES_2M])
		return NAN;
	small = (double)s->v[KVM_PAGES_4K];
	huge = (double)s->v[KVM_PAGES_2M] * 512.0;
	if (s->have[KVM_PAGES_1G])
		huge += (double)s->v[KVM_PAGES_1G] * 262144.0;
	if (small + huge <= 0)
		return NAN;
	return 100.0 * huge / (small + huge);
}

/* "CPU <n>/KVM" or "CPU <n>/TCG", as QEMU names its vCPU threads */
static bool is_vcpu_comm(const char *c)
{
	const char *p = c + 4;

	if (strncmp(c, "CPU ", 4) || *p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return !strcmp(p, "/KVM") || !strcmp(p, "/TCG");
}

int vcpu_threads(const char *proc_root, int pid, int *tids, size_t max, struct err *e)
{
	char dir[PATH_MAX], path[PATH_MAX + 320], comm[64];
	struct dirent *d;
	size_t n = 0;
	DIR *dp;

	if (snprintf(dir, sizeof(dir), "%s/%d/task", proc_root, pid) >= (int)sizeof(dir))
		return err_set(e, -ENAMETOOLONG, "proc path too long");
	dp = opendir(dir);
	if (!dp)
		return err_set(e, -ENOENT, "process %d is gone (no '%s')", pid, dir);
	while ((d = readdir(dp)) && n < max) {
		uint64_t tid;
		ssize_t k;
		int fd;

		if (parse_u64(d->d_name, &tid) || tid == 0 || tid > INT_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%s/comm", dir, d->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* the thread exited */
		k = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (k <= 0)
			continue;
		comm[k] = '\0';
		comm[strcspn(comm, "\n")] = '\0';
		if (is_vcpu_comm(comm))
			tids[n++] = (int)tid;
	}
	closedir(dp);
	return (int)n;
}

static const char *const pmu_names[GPMU__COUNT] = {
	[GPMU_DTLB_LOAD_MISSES] = "dtlb_load_misses",
	[GPMU_ITLB_LOAD_MISSES] = "itlb_load_misses",
};

const char *guest_pmu_event_name(enum guest_pmu_event ev)
{
	return (unsigned)ev < GPMU__COUNT ? pmu_names[ev] : "?";
}

static uint64_t cache_config(enum guest_pmu_event ev)
{
	uint64_t cache = ev == GPMU_DTLB_LOAD_MISSES ? PERF_COUNT_HW_CACHE_DTLB : PERF_COUNT_HW_CACHE_ITLB;

	return cache | ((uint64_t)PERF_COUNT_HW_CACHE_OP_READ << 8) |
	       ((uint64_t)PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
}

void guest_pmu_reason(const char *proc_root, int errnum, char *buf, size_t len)
{
	char path[PATH_MAX];
	uint64_t level;

	if (errnum == ENOENT || errnum == EOPNOTSUPP || errnum == ENODEV) {
		snprintf(buf, len, "no PMU event for guest-mode counting here (%s)", strerror(errnum));
		return;
	}
	if (errnum == ESRCH) {
		snprintf(buf, len, "the vCPU thread is gone (%s)", strerror(errnum));
		return;
	}
	if (errnum != EACCES && errnum != EPERM) {
		snprintf(buf, len, "%s", strerror(errnum));
		return;
	}
	snprintf(path, sizeof(path), "%s/sys/kernel/perf_event_paranoid", proc_root ? proc_root : "/proc");
	if (read_number(path, &level) == 0)
		snprintf(buf, len, "%s: kernel.perf_event_paranoid is %" PRIu64
			 " (run as root, or set it to 1 or lower)", strerror(errnum), level);
	else
		snprintf(buf, len, "%s (kernel.perf_event_paranoid unreadable)", strerror(errnum));
}

void guest_pmu_close(struct guest_pmu *p)
{
	size_t ev, i;

	for (ev = 0; ev < GPMU__COUNT; ev++)
		for (i = 0; i < p->nthreads && i < VCPU_MAX; i++)
			if (p->fd[ev][i] >= 0) {
				close(p->fd[ev][i]);
				p->fd[ev][i] = -1;
			}
	p->open = false;
	p->nthreads = 0;
}

int guest_pmu_open(struct guest_pmu *p, const int *tids, size_t n, struct err *e)
{
	struct perf_event_attr pa;
	size_t ev, i;

	memset(p, 0, sizeof(*p));
	for (ev = 0; ev < GPMU__COUNT; ev++)
		for (i = 0; i < VCPU_MAX; i++)
			p->fd[ev][i] = -1;
	if (n == 0 || n > VCPU_MAX)
		return err_set(e, -EINVAL, "%zu vCPU threads (1 to %d expected)", n, VCPU_MAX);
	p->nthreads = n;
	for (ev = 0; ev < GPMU__COUNT; ev++)
		for (i = 0; i < n; i++) {
			long fd;

			memset(&pa, 0, sizeof(pa));
			pa.size = sizeof(pa);
			pa.type = PERF_TYPE_HW_CACHE;
			pa.config = cache_config((enum guest_pmu_event)ev);
			pa.exclude_host = 1;	/* guest mode only: what the guest's accesses cost */
			pa.exclude_hv = 1;
			fd = syscall(SYS_perf_event_open, &pa, tids[i], -1, -1, PERF_FLAG_FD_CLOEXEC);
			if (fd < 0) {
				int saved = errno;
				char why[200];

				guest_pmu_close(p);
				guest_pmu_reason("/proc", saved, why, sizeof(why));
				return err_set(e, saved == ENOENT || saved == EOPNOTSUPP || saved == ENODEV ? -ENODEV : -saved,
					       "perf_event_open(%s, thread %d): %s", pmu_names[ev], tids[i], why);
			}
			p->fd[ev][i] = (int)fd;
		}
	p->open = true;
	return 0;
}

int guest_pmu_read(const struct guest_pmu *p, uint64_t out[GPMU__COUNT], struct err *e)
{
	size_t ev, i;

	/* zeros on every failure: a count is there only when it was read */
	memset(out, 0, sizeof(uint64_t) * GPMU__COUNT);
	if (!p->open)
		return err_set(e, -ENODEV, "the guest-mode counters are not open");
	for (ev = 0; ev < GPMU__COUNT; ev++)
		for (i = 0; i < p->nthreads; i++) {
			uint64_t v;
			ssize_t n = read(p->fd[ev][i], &v, sizeof(v));
			int saved = errno;

			if (n != (ssize_t)sizeof(v)) {
				memset(out, 0, sizeof(uint64_t) * GPMU__COUNT);
				return err_set(e, -EIO, "cannot read the %s counter: %s", pmu_names[ev],
					       n < 0 ? strerror(saved) : "short read");
			}
			out[ev] += v;
		}
	return 0;
}
