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
		  HISTDB_POSTGRES, "postgresql://db.lab/h?sslmode=require&connect_timeout=5" },
		{ "password only parameter", "postgresql://db.lab/h?password=s3cret", 0, HISTDB_POSTGRES,
		  "postgresql://db.lab/h" },
		{ "several hosts", "postgresql://u:pw@h1:5432,h2:5433/h", 0, HISTDB_POSTGRES, "postgresql://u@h1:5432,h2:5433/h" },
		{ "user without password", "postgres://u@/h", 0, HISTDB_POSTGRES, "postgres://u@/h" },
		{ "empty", "", -EINVAL, HISTDB_SQLITE, "empty history database" },
		{ "mysql", "mysql://db.lab/history", -EINVAL, HISTDB_SQLITE, "'mysql' databases are not supported" },
		{ "sqlite URI", "sqlite:///var/lib/h.db", -EINVAL, HISTDB_SQLITE, "'sqlite' databases are not supported" },
		{ "upper-case scheme", "POSTGRESQL://db/h", -EINVAL, HISTDB_SQLITE, "'POSTGRESQL' databases are not" },
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
		cmocka_unit_test(test_oneline),
		cmocka_unit_test(test_postgres_down),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
