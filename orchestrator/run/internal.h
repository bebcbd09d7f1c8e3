/*
 * internal: the types the files of the run layer share and nothing else
 * sees: a host group, the per-guest context the record callbacks fill, the
 * host snapshots, the host THP plan. Each file's functions are in its own
 * header; run.h is the layer's face to the commands.
 */
#ifndef THPEVAL_ORCH_RUN_INTERNAL_H
#define THPEVAL_ORCH_RUN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "host/frag.h"
#include "host/journal.h"
#include "host/kvmstat.h"
#include "host/procfs.h"
#include "images/image.h"
#include "images/srcdisk.h"
#include "orchestrator/run/run.h"
#include "orchestrator/virt/virt.h"


#define MAX_REJECTED 64		/* garbage lines tolerated from one guest */

/* one host configuration: a freshly booted guest runs every guest cell in it */
struct host_group {
	char host_thp[THP_NAME_LEN];	/* the cells' host_thp: the setting's text, or a hugetlbfs arm's name */
	struct thp_setting thp;		/* what the group sets on the host: never for the hugetlbfs arms */
	enum prefault prefault;
	enum host_state host_state;
	uint64_t hugetlb_kb;		/* a reference arm: guest RAM on hugetlbfs pages of this size; 0: THP */
	unsigned arm;			/* the A/B arm its guests boot with (run/abaxis.h); 0 without one */
	enum balloon_arm balloon;	/* its guests' balloon (run/balloon.h) */
	unsigned ksm;			/* the KSM arm (run/ksm.c): RUN_KSM_OFF, RUN_KSM_ON; 0 without --ksm */
	struct host_session *ksm_hs;	/* where the on arm starts KSM (through the journal) */
};

/* per-size mTHP counters of one size (host-wide), for coverage below PMD size */
struct mthp_snap {
	bool have;
	uint64_t alloc, fallback;
};

/* what the guests of one group share: the host-wide per-size counters at boot */
struct group_shared {
	unsigned mthp_kb;		/* the group's host size below PMD size, else 0 */
	uint64_t hugetlb_kb;		/* a hugetlbfs arm's page size, else 0 */
	struct mthp_snap base;
	size_t n;
	struct guest_ctx *all[8];
};

/* host-side counters sampled at every record, for per-repetition deltas */
struct host_snap {
	bool have;
	uint64_t qemu_minflt;
	struct vmstat vm;
	bool have_kvm, have_pmu;
	struct kvm_vm_stats kvm;	/* KVM guests with debugfs */
	uint64_t pmu[GPMU__COUNT];	/* KVM guests on a host with a PMU */
};

/* a recovery arm's access passes as they arrive from the guest (run/recovery.c) */
struct probe_rx {
	bool started, ended, recovered;	/* probe_start seen; probe_end seen; the interval ran */
	double period_s;
	unsigned long long size_bytes, accesses;
	char guest_thp[16];
	double guest_huge_pct;		/* the buffer's share on guest huge pages; NAN: not sent */
	size_t n;
	double t[RES_ACCESS_MAX], ns[RES_ACCESS_MAX];	/* host CLOCK_MONOTONIC at arrival; ns per access */
	/* the fresh-buffer touch the host asked for (probe_touch): arrival, size, guest time */
	bool touched;
	double t_touch, touch_ms;
	unsigned long long touch_bytes;
};

/* balloon.c: one guest's re-fault windows, from a free mark to its re-touch result */
struct balloon_watch {
	bool on;			/* the run has the balloon axis: the guest's marks are watched */
	bool open, retouched;		/* a window is open; its retouch mark came */
	size_t idx;			/* its entry in results.balloons */
	double t_free, next;		/* the free mark (mono_s) and the next sample after it */
};

/* what one guest is expected to produce, and what it did */
struct guest_ctx {
	const struct run_config *cfg;
	const struct run_io *io;
	struct results *res;
	struct guest_log *log;
	unsigned boot;			/* this boot's index in results.guests: every sample carries it */
	struct guest *g;
	const char *host_thp;
	const char *prefault;
	const char *proc_root;
	const char *host_state;
	const char *balloon;		/* its balloon arm's name */
	struct balloon_watch bw;
	struct group_shared *grp;
	uint64_t last_rss_kb;		/* of the guest-RAM mapping at the last sample */
	struct mthp_snap msnap;		/* per repetition */
	struct host_snap snap;
	double t_create;
	double t_started;		/* guest_start() returned: QEMU runs the guest */
	bool got_first, got_end;
	uint32_t next_seq;
	int qemu_pid;
	bool kvm;		/* a KVM guest: KVM stats and guest-mode counters apply */
	bool pmu_tried;
	struct guest_pmu pmu;
	struct err err;		/* a protocol violation that stops this guest */
	struct migrate_guest *mig;	/* its migration arm (run/migrate.c), else NULL */
	struct probe_rx probe;	/* a recovery arm's access passes */
};

/* the host's per-size mTHP knobs, and whether this run sets any of them */
struct host_plan {
	unsigned sizes[16];		/* kB, with a hugepages-<N>kB/enabled file */
	size_t nsizes;
	bool sized;			/* a SIZE:MODE value is planned */
	const struct thp_settings *before;
};

#endif
