/*
 * tests for the run command's documented defaults (cmd/run_opts.c's table,
 * cmd/cli.c's cli_defaults()): for every option, the default that --help
 * shows, parsed as if given, leaves the value the parser leaves when the
 * option is not given; doc/thpeval.1 says the same default in the option's
 * entry; the defaults computed at run time are what their words say. A
 * planted mismatch of each kind is caught.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/parse.h"
#include "orchestrator/cmd/cli.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/run/config.h"
#include "orchestrator/run/workloads.h"
#include "tests/orchestrator/fixture.h"

/* how the configuration with no option given is made: run_config_init() for cmd */
typedef int (*init_fn)(const struct command *cmd, struct run_config *c, struct err *e);

static int init_real(const struct command *cmd, struct run_config *c, struct err *e)
{
	run_config_defaults(c);
	return cli_defaults(cmd, run_config_opt, c, e);
}

/*
 * Other spellings of a workload's own parameters (cmd/run_alias.c): their
 * default is the workload's, which the guest program lists; each with the
 * parameters its default names, in order, and whether it is in seconds
 * (a duration here).
 */
static const struct {
	const char *name, *workload, *params[2];
	bool duration;
} aliases[] = {
	{ "kcompile", "kcompile", { "config", "target" }, false },
	{ "kcompile-timeout", "kcompile", { "timeout", NULL }, true },
	{ "exec-timeout", "exec", { "timeout", NULL }, true },
};

static bool is_alias(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(aliases[i].name, name))
			return true;
	return false;
}

/*
 * Defaults said in words (a row with .def_note only): decided after the
 * options (run_config_check()) or at run time; each must be listed here with
 * what the words promise of the configuration with no option given.
 */
static const char *const computed[] = {
	"target-ci",	/* 15,5 unless --boots: what run_config_check() sets */
	"max-reps",	/* 50 x --reps: run_config_check() */
	"budget",	/* 4m45s with the default target: run_config_check() */
	"seed",		/* time-based: 0 here, cmd_run() picks one */
	"out",		/* thpeval-results/<time>: empty here, cmd_run() stamps it */
	"kernel",	/* thpeval's own: empty here, the image builds it */
	"emulator",	/* libvirt's: none here */
	"guest-bin",	/* beside thpeval: empty here, cmd_run() looks it up */
	"khugepaged",	/* the host's: no knob set, the host's values are recorded */
	"ksm",		/* KSM as the host has it: no arm (cfg->ksm 0), nothing journaled */
};

/* noinline: gcc takes open_memstream()'s buffer for a local one */
__attribute__((noinline)) static char *help_text(const struct command *cmd)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cli_help(cmd, f);
	fclose(f);
	return buf;
}

/* the "(default: ...)" text of --name in help, spaces collapsed; "" for none */
static void help_default(const char *help, const char *name, char *out, size_t len)
{
	char head[80], text[2048];
	const char *p, *end, *d;
	size_t n = 0;

	out[0] = '\0';
	snprintf(head, sizeof(head), "\n  --%s", name);
	for (p = strstr(help, head); p; p = strstr(p + 1, head))
		if (strchr("= \n", p[strlen(head)]))
			break;
	if (!p)
		fail_msg("--help has no --%s", name);
	p++;
	end = strstr(p, "\n  -");
	for (; *p && p != end && n + 1 < sizeof(text); p++)
		if (!isspace((unsigned char)*p) || (n && text[n - 1] != ' '))
			text[n++] = isspace((unsigned char)*p) ? ' ' : *p;
	while (n && text[n - 1] == ' ')
		n--;
	text[n] = '\0';
	for (d = strstr(text, "(default: "), p = d; p; p = strstr(p + 1, "(default: "))
		d = p;
	if (d && n && text[n - 1] == ')')
		snprintf(out, len, "%.*s", (int)(text + n - 1 - (d + 10)), d + 10);
}

static const struct opt *find_opt(const struct command *cmd, const char *name)
{
	size_t i;

	for (i = 0; i < cmd->nopts; i++)
		if (!strcmp(cmd->opts[i].name, name))
			return &cmd->opts[i];
	return NULL;
}

/* the .def_note of --name ("" when none) */
static const char *note_of(const char *name)
{
	const struct opt *o = find_opt(&run_cmd, name);

	return o && o->def_note ? o->def_note : "";
}

static bool is_computed(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(computed) / sizeof(computed[0]); i++)
		if (!strcmp(computed[i], name))
			return true;
	return false;
}

/* c: init, then "run --NAME=VALUE" parsed into it (without cmd's rules) */
static int parse_one(const struct command *cmd, init_fn init, const char *name, const char *value,
		     struct run_config *c, struct err *e)
{
	char a0[] = "run", a1[4200];
	char *argv[] = { a0, a1, NULL };
	struct command alone = *cmd;
	bool help;
	int first;

	alone.nrules = 0;	/* what one option needs of another does not change its value */
	snprintf(a1, sizeof(a1), "--%s=%s", name, value);
	if (init(cmd, c, e))
		return e->code;
	return cli_parse(&alone, 2, argv, run_config_opt, c, &first, &help, NULL, e);
}

/* whether o's target reads the same in a and b (its field, or the whole struct) */
static bool same_value(const struct opt *o, const struct run_config *a, const struct run_config *b)
{
	const char *pa = (const char *)a, *pb = (const char *)b;

	if (o->size)
		return !memcmp(pa + o->off, pb + o->off, o->size);
	if (o->type != OPT_CALL)
		fail_msg("--%s: a default of an OPT_TEXT row without a field to compare: give it a type, or a "
			 "line in this test's aliases table", o->name);
	return !memcmp(a, b, sizeof(*a));
}

/*
 * For every option of cmd with a default: the --help default, given, against
 * the configuration init leaves. Returns the mismatches; the first is said in why.
 */
static size_t defaults_mismatch(const struct command *cmd, init_fn init, char *why, size_t len)
{
	struct run_config *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	char *help = help_text(cmd), def[512];
	struct err e = ERR_INIT;
	size_t i, bad = 0;

	assert_non_null(a);
	assert_non_null(b);
	why[0] = '\0';
	assert_int_equal(init(cmd, a, &e), 0);
	for (i = 0; i < cmd->nopts; i++) {
		const struct opt *o = &cmd->opts[i];

		help_default(help, o->name, def, sizeof(def));
		if (!def[0] || (o->def_note && !o->def) || is_alias(o->name))
			continue;
		if (o->def_note)	/* "4, then by --target-ci": the value is before the note */
			*strstr(def, ", ") = '\0';
		memset(b, 0, sizeof(*b));
		err_clear(&e);
		if (parse_one(cmd, init, o->name, def, b, &e) || !same_value(o, a, b)) {
			if (!bad++)
				snprintf(why, len, "--%s: --help says the default is '%s', but %s", o->name, def,
					 err_isset(&e) ? e.msg : "the option not given leaves another value");
		}
	}
	free(help);
	free(a);
	free(b);
	return bad;
}

static void test_defaults_as_documented(void **state)
{
	char why[1024];
	size_t n = defaults_mismatch(&run_cmd, init_real, why, sizeof(why));

	if (n)
		fail_msg("%zu option(s) with a default other than --help says; first: %s", n, why);
}

/*
 * The aliases' documented defaults against the workloads' own, as the guest
 * program lists them. Returns the mismatches; the first is said in why.
 */
static size_t alias_mismatch(const struct command *cmd, const struct workload_info *wl, size_t n, char *why,
			     size_t len)
{
	size_t i, k, bad = 0;

	why[0] = '\0';
	for (i = 0; i < cmd->nopts; i++)
		for (k = 0; k < sizeof(aliases) / sizeof(aliases[0]); k++) {
			const struct workload_info *wi = workload_find(wl, n, aliases[k].workload);
			char want[256] = "", v[64];
			uint64_t ms;
			size_t p;

			if (strcmp(cmd->opts[i].name, aliases[k].name))
				continue;
			if (!wi)
				fail_msg("the guest program lists no workload '%s'", aliases[k].workload);
			for (p = 0; p < 2 && aliases[k].params[p]; p++) {
				const char *d = workload_opt_value("", wi, aliases[k].params[p], v, sizeof(v));

				snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s%s", p ? ":" : "",
					 d ? d : "(none)");
			}
			if (aliases[k].duration && cmd->opts[i].def && !parse_duration_ms(cmd->opts[i].def, &ms))
				snprintf(v, sizeof(v), "%llu", (unsigned long long)(ms / 1000));
			else
				snprintf(v, sizeof(v), "%s", cmd->opts[i].def ? cmd->opts[i].def : "(none)");
			if (strcmp(v, want) && !bad++)
				snprintf(why, len, "--%s: --help says the default is '%s', the %s workload's is '%s'",
					 cmd->opts[i].name, cmd->opts[i].def ? cmd->opts[i].def : "(none)",
					 aliases[k].workload, want);
		}
	return bad;
}

/* the guest program's workloads, or a skip where it is not built */
static size_t guest_workloads(struct workload_info *wl)
{
	const char *bin = getenv("THPEVAL_GUEST_BIN") ? getenv("THPEVAL_GUEST_BIN") : "bin/thpeval-guest";
	struct err e = ERR_INIT;
	size_t n = 0;

	if (access(bin, X_OK)) {
		print_message("skipped: '%s' is not built (make bin/thpeval-guest)\n", bin);
		skip();
	}
	if (workloads_list(bin, wl, WORKLOADS_MAX, &n, &e))
		fail_msg("%s", e.msg);
	return n;
}

static void test_alias_defaults(void **state)
{
	struct workload_info *wl = calloc(WORKLOADS_MAX, sizeof(*wl));
	char why[1024];
	size_t n;

	(void)state;
	assert_non_null(wl);
	n = guest_workloads(wl);
	if (alias_mismatch(&run_cmd, wl, n, why, sizeof(why)))
		fail_msg("%s", why);
	free(wl);
}

/* an alias's default documented apart from its workload's */
static void test_planted_alias_default(void **state)
{
	struct workload_info *wl = calloc(WORKLOADS_MAX, sizeof(*wl));
	struct opt rows[CLI_MAX_ID];
	struct command copy = run_cmd;
	char why[1024];
	size_t i, n;

	(void)state;
	assert_non_null(wl);
	n = guest_workloads(wl);
	assert_true(run_cmd.nopts <= CLI_MAX_ID);
	memcpy(rows, run_cmd.opts, run_cmd.nopts * sizeof(rows[0]));
	for (i = 0; i < run_cmd.nopts; i++)
		if (!strcmp(rows[i].name, "kcompile-timeout"))
			rows[i].def = "30m";	/* the workload says 20 minutes */
	copy.opts = rows;
	assert_int_equal(alias_mismatch(&copy, wl, n, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "--kcompile-timeout: --help says the default is '30m'"));
	free(wl);
}

static int init_overridden(const struct command *cmd, struct run_config *c, struct err *e)
{
	int r = init_real(cmd, c, e);

	c->reps = 4;	/* a default written a second time, differently */
	return r;
}

/* a typed row's default overridden in code after the table's */
static void test_planted_override(void **state)
{
	char why[1024];

	assert_int_equal(defaults_mismatch(&run_cmd, init_overridden, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "--reps: --help says the default is '2'"));
}

/* the defaults said in words: what each promises of the configuration with no option */
static void test_computed_defaults(void **state)
{
	struct run_config *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct err e = ERR_INIT;
	size_t i;

	assert_non_null(a);
	assert_non_null(b);
	for (i = 0; i < run_cmd.nopts; i++) {
		const struct opt *o = &run_cmd.opts[i];

		if (o->def_note && !o->def && !is_computed(o->name))
			fail_msg("--%s: a default in words ('%s') this test does not check: add it to 'computed'",
				 o->name, o->def_note);
	}
	for (i = 0; i < sizeof(computed) / sizeof(computed[0]); i++)
		if (!note_of(computed[i])[0])
			fail_msg("'computed' lists --%s, which has no default in words", computed[i]);
	assert_int_equal(run_config_init(a, &e), 0);
	assert_int_equal(a->seed, 0);
	assert_string_equal(a->out_dir, "");
	assert_string_equal(a->kernel, "");
	assert_string_equal(a->guest_bin, "");
	assert_int_equal(a->n_emulator, 0);
	assert_int_equal(run_config_check(a, &e), 0);
	/* "15,5 unless --boots" */
	assert_int_equal(parse_one(&run_cmd, init_real, "target-ci", "15,5", b, &e), 0);
	assert_true(a->target_ci_host == b->target_ci_host && a->target_ci_guest == b->target_ci_guest);
	assert_true(strstr(note_of("target-ci"), "15,5 ") != NULL);
	/* "4m45s with the default target" */
	assert_int_equal(parse_one(&run_cmd, init_real, "budget", "4m45s", b, &e), 0);
	assert_int_equal(a->budget_ms, b->budget_ms);
	assert_true(strncmp(note_of("budget"), "4m45s ", 6) == 0);
	/* "50 x --reps" */
	assert_int_equal(a->max_reps, 50 * a->reps);
	assert_true(strncmp(note_of("max-reps"), "50 x --reps", 11) == 0);
	/* and with --boots given there is no target */
	assert_int_equal(parse_one(&run_cmd, init_real, "boots", "4", b, &e), 0);
	assert_int_equal(run_config_check(b, &e), 0);
	assert_true(b->target_ci_host == 0 && b->budget_ms == 0);
	free(a);
	free(b);
}

/* the ".TP" entry of --name in the run section: up to the next .TP, .SS or .SH */
static char *man_entry(const char *man, const char *name)
{
	const char *run = strstr(man, "\n.SS run\n"), *end, *p;
	char head[80];

	assert_non_null(run);
	snprintf(head, sizeof(head), "\n.TP\n--%s", name);
	for (p = strstr(run, head); p; p = strstr(p + 1, head))
		if (strchr("= \n", p[strlen(head)]))
			break;
	if (!p || (strstr(run + 1, "\n.SS ") && p > strstr(run + 1, "\n.SS ")))
		return NULL;
	p += strlen(head);
	end = p + strcspn(p, "");
	if (strstr(p, "\n.TP") && strstr(p, "\n.TP") < end)
		end = strstr(p, "\n.TP");
	if (strstr(p, "\n.S") && strstr(p, "\n.S") < end)
		end = strstr(p, "\n.S");
	return strndup(p, (size_t)(end - p));
}

/* doc/thpeval.1 against cmd's table: each default said as "Default: DEF" */
static size_t man_mismatch(const struct command *cmd, const char *man, char *why, size_t len)
{
	size_t i, bad = 0;

	why[0] = '\0';
	for (i = 0; i < cmd->nopts; i++) {
		const struct opt *o = &cmd->opts[i];
		char *entry = man_entry(man, o->name), want[512];
		const char *d = entry ? strstr(entry, "Default: ") : NULL;
		const char *problem = NULL;

		snprintf(want, sizeof(want), "Default: %s", o->def ? o->def : "");
		if (!entry)
			problem = "has no entry";
		else if ((o->def || o->def_note) && !d)
			problem = "says no default";
		else if (o->def && (strncmp(d, want, strlen(want)) || !strchr(". ,(\n", d[strlen(want)])))
			problem = "says another default";
		else if (!o->def && !o->def_note && d)
			problem = "says a default the table does not have";
		if (problem && !bad++)
			snprintf(why, len, "--%s: doc/thpeval.1 %s (the table's: '%s')", o->name, problem,
				 o->def ? o->def : o->def_note ? o->def_note : "none");
		free(entry);
	}
	return bad;
}

static void test_man_defaults(void **state)
{
	char *man = fixture_man_text(), why[1024];
	size_t n = man_mismatch(&run_cmd, man, why, sizeof(why));

	if (n)
		fail_msg("%zu option(s) documented otherwise in doc/thpeval.1; first: %s", n, why);
	free(man);
}

static void test_planted_man_default(void **state)
{
	char *man = fixture_man_text(), why[1024], *entry = man_entry(man, "reps"), *at;

	assert_non_null(entry);
	at = strstr(man, entry);
	assert_non_null(at);
	at = strstr(at, "Default: 2");
	assert_non_null(at);
	at[strlen("Default: ")] = '4';
	assert_int_equal(man_mismatch(&run_cmd, man, why, sizeof(why)), 1);
	assert_non_null(strstr(why, "--reps: doc/thpeval.1 says another default (the table's: '2')"));
	free(entry);
	free(man);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_as_documented),
		cmocka_unit_test(test_alias_defaults),
		cmocka_unit_test(test_planted_alias_default),
		cmocka_unit_test(test_planted_override),
		cmocka_unit_test(test_computed_defaults),
		cmocka_unit_test(test_man_defaults),
		cmocka_unit_test(test_planted_man_default),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
