/*
 * config: the parsed `run` configuration, its defaults and its cross-option
 * checks (the option table that fills it is the run command's, cmd/run.c).
 * Never prints, never exits.
 */
#ifndef THPEVAL_ORCH_RUN_CONFIG_H
#define THPEVAL_ORCH_RUN_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "host/khugepaged.h"
#include "host/thp.h"
#include "images/image.h"
#include "lib/enumstr.h"
#include "lib/err.h"
#include "lib/wlopts.h"
#include "orchestrator/run/workloads.h"
#include "orchestrator/virt/domain.h"

/* host memory before the guests start (--host-state) */
enum host_state {
	HOST_FRESH,		/* as the host has it */
	HOST_FRAGMENTED,	/* a child holds one 4K page of every 2M block it can get */
	HOST_COLLAPSE_MADVISE,	/* guests run on THP never, then the setting and process_madvise(MADV_COLLAPSE) */
	HOST_COLLAPSE_KHUGEPAGED,	/* guests run on THP never, then the setting, and khugepaged works */
	HOST_STATE__COUNT
};
/* host_state_name(): "fresh", "fragmented", "collapse-madvise", "collapse-khugepaged";
 * host_state_parse(): 0 or -EINVAL */
ENUM_DECL(host_state);

/* where guest RAM lives on the host (--host-backing) */
enum host_backing {
	BACKING_ANONYMOUS,	/* anonymous memory: THP 'enabled' governs it */
	BACKING_MEMFD,		/* shmem: 'shmem_enabled' governs it */
	BACKING_HUGETLBFS,	/* a reference arm: 2M hugetlbfs pages */
	BACKING_HUGETLBFS_1G,	/* a reference arm: 1G hugetlbfs pages */
	HOST_BACKING__COUNT
};
/* host_backing_name(): "anonymous", "memfd", "hugetlbfs", "hugetlbfs-1g"; host_backing_parse(): 0 or -EINVAL */
ENUM_DECL(host_backing);

/* the guest's balloon (--balloon) */
enum balloon_arm {
	BALLOON_NONE,		/* <memballoon model='none'/> */
	BALLOON_REPORTING,	/* a virtio balloon with free page reporting (run/balloon.h) */
	BALLOON__COUNT
};
/* balloon_arm_name(): "none", "reporting"; balloon_arm_parse(): 0 or -EINVAL */
ENUM_DECL(balloon_arm);

/* where the workloads run (--target) */
enum run_target {
	TARGET_GUEST,
	TARGET_HOST,		/* directly on the host: the bare-metal rows */
	TARGET_BOTH,
	RUN_TARGET__COUNT
};
/* run_target_name(): "guest", "host", "both"; run_target_parse(): 0 or -EINVAL */
ENUM_DECL(run_target);

#define HUGETLB_ARMS 2			/* hugetlbfs (2M) and hugetlbfs-1g */
#define HUGETLB_2M_KB 2048ull
#define HUGETLB_1G_KB 1048576ull

struct run_config {
	struct thp_setting host_thp[THP_LIST_MAX];	/* treatments, "never" baseline implied */
	size_t n_host_thp;
	struct thp_setting guest_thp[THP_LIST_MAX];	/* the same, no size: guest 'enabled' */
	size_t n_guest_thp;
	/* --workload-opts: WORKLOAD:PARAM=VALUE,... checked against the guest program's tables */
	char wl_opts[WLOPTS_SPEC_MAX + 1];
	/* --guest-shmem-thp: guest shmem_enabled values, each a variant of pgbench's cells; none: kept */
	char guest_shmem[THP_LIST_MAX][THP_NAME_LEN];
	size_t n_guest_shmem;
	char workloads[128];		/* as given: "memset,tlb" or "all" */
	char wl[16][32];		/* resolved against the guest program (main) */
	size_t n_wl;
	struct workload_info wl_info[16];	/* what the guest program offers */
	size_t n_wl_info;
	bool target_guest, target_host;
	unsigned reps, warmup, vcpus;
	unsigned boots;			/* guest boots per host setting: the samples of a host effect; with
					 * a CI target, the fewest */
	bool boots_set;			/* --boots given: exactly that many, unless --target-ci */
	bool pin;			/* --pin=auto: vCPUs and QEMU's other threads on their own host CPUs */
	unsigned cold_reps;		/* memset host-cold series per guest THP setting */
	uint64_t memory, size, accesses, seed;
	uint64_t timeout_ms;
	double min_coverage;
	enum accel accel;
	char uri[256];
	char out_dir[PATH_MAX];
	char kernel[PATH_MAX];
	char guest_bin[PATH_MAX];
	char cache_dir[PATH_MAX];
	char state_dir[PATH_MAX];
	char sysfs_root[PATH_MAX];
	bool quiet;
	enum prefault prefault[PREFAULT__COUNT];	/* host allocation modes, in order */
	size_t n_prefault;
	bool memfd;			/* --host-backing=memfd */
	/* --host-backing=...,hugetlbfs[-1g]: the reference arms, by hugetlbfs page size (KiB) */
	uint64_t hugetlb_kb[HUGETLB_ARMS];
	unsigned n_hugetlb;
	unsigned formats;		/* report formats written under --out (report.h bits) */
	char db[PATH_MAX];		/* history database, "" = none */
	char baseline[PATH_MAX];	/* results file, run dir, "last" or "history"; "" = no gate */
	double threshold;		/* regression threshold, percent */
	bool gate_all;			/* --gate=all: every metric with a direction gates */
	bool fail_on_suspect;		/* --fail-on=suspect: a suspect fails the history gate too */
	double target_ci_host;		/* pct points, host-side effects and interactions; 0 = none */
	double target_ci_guest;		/* pct points, guest-side effects; 0 = none */
	bool target_ci_set;		/* --target-ci given (also "none") */
	unsigned max_reps;		/* with a CI target: repetitions per cell at most */
	bool max_reps_set;
	uint64_t budget_ms;		/* with a CI target: wall-clock budget, 0 = none */
	unsigned guests;		/* guests running the same cells at once (--guests) */
	enum host_state host_state[HOST_STATE__COUNT];	/* fresh and/or fragmented, in order */
	size_t n_host_state;
	bool mthp_sweep;		/* add "<N>K:always" for every size the host offers */
	char image_pkgs[IMAGE_PKGS_MAX][IMAGE_PKG_MAX];	/* --image-packages */
	size_t n_image_pkgs;
	/* --migrate (run/migrate.h): enum migrate_mode values, "none" last; 0 = no axis */
	unsigned migrate[3];
	unsigned n_migrate;
	char emulator[2][256];		/* --emulator=A[,B] (run/abaxis.h); none: libvirt chooses */
	unsigned n_emulator;
	/* the recovery arms (run/recovery.c): --khugepaged's knobs, journaled for the
	 * collapse-khugepaged interval; how long that interval may take at most */
	struct khp_opts khugepaged;
	uint64_t recovery_timeout_ms;
	enum balloon_arm balloon[BALLOON__COUNT];	/* --balloon arms, in order (run/balloon.h) */
	size_t n_balloon;
	unsigned ksm;			/* --ksm: RUN_KSM_OFF and/or RUN_KSM_ON; 0: not asked (KSM as found) */
	uint64_t ksm_pages_to_scan;	/* the KSM arm's scan rate: pages per wake-up */
	uint64_t ksm_sleep_ms;		/* and the sleep between wake-ups */
	uint64_t ksm_wait_ms;		/* how long the arm waits for pages_sharing to rise after its guests */
};

/* --ksm=off,on: the arms (run/ksm.c) */
#define RUN_KSM_OFF 1u
#define RUN_KSM_ON 2u
/*
 * "off", "on" or "off,on" (either order, no repeat) into c->ksm; the
 * checks that need the other options are run_config_check's
 */
int ksm_list_parse(struct run_config *c, const char *arg, struct err *e);

/*
 * The default run (no --boots, no --target-ci): at least 6 boots per host
 * setting, more while a split effect's 95% CI half-width is over 15 points
 * (host-side, interactions) or 5 points (guest-side), with the last round
 * ending within 4 min 45 s, so the whole run takes at most about 5 minutes.
 */
#define RUN_TARGET_CI_HOST 15.0
#define RUN_TARGET_CI_GUEST 5.0
#define RUN_BUDGET_MS ((4ull * 60 + 45) * 1000)

/*
 * Zero, and the defaults of the options whose table rows do not carry them
 * (the kcompile and exec workloads'); the others come from the run command's
 * option table: cmd's run_config_init() applies both.
 */
void run_config_defaults(struct run_config *c);
/* the run has that host state among --host-state's */
bool run_has_host_state(const struct run_config *c, enum host_state s);
/* cross-option checks after parsing */
int run_config_check(struct run_config *c, struct err *e);
/* "hugetlbfs" (2M) or "hugetlbfs-1g": true and its page size in KiB */
bool hugetlb_arm_kb(const char *name, uint64_t *kb);
/* the cells' host_thp of a hugetlbfs arm; NULL for a size with no arm */
const char *hugetlb_arm_name(uint64_t kb);
/*
 * "always,64K:always,never" -> the settings in order, duplicates and "never"
 * (the implied baseline) dropped; SIZE:MODE only when sized. what names the
 * list in messages ("host THP").
 */
int thp_list_parse(const char *s, bool sized, struct thp_setting *out, size_t max, size_t *n,
		   const char *what, struct err *e);

/* --guests: refuse when N guests will not fit in MemAvailable of proc_root */
int guests_fit(const char *proc_root, unsigned n, uint64_t memory, char *note, size_t len, struct err *e);
/* memory one guest takes on the host beyond its RAM (QEMU, TCG code buffer) */
#define GUEST_HOST_OVERHEAD (320ull << 20)

#endif
