/*
 * histdb_target: the history database's --db value as both backends see it:
 * parsed (an SQLite path or a PostgreSQL URI), shown without its password,
 * and backend messages scrubbed of secrets and put on one line. Below histdb
 * and its backends; never prints, never exits.
 */
#ifndef THPEVAL_ORCH_HISTDB_TARGET_H
#define THPEVAL_ORCH_HISTDB_TARGET_H

#include <limits.h>
#include <stddef.h>

#include "lib/err.h"

enum histdb_kind { HISTDB_SQLITE, HISTDB_POSTGRES };

struct histdb_target {
	enum histdb_kind kind;
	char spec[PATH_MAX];		/* the path or URI as given */
	char shown[PATH_MAX];		/* for messages: the URI without its password */
};

/*
 * --db's value: "postgresql://..." or "postgres://..." (libpq's URI form) is
 * PostgreSQL, any other "SCHEME://" is refused, the rest is an SQLite path.
 * -EINVAL (empty, unknown scheme, a URI libpq cannot parse or that puts a
 * password with an unencoded '/' into the port or database name, a libpq
 * key=value string) or -ENAMETOOLONG, with the reason but never the URI.
 */
int histdb_target_parse(const char *arg, struct histdb_target *t, struct err *e);
/*
 * spec for messages: parsed by libpq (PQconninfoParse) and written again
 * without any field that holds a secret (password, sslpassword, options that
 * set a password); a URI that does not parse, or that parses into a
 * misplaced password, as its scheme and "<unparsable URI, not shown>"; a
 * path as it is. Cut to len, never overrun.
 */
void histdb_redact(const char *spec, char *out, size_t len);
/*
 * msg (libpq's or the server's) without spec's secrets: each value of a
 * secret field replaced with "***"; for a spec histdb_redact does not show,
 * every "quoted" part elided. msg never grows.
 */
void histdb_scrub(const char *spec, char *msg);

/* messages: backend text on one line (each run of blanks and newlines one space, none at the ends) */
void histdb_oneline(char *s);

#endif
