#include "orchestrator/history/histdb.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libpq-fe.h>

#include "lib/clock.h"

/* ---- the target ------------------------------------------------------------------- */

static const char *const pg_prefixes[] = { "postgresql://", "postgres://" };

/* length of a leading "scheme://", 0 when there is none */
static size_t scheme_len(const char *s)
{
	size_t n = 0;

	if (!isalpha((unsigned char)s[0]))
		return 0;
	while (isalnum((unsigned char)s[n]) || s[n] == '+' || s[n] == '-' || s[n] == '.')
		n++;
	return strncmp(s + n, "://", 3) ? 0 : n + 3;
}

/* a bounded output string: what does not fit is cut, never overrun */
struct outbuf {
	char *p;
	size_t len, o;
};

static void ob_put(struct outbuf *b, const char *s, size_t n)
{
	if (b->o + n >= b->len)
		n = b->len - 1 - b->o;
	memcpy(b->p + b->o, s, n);
	b->o += n;
	b->p[b->o] = '\0';
}

static void ob_puts(struct outbuf *b, const char *s)
{
	ob_put(b, s, strlen(s));
}

/* s percent-encoded but for letters, digits and the characters in keep */
static void ob_put_enc(struct outbuf *b, const char *s, const char *keep)
{
	for (; *s; s++) {
		char x[4];

		if (isalnum((unsigned char)*s) || strchr("-._~", *s) || strchr(keep, *s)) {
			ob_put(b, s, 1);
		} else {
			snprintf(x, sizeof(x), "%%%02X", (unsigned char)*s);
			ob_put(b, x, 3);
		}
	}
}

/* a field that holds a secret: libpq's own mark ('*': password, sslpassword), or options that set one */
static bool field_secret(const PQconninfoOption *o)
{
	return (o->dispchar && o->dispchar[0] == '*') ||
	       (!strcmp(o->keyword, "options") && strcasestr(o->val, "password"));
}

static const char *field_val(const PQconninfoOption *opts, const char *key)
{
	for (; opts->keyword; opts++)
		if (!strcmp(opts->keyword, key))
			return opts->val;
	return NULL;
}

/* libpq's reason with every "quoted" part elided: they quote pieces of the string, the password among them */
static void elide_quoted(const char *msg, char *out, size_t len)
{
	struct outbuf b = { out, len, 0 };
	bool in = false;

	out[0] = '\0';
	for (; msg && *msg; msg++) {
		if (*msg == '"') {
			ob_puts(&b, in ? "...\"" : "\"");
			in = !in;
		} else if (!in) {
			ob_put(&b, msg, 1);
		}
	}
	histdb_oneline(out);
}

/*
 * What libpq makes of spec, checked: 0, or -EINVAL with the reason in why
 * when libpq cannot parse it or when it parsed a password into another field
 * (a '/' or '?' in an unencoded password ends the host part early: the rest
 * becomes a port that is not a number, or a database name with an '@').
 */
static int conninfo_parse(const char *spec, PQconninfoOption **out, char *why, size_t whylen)
{
	char *perr = NULL;
	PQconninfoOption *o = PQconninfoParse(spec, &perr);
	size_t pre = scheme_len(spec);
	const char *port, *slash, *query;

	*out = NULL;
	if (!o) {
		elide_quoted(perr ? perr : "out of memory", why, whylen);
		PQfreemem(perr);
		return -EINVAL;
	}
	port = field_val(o, "port");
	if (port && port[strspn(port, "0123456789,")]) {
		PQconninfoFree(o);
		snprintf(why, whylen, "its port is not a number");
		return -EINVAL;
	}
	slash = strchr(spec + pre, '/');
	query = strchr(spec + pre, '?');
	if (!query)
		query = spec + strlen(spec);
	if (pre && slash && slash < query && memchr(slash, '@', (size_t)(query - slash))) {
		PQconninfoFree(o);
		snprintf(why, whylen, "an '@' after the host");
		return -EINVAL;
	}
	*out = o;
	return 0;
}

/* the parsed URI written again without its secrets: user@hosts:ports/dbname?other=parameters */
static void uri_shown(const char *scheme, size_t scheme_n, const PQconninfoOption *o, struct outbuf *b)
{
	const char *user = field_val(o, "user"), *host = field_val(o, "host"), *port = field_val(o, "port");
	const char *dbname = field_val(o, "dbname");
	/* hosts in the authority when they are names or addresses; socket directories as parameters */
	bool auth_hosts = host && !host[strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
						       "0123456789.-_:,")];
	char sep = '?';

	ob_put(b, scheme, scheme_n);
	if (user) {
		ob_put_enc(b, user, "");
		ob_puts(b, "@");
	}
	if (auth_hosts) {
		const char *h = host, *pt = port;

		while (*h || (pt && *pt)) {
			size_t hn = strcspn(h, ","), pn = pt ? strcspn(pt, ",") : 0;
			bool v6 = memchr(h, ':', hn) != NULL;

			if (v6)
				ob_puts(b, "[");
			ob_put(b, h, hn);
			if (v6)
				ob_puts(b, "]");
			if (pn) {
				ob_puts(b, ":");
				ob_put(b, pt, pn);
			}
			h += hn;
			if (pt)
				pt += pn;
			if (*h != ',' && !(pt && *pt == ','))
				break;
			ob_puts(b, ",");
			if (*h == ',')
				h++;
			if (pt && *pt == ',')
				pt++;
		}
	}
	if (dbname) {
		ob_puts(b, "/");
		ob_put_enc(b, dbname, "");
	}
	for (; o->keyword; o++) {
		if (!o->val || field_secret(o) || !strcmp(o->keyword, "user") || !strcmp(o->keyword, "dbname") ||
		    (auth_hosts && (!strcmp(o->keyword, "host") || !strcmp(o->keyword, "port"))))
			continue;
		ob_put(b, &sep, 1);
		sep = '&';
		ob_puts(b, o->keyword);
		ob_puts(b, "=");
		ob_put_enc(b, o->val, "/:,@");
	}
}

/* the parsed key=value string written again without its secrets */
static void kv_shown(const PQconninfoOption *o, struct outbuf *b)
{
	const char *p;
	bool first = true;

	for (; o->keyword; o++) {
		if (!o->val || field_secret(o))
			continue;
		ob_puts(b, first ? "" : " ");
		first = false;
		ob_puts(b, o->keyword);
		ob_puts(b, "='");
		for (p = o->val; *p; p++) {
			if (*p == '\'' || *p == '\\')
				ob_puts(b, "\\");
			ob_put(b, p, 1);
		}
		ob_puts(b, "'");
	}
}

void histdb_redact(const char *spec, char *out, size_t len)
{
	struct outbuf b = { out, len, 0 };
	size_t pre = scheme_len(spec);
	PQconninfoOption *o = NULL;
	char why[ERR_MSG_MAX];

	if (!len)
		return;
	out[0] = '\0';
	if (conninfo_parse(spec, &o, why, sizeof(why))) {
		/* a path is shown as it is; a URI libpq cannot read, not past its scheme */
		if (pre) {
			ob_put(&b, spec, pre);
			ob_puts(&b, "<unparsable URI, not shown>");
		} else {
			ob_puts(&b, spec);
		}
		return;
	}
	if (pre)
		uri_shown(spec, pre, o, &b);
	else
		kv_shown(o, &b);
	PQconninfoFree(o);
}

void histdb_scrub(const char *spec, char *msg)
{
	PQconninfoOption *o = NULL, *f;
	char why[ERR_MSG_MAX];

	if (conninfo_parse(spec, &o, why, sizeof(why))) {
		/* where the password went is unknown: every quoted part goes */
		char *copy = strdup(msg);

		if (copy)
			elide_quoted(copy, msg, strlen(msg) + 1);
		else
			msg[0] = '\0';
		free(copy);
		return;
	}
	for (f = o; f->keyword; f++) {
		size_t n;
		char *p;

		if (!f->val || !field_secret(f) || !(n = strlen(f->val)))
			continue;
		/* "***", or as many stars as a shorter secret has: the message never grows */
		for (p = msg; (p = strstr(p, f->val));) {
			size_t k = n < 3 ? n : 3;

			memmove(p + k, p + n, strlen(p + n) + 1);
			memset(p, '*', k);
			p += k;
		}
	}
	PQconninfoFree(o);
}

int histdb_target_parse(const char *arg, struct histdb_target *t, struct err *e)
{
	PQconninfoOption *o = NULL;
	char why[ERR_MSG_MAX];
	struct stat st;
	size_t i, n;

	memset(t, 0, sizeof(*t));
	if (!arg || !*arg)
		return err_set(e, -EINVAL, "empty history database: pass an SQLite file path or a postgresql:// URI");
	if (strlen(arg) >= sizeof(t->spec))
		return err_set(e, -ENAMETOOLONG, "history database path or URI too long");
	snprintf(t->spec, sizeof(t->spec), "%s", arg);
	histdb_redact(arg, t->shown, sizeof(t->shown));
	for (i = 0; i < sizeof(pg_prefixes) / sizeof(pg_prefixes[0]); i++) {
		if (strncmp(arg, pg_prefixes[i], strlen(pg_prefixes[i])))
			continue;
		t->kind = HISTDB_POSTGRES;
		/* libpq's reason would quote the part it stumbled on: the password, as often as not */
		if (conninfo_parse(arg, &o, why, sizeof(why)))
			return err_set(e, -EINVAL, "not a PostgreSQL URI libpq can use (%s; the URI is not shown): "
				       "percent-encode '/', '?', '@', '#' and '%%' in the user name and password",
				       why);
		PQconninfoFree(o);
		return 0;
	}
	n = scheme_len(arg);
	if (n)
		return err_set(e, -EINVAL, "'%.*s' databases are not supported: pass an SQLite file path or a "
			       "postgresql://[USER@]HOST[:PORT]/DBNAME URI", (int)(n - 3), arg);
	if (strchr(arg, '=') && !conninfo_parse(arg, &o, why, sizeof(why))) {
		PQconninfoFree(o);
		return err_set(e, -EINVAL, "a libpq key=value connection string is not a history database (it is "
			       "not shown): pass a postgresql://[USER@]HOST[:PORT]/DBNAME URI");
	}
	t->kind = HISTDB_SQLITE;
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode))	/* SQLite would say "disk I/O error" */
		return err_set(e, -EISDIR, "%s is a directory: give a database file", err_q(arg));
	return 0;
}

/* ---- dispatch --------------------------------------------------------------------- */

void histdb_oneline(char *s)
{
	size_t i, o = 0;

	for (i = 0; s[i]; i++) {
		bool space = s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t';

		if (space && (o == 0 || s[o - 1] == ' '))
			continue;
		s[o++] = space ? ' ' : s[i];
	}
	while (o && s[o - 1] == ' ')
		o--;
	s[o] = '\0';
}

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
