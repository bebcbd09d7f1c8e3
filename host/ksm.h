/*
 * ksm: the counters of the kernel's samepage merging under a caller-given
 * root (/sys/kernel/mm/ksm: pages_shared, pages_sharing, full_scans), for
 * the KSM arm's time series. Its knobs (run, pages_to_scan, sleep_millisecs)
 * are thp.h keys ("ksm/run"), changed only through journal.h. Never prints,
 * never exits.
 */
#ifndef THPEVAL_HOST_KSM_H
#define THPEVAL_HOST_KSM_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/err.h"

#define KSM_SYSFS_DIR "/sys/kernel/mm/ksm"

struct ksm_stats {
	uint64_t pages_shared;		/* KSM pages in use (one per merged content) */
	uint64_t pages_sharing;		/* pages mapped onto them: the saving */
	uint64_t full_scans;		/* passes over every mergeable area */
};

/* the host has KSM: <root>/sys/kernel/mm/ksm/run exists (CONFIG_KSM) */
bool ksm_present(const char *root);
/* the three counters; -ENOENT (with the path) when one is missing, -EINVAL when not a number */
int ksm_stats_read(const char *root, struct ksm_stats *out, struct err *e);

#endif
