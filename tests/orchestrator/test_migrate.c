/*
 * tests for orchestrator/run/migrate.c's option and checks (--migrate, the
 * keep phase it asks of memset) and orchestrator/analysis/migration.c (the
 * summary over boots, the effect against none), and the mode names of
 * orchestrator/virt/migrate.c. No daemon, no guest.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include <errno.h>
#include <unistd.h>

#include "orchestrator/analysis/migration.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/run/crashlog.h"
#include "orchestrator/run/migrate.h"
#include "orchestrator/virt/migrate.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct opt_case {
	const char *name, *arg;
	int code;
	unsigned n;
	unsigned arms[3];
	const char *msg;	/* a part of the message on failure */
};

static const struct opt_case opt_cases[] = {
	{ "both", "precopy,postcopy", 0, 3, { MIGRATE_PRECOPY, MIGRATE_POSTCOPY, MIGRATE_NONE }, NULL },
	{ "postcopy first given", "postcopy,precopy", 0, 3, { MIGRATE_PRECOPY, MIGRATE_POSTCOPY, MIGRATE_NONE }, NULL },
	{ "one arm", "postcopy", 0, 2, { MIGRATE_POSTCOPY, MIGRATE_NONE, 0 }, NULL },
	{ "none given too", "none,precopy", 0, 2, { MIGRATE_PRECOPY, MIGRATE_NONE, 0 }, NULL },
	{ "none alone: no axis", "none", 0, 0, { 0, 0, 0 }, NULL },
	{ "unknown arm", "precopy,stopcopy", -EINVAL, 0, { 0, 0, 0 }, "unknown arm 'stopcopy'" },
	{ "empty", "", -EINVAL, 0, { 0, 0, 0 }, "give precopy, postcopy or both" },
};

static void test_opt(void **state)
{
	const struct opt_case *c = *state;
	struct run_config cfg;
	struct err e = ERR_INIT;
	unsigned i;
	int r;

	assert_int_equal(run_config_init(&cfg, &e), 0);
	r = migrate_opt_parse(&cfg, c->arg, &e);
	assert_int_equal(r, c->code);
	if (r) {
		assert_non_null(strstr(e.msg, c->msg));
		return;
	}
	assert_int_equal(cfg.n_migrate, c->n);
	for (i = 0; i < c->n; i++)
		assert_int_equal(cfg.migrate[i], c->arms[i]);
}

/* the keep phase goes into memset's options; what the axis cannot run with is refused */
static void test_config_check(void **state)
{
	struct run_config cfg;
	struct err e = ERR_INIT;

	(void)state;
	assert_int_equal(run_config_init(&cfg, &e), 0);
	assert_int_equal(migrate_config_check(&cfg, &e), 0);	/* no axis: nothing */
	assert_string_equal(cfg.wl_opts, "");
	assert_int_equal(migrate_opt_parse(&cfg, "precopy", &e), 0);
	cfg.n_wl = 1;
	snprintf(cfg.wl[0], sizeof(cfg.wl[0]), "tlb");
	assert_int_equal(migrate_config_check(&cfg, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--workloads=memset"));
	err_clear(&e);
	snprintf(cfg.wl[0], sizeof(cfg.wl[0]), "memset");
	cfg.guests = 2;
	assert_int_equal(migrate_config_check(&cfg, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--guests"));
	err_clear(&e);
	cfg.guests = 1;
	/* the arms that watch the guest's QEMU over its series */
	cfg.host_state[cfg.n_host_state++] = HOST_COLLAPSE_KHUGEPAGED;
	assert_int_equal(migrate_config_check(&cfg, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--host-state=collapse-khugepaged"));
	err_clear(&e);
	cfg.host_state[cfg.n_host_state - 1] = HOST_COLLAPSE_MADVISE;
	assert_int_equal(migrate_config_check(&cfg, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--host-state=collapse-madvise"));
	err_clear(&e);
	cfg.n_host_state--;
	cfg.balloon[cfg.n_balloon++] = BALLOON_REPORTING;
	assert_int_equal(migrate_config_check(&cfg, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--balloon=reporting"));
	err_clear(&e);
	cfg.n_balloon--;
	cfg.ksm = RUN_KSM_OFF | RUN_KSM_ON;
	assert_int_equal(migrate_config_check(&cfg, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "--ksm=on"));
	err_clear(&e);
	cfg.ksm = 0;
	assert_string_equal(cfg.wl_opts, "");	/* nothing added by a refused check */
	cfg.warmup = 1;
	cfg.reps = 2;
	{
		uint64_t t = cfg.timeout_ms;

		assert_int_equal(migrate_config_check(&cfg, &e), 0);
		assert_true(cfg.timeout_ms > t);
	}
	assert_string_equal(cfg.wl_opts, "memset:keep=90,memset:keep-rep=2,memset:keep-thp=always");
	/* twice: the user's own keep is refused */
	assert_int_equal(migrate_config_check(&cfg, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "keep"));
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

/* a guest's last words: the oops and the panic of a destination's console, stamps dropped */
static void test_crashlog(void **state)
{
	char path[] = "/tmp/thpeval-crashlog-XXXXXX", said[400];
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_text(path, "thpeval: round 1 guest_thp=never memset\n"
		   "[   36.632094] BUG: kernel NULL pointer dereference, address: 0000000000000000\n"
		   "[   36.645513] Oops: 0010 [#1] PREEMPT SMP NOPTI\n"
		   "[   36.741291] Kernel panic - not syncing: Fatal exception in interrupt\r\n"
		   "[   36.746943] Rebooting in 1 seconds..\n");
	assert_int_equal(crashlog_panic(path, said, sizeof(said)), 0);
	assert_string_equal(said, "Oops: 0010 [#1] PREEMPT SMP NOPTI; Kernel panic - not syncing: Fatal exception "
			    "in interrupt");
	/* no panic: nothing said */
	write_text(path, "thpeval: runner 0.1.0 starting as PID 1\nBUG: not a kernel line\n");
	assert_int_equal(crashlog_panic(path, said, sizeof(said)), -1);
	assert_string_equal(said, "");
	/* the guest's bytes are untrusted: control characters do not pass */
	write_text(path, "Kernel panic - not syncing: \x1b[31mred\x07\n");
	assert_int_equal(crashlog_panic(path, said, sizeof(said)), 0);
	assert_null(strchr(said, 0x1b));
	assert_null(strchr(said, 0x07));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(crashlog_panic(path, said, sizeof(said)), -1);
}

static void add(struct results *r, const char *arm, double access_after)
{
	struct migration_log *m = results_migration_add(r, NULL);

	assert_non_null(m);
	snprintf(m->arm, sizeof(m->arm), "%s", arm);
	snprintf(m->host_thp, sizeof(m->host_thp), "always");
	m->access_before_ns = 100;
	m->access_after_ns = access_after;
}

static const struct mig_summary *find(const struct results *r, const char *arm, const char *metric,
				      const char *phase)
{
	size_t i;

	for (i = 0; i < r->nmigsum; i++)
		if (!strcmp(r->migsum[i].arm, arm) && !strcmp(r->migsum[i].metric, metric) &&
		    !strcmp(r->migsum[i].phase, phase))
			return &r->migsum[i];
	return NULL;
}

/* means, t intervals over boots, the effect against none; failed boots left out */
static void test_summary(void **state)
{
	struct results r;
	struct err e = ERR_INIT;
	const struct mig_summary *s;

	(void)state;
	results_init(&r);
	add(&r, "none", 100);
	add(&r, "none", 110);
	add(&r, "precopy", 150);
	add(&r, "precopy", 170);
	add(&r, "postcopy", 400);
	snprintf(r.migrations[r.nmigrations - 1].error, sizeof(r.migrations[0].error), "failed");
	assert_int_equal(migration_summarize(&r, &e), 0);
	s = find(&r, "none", "access_ns", "right_after");
	assert_non_null(s);
	assert_int_equal(s->boots, 2);
	assert_float_equal(s->mean, 105, 1e-9);
	/* t(0.975, 1) = 12.706; sd = 7.071, se = 5 */
	assert_float_equal(s->ci_hi - s->mean, 12.7062 * 5, 1e-2);
	assert_true(isnan(s->effect_pct));
	s = find(&r, "precopy", "access_ns", "right_after");
	assert_non_null(s);
	assert_float_equal(s->effect_pct, 100.0 * (160 - 105) / 105, 1e-9);
	assert_true(s->effect_lo_pct < s->effect_pct && s->effect_hi_pct > s->effect_pct);
	assert_null(find(&r, "postcopy", "access_ns", "right_after"));	/* its one boot failed */
	assert_null(find(&r, "none", "write_ns_per_4k", "before"));	/* never measured */
	results_release(&r);
}

static void test_mode_names(void **state)
{
	enum migrate_mode m;

	(void)state;
	assert_string_equal(migrate_mode_name(MIGRATE_POSTCOPY), "postcopy");
	assert_int_equal(migrate_mode_parse("precopy", &m), 0);
	assert_int_equal(m, MIGRATE_PRECOPY);
	assert_int_equal(migrate_mode_parse("Precopy", &m), -EINVAL);
}

int main(void)
{
	struct CMUnitTest tests[N(opt_cases) + 4];
	size_t i, n = 0;

	for (i = 0; i < N(opt_cases); i++)
		tests[n++] = (struct CMUnitTest){ opt_cases[i].name, test_opt, NULL, NULL,
						  (void *)(uintptr_t)&opt_cases[i] };
	tests[n++] = (struct CMUnitTest){ "the keep phase and the refusals", test_config_check, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "summary over boots", test_summary, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "mode names", test_mode_names, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "a panicked guest's last words", test_crashlog, NULL, NULL, NULL };
	return _cmocka_run_group_tests("migrate", tests, n, NULL, NULL);
}
