/* tests for guest/plan.c: plan_parse on kernel command lines */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "guest/plan.h"
#include "guest/registry.h"

#define M (1ull << 20)

struct ok_case {
	const char *name;
	const char *cmdline;
	const char *thp;	/* expected guest_thp list, comma-joined */
	uint64_t reps, warmup, size, accesses, seed, timeout_ms;
	const char *port;
};

static struct ok_case ok_cases[] = {
	{ "defaults when no thpeval key", "BOOT_IMAGE=/vmlinuz root=/dev/vda ro console=ttyS0\n",
	  "never,always", 3, 1, 256 * M, 1000000, 1, 600000, "org.thpeval.records" },
	{ "every key among kernel words",
	  "console=ttyS0 thpeval.guest_thp=always,madvise,never thpeval.workloads=memset "
	  "thpeval.reps=5 quiet thpeval.warmup=0 thpeval.size=1G thpeval.accesses=1000 "
	  "thpeval.seed=42 thpeval.timeout=10m thpeval.port=org.x-y_z.1 panic=-1\n",
	  "always,madvise,never", 5, 0, 1024 * M, 1000, 42, 600000, "org.x-y_z.1" },
	{ "thpeval word inside an unrelated quoted value is not a key",
	  "foo=\"a thpeval.reps=9\" thpeval.reps=2", "never,always", 2, 1, 256 * M, 1000000, 1,
	  600000, "org.thpeval.records" },
	{ "tabs and newlines separate words", "\tthpeval.size=2M\n\nthpeval.guest_thp=madvise\t",
	  "madvise", 3, 1, 2 * M, 1000000, 1, 600000, "org.thpeval.records" },
	{ "timeout in seconds", "thpeval.timeout=30 thpeval.seed=0", "never,always", 3, 1, 256 * M,
	  1000000, 0, 30000, "org.thpeval.records" },
	{ "empty command line", "", "never,always", 3, 1, 256 * M, 1000000, 1, 600000,
	  "org.thpeval.records" },
};

static void test_ok(void **state)
{
	const struct ok_case *c = *state;
	char why[256] = "", thp[64] = "";
	struct plan p;
	size_t i;

	assert_int_equal(plan_parse(c->cmdline, &p, why, sizeof(why)), 0);
	assert_string_equal(why, "");
	for (i = 0; i < p.nthp; i++) {
		strcat(thp, i ? "," : "");
		strcat(thp, guest_thp_name(p.guest_thp[i]));
	}
	assert_string_equal(thp, c->thp);
	assert_int_equal(p.nworkloads, 1);
	assert_string_equal(p.workloads[0]->name, "memset");
	assert_int_equal(p.reps, c->reps);
	assert_int_equal(p.warmup, c->warmup);
	assert_int_equal(p.size, c->size);
	assert_int_equal(p.accesses, c->accesses);
	assert_int_equal(p.seed, c->seed);
	assert_int_equal(p.timeout_ms, c->timeout_ms);
	assert_string_equal(p.port, c->port);
}

struct bad_case {
	const char *name;
	const char *cmdline;
	const char *why;	/* substring of the reason */
};

static char long_port[300], long_wlopts[WLOPTS_SPEC_MAX + 32];

static struct bad_case bad_cases[] = {
	{ "bogus thp value", "quiet thpeval.guest_thp=sometimes",
	  "thpeval.guest_thp: 'sometimes' is not always, madvise or never" },
	{ "thp value listed twice", "thpeval.guest_thp=always,never,always", "'always' listed twice" },
	{ "empty thp item", "thpeval.guest_thp=always,", "empty item" },
	{ "shmem: madvise is not a shmem_enabled value", "thpeval.guest_shmem_thp=never,madvise",
	  "thpeval.guest_shmem_thp: 'madvise' is not a shmem_enabled value" },
	{ "shmem: listed twice", "thpeval.guest_shmem_thp=always,never,always", "'always' listed twice" },
	{ "shmem: empty item", "thpeval.guest_shmem_thp=always,,never", "empty item" },
	{ "wlopts: a workload the program lacks", "thpeval.wlopts=nosuch:x=1", "thpeval.wlopts: no workload 'nosuch'" },
	{ "wlopts: a parameter the workload lacks", "thpeval.wlopts=redis:scale=4",
	  "thpeval.wlopts: workload redis has no --scale" },
	{ "wlopts: a reserved parameter", "thpeval.wlopts=memset:size=2M", "--size is set by thpeval itself" },
	{ "wlopts: a bad value", "thpeval.wlopts=redis:dir=/tmp;x", "a value must be" },
	{ "shmem: given twice", "thpeval.guest_shmem_thp=always thpeval.guest_shmem_thp=never", "given twice" },
	{ "reps=0", "thpeval.reps=0", "thpeval.reps: 0 is out of range (1 to 10000)" },
	{ "reps not a number", "thpeval.reps=3x", "thpeval.reps: '3x' is not an integer" },
	{ "negative seed", "thpeval.seed=-1", "thpeval.seed: '-1' is not an integer" },
	{ "size=abc", "thpeval.size=abc", "thpeval.size: 'abc' is not a size" },
	{ "size not a 2M multiple", "thpeval.size=3M", "thpeval.size: 3M is not a multiple of 2M" },
	{ "size zero", "thpeval.size=0", "is not a multiple of 2M" },
	{ "accesses zero", "thpeval.accesses=0", "thpeval.accesses: 0 is out of range" },
	{ "cold out of range", "thpeval.cold=101", "thpeval.cold: 101 is out of range (0 to 100)" },
	{ "cold not a number", "thpeval.cold=x", "thpeval.cold: 'x' is not an integer" },
	{ "timeout zero", "thpeval.timeout=0", "thpeval.timeout: 0 is out of range (1s to 24h)" },
	{ "timeout bad unit", "thpeval.timeout=5x",
	  "thpeval.timeout: '5x' is not a duration such as 600 or 10m" },
	{ "unknown workload", "thpeval.workloads=memset,nosuch", "unknown workload 'nosuch'" },
	{ "unknown thpeval key", "console=ttyS0 thpeval.colour=red", "unknown key 'thpeval.colour'" },
	{ "bare prefix", "thpeval.", "unknown key" },
	{ "duplicate key", "thpeval.reps=1 thpeval.size=2M thpeval.reps=2", "thpeval.reps given twice" },
	{ "key without value", "thpeval.reps", "thpeval.reps needs a value" },
	{ "empty value", "thpeval.reps=", "thpeval.reps: empty value" },
	{ "quoted value", "thpeval.port=\"a b\"", "quotes are not allowed" },
	{ "overlong value", long_port, "thpeval.port: value longer than 128 bytes" },
	{ "port name too long", "thpeval.port=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	  "thpeval.port: longer than 63 bytes" },
	{ "port with a slash", "thpeval.port=../x", "thpeval.port: bad character" },
	/* kcompile's and exec's own parameters travel in wlopts, like any workload's */
	{ "kcompile key gone", "thpeval.kcompile=tinyconfig:mm/", "unknown key 'thpeval.kcompile'" },
	{ "exec key gone", "thpeval.exec=true", "unknown key 'thpeval.exec'" },
	{ "long_timeout key gone", "thpeval.long_timeout=20m", "unknown key 'thpeval.long_timeout'" },
	{ "wlopts exec argv with a semicolon", "thpeval.wlopts=exec:argv=true;reboot", "a value must be" },
	{ "wlopts exec argv with a quote", "thpeval.wlopts=exec:argv=\"sh -c x\"", "quotes are not allowed" },
	{ "wlopts kcompile parameter unknown", "thpeval.wlopts=kcompile:bogus=1", "workload kcompile has no --bogus" },
	{ "wlopts too long", long_wlopts, "thpeval.wlopts: value longer than 1536 bytes" },
};

/* kcompile's and exec's own parameters: items of wlopts, up to the longest value a list takes
 * (a bad encoding or config is the workload's to report, in its fail record) */
static void test_own_params(void **state)
{
	static char cmdline[WLOPTS_SPEC_MAX + 200];
	char why[256] = "";
	struct plan p;

	(void)state;
	assert_int_equal(plan_parse("thpeval.workloads=exec,kcompile thpeval.wlopts=exec:argv=sh+-c+echo:20v:2042,"
				    "exec:metric=v:20:28:5B0-9:5D:2B:29,exec:direction=lower,exec:timeout=90,"
				    "kcompile:config=defconfig,kcompile:target=vmlinux,kcompile:timeout=7200", &p, why,
				    sizeof(why)), 0);
	assert_int_equal(p.nwlopts, 7);
	assert_string_equal(p.wlopts[0].value, "sh+-c+echo:20v:2042");
	assert_string_equal(p.wlopts[1].value, "v:20:28:5B0-9:5D:2B:29");
	assert_string_equal(p.wlopts[5].param, "target");
	assert_string_equal(p.wlopts[5].value, "vmlinux");
	/* the longest value: WLOPT_VALUE_MAX - 1 bytes */
	strcpy(cmdline, "thpeval.wlopts=exec:argv=");
	memset(cmdline + strlen(cmdline), 'x', WLOPT_VALUE_MAX - 1);
	assert_int_equal(plan_parse(cmdline, &p, why, sizeof(why)), 0);
	assert_int_equal(strlen(p.wlopts[0].value), WLOPT_VALUE_MAX - 1);
	/* decoded later: the plan takes an encoding the workload will refuse */
	assert_int_equal(plan_parse("thpeval.wlopts=exec:argv=a:zz", &p, why, sizeof(why)), 0);
}

/* --workloads=all names every workload of the guest's table: the plan takes them all */
static void test_all_workloads(void **state)
{
	char cmdline[PLAN_VALUE_MAX + 32] = "thpeval.workloads=", why[256] = "";
	const struct workload *w;
	struct plan p;
	size_t i;

	(void)state;
	for (i = 0; (w = workload_at(i)); i++)
		snprintf(cmdline + strlen(cmdline), sizeof(cmdline) - strlen(cmdline), "%s%s", i ? "," : "",
			 w->name);
	assert_true(strlen(cmdline) < sizeof(cmdline) - 1);
	if (plan_parse(cmdline, &p, why, sizeof(why)))
		fail_msg("every workload in one plan refused: %s", why);
	assert_int_equal(p.nworkloads, i);
	assert_true(i <= PLAN_MAX_WORKLOADS);
}

static void test_bad(void **state)
{
	const struct bad_case *c = *state;
	char why[256] = "";
	struct plan p;

	assert_int_equal(plan_parse(c->cmdline, &p, why, sizeof(why)), -EINVAL);
	if (!strstr(why, c->why))
		fail_msg("reason '%s' lacks '%s'", why, c->why);
}

static void test_error_keeps_port(void **state)
{
	char why[128];
	struct plan p;

	(void)state;
	assert_int_equal(plan_parse("thpeval.port=org.a thpeval.reps=0", &p, why, sizeof(why)),
			 -EINVAL);
	assert_string_equal(p.port, "org.a");
}

static void test_thp_names(void **state)
{
	enum guest_thp t;
	unsigned i;

	(void)state;
	for (i = 0; i < GUEST_THP__COUNT; i++) {
		assert_int_equal(guest_thp_parse(guest_thp_name((enum guest_thp)i), &t), 0);
		assert_int_equal(t, i);
	}
	assert_int_equal(guest_thp_parse("Always", &t), -EINVAL);
	assert_string_equal(guest_thp_name(GUEST_THP__COUNT), "?");
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* the guest shmem axis: absent by default, else its values in order */
static void test_shmem_axis(void **state)
{
	char why[256] = "";
	struct plan p;

	(void)state;
	assert_int_equal(plan_parse("thpeval.workloads=pgbench", &p, why, sizeof(why)), 0);
	assert_int_equal(p.nshmem, 0);
	assert_int_equal(plan_parse("thpeval.workloads=pgbench thpeval.guest_shmem_thp=never,within_size,force",
				    &p, why, sizeof(why)), 0);
	assert_int_equal(p.nshmem, 3);
	assert_string_equal(p.shmem_thp[0], "never");
	assert_string_equal(p.shmem_thp[1], "within_size");
	assert_string_equal(p.shmem_thp[2], "force");
}

/* the user's workload parameters, in order */
static void test_wlopts(void **state)
{
	char why[256] = "";
	struct plan p;

	(void)state;
	assert_int_equal(plan_parse("thpeval.workloads=redis thpeval.wlopts=redis:dataset=8M,pgbench:scale=9", &p,
				    why, sizeof(why)), 0);
	assert_int_equal(p.nwlopts, 2);
	assert_string_equal(p.wlopts[0].workload, "redis");
	assert_string_equal(p.wlopts[0].param, "dataset");
	assert_string_equal(p.wlopts[0].value, "8M");
	assert_string_equal(p.wlopts[1].param, "scale");
}

int main(void)
{
	struct CMUnitTest tests[N(ok_cases) + N(bad_cases) + 7];
	size_t i, n = 0;

	memcpy(long_port, "thpeval.port=", 13);
	memset(long_port + 13, 'p', 200);
	memcpy(long_wlopts, "thpeval.wlopts=", 15);
	memset(long_wlopts + 15, 'x', WLOPTS_SPEC_MAX + 1);
	for (i = 0; i < N(ok_cases); i++)
		tests[n++] = (struct CMUnitTest){ ok_cases[i].name, test_ok, NULL, NULL,
						  &ok_cases[i] };
	for (i = 0; i < N(bad_cases); i++)
		tests[n++] = (struct CMUnitTest){ bad_cases[i].name, test_bad, NULL, NULL,
						  &bad_cases[i] };
	tests[n++] = (struct CMUnitTest){ "error keeps the port read before it",
					  test_error_keeps_port, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "kcompile's and exec's own parameters", test_own_params, NULL, NULL,
					  NULL };
	tests[n++] = (struct CMUnitTest){ "every workload in one plan", test_all_workloads, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "guest shmem axis", test_shmem_axis, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "workload options", test_wlopts, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "guest_thp names round-trip", test_thp_names, NULL,
					  NULL, NULL };
	return _cmocka_run_group_tests("plan", tests, n, NULL, NULL);
}
