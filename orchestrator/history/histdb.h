/*
 * histdb: the history database behind one small interface, the same on
 * SQLite (a file path) and PostgreSQL (a URI, through libpq): open/close,
 * statements with ?N parameters and typed rows, write transactions retried
 * on conflicts. history.c owns the SQL, histdb_sqlite.c and histdb_pg.c are
 * the backends, histdb_target.h the --db value. Never prints, never exits.
 */
#ifndef THPEVAL_ORCH_HISTDB_H
#define THPEVAL_ORCH_HISTDB_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"
#include "orchestrator/history/histdb_target.h"

/* a write transaction that fails on a lock or serialization conflict is run again until this */
#define HISTDB_RETRY_MS 5000

/* a statement parameter: ?1 is p[0] */
enum histdb_type { HISTDB_NULL, HISTDB_INT, HISTDB_NUM, HISTDB_TEXT };
struct histdb_val {
	enum histdb_type type;
	long long i;
	double d;			/* not finite: stored as NULL */
	const char *s;			/* NUL-terminated; NULL: stored as NULL */
};
#define HV_NULL ((struct histdb_val){ .type = HISTDB_NULL })
#define HV_INT(x) ((struct histdb_val){ .type = HISTDB_INT, .i = (long long)(x) })
#define HV_NUM(x) ((struct histdb_val){ .type = HISTDB_NUM, .d = (x) })
#define HV_TEXT(x) ((struct histdb_val){ .type = HISTDB_TEXT, .s = (x) })

struct histdb;
struct histdb_rows;

/*
 * Connect. SQLite: write creates the file (mode 0600, missing parent
 * directories 0700, never through a symbolic link); a read of a missing file is
 * -ENOENT and creates nothing. PostgreSQL: a server that is down or refuses
 * the login is -ECONNREFUSED with libpq's reason on one line.
 */
int histdb_open(const struct histdb_target *t, bool write, struct histdb **out, struct err *e);
void histdb_close(struct histdb *h);		/* NULL-tolerant */
enum histdb_kind histdb_kind(const struct histdb *h);
const char *histdb_shown(const struct histdb *h);

/* one or more statements without parameters (schema steps); what: "read", "write to", ... */
int histdb_exec(struct histdb *h, const char *sql, const char *what, struct err *e);
/*
 * One statement with parameters ?1..?N (written so, whatever the backend).
 * rows NULL: a statement whose rows are not wanted. Else *rows is walked with
 * histdb_next and freed with histdb_rows_free.
 */
int histdb_query(struct histdb *h, const char *sql, const struct histdb_val *p, size_t np,
		 struct histdb_rows **rows, const char *what, struct err *e);
/* 1: a row is there; 0: no more; < 0: failure */
int histdb_next(struct histdb_rows *r, struct err *e);
bool histdb_isnull(const struct histdb_rows *r, int col);
long long histdb_int(const struct histdb_rows *r, int col);	/* 0 for NULL */
double histdb_num(const struct histdb_rows *r, int col);	/* NAN for NULL */
const char *histdb_text(const struct histdb_rows *r, int col);	/* "" for NULL */
void histdb_rows_free(struct histdb_rows *r);			/* NULL-tolerant */
/* the first column of the first row of a query as an integer */
int histdb_query_int(struct histdb *h, const char *sql, const struct histdb_val *p, size_t np, long long *out,
		     const char *what, struct err *e);

/*
 * Run fn inside one write transaction (SQLite: BEGIN IMMEDIATE, so writers
 * queue on the busy timeout instead of deadlocking; PostgreSQL: BEGIN). On a
 * conflict the backend calls retryable (SQLite busy or locked, PostgreSQL
 * serialization failure or deadlock) everything is rolled back and fn runs
 * again, with a short growing pause, until HISTDB_RETRY_MS have passed; any
 * other failure rolls back and returns. fn must start from scratch each time.
 */
typedef int (*histdb_tx_fn)(struct histdb *h, void *ctx, struct err *e);
int histdb_transaction(struct histdb *h, histdb_tx_fn fn, void *ctx, struct err *e);

/*
 * Schema bookkeeping the backends differ in. Inside a write transaction,
 * histdb_lock_schema makes concurrent migrations take turns (PostgreSQL: a
 * transaction-scoped advisory lock; SQLite: BEGIN IMMEDIATE already did).
 * The legacy version is SQLite's PRAGMA user_version, which thpeval kept
 * before the schema_version table and still keeps in step (so an older
 * thpeval refuses a newer history); PostgreSQL has none (0).
 */
int histdb_lock_schema(struct histdb *h, struct err *e);
int histdb_legacy_version(struct histdb *h, long long *v, struct err *e);
int histdb_set_legacy_version(struct histdb *h, long long v, struct err *e);
/* whether a table of this name is in the database (PostgreSQL: in the current schema) */
int histdb_has_table(struct histdb *h, const char *name, bool *has, struct err *e);
/* tables of any name (SQLite; PostgreSQL: in the current schema) */
int histdb_count_tables(struct histdb *h, long long *n, struct err *e);

/* ---- for the backends ------------------------------------------------------------- */

struct histdb_ops {
	int (*open)(struct histdb *h, bool write, struct err *e);
	void (*close)(struct histdb *h);
	int (*exec)(struct histdb *h, const char *sql, const char *what, struct err *e);
	int (*query)(struct histdb *h, const char *sql, const struct histdb_val *p, size_t np,
		     struct histdb_rows *rows, const char *what, struct err *e);
	int (*next)(struct histdb_rows *r, struct err *e);
	bool (*isnull)(const struct histdb_rows *r, int col);
	const char *(*text)(const struct histdb_rows *r, int col);
	double (*num)(const struct histdb_rows *r, int col);	/* NULL: strtod of text */
	void (*rows_release)(struct histdb_rows *r);
	int (*set_legacy_version)(struct histdb *h, long long v, struct err *e);
	const char *begin_sql;		/* opens a write transaction */
	const char *lock_sql;		/* serializes schema changes inside one; NULL: nothing to do */
	const char *has_table_sql;	/* count(*) of tables named ?1 */
	const char *count_tables_sql;	/* count(*) of all tables */
	const char *legacy_version_sql;	/* the schema version before the table; NULL: none (0) */
};

struct histdb {
	const struct histdb_ops *ops;
	struct histdb_target t;
	void *conn;			/* sqlite3 * or PGconn * */
	bool retry;			/* the last failure was a lock or serialization conflict */
};

struct histdb_rows {
	struct histdb *h;
	void *st;			/* sqlite3_stmt * or PGresult * */
	int row, nrows;			/* the current row (-1 before the first); PostgreSQL: how many */
	bool done;
};

extern const struct histdb_ops histdb_sqlite_ops;
extern const struct histdb_ops histdb_pg_ops;

#endif
