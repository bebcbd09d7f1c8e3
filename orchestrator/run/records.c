/*
 * records: the guest's records as they arrive: each result goes to its cell with its
 * boot id, the host telemetry sampled beside it; a record that breaks the
 * protocol stops that guest.
 */
#include "orchestrator/run/records.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "lib/clock.h"
#include "orchestrator/run/migrate.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/run/note.h"
#include "orchestrator/run/planned.h"
#include "orchestrator/run/telemetry.h"
#include "orchestrator/run/balloon.h"
#include "orchestrator/run/recovery.h"

bool is_label(const char *key)
{
	static const char *const labels[] = {
		"workload", "guest_thp", "rep", "warmup", "thp_enabled", "thp_defrag", "seed", "madvise",
		"size_bytes", "accesses", "guest_huge_pct", "reason", "target",
	};
	size_t i;

	for (i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(key, labels[i]))
			return true;
	return false;
}

static struct cell *record_cell(struct guest_ctx *gc, const struct record *rec)
{
	const char *w = rec_get(rec, "workload");
	const char *gt = rec_get(rec, "guest_thp");
	struct cell *c;

	if (!w || !gt) {
		err_set(&gc->err, -EPROTO, "guest %s sent a %s record without workload/guest_thp",
			gc->log->name, rec_type_name(rec->type));
		return NULL;
	}
	if (!workload_planned(gc->cfg, w) || !guest_thp_planned(gc->cfg, gt)) {
		err_set(&gc->err, -EPROTO, "guest %s sent a record for a cell that was not asked for (%s/%s)",
			gc->log->name, w, gt);
		return NULL;
	}
	{
		struct cell_key k = { "guest", gc->host_thp, gc->prefault, gt, w, rec_get(rec, "variant"), gc->host_state,
					      gc->balloon };

		c = results_cell_key(gc->res, &k, &gc->err);
	}
	if (c)
		snprintf(c->guest, sizeof(c->guest), "%s", gc->log->name);
	return c;
}

static int on_result(struct guest_ctx *gc, const struct record *rec)
{
	struct cell *c = record_cell(gc, rec);
	char why[160], msg[200];
	uint64_t warm = 0;
	double v;
	size_t i;

	if (!c)
		return 1;
	if (rec_get(rec, "warmup") && rec_get_u64(rec, "warmup", &warm)) {
		err_set(&gc->err, -EPROTO, "guest %s sent a bad warmup field", gc->log->name);
		return 1;
	}
	if (warm) {
		c->warmups++;
		host_telemetry(gc, c, false);
		return 0;
	}
	/* the guest is untrusted: a value out of its range fails the repetition, with the reason */
	if (rec_check_values(rec, why, sizeof(why))) {
		snprintf(msg, sizeof(msg), "refused a result record: %s", why);
		cell_add_failure(c, msg);
		run_note(gc->io, "  host=%s/%s guest=%s %s %s", gc->host_thp, gc->prefault, c->guest_thp, c->workload,
			 msg);
		return 0;
	}
	for (i = 0; i < rec->nfields; i++) {
		const struct rec_field *f = &rec->f[i];
		struct metric *m;

		if (is_label(f->key))
			continue;
		if (rec_get_f64(rec, f->key, &v))
			continue;	/* non-numeric annotation */
		m = cell_metric(c, f->key, &gc->err);
		if (!m)
			return 1;
		metric_add_boot(m, v, gc->boot);
	}
	/* the workload's own evidence (lib/wltraits.c): its coverage field is the guest side's */
	cell_take_evidence(c, rec, &c->guest_cov, gc->boot);
	{
		size_t before = c->host_cov.n;
		struct guest_cellstat *cs = c->variant[0] ? NULL : guest_cellstat(gc->log, c->guest_thp, c->workload);

		sample_host_coverage(gc, c);
		if (cs) {
			cs->reps++;
			if (c->host_cov.n > before)
				cs->cov_sum += c->host_cov.samples[c->host_cov.n - 1], cs->ncov++;
			if (rec_get_f64(rec, "fault_ns_per_4k", &v) == 0)
				cs->fault_sum += v, cs->nfault++;
			if (rec_get_f64(rec, "access_ns", &v) == 0)
				cs->access_sum += v, cs->naccess++;
		}
	}
	host_telemetry(gc, c, true);
	c->reps_ok++;
	run_note(gc->io, "  host=%s/%s guest=%s %s%s%s rep %u done", gc->host_thp, gc->prefault, c->guest_thp,
		 c->workload, c->variant[0] ? "/" : "", c->variant, c->reps_ok);
	return 0;
}

/*
 * The boot's phases from the hello's times on the guest kernel's clock (which
 * starts with the kernel): what the kernel, the initrd and the runner took,
 * and, from the host's create-to-hello, what came before the kernel (QEMU's
 * firmware and loading the kernel). Guests without the times leave them NAN.
 */
void boot_phases(struct guest_log *l, const struct record *rec)
{
	uint64_t init_us, runner_us, hello_us;

	if (rec_get_u64(rec, "boot_runner_us", &runner_us) || rec_get_u64(rec, "boot_hello_us", &hello_us) ||
	    hello_us < runner_us)
		return;
	l->boot_runner_s = (double)(hello_us - runner_us) / 1e6;
	l->boot_firmware_s = l->create_to_first_record_s - l->boot_create_s - (double)hello_us / 1e6;
	if (!rec_get_u64(rec, "boot_init_us", &init_us) && init_us <= runner_us) {
		l->boot_kernel_s = (double)init_us / 1e6;
		l->boot_initrd_s = (double)(runner_us - init_us) / 1e6;
	}
}

int on_record(void *opaque, enum guest_event ev, const struct record *rec, const char *reason)
{
	struct guest_ctx *gc = opaque;
	char msg[256];
	struct cell *c;

	if (gc->io->bar)
		progress_tick(gc->io->bar);
	if (ev == GUEST_EV_REJECTED) {
		gc->log->rejected++;
		run_note(gc->io, "warning: %s: rejected a line from the guest: %s", gc->log->name, reason);
		if (gc->log->rejected > MAX_REJECTED) {
			err_set(&gc->err, -EPROTO, "guest %s sent more than %d malformed lines", gc->log->name,
				MAX_REJECTED);
			return 1;
		}
		return 0;
	}
	if (!gc->got_first) {
		gc->got_first = true;
		gc->log->create_to_first_record_s = mono_s() - gc->t_create;
	}
	if (rec->seq != gc->next_seq) {
		err_set(&gc->err, -EPROTO, "guest %s sent record %u where %u was due (lost or replayed output)",
			gc->log->name, rec->seq, gc->next_seq);
		return 1;
	}
	gc->next_seq++;
	gc->log->records++;
	switch (rec->type) {
	case REC_HELLO:
		snprintf(gc->log->guest_kernel, sizeof(gc->log->guest_kernel), "%s",
			 rec_get(rec, "kernel") ? rec_get(rec, "kernel") : "");
		snprintf(gc->log->mthp_sizes_kb, sizeof(gc->log->mthp_sizes_kb), "%s",
			 rec_get(rec, "mthp_sizes_kb") ? rec_get(rec, "mthp_sizes_kb") : "unknown (older guest program)");
		boot_phases(gc->log, rec);
		if (isfinite(gc->log->boot_kernel_s))
			run_note(gc->io, "  %s is up (%.1f s after create: create %.2f, firmware %.2f, kernel %.2f, "
				 "initrd %.2f, runner %.2f)", gc->log->name, gc->log->create_to_first_record_s,
				 gc->log->boot_create_s, gc->log->boot_firmware_s, gc->log->boot_kernel_s,
				 gc->log->boot_initrd_s, gc->log->boot_runner_s);
		else
			run_note(gc->io, "  %s is up (%.1f s after create)", gc->log->name,
				 gc->log->create_to_first_record_s);
		host_snap_take(gc, &gc->snap);
		if (gc->grp && gc->grp->mthp_kb)
			mthp_read(gc->cfg->sysfs_root, gc->grp->mthp_kb, &gc->msnap);
		return 0;
	case REC_RESULT:
		balloon_on_result(gc, rec);
		return on_result(gc, rec);
	case REC_FAIL:
	case REC_SKIP:
		snprintf(msg, sizeof(msg), "%s: %s", rec->type == REC_FAIL ? "failed" : "skipped",
			 rec_get(rec, "reason") ? rec_get(rec, "reason") : "no reason given");
		if (!rec_get(rec, "workload")) {
			/* the runner itself failed */
			err_set(&gc->err, -EIO, "guest %s %s", gc->log->name, msg);
			return 1;
		}
		c = record_cell(gc, rec);
		if (!c)
			return 1;
		cell_add_failure(c, msg);
		run_note(gc->io, "  host=%s/%s guest=%s %s %s", gc->host_thp, gc->prefault, c->guest_thp, c->workload,
			 msg);
		return 0;
	case REC_INFO:
		if (gc->mig)
			migrate_on_info(gc, rec);
		if (recovery_on_info(gc, rec))
			return 1;
		return balloon_on_info(gc, rec);
	case REC_END:
		gc->got_end = true;
		return 1;
	case REC__COUNT:
		break;
	}
	return 0;
}
