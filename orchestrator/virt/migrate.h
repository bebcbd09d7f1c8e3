/*
 * migrate: live migration of a running guest to a second libvirt daemon on
 * this machine (libvirt refuses a migration to its own host). The daemon
 * (struct migd) runs in a mount namespace of its own: private /run/libvirt,
 * /var/lib/libvirt, /var/cache/libvirt, /var/log/libvirt and /etc/libvirt/qemu
 * bind-mounted from its directory, its own qemu.conf, sockets and host_uuid.
 * Its pid goes to a state file first, so a killed run's daemon and guests are
 * removed by the next run or `thpeval host restore`. Never prints, never exits.
 */
#ifndef THPEVAL_ORCH_VIRT_MIGRATE_H
#define THPEVAL_ORCH_VIRT_MIGRATE_H

#include <stdbool.h>

#include "lib/enumstr.h"
#include "lib/err.h"
#include "orchestrator/virt/virt.h"

/* the state file under --state-dir naming a running second daemon */
#define MIGD_STATE_NAME "migrate-daemon"

enum migrate_mode { MIGRATE_NONE, MIGRATE_PRECOPY, MIGRATE_POSTCOPY, MIGRATE__COUNT };
/* migrate_mode_name(): "none", "precopy", "postcopy"; migrate_mode_parse(): 0 or -EINVAL */
ENUM_DECL(migrate_mode);

struct migd;

/*
 * Start the second daemon (libvirtd at libvirtd_path, NULL = /usr/sbin/libvirtd)
 * and connect to it. Its log and its QEMUs' go to log_dir (kept; NULL: its
 * directory, removed with it). Its directory is /run/thpeval-migd-<pid>; its QEMU runs
 * as root with its capabilities (QEMU 7.2's postcopy needs userfaultfd for
 * kernel faults, refused to an unprivileged QEMU). Refused with the reason
 * (the daemon's last log lines) when it does not answer within 20 s.
 */
int migd_start(const char *state_dir, const char *log_dir, const char *libvirtd_path, struct migd **out,
	       struct err *e);
struct virt *migd_virt(struct migd *d);
const char *migd_uri(const struct migd *d);
int migd_pid(const struct migd *d);
/* the destination QEMU of guest name, from the daemon's private pid file; -1 if none */
int migd_qemu_pid(const struct migd *d, const char *name);
/* destroy its guests, stop it by its pid, remove its directory and state file; NULL-tolerant */
void migd_stop(struct migd *d);
/*
 * A daemon a killed run left (the state file under state_dir): its guests
 * destroyed, it stopped by its pid once that pid is checked to be that
 * daemon (start time and command line), the guests' QEMU killed where the
 * daemon is gone already, its files removed. *found: there was one.
 */
int migd_reap_stale(const char *state_dir, bool *found, char *what, size_t len, struct err *e);

/* libvirt's job statistics of one migration (VIR_DOMAIN_JOB_*) */
struct migrate_stats {
	bool have;
	bool postcopy_switched;		/* the postcopy arm switched (virDomainMigrateStartPostCopy) */
	char switch_err[256];		/* else libvirt's last refusal, "" if it was never tried */
	double total_ms, downtime_ms, setup_ms;
	unsigned long long data_total, mem_processed, mem_total, mem_bps, dirty_rate, postcopy_reqs,
		iterations, constant_pages, normal_pages;
};

struct migjob;

/*
 * Start migrating g live to d in a thread of its own (peer to peer over
 * qemu+unix, VIR_MIGRATE_UNSAFE: both ends share the disk files on this
 * machine; precopy with auto-converge, postcopy enabled for the postcopy
 * mode). Its completion event is registered on the source connection.
 */
int migjob_start(struct guest *g, struct migd *d, enum migrate_mode m, struct migjob **out, struct err *e);
bool migjob_done(struct migjob *j);
/*
 * Postcopy: once the first precopy pass is done (libvirt's memory_iteration
 * past 1), switch to postcopy. 1 switched (now or before), 0 not yet, < 0 error.
 */
int migjob_postcopy_step(struct migjob *j, struct err *e);
/* join the thread: its result; the statistics (completion event, else the destination's completed job) */
int migjob_finish(struct migjob *j, struct migrate_stats *s, struct err *e);
/* ask libvirt to abort a migration still running (the thread then ends) */
void migjob_abort(struct migjob *j);
void migjob_free(struct migjob *j);	/* NULL-tolerant; joins a thread still running */

/*
 * After a migration: g's streams on the source are dropped (its output read
 * to the end by the caller first) and opened again on the destination, where
 * g's domain now is; g is the destination's guest from here on.
 */
int guest_rebind(struct guest *g, struct migd *d, struct err *e);

#endif
