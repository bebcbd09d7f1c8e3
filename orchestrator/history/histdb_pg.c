/*
 * histdb_pg: the PostgreSQL backend of histdb.h through libpq: the URI handed
 * to libpq as it is (its own parser; passwords from ~/.pgpass, PGPASSWORD or
 * the URI), a 10 s connect timeout unless the URI sets one, notices
 * swallowed, ?N parameters sent typed as $N, and SQLSTATE 40001
 * (serialization failure) and 40P01 (deadlock) marked for a retry.
 */
#include "orchestrator/history/histdb.h"
#include "orchestrator/history/histdb_target.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

/* pg_type OIDs of the parameter types (catalog/pg_type_d.h is server-side) */
#define PG_INT8OID 20
#define PG_TEXTOID 25
#define PG_FLOAT8OID 701

#define PG_MAX_PARAMS 32

static void quiet_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static int conn_fail(struct histdb *h, const char *what, struct err *e)
{
	char msg[ERR_MSG_MAX];

	snprintf(msg, sizeof(msg), "%s", h->conn ? PQerrorMessage(h->conn) : "out of memory");
	histdb_oneline(msg);
	histdb_scrub(h->t.spec, msg);
	if (!msg[0])
		snprintf(msg, sizeof(msg), "unknown libpq error");
	return err_set(e, -ECONNREFUSED, "cannot %s history database '%s': %s", what, h->t.shown, msg);
}

/* a failed result: the server's primary message and the code its SQLSTATE says */
static int result_fail(struct histdb *h, PGresult *res, const char *what, struct err *e)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	char msg[ERR_MSG_MAX];
	int code = -EIO;

	if (PQstatus(h->conn) == CONNECTION_BAD) {
		conn_fail(h, what, e);
		return err_wrap(e, "lost the connection");
	}
	snprintf(msg, sizeof(msg), "%s", primary ? primary : PQerrorMessage(h->conn));
	histdb_oneline(msg);
	histdb_scrub(h->t.spec, msg);
	if (state && (!strcmp(state, "40001") || !strcmp(state, "40P01"))) {
		h->retry = true;
		code = -EAGAIN;
	} else if (state && (!strcmp(state, "42501") || !strncmp(state, "28", 2))) {
		code = -EACCES;
	} else if (state && !strcmp(state, "53100")) {
		code = -ENOSPC;
	} else if (state && (!strncmp(state, "08", 2) || !strncmp(state, "57P", 3))) {
		code = -ECONNRESET;
	}
	return err_set(e, code, "cannot %s history database '%s': %s%s%s%s", what, h->t.shown, msg,
		       state ? " (SQLSTATE " : "", state ? state : "", state ? ")" : "");
}

static int pg_open(struct histdb *h, bool write, struct err *e)
{
	/* later keywords override earlier ones, and the URI in dbname is expanded in place:
	 * a connect_timeout in the URI wins over this default */
	const char *const keys[] = { "connect_timeout", "fallback_application_name", "dbname", NULL };
	const char *const vals[] = { "10", "thpeval", h->t.spec, NULL };

	(void)write;
	h->conn = PQconnectdbParams(keys, vals, 1);
	if (!h->conn || PQstatus(h->conn) != CONNECTION_OK) {
		conn_fail(h, "connect to", e);
		PQfinish(h->conn);
		h->conn = NULL;
		return e->code;
	}
	PQsetNoticeProcessor(h->conn, quiet_notice, NULL);
	return 0;
}

static void pg_close(struct histdb *h)
{
	if (h->conn)
		PQfinish(h->conn);
	h->conn = NULL;
}

static int pg_exec(struct histdb *h, const char *sql, const char *what, struct err *e)
{
	PGresult *res = PQexec(h->conn, sql);
	ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	int rc = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		rc = result_fail(h, res, what, e);
	PQclear(res);
	return rc;
}

/* "?12" becomes "$12"; the SQL texts have no '?' in literals */
static char *dollar_params(const char *sql)
{
	char *out = strdup(sql), *p;

	for (p = out; p && (p = strchr(p, '?')); p++)
		if (p[1] >= '0' && p[1] <= '9')
			*p = '$';
	return out;
}

static int pg_query(struct histdb *h, const char *sql, const struct histdb_val *p, size_t np,
		    struct histdb_rows *r, const char *what, struct err *e)
{
	char buf[PG_MAX_PARAMS][32];
	const char *vals[PG_MAX_PARAMS];
	Oid types[PG_MAX_PARAMS];
	PGresult *res;
	ExecStatusType st;
	char *q;
	size_t i;

	if (np > PG_MAX_PARAMS)
		return err_set(e, -E2BIG, "internal: %zu parameters, at most %d", np, PG_MAX_PARAMS);
	for (i = 0; i < np; i++) {
		vals[i] = NULL;
		types[i] = 0;	/* NULL: the server infers the type from the context */
		switch (p[i].type) {
		case HISTDB_INT:
			snprintf(buf[i], sizeof(buf[i]), "%lld", p[i].i);
			vals[i] = buf[i];
			types[i] = PG_INT8OID;
			break;
		case HISTDB_NUM:
			types[i] = PG_FLOAT8OID;
			if (isfinite(p[i].d)) {
				snprintf(buf[i], sizeof(buf[i]), "%.17g", p[i].d);
				vals[i] = buf[i];
			}
			break;
		case HISTDB_TEXT:
			types[i] = PG_TEXTOID;
			vals[i] = p[i].s;
			break;
		case HISTDB_NULL:
			break;
		}
	}
	q = dollar_params(sql);
	if (!q)
		return err_set(e, -ENOMEM, "out of memory");
	res = PQexecParams(h->conn, q, (int)np, types, vals, NULL, NULL, 0);
	free(q);
	st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		int rc = result_fail(h, res, what, e);

		PQclear(res);
		return rc;
	}
	r->st = res;
	r->nrows = PQntuples(res);
	r->row = -1;
	return 0;
}

static int pg_next(struct histdb_rows *r, struct err *e)
{
	(void)e;
	if (r->row + 1 >= r->nrows) {
		r->done = true;
		return 0;
	}
	r->row++;
	return 1;
}

static bool pg_isnull(const struct histdb_rows *r, int col)
{
	return r->row < 0 || r->row >= r->nrows || col >= PQnfields(r->st) || PQgetisnull(r->st, r->row, col);
}

static const char *pg_text(const struct histdb_rows *r, int col)
{
	return PQgetvalue(r->st, r->row, col);
}

static void pg_rows_release(struct histdb_rows *r)
{
	PQclear(r->st);
	r->st = NULL;
}

const struct histdb_ops histdb_pg_ops = {
	.open = pg_open,
	.close = pg_close,
	.exec = pg_exec,
	.query = pg_query,
	.next = pg_next,
	.isnull = pg_isnull,
	.text = pg_text,
	.num = NULL,		/* float8 text is exact (shortest round-trip form, PostgreSQL 12+) */
	.rows_release = pg_rows_release,
	.set_legacy_version = NULL,
	.begin_sql = "BEGIN",
	.lock_sql = "SELECT pg_advisory_xact_lock(hashtext('thpeval history schema'))",
	.has_table_sql = "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()"
			 " AND tablename = ?1",
	.count_tables_sql = "SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = current_schema()",
};
