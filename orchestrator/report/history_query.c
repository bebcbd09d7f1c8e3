/*
 * The history's queries for people: the trend of the headline metrics per
 * cell (thpeval history) and every host's runs (the fleet page); the schema,
 * appending, importing and the baseline are history/history.c.
 */
#include "orchestrator/history/history.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/array.h"
#include "lib/textesc.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/model/results_load.h"
#include "orchestrator/history/histdb.h"

#include "orchestrator/history/history_internal.h"

/* ---- trend --------------------------------------------------------------------------- */

struct trend_run {
	long long id;
	time_t started;
	char host[65], kernel[64], qemu[32];
	bool gate;
	char status[16];
};

static const char *const trend_metrics[] = { "fault_ns_per_4k", "access_ns", "host_huge_pct", "guest_huge_pct" };

struct trend_line {
	long long run;
	bool valid;
	double mean[ARRAY_SIZE(trend_metrics)], half[ARRAY_SIZE(trend_metrics)];
};

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
		if (l->mean[i] > 0) {	/* the geometric mean's interval on the log scale, as a ratio */
			snprintf(v[i], sizeof(v[i]), "%s ±%.1f%%", m, l->half[i] / l->mean[i] * 100);
			continue;
		}
		fmt_value(h, sizeof(h), l->half[i]);
		snprintf(v[i], sizeof(v[i]), "%s ±%s", m, h);
	}
	fprintf(o, "  %5lld  %-16s  %-12s %-20s %-10s %-4s  ", r->id, when, r->host[0] ? r->host : "-", r->kernel,
		r->qemu, strcmp(r->status, "complete") ? r->status : (r->gate ? "pass" : "FAIL"));
	fput_padded(o, v[0], 18, false);
	fputc(' ', o);
	fput_padded(o, v[1], 16, false);
	fprintf(o, " %6s %6s  %s\n", v[2], v[3], l->valid ? "yes" : "NO");
}

/* the last runs (of host_p, or all), newest first, into runs[0 .. *nruns) */
static int trend_runs_read(struct histdb *h, unsigned last, struct histdb_val host_p, struct trend_run *runs,
			   size_t *nruns, struct err *e)
{
	static const char runs_sql[] =
		"SELECT id, started_unix, host_kernel, hypervisor_version, gate_passed, status, host_name FROM runs"
		" WHERE (CAST(?2 AS TEXT) IS NULL OR host_name = ?2)"
		" ORDER BY started_unix DESC, id DESC LIMIT ?1";
	struct histdb_val p[] = { HV_INT(last), host_p };
	struct histdb_rows *rows = NULL;

	if (histdb_query(h, runs_sql, p, ARRAY_SIZE(p), &rows, "read", e))
		return e->code;
	while (*nruns < last && histdb_next(rows, e) == 1) {
		struct trend_run *t = &runs[(*nruns)++];

		t->id = histdb_int(rows, 0);
		t->started = (time_t)histdb_int(rows, 1);
		snprintf(t->kernel, sizeof(t->kernel), "%s", histdb_text(rows, 2));
		snprintf(t->qemu, sizeof(t->qemu), "%s", histdb_text(rows, 3));
		t->gate = histdb_int(rows, 4) != 0;
		snprintf(t->status, sizeof(t->status), "%s", histdb_text(rows, 5));
		snprintf(t->host, sizeof(t->host), "%s", histdb_text(rows, 6));
	}
	histdb_rows_free(rows);
	return err_isset(e) ? e->code : 0;
}

/* a cell's title and the columns' header */
static void trend_cell_head(FILE *o, const char *label)
{
	fprintf(o, "\ncell %s (host/guest/workload)\n  %5s  %-16s  %-12s %-20s %-10s %-4s  %-18s %-16s %6s %6s  %s\n",
		label, "run", "started (UTC)", "host", "host kernel", "QEMU", "gate", "fault ns/4K",
		"access ns", "host%", "guest%", "valid");
}

/* the headline metrics of those runs, one table per cell, one line per run; *ncells the tables */
static int trend_cells_print(struct histdb *h, FILE *o, unsigned last, struct histdb_val wl_p,
			     struct histdb_val host_p, const struct trend_run *runs, size_t nruns, size_t *ncells,
			     struct err *e)
{
	static const char metrics_sql[] =
		"SELECT m.run_id, m.target, m.host_thp, m.prefault, m.guest_thp, m.workload, m.variant, m.valid,"
		" m.metric, m.mean, m.ci95_high"
		" FROM metrics m JOIN (SELECT id, started_unix FROM runs WHERE (CAST(?3 AS TEXT) IS NULL OR host_name = ?3)"
		" ORDER BY started_unix DESC, id DESC LIMIT ?1) r"
		" ON r.id = m.run_id"
		" WHERE m.metric IN ('fault_ns_per_4k', 'access_ns', 'host_huge_pct', 'guest_huge_pct')"
		" AND (CAST(?2 AS TEXT) IS NULL OR m.workload = ?2)"
		" ORDER BY m.target, m.host_thp, m.prefault, m.guest_thp, m.workload, m.variant, r.started_unix, m.run_id";
	struct histdb_val p[] = { HV_INT(last), wl_p, host_p };
	struct histdb_rows *rows = NULL;
	struct trend_line line;
	char key[6][RES_NAME_MAX], prev[CELL_LABEL_MAX] = "", label[CELL_LABEL_MAX];
	bool have_line = false;
	size_t i;
	int rc;

	if (histdb_query(h, metrics_sql, p, ARRAY_SIZE(p), &rows, "read", e))
		return e->code;
	while ((rc = histdb_next(rows, e)) == 1) {
		long long run = histdb_int(rows, 0);
		const char *metric = histdb_text(rows, 8);

		for (i = 0; i < 6; i++)
			snprintf(key[i], sizeof(key[i]), "%s", histdb_text(rows, 1 + (int)i));
		cell_key_label(key[0], key[1], key[2], key[3], key[4], key[5], label, sizeof(label));
		if (have_line && (line.run != run || strcmp(prev, label))) {
			trend_flush(o, &line, runs, nruns);
			have_line = false;
		}
		if (strcmp(prev, label)) {
			trend_cell_head(o, label);
			snprintf(prev, sizeof(prev), "%s", label);
			(*ncells)++;
		}
		if (!have_line) {
			memset(&line, 0, sizeof(line));
			line.run = run;
			for (i = 0; i < ARRAY_SIZE(trend_metrics); i++)
				line.mean[i] = line.half[i] = NAN;
			have_line = true;
		}
		line.valid = histdb_int(rows, 7) != 0;
		for (i = 0; i < ARRAY_SIZE(trend_metrics); i++) {
			if (strcmp(metric, trend_metrics[i]))
				continue;
			line.mean[i] = histdb_num(rows, 9);
			line.half[i] = histdb_num(rows, 10) - line.mean[i];
		}
	}
	histdb_rows_free(rows);
	if (rc < 0)
		return rc;
	if (have_line)
		trend_flush(o, &line, runs, nruns);
	return 0;
}

static int trend_render(struct histdb *h, const struct history_query *q, FILE *o, struct err *e)
{
	static const char count_sql[] =
		"SELECT count(*) FROM runs WHERE (CAST(?1 AS TEXT) IS NULL OR host_name = ?1)";
	unsigned last = q && q->last ? q->last : HISTORY_DEFAULT_LAST;
	const char *host = q ? q->host : NULL, *workload = q ? q->workload : NULL;
	struct histdb_val host_p = host ? HV_TEXT(host) : HV_NULL;
	struct histdb_val wl_p = workload ? HV_TEXT(workload) : HV_NULL;
	struct trend_run *runs = NULL;
	long long total;
	size_t nruns = 0, ncells = 0;
	int r;

	if (histdb_query_int(h, count_sql, &host_p, 1, &total, "read", e))
		return e->code;
	if (total == 0) {
		if (host)
			fprintf(o, "no runs of host %s recorded in '%s' yet\n", host, histdb_shown(h));
		else
			fprintf(o, "no runs recorded in '%s' yet\n", histdb_shown(h));
		return 0;
	}
	runs = calloc(last, sizeof(*runs));
	if (!runs)
		return err_set(e, -ENOMEM, "out of memory");
	r = trend_runs_read(h, last, host_p, runs, &nruns, e);
	if (r)
		goto out;
	fprintf(o, "history '%s': the last %zu of %lld run(s)%s%s, oldest first%s%s\n", histdb_shown(h), nruns, total,
		host ? " of host " : "", host ? host : "", workload ? "; workload " : "", workload ? workload : "");
	r = trend_cells_print(h, o, last, wl_p, host_p, runs, nruns, &ncells, e);
	if (r)
		goto out;
	if (!ncells)
		fprintf(o, "no cells%s%s in these runs\n", workload ? " of workload " : "", workload ? workload : "");
	else
		fprintf(o, "\nvalues: mean ±95%% CI half-width; gate: whether the run passed its regression gate\n");
out:
	free(runs);
	return r;
}

int history_print_trend(const char *db, const struct history_query *q, FILE *out, struct err *e)
{
	struct histdb *h;
	char *buf = NULL;
	size_t len = 0;
	bool empty;
	FILE *mem;
	int r;

	if (hopen(db, false, &h, &empty, e))
		return e->code;
	mem = open_memstream(&buf, &len);
	if (!mem) {
		histdb_close(h);
		return err_set(e, -ENOMEM, "out of memory");
	}
	if (empty)
		r = (fprintf(mem, "no runs recorded in '%s' yet\n", histdb_shown(h)), 0);
	else
		r = trend_render(h, q, mem, e);
	histdb_close(h);
	if (fclose(mem) && !r)
		r = err_set(e, -ENOMEM, "out of memory");
	/* names, versions and reasons come from recorded results.json files */
	if (!r && textesc_write(out, buf, len, TEXTESC_KEEP_LINES))
		r = err_set(e, -EIO, "cannot write the history table");
	free(buf);
	return r;
}

/* ---- hosts (the fleet page) ---------------------------------------------------------- */

void history_hosts_free(struct history_host *h, size_t n)
{
	size_t i, j;

	for (i = 0; h && i < n; i++) {
		for (j = 0; j < h[i].n; j++)
			free(h[i].runs[j].results_json);
		free(h[i].runs);
	}
	free(h);
}

static int cmp_host(const void *a, const void *b)
{
	return strcmp(((const struct history_host *)a)->name, ((const struct history_host *)b)->name);
}

static int host_add(struct history_host **v, size_t *n, const char *name, struct err *e)
{
	struct history_host *nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return err_set(e, -ENOMEM, "out of memory");
	*v = nv;
	memset(&nv[*n], 0, sizeof(nv[*n]));
	snprintf(nv[*n].name, sizeof(nv[*n].name), "%s", name);
	(*n)++;
	return 0;
}

static int host_runs_load(struct histdb *h, struct history_host *host, unsigned last, struct err *e)
{
	static const char sql[] =
		"SELECT id, started_unix, cpu_model, host_kernel, status, gate_passed, results_json, gate_verdict,"
		" change_why FROM runs"
		" WHERE host_name = ?1 ORDER BY started_unix DESC, id DESC LIMIT ?2";
	struct histdb_val p[] = { HV_TEXT(host->name), HV_INT(last) };
	struct histdb_rows *rows = NULL;
	int rc;

	if (histdb_query_int(h, "SELECT count(*) FROM runs WHERE host_name = ?1", p, 1, &host->nruns, "read", e))
		return e->code;
	if (!host->nruns)
		return 0;
	host->runs = calloc(last, sizeof(*host->runs));
	if (!host->runs)
		return err_set(e, -ENOMEM, "out of memory");
	if (histdb_query(h, sql, p, ARRAY_SIZE(p), &rows, "read", e))
		return e->code;
	while (host->n < last && (rc = histdb_next(rows, e)) == 1) {
		struct history_run_row *r = &host->runs[host->n];
		char *json;

		r->id = histdb_int(rows, 0);
		r->started = (time_t)histdb_int(rows, 1);
		snprintf(r->cpu_model, sizeof(r->cpu_model), "%s", histdb_text(rows, 2));
		snprintf(r->kernel, sizeof(r->kernel), "%s", histdb_text(rows, 3));
		snprintf(r->status, sizeof(r->status), "%s", histdb_text(rows, 4));
		r->gate_passed = histdb_int(rows, 5) != 0;
		snprintf(r->gate_verdict, sizeof(r->gate_verdict), "%s", histdb_text(rows, 7));
		snprintf(r->change_why, sizeof(r->change_why), "%s", histdb_text(rows, 8));
		/* into a local, checked, then stored: gcc 12's -fanalyzer loses a pointer stored
		 * in an array element and read back from it there, and calls it a leak */
		json = strdup(histdb_text(rows, 6));
		if (!json) {
			err_set(e, -ENOMEM, "out of memory");
			break;
		}
		r->results_json = json;
		host->n++;
	}
	histdb_rows_free(rows);
	return err_isset(e) ? e->code : 0;
}

int history_hosts_load(const char *db, const char *const *names, size_t nnames, unsigned last,
		       struct history_host **out, size_t *nout, struct err *e)
{
	struct histdb_rows *rows = NULL;
	struct history_host *v = NULL;
	struct histdb *h = NULL;
	size_t n = 0, i;
	bool empty = false;
	int rc = 0;

	*out = NULL;
	*nout = 0;
	if (!last)
		last = HISTORY_DEFAULT_LAST;
	if (hopen(db, false, &h, &empty, e))
		return e->code;
	for (i = 0; i < nnames && !rc; i++)
		rc = host_add(&v, &n, names[i], e);
	if (!rc && !nnames && !empty) {
		if (histdb_query(h, "SELECT DISTINCT host_name FROM runs ORDER BY host_name", NULL, 0, &rows, "read", e))
			rc = e->code;
		while (!rc && (rc = histdb_next(rows, e)) == 1)
			rc = host_add(&v, &n, histdb_text(rows, 0), e);
		histdb_rows_free(rows);
		if (!rc && n > 1)	/* by strcmp, so that both backends list hosts alike; v is NULL when n is 0 */
			qsort(v, n, sizeof(*v), cmp_host);
	}
	for (i = 0; i < n && !rc && !empty; i++)
		rc = host_runs_load(h, &v[i], last, e);
	histdb_close(h);
	if (rc) {
		history_hosts_free(v, n);
		return rc;
	}
	*out = v;
	*nout = n;
	return 0;
}
