#include "orchestrator/model/results_load.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* where we are in the document, for messages: "cells[2].metrics.access_ns" */
struct jwhere {
	const char *name;	/* file name */
	struct err *e;
};

#define KEY_MAX 256

static const char *jtype(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a fractional number";
	case json_type_int: return "an integer";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	}
	return "something else";
}

/* message text only: a path cut short still names the place */
static void keypath(char *buf, size_t len, const char *at, const char *key)
{
	if (snprintf(buf, len, "%s%s%s", at, at[0] ? "." : "", key) >= (int)len)
		buf[len - 1] = '\0';
}

static int bad_type(const struct jwhere *w, const char *at, const char *key, const char *want,
		    json_object *v)
{
	char k[KEY_MAX];

	keypath(k, sizeof(k), at, key);
	return err_set(w->e, -EINVAL, "'%s': '%s' must be %s, not %s: the file was edited or damaged",
		       w->name, k, want, jtype(v));
}

/* required key (its value may be JSON null: *v = NULL) */
static int jget(const struct jwhere *w, json_object *obj, const char *at, const char *key,
		json_object **v)
{
	char k[KEY_MAX];

	if (json_object_object_get_ex(obj, key, v))
		return 0;
	keypath(k, sizeof(k), at, key);
	return err_set(w->e, -EINVAL, "'%s': missing key '%s': the file was edited or damaged", w->name, k);
}

static int jobj(const struct jwhere *w, json_object *obj, const char *at, const char *key,
		bool nullable, json_object **v)
{
	if (jget(w, obj, at, key, v))
		return -EINVAL;
	if (!*v && nullable)
		return 0;
	if (!json_object_is_type(*v, json_type_object))
		return bad_type(w, at, key, nullable ? "an object or null" : "an object", *v);
	return 0;
}

static int jarr(const struct jwhere *w, json_object *obj, const char *at, const char *key,
		json_object **v)
{
	if (jget(w, obj, at, key, v))
		return -EINVAL;
	if (!json_object_is_type(*v, json_type_array))
		return bad_type(w, at, key, "an array", *v);
	return 0;
}

static int str_value(const struct jwhere *w, json_object *v, const char *at, const char *key,
		     bool nullable, char *dst, size_t len)
{
	char k[KEY_MAX];
	const char *s;

	if (!v && nullable) {
		dst[0] = '\0';
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return bad_type(w, at, key, nullable ? "a string or null" : "a string", v);
	s = json_object_get_string(v);
	if ((size_t)json_object_get_string_len(v) >= len || strlen(s) != (size_t)json_object_get_string_len(v)) {
		keypath(k, sizeof(k), at, key);
		return err_set(w->e, -EINVAL, "'%s': '%s' is longer than %zu bytes or holds a NUL", w->name,
			       k, len - 1);
	}
	memcpy(dst, s, strlen(s) + 1);
	return 0;
}

static int jstr(const struct jwhere *w, json_object *obj, const char *at, const char *key,
		bool nullable, char *dst, size_t len)
{
	json_object *v;

	if (jget(w, obj, at, key, &v))
		return -EINVAL;
	return str_value(w, v, at, key, nullable, dst, len);
}

/* optional string key added after schema 1 was first written: absent = def */
static int jstr_opt(const struct jwhere *w, json_object *obj, const char *at, const char *key,
		    const char *def, char *dst, size_t len)
{
	json_object *v;

	if (!json_object_object_get_ex(obj, key, &v)) {
		snprintf(dst, len, "%s", def);
		return 0;
	}
	if (str_value(w, v, at, key, true, dst, len))
		return -EINVAL;
	if (!dst[0])
		snprintf(dst, len, "%s", def);
	return 0;
}

static int jint(const struct jwhere *w, json_object *obj, const char *at, const char *key,
		bool nullable, int64_t min, int64_t max, int64_t *out)
{
	char k[KEY_MAX];
	json_object *v;
	int64_t x;

	if (jget(w, obj, at, key, &v))
		return -EINVAL;
	if (!v && nullable) {
		*out = 0;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int))
		return bad_type(w, at, key, nullable ? "an integer or null" : "an integer", v);
	errno = 0;
	x = json_object_get_int64(v);
	if (errno == ERANGE || x < min || x > max) {
		keypath(k, sizeof(k), at, key);
		return err_set(w->e, -ERANGE, "'%s': '%s' is out of range (%lld to %lld)", w->name, k,
			       (long long)min, (long long)max);
	}
	*out = x;
	return 0;
}

static int num_value(const struct jwhere *w, json_object *v, const char *at, const char *key,
		     bool nullable, double *out)
{
	char k[KEY_MAX];

	if (!v && nullable) {
		*out = NAN;
		return 0;
	}
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return bad_type(w, at, key, nullable ? "a number or null" : "a number", v);
	*out = json_object_get_double(v);
	if (!isfinite(*out)) {
		keypath(k, sizeof(k), at, key);
		return err_set(w->e, -ERANGE, "'%s': '%s' is not a finite number", w->name, k);
	}
	return 0;
}

static int jnum(const struct jwhere *w, json_object *obj, const char *at, const char *key,
		bool nullable, double *out)
{
	json_object *v;

	if (jget(w, obj, at, key, &v))
		return -EINVAL;
	return num_value(w, v, at, key, nullable, out);
}

static int jbool(const struct jwhere *w, json_object *obj, const char *at, const char *key, bool *out)
{
	json_object *v;

	if (jget(w, obj, at, key, &v))
		return -EINVAL;
	if (!json_object_is_type(v, json_type_boolean))
		return bad_type(w, at, key, "true or false", v);
	*out = json_object_get_boolean(v);
	return 0;
}

static int u32(const struct jwhere *w, json_object *obj, const char *at, const char *key, unsigned *out)
{
	int64_t x;

	if (jint(w, obj, at, key, false, 0, UINT32_MAX, &x))
		return -EINVAL;
	*out = (unsigned)x;
	return 0;
}

static int u64(const struct jwhere *w, json_object *obj, const char *at, const char *key,
	       unsigned long long *out)
{
	int64_t x;

	if (jint(w, obj, at, key, false, 0, INT64_MAX, &x))
		return -EINVAL;
	*out = (unsigned long long)x;
	return 0;
}

/* an optional key (added after schema 1 was first written) that is there and not null */
static bool present(json_object *obj, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(obj, key, &v) && v;
}

/* an optional per-order count of free blocks (buddyinfo_*): max orders at most */
static int buddy_array(const struct jwhere *w, json_object *obj, const char *at, const char *key,
		       unsigned long long *dst, size_t max, unsigned *orders)
{
	char k[KEY_MAX];
	json_object *arr, *x;
	size_t i, len;

	if (!present(obj, key))
		return 0;
	if (jarr(w, obj, at, key, &arr))
		return -EINVAL;
	keypath(k, sizeof(k), at, key);
	len = json_object_array_length(arr);
	if (len > max)
		return err_set(w->e, -E2BIG, "'%s': '%s' has %zu orders, more than %zu", w->name, k, len, max);
	for (i = 0; i < len; i++) {
		x = json_object_array_get_idx(arr, i);
		if (!json_object_is_type(x, json_type_int) || json_object_get_int64(x) < 0)
			return err_set(w->e, -EINVAL, "'%s': '%s[%zu]' must be a non-negative integer", w->name, k, i);
		dst[i] = (unsigned long long)json_object_get_int64(x);
	}
	if (len > *orders)
		*orders = (unsigned)len;
	return 0;
}

/* ---- pieces ------------------------------------------------------------------- */

/* "boot": the boot id of each sample, as many as samples; absent in older files */
static int load_boots(const struct jwhere *w, json_object *o, const char *at, struct metric *m)
{
	char k[KEY_MAX];
	json_object *arr;
	size_t i;

	if (!json_object_object_get_ex(o, "boot", &arr))
		return 0;
	keypath(k, sizeof(k), at, "boot");
	if (!json_object_is_type(arr, json_type_array) || json_object_array_length(arr) != m->n)
		return err_set(w->e, -EINVAL, "'%s': '%s' must be an array of %zu boot ids, one per sample",
			       w->name, k, m->n);
	for (i = 0; i < m->n; i++) {
		json_object *v = json_object_array_get_idx(arr, i);
		int64_t x;

		errno = 0;
		x = json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : -1;
		if (errno || x < 0 || x > UINT16_MAX)
			return err_set(w->e, -EINVAL, "'%s': '%s[%zu]' is not a boot id (0 to %d)", w->name, k,
				       i, UINT16_MAX);
		m->boot[i] = (uint16_t)x;
	}
	return 0;
}

/* {"samples":[...],"n":N,"mean":...}: samples kept, statistics recomputed */
static int load_metric(const struct jwhere *w, json_object *o, const char *at, struct metric *m)
{
	static const char *const derived[] = { "mean", "sd", "cv_pct", "ci95_low", "ci95_high" };
	char here[KEY_MAX], k[KEY_MAX];
	json_object *arr;
	int64_t n;
	size_t i, len;
	double d;

	if (!json_object_is_type(o, json_type_object))
		return err_set(w->e, -EINVAL, "'%s': '%s' must be an object, not %s", w->name, at, jtype(o));
	if (jarr(w, o, at, "samples", &arr) || jint(w, o, at, "n", false, 0, RES_MAX_SAMPLES, &n))
		return -EINVAL;
	for (i = 0; i < sizeof(derived) / sizeof(derived[0]); i++)
		if (jnum(w, o, at, derived[i], true, &d))
			return -EINVAL;
	len = json_object_array_length(arr);
	if (len > RES_MAX_SAMPLES) {
		keypath(k, sizeof(k), at, "samples");
		return err_set(w->e, -E2BIG, "'%s': '%s' has %zu samples, more than %d", w->name, k, len,
			       RES_MAX_SAMPLES);
	}
	if ((size_t)n != len) {
		keypath(k, sizeof(k), at, "n");
		return err_set(w->e, -EINVAL, "'%s': '%s' is %lld but there are %zu samples", w->name, k,
			       (long long)n, len);
	}
	m->n = 0;
	for (i = 0; i < len; i++) {
		snprintf(here, sizeof(here), "samples[%zu]", i);
		if (num_value(w, json_object_array_get_idx(arr, i), at, here, false, &d))
			return -EINVAL;
		m->boot[m->n] = 0;	/* files before boot ids: one boot */
		m->samples[m->n++] = d;
	}
	if (load_boots(w, o, at, m))
		return -EINVAL;
	summarize_blocked(m->samples, m->boot, m->n, &m->s);
	return 0;
}

static int load_thp(const struct jwhere *w, json_object *o, const char *at, struct thp_settings *s)
{
	char k[KEY_MAX], val[THP_VAL_MAX];

	s->n = 0;
	json_object_object_foreach(o, key, v) {
		if (str_value(w, v, at, key, false, val, sizeof(val)))
			return -EINVAL;
		if (thp_settings_put(s, key, val, w->e)) {
			keypath(k, sizeof(k), at, key);
			return err_wrap(w->e, "'%s': %s", w->name, k);
		}
	}
	return 0;
}

static int load_cell(const struct jwhere *w, struct results *r, json_object *o, size_t idx)
{
	char at[64], sub[KEY_MAX], k[KEY_MAX];
	char target[8], host[RES_NAME_MAX], prefault[RES_NAME_MAX], guest[RES_NAME_MAX];
	char workload[RES_NAME_MAX], variant[RES_NAME_MAX], hstate[16];
	struct cell_key key;
	json_object *metrics, *cov, *fails, *v;
	struct cell *c;
	size_t before, i, n;

	snprintf(at, sizeof(at), "cells[%zu]", idx);
	if (!json_object_is_type(o, json_type_object))
		return err_set(w->e, -EINVAL, "'%s': '%s' must be an object, not %s", w->name, at, jtype(o));
	if (jstr(w, o, at, "target", false, target, sizeof(target)) ||
	    jstr(w, o, at, "host_thp", false, host, sizeof(host)) ||
	    jstr_opt(w, o, at, "host_prefault", "ondemand", prefault, sizeof(prefault)) ||
	    jstr(w, o, at, "guest_thp", false, guest, sizeof(guest)) ||
	    jstr(w, o, at, "workload", false, workload, sizeof(workload)) ||
	    jstr_opt(w, o, at, "variant", "", variant, sizeof(variant)) ||
	    jstr_opt(w, o, at, "host_state", "fresh", hstate, sizeof(hstate)))
		return -EINVAL;
	key = (struct cell_key){ target, host, prefault, guest, workload, variant, hstate };
	before = r->ncells;
	c = results_cell_key(r, &key, w->e);
	if (!c)
		return err_wrap(w->e, "'%s': %s", w->name, at);
	if (r->ncells == before)
		return err_set(w->e, -EINVAL, "'%s': '%s' repeats the cell %s/%s/%s", w->name, at, host, guest,
			       workload);
	if (jstr(w, o, at, "guest", false, c->guest, sizeof(c->guest)) ||
	    jobj(w, o, at, "metrics", false, &metrics))
		return -EINVAL;
	json_object_object_foreach(metrics, name, mo) {
		struct metric *m;

		keypath(sub, sizeof(sub), at, "metrics");
		keypath(k, sizeof(k), sub, name);
		if (strlen(name) == 0 || strlen(name) >= REC_KEY_MAX)
			return err_set(w->e, -EINVAL, "'%s': metric name '%s' is empty or too long", w->name, k);
		m = cell_metric(c, name, w->e);
		if (!m)
			return err_wrap(w->e, "'%s'", w->name);
		if (load_metric(w, mo, k, m))
			return -EINVAL;
	}
	if (jobj(w, o, at, "coverage", false, &cov))
		return -EINVAL;
	keypath(sub, sizeof(sub), at, "coverage");
	{
		double d;

		char derived[REC_KEY_MAX];

		/* evidence and rule are derived from the workload's traits: checked, not kept */
		if (jnum(w, cov, sub, "host_huge_pct", true, &d) || jnum(w, cov, sub, "guest_huge_pct", true, &d) ||
		    jstr_opt(w, cov, sub, "host_source", "smaps", c->host_cov_source, sizeof(c->host_cov_source)) ||
		    jstr_opt(w, cov, sub, "evidence", "", derived, sizeof(derived)) ||
		    jstr_opt(w, cov, sub, "rule", "", derived, sizeof(derived)))
			return -EINVAL;
	}
	if (jobj(w, cov, sub, "host_huge_pct_samples", false, &v))
		return -EINVAL;
	keypath(k, sizeof(k), sub, "host_huge_pct_samples");
	if (load_metric(w, v, k, &c->host_cov))
		return -EINVAL;
	if (jobj(w, cov, sub, "guest_huge_pct_samples", false, &v))
		return -EINVAL;
	keypath(k, sizeof(k), sub, "guest_huge_pct_samples");
	if (load_metric(w, v, k, &c->guest_cov))
		return -EINVAL;
	if (u32(w, o, at, "reps_ok", &c->reps_ok) || u32(w, o, at, "reps_failed", &c->reps_failed) ||
	    u32(w, o, at, "warmups", &c->warmups) || jarr(w, o, at, "failures", &fails))
		return -EINVAL;
	n = json_object_array_length(fails);
	if (n > RES_MAX_FAILURES)
		return err_set(w->e, -E2BIG, "'%s': '%s.failures' has more than %d entries", w->name, at,
			       RES_MAX_FAILURES);
	keypath(sub, sizeof(sub), at, "failures");
	for (i = 0; i < n; i++) {
		char idxk[32];

		snprintf(idxk, sizeof(idxk), "[%zu]", i);
		keypath(k, sizeof(k), "", sub);
		if (strlen(k) + strlen(idxk) < sizeof(k))
			strcat(k, idxk);
		if (str_value(w, json_object_array_get_idx(fails, i), "", k, false, c->failures[i],
			      sizeof(c->failures[i])))
			return -EINVAL;
	}
	c->nfailures = n;
	if (jbool(w, o, at, "valid", &c->valid) ||
	    jstr(w, o, at, "invalid_reason", true, c->invalid_reason, sizeof(c->invalid_reason)) ||
	    jstr_opt(w, o, at, "treatment_note", "", c->treatment_note, sizeof(c->treatment_note)))
		return -EINVAL;
	/* the summaries as results_finish computes them: coverage over repetitions */
	cell_summarize(c);
	return 0;
}

static int load_guest(const struct jwhere *w, struct results *r, json_object *o, size_t idx)
{
	struct guest_log *g;
	char at[64];

	snprintf(at, sizeof(at), "guests[%zu]", idx);
	if (!json_object_is_type(o, json_type_object))
		return err_set(w->e, -EINVAL, "'%s': '%s' must be an object, not %s", w->name, at, jtype(o));
	g = results_guest_add(r, w->e);
	if (!g)
		return -ENOMEM;
	if (jstr(w, o, at, "name", false, g->name, sizeof(g->name)) ||
	    jstr(w, o, at, "host_thp", false, g->host_thp, sizeof(g->host_thp)) ||
	    jstr(w, o, at, "status", false, g->status, sizeof(g->status)) ||
	    jstr(w, o, at, "error", true, g->error, sizeof(g->error)) ||
	    jstr(w, o, at, "domain_xml", false, g->xml_path, sizeof(g->xml_path)) ||
	    jstr(w, o, at, "console_log", false, g->console_path, sizeof(g->console_path)) ||
	    jstr(w, o, at, "guest_kernel", false, g->guest_kernel, sizeof(g->guest_kernel)) ||
	    jnum(w, o, at, "create_to_first_record_s", true, &g->create_to_first_record_s) ||
	    jnum(w, o, at, "teardown_s", true, &g->teardown_s) ||
	    jnum(w, o, at, "total_s", true, &g->total_s) ||
	    u32(w, o, at, "records", &g->records) ||
	    u32(w, o, at, "rejected_lines", &g->rejected) ||
	    jstr_opt(w, o, at, "host_state", "fresh", g->host_state, sizeof(g->host_state)) ||
	    jstr_opt(w, o, at, "host_prefault", "ondemand", g->prefault, sizeof(g->prefault)) ||
	    jstr_opt(w, o, at, "guest_mthp_sizes_kb", "", g->mthp_sizes_kb, sizeof(g->mthp_sizes_kb)))
		return -EINVAL;
	if (json_object_object_get_ex(o, "index", NULL) && u32(w, o, at, "index", &g->index))
		return -EINVAL;
	if (json_object_object_get_ex(o, "round", NULL) && u32(w, o, at, "round", &g->round))
		return -EINVAL;
	g->concurrency = 1;
	if (json_object_object_get_ex(o, "concurrency", NULL) && u32(w, o, at, "concurrency", &g->concurrency))
		return -EINVAL;
	{
		json_object *a;
		size_t i;

		if (!json_object_object_get_ex(o, "cells", &a))
			return 0;
		if (!json_object_is_type(a, json_type_array))
			return bad_type(w, at, "cells", "an array", a);
		for (i = 0; i < json_object_array_length(a) && i < GLOG_MAX_CELLS; i++) {
			json_object *c = json_object_array_get_idx(a, i);
			struct guest_cellstat *cs = &g->cs[g->ncs];
			char sub[96];
			double d;

			snprintf(sub, sizeof(sub), "%s.cells[%zu]", at, i);
			if (!json_object_is_type(c, json_type_object))
				return err_set(w->e, -EINVAL, "'%s': '%s' must be an object", w->name, sub);
			if (jstr(w, c, sub, "guest_thp", false, cs->guest_thp, sizeof(cs->guest_thp)) ||
			    jstr(w, c, sub, "workload", false, cs->workload, sizeof(cs->workload)) ||
			    u32(w, c, sub, "reps", &cs->reps))
				return -EINVAL;
			/* means kept as one-sample sums */
			if (jnum(w, c, sub, "host_huge_pct", true, &d))
				return -EINVAL;
			if (isfinite(d))
				cs->cov_sum = d, cs->ncov = 1;
			if (jnum(w, c, sub, "fault_ns_per_4k", true, &d))
				return -EINVAL;
			if (isfinite(d))
				cs->fault_sum = d, cs->nfault = 1;
			if (jnum(w, c, sub, "access_ns", true, &d))
				return -EINVAL;
			if (isfinite(d))
				cs->access_sum = d, cs->naccess = 1;
			g->ncs++;
		}
	}
	return 0;
}

static int load_frag(const struct jwhere *w, struct results *r, json_object *o, size_t idx)
{
	struct frag_log *f;
	char at[64];

	snprintf(at, sizeof(at), "fragmentation[%zu]", idx);
	if (!json_object_is_type(o, json_type_object))
		return err_set(w->e, -EINVAL, "'%s': '%s' must be an object, not %s", w->name, at, jtype(o));
	f = results_frag_add(r, w->e);
	if (!f)
		return -ENOMEM;
	if (jstr(w, o, at, "host_thp", false, f->host_thp, sizeof(f->host_thp)) ||
	    jstr(w, o, at, "host_prefault", false, f->prefault, sizeof(f->prefault)) ||
	    u32(w, o, at, "round", &f->round) || u64(w, o, at, "bytes", &f->bytes) ||
	    u64(w, o, at, "huge_kb", &f->huge_kb) || u64(w, o, at, "held_kb", &f->held_kb) ||
	    jnum(w, o, at, "seconds", true, &f->seconds) ||
	    u64(w, o, at, "free_2m_kb_before", &f->free2m_before_kb) ||
	    u64(w, o, at, "free_2m_kb_after", &f->free2m_after_kb) ||
	    jbool(w, o, at, "restored", &f->restored) ||
	    jbool(w, o, at, "compact_memory_needed", &f->compacted) ||
	    u64(w, o, at, "compact_stall", &f->compact_stall) ||
	    u64(w, o, at, "compact_success", &f->compact_success) ||
	    u64(w, o, at, "compact_fail", &f->compact_fail) ||
	    u64(w, o, at, "thp_fault_alloc", &f->thp_fault_alloc) ||
	    u64(w, o, at, "thp_fault_fallback", &f->thp_fault_fallback) ||
	    jstr(w, o, at, "error", true, f->error, sizeof(f->error)) ||
	    jstr_opt(w, o, at, "stopped", "", f->stopped, sizeof(f->stopped)))
		return -EINVAL;
	/* keys added later: absent or null leaves the field as it is */
	if ((present(o, "compact_migrate_scanned_undo") &&
	     u64(w, o, at, "compact_migrate_scanned_undo", &f->compact_scanned)) ||
	    (present(o, "pcp_low_fragmenting") && jbool(w, o, at, "pcp_low_fragmenting", &f->pcp_low)) ||
	    (present(o, "pcp_drained") && jbool(w, o, at, "pcp_drained", &f->pcp_drained)) ||
	    (present(o, "compact_migrate_scanned_fragmenting") &&
	     u64(w, o, at, "compact_migrate_scanned_fragmenting", &f->frag_compact_scanned)) ||
	    (present(o, "compact_migrate_scanned") &&
	     u64(w, o, at, "compact_migrate_scanned", &f->compact_scanned_guests)) ||
	    (present(o, "pgmigrate_success") && u64(w, o, at, "pgmigrate_success", &f->pgmigrate_success)) ||
	    (present(o, "pgsteal_direct") && u64(w, o, at, "pgsteal_direct", &f->pgsteal_direct)) ||
	    (present(o, "mem_available_kb_before") && u64(w, o, at, "mem_available_kb_before", &f->avail_before_kb)) ||
	    (present(o, "mem_available_kb_undone") && u64(w, o, at, "mem_available_kb_undone", &f->avail_undone_kb)))
		return -EINVAL;
	if (buddy_array(w, o, at, "buddyinfo_before", f->buddy_before, RES_BUDDY_ORDERS, &f->orders) ||
	    buddy_array(w, o, at, "buddyinfo_after", f->buddy_after, RES_BUDDY_ORDERS, &f->orders) ||
	    buddy_array(w, o, at, "buddyinfo_undone", f->buddy_undone, RES_BUDDY_ORDERS, &f->orders))
		return -EINVAL;
	if (present(o, "compaction_proactiveness_before")) {
		int64_t pv;

		if (jint(w, o, at, "compaction_proactiveness_before", false, 0, 100, &pv))
			return -EINVAL;
		snprintf(f->proactiveness, sizeof(f->proactiveness), "%lld", (long long)pv);
	}
	if (present(o, "free_2m_kb_undone")) {
		if (u64(w, o, at, "free_2m_kb_undone", &f->free2m_undone_kb))
			return -EINVAL;
		f->have_undone = true;
	}
	return 0;
}

/* the CI target and why rounds stopped; absent in older files */
static int load_stopping(const struct jwhere *w, json_object *o, struct run_settings *s)
{
	const char *at = "settings";
	const char *keys[] = { "target_ci_host_pct", "target_ci_guest_pct", "budget_s" };
	double *out[] = { &s->target_ci_host, &s->target_ci_guest, &s->budget_s };
	size_t i;

	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		*out[i] = 0;
		if (json_object_object_get_ex(o, keys[i], NULL) && jnum(w, o, at, keys[i], true, out[i]))
			return -EINVAL;
		if (!isfinite(*out[i]) || *out[i] < 0)
			*out[i] = 0;
	}
	s->stopped[0] = '\0';
	return jstr_opt(w, o, at, "rounds_stopped", "", s->stopped, sizeof(s->stopped));
}

static int load_settings(const struct jwhere *w, json_object *o, struct run_settings *s)
{
	const char *at = "settings";

	if (jstr(w, o, at, "uri", false, s->uri, sizeof(s->uri)) ||
	    jstr(w, o, at, "host_thp", false, s->host_thp_list, sizeof(s->host_thp_list)) ||
	    jstr(w, o, at, "guest_thp", false, s->guest_thp_list, sizeof(s->guest_thp_list)) ||
	    jstr(w, o, at, "workloads", false, s->workloads, sizeof(s->workloads)) ||
	    u32(w, o, at, "reps", &s->reps) || u32(w, o, at, "warmup", &s->warmup) ||
	    u32(w, o, at, "vcpus", &s->vcpus) || u64(w, o, at, "memory_bytes", &s->memory_bytes) ||
	    u64(w, o, at, "size_bytes", &s->size_bytes) || u64(w, o, at, "accesses", &s->accesses) ||
	    u64(w, o, at, "seed", &s->seed) ||
	    jnum(w, o, at, "min_coverage_pct", true, &s->min_coverage_pct) ||
	    jstr_opt(w, o, at, "host_state", "fresh", s->host_state_list, sizeof(s->host_state_list)) ||
	    jstr_opt(w, o, at, "guest_mthp", "", s->guest_mthp, sizeof(s->guest_mthp)) ||
	    jstr_opt(w, o, at, "pin", "", s->pin, sizeof(s->pin)) ||
	    jstr_opt(w, o, at, "kcompile", "", s->kcompile, sizeof(s->kcompile)) ||
	    jstr_opt(w, o, at, "kcompile_source", "", s->srcdisk_id, sizeof(s->srcdisk_id)) ||
	    jstr_opt(w, o, at, "host_prefault", "", s->prefault_list, sizeof(s->prefault_list)) ||
	    jstr_opt(w, o, at, "host_backing", "anonymous", s->backing, sizeof(s->backing)) ||
	    jstr_opt(w, o, at, "group_order", "", s->group_order, sizeof(s->group_order)))
		return -EINVAL;
	if (json_object_object_get_ex(o, "cold_reps", NULL) && u32(w, o, at, "cold_reps", &s->cold_reps))
		return -EINVAL;
	s->guests = 1;
	if (json_object_object_get_ex(o, "guests", NULL) && u32(w, o, at, "guests", &s->guests))
		return -EINVAL;
	/* added later: absent in older files */
	if (json_object_object_get_ex(o, "rounds", NULL) && u32(w, o, at, "rounds", &s->rounds))
		return -EINVAL;
	s->boots = 1;
	if (json_object_object_get_ex(o, "boots", NULL) && u32(w, o, at, "boots", &s->boots))
		return -EINVAL;
	if (json_object_object_get_ex(o, "mthp_sweep", NULL) && jbool(w, o, at, "mthp_sweep", &s->mthp_sweep))
		return -EINVAL;
	return load_stopping(w, o, s);
}

static int load_host(const struct jwhere *w, json_object *o, struct results *r)
{
	const char *at = "host";
	json_object *tb, *ta;
	int64_t x;

	if (jstr(w, o, at, "kernel", false, r->host.kernel, sizeof(r->host.kernel)) ||
	    jstr(w, o, at, "cpu_model", false, r->host.cpu_model, sizeof(r->host.cpu_model)) ||
	    jint(w, o, at, "cpus", false, 0, UINT32_MAX, &x))
		return -EINVAL;
	r->host.cpus = (unsigned)x;
	if (jint(w, o, at, "mem_total_kb", false, 0, INT64_MAX, &x))
		return -EINVAL;
	r->host.mem_total_kb = (uint64_t)x;
	if (jstr(w, o, at, "libvirt_version", false, r->libvirt_version, sizeof(r->libvirt_version)) ||
	    jstr(w, o, at, "hypervisor_version", false, r->hypervisor_version, sizeof(r->hypervisor_version)) ||
	    jobj(w, o, at, "thp_before", false, &tb) || jobj(w, o, at, "thp_after", true, &ta))
		return -EINVAL;
	if (load_thp(w, tb, "host.thp_before", &r->thp_before))
		return -EINVAL;
	r->have_thp_after = ta != NULL;
	if (ta && load_thp(w, ta, "host.thp_after", &r->thp_after))
		return -EINVAL;
	return 0;
}

/* what telemetry was collected: the notes the run wrote (the rest is fixed text); absent in older files */
static int load_telemetry(const struct jwhere *w, json_object *root, struct results *r)
{
	json_object *t;

	if (!json_object_object_get_ex(root, "telemetry", NULL))
		return 0;
	if (jobj(w, root, "", "telemetry", false, &t))
		return -EINVAL;
	if (jstr_opt(w, t, "telemetry", "kvm_stats", "", r->kvm_stats_note, sizeof(r->kvm_stats_note)) ||
	    jstr_opt(w, t, "telemetry", "hardware_counters", "", r->pmu_note, sizeof(r->pmu_note)))
		return -EINVAL;
	return 0;
}

static int load_doc(const struct jwhere *w, json_object *root, struct results *r)
{
	json_object *v, *host, *set, *cells, *guests;
	int64_t x;
	size_t i;

	if (!json_object_is_type(root, json_type_object) ||
	    !json_object_object_get_ex(root, "schema_version", NULL) ||
	    !json_object_object_get_ex(root, "cells", NULL))
		return err_set(w->e, -EINVAL, "'%s' is not a thpeval results file (no schema_version and cells)",
			       w->name);
	json_object_object_get_ex(root, "schema_version", &v);
	if (!json_object_is_type(v, json_type_int))
		return bad_type(w, "", "schema_version", "an integer", v);
	if (json_object_get_int64(v) != RESULTS_SCHEMA_VERSION)
		return err_set(w->e, -EPROTO, "unknown schema version %lld in '%s': this thpeval reads version %d",
			       (long long)json_object_get_int64(v), w->name, RESULTS_SCHEMA_VERSION);
	if (jstr(w, root, "", "thpeval_version", false, r->thpeval_version, sizeof(r->thpeval_version)) ||
	    jstr(w, root, "", "status", false, r->status, sizeof(r->status)) ||
	    jstr(w, root, "", "error", true, r->error, sizeof(r->error)) ||
	    jint(w, root, "", "started_unix", false, 0, INT64_MAX, &x))
		return -EINVAL;
	r->started = (time_t)x;
	if (jint(w, root, "", "finished_unix", true, 0, INT64_MAX, &x))
		return -EINVAL;
	r->finished = (time_t)x;
	if (jstr(w, root, "", "accel", false, r->accel, sizeof(r->accel)) ||
	    jstr(w, root, "", "accel_reason", false, r->accel_reason, sizeof(r->accel_reason)) ||
	    jobj(w, root, "", "host", false, &host) || load_host(w, host, r) ||
	    jstr(w, root, "", "image_id", false, r->image_id, sizeof(r->image_id)) ||
	    jobj(w, root, "", "settings", false, &set) || load_settings(w, set, &r->settings) ||
	    load_telemetry(w, root, r) ||
	    jarr(w, root, "", "cells", &cells) || jarr(w, root, "", "guests", &guests))
		return -EINVAL;
	for (i = 0; i < json_object_array_length(cells); i++)
		if (load_cell(w, r, json_object_array_get_idx(cells, i), i))
			return -EINVAL;
	for (i = 0; i < json_object_array_length(guests); i++)
		if (load_guest(w, r, json_object_array_get_idx(guests, i), i))
			return -EINVAL;
	if (json_object_object_get_ex(root, "fragmentation", &v)) {
		if (!json_object_is_type(v, json_type_array))
			return bad_type(w, "", "fragmentation", "an array", v);
		for (i = 0; i < json_object_array_length(v); i++)
			if (load_frag(w, r, json_object_array_get_idx(v, i), i))
				return -EINVAL;
	}
	/* effects are derived from the cells: checked for shape here, recomputed by the
	 * analysis (effects_attach; older files lack them) */
	if (!json_object_object_get_ex(root, "effects", &v))
		v = NULL;
	else if (!json_object_is_type(v, json_type_array))
		return bad_type(w, "", "effects", "an array", v);
	for (i = 0; v && i < json_object_array_length(v); i++) {
		json_object *fx = json_object_array_get_idx(v, i);
		char at[32];

		snprintf(at, sizeof(at), "effects[%zu]", i);
		if (!json_object_is_type(fx, json_type_object))
			return err_set(w->e, -EINVAL, "'%s': '%s' must be an object, not %s", w->name, at, jtype(fx));
	}
	return 0;
}

/* ---- entry points ---------------------------------------------------------------- */

static void line_col(const char *text, size_t off, unsigned *line, unsigned *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

int results_load_text(const char *text, size_t len, const char *name, struct results *out,
		      struct err *e)
{
	struct jwhere w = { name, e };
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	json_object *root;
	unsigned line, col;
	size_t end;
	int r;

	results_init(out);
	if (len > INT32_MAX)
		return err_set(e, -EFBIG, "'%s' is too large for a results file", name);
	tok = json_tokener_new();
	if (!tok)
		return err_set(e, -ENOMEM, "out of memory");
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (!root && jerr == json_tokener_continue)
		jerr = json_tokener_error_parse_eof;
	if (jerr != json_tokener_success) {
		line_col(text, end, &line, &col);
		size_t ws = strspn(text, " \t\r\n");

		if (ws == len)
			r = err_set(e, -EINVAL, "'%s' is empty, not a thpeval results file", name);
		else if (text[ws] != '{' && text[ws] != '[')
			r = err_set(e, -EINVAL, "'%s' is not JSON, so not a thpeval results file", name);
		else
			r = err_set(e, -EINVAL, "'%s' is not valid JSON: %s at line %u, column %u (byte %zu): "
				    "the file is truncated or was edited by hand", name,
				    json_tokener_error_desc(jerr), line, col, end);
		json_tokener_free(tok);
		return r;
	}
	json_tokener_free(tok);
	if (end < len && strspn(text + end, " \t\r\n") != len - end) {
		line_col(text, end + strspn(text + end, " \t\r\n"), &line, &col);
		json_object_put(root);
		return err_set(e, -EINVAL, "'%s' is not valid JSON: data after the end of the document at line %u, column %u",
			       name, line, col);
	}
	r = load_doc(&w, root, out);
	json_object_put(root);
	if (r) {
		results_release(out);
		return e->code ? e->code : r;
	}
	return 0;
}

int results_path_resolve(const char *path, char *buf, size_t len, struct err *e)
{
	struct stat st;
	int n;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		n = snprintf(buf, len, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", RESULTS_FILE);
	else
		n = snprintf(buf, len, "%s", path);
	if (n < 0 || (size_t)n >= len)
		return err_set(e, -ENAMETOOLONG, "path too long: '%s'", path);
	return 0;
}

static int read_all(const char *path, char **text, size_t *len, struct err *e)
{
	struct stat st;
	size_t off = 0;
	char *buf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		if (err == ENOENT)
			return err_set(e, -err, "'%s' does not exist: give a results.json or the directory of a run",
				       path);
		return err_set(e, -err, "cannot open '%s': %s", path, strerror(err));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(e, -EINVAL, "'%s' is not a regular file, not a thpeval results file", path);
	}
	if ((uint64_t)st.st_size > RESULTS_MAX_BYTES) {
		close(fd);
		return err_set(e, -EFBIG, "'%s' is %lld bytes, too large for a thpeval results file", path,
			       (long long)st.st_size);
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return err_set(e, -ENOMEM, "out of memory reading '%s'", path);
	}
	while (off < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + off, (size_t)st.st_size - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			free(buf);
			close(fd);
			return err_set(e, -err, "cannot read '%s': %s", path, strerror(err));
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	*text = buf;
	*len = off;
	return 0;
}

int results_load(const char *path, struct results *out, struct err *e)
{
	char file[PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	int r;

	results_init(out);
	if (results_path_resolve(path, file, sizeof(file), e) || read_all(file, &text, &len, e))
		return e->code;
	r = results_load_text(text, len, file, out, e);
	free(text);
	return r;
}
