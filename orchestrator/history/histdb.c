#include "orchestrator/history/histdb.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"

/* ---- dispatch --------------------------------------------------------------------- */

int histdb_open(const struct histdb_target *t, bool write, struct histdb **out, struct err *e)
{
	struct histdb *h = calloc(1, sizeof(*h));

	*out = NULL;
	if (!h)
		return err_set(e, -ENOMEM, "out of memory");
	h->t = *t;
	h->ops = t->kind == HISTDB_POSTGRES ? &histdb_pg_ops : &histdb_sqlite_ops;
	if (h->ops->open(h, write, e)) {
		free(h);
		return e->code;
	}
	*out = h;
	return 0;
}

void histdb_close(struct histdb *h)
{
	if (!h)
		return;
	h->ops->close(h);
	free(h);
}

enum histdb_kind histdb_kind(const struct histdb *h)
{
	return h->t.kind;
}

const char *histdb_shown(const struct histdb *h)
{
	return h->t.shown;
}

int histdb_exec(struct histdb *h, const char *sql, const char *what, struct err *e)
{
	h->retry = false;
	return h->ops->exec(h, sql, what, e);
}

int histdb_query(struct histdb *h, const char *sql, const struct histdb_val *p, size_t np,
		 struct histdb_rows **rows, const char *what, struct err *e)
{
	struct histdb_rows *r = calloc(1, sizeof(*r));
	int rc;

	if (rows)
		*rows = NULL;
	if (!r)
		return err_set(e, -ENOMEM, "out of memory");
	r->h = h;
	h->retry = false;
	rc = h->ops->query(h, sql, p, np, r, what, e);
	if (rc || !rows) {
		histdb_rows_free(r);
		return rc;
	}
	*rows = r;
	return 0;
}

int histdb_next(struct histdb_rows *r, struct err *e)
{
	if (r->done)
		return 0;
	r->h->retry = false;
	return r->h->ops->next(r, e);
}

bool histdb_isnull(const struct histdb_rows *r, int col)
{
	return r->h->ops->isnull(r, col);
}

const char *histdb_text(const struct histdb_rows *r, int col)
{
	const char *s = r->h->ops->isnull(r, col) ? NULL : r->h->ops->text(r, col);

	return s ? s : "";
}

long long histdb_int(const struct histdb_rows *r, int col)
{
	return histdb_isnull(r, col) ? 0 : strtoll(histdb_text(r, col), NULL, 10);
}

double histdb_num(const struct histdb_rows *r, int col)
{
	if (histdb_isnull(r, col))
		return NAN;
	return r->h->ops->num ? r->h->ops->num(r, col) : strtod(histdb_text(r, col), NULL);
}

void histdb_rows_free(struct histdb_rows *r)
{
	if (!r)
		return;
	r->h->ops->rows_release(r);
	free(r);
}

int histdb_query_int(struct histdb *h, const char *sql, const struct histdb_val *p, size_t np, long long *out,
		     const char *what, struct err *e)
{
	struct histdb_rows *r;
	int rc = histdb_query(h, sql, p, np, &r, what, e);

	if (rc)
		return rc;
	rc = histdb_next(r, e);
	if (rc == 1) {
		*out = histdb_int(r, 0);
		rc = 0;
	} else if (rc == 0) {
		rc = err_set(e, -EIO, "cannot %s history database '%s': a query returned no row", what, h->t.shown);
	}
	histdb_rows_free(r);
	return rc;
}

/* ---- transactions ----------------------------------------------------------------- */

int histdb_transaction(struct histdb *h, histdb_tx_fn fn, void *ctx, struct err *e)
{
	int64_t start = mono_ms();
	unsigned attempt;

	for (attempt = 0;; attempt++) {
		struct err te = ERR_INIT;
		struct timespec pause;
		unsigned ms;
		int rc;

		rc = histdb_exec(h, h->ops->begin_sql, "lock", &te);
		if (!rc)
			rc = fn(h, ctx, &te);
		if (!rc)
			rc = histdb_exec(h, "COMMIT", "write to", &te);
		if (!rc)
			return 0;
		{
			bool retry = h->retry;

			histdb_exec(h, "ROLLBACK", "roll back", &(struct err)ERR_INIT);
			h->retry = retry;
		}
		if (!h->retry || mono_ms() - start >= HISTDB_RETRY_MS) {
			err_set(e, te.code, "%s", te.msg);
			return e->code;
		}
		/* 5, 10, 20 ... 160 ms, and a jitter so that two writers fall apart */
		ms = (5u << (attempt < 5 ? attempt : 5)) + (unsigned)(getpid() + 3 * attempt) % 11;
		pause.tv_sec = 0;
		pause.tv_nsec = (long)ms * 1000000L;
		nanosleep(&pause, NULL);
	}
}

int histdb_lock_schema(struct histdb *h, struct err *e)
{
	return h->ops->lock_sql ? histdb_exec(h, h->ops->lock_sql, "lock", e) : 0;
}

int histdb_legacy_version(struct histdb *h, long long *v, struct err *e)
{
	*v = 0;
	if (!h->ops->legacy_version_sql)
		return 0;
	return histdb_query_int(h, h->ops->legacy_version_sql, NULL, 0, v, "read", e);
}

int histdb_set_legacy_version(struct histdb *h, long long v, struct err *e)
{
	return h->ops->set_legacy_version ? h->ops->set_legacy_version(h, v, e) : 0;
}

int histdb_has_table(struct histdb *h, const char *name, bool *has, struct err *e)
{
	struct histdb_val p[] = { HV_TEXT(name) };
	long long n = 0;
	int rc = histdb_query_int(h, h->ops->has_table_sql, p, 1, &n, "read", e);

	*has = !rc && n > 0;
	return rc;
}

int histdb_count_tables(struct histdb *h, long long *n, struct err *e)
{
	return histdb_query_int(h, h->ops->count_tables_sql, NULL, 0, n, "read", e);
}
