/*
 * internal: what the files of the run layer share and nothing else sees: a
 * host group, the per-guest context the record callbacks fill, the host
 * snapshots, the host THP plan, and the functions one file of the loop calls
 * in another. run.h is the layer's face to the commands.
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
};

/* the host's per-size mTHP knobs, and whether this run sets any of them */
struct host_plan {
	unsigned sizes[16];		/* kB, with a hugepages-<N>kB/enabled file */
	size_t nsizes;
	bool sized;			/* a SIZE:MODE value is planned */
	const struct thp_settings *before;
};

/* loop.c */
void run_note(const struct run_io *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool guest_thp_planned(const struct run_config *cfg, const char *s);
bool workload_planned(const struct run_config *cfg, const char *w);
bool kcompile_planned(const struct run_config *cfg);
/* a planned workload runs a user's command (exec): it goes on the kernel command line */
bool exec_planned(const struct run_config *cfg);
uint64_t guest_timeout_ms(const struct run_config *cfg);
void run_append(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* telemetry.c */
void mthp_read(const char *root, unsigned kb, struct mthp_snap *m);
void sample_host_coverage(struct guest_ctx *gc, struct cell *c);
void host_snap_take(struct guest_ctx *gc, struct host_snap *s);
void host_telemetry(struct guest_ctx *gc, struct cell *c, bool keep);
void telemetry_notes(struct results *res, enum accel accel, bool guests);

/* records.c */
bool is_label(const char *key);
int on_record(void *opaque, enum guest_event ev, const struct record *rec, const char *reason);
/* the boot's phases from a hello's boot_*_us times; needs create_to_first_record_s, boot_create_s */
void boot_phases(struct guest_log *l, const struct record *rec);

/* guests.c */
bool guest_pins(const struct run_config *cfg, unsigned gi, unsigned n, int *pins);
struct recovery;
/* rc: a recovery group (collapse after each guest's series), else NULL */
int run_guests(const struct run_config *cfg, const struct run_io *io, struct virt *v, enum accel accel,
	const struct image *img, const struct srcdisk *sd, const struct host_group *hg, struct recovery *rc,
	unsigned *idx, unsigned round, struct results *res, struct err *e);
int reconnect_if_lost(const struct run_config *cfg, const struct run_io *io, struct virt **v, unsigned idx,
	struct err *e);

/* bare.c */
int run_host_target(const struct run_config *cfg, const struct run_io *io, struct host_session *hs,
	const struct host_plan *hp, const struct srcdisk *sd, const struct thp_setting *thp, unsigned round,
	struct results *res, struct err *e);

/* hostplan.c */
int apply_host_thp(struct host_session *hs, const struct host_plan *hp, const struct thp_setting *t, struct err *e);
void run_proc_root(const struct run_config *cfg, char *buf, size_t len);
int plan_host_thp(const struct run_config *cfg, struct results *res, struct host_plan *hp,
	struct thp_setting *list, size_t *n, struct err *e);
void guest_mthp_note(const struct run_config *cfg, const struct run_io *io, struct results *res);
/*
 * Workload options that set a host knob (hzp zero-page):
 * on the bare host the workload would write the real knob itself, outside
 * the journal and whatever the sysfs root. host_knob_opt: arg ("--P=V") is
 * one of workload's, to be kept from it. host_knob_opts_set: the knobs
 * spec (--workload-opts) asks of workload set through the session (journal
 * first, under its root), their values before in *prev (none: prev->n 0);
 * host_knob_opts_restore puts those back.
 */
bool host_knob_opt(const char *workload, const char *arg);
int host_knob_opts_set(struct host_session *hs, const char *spec, const char *workload, struct thp_settings *prev,
	struct err *e);
int host_knob_opts_restore(struct host_session *hs, const struct thp_settings *prev, struct err *e);

/* recovery.c: what a recovery group needs after each guest's series */
struct recovery {
	struct host_session *hs;
	const struct host_plan *hp;
	const struct host_group *hg;	/* hg->thp: the setting applied after the series */
	unsigned round;
	bool applied;			/* that setting is in place */
};

/*
 * One guest of a recovery group, its series done: the group's setting
 * applied (once), its guest RAM collapsed, the coverage series into a new
 * results.recovery entry (which keeps the error too).
 */
int recovery_run(struct recovery *rc, const struct run_io *io, struct guest_ctx *gc, struct results *res,
		 struct err *e);

/* ksm.c: the KSM arm (--ksm) */
/* refuse a host without KSM; the arms into the settings echo */
int ksm_prepare(const struct run_config *cfg, struct results *res, struct err *e);
/* each group in the arms --ksm asks for (off,on: the groups twice, the copies on); cap: the array's */
int ksm_groups(const struct run_config *cfg, struct host_session *hs, struct host_group *g, size_t *n, size_t cap,
	       struct err *e);
/* the host state of the group's cells and guests: "ksm" for the on arm */
const char *group_state_name(const struct host_group *hg);
/* KSM stopped (both arms) and the on arm's scan rate, through the journal */
int ksm_group_enter(struct host_session *hs, const struct run_config *cfg, const struct host_group *hg,
		    struct err *e);
/*
 * One group's KSM series (NULL without --ksm): begin before its guests boot,
 * tick in the poll loop (a sample a second; the on arm starts KSM once every
 * guest has a measured repetition), end before they are torn down (ok: all
 * finished; the on arm then waits a bounded time for merging if none yet).
 */
struct ksm_arm;
struct ksm_arm *ksm_arm_begin(const struct run_config *cfg, const struct run_io *io, const struct host_group *hg,
			      unsigned round, unsigned first_boot, struct results *res);
void ksm_arm_tick(struct ksm_arm *ka, const struct group_shared *grp);
void ksm_arm_end(struct ksm_arm *ka, const struct group_shared *grp, bool ok);

/* arms.c */
int fragment_host(const struct run_config *cfg, const struct run_io *io, struct host_session *hs,
	const struct host_plan *hp, const struct host_group *hg, unsigned round, struct frag *fr,
	struct frag_log *fl, struct err *e);
void frag_vmstat(struct frag_log *fl, const struct vmstat *vm0);
void frag_undo(const struct run_io *io, struct host_session *hs, struct frag *fr, struct frag_log *fl);
/* a hugetlbfs arm can run here: the host has the pool and libvirt a mount of that page size */
int hugetlb_arm_check(const struct run_config *cfg, uint64_t kb, struct err *e);
/* the journal key of the pool of that page size */
void pool_key(char *buf, size_t len, uint64_t kb);
int pool_reserve(struct host_session *hs, const struct run_config *cfg, uint64_t kb, char *orig, size_t len,
		 struct err *e);
#endif
