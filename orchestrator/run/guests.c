/*
 * guests: the guest lifecycle: one group's guests defined, booted, polled to the end
 * of their records and torn down, with the failure of one guest kept in its
 * cells; a lost libvirtd connection is reopened.
 */
#include "orchestrator/run/guests.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/fstree.h"
#include "orchestrator/run/abaxis.h"
#include "orchestrator/run/crashlog.h"
#include "orchestrator/run/migrate.h"
#include "orchestrator/run/balloon.h"
#include "orchestrator/run/ksm.h"
#include "orchestrator/run/note.h"
#include "orchestrator/run/planned.h"
#include "orchestrator/run/recovery.h"
#include "orchestrator/run/telemetry.h"
#include "orchestrator/run/records.h"

/* bytes of the kernel command line an x86 guest keeps (COMMAND_LINE_SIZE 2048, with its NUL) */
#define GUEST_CMDLINE_MAX 2047

/* one guest of a group in flight */
struct guest_run {
	struct guest_ctx gc;
	struct guest_log *log;
	char name[64], overlay[PATH_MAX];
	char *xml;
	bool started, done;
	int r;
	struct err e;
	double t_end;
};

static void build_cmdline(const struct run_config *cfg, const struct image *img, uint64_t seed, char *buf,
			  size_t len)
{
	size_t i;

	snprintf(buf, len, "%s thpeval.guest_thp=never", img->cmdline);
	for (i = 0; i < cfg->n_guest_thp; i++)
		run_append(buf, len, ",%s", thp_mode_name(cfg->guest_thp[i].mode));
	run_append(buf, len, " thpeval.workloads=");
	for (i = 0; i < cfg->n_wl; i++)
		run_append(buf, len, "%s%s", i ? "," : "", cfg->wl[i]);
	run_append(buf, len, " thpeval.reps=%u thpeval.warmup=%u thpeval.size=%llu", cfg->reps, cfg->warmup,
	       (unsigned long long)cfg->size);
	if (cfg->cold_reps)
		run_append(buf, len, " thpeval.cold=%u", cfg->cold_reps);
	run_append(buf, len, " thpeval.accesses=%llu thpeval.seed=%llu thpeval.timeout=%llu",
	       (unsigned long long)cfg->accesses, (unsigned long long)seed,
	       (unsigned long long)(cfg->timeout_ms / 1000));
	/* each workload's own parameters (kcompile's build, exec's command in lib/argv's encoding) */
	if (cfg->wl_opts[0] || balloon_planned(cfg)) {
		char wlo[WLOPTS_SPEC_MAX + 64];

		run_append(buf, len, " thpeval.wlopts=%s", balloon_wlopts(cfg, wlo, sizeof(wlo)));
	}
	for (i = 0; i < cfg->n_guest_shmem; i++)
		run_append(buf, len, "%s%s", i ? "," : " thpeval.guest_shmem_thp=", cfg->guest_shmem[i]);
}

/* record a failure in every planned cell of this host group that lacks repetitions */
static void fail_missing(struct results *res, const struct run_config *cfg, const struct host_group *hg,
			 unsigned want_reps, const char *reason)
{
	size_t i, w;

	for (w = 0; w < cfg->n_wl; w++)
		for (i = 0; i <= cfg->n_guest_thp; i++) {
			const char *gt = i == 0 ? "never" : thp_mode_name(cfg->guest_thp[i - 1].mode);
			struct cell_key k = { "guest", hg->host_thp, prefault_name(hg->prefault), gt, cfg->wl[w], NULL,
					      group_state_name(hg), balloon_arm_name(hg->balloon) };
			struct cell *c = results_cell_key(res, &k, NULL);

			if (c && c->reps_ok + c->reps_failed < want_reps)
				cell_add_failure(c, reason);
		}
}

/*
 * --pin=auto: QEMU's other threads on host CPU 0, vCPU i of guest gi (of n)
 * on CPU 1 + gi * vcpus + i, where the host has a CPU for each; false (no
 * pinning) where it has not
 */
bool guest_pins(const struct run_config *cfg, unsigned gi, unsigned n, int *pins)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned i;

	if (cfg->vcpus > 64 || ncpu < 2 || (long)n * cfg->vcpus + 1 > ncpu)
		return false;
	for (i = 0; i < cfg->vcpus; i++)
		pins[i] = (int)(1 + gi * cfg->vcpus + i);
	return true;
}

/* what the migration arms call back (run/migrate.h) */
static const struct migrate_cb mig_cb = { run_note, on_record };

/* the guest's name, its results.guests entry (failed until it ends well) and its files' paths */
static int gr_log_init(const struct run_config *cfg, const struct host_group *hg, unsigned idx, unsigned gi,
		       unsigned n, unsigned round, struct results *res, struct guest_run *gr)
{
	struct err *e = &gr->e;
	struct guest_log *log;

	snprintf(gr->name, sizeof(gr->name), "thpeval-%d-%u", (int)getpid(), idx);
	log = results_guest_add(res, e);
	if (!log)
		return e->code;
	gr->log = log;
	snprintf(log->name, sizeof(log->name), "%s", gr->name);
	snprintf(log->host_thp, sizeof(log->host_thp), "%s", hg->host_thp);
	snprintf(log->prefault, sizeof(log->prefault), "%s", prefault_name(hg->prefault));
	snprintf(log->host_state, sizeof(log->host_state), "%s", group_state_name(hg));
	log->index = gi;
	log->concurrency = n;
	log->round = round;
	snprintf(log->emulator, sizeof(log->emulator), "%s", ab_emulator(cfg, hg->arm) ? ab_emulator(cfg, hg->arm) : "");
	snprintf(log->arm, sizeof(log->arm), "%s", ab_arm_name(cfg, hg->arm));
	snprintf(log->balloon, sizeof(log->balloon), "%s", balloon_arm_name(hg->balloon));
	snprintf(log->status, sizeof(log->status), "failed");
	if (snprintf(log->xml_path, sizeof(log->xml_path), "%s/guests/%s.xml", cfg->out_dir, gr->name) >=
		    (int)sizeof(log->xml_path) ||
	    snprintf(log->console_path, sizeof(log->console_path), "%s/guests/%s.console.log", cfg->out_dir,
		     gr->name) >= (int)sizeof(log->console_path) ||
	    snprintf(gr->overlay, sizeof(gr->overlay), "%s/overlays/%s.qcow2", cfg->cache_dir, gr->name) >=
		    (int)sizeof(gr->overlay))
		return err_set(e, -ENAMETOOLONG, "--out or --cache-dir path too long");
	return 0;
}

/* <guests dir>/<name>.serial.log as an absolute path (QEMU opens it); -1 if it cannot be made */
static int serial_log_path(const char *console_path, const char *name, char *out, size_t len)
{
	char dir[PATH_MAX], abs[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", console_path);
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if (!realpath(dir, abs) || snprintf(out, len, "%s/%s.serial.log", abs, name) >= (int)len)
		return -1;
	return 0;
}

static int gr_start(const struct run_config *cfg, const struct run_io *io, struct virt *v, enum accel accel,
		    const struct image *img, const struct srcdisk *sd, const struct host_group *hg, unsigned idx,
		    unsigned gi, unsigned n, unsigned round, struct results *res, struct group_shared *grp,
		    struct guest_run *gr)
{
	char cmdline[GUEST_CMDLINE_MAX + 2], serial[PATH_MAX];
	int pins[64];
	struct domain_spec spec = { 0 };
	struct guest_opts go = { 0 };
	struct err *e = &gr->e;
	struct guest_log *log;
	int r;

	r = gr_log_init(cfg, hg, idx, gi, n, round, res, gr);
	if (r)
		return r;
	log = gr->log;

	/* per-guest writable layers live beside the images: QEMU (an unprivileged
	 * user under qemu:///system) must be able to reach them */
	{
		char d[PATH_MAX];

		if (snprintf(d, sizeof(d), "%s/overlays", cfg->cache_dir) >= (int)sizeof(d))
			r = err_set(e, -ENAMETOOLONG, "--cache-dir path too long");
		else
			r = mkdir_p(d, 0755, e);
	}
	if (!r)
		r = image_overlay_create(img, gr->overlay, e);
	if (r)
		return r;

	cmdline[0] = '\0';
	build_cmdline(cfg, img, cfg->seed + round, cmdline, sizeof(cmdline));
	if (recovery_group(hg))
		recovery_cmdline(cfg, cmdline, sizeof(cmdline));
	if (strlen(cmdline) > GUEST_CMDLINE_MAX)	/* cut, or longer than the kernel keeps */
		return err_set(e, -E2BIG, "the guest kernel command line would be longer than the %d bytes an x86 "
			       "kernel keeps: shorten --exec or --exec-metric", GUEST_CMDLINE_MAX);
	spec.name = gr->name;
	spec.memory_bytes = cfg->memory;
	spec.vcpus = cfg->vcpus;
	spec.accel = accel;
	spec.kernel = img->kernel;
	spec.initrd = img->initrd[0] ? img->initrd : NULL;
	spec.cmdline = cmdline;
	spec.disk_path = gr->overlay;
	spec.disk_format = "qcow2";
	spec.ro_disk_path = sd ? sd->disk : NULL;
	spec.channel_name = DOMAIN_CHANNEL_NAME;
	spec.prefault = hg->prefault;
	spec.memfd = cfg->memfd && !hg->hugetlb_kb;
	spec.share_pages = hg->ksm == RUN_KSM_ON;
	spec.hugetlb_kb = hg->hugetlb_kb;
	spec.balloon_reporting = hg->balloon == BALLOON_REPORTING;
	spec.description = "thpeval guest";
	/* a migrated guest's console: QEMU on either end writes it, the stream is the source's */
	if (cfg->n_migrate && serial_log_path(log->console_path, gr->name, serial, sizeof(serial)) == 0)
		spec.serial_log = serial;
	spec.emulator = ab_emulator(cfg, hg->arm);
	spec.quick_cpu_check = accel == ACCEL_TCG && virt_quick_cpu_check(v);
	spec.emulator_pin = -1;
	if (cfg->pin && guest_pins(cfg, gi, n, pins)) {
		spec.vcpu_pin = pins;
		spec.emulator_pin = 0;
	}
	r = domain_xml(&spec, &gr->xml, e);
	if (r)
		return r;
	r = write_file_atomic(log->xml_path, gr->xml, strlen(gr->xml), 0644, e);
	if (r)
		return r;

	go.xml = gr->xml;
	go.console_log_path = log->console_path;
	go.channel_name = DOMAIN_CHANNEL_NAME;
	gr->gc.cfg = cfg;
	gr->gc.io = io;
	gr->gc.res = res;
	gr->gc.log = log;
	gr->gc.boot = (unsigned)(log - res->guests);
	gr->gc.host_thp = hg->host_thp;
	gr->gc.prefault = prefault_name(hg->prefault);
	gr->gc.host_state = group_state_name(hg);
	gr->gc.balloon = balloon_arm_name(hg->balloon);
	gr->gc.bw.on = balloon_planned(cfg);
	gr->gc.grp = grp;
	gr->gc.proc_root = "/proc";
	gr->gc.qemu_pid = -1;
	gr->gc.kvm = accel == ACCEL_KVM;
	if ((r = migrate_guest_begin(&gr->gc, round, &mig_cb, e)))
		return r;
	if (n > 1)
		run_note(io, "booting %s (guest %u of %u; host THP %s, allocation %s, host %s, %s)", gr->name, gi + 1, n,
			 hg->host_thp, gr->gc.prefault, gr->gc.host_state, accel_name(accel));
	else
		run_note(io, "booting %s (host THP %s, allocation %s%s%s, %s)", gr->name, hg->host_thp, gr->gc.prefault,
			 hg->host_state != HOST_FRESH ? ", host " : "",
			 hg->host_state != HOST_FRESH ? gr->gc.host_state : "", accel_name(accel));
	gr->gc.t_create = mono_s();
	r = guest_start(v, &go, &gr->gc.g, e);
	if (r)
		return r;
	gr->gc.t_started = mono_s();
	log->boot_create_s = gr->gc.t_started - gr->gc.t_create;
	gr->started = true;
	return 0;
}

/* a guest gone before its end: its kernel's last words when it panicked (a migrated one's on either end) */
static void gr_gone(const struct run_config *cfg, struct guest_run *gr)
{
	char serial[PATH_MAX], said[400];
	const char *log = gr->log->console_path;

	if (cfg->n_migrate && serial_log_path(gr->log->console_path, gr->name, serial, sizeof(serial)) == 0)
		log = serial;
	if (crashlog_panic(log, said, sizeof(said)) == 0)
		gr->r = err_set(&gr->e, -EIO, "guest %s stopped before it finished: its kernel panicked (%s): see %s",
				gr->name, said, log);
	else
		gr->r = err_set(&gr->e, -EIO, "guest %s stopped before it finished (QEMU killed or guest crashed): "
				"see %s", gr->name, log);
}

/* one non-blocking round for one guest: true when it is finished (gr->r says how) */
static bool gr_poll(const struct run_config *cfg, const struct run_io *io, struct guest_run *gr, double t0)
{
	enum guest_poll_result pr;
	struct err *e = &gr->e;
	int r;

	r = guest_poll(gr->gc.g, 0, (volatile const int *)io->stop, on_record, &gr->gc, &pr, e);
	if (r) {
		gr->r = r;
		return true;
	}
	if (err_isset(&gr->gc.err)) {
		gr->r = err_set(e, gr->gc.err.code, "%s", gr->gc.err.msg);
		return true;
	}
	if (gr->gc.got_end) {
		/* The evidence was sampled on every result; the guest now waits for a "bye"
		 * to power off. We do not let it: a guest shutting down by itself while a
		 * client finishes its streams can deadlock libvirtd 9.0 (the domain's
		 * chardevs are freed while the stream holds them). guest_destroy() aborts
		 * both streams first, then destroys the domain: one thing at a time. */
		snprintf(gr->log->status, sizeof(gr->log->status), "ok");
		gr->r = 0;
		return true;
	}
	switch (pr) {
	case GUEST_POLL_INTERRUPTED:
		snprintf(gr->log->status, sizeof(gr->log->status), "interrupted");
		gr->r = err_set(e, -EINTR, "interrupted");
		return true;
	case GUEST_POLL_GUEST_GONE:
		gr_gone(cfg, gr);
		return true;
	default:
		break;
	}
	if (mono_s() - t0 >= (double)guest_timeout_ms(cfg) / 1000) {
		snprintf(gr->log->status, sizeof(gr->log->status), "timeout");
		gr->r = err_set(e, -ETIMEDOUT, "guest %s did not finish within %llu s: destroyed it (raise --timeout?)",
				gr->name, (unsigned long long)(guest_timeout_ms(cfg) / 1000));
		return true;
	}
	return false;
}

static void gr_finish(struct guest_run *gr)
{
	migrate_guest_end(&gr->gc, gr->r);
	guest_pmu_close(&gr->gc.pmu);
	if (gr->gc.g) {
		double t0 = mono_s();

		guest_destroy(gr->gc.g);
		gr->gc.g = NULL;
		if (gr->r == 0)
			gr->log->teardown_s = mono_s() - gr->t_end;
		else
			gr->log->teardown_s = mono_s() - t0;
		gr->log->total_s = mono_s() - gr->gc.t_create;
	}
	if (gr->overlay[0])
		unlink(gr->overlay);
	free(gr->xml);
	gr->xml = NULL;
	if (gr->r && gr->log)
		snprintf(gr->log->error, sizeof(gr->log->error), "%s", gr->e.msg);
}

/*
 * The guests of one host group: n of them boot one after the other, then run
 * the same cells at the same time, each with its own records, coverage and
 * telemetry (their samples go to the same cells). Returns 0 when every guest
 * finished; otherwise the first error (e), the cells that lack repetitions
 * say why. *idx advances by n.
 */
int run_guests(const struct run_config *cfg, const struct run_io *io, struct virt *v, enum accel accel,
		      const struct image *img, const struct srcdisk *sd, const struct host_group *hg,
		      struct recovery *rc, unsigned *idx, unsigned round, struct results *res, struct err *e)
{
	unsigned n = cfg->guests ? cfg->guests : 1, i, left = 0;
	struct group_shared grp = { 0 };
	struct guest_run *gr;
	struct ksm_arm *ka;
	double t0;
	int r = 0;
	bool ok = true;

	gr = calloc(n, sizeof(*gr));
	if (!gr)
		return err_set(e, -ENOMEM, "out of memory for %u guests", n);
	if (hg->thp.kb && hg->thp.kb < 2048) {
		grp.mthp_kb = hg->thp.kb;
		mthp_read(cfg->sysfs_root, hg->thp.kb, &grp.base);
		if (!grp.base.have)
			run_note(io, "warning: no hugepages-%ukB/stats/anon_fault_alloc on this host: no coverage evidence for %s",
				 hg->thp.kb, hg->host_thp);
	}
	grp.hugetlb_kb = hg->hugetlb_kb;
	for (i = 0; i < n; i++) {
		err_clear(&gr[i].e);
		grp.all[grp.n++] = &gr[i].gc;
	}
	ka = ksm_arm_begin(cfg, io, hg, round, *idx, res);
	for (i = 0; i < n && !*io->stop; i++) {
		gr[i].r = gr_start(cfg, io, v, accel, img, sd, hg, (*idx)++, i, n, round, res, &grp, &gr[i]);
		if (gr[i].r)
			gr[i].done = true;
		else
			left++;
	}
	t0 = mono_s();
	while (left && !*io->stop) {
		for (i = 0; i < n; i++) {
			if (gr[i].done)
				continue;
			balloon_tick(&gr[i].gc);
			if (gr[i].gc.mig) {
				/* a migration arm: while it migrates the guest is polled there */
				bool handled = false;
				int mr = migrate_tick(&gr[i].gc, &handled, &gr[i].e);

				if (mr) {
					gr[i].r = mr;
					gr[i].done = true;
					gr[i].t_end = mono_s();
					left--;
				}
				if (mr || handled)
					continue;
			}
			if (gr_poll(cfg, io, &gr[i], t0)) {
				gr[i].done = true;
				gr[i].t_end = mono_s();
				left--;
				/* a guest without access passes waits for its "bye": its QEMU is there to collapse */
				if (rc && gr[i].r == 0 && !gr[i].gc.probe.recovered &&
				    recovery_run(rc, io, &gr[i].gc, res, &gr[i].e))
					gr[i].r = gr[i].e.code;
			} else if (rc && recovery_due(&gr[i].gc) && recovery_run(rc, io, &gr[i].gc, res, &gr[i].e)) {
				gr[i].r = gr[i].e.code;
				gr[i].done = true;
				gr[i].t_end = mono_s();
				left--;
			}
		}
		ksm_arm_tick(ka, &grp);
		if (left && virt_event_wait(20) < 0)
			break;
	}
	for (i = 0; i < n; i++)
		ok &= gr[i].done && gr[i].r == 0;
	ksm_arm_end(ka, &grp, ok && !*io->stop);
	for (i = 0; i < n; i++) {
		if (!gr[i].done) {
			gr[i].r = err_set(&gr[i].e, -EINTR, "interrupted");
			if (gr[i].log)
				snprintf(gr[i].log->status, sizeof(gr[i].log->status), "interrupted");
		}
		gr_finish(&gr[i]);
		if (gr[i].r && !r) {
			r = gr[i].r;
			err_set(e, r, "%s", gr[i].e.msg);
		}
	}
	if (r)
		fail_missing(res, cfg, hg, (round + 1) * cfg->reps * n, e->msg);
	free(gr);
	return r;
}

/*
 * libvirtd died or was restarted under us: reconnect (for up to a minute) and
 * make sure the guest we lost is gone, then go on with the next group.
 */
int reconnect_if_lost(const struct run_config *cfg, const struct run_io *io, struct virt **v, unsigned idx,
			     struct err *e)
{
	char name[64];
	double t0 = mono_s();
	struct err ce = ERR_INIT;

	if (virt_alive(*v))
		return 0;
	run_note(io, "warning: lost the connection to libvirtd: reconnecting to '%s'", cfg->uri);
	virt_close(*v);
	*v = NULL;
	while (!*io->stop) {
		err_clear(&ce);
		if (virt_open(cfg->uri, v, &ce) == 0)
			break;
		if (mono_s() - t0 > 60)
			return err_set(e, ce.code, "libvirtd went away and did not come back within 60 s: %s", ce.msg);
		usleep(500 * 1000);
	}
	if (!*v)
		return err_set(e, -EINTR, "interrupted while reconnecting to libvirtd");
	{
		unsigned n = cfg->guests ? cfg->guests : 1, k;

		/* the group's guests were idx-n+1 .. idx */
		for (k = 0; k < n && k <= idx; k++) {
			snprintf(name, sizeof(name), "thpeval-%d-%u", (int)getpid(), idx - k);
			if (virt_destroy_name(*v, name, &ce))
				run_note(io, "warning: %s", ce.msg);
		}
	}
	run_note(io, "warning: reconnected to libvirtd after %.1f s; the lost guest's cells are marked failed",
		 mono_s() - t0);
	return 0;
}
