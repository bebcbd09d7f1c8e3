#include "orchestrator/model/results.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/procfs.h"
#include "lib/fstree.h"
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
	free(r->frags);
	r->frags = NULL;
	r->nfrags = r->cap_frags = 0;
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
	struct cell *c;
	size_t i;

	for (i = 0; i < r->ncells; i++) {
		c = &r->cells[i];
		if (!strcmp(c->target, k->target) && !strcmp(c->host_thp, k->host_thp) &&
		    !strcmp(c->prefault, prefault) && !strcmp(c->guest_thp, k->guest_thp) &&
		    !strcmp(c->workload, k->workload) && !strcmp(c->variant, variant) &&
		    !strcmp(c->host_state, hstate))
			return c;
	}
	if (strlen(hstate) >= sizeof(c->host_state)) {
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
	strcpy(c->host_cov_source, "smaps");
	strcpy(c->host_cov.name, "host_huge_pct");
	strcpy(c->guest_cov.name, "guest_huge_pct");
	c->valid = true;
	return c;
}

struct cell *results_cell(struct results *r, const char *target, const char *host_thp,
			  const char *guest_thp, const char *workload, struct err *e)
{
	struct cell_key k = { target, host_thp, NULL, guest_thp, workload, NULL, NULL };

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

int metric_add_boot(struct metric *m, double v, unsigned boot)
{
	if (!isfinite(v) || boot > UINT16_MAX)
		return -EINVAL;
	if (m->n >= RES_MAX_SAMPLES)
		return -E2BIG;
	m->boot[m->n] = (uint16_t)boot;
	m->samples[m->n++] = v;
	return 0;
}

int metric_add(struct metric *m, double v)
{
	return metric_add_boot(m, v, 0);
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

/* the summary of one of the cell's metrics into n/min/max; n = 0 when absent */
static void field_range(const struct cell *c, const char *name, size_t *n, double *min, double *max)
{
	const struct metric *m = name ? cell_metric_find(c, name) : NULL;

	*n = m ? m->s.n : 0;
	*min = m ? m->s.min : NAN;
	*max = m ? m->s.max : NAN;
}

/* the workload's own evidence (lib/wltraits.h) on the layer that holds its memory */
static bool workload_valid(struct cell *c, const char *layer, const char *setting, const struct metric *cov,
			   double min_cov, double off_max)
{
	const struct wl_rule *rule = cell_rule(c);
	struct wl_evidence ev;
	double unused;

	memset(&ev, 0, sizeof(ev));
	ev.layer = layer;
	ev.setting = setting;
	ev.ncov = cov->s.n;
	ev.cov_min = cov->s.min;
	ev.cov_max = cov->s.max;
	field_range(c, rule->want_field, &ev.nwant, &ev.want_min, &ev.want_max);
	field_range(c, rule->effect_field, &ev.neffect, &ev.effect_min, &unused);
	ev.note = c->treatment_note;
	ev.min_cov = min_cov;
	ev.off_max = off_max;
	return wltraits_judge(rule, &ev, c->invalid_reason, sizeof(c->invalid_reason));
}

static void cell_validate(struct cell *c, double min_cov)
{
	const double off_max = 1.0;	/* % huge allowed where THP is "never" */

	c->valid = true;
	c->invalid_reason[0] = '\0';
	if (c->reps_ok == 0) {
		c->valid = false;
		snprintf(c->invalid_reason, sizeof(c->invalid_reason), "no successful repetition%s%s",
			 c->nfailures ? ": " : "", c->nfailures ? c->failures[0] : "");
		return;
	}
	if (!strcmp(c->target, "host")) {
		/* bare host: the workload's memory is host memory, its coverage in host_cov */
		c->valid = workload_valid(c, "host", c->host_thp, &c->host_cov, min_cov, off_max);
		return;
	}
	/* guests: QEMU's smaps of guest RAM is the host side's evidence */
	if (c->host_cov.n == 0) {
		c->valid = false;
		snprintf(c->invalid_reason, sizeof(c->invalid_reason),
			 "no host coverage evidence (QEMU smaps could not be read)");
	} else if (thp_is_off(c->host_thp) && c->host_cov.s.max > off_max) {
		c->valid = false;
		snprintf(c->invalid_reason, sizeof(c->invalid_reason),
			 "host THP is never but %.1f%% of guest RAM is on host huge pages", c->host_cov.s.max);
	} else if (!thp_is_off(c->host_thp) && c->host_cov.s.min < min_cov && strcmp(c->host_state, "fragmented")) {
		/* on a fragmented host low coverage is the outcome measured, not a failed treatment */
		bool mthp = !strcmp(c->host_cov_source, "mthp_stats");

		c->valid = false;
		snprintf(c->invalid_reason, sizeof(c->invalid_reason),
			 "host THP is %s but only %.1f%% of guest RAM is on host %s (need %.0f%%)", c->host_thp,
			 c->host_cov.s.min,
			 mthp ? "folios of that size (host-wide hugepages-<N>kB/stats estimate)" : "huge pages", min_cov);
	} else {
		c->valid = workload_valid(c, "guest", c->guest_thp, &c->guest_cov, min_cov, off_max);
	}
}

void cell_summarize(struct cell *c)
{
	size_t j;

	for (j = 0; j < c->nmetrics; j++)
		summarize_blocked(c->metrics[j].samples, c->metrics[j].boot, c->metrics[j].n, &c->metrics[j].s);
	summarize(c->host_cov.samples, c->host_cov.n, &c->host_cov.s);
	summarize(c->guest_cov.samples, c->guest_cov.n, &c->guest_cov.s);
}

void results_finish(struct results *r, double min_cov_pct)
{
	size_t i;

	for (i = 0; i < r->ncells; i++) {
		cell_summarize(&r->cells[i]);
		cell_validate(&r->cells[i], min_cov_pct);
	}
}

/* ---- JSON ------------------------------------------------------------------ */

static json_object *jnum(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;	/* NULL = JSON null */
}

static json_object *jstr(const char *s)
{
	return json_object_new_string(s ? s : "");
}

static json_object *j_metric(const struct metric *m)
{
	json_object *o = json_object_new_object();
	json_object *arr = json_object_new_array();
	size_t i;

	json_object *boots = json_object_new_array();

	for (i = 0; i < m->n; i++) {
		json_object_array_add(arr, jnum(m->samples[i]));
		json_object_array_add(boots, json_object_new_int(m->boot[i]));
	}
	json_object_object_add(o, "samples", arr);
	json_object_object_add(o, "boot", boots);
	json_object_object_add(o, "n", json_object_new_int64((int64_t)m->s.n));
	json_object_object_add(o, "mean", jnum(m->s.mean));
	json_object_object_add(o, "sd", jnum(m->s.sd));
	json_object_object_add(o, "cv_pct", jnum(m->s.cv_pct));
	json_object_object_add(o, "ci95_low", jnum(m->s.ci95_low));
	json_object_object_add(o, "ci95_high", jnum(m->s.ci95_high));
	json_object_object_add(o, "ci_over", isfinite(m->s.ci95_high) ?
				jstr(m->s.ci_blocks ? "boots" : "repetitions") : NULL);
	json_object_object_add(o, "ci_n", json_object_new_int64((int64_t)m->s.ci_n));
	return o;
}

static json_object *j_thp(const struct thp_settings *s)
{
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < s->n; i++)
		json_object_object_add(o, s->s[i].key, jstr(s->s[i].value));
	return o;
}

static json_object *j_cell(const struct cell *c)
{
	json_object *o = json_object_new_object();
	json_object *metrics = json_object_new_object();
	json_object *cov = json_object_new_object();
	json_object *fails = json_object_new_array();
	size_t i;

	json_object_object_add(o, "target", jstr(c->target));
	json_object_object_add(o, "host_thp", jstr(c->host_thp));
	json_object_object_add(o, "host_prefault", jstr(c->prefault));
	json_object_object_add(o, "guest_thp", jstr(c->guest_thp));
	json_object_object_add(o, "workload", jstr(c->workload));
	json_object_object_add(o, "variant", c->variant[0] ? jstr(c->variant) : NULL);
	json_object_object_add(o, "guest", jstr(c->guest));
	json_object_object_add(o, "host_state", jstr(c->host_state[0] ? c->host_state : "fresh"));
	for (i = 0; i < c->nmetrics; i++)
		json_object_object_add(metrics, c->metrics[i].name, j_metric(&c->metrics[i]));
	json_object_object_add(o, "metrics", metrics);
	json_object_object_add(cov, "host_huge_pct", jnum(c->host_cov.s.mean));
	json_object_object_add(cov, "guest_huge_pct", jnum(c->guest_cov.s.mean));
	json_object_object_add(cov, "host_huge_pct_samples", j_metric(&c->host_cov));
	json_object_object_add(cov, "guest_huge_pct_samples", j_metric(&c->guest_cov));
	json_object_object_add(cov, "host_source", jstr(c->host_cov_source[0] ? c->host_cov_source : "smaps"));
	{
		const struct wl_rule *rule = cell_rule(c);

		/* what decided validity: the workload's coverage field (or effect field) and its rule */
		json_object_object_add(cov, "evidence", rule->cov_field ? jstr(rule->cov_field) :
							rule->effect_field ? jstr(rule->effect_field) : NULL);
		json_object_object_add(cov, "rule", jstr(wl_want_name(rule->want)));
	}
	json_object_object_add(o, "coverage", cov);
	json_object_object_add(o, "reps_ok", json_object_new_int64(c->reps_ok));
	json_object_object_add(o, "reps_failed", json_object_new_int64(c->reps_failed));
	json_object_object_add(o, "warmups", json_object_new_int64(c->warmups));
	for (i = 0; i < c->nfailures; i++)
		json_object_array_add(fails, jstr(c->failures[i]));
	json_object_object_add(o, "failures", fails);
	json_object_object_add(o, "valid", json_object_new_boolean(c->valid));
	json_object_object_add(o, "invalid_reason", c->valid ? NULL : jstr(c->invalid_reason));
	json_object_object_add(o, "treatment_note", c->treatment_note[0] ? jstr(c->treatment_note) : NULL);
	return o;
}

static json_object *j_guest(const struct guest_log *g)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "name", jstr(g->name));
	json_object_object_add(o, "host_thp", jstr(g->host_thp));
	json_object_object_add(o, "host_prefault", jstr(g->prefault));
	json_object_object_add(o, "round", json_object_new_int64(g->round));
	json_object_object_add(o, "status", jstr(g->status));
	json_object_object_add(o, "error", g->error[0] ? jstr(g->error) : NULL);
	json_object_object_add(o, "domain_xml", jstr(g->xml_path));
	json_object_object_add(o, "console_log", jstr(g->console_path));
	json_object_object_add(o, "guest_kernel", jstr(g->guest_kernel));
	json_object_object_add(o, "create_to_first_record_s", jnum(g->create_to_first_record_s));
	json_object_object_add(o, "teardown_s", jnum(g->teardown_s));
	json_object_object_add(o, "total_s", jnum(g->total_s));
	json_object_object_add(o, "records", json_object_new_int64(g->records));
	json_object_object_add(o, "rejected_lines", json_object_new_int64(g->rejected));
	json_object_object_add(o, "host_state", jstr(g->host_state[0] ? g->host_state : "fresh"));
	json_object_object_add(o, "index", json_object_new_int64(g->index));
	json_object_object_add(o, "concurrency", json_object_new_int64(g->concurrency ? g->concurrency : 1));
	json_object_object_add(o, "guest_mthp_sizes_kb", g->mthp_sizes_kb[0] ? jstr(g->mthp_sizes_kb) : NULL);
	{
		json_object *a = json_object_new_array();
		size_t i;

		for (i = 0; i < g->ncs; i++) {
			const struct guest_cellstat *cs = &g->cs[i];
			json_object *c = json_object_new_object();

			json_object_object_add(c, "guest_thp", jstr(cs->guest_thp));
			json_object_object_add(c, "workload", jstr(cs->workload));
			json_object_object_add(c, "reps", json_object_new_int64(cs->reps));
			json_object_object_add(c, "host_huge_pct", jnum(cs->ncov ? cs->cov_sum / cs->ncov : NAN));
			json_object_object_add(c, "fault_ns_per_4k", jnum(cs->nfault ? cs->fault_sum / cs->nfault : NAN));
			json_object_object_add(c, "access_ns", jnum(cs->naccess ? cs->access_sum / cs->naccess : NAN));
			json_object_array_add(a, c);
		}
		json_object_object_add(o, "cells", a);
	}
	return o;
}

static json_object *j_u64s(const unsigned long long *v, unsigned n)
{
	json_object *a = json_object_new_array();
	unsigned i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_int64((int64_t)v[i]));
	return a;
}

static json_object *j_frag(const struct frag_log *f)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "host_thp", jstr(f->host_thp));
	json_object_object_add(o, "host_prefault", jstr(f->prefault));
	json_object_object_add(o, "round", json_object_new_int64(f->round));
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)f->bytes));
	json_object_object_add(o, "huge_kb", json_object_new_int64((int64_t)f->huge_kb));
	json_object_object_add(o, "held_kb", json_object_new_int64((int64_t)f->held_kb));
	json_object_object_add(o, "seconds", jnum(f->seconds));
	json_object_object_add(o, "stopped", f->stopped[0] ? jstr(f->stopped) : NULL);
	json_object_object_add(o, "free_2m_kb_before", json_object_new_int64((int64_t)f->free2m_before_kb));
	json_object_object_add(o, "free_2m_kb_after", json_object_new_int64((int64_t)f->free2m_after_kb));
	json_object_object_add(o, "free_2m_kb_undone",
			       f->have_undone ? json_object_new_int64((int64_t)f->free2m_undone_kb) : NULL);
	json_object_object_add(o, "unusable_2m_pct_before", jnum(buddy_unusable_pct(f->buddy_before, f->orders, 9)));
	json_object_object_add(o, "unusable_2m_pct_after", jnum(buddy_unusable_pct(f->buddy_after, f->orders, 9)));
	json_object_object_add(o, "unusable_2m_pct_undone",
			       f->have_undone ? jnum(buddy_unusable_pct(f->buddy_undone, f->orders, 9)) : NULL);
	json_object_object_add(o, "mem_available_kb_before", json_object_new_int64((int64_t)f->avail_before_kb));
	json_object_object_add(o, "mem_available_kb_undone",
			       f->have_undone ? json_object_new_int64((int64_t)f->avail_undone_kb) : NULL);
	json_object_object_add(o, "buddyinfo_before", j_u64s(f->buddy_before, f->orders));
	json_object_object_add(o, "buddyinfo_after", j_u64s(f->buddy_after, f->orders));
	json_object_object_add(o, "buddyinfo_undone", f->have_undone ? j_u64s(f->buddy_undone, f->orders) : NULL);
	json_object_object_add(o, "restored", json_object_new_boolean(f->restored));
	json_object_object_add(o, "compact_memory_needed", json_object_new_boolean(f->compacted));
	json_object_object_add(o, "pcp_low_fragmenting", json_object_new_boolean(f->pcp_low));
	json_object_object_add(o, "pcp_drained", json_object_new_boolean(f->pcp_drained));
	json_object_object_add(o, "compact_migrate_scanned_undo", json_object_new_int64((int64_t)f->compact_scanned));
	json_object_object_add(o, "compaction_proactiveness_before",
			       f->proactiveness[0] ? json_object_new_int64(strtoll(f->proactiveness, NULL, 10)) : NULL);
	json_object_object_add(o, "compact_migrate_scanned_fragmenting",
			       json_object_new_int64((int64_t)f->frag_compact_scanned));
	json_object_object_add(o, "compact_stall", json_object_new_int64((int64_t)f->compact_stall));
	json_object_object_add(o, "compact_success", json_object_new_int64((int64_t)f->compact_success));
	json_object_object_add(o, "compact_fail", json_object_new_int64((int64_t)f->compact_fail));
	json_object_object_add(o, "thp_fault_alloc", json_object_new_int64((int64_t)f->thp_fault_alloc));
	json_object_object_add(o, "thp_fault_fallback", json_object_new_int64((int64_t)f->thp_fault_fallback));
	json_object_object_add(o, "compact_migrate_scanned", json_object_new_int64((int64_t)f->compact_scanned_guests));
	json_object_object_add(o, "pgmigrate_success", json_object_new_int64((int64_t)f->pgmigrate_success));
	json_object_object_add(o, "pgsteal_direct", json_object_new_int64((int64_t)f->pgsteal_direct));
	json_object_object_add(o, "error", f->error[0] ? jstr(f->error) : NULL);
	return o;
}

static json_object *j_effect(const struct effect *e)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "workload", jstr(e->workload));
	json_object_object_add(o, "side", jstr(e->side));
	json_object_object_add(o, "component", jstr(e->component));
	json_object_object_add(o, "metric", jstr(e->metric));
	json_object_object_add(o, "host_thp", jstr(e->host_thp));
	json_object_object_add(o, "guest_thp", jstr(e->guest_thp));
	json_object_object_add(o, "host_state", jstr(e->host_state[0] ? e->host_state : "fresh"));
	json_object_object_add(o, "available", json_object_new_boolean(e->available));
	json_object_object_add(o, "estimate_pct", jnum(e->estimate_pct));
	json_object_object_add(o, "ci95_low_pct", jnum(e->ci95_low_pct));
	json_object_object_add(o, "ci95_high_pct", jnum(e->ci95_high_pct));
	json_object_object_add(o, "significant", json_object_new_boolean(e->available && e->significant));
	json_object_object_add(o, "share_of_total_pct", jnum(e->share_pct));
	json_object_object_add(o, "df", jnum(e->df));
	json_object_object_add(o, "method", jstr(e->method));
	json_object_object_add(o, "at_guest", e->at_guest[0] ? jstr(e->at_guest) : NULL);
	json_object_object_add(o, "log_estimate", jnum(e->log_est));
	json_object_object_add(o, "log_se", jnum(e->log_se));
	json_object_object_add(o, "boots_min", json_object_new_int((int)e->boots_min));
	json_object_object_add(o, "note", e->note[0] ? jstr(e->note) : NULL);
	return o;
}

static json_object *j_variance(const struct effect_var *v)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "workload", jstr(v->workload));
	json_object_object_add(o, "cell", jstr(v->label));
	json_object_object_add(o, "metric", jstr(v->metric));
	json_object_object_add(o, "boots", json_object_new_int64((int64_t)v->vc.boots));
	json_object_object_add(o, "samples", json_object_new_int64((int64_t)v->vc.samples));
	json_object_object_add(o, "within_boot_cv_pct", jnum(v->vc.within_cv_pct));
	json_object_object_add(o, "between_boot_cv_pct", jnum(v->vc.between_cv_pct));
	return o;
}

static json_object *j_results(const struct results *r)
{
	const struct run_settings *s = &r->settings;
	json_object *o = json_object_new_object();
	json_object *host = json_object_new_object();
	json_object *set = json_object_new_object();
	json_object *cells = json_object_new_array();
	json_object *guests = json_object_new_array();
	size_t i;

	json_object_object_add(o, "schema_version", json_object_new_int(RESULTS_SCHEMA_VERSION));
	json_object_object_add(o, "thpeval_version", jstr(r->thpeval_version));
	json_object_object_add(o, "status", jstr(r->status));
	json_object_object_add(o, "error", r->error[0] ? jstr(r->error) : NULL);
	json_object_object_add(o, "started_unix", json_object_new_int64((int64_t)r->started));
	json_object_object_add(o, "finished_unix", r->finished ? json_object_new_int64((int64_t)r->finished) : NULL);
	json_object_object_add(o, "accel", jstr(r->accel));
	json_object_object_add(o, "accel_reason", jstr(r->accel_reason));
	json_object_object_add(host, "kernel", jstr(r->host.kernel));
	json_object_object_add(host, "cpu_model", jstr(r->host.cpu_model));
	json_object_object_add(host, "cpus", json_object_new_int64(r->host.cpus));
	json_object_object_add(host, "mem_total_kb", json_object_new_int64((int64_t)r->host.mem_total_kb));
	json_object_object_add(host, "libvirt_version", jstr(r->libvirt_version));
	json_object_object_add(host, "hypervisor_version", jstr(r->hypervisor_version));
	json_object_object_add(host, "thp_before", j_thp(&r->thp_before));
	json_object_object_add(host, "thp_after", r->have_thp_after ? j_thp(&r->thp_after) : NULL);
	json_object_object_add(o, "host", host);
	json_object_object_add(o, "image_id", jstr(r->image_id));
	{
		json_object *t = json_object_new_object();

		json_object_object_add(t, "host_qemu_minflt", jstr("per repetition, fault and access phase together"));
		json_object_object_add(t, "host_vmstat", jstr("host-wide thp_* and compact_* deltas per repetition"));
		json_object_object_add(t, "guest_rusage", jstr("per phase, from the workload"));
		json_object_object_add(t, "guest_vmstat", jstr("memset: guest-wide pgfault and thp_* deltas per phase "
							      "(fault_vm_*, access_vm_*); kcompile: over the build (vm_*)"));
		json_object_object_add(t, "guest_first_touch", jstr("memset: share of 2M blocks whose first touch "
								   "got a huge page (mincore probe, first_touch_huge_pct)"));
		json_object_object_add(t, "kvm_stats", jstr(r->kvm_stats_note));
		json_object_object_add(t, "hardware_counters", jstr(r->pmu_note));
		json_object_object_add(o, "telemetry", t);
	}
	json_object_object_add(set, "uri", jstr(s->uri));
	json_object_object_add(set, "host_thp", jstr(s->host_thp_list));
	json_object_object_add(set, "guest_thp", jstr(s->guest_thp_list));
	json_object_object_add(set, "workloads", jstr(s->workloads));
	if (s->kcompile[0]) {
		json_object_object_add(set, "kcompile", jstr(s->kcompile));
		json_object_object_add(set, "kcompile_source", jstr(s->srcdisk_id));
	}
	json_object_object_add(set, "host_prefault", jstr(s->prefault_list));
	json_object_object_add(set, "host_backing", jstr(s->backing[0] ? s->backing : "anonymous"));
	json_object_object_add(set, "reps", json_object_new_int64(s->reps));
	json_object_object_add(set, "rounds", json_object_new_int64(s->rounds));
	json_object_object_add(set, "boots", json_object_new_int64(s->boots));
	json_object_object_add(set, "pin", jstr(s->pin));
	json_object_object_add(set, "group_order", jstr(s->group_order));
	json_object_object_add(set, "target_ci_host_pct", s->target_ci_host > 0 ? jnum(s->target_ci_host) : NULL);
	json_object_object_add(set, "target_ci_guest_pct", s->target_ci_guest > 0 ? jnum(s->target_ci_guest) : NULL);
	json_object_object_add(set, "budget_s", s->budget_s > 0 ? jnum(s->budget_s) : NULL);
	json_object_object_add(set, "rounds_stopped", s->stopped[0] ? jstr(s->stopped) : NULL);
	json_object_object_add(set, "warmup", json_object_new_int64(s->warmup));
	json_object_object_add(set, "cold_reps", json_object_new_int64(s->cold_reps));
	json_object_object_add(set, "vcpus", json_object_new_int64(s->vcpus));
	json_object_object_add(set, "memory_bytes", json_object_new_int64((int64_t)s->memory_bytes));
	json_object_object_add(set, "size_bytes", json_object_new_int64((int64_t)s->size_bytes));
	json_object_object_add(set, "accesses", json_object_new_int64((int64_t)s->accesses));
	json_object_object_add(set, "seed", json_object_new_int64((int64_t)s->seed));
	json_object_object_add(set, "min_coverage_pct", jnum(s->min_coverage_pct));
	json_object_object_add(set, "guests", json_object_new_int64(s->guests ? s->guests : 1));
	json_object_object_add(set, "host_state", jstr(s->host_state_list[0] ? s->host_state_list : "fresh"));
	json_object_object_add(set, "mthp_sweep", json_object_new_boolean(s->mthp_sweep));
	json_object_object_add(set, "guest_mthp", s->guest_mthp[0] ? jstr(s->guest_mthp) : NULL);
	json_object_object_add(o, "settings", set);
	for (i = 0; i < r->ncells; i++)
		json_object_array_add(cells, j_cell(&r->cells[i]));
	json_object_object_add(o, "cells", cells);
	for (i = 0; i < r->nguests; i++)
		json_object_array_add(guests, j_guest(&r->guests[i]));
	json_object_object_add(o, "guests", guests);
	{
		json_object *fr = json_object_new_array();

		for (i = 0; i < r->nfrags; i++)
			json_object_array_add(fr, j_frag(&r->frags[i]));
		json_object_object_add(o, "fragmentation", fr);
	}
	{
		json_object *fx = json_object_new_array();

		for (i = 0; r->effects && i < r->effects->n; i++)
			json_object_array_add(fx, j_effect(&r->effects->e[i]));
		json_object_object_add(o, "effects", fx);
		fx = json_object_new_array();
		for (i = 0; r->effects && i < r->effects->nvar; i++)
			json_object_array_add(fx, j_variance(&r->effects->var[i]));
		json_object_object_add(o, "variance", fx);
	}
	return o;
}

int results_write_json(const struct results *r, const char *path, struct err *e)
{
	json_object *o = j_results(r);
	const char *txt;
	size_t len;
	int rc;

	txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	if (!txt) {
		json_object_put(o);
		return err_set(e, -ENOMEM, "cannot serialise results");
	}
	len = strlen(txt);
	{
		char *buf = malloc(len + 2);

		if (!buf) {
			json_object_put(o);
			return err_set(e, -ENOMEM, "out of memory");
		}
		memcpy(buf, txt, len);
		buf[len] = '\n';
		rc = write_file_atomic(path, buf, len + 1, 0644, e);
		free(buf);
	}
	json_object_put(o);
	return rc;
}

