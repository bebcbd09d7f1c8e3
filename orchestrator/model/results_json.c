#include "orchestrator/model/results_json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/procfs.h"
#include "lib/fstree.h"
#include "lib/record.h"
#include "lib/wltraits.h"
#include "orchestrator/model/balloon.h"
#include "orchestrator/model/results_json_cell.h"
#include "orchestrator/model/results_json_effects.h"
#include "orchestrator/model/results_json_logs.h"

/*
 * The tables below, and those of results_json_cell, _logs and _effects, are
 * results.json: each line one key, in the order it is written. A key added
 * after schema 1 was first written is JT_OPT (older files lack it); JT_WNULL,
 * JT_WDEF, JT_IF and JT_IFSET say when a value is written as null, as its
 * default, or not at all.
 */

/* ---- the document --------------------------------------------------------------------- */

static json_object *w_schema(const void *base, const struct jt_field *f)
{
	(void)base;
	(void)f;
	return json_object_new_int(RESULTS_SCHEMA_VERSION);
}

static int l_schema(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	(void)base;
	(void)f;
	if (!json_object_is_type(v, json_type_int))
		return jt_bad_type(c, at, "an integer", v);
	if (json_object_get_int64(v) != RESULTS_SCHEMA_VERSION)
		return err_set(c->e, -EPROTO, "unknown schema version %lld in '%s': this thpeval reads version %d",
			       (long long)json_object_get_int64(v), c->name, RESULTS_SCHEMA_VERSION);
	return 0;
}

/* host THP settings: {"enabled": "madvise", "khugepaged/defrag": "1", ...} */
static json_object *w_thp(const void *base, const struct jt_field *f)
{
	const struct thp_settings *s = (const void *)((const char *)base + f->off);
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < s->n; i++)
		json_object_object_add(o, s->s[i].key, jt_str(s->s[i].value));
	return o;
}

static int l_thp(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f)
{
	struct thp_settings *s = (void *)((char *)base + f->off);
	char k[JT_PATH_MAX], val[THP_VAL_MAX];

	if (!json_object_is_type(v, json_type_object))
		return jt_bad_type(c, at, f->flags & JT_NULL ? "an object or null" : "an object", v);
	s->n = 0;
	json_object_object_foreach(v, key, x) {
		jt_path(k, sizeof(k), at, key);
		if (jt_get_str(c, x, k, false, val, sizeof(val)))
			return -EINVAL;
		if (thp_settings_put(s, key, val, c->e))
			return err_wrap(c->e, "'%s': %s", c->name, k);
	}
	return 0;
}

#define RS(k, kind, m, ...) JT_F(k, kind, struct results, m, __VA_ARGS__)
static const struct jt_field host_fields[] = {
	{ RS("name", JT_STR, host.name, JT_OPT) },	/* the host in a history of many; older files: "" */
	{ RS("kernel", JT_STR, host.kernel, 0) },
	{ RS("cpu_model", JT_STR, host.cpu_model, 0) },
	{ RS("cpus", JT_INT, host.cpus, 0) },
	{ RS("mem_total_kb", JT_INT, host.mem_total_kb, 0) },
	/* the host is itself a guest, reporting free memory to its hypervisor: host-cold
	 * first touches may fault there too (measured since schema 1; absent when not) */
	{ RS("virtualized", JT_BOOL, host.virtualized, JT_OPT | JT_KEYIF, .cond = offsetof(struct results, host.have_virt)) },
	{ RS("free_page_reporting", JT_BOOL, host.reporting, JT_OPT | JT_KEYIF,
	     .cond = offsetof(struct results, host.have_nested)) },
	{ RS("free_page_reporting_order", JT_INT, host.reporting_order, JT_OPT | JT_KEYIF,
	     .cond = offsetof(struct results, host.have_order)) },
	{ RS("libvirt_version", JT_STR, libvirt_version, 0) },
	{ RS("hypervisor_version", JT_STR, hypervisor_version, 0) },
	{ RS("thp_before", JT_CUSTOM, thp_before, 0, .write = w_thp, .load = l_thp) },
	{ RS("thp_after", JT_CUSTOM, thp_after, JT_NULL | JT_IF, .cond = offsetof(struct results, have_thp_after),
	  .write = w_thp, .load = l_thp) },
};
static const struct jt_table host_jt = JT_TABLE(struct results, host_fields);

/* what telemetry was collected: fixed text, and the run's notes on KVM stats and the PMU */
#define TEXT(k, text) .key = (k), .kind = JT_CONST, .flags = JT_OPT, .def = (text)
static const struct jt_field telemetry_fields[] = {
	{ TEXT("host_qemu_minflt", "per repetition, fault and access phase together") },
	{ TEXT("host_vmstat", "host-wide thp_* and compact_* deltas per repetition") },
	{ TEXT("guest_rusage", "per phase, from the workload") },
	{ TEXT("guest_vmstat", "memset: guest-wide pgfault and thp_* deltas per phase (fault_vm_*, access_vm_*); "
	       "kcompile: over the build (vm_*)") },
	{ TEXT("guest_first_touch", "memset: share of 2M blocks whose first touch got a huge page (mincore probe, "
	       "first_touch_huge_pct)") },
	{ RS("kvm_stats", JT_STR, kvm_stats_note, JT_OPT | JT_NULL) },
	{ RS("hardware_counters", JT_STR, pmu_note, JT_OPT | JT_NULL) },
};
static const struct jt_table telemetry_jt = JT_TABLE(struct results, telemetry_fields);

#define NC(k, kind, m, ...) JT_F(k, kind, struct not_chased, m, __VA_ARGS__)
static const struct jt_field not_chased_fields[] = {
	{ NC("effect", JT_STR, effect, 0) },
	{ NC("target_pct", JT_DOUBLE, target_pct, 0) },
	{ NC("boots_needed", JT_INT, boots_needed, 0) },
	{ NC("boots_allowed", JT_INT, boots_allowed, 0) },
};
static const struct jt_table not_chased_jt = JT_TABLE(struct not_chased, not_chased_fields);

#define ST(k, kind, m, ...) JT_F(k, kind, struct run_settings, m, __VA_ARGS__)
#define KCOMPILE JT_IFSET, .cond = offsetof(struct run_settings, kcompile)
static const struct jt_field settings_fields[] = {
	{ ST("uri", JT_STR, uri, 0) },
	{ ST("host_thp", JT_STR, host_thp_list, 0) },
	{ ST("guest_thp", JT_STR, guest_thp_list, 0) },
	{ ST("workloads", JT_STR, workloads, 0) },
	{ ST("kcompile", JT_STR, kcompile, JT_OPT | JT_NULL | KCOMPILE) },
	{ ST("kcompile_source", JT_STR, srcdisk_id, JT_OPT | JT_NULL | KCOMPILE) },
	{ ST("host_prefault", JT_STR, prefault_list, JT_OPT | JT_NULL) },
	{ ST("host_backing", JT_STR, backing, JT_OPT | JT_NULL | JT_WDEF, .def = "anonymous") },
	{ ST("reps", JT_INT, reps, JT_RANGE, .lo = RUN_REPS_MIN, .hi = RUN_REPS_MAX) },
	{ ST("rounds", JT_INT, rounds, JT_OPT) },
	{ ST("boots", JT_INT, boots, JT_OPT | JT_RANGE, .idef = 1, .lo = RUN_BOOTS_MIN,
	  .hi = RUN_BOOTS_MAX) },
	{ ST("pin", JT_STR, pin, JT_OPT | JT_NULL) },
	{ ST("group_order", JT_STR, group_order, JT_OPT | JT_NULL) },
	{ ST("target_ci_host_pct", JT_DOUBLE, target_ci_host, JT_OPT | JT_POS) },
	{ ST("target_ci_guest_pct", JT_DOUBLE, target_ci_guest, JT_OPT | JT_POS) },
	{ ST("budget_s", JT_DOUBLE, budget_s, JT_OPT | JT_POS) },
	{ ST("rounds_stopped", JT_STR, stopped, JT_OPT | JT_NULL | JT_WNULL) },
	{ ST("stopped_at_minimum", JT_BOOL, stopped_at_minimum, JT_OPT) },
	{ ST("not_chased", JT_ARR, not_chased, JT_OPT | JT_INLINE, .count = offsetof(struct run_settings, nnot_chased),
	  .cap = RES_NOT_CHASED_MAX, .sub = &not_chased_jt) },
	{ ST("warmup", JT_INT, warmup, JT_RANGE, .lo = 0, .hi = RUN_WARMUP_MAX) },
	{ ST("cold_reps", JT_INT, cold_reps, JT_OPT | JT_RANGE, .lo = 0, .hi = RUN_COLD_REPS_MAX) },
	{ ST("vcpus", JT_INT, vcpus, JT_RANGE, .lo = RUN_VCPUS_MIN, .hi = RUN_VCPUS_MAX) },
	{ ST("memory_bytes", JT_INT, memory_bytes, JT_RANGE, .lo = RUN_MEMORY_MIN,
	  .hi = RUN_MEMORY_MAX) },
	{ ST("size_bytes", JT_INT, size_bytes, JT_RANGE, .lo = RUN_SIZE_ALIGN, .hi = INT64_MAX) },
	{ ST("accesses", JT_INT, accesses, JT_RANGE, .lo = RUN_ACCESSES_MIN,
	  .hi = RUN_ACCESSES_MAX) },
	{ ST("seed", JT_INT, seed, JT_RANGE, .lo = RUN_SEED_MIN, .hi = RUN_SEED_MAX) },
	{ ST("min_coverage_pct", JT_DOUBLE, min_coverage_pct, JT_RANGE, .lo = 0,
	  .hi = RUN_MIN_COV_MAX) },
	{ ST("guests", JT_INT, guests, JT_OPT | JT_WDEF | JT_RANGE, .idef = 1, .lo = RUN_GUESTS_MIN,
	  .hi = RUN_GUESTS_MAX) },
	{ ST("host_state", JT_STR, host_state_list, JT_OPT | JT_NULL | JT_WDEF, .def = "fresh") },
	{ ST("balloon", JT_STR, balloon_list, JT_OPT | JT_NULL | JT_WDEF, .def = "none") },
	{ ST("mthp_sweep", JT_BOOL, mthp_sweep, JT_OPT) },
	{ ST("guest_mthp", JT_STR, guest_mthp, JT_OPT | JT_NULL | JT_WNULL) },
	{ ST("emulator", JT_STR, emulator, JT_OPT | JT_IFSET, .cond = offsetof(struct run_settings, emulator)) },
	{ ST("ksm", JT_STR, ksm, JT_OPT | JT_IFSET, .cond = offsetof(struct run_settings, ksm)) },
};
static const struct jt_table settings_jt = JT_TABLE(struct run_settings, settings_fields);

static const struct jt_field results_fields[] = {
	{ .key = "schema_version", .kind = JT_CUSTOM, .write = w_schema, .load = l_schema },
	{ RS("thpeval_version", JT_STR, thpeval_version, 0) },
	{ RS("status", JT_STR, status, 0) },
	{ RS("error", JT_STR, error, JT_NULL | JT_WNULL) },
	{ RS("started_unix", JT_INT, started, 0) },
	{ RS("finished_unix", JT_INT, finished, JT_NULL | JT_WNULL) },
	{ RS("accel", JT_STR, accel, 0) },
	{ RS("accel_reason", JT_STR, accel_reason, 0) },
	{ .key = "host", .kind = JT_OBJ, .size = sizeof(struct results), .sub = &host_jt },
	{ RS("image_id", JT_STR, image_id, 0) },
	{ .key = "telemetry", .kind = JT_OBJ, .size = sizeof(struct results), .flags = JT_OPT, .sub = &telemetry_jt },
	{ RS("settings", JT_OBJ, settings, 0, .sub = &settings_jt) },
	{ RS("cells", JT_ARR, cells, 0, .count = offsetof(struct results, ncells), .sub = &cell_jt) },
	{ RS("guests", JT_ARR, guests, 0, .count = offsetof(struct results, nguests), .sub = &guest_jt) },
	{ RS("fragmentation", JT_ARR, frags, JT_OPT, .count = offsetof(struct results, nfrags), .sub = &frag_jt) },
	{ RS("recovery", JT_ARR, collapses, JT_OPT, .count = offsetof(struct results, ncollapses),
	     .sub = &collapse_jt) },
	{ RS("migration", JT_ARR, migrations, JT_OPT, .count = offsetof(struct results, nmigrations),
	     .sub = &migration_jt) },
	{ RS("migration_summary", JT_ARR, migsum, JT_OPT, .count = offsetof(struct results, nmigsum),
	     .sub = &migsum_jt) },
	{ RS("balloon", JT_ARR, balloons, JT_OPT, .count = offsetof(struct results, nballoons),
	     .sub = &balloon_log_jt) },
	/* in struct effects, which results->effects points to */
	{ JT_F("effects", JT_CUSTOM, struct effects, e, JT_OPT | JT_DERIVED, .count = offsetof(struct effects, n),
	       .sub = &effect_jt, .write = w_effects, .load = l_effects) },
	{ JT_F("variance", JT_CUSTOM, struct effects, var, JT_OPT | JT_DERIVED,
	       .count = offsetof(struct effects, nvar), .sub = &variance_jt, .write = w_effects, .load = l_effects) },
	/* with --emulator=A,B (results->ab); null with one emulator */
	{ .key = "ab", .kind = JT_CUSTOM, .flags = JT_OPT | JT_NULL | JT_DERIVED | JT_IFSET,
	  .cond = offsetof(struct results, settings.emulator), .write = w_ab, .load = l_ab },
	/* with --ksm: each group of each arm (results->ksms), and on against off (results->ksm_fx) */
	{ RS("ksm", JT_ARR, ksms, JT_OPT | JT_IFSET, .cond = offsetof(struct results, settings.ksm),
	     .count = offsetof(struct results, nksms), .sub = &ksm_jt) },
	{ .key = "ksm_effects", .kind = JT_CUSTOM, .flags = JT_OPT | JT_NULL | JT_DERIVED | JT_IFSET,
	  .cond = offsetof(struct results, settings.ksm), .write = w_ksm_fx, .load = l_ab },
};
const struct jt_table results_jt = JT_TABLE(struct results, results_fields);

/* ---- entry points --------------------------------------------------------------------- */

int results_to_json_text(const struct results *r, char **text, size_t *len, struct err *e)
{
	json_object *o = jt_write(&results_jt, r);
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

int results_from_json(json_object *root, const char *name, struct results *r, struct err *e)
{
	struct jt_ctx c = { name, e };

	if (!json_object_is_type(root, json_type_object) || !json_object_object_get_ex(root, "schema_version", NULL) ||
	    !json_object_object_get_ex(root, "cells", NULL))
		return err_set(e, -EINVAL, "'%s' is not a thpeval results file (no schema_version and cells)", name);
	return jt_load(&c, &results_jt, root, "", r);
}
