/*
 * khugepaged: what the background recovery arm reads of the kernel's
 * khugepaged: its settings and counters (THP_DIR/khugepaged), the kernel
 * thread itself (/proc/<pid>/stat: comm "khugepaged" with PF_KTHREAD) and
 * its CPU time, and the --khugepaged=KNOB=N,... option's syntax. Reads only:
 * never signals the thread, writes no setting (callers go through
 * journal.h). Roots are parameters (fake trees in tests); never prints.
 */
#ifndef THPEVAL_HOST_KHUGEPAGED_H
#define THPEVAL_HOST_KHUGEPAGED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

/* the knobs --khugepaged may set, in this order */
enum khp_knob { KHP_PAGES_TO_SCAN, KHP_SCAN_SLEEP_MS, KHP__COUNT };

struct khp_opts {
	bool set[KHP__COUNT];
	uint64_t v[KHP__COUNT];
};

/* "pages_to_scan", "scan_sleep_millisecs" */
const char *khp_knob_name(enum khp_knob k);
/* the journal key: "khugepaged/pages_to_scan" */
const char *khp_knob_key(enum khp_knob k);

/*
 * "pages_to_scan=N,scan_sleep_millisecs=M" (either or both, once each), with
 * the bounds the kernel's store functions take (pages_to_scan 1..2^32-1,
 * scan_sleep_millisecs 0..2^32-1). 0, or -EINVAL with the reason in e.
 */
int khp_opts_parse(const char *s, struct khp_opts *out, struct err *e);

/* khugepaged's settings and counters, as they are (-1: the file is missing) */
struct khp_state {
	int64_t pages_to_scan, scan_sleep_ms, alloc_sleep_ms, defrag;
	int64_t max_ptes_none, max_ptes_swap, max_ptes_shared;
	int64_t full_scans, pages_collapsed;	/* counters since boot */
};

/*
 * Read the files of <root>THP_DIR/khugepaged. -EOPNOTSUPP with the reason when the
 * directory is missing (a kernel without THP or khugepaged).
 */
int khp_state_read(const char *root, struct khp_state *out, struct err *e);

/*
 * The khugepaged kernel thread: the first /proc/<pid>/stat whose comm is
 * "khugepaged" and whose flags have PF_KTHREAD. -ESRCH when none.
 */
int khp_find_thread(const char *proc_root, int *pid, struct err *e);
/* utime + stime of /proc/<pid>/stat, in seconds (clock ticks / _SC_CLK_TCK) */
int khp_cpu_s(const char *proc_root, int pid, double *cpu_s, struct err *e);

#endif
