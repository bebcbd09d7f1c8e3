#include "orchestrator/history/gatedb.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "orchestrator/history/history_internal.h"
#include "orchestrator/analysis/effects.h"
#include "lib/array.h"
#include "lib/stats.h"
#include "orchestrator/model/results_load.h"

/* ---- writing ---------------------------------------------------------------------------- */

static const struct gate_kind *kind_of(const struct gate_result *g, const struct gate_point *p)
{
	size_t i;

	for (i = 0; g && i < g->n; i++)
		if (!strcmp(g->kinds[i].cur.kind, p->kind))
			return &g->kinds[i];
	return NULL;
}

int gatedb_insert(struct histdb *h, long long run, const struct results *r, const void *arg, struct err *e)
{
	const struct gate_result *g = arg;
	static const char sql[] =
		"INSERT INTO gate_points (run_id, kind, dir, mean_log, se_log, boots, cells, cells_key, verdict)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
	struct gate_points pts;
	size_t i;
	int rc = 0;

	if (gate_points_compute(r, &pts, e))
		return e->code;
	for (i = 0; i < pts.n && !rc; i++) {
		const struct gate_point *p = &pts.v[i];
		const struct gate_kind *k = kind_of(g, p);
		struct histdb_val v[] = {
			HV_INT(run), HV_TEXT(p->kind), HV_TEXT(p->dir == DIR_HIGHER ? "higher" : "lower"),
			HV_NUM(p->mean_log), HV_NUM(p->se_log), HV_INT(p->boots), HV_INT(p->ncells),
			HV_TEXT(p->cells_key), k ? HV_TEXT(gate_verdict_name(k->verdict)) : HV_NULL,
		};

		rc = histdb_query(h, sql, v, ARRAY_SIZE(v), NULL, "write to", e);
	}
	gate_points_release(&pts);
	if (!rc && g) {
		struct histdb_val v[] = { HV_TEXT(gate_verdict_name(g->verdict)), HV_INT(run) };

		rc = histdb_query(h, "UPDATE runs SET gate_verdict = ?1 WHERE id = ?2", v, 2, NULL, "write to", e);
	}
	return rc;
}

int history_append_gated(const char *db, const struct results *r, bool gate_passed, const struct gate_result *g,
			 struct err *e)
{
	return history_append_hooked(db, r, gate_passed, gatedb_insert, g, e);
}

/* ---- reading ---------------------------------------------------------------------------- */

struct hrun {
	long long id;
	time_t started;
	struct gate_points pts;
};

/* the stored points of run id; none stored (recorded before they were): computed from its results.json */
static int load_points(struct histdb *h, long long id, struct gate_points *out, struct err *e)
{
	struct histdb_val p[] = { HV_INT(id) };
	struct histdb_rows *rows = NULL;
	struct results *r;
	char name[64];
	const char *json;
	size_t cap = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if (histdb_query(h, "SELECT kind, dir, mean_log, se_log, boots, cells, cells_key FROM gate_points"
			 " WHERE run_id = ?1 ORDER BY kind", p, 1, &rows, "read", e))
		return e->code;
	while ((rc = histdb_next(rows, e)) == 1) {
		struct gate_point *g;

		if (out->n == cap) {
			size_t ncap = cap ? 2 * cap : 8;
			struct gate_point *v = realloc(out->v, ncap * sizeof(*v));

			if (!v) {
				rc = err_set(e, -ENOMEM, "out of memory reading the gate's history");
				break;
			}
			out->v = v;
			cap = ncap;
		}
		g = &out->v[out->n++];
		memset(g, 0, sizeof(*g));
		snprintf(g->kind, sizeof(g->kind), "%s", histdb_text(rows, 0));
		g->dir = strcmp(histdb_text(rows, 1), "higher") ? DIR_LOWER : DIR_HIGHER;
		g->mean_log = histdb_num(rows, 2);
		g->se_log = histdb_num(rows, 3);
		g->boots = (unsigned)histdb_int(rows, 4);
		g->ncells = (unsigned)histdb_int(rows, 5);
		snprintf(g->cells_key, sizeof(g->cells_key), "%s", histdb_text(rows, 6));
		if (!isfinite(g->se_log))
			g->se_log = 0;
	}
	histdb_rows_free(rows);
	if (rc < 0 || out->n) {
		if (rc < 0)
			gate_points_release(out);
		return rc < 0 ? rc : 0;
	}
	if (histdb_query(h, "SELECT results_json FROM runs WHERE id = ?1", p, 1, &rows, "read", e))
		return e->code;
	rc = histdb_next(rows, e);
	if (rc != 1 || !(r = malloc(sizeof(*r)))) {
		histdb_rows_free(rows);
		return rc < 0 ? rc : rc == 0 ? 0 : err_set(e, -ENOMEM, "out of memory");
	}
	json = histdb_text(rows, 0);
	snprintf(name, sizeof(name), "run %lld", id);
	rc = results_load_text(json, strlen(json), name, r, e);
	histdb_rows_free(rows);
	if (!rc) {
		rc = gate_points_compute(r, out, e);
		results_release(r);
	}
	free(r);
	return rc;
}

static void hruns_free(struct hrun *v, size_t n)
{
	size_t i;

	for (i = 0; v && i < n; i++)
		gate_points_release(&v[i].pts);
	free(v);
}

/* the earlier runs of cur's key, newest first, at most max */
static int load_runs(struct histdb *h, const struct results *cur, const char *host, size_t max, struct hrun **out,
		     size_t *nout, struct history_run_ref *newest, struct err *e)
{
	static const char sql[] =
		"SELECT id, started_unix FROM runs WHERE status = 'complete' AND cpu_model = ?1 AND accel = ?2"
		" AND settings = ?3 AND (host_name = ?4 OR host_name = '') AND (run_key IS NULL OR run_key <> ?5)"
		" AND started_unix < ?6"
		/* from the newest run marked as the first after a known change on */
		" AND started_unix >= coalesce((SELECT max(c.started_unix) FROM runs c WHERE c.change_why IS NOT NULL"
		" AND c.status = 'complete' AND c.cpu_model = ?1 AND c.accel = ?2 AND c.settings = ?3"
		" AND (c.host_name = ?4 OR c.host_name = '') AND c.started_unix <= ?6), 0)"
		" ORDER BY started_unix DESC, id DESC LIMIT ?7";
	char settings[1024], key[1024];	/* key: as long as history.c's run keys can be */
	struct histdb_rows *rows = NULL;
	struct hrun *v;
	size_t n = 0, i;
	int rc;

	*out = NULL;
	*nout = 0;
	history_settings_key(&cur->settings, settings, sizeof(settings));
	history_run_key(cur, key, sizeof(key));
	if (!(v = calloc(max, sizeof(*v))))
		return err_set(e, -ENOMEM, "out of memory");
	{
		struct histdb_val p[] = {
			HV_TEXT(cur->host.cpu_model), HV_TEXT(cur->accel), HV_TEXT(settings), HV_TEXT(host),
			HV_TEXT(key), HV_INT(cur->started), HV_INT(max),
		};

		if (histdb_query(h, sql, p, ARRAY_SIZE(p), &rows, "read", e)) {
			free(v);
			return e->code;
		}
	}
	while (n < max && (rc = histdb_next(rows, e)) == 1) {
		v[n].id = histdb_int(rows, 0);
		v[n].started = (time_t)histdb_int(rows, 1);
		n++;
	}
	histdb_rows_free(rows);
	if (err_isset(e)) {
		free(v);
		return e->code;
	}
	for (i = 0; i < n; i++)
		if (load_points(h, v[i].id, &v[i].pts, e)) {
			hruns_free(v, n);
			return err_wrap(e, "history gate");
		}
	if (newest && n) {
		newest->id = v[0].id;
		newest->started = v[0].started;
		snprintf(newest->desc, sizeof(newest->desc), "run %lld of '%s'", v[0].id, histdb_shown(h));
	}
	*out = v;
	*nout = n;
	return 0;
}

int history_gate(const char *db, const struct results *cur, const char *host, const struct gate_opts *o,
		 struct gate_result *out, struct history_run_ref *newest, struct err *e)
{
	struct gate_points pts = { NULL, 0 };
	struct hrun *runs = NULL;
	struct histdb *h = NULL;
	size_t nruns = 0, i, j;
	double *y = NULL, *se = NULL;
	bool empty = false;
	int rc;

	gate_result_init(out, o);
	if (newest)
		memset(newest, 0, sizeof(*newest));
	rc = hopen(db, false, &h, &empty, e);
	if (rc == -ENOENT) {		/* no database yet: no history */
		err_clear(e);
		empty = true;
	} else if (rc) {
		return rc;
	}
	if ((rc = gate_points_compute(cur, &pts, e)))
		goto out;
	if (!empty && (rc = load_runs(h, cur, host ? host : cur->host.name, (size_t)o->k + GATE_NEWEST - 1, &runs,
				       &nruns, newest, e)))
		goto out;
	y = calloc(nruns + 1, sizeof(*y));
	se = calloc(nruns + 1, sizeof(*se));
	if (!y || !se) {
		rc = err_set(e, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < pts.n && !rc; i++) {
		const struct gate_point *p = &pts.v[i];
		size_t n = 0;

		for (j = nruns; j-- > 0;) {	/* oldest first */
			const struct gate_point *q = gate_points_find(&runs[j].pts, p->kind, p->cells_key);

			if (!q || q->dir != p->dir)
				continue;
			y[n] = q->mean_log;
			se[n] = q->se_log;
			n++;
		}
		rc = gate_add_kind(out, o, p, y, se, n, e);
	}
	gate_finish(out);
out:
	free(y);
	free(se);
	hruns_free(runs, nruns);
	gate_points_release(&pts);
	histdb_close(h);
	if (rc)
		gate_result_release(out);
	return rc;
}

/* ---- known changes -------------------------------------------------------------------- */

struct mark_ctx {
	long long run;
	const char *why;
	bool found;
};

static int mark_tx(struct histdb *h, void *vctx, struct err *e)
{
	struct mark_ctx *m = vctx;
	struct histdb_val p[] = { HV_TEXT(m->why), HV_INT(m->run) };
	long long n = 0;

	if (histdb_query_int(h, "SELECT count(*) FROM runs WHERE id = ?1", p + 1, 1, &n, "read", e))
		return e->code;
	m->found = n > 0;
	if (!m->found)
		return 0;
	return histdb_query(h, "UPDATE runs SET change_why = ?1 WHERE id = ?2", p, 2, NULL, "write to", e);
}

int history_mark_change(const char *db, long long run, const char *why, struct err *e)
{
	struct mark_ctx m = { run, why, false };
	struct histdb *h;
	bool empty;
	int rc;

	if (hopen(db, true, &h, &empty, e))
		return e->code;
	rc = histdb_transaction(h, mark_tx, &m, e);
	if (!rc && !m.found)
		rc = err_set(e, -ENOENT, "no run %lld in history database '%s': 'thpeval history --db=...' lists the runs",
			     run, histdb_shown(h));
	histdb_close(h);
	return rc;
}

/* ---- every series ----------------------------------------------------------------------- */

struct srun {
	struct series_run r;
	char key[1400];			/* host, CPU, accelerator, settings */
	struct gate_points pts;
};

void gate_series_free(struct gate_series *s, size_t n)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		free(s[i].runs);
	free(s);
}

static int load_sruns(struct histdb *h, const char *host, struct srun **out, size_t *nout, struct err *e)
{
	static const char sql[] =
		"SELECT id, started_unix, host_kernel, hypervisor_version, libvirt_version, change_why, host_name,"
		" cpu_model, accel, settings FROM runs WHERE status = 'complete' AND (?1 = '' OR host_name = ?1)"
		" ORDER BY host_name, cpu_model, accel, settings, started_unix, id";
	struct histdb_val p[] = { HV_TEXT(host ? host : "") };
	struct histdb_rows *rows;
	struct srun *v = NULL;
	size_t n = 0, cap = 0, i;
	int rc;

	if (histdb_query(h, sql, p, 1, &rows, "read", e))
		return e->code;
	while ((rc = histdb_next(rows, e)) == 1) {
		struct srun *r;

		if (n == cap) {
			size_t ncap = cap ? 2 * cap : 32;
			struct srun *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				rc = err_set(e, -ENOMEM, "out of memory");
				break;
			}
			v = nv;
			cap = ncap;
		}
		r = &v[n++];
		memset(r, 0, sizeof(*r));
		r->r.id = histdb_int(rows, 0);
		r->r.started = (time_t)histdb_int(rows, 1);
		snprintf(r->r.kernel, sizeof(r->r.kernel), "%s", histdb_text(rows, 2));
		snprintf(r->r.qemu, sizeof(r->r.qemu), "%s", histdb_text(rows, 3));
		snprintf(r->r.libvirt, sizeof(r->r.libvirt), "%s", histdb_text(rows, 4));
		snprintf(r->r.why, sizeof(r->r.why), "%s", histdb_text(rows, 5));
		snprintf(r->key, sizeof(r->key), "%s\n%s\n%s\n%s", histdb_text(rows, 6), histdb_text(rows, 7),
			 histdb_text(rows, 8), histdb_text(rows, 9));
	}
	histdb_rows_free(rows);
	for (i = 0; rc >= 0 && i < n; i++)
		if (load_points(h, v[i].r.id, &v[i].pts, e))
			rc = e->code;
	if (rc < 0) {
		for (i = 0; i < n; i++)
			gate_points_release(&v[i].pts);
		free(v);
		return rc;
	}
	*out = v;
	*nout = n;
	return 0;
}

/* the series of each kind of the key's newest run, over runs [lo, hi) of one key */
static int add_key_series(struct srun *v, size_t lo, size_t hi, struct gate_series **out, size_t *nout,
			  struct err *e)
{
	const struct gate_points *last = &v[hi - 1].pts;
	size_t k, i;

	for (k = 0; k < last->n; k++) {
		struct gate_series *ns = realloc(*out, (*nout + 1) * sizeof(*ns)), *s;

		if (!ns)
			return err_set(e, -ENOMEM, "out of memory");
		*out = ns;
		s = &ns[(*nout)++];
		memset(s, 0, sizeof(*s));
		snprintf(s->host, sizeof(s->host), "%.*s", (int)strcspn(v[lo].key, "\n"), v[lo].key);
		snprintf(s->kind, sizeof(s->kind), "%s", last->v[k].kind);
		if (!(s->runs = calloc(hi - lo, sizeof(*s->runs))))
			return err_set(e, -ENOMEM, "out of memory");
		for (i = lo; i < hi; i++) {
			const struct gate_point *q = gate_points_find(&v[i].pts, last->v[k].kind, last->v[k].cells_key);

			if (!q)
				continue;
			s->runs[s->n] = v[i].r;
			s->runs[s->n++].y = q->mean_log;
		}
	}
	return 0;
}

int history_series_load(const char *db, const char *host, struct gate_series **out, size_t *nout, struct err *e)
{
	struct histdb *h = NULL;
	struct srun *v = NULL;
	size_t n = 0, i, lo;
	bool empty;
	int rc = 0;

	*out = NULL;
	*nout = 0;
	if (hopen(db, false, &h, &empty, e))
		return e->code;
	if (!empty && load_sruns(h, host, &v, &n, e)) {
		histdb_close(h);
		return e->code;
	}
	histdb_close(h);
	for (lo = 0, i = 1; i <= n && !rc; i++)
		if (i == n || strcmp(v[i].key, v[lo].key)) {
			rc = add_key_series(v, lo, i, out, nout, e);
			lo = i;
		}
	for (i = 0; i < n; i++)
		gate_points_release(&v[i].pts);
	free(v);
	if (rc) {
		gate_series_free(*out, *nout);
		*out = NULL;
		*nout = 0;
	}
	return rc;
}

/* ---- split effects pooled over runs ----------------------------------------------------- */

struct eff_acc {
	char key[1400];
	char label[320];
	size_t n, cap;
	double *y, *se;
	long long from_run, to_run;
	double new_pct, new_lo_pct, new_hi_pct;	/* the newest run's own estimate and interval */
};

static void effect_label(const struct effect *x, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s %s %s %s (host %s, guest %s%s%s%s%s)", x->workload, x->side, x->component,
			 x->metric, x->host_thp, x->guest_thp, x->at_guest[0] ? ", at guest " : "", x->at_guest,
			 x->host_state[0] && strcmp(x->host_state, "fresh") ? ", host " : "",
			 x->host_state[0] && strcmp(x->host_state, "fresh") ? x->host_state : "");

	if (n < 0 || (size_t)n >= len)
		buf[len - 1] = '\0';
}

/*
 * gcc 12's -fanalyzer loses the buffers realloc() moves once they are stored in
 * an element of the realloc()ed accumulator array and calls them leaked; they
 * are freed with the array (history_effects_pool). Silenced for this function only.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
static int eff_add(struct eff_acc **v, size_t *n, const char *key, const struct effect *x, long long run,
		   struct err *e)
{
	char label[320];
	struct eff_acc *a = NULL;
	size_t i;

	effect_label(x, label, sizeof(label));
	for (i = 0; i < *n && !a; i++)
		if (!strcmp((*v)[i].key, key) && !strcmp((*v)[i].label, label))
			a = &(*v)[i];
	if (!a) {
		struct eff_acc *nv = realloc(*v, (*n + 1) * sizeof(*nv));

		if (!nv)
			return err_set(e, -ENOMEM, "out of memory");
		*v = nv;
		a = &nv[(*n)++];
		memset(a, 0, sizeof(*a));
		snprintf(a->key, sizeof(a->key), "%s", key);
		snprintf(a->label, sizeof(a->label), "%s", label);
		a->from_run = run;
	}
	if (a->n == a->cap) {
		size_t cap = a->cap ? 2 * a->cap : 16;
		double *y = realloc(a->y, cap * sizeof(*y)), *se;

		if (!y)
			return err_set(e, -ENOMEM, "out of memory");
		a->y = y;
		if (!(se = realloc(a->se, cap * sizeof(*se))))
			return err_set(e, -ENOMEM, "out of memory");
		a->se = se;
		a->cap = cap;
	}
	a->y[a->n] = x->log_est;
	a->se[a->n++] = x->log_se;
	a->to_run = run;
	a->new_pct = x->estimate_pct;
	a->new_lo_pct = x->ci95_low_pct;
	a->new_hi_pct = x->ci95_high_pct;
	return 0;
}
#pragma GCC diagnostic pop

/* the effects of run id (its stored results.json) into the accumulators of key */
static int run_effects(struct histdb *h, long long id, const char *key, struct eff_acc **v, size_t *n,
		       struct err *e)
{
	struct histdb_val p[] = { HV_INT(id) };
	struct histdb_rows *rows;
	struct results *r = malloc(sizeof(*r));
	const char *json;
	char name[64];
	size_t i;
	int rc;

	if (!r)
		return err_set(e, -ENOMEM, "out of memory");
	if (histdb_query(h, "SELECT results_json FROM runs WHERE id = ?1", p, 1, &rows, "read", e)) {
		free(r);
		return e->code;
	}
	rc = histdb_next(rows, e);
	if (rc != 1) {
		histdb_rows_free(rows);
		free(r);
		return rc < 0 ? rc : 0;
	}
	json = histdb_text(rows, 0);
	snprintf(name, sizeof(name), "run %lld", id);
	rc = results_load_text(json, strlen(json), name, r, e);
	histdb_rows_free(rows);
	if (!rc && !(rc = effects_attach(r, e)))
		for (i = 0; i < r->effects->n && !rc; i++) {
			const struct effect *x = &r->effects->e[i];

			if (x->available && isfinite(x->log_est) && x->log_se > 0 && strcmp(x->side, "total"))
				rc = eff_add(v, n, key, x, id, e);
		}
	if (rc == -EINVAL) {	/* a stored run that no longer reads is left out */
		err_clear(e);
		rc = 0;
	}
	results_release(r);
	free(r);
	return rc;
}

static void pool_one(const struct eff_acc *a, struct pooled_effect *o)
{
	struct re_pool f;
	double t, h;

	memset(o, 0, sizeof(*o));
	snprintf(o->host, sizeof(o->host), "%.*s", (int)strcspn(a->key, "\n"), a->key);
	snprintf(o->label, sizeof(o->label), "%s", a->label);
	o->k = a->n;
	o->from_run = a->from_run;
	o->to_run = a->to_run;
	gate_re_pool(a->y, a->se, a->n, &f);
	t = t975((double)(a->n - 1));
	h = t * sqrt(f.var_mu);
	o->est_pct = effect_pct(f.mu);
	o->lo_pct = effect_pct(f.mu - h);
	o->hi_pct = effect_pct(f.mu + h);
	o->tau_pct = expm1(sqrt(f.tau2)) * 100.0;
	o->i2_pct = f.q > (double)(a->n - 1) ? (f.q - (double)(a->n - 1)) / f.q * 100.0 : 0;
	o->new_pct = a->new_pct;
	o->new_lo_pct = a->new_lo_pct;
	o->new_hi_pct = a->new_hi_pct;
}

int history_effects_pool(const char *db, const char *host, struct pooled_effect **out, size_t *nout,
			 struct err *e)
{
	struct histdb *h = NULL;
	struct srun *v = NULL;
	struct eff_acc *acc = NULL;
	size_t n = 0, nacc = 0, i, lo, k = 0;
	bool empty;
	int rc = 0;

	*out = NULL;
	*nout = 0;
	if (hopen(db, false, &h, &empty, e))
		return e->code;
	if (!empty && load_sruns(h, host, &v, &n, e)) {
		histdb_close(h);
		return e->code;
	}
	for (lo = 0, i = 1; i <= n && !rc; i++) {
		size_t from, j;

		if (i < n && !strcmp(v[i].key, v[lo].key))
			continue;
		for (from = lo, j = lo; j < i; j++)	/* the segment: from the newest mark on */
			if (v[j].r.why[0])
				from = j;
		for (j = from; j < i && !rc; j++)
			rc = run_effects(h, v[j].r.id, v[j].key, &acc, &nacc, e);
		lo = i;
	}
	histdb_close(h);
	for (i = 0; i < n; i++)
		gate_points_release(&v[i].pts);
	free(v);
	if (!rc && nacc && !(*out = calloc(nacc, sizeof(**out))))
		rc = err_set(e, -ENOMEM, "out of memory");
	for (i = 0; i < nacc; i++) {
		if (!rc && acc[i].n >= 2)
			pool_one(&acc[i], &(*out)[k++]);
		free(acc[i].y);
		free(acc[i].se);
	}
	free(acc);
	if (rc) {
		free(*out);
		*out = NULL;
		return rc;
	}
	*nout = k;
	return 0;
}
