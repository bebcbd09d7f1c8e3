#include "orchestrator/model/results_json.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/procfs.h"
#include "lib/fstree.h"
#include "lib/wltraits.h"

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

int results_to_json_text(const struct results *r, char **text, size_t *len, struct err *e)
{
	json_object *o = j_results(r);
	const char *txt = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE);
	size_t n;

	*text = NULL;
	*len = 0;
	if (!txt) {
		json_object_put(o);
		return err_set(e, -ENOMEM, "cannot serialise results");
	}
	n = strlen(txt);
	*text = malloc(n + 2);
	if (!*text) {
		json_object_put(o);
		return err_set(e, -ENOMEM, "out of memory");
	}
	memcpy(*text, txt, n);
	(*text)[n] = '\n';
	(*text)[n + 1] = '\0';
	*len = n + 1;
	json_object_put(o);
	return 0;
}

int results_write_json(const struct results *r, const char *path, struct err *e)
{
	char *text;
	size_t len;
	int rc;

	if (results_to_json_text(r, &text, &len, e))
		return e->code;
	rc = write_file_atomic(path, text, len, 0644, e);
	free(text);
	return rc;
}
