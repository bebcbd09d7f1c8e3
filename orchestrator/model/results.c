#include "orchestrator/model/results.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/procfs.h"
#include "lib/wltraits.h"

void results_init(struct results *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->thpeval_version, sizeof(r->thpeval_version), "%s", THPEVAL_VERSION);
	snprintf(r->status, sizeof(r->status), "running");
	r->started = time(NULL);
}

void results_release(struct results *r)
{
	if (!r)
		return;
	free(r->cells);
	free(r->guests);
	free(r->effects);
	free(r->ab);
	r->ab = NULL;
	free(r->frags);
	r->frags = NULL;
	r->nfrags = r->cap_frags = 0;
	free(r->collapses);
	r->collapses = NULL;
	r->ncollapses = r->cap_collapses = 0;
	free(r->migrations);
	r->migrations = NULL;
	r->nmigrations = r->cap_migrations = 0;
	free(r->migsum);
	r->migsum = NULL;
	r->nmigsum = r->cap_migsum = 0;
	free(r->balloons);
	r->balloons = NULL;
	r->nballoons = r->cap_balloons = 0;
	free(r->ksms);
	r->ksms = NULL;
	r->nksms = r->cap_ksms = 0;
	free(r->ksm_fx);
	r->ksm_fx = NULL;
	r->effects = NULL;
	r->cells = NULL;
	r->guests = NULL;
	r->ncells = r->nguests = r->cap_cells = r->cap_guests = 0;
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		ncap *= 2;
	p = realloc(*arr, ncap * elem);
	if (!p)
		return -ENOMEM;
	memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
	*arr = p;
	*cap = ncap;
	return 0;
}

static const char *or_default(const char *s, const char *def)
{
	return s && *s ? s : def;
}

struct cell *results_cell_key(struct results *r, const struct cell_key *k, struct err *e)
{
	const char *prefault = or_default(k->prefault, "ondemand");
	const char *variant = or_default(k->variant, "");
	const char *hstate = or_default(k->host_state, "fresh");
	const char *balloon = or_default(k->balloon, "none");
	struct cell *c;
	size_t i;

	for (i = 0; i < r->ncells; i++) {
		c = &r->cells[i];
		if (!strcmp(c->target, k->target) && !strcmp(c->host_thp, k->host_thp) &&
		    !strcmp(c->prefault, prefault) && !strcmp(c->guest_thp, k->guest_thp) &&
		    !strcmp(c->workload, k->workload) && !strcmp(c->variant, variant) &&
		    !strcmp(c->host_state, hstate) && !strcmp(or_default(c->balloon, "none"), balloon))
			return c;
	}
	if (strlen(hstate) >= sizeof(c->host_state) || strlen(balloon) >= sizeof(c->balloon)) {
		err_set(e, -EINVAL, "host state name too long");
		return NULL;
	}
	if (strlen(k->host_thp) >= RES_NAME_MAX || strlen(k->guest_thp) >= RES_NAME_MAX ||
	    strlen(k->workload) >= RES_NAME_MAX || strlen(prefault) >= RES_NAME_MAX ||
	    strlen(variant) >= RES_NAME_MAX || strlen(k->target) >= sizeof(c->target)) {
		err_set(e, -EINVAL, "cell name too long");
		return NULL;
	}
	if (grow((void **)&r->cells, &r->cap_cells, r->ncells + 1, sizeof(*c))) {
		err_set(e, -ENOMEM, "out of memory for results");
		return NULL;
	}
	c = &r->cells[r->ncells++];
	memset(c, 0, sizeof(*c));
	strcpy(c->target, k->target);
	strcpy(c->host_thp, k->host_thp);
	strcpy(c->prefault, prefault);
	strcpy(c->guest_thp, k->guest_thp);
	strcpy(c->workload, k->workload);
	strcpy(c->variant, variant);
	strcpy(c->host_state, hstate);
	strcpy(c->balloon, balloon);
	strcpy(c->host_cov_source, "smaps");
	strcpy(c->host_cov.name, "host_huge_pct");
	strcpy(c->guest_cov.name, "guest_huge_pct");
	c->valid = true;
	return c;
}

struct cell *results_cell(struct results *r, const char *target, const char *host_thp,
			  const char *guest_thp, const char *workload, struct err *e)
{
	struct cell_key k = { target, host_thp, NULL, guest_thp, workload, NULL, NULL, NULL };

	return results_cell_key(r, &k, e);
}

struct guest_log *results_guest_add(struct results *r, struct err *e)
{
	struct guest_log *g;

	if (grow((void **)&r->guests, &r->cap_guests, r->nguests + 1, sizeof(*g))) {
		err_set(e, -ENOMEM, "out of memory for results");
		return NULL;
	}
	g = &r->guests[r->nguests++];
	memset(g, 0, sizeof(*g));
	g->create_to_first_record_s = g->teardown_s = g->total_s = NAN;
	g->boot_create_s = g->boot_firmware_s = g->boot_kernel_s = g->boot_initrd_s = g->boot_runner_s = NAN;
	return g;
}

struct frag_log *results_frag_add(struct results *r, struct err *e)
{
	struct frag_log *f;

	if (grow((void **)&r->frags, &r->cap_frags, r->nfrags + 1, sizeof(*f))) {
		err_set(e, -ENOMEM, "out of memory for results");
		return NULL;
	}
	f = &r->frags[r->nfrags++];
	memset(f, 0, sizeof(*f));
	f->seconds = NAN;
	return f;
}

struct ksm_log *results_ksm_add(struct results *r, struct err *e)
{
	struct ksm_log *k;

	if (grow((void **)&r->ksms, &r->cap_ksms, r->nksms + 1, sizeof(*k))) {
		err_set(e, -ENOMEM, "out of memory for results");
		return NULL;
	}
	k = &r->ksms[r->nksms++];
	memset(k, 0, sizeof(*k));
	k->t_sharing_s = k->waited_s = k->access_before_ns = k->access_after_ns = NAN;
	return k;
}

struct migration_log *results_migration_add(struct results *r, struct err *e)
{
	struct migration_log *m;

	if (grow((void **)&r->migrations, &r->cap_migrations, r->nmigrations + 1, sizeof(*m))) {
		err_set(e, -ENOMEM, "out of memory for results");
		return NULL;
	}
	m = &r->migrations[r->nmigrations++];
	memset(m, 0, sizeof(*m));
	m->src_cov_pct = m->dst_cov_first_pct = m->dst_cov_last_pct = m->t90_s = m->migrate_s = NAN;
	m->total_ms = m->downtime_ms = m->setup_ms = m->settled_s = NAN;
	m->access_before_ns = m->access_after_ns = m->access_settled_ns = NAN;
	m->write_before_ns = m->write_after_ns = m->write_settled_ns = NAN;
	return m;
}

struct mig_summary *results_migsum_add(struct results *r, struct err *e)
{
	struct mig_summary *m;

	if (grow((void **)&r->migsum, &r->cap_migsum, r->nmigsum + 1, sizeof(*m))) {
		err_set(e, -ENOMEM, "out of memory for results");
		return NULL;
	}
	m = &r->migsum[r->nmigsum++];
	memset(m, 0, sizeof(*m));
	m->mean = m->ci_lo = m->ci_hi = m->effect_pct = m->effect_lo_pct = m->effect_hi_pct = NAN;
	return m;
}

struct collapse_log *results_collapse_add(struct results *r, struct err *e)
{
	struct collapse_log *c;

	if (grow((void **)&r->collapses, &r->cap_collapses, r->ncollapses + 1, sizeof(*c))) {
		err_set(e, -ENOMEM, "out of memory for results");
		return NULL;
	}
	c = &r->collapses[r->ncollapses++];
	memset(c, 0, sizeof(*c));
	c->cov_before_pct = c->cov_after_pct = c->call_s = c->t50_s = c->t90_s = NAN;
	c->resident_huge_pct_after = NAN;
	c->interval_s = c->khp.cpu_s = NAN;
	c->probe.before_ns = c->probe.during_ns = c->probe.after_ns = c->probe.period_s = NAN;
	return c;
}

double results_recovery_ref_ns(const struct results *r, const struct collapse_log *c)
{
	size_t i;

	if (!c->has_probe)
		return NAN;
	for (i = 0; i < r->ncells; i++) {
		const struct cell *cl = &r->cells[i];
		const struct metric *m;

		if (strcmp(cl->target, "guest") || strcmp(cl->host_thp, c->host_thp) ||
		    strcmp(cl->guest_thp, c->probe.guest_thp) || strcmp(cl->workload, "memset") || cl->variant[0] ||
		    (cl->host_state[0] && strcmp(cl->host_state, "fresh")) || strcmp(cl->prefault, c->prefault))
			continue;
		m = cell_metric_find(cl, "access_ns");
		return m && m->s.n ? m->s.mean : NAN;
	}
	return NAN;
}

struct guest_cellstat *guest_cellstat(struct guest_log *g, const char *guest_thp, const char *workload)
{
	struct guest_cellstat *cs;
	size_t i;

	for (i = 0; i < g->ncs; i++)
		if (!strcmp(g->cs[i].guest_thp, guest_thp) && !strcmp(g->cs[i].workload, workload))
			return &g->cs[i];
	if (g->ncs >= GLOG_MAX_CELLS)
		return NULL;
	cs = &g->cs[g->ncs++];
	memset(cs, 0, sizeof(*cs));
	snprintf(cs->guest_thp, sizeof(cs->guest_thp), "%s", guest_thp);
	snprintf(cs->workload, sizeof(cs->workload), "%s", workload);
	return cs;
}

size_t metric_nall(const struct metric *m)
{
	return m->nall > m->n ? m->nall : m->n;
}

/* a new sample: every held sample is analysed again until validity leaves boots out anew */
int metric_add_boot(struct metric *m, double v, unsigned boot)
{
	size_t n = metric_nall(m);

	if (!isfinite(v) || boot > UINT16_MAX)
		return -EINVAL;
	if (n >= RES_MAX_SAMPLES)
		return -E2BIG;
	m->boot[n] = (uint16_t)boot;
	m->samples[n++] = v;
	m->n = m->nall = n;
	return 0;
}

int metric_add(struct metric *m, double v)
{
	return metric_add_boot(m, v, 0);
}

size_t metric_position_geomeans(const struct metric *m, double *out, size_t max)
{
	unsigned pos[RES_MAX_SAMPLES], cnt[RES_MAX_SAMPLES];
	size_t i, j, npos = 0;

	/* each sample's position: how many samples of its boot came before it */
	for (i = 0; i < m->n; i++) {
		pos[i] = 0;
		for (j = 0; j < i; j++)
			pos[i] += m->boot[j] == m->boot[i];
		if (pos[i] + 1 > npos)
			npos = pos[i] + 1;
	}
	if (npos > max)
		npos = max;
	for (j = 0; j < npos; j++) {
		out[j] = 0;
		cnt[j] = 0;
	}
	for (i = 0; i < m->n; i++) {
		if (pos[i] >= npos)
			continue;
		out[pos[i]] += m->samples[i] > 0 ? log(m->samples[i]) : NAN;
		cnt[pos[i]]++;
	}
	for (j = 0; j < npos; j++)
		out[j] = exp(out[j] / cnt[j]);
	return npos;
}

const struct metric *cell_metric_find(const struct cell *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nmetrics; i++)
		if (!strcmp(c->metrics[i].name, name))
			return &c->metrics[i];
	return NULL;
}

struct metric *cell_metric(struct cell *c, const char *name, struct err *e)
{
	struct metric *m;
	size_t i;

	for (i = 0; i < c->nmetrics; i++)
		if (!strcmp(c->metrics[i].name, name))
			return &c->metrics[i];
	if (c->nmetrics >= RES_MAX_METRICS || strlen(name) >= REC_KEY_MAX) {
		err_set(e, -E2BIG, "too many metrics in cell %s/%s/%s", c->host_thp, c->guest_thp, c->workload);
		return NULL;
	}
	m = &c->metrics[c->nmetrics++];
	memset(m, 0, sizeof(*m));
	strcpy(m->name, name);
	return m;
}

void cell_add_failure(struct cell *c, const char *reason)
{
	c->reps_failed++;
	if (c->nfailures < RES_MAX_FAILURES)
		snprintf(c->failures[c->nfailures++], sizeof(c->failures[0]), "%s", reason);
}

static bool thp_is_off(const char *setting)
{
	return !strcmp(setting, "never");
}

const struct wl_rule *cell_rule(const struct cell *c)
{
	return wltraits_rule(c->workload, c->variant);
}

void cell_take_evidence(struct cell *c, const struct record *rec, struct metric *cov, unsigned boot)
{
	const struct wl_rule *rule = cell_rule(c);
	const char *note;
	double v;

	if (rule->cov_field && rec_get_f64(rec, rule->cov_field, &v) == 0 && v >= 0 && v <= 100)
		metric_add_boot(cov, v, boot);
	if (rule->reason_field && !c->treatment_note[0] && (note = rec_get(rec, rule->reason_field)) && *note)
		snprintf(c->treatment_note, sizeof(c->treatment_note), "%s", note);
}

/* the range of m's samples of one boot into n/min/max; n = 0 when none */
static void boot_range(const struct metric *m, unsigned boot, size_t *n, double *min, double *max)
{
	size_t i;

	*n = 0;
	*min = *max = NAN;
	for (i = 0; m && i < m->n; i++) {
		if (m->boot[i] != boot)
			continue;
		if (*n == 0 || m->samples[i] < *min)
			*min = m->samples[i];
		if (*n == 0 || m->samples[i] > *max)
			*max = m->samples[i];
		(*n)++;
	}
}

static void field_range(const struct cell *c, const char *name, unsigned boot, size_t *n, double *min, double *max)
{
	boot_range(name ? cell_metric_find(c, name) : NULL, boot, n, min, max);
}

/* the workload's own evidence (lib/wltraits.h) in one boot on the layer that holds its memory */
static bool workload_valid(const struct cell *c, unsigned boot, const char *layer, const char *setting,
			   const struct metric *cov, double min_cov, double off_max, char *why, size_t len)
{
	const struct wl_rule *rule = cell_rule(c);
	struct wl_evidence ev;
	double unused;

	memset(&ev, 0, sizeof(ev));
	ev.layer = layer;
	ev.setting = setting;
	boot_range(cov, boot, &ev.ncov, &ev.cov_min, &ev.cov_max);
	field_range(c, rule->want_field, boot, &ev.nwant, &ev.want_min, &ev.want_max);
	field_range(c, rule->effect_field, boot, &ev.neffect, &ev.effect_min, &unused);
	ev.note = c->treatment_note;
	ev.min_cov = min_cov;
	ev.off_max = off_max;
	return wltraits_judge(rule, &ev, why, len);
}

/* one boot's treatment evidence: true when it holds, else false and why */
static bool boot_valid(const struct cell *c, unsigned boot, double min_cov, char *why, size_t len)
{
	const double off_max = 1.0;	/* % huge allowed where THP is "never" */
	size_t n;
	double min, max;

	if (!strcmp(c->target, "host"))	/* bare host: the workload's memory is host memory */
		return workload_valid(c, boot, "host", c->host_thp, &c->host_cov, min_cov, off_max, why, len);
	/* guests: QEMU's smaps of guest RAM is the host side's evidence */
	boot_range(&c->host_cov, boot, &n, &min, &max);
	if (n == 0) {
		snprintf(why, len, "no host coverage evidence (QEMU smaps could not be read)");
		return false;
	}
	if (thp_is_off(c->host_thp) && max > off_max) {
		snprintf(why, len, "host THP is never but %.1f%% of guest RAM is on host huge pages", max);
		return false;
	}
	if (!thp_is_off(c->host_thp) && min < min_cov && strcmp(c->host_state, "fragmented") &&
	    strcmp(c->host_state, "collapse-madvise") && strcmp(c->host_state, "collapse-khugepaged") &&
	    strcmp(c->host_state, "ksm")) {
		/* on a fragmented host low coverage is the outcome measured, not a failed treatment;
		 * a recovery arm's guests run on never, its setting goes in after them; KSM's
		 * merging splits the huge pages it measures */
		bool mthp = !strcmp(c->host_cov_source, "mthp_stats");

		snprintf(why, len, "host THP is %s but only %.1f%% of guest RAM is on host %s (need %.0f%%)",
			 c->host_thp, min, mthp ? "folios of that size (host-wide hugepages-<N>kB/stats estimate)" :
			 "huge pages", min_cov);
		return false;
	}
	return workload_valid(c, boot, "guest", c->guest_thp, &c->guest_cov, min_cov, off_max, why, len);
}

/* every held sample analysed again (validity decides anew) */
static void cell_restore(struct cell *c)
{
	size_t j;

	for (j = 0; j < c->nmetrics; j++)
		c->metrics[j].n = metric_nall(&c->metrics[j]);
	c->host_cov.n = metric_nall(&c->host_cov);
	c->guest_cov.n = metric_nall(&c->guest_cov);
}

/* the boots the cell's samples came from, in the order they first appear */
static size_t cell_boots(const struct cell *c, unsigned *out, size_t max)
{
	const struct metric *ms[RES_MAX_METRICS + 2];
	size_t nm = 0, nb = 0, j, i, k;

	for (j = 0; j < c->nmetrics; j++)
		ms[nm++] = &c->metrics[j];
	ms[nm++] = &c->host_cov;
	ms[nm++] = &c->guest_cov;
	for (j = 0; j < nm; j++)
		for (i = 0; i < ms[j]->n; i++) {
			for (k = 0; k < nb && out[k] != ms[j]->boot[i]; k++)
				;
			if (k == nb && nb < max)
				out[nb++] = ms[j]->boot[i];
		}
	return nb;
}

static bool left_out(const struct cell *c, unsigned boot)
{
	size_t k;

	for (k = 0; k < c->nleft; k++)
		if (c->left[k].boot == boot)
			return true;
	return false;
}

/* the samples of boots left out behind n, the others' order kept */
static void metric_leave_out(const struct cell *c, struct metric *m)
{
	double s[RES_MAX_SAMPLES];
	uint16_t b[RES_MAX_SAMPLES];
	size_t all = metric_nall(m), i, kept = 0, out = 0;

	for (i = 0; i < all; i++)
		if (!left_out(c, m->boot[i])) {
			m->samples[kept] = m->samples[i];
			m->boot[kept++] = m->boot[i];
		} else {
			s[out] = m->samples[i];
			b[out++] = m->boot[i];
		}
	memcpy(m->samples + kept, s, out * sizeof(s[0]));
	memcpy(m->boot + kept, b, out * sizeof(b[0]));
	m->n = kept;
	m->nall = all;
}

void cell_leave_out(struct cell *c)
{
	size_t j;

	if (!c->valid || c->nleft == 0)
		return;
	for (j = 0; j < c->nmetrics; j++)
		metric_leave_out(c, &c->metrics[j]);
	metric_leave_out(c, &c->host_cov);
	metric_leave_out(c, &c->guest_cov);
}

static void cell_validate(struct cell *c, double min_cov)
{
	unsigned boots[RES_MAX_SAMPLES];
	size_t nb, k, kept;
	char why[sizeof(c->left[0].reason)];

	cell_restore(c);
	c->valid = true;
	c->invalid_reason[0] = '\0';
	c->nleft = 0;
	nb = cell_boots(c, boots, RES_MAX_SAMPLES);
	c->boots_run = (unsigned)nb;
	if (c->reps_ok == 0) {
		c->valid = false;
		snprintf(c->invalid_reason, sizeof(c->invalid_reason), "no successful repetition%s%s",
			 c->nfailures ? ": " : "", c->nfailures ? c->failures[0] : "");
		return;
	}
	for (k = 0; k < nb; k++)
		if (!boot_valid(c, boots[k], min_cov, why, sizeof(why)) && c->nleft < RES_MAX_LEFT_OUT) {
			c->left[c->nleft].boot = boots[k];
			snprintf(c->left[c->nleft++].reason, sizeof(c->left[0].reason), "%s", why);
		}
	if (nb == 0) {	/* repetitions but no sample: judged on no boot's evidence */
		c->valid = boot_valid(c, 0, min_cov, why, sizeof(why));
		if (!c->valid)
			snprintf(c->invalid_reason, sizeof(c->invalid_reason), "%s", why);
		return;
	}
	kept = nb - c->nleft;
	if (kept == 0 || (kept < 2 && c->nleft > 0)) {
		c->valid = false;
		if (nb == 1)
			snprintf(c->invalid_reason, sizeof(c->invalid_reason), "%s", c->left[0].reason);
		else if (kept == 0)
			snprintf(c->invalid_reason, sizeof(c->invalid_reason), "every boot left out (%zu), the first "
				 "because %.190s", nb, c->left[0].reason);
		else
			snprintf(c->invalid_reason, sizeof(c->invalid_reason), "%zu of %zu boots left out, %zu valid "
				 "(2 needed): %.170s", c->nleft, nb, kept, c->left[0].reason);
		return;
	}
	cell_leave_out(c);
}

void cell_summarize(struct cell *c)
{
	size_t j;

	for (j = 0; j < c->nmetrics; j++)
		summarize_geo(c->metrics[j].samples, c->metrics[j].boot, c->metrics[j].n, &c->metrics[j].s);
	summarize(c->host_cov.samples, c->host_cov.n, &c->host_cov.s);
	summarize(c->guest_cov.samples, c->guest_cov.n, &c->guest_cov.s);
}

void results_finish(struct results *r, double min_cov_pct)
{
	size_t i;

	for (i = 0; i < r->ncells; i++) {
		cell_validate(&r->cells[i], min_cov_pct);
		cell_summarize(&r->cells[i]);
	}
}

bool results_any_rep_ok(const struct results *r, char *why, size_t len)
{
	size_t i;

	for (i = 0; i < r->ncells; i++)
		if (r->cells[i].reps_ok)
			return true;
	for (i = 0; i < r->nguests; i++)
		if (strcmp(r->guests[i].status, "ok") && r->guests[i].error[0]) {
			const struct guest_log *g = &r->guests[i];

			if (strstr(g->error, g->name))	/* it names the guest already */
				snprintf(why, len, "%s", g->error);
			else
				snprintf(why, len, "guest %s: %s", g->name, g->error);
			return false;
		}
	for (i = 0; i < r->ncells; i++)
		if (r->cells[i].nfailures) {
			snprintf(why, len, "%s", r->cells[i].failures[0]);
			return false;
		}
	snprintf(why, len, "no cell ran");
	return false;
}
