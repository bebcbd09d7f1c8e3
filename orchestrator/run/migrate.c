/*
 * migrate: the live-migration axis: the option, the keep phase asked of the
 * guest, the second daemon's start and stop, and per guest the migration,
 * the record channel moved to the destination and the coverage series.
 */
#include "orchestrator/run/migrate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/collapse.h"
#include "host/procfs.h"
#include "lib/clock.h"
#include "lib/wlopts.h"
#include "orchestrator/analysis/migration.h"
#include "orchestrator/run/internal.h"
#include "orchestrator/virt/migrate.h"

#define SAMPLE_S 1.0
#define DRAIN_MS 5000
#define SETTLE_WINDOW 5			/* samples within SETTLE_BAND points: a plateau */
#define SETTLE_BAND 0.5

int migrate_opt_parse(struct run_config *c, const char *arg, struct err *e)
{
	char buf[64], *save = NULL, *tok;
	bool seen[MIGRATE__COUNT] = { false };
	unsigned i;

	if (strlen(arg) >= sizeof(buf))
		return err_set(e, -EINVAL, "too long: give precopy, postcopy or both");
	snprintf(buf, sizeof(buf), "%s", arg);
	c->n_migrate = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum migrate_mode m;

		if (migrate_mode_parse(tok, &m))
			return err_set(e, -EINVAL, "unknown arm %s: give precopy, postcopy or both (none is "
				       "the arm without, always run)", err_q(tok));
		seen[m] = true;
	}
	if (!seen[MIGRATE_PRECOPY] && !seen[MIGRATE_POSTCOPY]) {
		if (seen[MIGRATE_NONE])
			return 0;	/* --migrate=none: no axis */
		return err_set(e, -EINVAL, "give precopy, postcopy or both: %s", err_q(arg));
	}
	/* the migrating arms first: a run of one round migrates */
	for (i = 0; i < MIGRATE__COUNT; i++)
		if (i != MIGRATE_NONE && seen[i])
			c->migrate[c->n_migrate++] = i;
	c->migrate[c->n_migrate++] = MIGRATE_NONE;
	return 0;
}

int migrate_config_check(struct run_config *c, struct err *e)
{
	char add[96], spec[WLOPTS_SPEC_MAX + 1], why[ERR_MSG_MAX];
	struct wlopt o[WLOPTS_MAX];
	const char *keep_thp;
	size_t n;

	if (!c->n_migrate)
		return 0;
	for (n = 0; n < c->n_wl && strcmp(c->wl[n], "memset"); n++)
		;
	if (n == c->n_wl)
		return err_set(e, -EINVAL, "--migrate needs the memset workload (its keep phase runs during the "
			       "migration): add --workloads=memset");
	if (!c->target_guest)
		return err_set(e, -EINVAL, "--migrate migrates guests: it takes --target=guest or both");
	if (c->guests > 1)
		return err_set(e, -EINVAL, "--migrate runs one guest at a time: drop --guests=%u", c->guests);
	/* each of these arms watches its guest's QEMU over the series, which a migration replaces */
	for (n = 0; n < c->n_host_state; n++)
		if (c->host_state[n] == HOST_COLLAPSE_MADVISE || c->host_state[n] == HOST_COLLAPSE_KHUGEPAGED)
			return err_set(e, -EINVAL, "--migrate and --host-state=%s watch the same QEMU: run them "
				       "separately", host_state_name(c->host_state[n]));
	for (n = 0; n < c->n_balloon; n++)
		if (c->balloon[n] == BALLOON_REPORTING)
			return err_set(e, -EINVAL, "--migrate and --balloon=reporting watch the same QEMU: run "
				       "them separately");
	if (c->ksm & RUN_KSM_ON)
		return err_set(e, -EINVAL, "--migrate and --ksm=on cannot run together (the KSM arm boots "
			       "several guests at once): run them separately");
	if (strstr(c->wl_opts, "memset:keep"))
		return err_set(e, -EINVAL, "--migrate sets memset's keep parameters itself: drop them from "
			       "--workload-opts");
	/* the first treatment's cell keeps: a THP-backed guest has huge pages to lose */
	keep_thp = c->n_guest_thp ? thp_mode_name(c->guest_thp[0].mode) : "never";
	snprintf(add, sizeof(add), "memset:keep=%u,memset:keep-rep=%u,memset:keep-thp=%s", MIGRATE_KEEP_S,
		 c->warmup + c->reps - 1, keep_thp);
	if (snprintf(spec, sizeof(spec), "%s%s%s", c->wl_opts, c->wl_opts[0] ? "," : "", add) >= (int)sizeof(spec) ||
	    wlopts_parse(spec, o, WLOPTS_MAX, &n, why, sizeof(why)))
		return err_set(e, -EINVAL, "--migrate: no room for memset's keep parameters beside --workload-opts: "
			       "shorten it");
	snprintf(c->wl_opts, sizeof(c->wl_opts), "%s", spec);
	c->timeout_ms += (MIGRATE_KEEP_S + MIGRATE_SETTLE_CAP_S) * 1000ull;
	return 0;
}

int migrate_axis_start(const struct run_config *cfg, struct run_io *io, const struct migrate_cb *cb,
		       struct err *e)
{
	struct err re = ERR_INIT;
	char what[256], logdir[PATH_MAX];
	bool found = false;
	unsigned i;
	int r;

	io->migd = NULL;
	if (migd_reap_stale(cfg->state_dir, &found, what, sizeof(what), &re))
		cb->note(io, "warning: %s", re.msg);
	else if (found)
		cb->note(io, "removed a second libvirt daemon left by a killed thpeval run: %s", what);
	for (i = 0; i < cfg->n_migrate; i++)
		if (cfg->migrate[i] != MIGRATE_NONE)
			break;
	if (i == cfg->n_migrate)
		return 0;
	if (snprintf(logdir, sizeof(logdir), "%s/migrate-daemon", cfg->out_dir) >= (int)sizeof(logdir))
		return err_set(e, -ENAMETOOLONG, "--out path too long");
	r = migd_start(cfg->state_dir, logdir, NULL, &io->migd, e);
	if (r)
		return err_wrap(e, "--migrate cannot run on this host");
	cb->note(io, "second libvirt daemon for the migration arms: pid %d, %s", migd_pid(io->migd), migd_uri(io->migd));
	return 0;
}

void migrate_axis_stop(struct run_io *io, struct results *res, const struct migrate_cb *cb)
{
	struct err e = ERR_INIT;

	if (io->migd) {
		migd_stop(io->migd);
		io->migd = NULL;
		cb->note(io, "stopped the second libvirt daemon");
	}
	if (res->nmigrations && migration_summarize(res, &e))
		cb->note(io, "warning: %s", e.msg);
}

/* ---- one guest ------------------------------------------------------------------ */

enum mg_phase { MG_KEEP, MG_RUNNING, MG_DEST, MG_DONE };

struct migrate_guest {
	struct migrate_cb cb;
	enum migrate_mode arm;
	enum mg_phase phase;
	struct migration_log *log;	/* in res->migrations: its index, the array may move */
	size_t log_idx;
	struct migjob *job;
	unsigned passes;
	double t_start, t_end;		/* host clock: the migration's start and end (none: start = end) */
	double next_sample;
	bool settled, sampled_src, stop_sent;
	double t_settled;		/* host clock: when the coverage settled */
	double pass_t[RES_MIGPASS_MAX];	/* host arrival of each pass */
};

static struct migration_log *mlog(struct guest_ctx *gc)
{
	return &gc->res->migrations[gc->mig->log_idx];
}

int migrate_guest_begin(struct guest_ctx *gc, unsigned round, const struct migrate_cb *cb, struct err *e)
{
	const struct run_config *cfg = gc->cfg;
	struct migrate_guest *mg;
	struct migration_log *l;

	gc->mig = NULL;
	if (!cfg->n_migrate)
		return 0;
	mg = calloc(1, sizeof(*mg));
	if (!mg)
		return err_set(e, -ENOMEM, "out of memory");
	l = results_migration_add(gc->res, e);
	if (!l) {
		free(mg);
		return e->code;
	}
	mg->cb = *cb;
	mg->arm = (enum migrate_mode)cfg->migrate[round % cfg->n_migrate];
	mg->log_idx = (size_t)(l - gc->res->migrations);
	snprintf(l->arm, sizeof(l->arm), "%s", migrate_mode_name(mg->arm));
	snprintf(l->host_thp, sizeof(l->host_thp), "%s", gc->host_thp);
	l->round = round;
	l->boot = gc->boot;
	gc->mig = mg;
	return 0;
}

void migrate_on_info(struct guest_ctx *gc, const struct record *rec)
{
	struct migrate_guest *mg = gc->mig;
	struct migration_log *l;
	const char *ev = rec_get(rec, "event");
	double w, a;

	if (!mg || !ev || strcmp(ev, "keep") || mg->phase == MG_DONE)
		return;
	if (rec_get_f64(rec, "keep_write_ns_per_4k", &w) || rec_get_f64(rec, "keep_access_ns", &a) ||
	    !isfinite(w) || !isfinite(a) || w < 0 || a < 0)
		return;
	l = mlog(gc);
	if (l->npass >= RES_MIGPASS_MAX)
		return;
	{
		/* the pass started its write and chase this long before its record came */
		double dur = (w * (double)(gc->cfg->size / 4096) + a * (double)gc->cfg->accesses) / 1e9;

		mg->pass_t[l->npass] = mono_s() - dur;
	}
	l->pass[l->npass].write_ns_per_4k = w;
	l->pass[l->npass].access_ns = a;
	l->npass++;
	mg->passes++;
}

/* the coverage of the QEMU that runs the guest now */
static int cov_now(struct guest_ctx *gc, int pid, double *pct, struct err *e)
{
	struct smaps_cov cov;
	int r;

	if (pid <= 0)
		return err_set(e, -ESRCH, "no QEMU process for guest %s", gc->log->name);
	r = smaps_guest_ram(gc->proc_root, pid, gc->cfg->memory, &cov, e);
	if (!r)
		*pct = collapse_cov_pct(&cov);
	return r;
}

static int current_qemu(struct guest_ctx *gc)
{
	struct migrate_guest *mg = gc->mig;

	if (mg->arm != MIGRATE_NONE && mg->phase >= MG_DEST)
		return migd_qemu_pid(gc->io->migd, gc->log->name);
	return gc->qemu_pid > 0 ? gc->qemu_pid : guest_qemu_pid(gc->g);
}

/* one coverage sample when due; the settling decided */
static void sample(struct guest_ctx *gc)
{
	struct migrate_guest *mg = gc->mig;
	struct migration_log *l = mlog(gc);
	struct err e = ERR_INIT;
	double now = mono_s(), pct;
	size_t i;

	if (mg->settled || now < mg->next_sample || l->n >= RES_COVSERIES_MAX)
		return;
	mg->next_sample = (mg->next_sample ? mg->next_sample : now) + SAMPLE_S;
	if (cov_now(gc, current_qemu(gc), &pct, &e))
		return;
	l->series[l->n++] = (struct cov_point){ now - mg->t_end, pct };
	if (pct >= 90) {
		mg->settled = true;
		mg->t_settled = now;
		l->settled_s = now - mg->t_end;
		return;
	}
	if (l->n >= SETTLE_WINDOW) {
		double lo = 100, hi = 0;

		for (i = l->n - SETTLE_WINDOW; i < l->n; i++) {
			lo = fmin(lo, l->series[i].huge_pct);
			hi = fmax(hi, l->series[i].huge_pct);
		}
		if (hi - lo <= SETTLE_BAND) {
			mg->settled = true;
			mg->t_settled = now;
			l->settled_s = l->series[l->n - SETTLE_WINDOW].t_s;
			snprintf(l->t90_why, sizeof(l->t90_why), "settled at %.1f%% (no change over %d s): khugepaged "
				 "did not raise it to 90%%", pct, SETTLE_WINDOW);
			return;
		}
	}
	if (now - mg->t_end >= MIGRATE_SETTLE_CAP_S) {
		mg->settled = true;
		mg->t_settled = now;
		snprintf(l->t90_why, sizeof(l->t90_why), "still %.1f%% after %d s, the longest thpeval samples", pct,
			 MIGRATE_SETTLE_CAP_S);
	}
}

static int start_migration(struct guest_ctx *gc, struct err *e)
{
	struct migrate_guest *mg = gc->mig;
	struct migration_log *l = mlog(gc);
	struct err ce = ERR_INIT;
	double pct;

	gc->qemu_pid = guest_qemu_pid(gc->g);
	if (!cov_now(gc, gc->qemu_pid, &pct, &ce))
		l->src_cov_pct = pct;
	mg->t_start = mono_s();
	if (mg->arm == MIGRATE_NONE) {
		mg->t_end = mg->t_start;
		mg->phase = MG_DEST;
		gc->mig->cb.note(gc->io, "  %s: no migration (arm none) after %u keep passes; coverage %.1f%%", gc->log->name,
			 mg->passes, l->src_cov_pct);
		return 0;
	}
	gc->mig->cb.note(gc->io, "  %s: %s migration to the second daemon after %u keep passes (source coverage %.1f%%)",
		 gc->log->name, migrate_mode_name(mg->arm), mg->passes, l->src_cov_pct);
	if (migjob_start(gc->g, gc->io->migd, mg->arm, &mg->job, e))
		return e->code;
	mg->phase = MG_RUNNING;
	return 0;
}

/* the migration is over: the source's records read to the end, the guest re-attached on the destination */
static int finish_migration(struct guest_ctx *gc, struct err *e)
{
	struct migrate_guest *mg = gc->mig;
	struct migration_log *l = mlog(gc);
	struct migrate_stats st;
	enum guest_poll_result pr = GUEST_POLL_TIMEOUT;
	int r;

	r = migjob_finish(mg->job, &st, e);
	mg->t_end = mono_s();
	l->migrate_s = mg->t_end - mg->t_start;
	migjob_free(mg->job);
	mg->job = NULL;
	if (r) {
		/* the guest stays on the source and goes on there; the arm's entry keeps why */
		snprintf(l->error, sizeof(l->error), "%s", e->msg);
		gc->mig->cb.note(gc->io, "  %s: warning: %s", gc->log->name, e->msg);
		err_clear(e);
		mg->phase = MG_DONE;
		return 0;
	}
	l->postcopy_switched = st.postcopy_switched;
	if (mg->arm == MIGRATE_POSTCOPY && !st.postcopy_switched)
		gc->mig->cb.note(gc->io, "  %s: warning: the migration ended before its switch to postcopy%s%s",
				 gc->log->name, st.switch_err[0] ? ": " : "", st.switch_err);
	if (st.have) {
		l->have_stats = true;
		l->total_ms = st.total_ms;
		l->downtime_ms = st.downtime_ms;
		l->setup_ms = st.setup_ms;
		l->data_bytes = st.data_total;
		l->memory_bytes = st.mem_processed;
		l->memory_total_bytes = st.mem_total;
		l->bandwidth_bps = st.mem_bps;
		l->dirty_rate_pps = st.dirty_rate;
		l->postcopy_requests = st.postcopy_reqs;
		l->iterations = st.iterations;
	}
	/* the source QEMU is gone: what it passed on before is in its channel */
	r = guest_poll(gc->g, DRAIN_MS, (volatile const int *)gc->io->stop, mg->cb.on_record, gc, &pr, e);
	if (r)
		return r;
	if (err_isset(&gc->err))
		return err_set(e, gc->err.code, "%s", gc->err.msg);
	r = guest_rebind(gc->g, gc->io->migd, e);
	if (r)
		return r;
	mg->phase = MG_DEST;
	mg->next_sample = 0;
	/* the host telemetry of the rest of the series is the destination QEMU's */
	gc->qemu_pid = migd_qemu_pid(gc->io->migd, gc->log->name);
	gc->mig->cb.note(gc->io, "  %s: on the destination after %.1f s (downtime %.0f ms, %.0f MiB sent, %llu postcopy "
		 "requests)", gc->log->name, l->migrate_s, l->downtime_ms, (double)l->data_bytes / 1048576.0,
		 l->postcopy_requests);
	return 0;
}

/* the coverage settled and the guest ran its passes after it: the keep phase may end */
static void keep_stop(struct guest_ctx *gc)
{
	struct migrate_guest *mg = gc->mig;
	const struct migration_log *l = mlog(gc);
	struct err e = ERR_INIT;
	unsigned after = 0;
	size_t i;

	if (!mg->settled || mg->stop_sent)
		return;
	for (i = 0; i < l->npass; i++)
		after += mg->pass_t[i] >= mg->t_settled;
	if (after < MIGRATE_AFTER_PASSES)
		return;
	mg->stop_sent = true;
	if (guest_send(gc->g, REC_PROBE_STOP, sizeof(REC_PROBE_STOP) - 1, &e))
		mg->cb.note(gc->io, "  %s: warning: the keep phase runs to its end: %s", gc->log->name, e.msg);
}

int migrate_tick(struct guest_ctx *gc, bool *handled, struct err *e)
{
	struct migrate_guest *mg = gc->mig;
	enum guest_poll_result pr;
	int r;

	*handled = false;
	if (!mg)
		return 0;
	switch (mg->phase) {
	case MG_KEEP:
		if (mg->passes >= MIGRATE_BEFORE_PASSES)
			return start_migration(gc, e);
		return 0;
	case MG_RUNNING:
		*handled = true;
		if (migjob_done(mg->job))
			return finish_migration(gc, e);
		if (migjob_postcopy_step(mg->job, e) < 0) {
			gc->mig->cb.note(gc->io, "  %s: warning: %s", gc->log->name, e->msg);
			err_clear(e);
		}
		/* the source's records while the migration runs; its end is the job's to say */
		r = guest_poll(gc->g, 0, (volatile const int *)gc->io->stop, mg->cb.on_record, gc, &pr, e);
		if (r)
			return r;
		if (err_isset(&gc->err))
			return err_set(e, gc->err.code, "%s", gc->err.msg);
		return 0;
	case MG_DEST:
		sample(gc);
		keep_stop(gc);
		return 0;
	case MG_DONE:
		break;
	}
	return 0;
}

static double mean_of(const struct migration_log *l, const double *t, double from, double to, bool access,
		      bool first_only)
{
	double s = 0;
	size_t i, n = 0;

	for (i = 0; i < l->npass; i++) {
		if (t[i] < from || t[i] >= to)
			continue;
		s += access ? l->pass[i].access_ns : l->pass[i].write_ns_per_4k;
		n++;
		if (first_only)
			break;
	}
	return n ? s / (double)n : NAN;
}

void migrate_guest_end(struct guest_ctx *gc, int status)
{
	struct migrate_guest *mg = gc->mig;
	struct migration_log *l;
	double t0, t[RES_MIGPASS_MAX], p[RES_COVSERIES_MAX], ts[RES_COVSERIES_MAX], settled_at;
	size_t i;

	if (!mg)
		return;
	l = mlog(gc);
	if (mg->job) {
		/* interrupted or failed mid-migration: the thread ends when the guest is destroyed */
		struct migrate_stats st;
		struct err e = ERR_INIT;

		migjob_abort(mg->job);
		migjob_finish(mg->job, &st, &e);
		migjob_free(mg->job);
		mg->job = NULL;
		snprintf(l->error, sizeof(l->error), "the guest ended during its migration");
	}
	/* the series goes on a while after the guest's end: its QEMU is still there */
	while (status == 0 && mg->phase == MG_DEST && !mg->settled && !*gc->io->stop) {
		sample(gc);
		virt_event_wait(100);
	}
	if (status && !l->error[0])
		snprintf(l->error, sizeof(l->error), "%s", "the guest failed before its keep phase ended");
	if (mg->phase == MG_KEEP && !l->error[0])
		snprintf(l->error, sizeof(l->error), "only %u keep passes came (%d needed before the migration)",
			 mg->passes, MIGRATE_BEFORE_PASSES);
	t0 = mg->t_start;
	for (i = 0; i < l->npass; i++) {
		t[i] = mg->pass_t[i] - t0;
		l->pass[i].t_s = t[i];
	}
	if (mg->phase >= MG_DEST || (mg->phase == MG_DONE && mg->t_end > 0)) {
		double end = mg->t_end - t0;

		settled_at = isfinite(l->settled_s) ? end + l->settled_s : INFINITY;
		l->access_before_ns = mean_of(l, t, -INFINITY, 0, true, false);
		l->write_before_ns = mean_of(l, t, -INFINITY, 0, false, false);
		l->access_after_ns = mean_of(l, t, end, INFINITY, true, true);
		l->write_after_ns = mean_of(l, t, end, INFINITY, false, true);
		l->access_settled_ns = mean_of(l, t, settled_at, INFINITY, true, false);
		l->write_settled_ns = mean_of(l, t, settled_at, INFINITY, false, false);
	}
	if (l->n) {
		for (i = 0; i < l->n; i++) {
			ts[i] = l->series[i].t_s;
			p[i] = l->series[i].huge_pct;
		}
		l->dst_cov_first_pct = p[0];
		l->dst_cov_last_pct = p[l->n - 1];
		l->t90_s = collapse_time_to(ts, p, l->n, 90);
		if (isfinite(l->t90_s))
			l->t90_why[0] = '\0';
		else if (!l->t90_why[0])
			snprintf(l->t90_why, sizeof(l->t90_why), "the series ended at %.1f%% before it settled",
				 p[l->n - 1]);
		if (isfinite(l->t90_s))
			gc->mig->cb.note(gc->io, "  %s (%s): coverage %.1f%% right after, %.1f%% at the end; 90%% at %.1f s",
				 gc->log->name, l->arm, l->dst_cov_first_pct, l->dst_cov_last_pct, l->t90_s);
		else
			gc->mig->cb.note(gc->io, "  %s (%s): coverage %.1f%% right after, %.1f%% at the end; never 90%%: %s",
				 gc->log->name, l->arm, l->dst_cov_first_pct, l->dst_cov_last_pct, l->t90_why);
	}
	free(mg);
	gc->mig = NULL;
}
