/*
 * histdb_sqlite: the SQLite backend of histdb.h (sqlite3 C API, prepared
 * statements only): the file created 0600 in 0700 directories, never through a
 * symbolic link; the busy timeout makes writers queue; busy and locked are the
 * conflicts histdb_transaction retries.
 */
#include "orchestrator/history/histdb.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fstree.h"

/* how long a statement waits for another connection's lock */
#define SQLITE_BUSY_MS HISTDB_RETRY_MS

static int fail(struct histdb *h, int rc, const char *what, struct err *e)
{
	sqlite3 *db = h->conn;
	const char *path = h->t.shown;

	switch (rc & 0xff) {
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		h->retry = true;
		return err_set(e, -EBUSY, "database '%s' is locked by another thpeval: try again", path);
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return err_set(e, -EINVAL, "'%s' is not a thpeval history database (%s): move it aside; "
			       "the next recorded run starts a new one", path, sqlite3_errstr(rc));
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_CANTOPEN:
		return err_set(e, -EACCES, "cannot %s history database '%s': %s: check its permissions or pass --db",
			       what, path, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
	case SQLITE_FULL:
		return err_set(e, -ENOSPC, "cannot %s history database '%s': the disk is full", what, path);
	}
	return err_set(e, -EIO, "cannot %s history database '%s': %s", what, path,
		       db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
}

static void sq_close(struct histdb *h)
{
	if (h->conn)
		sqlite3_close(h->conn);
	h->conn = NULL;
}

static int sq_open(struct histdb *h, bool write, struct err *e)
{
	const char *path = h->t.spec;
	sqlite3 *db = NULL;
	struct stat st;
	int rc;

	/* SQLite would block on a FIFO: the type is checked before it opens anything */
	rc = check_regular(path, "history database", 0, e);
	if (rc && rc != -ENOENT)
		return rc;
	if (write) {
		int fd;

		if (mkdir_parents(path, 0700, e))
			return err_wrap(e, "history database");
		fd = open(path, O_RDWR | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0) {
			int err = errno;

			return err_set(e, -err, "cannot open history database '%s': %s", path, strerror(err));
		}
		/* what was opened, should it have been swapped since the check */
		if (fstat(fd, &st) < 0)
			st.st_mode = 0;
		close(fd);
		if (!S_ISREG(st.st_mode))
			return err_set(e, -EINVAL, "history database '%s' is %s, not a regular file", path,
				       file_kind(st.st_mode));
	} else if (rc == -ENOENT) {
		return err_set(e, -ENOENT, "no history database at '%s' yet: it is created by the first recorded run",
			       path);
	}
	rc = sqlite3_open_v2(path, &db, write ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY, NULL);
	h->conn = db;
	if (rc != SQLITE_OK) {
		fail(h, rc, "open", e);
		sq_close(h);
		return e->code;
	}
	sqlite3_extended_result_codes(db, 1);
	sqlite3_busy_timeout(db, SQLITE_BUSY_MS);
	return 0;
}

static int sq_exec(struct histdb *h, const char *sql, const char *what, struct err *e)
{
	const char *tail = sql;

	while (tail && *tail) {
		sqlite3_stmt *st = NULL;
		int rc = sqlite3_prepare_v2(h->conn, tail, -1, &st, &tail);

		if (rc != SQLITE_OK)
			return fail(h, rc, what, e);
		if (!st)	/* whitespace or comment */
			break;
		while ((rc = sqlite3_step(st)) == SQLITE_ROW)
			;
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE)
			return fail(h, rc, what, e);
	}
	return 0;
}

static int sq_query(struct histdb *h, const char *sql, const struct histdb_val *p, size_t np,
		    struct histdb_rows *r, const char *what, struct err *e)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc = sqlite3_prepare_v2(h->conn, sql, -1, &st, NULL);

	if (rc != SQLITE_OK)
		return fail(h, rc, what, e);
	for (i = 0; i < np && rc == SQLITE_OK; i++) {
		int k = (int)i + 1;

		switch (p[i].type) {
		case HISTDB_INT:
			rc = sqlite3_bind_int64(st, k, p[i].i);
			break;
		case HISTDB_NUM:
			rc = isfinite(p[i].d) ? sqlite3_bind_double(st, k, p[i].d) : sqlite3_bind_null(st, k);
			break;
		case HISTDB_TEXT:
			rc = p[i].s ? sqlite3_bind_text(st, k, p[i].s, -1, SQLITE_STATIC) : sqlite3_bind_null(st, k);
			break;
		case HISTDB_NULL:
			rc = sqlite3_bind_null(st, k);
			break;
		}
	}
	if (rc != SQLITE_OK) {
		sqlite3_finalize(st);
		return fail(h, rc, what, e);
	}
	r->st = st;
	/* the first step runs the statement: a write is done here even when nobody reads its rows */
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		r->done = true;
	} else if (rc != SQLITE_ROW) {
		fail(h, rc, what, e);
		return e->code;
	}
	r->row = -1;	/* the stepped row is handed out by the first next */
	return 0;
}

static int sq_next(struct histdb_rows *r, struct err *e)
{
	int rc;

	if (r->row == -1) {
		r->row = 0;
		return 1;
	}
	rc = sqlite3_step(r->st);
	if (rc == SQLITE_ROW)
		return 1;
	r->done = true;
	if (rc == SQLITE_DONE)
		return 0;
	return fail(r->h, rc, "read", e);
}

static bool sq_isnull(const struct histdb_rows *r, int col)
{
	return sqlite3_column_type(r->st, col) == SQLITE_NULL;
}

static const char *sq_text(const struct histdb_rows *r, int col)
{
	return (const char *)sqlite3_column_text(r->st, col);
}

static double sq_num(const struct histdb_rows *r, int col)
{
	return sqlite3_column_double(r->st, col);
}

static void sq_rows_release(struct histdb_rows *r)
{
	if (r->st)
		sqlite3_finalize(r->st);
	r->st = NULL;
}

static int sq_set_legacy_version(struct histdb *h, long long v, struct err *e)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "PRAGMA user_version = %lld", v);
	return sq_exec(h, sql, "set up", e);
}

const struct histdb_ops histdb_sqlite_ops = {
	.open = sq_open,
	.close = sq_close,
	.exec = sq_exec,
	.query = sq_query,
	.next = sq_next,
	.isnull = sq_isnull,
	.text = sq_text,
	.num = sq_num,
	.rows_release = sq_rows_release,
	.set_legacy_version = sq_set_legacy_version,
	.begin_sql = "BEGIN IMMEDIATE",
	.lock_sql = NULL,
	.has_table_sql = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
	.count_tables_sql = "SELECT count(*) FROM sqlite_master",
	.legacy_version_sql = "PRAGMA user_version",
};
