/*
 * recovery: the on-demand recovery arm (--host-state=collapse-madvise). Its
 * guests boot and run their series on host THP never; then, per guest, the
 * group's setting goes in (through the journal) and guest RAM is collapsed
 * with process_madvise(MADV_COLLAPSE) in a thread of its own while the
 * coverage of the guest-RAM mapping is sampled every second, libvirt's event
 * loop kept running between samples.
 */
#include "orchestrator/run/recovery.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "host/collapse.h"
#include "lib/clock.h"
#include "orchestrator/run/hostplan.h"
#include "orchestrator/run/note.h"

#define SAMPLE_S 1.0
#define POLL_MS 100

struct call_thread {
	int pid;
	const struct collapse_ranges *rs;
	volatile const sig_atomic_t *stop;
	struct collapse_call call;
	struct err e;
	int r;
	atomic_bool done;
};

static void *call_main(void *arg)
{
	struct call_thread *ct = arg;

	ct->r = collapse_run(ct->pid, ct->rs, ct->stop, &ct->call, &ct->e);
	atomic_store(&ct->done, true);
	return NULL;
}

static int cov_now(const struct guest_ctx *gc, double *pct, struct smaps_cov *cov, struct err *e)
{
	int r = smaps_guest_ram(gc->proc_root, gc->qemu_pid, gc->cfg->memory, cov, e);

	if (!r)
		*pct = collapse_cov_pct(cov);
	return r;
}

static void errno_name(int neg, char *buf, size_t len)
{
	static const struct {
		int code;
		const char *name;
	} names[] = { { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" }, { EINVAL, "EINVAL" }, { EFAULT, "EFAULT" } };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (-neg == names[i].code) {
			snprintf(buf, len, "%s", names[i].name);
			return;
		}
	snprintf(buf, len, "errno %d", -neg);
}

/* the series of one guest, from the call's start to its end (one more sample after it) */
static int sample_series(struct guest_ctx *gc, struct collapse_log *cl,
			 struct call_thread *ct, struct err *e)
{
	double t0 = mono_s(), next = 0, pct;
	struct smaps_cov cov;
	bool last = false;
	int r;

	for (;;) {
		double t = mono_s() - t0;

		if (t >= next || last) {
			r = cov_now(gc, &pct, &cov, e);
			if (r)
				return r;
			cl->resident_kb_after = cov.rss_kb;
			cl->resident_huge_pct_after = smaps_huge_pct(&cov);
			if (cl->n < RES_COVSERIES_MAX)
				cl->series[cl->n++] = (struct cov_point){ t, pct };
			next += SAMPLE_S;
			if (last)
				return 0;
		}
		if (atomic_load(&ct->done)) {
			last = true;
			continue;
		}
		/* a signal stops the calls between two blocks; the loop unwinds after */
		virt_event_wait(POLL_MS);
	}
}

int recovery_run(struct recovery *rc, const struct run_io *io, struct guest_ctx *gc, struct results *res,
		 struct err *e)
{
	struct collapse_ranges rs;
	struct smaps_cov cov;
	struct call_thread ct;
	struct collapse_log *cl;
	pthread_t th;
	int r;

	cl = results_collapse_add(res, e);
	if (!cl)
		return e->code;
	snprintf(cl->host_thp, sizeof(cl->host_thp), "%s", rc->hg->host_thp);
	snprintf(cl->prefault, sizeof(cl->prefault), "%s", prefault_name(rc->hg->prefault));
	snprintf(cl->method, sizeof(cl->method), "madvise");
	cl->round = rc->round;
	cl->boot = gc->boot;
	r = cov_now(gc, &cl->cov_before_pct, &cov, e);
	if (!r)
		r = collapse_find_ranges(gc->proc_root, gc->qemu_pid, gc->cfg->memory, &rs, e);
	if (!r && !rc->applied) {
		r = apply_host_thp(rc->hs, rc->hp, &rc->hg->thp, e);
		rc->applied = r == 0;
	}
	if (r)
		goto out;
	cl->mapping_kb = rs.bytes / 1024;
	cl->ranges = (unsigned)rs.n;
	memset(&ct, 0, sizeof(ct));
	ct.pid = gc->qemu_pid;
	ct.rs = &rs;
	ct.stop = io->stop;
	err_clear(&ct.e);
	atomic_init(&ct.done, false);
	r = pthread_create(&th, NULL, call_main, &ct);
	if (r) {
		r = err_set(e, -r, "cannot start the collapse thread: %s", strerror(r));
		goto out;
	}
	r = sample_series(gc, cl, &ct, e);
	pthread_join(th, NULL);
	if (!r && ct.r)
		r = err_set(e, ct.r, "%s", ct.e.msg);
	if (r)
		goto out;
	cl->call_s = ct.call.duration_s;
	cl->blocks = ct.call.blocks;
	cl->collapsed = ct.call.collapsed;
	cl->refused = ct.call.refused;
	cl->busy = ct.call.busy;
	cl->nomem = ct.call.nomem;
	if (ct.call.result)
		errno_name(ct.call.result, cl->call_result, sizeof(cl->call_result));
	else
		snprintf(cl->call_result, sizeof(cl->call_result), "ok");
	if (cl->n) {
		double t[RES_COVSERIES_MAX], p[RES_COVSERIES_MAX];
		size_t i;

		for (i = 0; i < cl->n; i++) {
			t[i] = cl->series[i].t_s;
			p[i] = cl->series[i].huge_pct;
		}
		cl->cov_after_pct = p[cl->n - 1];
		cl->t50_s = collapse_time_to(t, p, cl->n, 50);
		cl->t90_s = collapse_time_to(t, p, cl->n, 90);
	}
	run_note(io, "recovery of guest %u (host %s): coverage %.1f%% -> %.1f%%, collapse %.2f s, %llu of %llu 2M blocks",
		 gc->boot, cl->host_thp, cl->cov_before_pct, cl->cov_after_pct, cl->call_s, cl->collapsed, cl->blocks);
	return 0;
out:
	snprintf(cl->error, sizeof(cl->error), "%s", e->msg);
	return r;
}
