#include "orchestrator/report/history.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fstree.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/model/results_load.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * migrations[k] takes the schema from user_version k to k + 1; each ends by
 * setting the new user_version. Append, never edit a shipped one.
 */
static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE runs ("
	"  id INTEGER PRIMARY KEY,"
	"  started_unix INTEGER NOT NULL,"
	"  finished_unix INTEGER,"
	"  recorded_unix INTEGER NOT NULL,"
	"  status TEXT NOT NULL,"
	"  gate_passed INTEGER NOT NULL CHECK (gate_passed IN (0, 1)),"
	"  thpeval_version TEXT NOT NULL,"
	"  host_kernel TEXT NOT NULL,"
	"  cpu_model TEXT NOT NULL,"
	"  host_cpus INTEGER NOT NULL,"
	"  hypervisor_version TEXT NOT NULL,"
	"  libvirt_version TEXT NOT NULL,"
	"  accel TEXT NOT NULL,"
	"  image_id TEXT NOT NULL,"
	"  settings TEXT NOT NULL,"
	"  results_json TEXT NOT NULL"
	");"
	"CREATE INDEX runs_setup ON runs (cpu_model, accel, settings, gate_passed, started_unix);"
	"CREATE TABLE metrics ("
	"  run_id INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,"
	"  target TEXT NOT NULL,"
	"  host_thp TEXT NOT NULL,"
	"  prefault TEXT NOT NULL,"
	"  guest_thp TEXT NOT NULL,"
	"  workload TEXT NOT NULL,"
	"  variant TEXT NOT NULL,"
	"  valid INTEGER NOT NULL,"
	"  metric TEXT NOT NULL,"
	"  n INTEGER NOT NULL,"
	"  mean REAL,"
	"  sd REAL,"
	"  ci95_low REAL,"
	"  ci95_high REAL,"
	"  PRIMARY KEY (run_id, target, host_thp, prefault, guest_thp, workload, variant, metric)"
	");"
	"CREATE INDEX metrics_metric ON metrics (metric, workload);"
	"PRAGMA user_version = 1;",
};
_Static_assert(ARRAY_SIZE(migrations) == HISTORY_SCHEMA_VERSION, "one migration per schema version");

struct hdb {
	sqlite3 *db;
	const char *path;
	bool empty;		/* read-only open of a database without our schema yet */
};

static int db_fail(struct hdb *h, int rc, const char *what, struct err *e)
{
	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return err_set(e, -EBUSY, "database '%s' is locked by another thpeval: try again", h->path);
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return err_set(e, -EINVAL, "'%s' is not a thpeval history database (%s): move it aside; "
			       "the next recorded run starts a new one", h->path, sqlite3_errstr(rc));
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_CANTOPEN:
		return err_set(e, -EACCES, "cannot %s history database '%s': %s: check its permissions or pass --db",
			       what, h->path, h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(rc));
	case SQLITE_FULL:
		return err_set(e, -ENOSPC, "cannot %s history database '%s': the disk is full", what, h->path);
	}
	return err_set(e, -EIO, "cannot %s history database '%s': %s", what, h->path,
		       h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(rc));
}

/* run one SQL text of possibly several statements, all prepared, no bindings */
static int exec_sql(struct hdb *h, const char *sql, const char *what, struct err *e)
{
	const char *tail = sql;

	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		int rc = sqlite3_prepare_v2(h->db, tail, -1, &st, &tail);

		if (rc != SQLITE_OK)
			return db_fail(h, rc, what, e);
		if (!st)	/* whitespace or comment */
			break;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return db_fail(h, rc, what, e);
	}
	return 0;
}

static int query_int(struct hdb *h, const char *sql, long long *out, const char *what, struct err *e)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return db_fail(h, rc, what, e);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return db_fail(h, rc, what, e);
	return 0;
}

static int check_schema(struct hdb *h, bool write, struct err *e)
{
	long long v, ntables, ours;
	size_t k;

	if (query_int(h, "PRAGMA user_version", &v, "read", e))
		return e->code;
	if (v > HISTORY_SCHEMA_VERSION)
		return err_set(e, -EPROTO, "history database '%s' has schema version %lld, newer than this thpeval"
			       " knows (%d): upgrade thpeval or pass another --db", h->path, v, HISTORY_SCHEMA_VERSION);
	if (query_int(h, "SELECT count(*) FROM sqlite_master", &ntables, "read", e) ||
	    query_int(h, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('runs', 'metrics')",
		      &ours, "read", e))
		return e->code;
	if (v == 0 && ntables > 0)
		return err_set(e, -EINVAL, "'%s' is an SQLite database but not a thpeval history database: pass another --db",
			       h->path);
	if (v == HISTORY_SCHEMA_VERSION) {
		if (ours != 2)
			return err_set(e, -EINVAL, "'%s' is not a thpeval history database (its tables are missing): move it aside",
				       h->path);
		return 0;
	}
	if (!write) {
		if (v == 0) {
			h->empty = true;
			return 0;
		}
		return err_set(e, -EPROTO, "history database '%s' has the old schema version %lld: the next recorded run upgrades it",
			       h->path, v);
	}
	/* migrate under a write lock; re-read the version inside it (another process may have won) */
	if (exec_sql(h, "BEGIN IMMEDIATE", "lock", e))
		return e->code;
	if (query_int(h, "PRAGMA user_version", &v, "read", e))
		goto rollback;
	for (k = (size_t)v; k < ARRAY_SIZE(migrations); k++)
		if (exec_sql(h, migrations[k], "set up", e))
			goto rollback;
	if (exec_sql(h, "COMMIT", "set up", e))
		goto rollback;
	return 0;
rollback:
	exec_sql(h, "ROLLBACK", "roll back", &(struct err)ERR_INIT);
	return e->code;
}

static void hdb_close(struct hdb *h)
{
	if (h->db)
		sqlite3_close(h->db);
	h->db = NULL;
}

static int hdb_open(struct hdb *h, const char *path, bool write, struct err *e)
{
	struct stat st;
	int rc;

	memset(h, 0, sizeof(*h));
	h->path = path;
	if (write) {
		int fd;

		if (mkdir_parents(path, 0700, e))
			return err_wrap(e, "history database");
		fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			int err = errno;

			return err_set(e, -err, "cannot open history database '%s': %s", path, strerror(err));
		}
		close(fd);
	} else if (stat(path, &st) < 0) {
		int err = errno;

		if (err == ENOENT)
			return err_set(e, -ENOENT, "no history database at '%s' yet: it is created by the first recorded run",
				       path);
		return err_set(e, -err, "cannot open history database '%s': %s", path, strerror(err));
	}
	rc = sqlite3_open_v2(path, &h->db, write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY, NULL);
	if (rc != SQLITE_OK) {
		db_fail(h, rc, "open", e);
		hdb_close(h);
		return e->code;
	}
	sqlite3_extended_result_codes(h->db, 1);
	sqlite3_busy_timeout(h->db, HISTORY_BUSY_MS);
	if (check_schema(h, write, e)) {
		hdb_close(h);
		return e->code;
	}
	return 0;
}

/* ---- append -------------------------------------------------------------------------- */

void history_settings_key(const struct run_settings *s, char *buf, size_t len)
{
	int n;

	n = snprintf(buf, len,
		     "host_thp=%s;guest_thp=%s;workloads=%s;reps=%u;warmup=%u;vcpus=%u;memory_bytes=%llu;"
		     "size_bytes=%llu;accesses=%llu;min_coverage_pct=%.17g;uri=%s",
		     s->host_thp_list, s->guest_thp_list, s->workloads, s->reps, s->warmup, s->vcpus,
		     s->memory_bytes, s->size_bytes, s->accesses, s->min_coverage_pct, s->uri);
	if (n < 0 || (size_t)n >= len)
		buf[len - 1] = '\0';
}

static void bind_num(sqlite3_stmt *st, int i, double v)
{
	if (isfinite(v))
		sqlite3_bind_double(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

static int insert_metric(struct hdb *h, sqlite3_stmt *st, long long run, const struct cell *c,
			 const struct metric *m, struct err *e)
{
	int rc;

	if (m->n == 0)
		return 0;
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_text(st, 2, c->target, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, c->host_thp, -1, SQLITE_STATIC);
	/* the host state is part of the cell's key: a fragmented arm is stored as "ondemand+fragmented" */
	if (c->host_state[0] && strcmp(c->host_state, "fresh")) {
		char pf[2 * RES_NAME_MAX];

		snprintf(pf, sizeof(pf), "%s+%s", c->prefault[0] ? c->prefault : "ondemand", c->host_state);
		sqlite3_bind_text(st, 4, pf, -1, SQLITE_TRANSIENT);
	} else {
		sqlite3_bind_text(st, 4, c->prefault[0] ? c->prefault : "ondemand", -1, SQLITE_STATIC);
	}
	sqlite3_bind_text(st, 5, c->guest_thp, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, c->workload, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, c->variant, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 8, c->valid);
	sqlite3_bind_text(st, 9, m->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 10, (sqlite3_int64)m->s.n);
	bind_num(st, 11, m->s.mean);
	bind_num(st, 12, m->s.sd);
	bind_num(st, 13, m->s.ci95_low);
	bind_num(st, 14, m->s.ci95_high);
	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE)
		return db_fail(h, rc, "write to", e);
	return 0;
}

static int append_run(struct hdb *h, const struct results *r, bool gate_passed, const char *json,
		      size_t json_len, struct err *e)
{
	static const char ins_run[] =
		"INSERT INTO runs (started_unix, finished_unix, recorded_unix, status, gate_passed, thpeval_version,"
		" host_kernel, cpu_model, host_cpus, hypervisor_version, libvirt_version, accel, image_id, settings,"
		" results_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)";
	static const char ins_metric[] =
		"INSERT INTO metrics (run_id, target, host_thp, prefault, guest_thp, workload, variant, valid, metric,"
		" n, mean, sd, ci95_low, ci95_high) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)";
	sqlite3_stmt *st = NULL;
	char settings[1024];
	long long run;
	size_t i, j;
	int rc;

	history_settings_key(&r->settings, settings, sizeof(settings));
	rc = sqlite3_prepare_v2(h->db, ins_run, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(h, rc, "write to", e);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)r->started);
	if (r->finished)
		sqlite3_bind_int64(st, 2, (sqlite3_int64)r->finished);
	else
		sqlite3_bind_null(st, 2);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)time(NULL));
	sqlite3_bind_text(st, 4, r->status, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 5, gate_passed);
	sqlite3_bind_text(st, 6, r->thpeval_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, r->host.kernel, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, r->host.cpu_model, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 9, r->host.cpus);
	sqlite3_bind_text(st, 10, r->hypervisor_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 11, r->libvirt_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 12, r->accel, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 13, r->image_id, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 14, settings, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 15, json, (int)json_len, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return db_fail(h, rc, "write to", e);
	run = sqlite3_last_insert_rowid(h->db);
	rc = sqlite3_prepare_v2(h->db, ins_metric, -1, &st, NULL);
	if (rc != SQLITE_OK)
		return db_fail(h, rc, "write to", e);
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];

		for (j = 0; j < c->nmetrics; j++)
			if (insert_metric(h, st, run, c, &c->metrics[j], e))
				goto fail;
		if (insert_metric(h, st, run, c, &c->host_cov, e) || insert_metric(h, st, run, c, &c->guest_cov, e))
			goto fail;
	}
	sqlite3_finalize(st);
	return 0;
fail:
	sqlite3_finalize(st);
	return e->code;
}

int history_append(const char *db, const struct results *r, bool gate_passed, struct err *e)
{
	struct hdb h;
	char *json = NULL;
	size_t len = 0;
	int rc;

	if (results_to_json_text(r, &json, &len, e))
		return e->code;
	if (len > INT32_MAX) {
		free(json);
		return err_set(e, -EFBIG, "results too large for the history database");
	}
	if (hdb_open(&h, db, true, e)) {
		free(json);
		return e->code;
	}
	rc = exec_sql(&h, "BEGIN IMMEDIATE", "lock", e);
	if (!rc) {
		rc = append_run(&h, r, gate_passed, json, len, e);
		if (!rc)
			rc = exec_sql(&h, "COMMIT", "write to", e);
		if (rc)
			exec_sql(&h, "ROLLBACK", "roll back", &(struct err)ERR_INIT);
	}
	hdb_close(&h);
	free(json);
	return rc;
}

/* ---- baseline ------------------------------------------------------------------------ */

int history_baseline_last(const char *db, const struct results *cur, enum history_match match,
			  struct history_run_ref *ref, struct results *out, struct err *e)
{
	static const char sql[] =
		"SELECT id, started_unix, results_json, host_kernel, hypervisor_version, thpeval_version FROM runs"
		" WHERE gate_passed = 1 AND status = 'complete' AND cpu_model = ?1 AND accel = ?2 AND settings = ?3"
		" AND (?4 = 0 OR (host_kernel = ?5 AND hypervisor_version = ?6 AND libvirt_version = ?7"
		" AND thpeval_version = ?8 AND image_id = ?9))"
		" ORDER BY started_unix DESC, id DESC LIMIT 1";
	sqlite3_stmt *st = NULL;
	char settings[1024], name[PATH_MAX + 64];
	struct hdb h;
	int rc, r = 0;

	results_init(out);
	if (ref)
		memset(ref, 0, sizeof(*ref));
	if (hdb_open(&h, db, false, e))
		return e->code;
	if (h.empty) {
		hdb_close(&h);
		return err_set(e, -ENOENT, "no baseline in '%s': it holds no runs yet", db);
	}
	history_settings_key(&cur->settings, settings, sizeof(settings));
	rc = sqlite3_prepare_v2(h.db, sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		r = db_fail(&h, rc, "read", e);
		goto out;
	}
	sqlite3_bind_text(st, 1, cur->host.cpu_model, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, cur->accel, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, settings, -1, SQLITE_STATIC);
	sqlite3_bind_int(st, 4, match == HISTORY_SAME_STACK);
	sqlite3_bind_text(st, 5, cur->host.kernel, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, cur->hypervisor_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 7, cur->libvirt_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 8, cur->thpeval_version, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 9, cur->image_id, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		r = err_set(e, -ENOENT, "no baseline in '%s': no earlier complete run with the same %s passed its gate",
			    db, match == HISTORY_SAME_STACK ? "setup and software stack" : "CPU, accelerator and settings");
		goto out;
	}
	if (rc != SQLITE_ROW) {
		r = db_fail(&h, rc, "read", e);
		goto out;
	}
	snprintf(name, sizeof(name), "run %lld of '%s'", (long long)sqlite3_column_int64(st, 0), db);
	if (ref) {
		char when[32];
		struct tm tm;

		ref->id = sqlite3_column_int64(st, 0);
		ref->started = (time_t)sqlite3_column_int64(st, 1);
		if (!gmtime_r(&ref->started, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm))
			snprintf(when, sizeof(when), "?");
		if (snprintf(ref->desc, sizeof(ref->desc), "%s (started %s, kernel %s, QEMU %s, thpeval %s)", name,
			     when, (const char *)sqlite3_column_text(st, 3), (const char *)sqlite3_column_text(st, 4),
			     (const char *)sqlite3_column_text(st, 5)) >= (int)sizeof(ref->desc))
			ref->desc[sizeof(ref->desc) - 1] = '\0';
	}
	r = results_load_text((const char *)sqlite3_column_text(st, 2), (size_t)sqlite3_column_bytes(st, 2), name,
			      out, e);
out:
	sqlite3_finalize(st);
	hdb_close(&h);
	return r;
}

/* ---- trend --------------------------------------------------------------------------- */

struct trend_run {
	long long id;
	time_t started;
	char kernel[64], qemu[32];
	bool gate;
	char status[16];
};

static const char *const trend_metrics[] = { "fault_ns_per_4k", "access_ns", "host_huge_pct", "guest_huge_pct" };

struct trend_line {
	long long run;
	bool valid;
	double mean[ARRAY_SIZE(trend_metrics)], half[ARRAY_SIZE(trend_metrics)];
};

static void col_text(sqlite3_stmt *st, int i, char *dst, size_t len)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	snprintf(dst, len, "%s", s ? (const char *)s : "");
}

static double col_num(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

static void trend_flush(FILE *o, const struct trend_line *l, const struct trend_run *runs, size_t nruns)
{
	const struct trend_run *r = NULL;
	char when[32], v[ARRAY_SIZE(trend_metrics)][48];
	struct tm tm;
	size_t i;

	for (i = 0; i < nruns; i++)
		if (runs[i].id == l->run)
			r = &runs[i];
	if (!r)
		return;
	if (!gmtime_r(&r->started, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm))
		snprintf(when, sizeof(when), "?");
	for (i = 0; i < ARRAY_SIZE(trend_metrics); i++) {
		char m[20], h[20];

		fmt_value(m, sizeof(m), l->mean[i]);
		if (i >= 2 || !isfinite(l->half[i])) {
			if (i >= 2 && isfinite(l->mean[i]))
				snprintf(v[i], sizeof(v[i]), "%.1f", l->mean[i]);
			else
				snprintf(v[i], sizeof(v[i]), "%s", m);
			continue;
		}
		fmt_value(h, sizeof(h), l->half[i]);
		snprintf(v[i], sizeof(v[i]), "%s ±%s", m, h);
	}
	fprintf(o, "  %5lld  %-16s  %-20s %-10s %-4s  ", r->id, when, r->kernel, r->qemu,
		strcmp(r->status, "complete") ? r->status : (r->gate ? "pass" : "FAIL"));
	fput_padded(o, v[0], 18, false);
	fputc(' ', o);
	fput_padded(o, v[1], 16, false);
	fprintf(o, " %6s %6s  %s\n", v[2], v[3], l->valid ? "yes" : "NO");
}

static int trend_render(struct hdb *h, const struct history_query *q, FILE *o, struct err *e)
{
	static const char runs_sql[] =
		"SELECT id, started_unix, host_kernel, hypervisor_version, gate_passed, status FROM runs"
		" ORDER BY started_unix DESC, id DESC LIMIT ?1";
	static const char metrics_sql[] =
		"SELECT m.run_id, m.target, m.host_thp, m.prefault, m.guest_thp, m.workload, m.variant, m.valid,"
		" m.metric, m.mean, m.ci95_high"
		" FROM metrics m JOIN (SELECT id, started_unix FROM runs ORDER BY started_unix DESC, id DESC LIMIT ?1) r"
		" ON r.id = m.run_id"
		" WHERE m.metric IN ('fault_ns_per_4k', 'access_ns', 'host_huge_pct', 'guest_huge_pct')"
		" AND (?2 IS NULL OR m.workload = ?2)"
		" ORDER BY m.target, m.host_thp, m.prefault, m.guest_thp, m.workload, m.variant, r.started_unix, m.run_id";
	unsigned last = q && q->last ? q->last : HISTORY_DEFAULT_LAST;
	struct trend_run *runs = NULL;
	struct trend_line line;
	sqlite3_stmt *st = NULL;
	char key[6][RES_NAME_MAX], prev[CELL_LABEL_MAX] = "", label[CELL_LABEL_MAX];
	long long total;
	size_t nruns = 0, ncells = 0, i;
	bool have_line = false;
	int rc, r = 0;

	if (query_int(h, "SELECT count(*) FROM runs", &total, "read", e))
		return e->code;
	if (total == 0) {
		fprintf(o, "no runs recorded in '%s' yet\n", h->path);
		return 0;
	}
	runs = calloc(last, sizeof(*runs));
	if (!runs)
		return err_set(e, -ENOMEM, "out of memory");
	rc = sqlite3_prepare_v2(h->db, runs_sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		r = db_fail(h, rc, "read", e);
		goto out;
	}
	sqlite3_bind_int64(st, 1, last);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && nruns < last) {
		struct trend_run *t = &runs[nruns++];

		t->id = sqlite3_column_int64(st, 0);
		t->started = (time_t)sqlite3_column_int64(st, 1);
		col_text(st, 2, t->kernel, sizeof(t->kernel));
		col_text(st, 3, t->qemu, sizeof(t->qemu));
		t->gate = sqlite3_column_int(st, 4) != 0;
		col_text(st, 5, t->status, sizeof(t->status));
	}
	sqlite3_finalize(st);
	st = NULL;
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		r = db_fail(h, rc, "read", e);
		goto out;
	}
	fprintf(o, "history '%s': the last %zu of %lld run(s), oldest first%s%s\n", h->path, nruns, total,
		q && q->workload ? "; workload " : "", q && q->workload ? q->workload : "");
	rc = sqlite3_prepare_v2(h->db, metrics_sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		r = db_fail(h, rc, "read", e);
		goto out;
	}
	sqlite3_bind_int64(st, 1, last);
	if (q && q->workload)
		sqlite3_bind_text(st, 2, q->workload, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long run = sqlite3_column_int64(st, 0);
		const unsigned char *metric = sqlite3_column_text(st, 8);

		for (i = 0; i < 6; i++)
			col_text(st, 1 + (int)i, key[i], sizeof(key[i]));
		cell_key_label(key[0], key[1], key[2], key[3], key[4], key[5], label, sizeof(label));
		if (have_line && (line.run != run || strcmp(prev, label))) {
			trend_flush(o, &line, runs, nruns);
			have_line = false;
		}
		if (strcmp(prev, label)) {
			fprintf(o, "\ncell %s (host/guest/workload)\n  %5s  %-16s  %-20s %-10s %-4s  %-18s %-16s %6s %6s  %s\n",
				label, "run", "started (UTC)", "host kernel", "QEMU", "gate", "fault ns/4K",
				"access ns", "host%", "guest%", "valid");
			snprintf(prev, sizeof(prev), "%s", label);
			ncells++;
		}
		if (!have_line) {
			memset(&line, 0, sizeof(line));
			line.run = run;
			for (i = 0; i < ARRAY_SIZE(trend_metrics); i++)
				line.mean[i] = line.half[i] = NAN;
			have_line = true;
		}
		line.valid = sqlite3_column_int(st, 7) != 0;
		for (i = 0; i < ARRAY_SIZE(trend_metrics); i++) {
			if (!metric || strcmp((const char *)metric, trend_metrics[i]))
				continue;
			line.mean[i] = col_num(st, 9);
			line.half[i] = col_num(st, 10) - line.mean[i];
		}
	}
	if (rc != SQLITE_DONE) {
		r = db_fail(h, rc, "read", e);
		goto out;
	}
	if (have_line)
		trend_flush(o, &line, runs, nruns);
	if (!ncells)
		fprintf(o, "no cells%s%s in these runs\n", q && q->workload ? " of workload " : "",
			q && q->workload ? q->workload : "");
	else
		fprintf(o, "\nvalues: mean ±95%% CI half-width; gate: whether the run passed its regression gate\n");
out:
	sqlite3_finalize(st);
	free(runs);
	return r;
}

int history_print_trend(const char *db, const struct history_query *q, FILE *out, struct err *e)
{
	struct hdb h;
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int r;

	if (hdb_open(&h, db, false, e))
		return e->code;
	mem = open_memstream(&buf, &len);
	if (!mem) {
		hdb_close(&h);
		return err_set(e, -ENOMEM, "out of memory");
	}
	if (h.empty)
		r = (fprintf(mem, "no runs recorded in '%s' yet\n", db), 0);
	else
		r = trend_render(&h, q, mem, e);
	hdb_close(&h);
	if (fclose(mem) && !r)
		r = err_set(e, -ENOMEM, "out of memory");
	if (!r && len && fwrite(buf, 1, len, out) != len)
		r = err_set(e, -EIO, "cannot write the history table");
	free(buf);
	return r;
}
