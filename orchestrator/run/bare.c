/*
 * bare: the bare-host rows: the same workload binary run directly on the host, each
 * host setting applied anew every round.
 */
#include "orchestrator/run/bare.h"

#include <errno.h>
#include <string.h>
#include "orchestrator/run/hostplan.h"
#include "orchestrator/run/note.h"
#include "orchestrator/run/records.h"


/* ---- the bare-host rows: the same workload binary, run directly on the host ---- */

struct local_ctx {
	const struct run_config *cfg;
	const struct run_io *io;
	struct results *res;
	const char *host_thp;
	const char *workload;
	bool warmup;
	unsigned results;
	char fail[256];
	unsigned round;			/* the samples' boot id: the host setting is applied anew each round */
};

static int on_local_record(void *opaque, const struct record *rec, const char *rejected)
{
	struct local_ctx *lc = opaque;
	struct cell_key k = { "host", lc->host_thp, "none", "none", lc->workload, NULL, NULL, NULL };
	struct cell *c;
	char why[160];
	double v;
	size_t i;

	if (!rec) {
		snprintf(lc->fail, sizeof(lc->fail), "workload printed a malformed record: %s", rejected);
		return 1;
	}
	if (rec->type == REC_FAIL || rec->type == REC_SKIP) {
		snprintf(lc->fail, sizeof(lc->fail), "%s: %s", rec->type == REC_FAIL ? "failed" : "skipped",
			 rec_get(rec, "reason") ? rec_get(rec, "reason") : "no reason given");
		return 0;
	}
	if (rec->type != REC_RESULT)
		return 0;
	if (!rec_get(rec, "workload") || strcmp(rec_get(rec, "workload"), lc->workload)) {
		snprintf(lc->fail, sizeof(lc->fail), "record for another workload");
		return 1;
	}
	k.variant = rec_get(rec, "variant");
	c = results_cell_key(lc->res, &k, NULL);
	if (!c)
		return 1;
	if (lc->warmup) {
		c->warmups++;
		return 0;
	}
	/* as a guest's (records.c): a value out of its range fails the repetition, with the reason */
	if (rec_check_values(rec, why, sizeof(why))) {
		snprintf(lc->fail, sizeof(lc->fail), "refused a result record: %s", why);
		return 0;
	}
	for (i = 0; i < rec->nfields; i++) {
		struct metric *m;

		if (is_label(rec->f[i].key) || rec_get_f64(rec, rec->f[i].key, &v))
			continue;
		m = cell_metric(c, rec->f[i].key, NULL);
		if (m)
			metric_add_boot(m, v, lc->round);
	}
	/* on the bare host the workload's own coverage (lib/wltraits.c) is the host evidence */
	cell_take_evidence(c, rec, &c->host_cov, lc->round);
	c->reps_ok++;
	lc->results++;
	return 0;
}

int run_host_target(const struct run_config *cfg, const struct run_io *io, struct host_session *hs,
			   const struct host_plan *hp, const struct srcdisk *sd, const struct thp_setting *thp, unsigned round,
			   struct results *res, struct err *e)
{
	char host_thp[THP_NAME_LEN] = "";	/* the cells' host_thp */
	unsigned rep;
	size_t w;
	int r;

	thp_setting_format(thp, host_thp, sizeof(host_thp));
	r = apply_host_thp(hs, hp, thp, e);
	if (r)
		return r;
	run_note(io, "round %u, bare host, host THP enabled=%s", round + 1, host_thp);
	for (w = 0; w < cfg->n_wl && !*io->stop; w++) {
		const struct workload_info *wi = workload_find(cfg->wl_info, cfg->n_wl_info, cfg->wl[w]);
		struct thp_settings knobs_before;

		/* the host knobs its options ask for: journaled, here, never by the workload */
		r = host_knob_opts_set(hs, cfg->wl_opts, cfg->wl[w], &knobs_before, e);
		if (r)
			return r;
		for (rep = 0; rep < cfg->warmup + cfg->reps && !*io->stop; rep++) {
			char a[12][PATH_MAX + 16], u[WLOPTS_MAX][WLOPT_NAME_MAX + WLOPT_VALUE_MAX + 8];
			const char *args[14 + WLOPTS_MAX];
			struct local_ctx lc = { cfg, io, res, host_thp, cfg->wl[w], rep < cfg->warmup, 0, "", round };
			struct err le = ERR_INIT;
			size_t n = 0, k, nu;
			uint64_t limit_ms;

			snprintf(a[n++], sizeof(a[0]), "%s", cfg->wl[w]);
			snprintf(a[n++], sizeof(a[0]), "--rep=%u", round * (cfg->warmup + cfg->reps) + rep);
			snprintf(a[n++], sizeof(a[0]), "--warmup=%d", rep < cfg->warmup);
			snprintf(a[n++], sizeof(a[0]), "--seed=%llu", (unsigned long long)(cfg->seed + round));
			if (wi && wi->has_size)
				snprintf(a[n++], sizeof(a[0]), "--size=%llu", (unsigned long long)cfg->size);
			if (wi && wi->has_accesses)
				snprintf(a[n++], sizeof(a[0]), "--accesses=%llu", (unsigned long long)cfg->accesses);
			if (wi && wi->has_madvise)
				snprintf(a[n++], sizeof(a[0]), "--madvise=%d", thp->mode == THP_MODE_MADVISE);
			if (wi && wi->has_src && sd)
				/* the host copy of the guests' source disk; O= trees in /tmp */
				snprintf(a[n++], sizeof(a[0]), "--src=%s", sd->tree);
			for (k = 0; k < n; k++)
				args[k] = a[k];
			/* the user's own parameters of this workload (--workload-opts) */
			nu = workload_opts_args(cfg->wl_opts, cfg->wl[w], u, WLOPTS_MAX);
			for (k = 0; k < nu; k++)
				if (!host_knob_opt(cfg->wl[w], u[k]))
					args[n++] = u[k];
			args[n] = NULL;
			limit_ms = wi ? workload_run_limit_ms(cfg->wl_opts, wi) : 0;
			r = workload_run_local(cfg->guest_bin, args, (int)(limit_ms ? limit_ms : cfg->timeout_ms), io->stop,
					       on_local_record, &lc, &le);
			if (r == -EINTR)
				return err_set(e, -EINTR, "interrupted");
			if (r || lc.fail[0]) {
				struct cell_key k2 = { "host", host_thp, "none", "none", cfg->wl[w], NULL, NULL, NULL };
				struct cell *c = results_cell_key(res, &k2, NULL);

				if (c)
					cell_add_failure(c, lc.fail[0] ? lc.fail : le.msg);
				run_note(io, "  bare host %s %s: %s", host_thp, cfg->wl[w], lc.fail[0] ? lc.fail : le.msg);
			} else if (rep >= cfg->warmup) {
				run_note(io, "  bare host=%s %s rep %u done", host_thp, cfg->wl[w], rep - cfg->warmup + 1);
			}
		}
		r = host_knob_opts_restore(hs, &knobs_before, e);
		if (r)
			return r;
	}
	return 0;
}
