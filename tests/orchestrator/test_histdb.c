/*
 * tests for orchestrator/history/histdb.c: what --db names (an SQLite path or a
 * PostgreSQL URI), the URI shown in messages without its password, backend
 * messages on one line, and a server that is down: one line, no password,
 * -ECONNREFUSED. The backends against real databases are tested through
 * history (tests/orchestrator/test_history.c, tests/cli/history_db.sh).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "orchestrator/history/histdb.h"

static void test_target_parse(void **state)
{
	static const struct {
		const char *name, *arg;
		int code;
		enum histdb_kind kind;
		const char *shown;	/* or part of the message */
	} cases[] = {
		{ "absolute path", "/var/lib/thpeval/history.db", 0, HISTDB_SQLITE, "/var/lib/thpeval/history.db" },
		{ "relative path", "history.db", 0, HISTDB_SQLITE, "history.db" },
		{ "path with a colon", "./a:b/history.db", 0, HISTDB_SQLITE, "./a:b/history.db" },
		{ "path with spaces", "/tmp/dir with spaces/h.db", 0, HISTDB_SQLITE, "/tmp/dir with spaces/h.db" },
		{ "postgresql URI", "postgresql://thpeval@db.lab:5433/history", 0, HISTDB_POSTGRES,
		  "postgresql://thpeval@db.lab:5433/history" },
		{ "postgres URI", "postgres://db.lab/history", 0, HISTDB_POSTGRES, "postgres://db.lab/history" },
		{ "bare postgresql URI", "postgresql://", 0, HISTDB_POSTGRES, "postgresql://" },
		{ "unix socket", "postgresql:///history?host=/run/postgresql&port=5432", 0, HISTDB_POSTGRES,
		  "postgresql:///history?host=/run/postgresql&port=5432" },
		{ "password in the user part", "postgresql://thpeval:s3cret@db.lab/history", 0, HISTDB_POSTGRES,
		  "postgresql://thpeval@db.lab/history" },
		{ "password parameter", "postgresql://db.lab/h?sslmode=require&password=s3cret&connect_timeout=5", 0,
		  HISTDB_POSTGRES, "postgresql://db.lab/h?connect_timeout=5&sslmode=require" },	/* libpq's order */
		{ "password only parameter", "postgresql://db.lab/h?password=s3cret", 0, HISTDB_POSTGRES,
		  "postgresql://db.lab/h" },
		{ "several hosts", "postgresql://u:pw@h1:5432,h2:5433/h", 0, HISTDB_POSTGRES, "postgresql://u@h1:5432,h2:5433/h" },
		{ "user without password", "postgres://u@/h", 0, HISTDB_POSTGRES, "postgres://u@/h" },
		{ "empty", "", -EINVAL, HISTDB_SQLITE, "empty history database" },
		{ "mysql", "mysql://db.lab/history", -EINVAL, HISTDB_SQLITE, "'mysql' databases are not supported" },
		{ "sqlite URI", "sqlite:///var/lib/h.db", -EINVAL, HISTDB_SQLITE, "'sqlite' databases are not supported" },
		{ "upper-case scheme", "POSTGRESQL://db/h", -EINVAL, HISTDB_SQLITE, "'POSTGRESQL' databases are not" },
		{ "IPv6 host", "postgresql://[::1]:5433/h", 0, HISTDB_POSTGRES, "postgresql://[::1]:5433/h" },
		{ "encoded socket host", "postgresql://u:s3cret@%2Frun%2Fpg/h", 0, HISTDB_POSTGRES,
		  "postgresql://u@/h?host=/run/pg" },
		{ "unparsable URI", "postgresql://db/h?s3cret", -EINVAL, HISTDB_POSTGRES, "not a PostgreSQL URI libpq" },
		{ "key=value string", "host=db password=s3cret", -EINVAL, HISTDB_SQLITE, "key=value connection string" },
		{ "path with an equals sign", "./a=b/h.db", 0, HISTDB_SQLITE, "./a=b/h.db" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct histdb_target t;
		struct err e = ERR_INIT;
		int r = histdb_target_parse(cases[i].arg, &t, &e);

		if (r != cases[i].code)
			fail_msg("%s: %d, want %d (%s)", cases[i].name, r, cases[i].code, e.msg);
		if (r) {
			if (!strstr(e.msg, cases[i].shown) || strstr(e.msg, "s3cret") || strchr(e.msg, '\n'))
				fail_msg("%s: message '%s'", cases[i].name, e.msg);
			continue;
		}
		if (t.kind != cases[i].kind)
			fail_msg("%s: kind %d, want %d", cases[i].name, t.kind, cases[i].kind);
		assert_string_equal(t.spec, cases[i].arg);	/* handed to libpq or SQLite as given */
		if (strcmp(t.shown, cases[i].shown))
			fail_msg("%s: shown '%s', want '%s'", cases[i].name, t.shown, cases[i].shown);
	}
}

static void test_target_too_long(void **state)
{
	static char arg[PATH_MAX + 10];
	struct histdb_target t;
	struct err e = ERR_INIT;

	memset(arg, 'x', sizeof(arg) - 1);
	assert_int_equal(histdb_target_parse(arg, &t, &e), -ENAMETOOLONG);
	memcpy(arg, "postgresql://", 13);
	err_clear(&e);
	assert_int_equal(histdb_target_parse(arg, &t, &e), -ENAMETOOLONG);
}

static void test_redact_truncates(void **state)
{
	char out[16];

	histdb_redact("postgresql://user:pw@host/db", out, sizeof(out));
	assert_string_equal(out, "postgresql://us");	/* cut, never the password */
	histdb_redact("postgresql://user:pw@host/db", out, 1);
	assert_string_equal(out, "");
}

/*
 * Every place a password can hide in what --db takes: the redacted form
 * never holds it, nor does the message of a connection that fails (port 1 of
 * 127.0.0.1 refuses at once) or of a URI refused before connecting.
 */
static void test_secret_never_shown(void **state)
{
	static const struct {
		const char *name, *spec, *shown;
		const char *pw;		/* the secret as libpq reads it */
	} cases[] = {
		{ "unencoded '/' in the password", "postgresql://u:s3cretPW/x@127.0.0.1:1/db",
		  "postgresql://<unparsable URI, not shown>", "s3cretPW" },
		{ "unencoded '/' after digits", "postgresql://u:12/s3cretPW@127.0.0.1:1/db",
		  "postgresql://<unparsable URI, not shown>", "s3cretPW" },
		{ "unencoded '?' in the password", "postgresql://u:s3cretPW?x@127.0.0.1:1/db",
		  "postgresql://u@127.0.0.1:1/db", "s3cretPW?x" },
		{ "percent-encoded key", "postgresql://127.0.0.1:1/db?pass%77ord=s3cretPW", "postgresql://127.0.0.1:1/db",
		  "s3cretPW" },
		{ "sslpassword", "postgresql://127.0.0.1:1/db?sslpassword=s3cretPW", "postgresql://127.0.0.1:1/db",
		  "s3cretPW" },
		{ "password in options", "postgresql://127.0.0.1:1/db?options=-c%20password%3Ds3cretPW",
		  "postgresql://127.0.0.1:1/db", "-c password=s3cretPW" },
		{ "user part", "postgres://u:s3cretPW@127.0.0.1:1/db", "postgres://u@127.0.0.1:1/db", "s3cretPW" },
		{ "unparsable query", "postgresql://127.0.0.1:1/db?s3cretPW", "postgresql://<unparsable URI, not shown>",
		  "s3cretPW" },
		{ "key=value string", "host=127.0.0.1 port=1 dbname=db password=s3cretPW",
		  "dbname='db' host='127.0.0.1' port='1'", "s3cretPW" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct histdb_target t;
		struct histdb *h = NULL;
		struct err e = ERR_INIT;
		char shown[256], msg[256];

		histdb_redact(cases[i].spec, shown, sizeof(shown));
		if (strcmp(shown, cases[i].shown))
			fail_msg("%s: shown '%s', want '%s'", cases[i].name, shown, cases[i].shown);
		if (histdb_target_parse(cases[i].spec, &t, &e)) {
			/* refused before connecting: what a URI libpq would stumble on, unconnected */
			assert_non_null(e.msg[0] ? e.msg : NULL);
		} else {
			assert_int_equal(t.kind, HISTDB_POSTGRES);
			assert_int_equal(histdb_open(&t, false, &h, &e), -ECONNREFUSED);
			assert_null(h);
		}
		if (strstr(e.msg, "s3cretPW") || strstr(t.shown, "s3cretPW"))
			fail_msg("%s: the password shown: '%s' / '%s'", cases[i].name, e.msg, t.shown);
		/* a key=value string reaches libpq too if it is handed over: the same */
		t.kind = HISTDB_POSTGRES;
		snprintf(t.spec, sizeof(t.spec), "%s", cases[i].spec);
		histdb_redact(t.spec, t.shown, sizeof(t.shown));
		err_clear(&e);
		assert_int_not_equal(histdb_open(&t, false, &h, &e), 0);
		if (strstr(e.msg, "s3cretPW"))
			fail_msg("%s: the password in libpq's message: '%s'", cases[i].name, e.msg);
		/* and a message that quotes a secret field loses it */
		snprintf(msg, sizeof(msg), "server said: \"%s\" is wrong", cases[i].pw);
		histdb_scrub(cases[i].spec, msg);
		if (strstr(msg, "s3cretPW"))
			fail_msg("%s: not scrubbed: '%s'", cases[i].name, msg);
	}
}

/* a secret's every occurrence goes; the message never grows, whatever the secret's length */
static void test_scrub(void **state)
{
	static const struct {
		const char *name, *spec, *msg, *want;
	} cases[] = {
		{ "long secret", "postgresql://u:s3cretPW@h/db", "s3cretPW and s3cretPW", "*** and ***" },
		{ "two-letter secret", "postgresql://u:pw@h/db", "pw x pw", "** x **" },
		{ "secret of stars", "postgresql://h/db?password=*", "a * b", "a * b" },
		{ "sslpassword", "postgresql://h/db?sslpassword=k3y", "bad k3y", "bad ***" },
		{ "no secret", "postgresql://u@h/db", "plain u", "plain u" },
		{ "unparsable: quoted parts go", "postgresql://h/db?s3cret", "bad \"s3cret\" here", "bad \"...\" here" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char msg[64];

		snprintf(msg, sizeof(msg), "%s", cases[i].msg);
		histdb_scrub(cases[i].spec, msg);
		if (strcmp(msg, cases[i].want))
			fail_msg("%s: '%s', want '%s'", cases[i].name, msg, cases[i].want);
	}
}

static void test_oneline(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "connection to server failed: No such file\n\tIs the server running?\n",
		  "connection to server failed: No such file Is the server running?" },
		{ "FATAL:  role \"x\" does not exist\n", "FATAL: role \"x\" does not exist" },
		{ "\n\n", "" },
		{ "plain", "plain" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256];

		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		histdb_oneline(buf);
		assert_string_equal(buf, cases[i].out);
	}
}

/* a server that is not there: one line that names the database without its password */
static void test_postgres_down(void **state)
{
	static const char *const uris[] = {
		"postgresql://thpeval:s3cret@/history?host=/nonexistent/thpeval-test&port=1",
		"postgresql://thpeval@/history?host=/nonexistent/thpeval-test&port=1&password=s3cret",
	};
	size_t i;

	for (i = 0; i < sizeof(uris) / sizeof(uris[0]); i++) {
		struct histdb_target t;
		struct histdb *h = (struct histdb *)&t;
		struct err e = ERR_INIT;

		assert_int_equal(histdb_target_parse(uris[i], &t, &e), 0);
		assert_int_equal(histdb_open(&t, true, &h, &e), -ECONNREFUSED);
		assert_null(h);
		print_message("  %s\n", e.msg);
		assert_non_null(strstr(e.msg, "cannot connect to history database 'postgresql://thpeval@/history?host="));
		assert_non_null(strstr(e.msg, "/nonexistent/thpeval-test/.s.PGSQL.1"));
		assert_null(strstr(e.msg, "s3cret"));
		assert_null(strchr(e.msg, '\n'));
		assert_null(strchr(e.msg, '\t'));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_parse),
		cmocka_unit_test(test_target_too_long),
		cmocka_unit_test(test_redact_truncates),
		cmocka_unit_test(test_secret_never_shown),
		cmocka_unit_test(test_scrub),
		cmocka_unit_test(test_oneline),
		cmocka_unit_test(test_postgres_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
