/*
 * frag: the fragmented-host arm. A holder child takes the host's free 2M
 * blocks while leaving free memory the same (one 4K page kept in each 2M
 * block); undo kills it and compacts. Its pid is journalled under
 * state_dir so a crash is undone by the next run or `thpeval host restore`.
 * Never prints, never exits (the child _exit()s).
 */
#ifndef THPEVAL_HOST_FRAG_H
#define THPEVAL_HOST_FRAG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "host/procfs.h"
#include "lib/err.h"

/*
 * The fragmented-host arm. A child process (PR_SET_PDEATHSIG: it dies
 * with thpeval) maps memory with MADV_HUGEPAGE, touches it, checks how much
 * of it got huge pages, then MADV_DONTNEEDs all but one 4K page of every 2M
 * block and pins what is left in place (MADV_NOHUGEPAGE, so khugepaged never
 * collapses it back). The kernel's deferred-split shrinker is then run (a
 * write of 2 to /proc/sys/vm/drop_caches) so the released pages go back to
 * the buddy allocator at once: free memory stays the same, but free 2M
 * blocks are gone. Undo = kill the holder (+ emptying the per-CPU free lists
 * through the caller's hook, + compact_memory), after which the 2M blocks
 * come back. The holder's pid is recorded in
 * state_dir/host-fragmenter so that a crash is undone by the next run or by
 * `thpeval host restore`. Never prints, never exits (the child _exit()s).
 */

#define FRAG_PID_FILE "host-fragmenter"
#define FRAG_COMM "thpeval-frag"

/*
 * Optional, for frag_stop: lower (low = true) and put back (false) the
 * per-CPU free lists' high marks. The holder's pages, freed when it dies, sit
 * on those lists (the kernel auto-tunes them to thousands of pages per CPU)
 * and do not merge into 2M blocks until they reach the buddy allocator: one
 * kept page per 2M block there keeps thousands of blocks split. run.c sets
 * vm.percpu_pagelist_high_fraction through the journal. 0 on success.
 */
typedef int (*frag_pcp_fn)(void *ctx, bool low, struct err *e);

struct frag {
	int pid;			/* holder, 0 when none */
	char state_dir[PATH_MAX];
	char proc_root[PATH_MAX];	/* "/proc" on a host */
	uint64_t bytes;			/* mapped and touched */
	uint64_t huge_kb;		/* of it on huge pages before the release */
	uint64_t held_kb;		/* still held after the release (one 4K page per 2M) */
	uint64_t memfree_before_kb, memfree_after_kb;	/* MemAvailable around the whole */
	struct buddyinfo before, after, undone;
	bool have_undone;
	bool restored;			/* free 2M blocks back to >= 90% of before */
	bool compacted;			/* compact_memory was needed for that */
	uint64_t compact_scanned;	/* pages its compaction scanned (compact_migrate_scanned) */
	frag_pcp_fn pcp;		/* set by the caller after frag_start; NULL: not drained */
	void *pcp_ctx;
	bool pcp_drained;		/* undo lowered the per-CPU lists' high marks */
	uint64_t frag_compact_scanned;	/* pages any compaction scanned while fragmenting (kcompactd's
					 * proactive compaction undoes the fragmentation as it is made) */
	double seconds;			/* to fragment */
	char stopped[16];		/* why it stopped: "cap" (bytes reached), "floor" (MemAvailable),
					 * "exhausted" (a chunk got under 1/16 huge pages: no 2M blocks left) */
};

/*
 * Fragment up to `bytes` of host memory (a multiple of 2M), 1 GiB at a time
 * (the peak is one chunk), stopping early when MemAvailable would fall under
 * floor_kb or no 2M blocks are left; f->bytes says how much was covered.
 * Records buddyinfo before and after, and compact_migrate_scanned across the
 * fragmenting (frag_compact_scanned). On failure nothing is left running and
 * no pid file.
 */
int frag_start(struct frag *f, const char *proc_root, const char *state_dir, uint64_t bytes, uint64_t floor_kb,
	       struct err *e);
/*
 * Undo: kill and reap the holder, remove the pid file, record buddyinfo once
 * the freed pages have reached the buddy allocator (up to 2 s without
 * growth). While under 90% of the 2M blocks of before are back: empty the
 * per-CPU free lists (f->pcp, when set; pcp_drained) and read again, then one
 * compact_memory and read again (restored says whether they are back;
 * compact_scanned is the kernel's evidence that it compacted). Idempotent.
 */
int frag_stop(struct frag *f, struct err *e);
/*
 * After a crash: kill a holder named in state_dir's pid file if it is still
 * a thpeval fragmenter (comm checked, so a reused pid is left alone), and
 * remove the file. *killed = 1 when one was killed. No file: 0. The pid is
 * a real one, so its identity is checked, and it is signalled, only through
 * the real /proc: under any other proc_root (a fake tree) nothing is ever
 * signalled and the file is only removed (the holder dies with its thpeval).
 */
int frag_reap_stale(const char *proc_root, const char *state_dir, int *killed, struct err *e);

/*
 * The MemAvailable floor while fragmenting: what the guests need plus a
 * safety margin (3 GiB or 10% of available, the larger). frag_size_for: what
 * is available minus that floor, rounded down to 2M; 0 when nothing is left.
 */
uint64_t frag_floor_kb(uint64_t avail_kb, uint64_t guests_need_bytes);
uint64_t frag_size_for(uint64_t avail_kb, uint64_t guests_need_bytes);

#endif
