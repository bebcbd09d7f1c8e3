#include "orchestrator/cmd/execopts.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse.h"

void exec_opts_defaults(struct exec_opts *x)
{
	memset(x, 0, sizeof(*x));
	snprintf(x->dir, sizeof(x->dir), "higher");
	x->timeout_ms = EXEC_TIMEOUT_DEFAULT_MS;
}

size_t exec_opts_cmdline_bytes(const struct exec_opts *x)
{
	return strlen(x->argv_enc) + strlen(x->metric_enc);
}

static int budget(const struct exec_opts *x, struct err *e)
{
	size_t n = exec_opts_cmdline_bytes(x);

	if (n > EXEC_CMDLINE_BUDGET)
		return err_set(e, -E2BIG, "the command%s take%s %zu bytes of the guest kernel command line "
			       "(3 for each character outside [A-Za-z0-9_./-]); %d fit there: "
			       "shorten %s", x->metric_set ? " and the pattern" : "", x->metric_set ? "" : "s", n,
			       EXEC_CMDLINE_BUDGET, x->metric_set ? "them" : "it");
	return 0;
}

int exec_opts_command(struct exec_opts *x, const char *arg, struct err *e)
{
	struct argv_list *a = malloc(sizeof(*a));
	int r;

	if (!a)
		return err_set(e, -ENOMEM, "out of memory");
	r = argv_split("the command", arg, a, e);
	if (!r && argv_encode(a, x->argv_enc, sizeof(x->argv_enc)) < 0)
		r = err_set(e, -E2BIG, "the command does not fit its encoding");
	if (!r)
		r = budget(x, e);
	if (!r) {
		x->set = true;
		x->nargs = a->n;
		snprintf(x->program, sizeof(x->program), "%s", a->v[0]);
	} else {
		x->argv_enc[0] = '\0';
	}
	free(a);
	return r;
}

int exec_opts_metric(struct exec_opts *x, const char *arg, struct err *e)
{
	char why[128];
	regex_t re;
	int r = argv_text_check("the pattern", arg, ARGV_PATTERN_MAX, e);

	if (r)
		return r;
	r = regcomp(&re, arg, REG_EXTENDED);
	if (r) {
		regerror(r, &re, why, sizeof(why));
		return err_set(e, -EINVAL, "not a POSIX extended regex: %s: %s", why, err_q(arg));
	}
	if (re.re_nsub != 1) {
		size_t groups = re.re_nsub;

		regfree(&re);
		return err_set(e, -EINVAL, "%zu capture groups: the pattern needs exactly one, "
			       "around the number (e.g. 'ops/s: ([0-9.]+)'): %s", groups, err_q(arg));
	}
	regfree(&re);
	if (argv_encode_word(arg, x->metric_enc, sizeof(x->metric_enc)) < 0)
		return err_set(e, -E2BIG, "the pattern does not fit its encoding");
	x->metric_set = true;
	if ((r = budget(x, e))) {
		x->metric_enc[0] = '\0';
		x->metric_set = false;
	}
	return r;
}

int exec_opts_direction(struct exec_opts *x, const char *arg, struct err *e)
{
	if (strcmp(arg, "higher") && strcmp(arg, "lower"))
		return err_set(e, -EINVAL, "not a direction: use higher or lower (which way the "
			       "number --exec-metric reads is better): %s", err_q(arg));
	snprintf(x->dir, sizeof(x->dir), "%s", arg);
	x->dir_set = true;
	return 0;
}

int exec_opts_timeout(struct exec_opts *x, const char *arg, struct err *e)
{
	uint64_t v;
	int r = parse_duration_ms(arg, &v);

	if (r || v < 1000 || v > 24ull * 3600 * 1000)
		return err_set(e, r ? r : -ERANGE, "not a duration from 1s to 24h (e.g. 90s, 10m): %s", err_q(arg));
	x->timeout_ms = v;
	x->timeout_set = true;
	return 0;
}

int exec_opts_check(const struct exec_opts *x, bool planned, bool on_host, struct err *e)
{
	if (planned && !x->set)
		return err_set(e, -EINVAL, "--workloads=exec needs --exec='CMD ARGS': the command to run in "
			       "the guests");
	if (!planned && (x->set || x->metric_set || x->dir_set || x->timeout_set))
		return err_set(e, -EINVAL, "--exec%s are for the exec workload: add exec to --workloads",
			       x->set ? " and its options" : "-metric, --exec-direction and --exec-timeout");
	if (!planned)
		return 0;
	if (on_host)
		return err_set(e, -EINVAL, "the exec workload runs in guests only (thpeval never runs a "
			       "user's command on the host): use --target=guest");
	if (x->metric_set && !x->dir_set)
		return err_set(e, -EINVAL, "--exec-metric needs --exec-direction=higher|lower: which way "
			       "its number is better");
	if (x->dir_set && !x->metric_set)
		return err_set(e, -EINVAL, "--exec-direction needs --exec-metric: the pattern of the number "
			       "it is about");
	return 0;
}

void exec_opts_from_wlopts(struct exec_opts *x, const char *spec)
{
	struct wlopt o[WLOPTS_MAX];
	size_t n = 0, i;
	uint64_t v;

	exec_opts_defaults(x);
	if (!spec[0] || wlopts_parse(spec, o, WLOPTS_MAX, &n, NULL, 0))
		return;
	for (i = 0; i < n; i++) {
		const char *p = o[i].param, *val = o[i].value;

		if (strcmp(o[i].workload, "exec"))
			continue;
		if (!strcmp(p, "argv") && strlen(val) < sizeof(x->argv_enc)) {
			snprintf(x->argv_enc, sizeof(x->argv_enc), "%s", val);
			x->set = true;
		} else if (!strcmp(p, "metric") && strlen(val) < sizeof(x->metric_enc)) {
			snprintf(x->metric_enc, sizeof(x->metric_enc), "%s", val);
			x->metric_set = true;
		} else if (!strcmp(p, "direction")) {
			snprintf(x->dir, sizeof(x->dir), "%.7s", val);
			x->dir_set = true;
		} else if (!strcmp(p, "timeout") && !parse_u64(val, &v) && v <= 24 * 3600) {
			x->timeout_ms = v * 1000;
			x->timeout_set = true;
		}
	}
}
