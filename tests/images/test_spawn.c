/* tests for images/spawn.c: argv exec, exit status, stdout capture, stderr tail */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "images/spawn.h"

static void test_status_and_stderr(void **state)
{
	static const struct {
		const char *name;
		const char *argv[6];
		int code;
		const char *want[3];	/* substrings of the message; none if code == 0 */
	} cases[] = {
		{ "exit 0", { "true", NULL }, 0, { NULL } },
		{ "exit 1, silent", { "false", NULL }, -ECHILD,
		  { "'false' failed with exit status 1", NULL } },
		{ "stderr lines joined into one",
		  { "sh", "-c", "echo first >&2; echo second >&2; exit 3", NULL }, -ECHILD,
		  { "'sh' failed with exit status 3: first; second", NULL } },
		{ "killed by a signal", { "sh", "-c", "kill -9 $$", NULL }, -ECHILD,
		  { "killed by signal 9", NULL } },
		{ "not in PATH", { "thpeval-no-such-program", NULL }, -ENOENT,
		  { "cannot run 'thpeval-no-such-program': not found in PATH", NULL } },
		{ "long stderr: only the tail",
		  { "sh", "-c", "i=0; while [ $i -lt 300 ]; do echo line$i >&2; i=$((i+1)); done; exit 2", NULL },
		  -ECHILD, { "line299", "exit status 2", NULL } },
		{ "argv is not a shell", { "echo", "$(false)", ";", "exit", "9", NULL }, 0, { NULL } },
	};
	size_t i, k;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err e = ERR_INIT;
		int rc = spawn_run(cases[i].argv, NULL, NULL, 0, &e);

		if (rc != cases[i].code || e.code != rc)
			fail_msg("%s: rc %d (want %d): %s", cases[i].name, rc,
				 cases[i].code, e.msg);
		for (k = 0; cases[i].want[k]; k++)
			if (!strstr(e.msg, cases[i].want[k]))
				fail_msg("%s: message '%s' lacks '%s'", cases[i].name,
					 e.msg, cases[i].want[k]);
		if (strchr(e.msg, '\n'))
			fail_msg("%s: message has a newline: '%s'", cases[i].name, e.msg);
		if (strstr(cases[i].name, "tail") && strstr(e.msg, "line0;"))
			fail_msg("%s: message kept the head: '%s'", cases[i].name, e.msg);
	}
}

static void test_stdout_and_env(void **state)
{
	const char *echo[] = { "echo", "hello", "world", NULL };
	const char *env_print[] = { "sh", "-c", "printf '%s|%s' \"$THPEVAL_T1\" \"$HOME\"", NULL };
	const char *env_add[] = { "THPEVAL_T1=a b", "HOME=/nowhere", NULL };
	const char *big[] = { "sh", "-c", "i=0; while [ $i -lt 100 ]; do echo 0123456789; i=$((i+1)); done", NULL };
	struct err e = ERR_INIT;
	char out[64];

	(void)state;
	assert_int_equal(spawn_run(echo, NULL, out, sizeof(out), &e), 0);
	assert_string_equal(out, "hello world\n");

	/* env_add overrides, it does not duplicate */
	assert_int_equal(spawn_run(env_print, env_add, out, sizeof(out), &e), 0);
	assert_string_equal(out, "a b|/nowhere");

	assert_int_equal(spawn_run(big, NULL, out, sizeof(out), &e), -EOVERFLOW);
	assert_non_null(strstr(e.msg, "longer than 63 bytes"));
	err_clear(&e);

	assert_int_equal(spawn_run(NULL, NULL, NULL, 0, &e), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_status_and_stderr),
		cmocka_unit_test(test_stdout_and_env),
	};

	return cmocka_run_group_tests_name("images/spawn", tests, NULL, NULL);
}
