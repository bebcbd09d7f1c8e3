/*
 * tests for lib/wlopts.c: the --workload-opts syntax, table-driven: lists
 * accepted item by item, and each refusal with its one-line reason (empty
 * items, missing ':' or '=', bad names, values a shell or the kernel command
 * line would read, reserved parameters, repeats, too many, too long).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/wlopts.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define A10 "aaaaaaaaaa"
#define A100 A10 A10 A10 A10 A10 A10 A10 A10 A10 A10

struct wlopts_case {
	const char *name;
	const char *spec;
	const char *got;	/* items as "w:p=v;w:p=v"; NULL: refused */
	const char *why;	/* part of the refusal */
};

static const struct wlopts_case cases[] = {
	{ "one item", "redis:dataset=4G", "redis:dataset=4G", NULL },
	{ "two workloads", "redis:dataset=4G,pgbench:scale=400", "redis:dataset=4G;pgbench:scale=400", NULL },
	{ "two parameters of one", "redis:dataset=256M,redis:value-size=4K", "redis:dataset=256M;redis:value-size=4K",
	  NULL },
	{ "a path value", "pgbench:dir=/var/tmp", "pgbench:dir=/var/tmp", NULL },
	{ "an '=' in the value", "redis:dataset=4G=5", NULL, "a value must be" },
	{ "empty", "", NULL, "empty item" },
	{ "trailing comma", "redis:dataset=4G,", NULL, "empty item" },
	{ "no colon", "redis-dataset=4G", NULL, "is not WORKLOAD:PARAM=VALUE" },
	{ "no '='", "redis:dataset", NULL, "is not WORKLOAD:PARAM=VALUE" },
	{ "empty workload", ":dataset=4G", NULL, "a bad workload name" },
	{ "upper-case workload", "Redis:dataset=4G", NULL, "a bad workload name" },
	{ "empty parameter", "redis:=4G", NULL, "a bad parameter name" },
	{ "empty value", "redis:dataset=", NULL, "a value must be" },
	{ "a space", "redis:dataset=4 G", NULL, "a value must be" },
	{ "a quote", "redis:dataset=\"4G\"", NULL, "a value must be" },
	{ "a semicolon", "redis:dir=/tmp;rm", NULL, "a value must be" },
	{ "a dollar", "redis:dir=$HOME", NULL, "a value must be" },
	{ "a value of 1279 characters", "redis:dir=/" A100 A100 A100 A100 A100 A100 A100 A100 A100 A100 A100 A100 A10
	  A10 A10 A10 A10 A10 A10 "aaaaaaaa", "redis:dir=/" A100 A100 A100 A100 A100 A100 A100 A100 A100 A100 A100 A100
	  A10 A10 A10 A10 A10 A10 A10 "aaaaaaaa", NULL },
	{ "a value of 1280 characters", "redis:dir=/" A100 A100 A100 A100 A100 A100 A100 A100 A100 A100 A100 A100 A10
	  A10 A10 A10 A10 A10 A10 "aaaaaaaaa", NULL, "a value must be 1-1279" },
	{ "an exec command in lib/argv's encoding", "exec:argv=sh+-c+echo:20hi", "exec:argv=sh+-c+echo:20hi", NULL },
	{ "kcompile's own config and target", "kcompile:config=defconfig,kcompile:target=vmlinux",
	  "kcompile:config=defconfig;kcompile:target=vmlinux", NULL },
	{ "reserved: size", "redis:size=4G", NULL, "--size is set by thpeval itself" },
	{ "reserved: rep", "pgbench:rep=3", NULL, "--rep is set by thpeval itself" },
	{ "reserved: shmem-thp", "pgbench:shmem-thp=always", NULL, "--shmem-thp is set by thpeval itself" },
	{ "given twice", "redis:dataset=1G,redis:dataset=2G", NULL, "'redis:dataset' given twice" },
	{ "seventeen items", "a:b=1,a:c=1,a:d=1,a:e=1,a:f=1,a:g=1,a:h=1,a:i=1,a:j=1,a:k=1,a:l=1,a:m=1,a:n=1,a:o=1,"
	  "a:p=1,a:q=1,a:r=1", NULL, "more than 16" },
	{ "over 1536 bytes", "redis:dir=/" A100 A100 A100 A100 A100 A100 A100 A100 ",pgbench:dir=/" A100 A100 A100 A100
	  A100 A100 A100 A100, NULL, "longer than 1536 bytes" },
};

static void test_case(void **state)
{
	const struct wlopts_case *c = *state;
	struct wlopt o[WLOPTS_MAX];
	char why[256] = "", got[WLOPTS_MAX * (2 * WLOPT_NAME_MAX + WLOPT_VALUE_MAX + 4)] = "";
	size_t n = 99, i;
	int r = wlopts_parse(c->spec, o, WLOPTS_MAX, &n, why, sizeof(why));

	if (!c->got) {
		assert_int_equal(r, -EINVAL);
		if (!strstr(why, c->why))
			fail_msg("'%s' lacks '%s'", why, c->why);
		return;
	}
	if (r)
		fail_msg("refused: %s", why);
	for (i = 0; i < n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s:%s=%s", i ? ";" : "", o[i].workload,
			 o[i].param, o[i].value);
	assert_string_equal(got, c->got);
}

static void test_reserved(void **state)
{
	(void)state;
	assert_true(wlopt_reserved("hold"));
	assert_true(wlopt_reserved("label"));
	assert_false(wlopt_reserved("dataset"));
	assert_false(wlopt_reserved("sizes"));
}

int main(void)
{
	struct CMUnitTest tests[N(cases) + 1];
	size_t i, n = 0;

	for (i = 0; i < N(cases); i++)
		tests[n++] = (struct CMUnitTest){ cases[i].name, test_case, NULL, NULL, (void *)(uintptr_t)&cases[i] };
	tests[n++] = (struct CMUnitTest){ "reserved names", test_reserved, NULL, NULL, NULL };
	return _cmocka_run_group_tests("lib/wlopts", tests, n, NULL, NULL);
}
