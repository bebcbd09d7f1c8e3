/*
 * recovery: the recovery arms. Their guests boot and run their series on
 * host THP never; then the guest starts its access passes (guest/probe.c)
 * and, per guest, the group's setting goes in (through the journal) and
 * either guest RAM is collapsed with process_madvise(MADV_COLLAPSE) in a
 * thread of its own (collapse-madvise) or khugepaged is left to it, with
 * --khugepaged's knobs journaled for the interval (collapse-khugepaged).
 * The coverage of the guest-RAM mapping is sampled every second, the
 * guest's records read and libvirt's event loop kept running between
 * samples; after the interval the guest gives a few more passes and is told
 * to stop.
 */
#include "orchestrator/run/recovery.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "host/collapse.h"
#include "host/khugepaged.h"
#include "lib/clock.h"
#include "orchestrator/run/hostplan.h"
#include "orchestrator/run/note.h"

#define SAMPLE_S 1.0
#define POLL_MS 100
#define PROBE_BEFORE 3		/* access passes before the setting goes in */
#define PROBE_AFTER 5		/* and after the interval */
#define PROBE_PERIOD_MS 1000
/* khugepaged's full scans, and seconds, without more coverage: it is done */
#define PLATEAU_SCANS 2
#define PLATEAU_S 30
#define STOP_90 "90% reached"

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

bool recovery_group(const struct host_group *hg)
{
	if (hg->host_state == HOST_COLLAPSE_MADVISE)
		return true;
	/* khugepaged does not run on never: nothing would recover */
	return hg->host_state == HOST_COLLAPSE_KHUGEPAGED && !(hg->thp.kb == 0 && hg->thp.mode == THP_MODE_NEVER);
}

int recovery_check_host(const struct run_config *cfg, struct err *e)
{
	struct khp_state ks;
	struct err pe = ERR_INIT;
	char num[24];
	size_t k;
	int r, pid;

	if (run_has_host_state(cfg, HOST_COLLAPSE_MADVISE) && (r = collapse_probe(&pe)))
		return err_set(e, r, "--host-state=collapse-madvise: %s", pe.msg);
	if (!run_has_host_state(cfg, HOST_COLLAPSE_KHUGEPAGED))
		return 0;
	if ((r = khp_state_read(cfg->sysfs_root, &ks, &pe)))
		return err_set(e, r, "--host-state=collapse-khugepaged: %s", pe.msg);
	if (!strcmp(cfg->sysfs_root, "/") && (r = khp_find_thread("/proc", &pid, &pe)))
		return err_set(e, r, "--host-state=collapse-khugepaged: %s", pe.msg);
	for (k = 0; k < KHP__COUNT; k++) {
		if (!cfg->khugepaged.set[k])
			continue;
		snprintf(num, sizeof(num), "%llu", (unsigned long long)cfg->khugepaged.v[k]);
		if ((r = thp_validate(cfg->sysfs_root, khp_knob_key(k), num, &pe)))
			return err_set(e, r, "--khugepaged: %s", pe.msg);
	}
	return 0;
}

void recovery_cmdline(const struct run_config *cfg, char *buf, size_t len)
{
	/* enough passes for the longest interval; the host stops them after it */
	uint64_t n = cfg->recovery_timeout_ms / PROBE_PERIOD_MS + PROBE_BEFORE + PROBE_AFTER + 30;

	if (n > RES_ACCESS_MAX)
		n = RES_ACCESS_MAX;
	run_append(buf, len, " thpeval.probe=%llu thpeval.probe_period=%u", (unsigned long long)n, PROBE_PERIOD_MS);
}

bool recovery_due(const struct guest_ctx *gc)
{
	return gc->probe.started && !gc->probe.recovered && (gc->probe.n >= PROBE_BEFORE || gc->probe.ended);
}

int recovery_on_info(struct guest_ctx *gc, const struct record *rec)
{
	struct probe_rx *p = &gc->probe;
	const char *ev = rec_get(rec, "event"), *v;
	uint64_t u;
	double ns;

	if (!ev)
		return 0;
	if (!strcmp(ev, "probe_start")) {
		p->started = true;
		p->period_s = !rec_get_u64(rec, "period_ms", &u) ? (double)u / 1000 : NAN;
		p->size_bytes = !rec_get_u64(rec, "size_bytes", &u) ? u : 0;
		p->accesses = !rec_get_u64(rec, "accesses", &u) ? u : 0;
		if (rec_get_f64(rec, "guest_huge_pct", &p->guest_huge_pct) || !(p->guest_huge_pct >= 0 &&
										 p->guest_huge_pct <= 100))
			p->guest_huge_pct = NAN;
		v = rec_get(rec, "guest_thp");
		snprintf(p->guest_thp, sizeof(p->guest_thp), "%s", v ? v : "");
	} else if (!strcmp(ev, "probe")) {
		if (p->started && p->n < RES_ACCESS_MAX && !rec_get_f64(rec, "access_ns", &ns) && isfinite(ns)) {
			p->t[p->n] = mono_s();
			p->ns[p->n++] = ns;
		}
	} else if (!strcmp(ev, "probe_touch")) {
		p->touched = true;
		p->t_touch = mono_s();
		p->touch_bytes = !rec_get_u64(rec, "bytes", &u) ? u : 0;
		if (rec_get_f64(rec, "touch_ms", &p->touch_ms) || !isfinite(p->touch_ms))
			p->touch_ms = NAN;
	} else if (!strcmp(ev, "probe_end")) {
		p->ended = true;
		if ((v = rec_get(rec, "skipped")))
			run_note(gc->io, "warning: %s: no access passes: %s", gc->log->name, v);
	}
	return 0;
}

/* read what the guest sent; false when it is gone or failed */
static bool drain_guest(const struct recovery *rc, struct guest_ctx *gc, const struct run_io *io)
{
	enum guest_poll_result pr = GUEST_POLL_TIMEOUT;
	struct err pe = ERR_INIT;

	if (!gc->g || gc->got_end)
		return !gc->got_end;
	if (guest_poll(gc->g, 0, (volatile const int *)io->stop, rc->on_record, gc, &pr, &pe) ||
	    pr == GUEST_POLL_GUEST_GONE || err_isset(&gc->err))
		return false;
	return true;
}

/* khugepaged's knobs for the interval (journaled), their values before in prev */
static int khp_apply(struct recovery *rc, const struct run_config *cfg, struct thp_settings *prev, struct err *e)
{
	char num[24], cur[THP_VAL_MAX];
	size_t k;
	int r;

	prev->n = 0;
	for (k = 0; k < KHP__COUNT; k++) {
		if (!cfg->khugepaged.set[k])
			continue;
		snprintf(num, sizeof(num), "%llu", (unsigned long long)cfg->khugepaged.v[k]);
		if ((r = thp_read_one(rc->hs->root, khp_knob_key(k), cur, sizeof(cur), e)) ||
		    (r = thp_settings_put(prev, khp_knob_key(k), cur, e)) ||
		    (r = host_session_set(rc->hs, khp_knob_key(k), num, e)))
			return r;
	}
	return 0;
}

struct khp_watch {
	int pid;
	double cpu0;
	struct khp_state s0, last;
	long long scans_at_rise;	/* full_scans when coverage last rose */
	double t_rise;			/* and when */
	double best_pct;
};

/*
 * A plateau, and what it says: coverage that never rose while khugepaged
 * scanned on means it never collapsed QEMU's memory (its pages_collapsed,
 * if any, were another process's): QEMU is not on its list.
 */
static void plateau_why(struct collapse_log *cl, const struct khp_watch *kw, double t)
{
	long long scans = kw->last.full_scans - kw->scans_at_rise;

	if (kw->best_pct <= cl->cov_before_pct + 0.1)
		snprintf(cl->stopped, sizeof(cl->stopped),
			 "plateau: QEMU not on khugepaged's list (coverage never moved in %lld full scans, %.0f s; "
			 "%lld pages collapsed elsewhere)",
			 scans, t - kw->t_rise, (long long)(kw->last.pages_collapsed - kw->s0.pages_collapsed));
	else
		snprintf(cl->stopped, sizeof(cl->stopped),
			 "plateau: %lld full scans of khugepaged in %.0f s without more coverage", scans, t - kw->t_rise);
}

/* the series of one guest, from the setting going in to what stops it (one more sample after) */
static int sample_series(const struct recovery *rc, struct guest_ctx *gc, const struct run_io *io,
			 struct collapse_log *cl, struct call_thread *ct, struct khp_watch *kw, double t0, struct err *e)
{
	double next = 0, pct, limit = (double)gc->cfg->recovery_timeout_ms / 1000;
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
			if (last) {
				cl->interval_s = t;
				return 0;
			}
			if (kw) {
				struct err ke = ERR_INIT;

				if (!khp_state_read(gc->cfg->sysfs_root, &kw->last, &ke) && pct > kw->best_pct + 0.1) {
					kw->best_pct = pct;
					kw->scans_at_rise = kw->last.full_scans;
					kw->t_rise = t;
				}
				if (pct >= 90) {
					snprintf(cl->stopped, sizeof(cl->stopped), "%s", STOP_90);
				} else if (t >= limit) {
					snprintf(cl->stopped, sizeof(cl->stopped), "timeout (%.0f s, --recovery-timeout)", limit);
				} else if (kw->last.full_scans >= 0 && kw->last.full_scans - kw->scans_at_rise >= PLATEAU_SCANS &&
					   t - kw->t_rise >= PLATEAU_S) {
					plateau_why(cl, kw, t);
				}
				if (cl->stopped[0]) {
					cl->interval_s = t;
					return 0;
				}
			}
		}
		if (ct && atomic_load(&ct->done)) {
			last = true;
			continue;
		}
		if (*io->stop) {
			snprintf(cl->stopped, sizeof(cl->stopped), "interrupted");
			if (!ct) {
				cl->interval_s = t;
				return 0;
			}
		}
		if (!drain_guest(rc, gc, io) && gc->probe.started && !gc->probe.ended && !gc->got_end) {
			snprintf(cl->stopped, sizeof(cl->stopped), "the guest stopped");
			if (!ct) {
				cl->interval_s = t;
				return 0;
			}
		}
		/* a signal stops the calls between two blocks; the loop unwinds after */
		virt_event_wait(POLL_MS);
	}
}

/* after the interval: a few more passes from the guest, then "stop" to it */
static void passes_after(const struct recovery *rc, struct guest_ctx *gc, const struct run_io *io, double t_stop)
{
	struct probe_rx *p = &gc->probe;
	double until = mono_s() + PROBE_AFTER * (isfinite(p->period_s) ? p->period_s : 1) + 15;
	struct err se = ERR_INIT;

	for (;;) {
		size_t i, after = 0;

		for (i = 0; i < p->n; i++)
			after += p->t[i] >= t_stop;
		if (after >= PROBE_AFTER || p->ended || gc->got_end || *io->stop || mono_s() >= until ||
		    !drain_guest(rc, gc, io))
			break;
		virt_event_wait(POLL_MS);
	}
	if (p->started && !p->ended && !gc->got_end && gc->g &&
	    guest_send(gc->g, REC_PROBE_STOP, sizeof(REC_PROBE_STOP) - 1, &se))
		run_note(io, "warning: %s: %s", gc->log->name, se.msg);
}

/*
 * collapse-khugepaged: the guest is asked to fault a fresh buffer as the
 * setting goes in. khugepaged scans only the processes on its list, and a
 * QEMU whose RAM was madvised under never is not there; the kernel adds it
 * at a huge page fault in an eligible mapping, which the guest's fresh
 * memory (never backed by the host) gives, as a guest that keeps
 * allocating would on a real host.
 */
static void registration_ask(struct guest_ctx *gc, const struct run_io *io, struct collapse_log *cl, double t0)
{
	struct err se = ERR_INIT;

	if (!gc->probe.started || gc->probe.ended || gc->got_end || !gc->g)
		return;
	if (guest_send(gc->g, REC_PROBE_TOUCH, sizeof(REC_PROBE_TOUCH) - 1, &se)) {
		run_note(io, "warning: %s: %s", gc->log->name, se.msg);
		return;
	}
	cl->has_reg = true;
	snprintf(cl->reg.method, sizeof(cl->reg.method), "guest_touch");
	cl->reg.sent_s = mono_s() - t0;
}

static void registration_fill(struct collapse_log *cl, const struct probe_rx *p, double t0)
{
	size_t i;

	if (!cl->has_reg || !p->touched)
		return;
	cl->reg.done_s = p->t_touch - t0;
	cl->reg.touch_s = p->touch_ms / 1000;
	cl->reg.bytes = p->touch_bytes;
	for (i = 0; i < cl->n; i++)
		if (cl->series[i].t_s >= cl->reg.done_s) {
			cl->reg.huge_pct_after_touch = cl->series[i].huge_pct;
			break;
		}
}

/* the passes by phase, their times from the setting going in */
static void probe_fill(struct probe_log *pl, const struct probe_rx *p, double t0, double interval_s)
{
	double sum[3] = { 0, 0, 0 };
	unsigned n[3] = { 0, 0, 0 };
	size_t i;

	snprintf(pl->guest_thp, sizeof(pl->guest_thp), "%s", p->guest_thp);
	pl->period_s = p->period_s;
	pl->buffer_mib = p->size_bytes >> 20;
	pl->accesses = p->accesses;
	for (i = 0; i < p->n && i < RES_ACCESS_MAX; i++) {
		double t = p->t[i] - t0;
		int ph = t < 0 ? 0 : isfinite(interval_s) && t >= interval_s ? 2 : 1;

		pl->series[pl->n++] = (struct access_point){ t, p->ns[i] };
		sum[ph] += p->ns[i];
		n[ph]++;
	}
	pl->before_ns = n[0] ? sum[0] / n[0] : NAN;
	pl->during_ns = n[1] ? sum[1] / n[1] : NAN;
	pl->after_ns = n[2] ? sum[2] / n[2] : NAN;
	pl->n_before = n[0];
	pl->n_during = n[1];
	pl->n_after = n[2];
}

static void khp_fill(struct khp_log *kl, const struct khp_state *set, const struct khp_state *s0,
		     const struct khp_state *s1)
{
#define NN(x) ((x) < 0 ? 0ull : (unsigned long long)(x))
	kl->pages_to_scan = NN(set->pages_to_scan);
	kl->scan_sleep_ms = NN(set->scan_sleep_ms);
	kl->alloc_sleep_ms = NN(set->alloc_sleep_ms);
	kl->defrag = NN(set->defrag);
	kl->max_ptes_none = NN(set->max_ptes_none);
	kl->max_ptes_swap = NN(set->max_ptes_swap);
	kl->max_ptes_shared = NN(set->max_ptes_shared);
	kl->full_scans = s1->full_scans >= s0->full_scans ? NN(s1->full_scans - s0->full_scans) : 0;
	kl->pages_collapsed = s1->pages_collapsed >= s0->pages_collapsed ?
				      NN(s1->pages_collapsed - s0->pages_collapsed) : 0;
#undef NN
}

/*
 * The recovery's figures as a cell (variant "recovery" of memset at the
 * group's host state) so that the history and the gate carry them: the
 * times to 50% and 90% (when reached), the access time by phase, the
 * khugepaged CPU time or the collapse calls' time. Its validity is memset's
 * rule: the host coverage at the end and the guest coverage of the passes'
 * buffer; recovery_t90_s and recovery_access_after_ns are gated
 * (lib/wltraits.c).
 */
static int recovery_cell(struct results *res, const struct guest_ctx *gc, const struct collapse_log *cl,
			 const struct host_group *hg, struct err *e)
{
	const struct cell_key k = { "guest", hg->host_thp, prefault_name(hg->prefault),
				    cl->has_probe && cl->probe.guest_thp[0] ? cl->probe.guest_thp : "never", "memset",
				    "recovery", host_state_name(hg->host_state), NULL };
	const struct {
		const char *name;
		double v;
	} m[] = {
		{ "recovery_t50_s", cl->t50_s },
		{ "recovery_t90_s", cl->t90_s },
		{ "recovery_access_before_ns", cl->has_probe ? cl->probe.before_ns : NAN },
		{ "recovery_access_during_ns", cl->has_probe ? cl->probe.during_ns : NAN },
		{ "recovery_access_after_ns", cl->has_probe ? cl->probe.after_ns : NAN },
		{ "recovery_khugepaged_cpu_s", cl->has_khp ? cl->khp.cpu_s : NAN },
		{ "recovery_collapse_call_s", cl->has_khp ? NAN : cl->call_s },
	};
	struct cell *c;
	size_t i;

	/* on never the collapse goes against the setting (MADV_COLLAPSE ignores it): no cell to gate */
	if (hg->thp.kb == 0 && hg->thp.mode == THP_MODE_NEVER)
		return 0;
	if (!(c = results_cell_key(res, &k, e)))
		return e->code;
	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		struct metric *mt;

		if (!isfinite(m[i].v))
			continue;
		if (!(mt = cell_metric(c, m[i].name, e)))
			return e->code;
		metric_add_boot(mt, m[i].v, gc->boot);
	}
	/* the evidence: the host's coverage at the end, the guest's of the passes' buffer */
	metric_add_boot(&c->host_cov, cl->cov_after_pct, gc->boot);
	if (gc->probe.started && isfinite(gc->probe.guest_huge_pct))
		metric_add_boot(&c->guest_cov, gc->probe.guest_huge_pct, gc->boot);
	c->reps_ok++;
	return 0;
}

/* collapse-khugepaged: the knobs for the interval, khugepaged left to it, its counters and CPU time */
static int recover_khugepaged(struct recovery *rc, const struct run_io *io, struct guest_ctx *gc,
			      struct collapse_log *cl, struct khp_watch *kw, const struct thp_settings *khp_prev,
			      double t0, struct err *e)
{
	const struct run_config *cfg = gc->cfg;
	struct err ke = ERR_INIT;
	struct khp_state set;
	int r, rr;

	cl->has_khp = true;
	cl->khp.knobs_set = khp_prev->n > 0;
	r = khp_state_read(cfg->sysfs_root, &set, e);
	if (!r) {
		khp_fill(&cl->khp, &set, &kw->s0, &kw->s0);
		kw->last = kw->s0;
		kw->scans_at_rise = kw->s0.full_scans;
		kw->best_pct = cl->cov_before_pct;
		r = sample_series(rc, gc, io, cl, NULL, kw, t0, e);
		if (!r && !khp_state_read(cfg->sysfs_root, &kw->last, &ke))
			khp_fill(&cl->khp, &set, &kw->s0, &kw->last);
		if (kw->pid) {
			double cpu1;

			if (khp_cpu_s(gc->proc_root, kw->pid, &cpu1, &ke) == 0)
				cl->khp.cpu_s = cpu1 - kw->cpu0;
		}
	}
	/* the knobs back for the next group (the journal keeps the originals too) */
	rr = host_knob_opts_restore(rc->hs, khp_prev, &ke);
	if (!r && rr)
		r = err_set(e, rr, "%s", ke.msg);
	return r;
}

/* collapse-madvise: MADV_COLLAPSE over guest RAM in a thread while the coverage is sampled */
static int recover_madvise(struct recovery *rc, const struct run_io *io, struct guest_ctx *gc,
			   struct collapse_log *cl, const struct collapse_ranges *rs, double t0, struct err *e)
{
	struct call_thread ct;
	pthread_t th;
	int r;

	memset(&ct, 0, sizeof(ct));
	ct.pid = gc->qemu_pid;
	ct.rs = rs;
	ct.stop = io->stop;
	err_clear(&ct.e);
	atomic_init(&ct.done, false);
	r = pthread_create(&th, NULL, call_main, &ct);
	if (r)
		return err_set(e, -r, "cannot start the collapse thread: %s", strerror(r));
	r = sample_series(rc, gc, io, cl, &ct, NULL, t0, e);
	pthread_join(th, NULL);
	if (!r && ct.r)
		r = err_set(e, ct.r, "%s", ct.e.msg);
	if (r)
		return r;
	if (!cl->stopped[0])
		snprintf(cl->stopped, sizeof(cl->stopped), "collapse calls done");
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
	return 0;
}

/* the series' end, its times to 50% and 90% */
static void series_times(struct collapse_log *cl)
{
	double t[RES_COVSERIES_MAX], p[RES_COVSERIES_MAX];
	size_t i;

	if (!cl->n)
		return;
	for (i = 0; i < cl->n; i++) {
		t[i] = cl->series[i].t_s;
		p[i] = cl->series[i].huge_pct;
	}
	cl->cov_after_pct = p[cl->n - 1];
	cl->t50_s = collapse_time_to(t, p, cl->n, 50);
	cl->t90_s = collapse_time_to(t, p, cl->n, 90);
}

/* the interval on the progress line */
static void recovery_notes(const struct run_io *io, const struct guest_ctx *gc, const struct collapse_log *cl,
			   bool khp)
{
	if (khp)
		run_note(io, "recovery of guest %u (host %s, khugepaged): coverage %.1f%% -> %.1f%% in %.0f s (%s), "
			 "khugepaged CPU %.2f s, %llu pages collapsed",
			 gc->boot, cl->host_thp, cl->cov_before_pct, cl->cov_after_pct, cl->interval_s, cl->stopped,
			 cl->khp.cpu_s, cl->khp.pages_collapsed);
	else
		run_note(io, "recovery of guest %u (host %s): coverage %.1f%% -> %.1f%%, collapse %.2f s, %llu of %llu 2M blocks",
			 gc->boot, cl->host_thp, cl->cov_before_pct, cl->cov_after_pct, cl->call_s, cl->collapsed, cl->blocks);
	if (cl->has_reg)
		run_note(io, "  khugepaged's list: the guest touched %.0f MiB of fresh memory at %.1f s (%.1f s), "
			 "coverage %.1f%% after it", (double)cl->reg.bytes / (1 << 20), cl->reg.done_s, cl->reg.touch_s,
			 cl->reg.huge_pct_after_touch);
}

int recovery_run(struct recovery *rc, const struct run_io *io, struct guest_ctx *gc, struct results *res,
		 struct err *e)
{
	const struct run_config *cfg = gc->cfg;
	bool khp = rc->hg->host_state == HOST_COLLAPSE_KHUGEPAGED;
	struct thp_settings khp_prev = { 0 };
	struct khp_watch kw;
	struct collapse_ranges rs;
	struct smaps_cov cov;
	struct collapse_log *cl;
	struct err ke = ERR_INIT;
	double t0;
	int r;

	gc->probe.recovered = true;
	cl = results_collapse_add(res, e);
	if (!cl)
		return e->code;
	snprintf(cl->host_thp, sizeof(cl->host_thp), "%s", rc->hg->host_thp);
	snprintf(cl->prefault, sizeof(cl->prefault), "%s", prefault_name(rc->hg->prefault));
	snprintf(cl->method, sizeof(cl->method), "%s", khp ? "khugepaged" : "madvise");
	cl->round = rc->round;
	cl->boot = gc->boot;
	memset(&kw, 0, sizeof(kw));
	r = cov_now(gc, &cl->cov_before_pct, &cov, e);
	if (!r)
		r = collapse_find_ranges(gc->proc_root, gc->qemu_pid, cfg->memory, &rs, e);
	if (!r && khp) {
		r = khp_state_read(cfg->sysfs_root, &kw.s0, e);
		if (!r)
			r = khp_apply(rc, cfg, &khp_prev, e);
	}
	if (!r && !rc->applied) {
		r = apply_host_thp(rc->hs, rc->hp, &rc->hg->thp, e);
		rc->applied = r == 0;
	}
	if (r)
		goto out;
	t0 = mono_s();
	/* the kernel stops khugepaged under never and starts it anew with the setting: found now */
	if (khp && khp_find_thread(gc->proc_root, &kw.pid, &ke) == 0 && khp_cpu_s(gc->proc_root, kw.pid, &kw.cpu0, &ke) == 0)
		cl->khp.pid = (unsigned)kw.pid;
	else
		kw.pid = 0;
	cl->mapping_kb = rs.bytes / 1024;
	cl->ranges = (unsigned)rs.n;
	if (khp)
		registration_ask(gc, io, cl, t0);
	r = khp ? recover_khugepaged(rc, io, gc, cl, &kw, &khp_prev, t0, e) : recover_madvise(rc, io, gc, cl, &rs, t0, e);
	if (r)
		goto out;
	series_times(cl);
	if (gc->probe.started) {
		passes_after(rc, gc, io, t0 + cl->interval_s);
		cl->has_probe = true;
		probe_fill(&cl->probe, &gc->probe, t0, cl->interval_s);
	}
	registration_fill(cl, &gc->probe, t0);
	recovery_notes(io, gc, cl, khp);
	if ((r = recovery_cell(res, gc, cl, rc->hg, e)))
		return r;
	if (cl->has_probe)
		run_note(io, "  access ns before %.1f (%u passes), during %.1f (%u), after %.1f (%u)", cl->probe.before_ns,
			 cl->probe.n_before, cl->probe.during_ns, cl->probe.n_during, cl->probe.after_ns, cl->probe.n_after);
	return 0;
out:
	snprintf(cl->error, sizeof(cl->error), "%s", e->msg);
	return r;
}
