#include "orchestrator/history/histdb_target.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libpq-fe.h>

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
