/*
 * collapse: the on-demand recovery of a guest's host huge pages. Finds the
 * guest-RAM ranges of a QEMU process (/proc/PID/maps), asks the kernel to
 * collapse them with process_madvise(MADV_COLLAPSE) (Linux 6.1+), probes that
 * support on a small buffer of our own, and does the arithmetic of a coverage
 * series (times to a level). proc_root is a parameter (fake trees in tests).
 * Never prints, never exits; changes no host setting.
 */
#ifndef THPEVAL_HOST_COLLAPSE_H
#define THPEVAL_HOST_COLLAPSE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "host/procfs.h"
#include "lib/err.h"

#define COLLAPSE_RANGES_MAX 8

struct collapse_range {
	uint64_t start, end;	/* [start, end) in the QEMU's address space */
};

struct collapse_ranges {
	size_t n;
	struct collapse_range r[COLLAPSE_RANGES_MAX];
	uint64_t bytes;		/* sum of the ranges' sizes */
};

/*
 * The guest-RAM mappings of a QEMU: writable, not executable, anonymous (no
 * name, "[anon:...]", "[anon_shmem:...]", "/dev/zero (deleted)") or memfd
 * ("/memfd:..."), each at least guest_ram_bytes long (the selection of
 * smaps_guest_ram() less hugetlbfs, which has nothing to collapse).
 * -ENOENT: the process is gone; -ESRCH: no mapping matched; -E2BIG: more
 * than COLLAPSE_RANGES_MAX; -EBADMSG: malformed maps.
 */
int collapse_find_ranges(const char *proc_root, int pid, uint64_t guest_ram_bytes, struct collapse_ranges *out,
			 struct err *e);

/*
 * Whether this kernel has process_madvise(MADV_COLLAPSE): one call on a small
 * anonymous buffer of this process. 0: it has (a collapse that found no free
 * 2M block still says so); -EOPNOTSUPP with the reason in e otherwise.
 */
int collapse_probe(struct err *e);
/* the probe's verdict on the errno of its call (0: it succeeded) */
int collapse_probe_verdict(int err, struct err *e);

struct collapse_call {
	double duration_s;	/* wall time of all the calls */
	/* 2M blocks of the ranges: all, collapsed (or already huge), refused with
	 * EINVAL (no page table: never touched; or not eligible), busy (EAGAIN),
	 * no huge page free (ENOMEM) */
	uint64_t blocks, collapsed, refused, busy, nomem;
	int result;		/* 0, or the -errno of the last block not collapsed */
};

/*
 * process_madvise(pidfd_open(pid), block, MADV_COLLAPSE) for every 2M block
 * of the ranges in turn: the kernel stops a call at the first block it cannot
 * collapse (a block the guest never touched has no page table: EINVAL), so
 * one call per block collapses all the others. Returns 0 when the calls were
 * made (what each block got is counted in out: a partial collapse is a
 * figure, not a failure), or -errno when they could not be (no such process,
 * no permission, another error); -EINTR when *stop (may be NULL) was set
 * between two blocks (the counts say how far it got).
 */
int collapse_run(int pid, const struct collapse_ranges *rs, volatile const sig_atomic_t *stop,
		 struct collapse_call *out, struct err *e);

/* huge-page coverage of guest RAM: (AnonHugePages + ShmemPmdMapped) / Size * 100, capped at 100 */
double collapse_cov_pct(const struct smaps_cov *c);

/*
 * The time at which a series of (t_s[i], pct[i]) samples (t ascending) first
 * reaches level_pct, interpolated linearly between the last sample below and
 * the first at or above it; the first sample's time when it already is; NAN
 * when the series never reaches it.
 */
double collapse_time_to(const double *t_s, const double *pct, size_t n, double level_pct);

#endif
