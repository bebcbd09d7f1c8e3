/*
 * Tests for orchestrator/run/records.c: the phases of a boot worked out from
 * the hello record's times on the guest kernel's clock.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "lib/record.h"
#include "orchestrator/model/results.h"
#include "orchestrator/run/records.h"

struct phase_case {
	const char *name;
	long long init_us, runner_us, hello_us;	/* -1: not in the hello */
	double firmware, kernel, initrd, runner;	/* NAN: left unknown */
};

static const struct phase_case phase_cases[] = {
	{ "every time: every phase", 1500000, 1800000, 2000000, 0.5, 1.5, 0.3, 0.2 },
	{ "no kmsg time: kernel and initrd unknown", -1, 1800000, 2000000, 0.5, NAN, NAN, 0.2 },
	{ "init after the runner: kernel and initrd unknown", 1900000, 1800000, 2000000, 0.5, NAN, NAN, 0.2 },
	{ "older guest program: nothing", -1, -1, -1, NAN, NAN, NAN, NAN },
	{ "hello before the runner start: nothing", 1000000, 2000000, 1900000, NAN, NAN, NAN, NAN },
};

static void check(double want, double got, const char *what, const char *name)
{
	if (isnan(want) ? !isnan(got) : fabs(want - got) > 1e-9)
		fail_msg("%s: %s is %g, want %g", name, what, got, want);
}

static void test_boot_phases(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(phase_cases) / sizeof(phase_cases[0]); i++) {
		const struct phase_case *c = &phase_cases[i];
		struct guest_log l = { .create_to_first_record_s = 3.0, .boot_create_s = 0.5 };
		struct record r;

		l.boot_firmware_s = l.boot_kernel_s = l.boot_initrd_s = l.boot_runner_s = NAN;
		rec_init(&r, REC_HELLO, 0);
		if (c->init_us >= 0)
			rec_add_u64(&r, "boot_init_us", (uint64_t)c->init_us);
		if (c->runner_us >= 0)
			rec_add_u64(&r, "boot_runner_us", (uint64_t)c->runner_us);
		if (c->hello_us >= 0)
			rec_add_u64(&r, "boot_hello_us", (uint64_t)c->hello_us);
		boot_phases(&l, &r);
		check(c->firmware, l.boot_firmware_s, "firmware", c->name);
		check(c->kernel, l.boot_kernel_s, "kernel", c->name);
		check(c->initrd, l.boot_initrd_s, "initrd", c->name);
		check(c->runner, l.boot_runner_s, "runner", c->name);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot_phases),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
