/* thpeval compare: the regression gate between two stored runs, or of one run against the history */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/cmd/histgate.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/history/history.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/model/results_load.h"

enum compare_opt { CO_THRESHOLD, CO_GATE, CO_HISTORY, CO_DB, CO_HOST, CO_FAIL_ON, CO_RUNS };

static const struct opt compare_opts[] = {
	OPT_ROW("threshold", "PCT", "5", "smallest change, in percent, that counts as a regression", CO_THRESHOLD),
	OPT_ROW("gate", "primary|all", "primary", "metrics that gate: each workload's primary ones ('thpeval workloads' lists them under 'gated by default'), or every metric with a direction", CO_GATE),
	OPT_ROW("history", NULL, NULL, "judge CURRENT against the earlier complete runs of its host and setup in --db (the history gate, doc/gate.md): per metric kind ok, suspect, regression or no-history; exit 1 on a regression", CO_HISTORY),
	OPT_ROW("db", "PATH|URI", HISTORY_DEFAULT_DB, "with --history: the history database, an SQLite file or a postgresql:// URI", CO_DB),
	OPT_ROW("host", "NAME", NULL, "with --history: the host whose runs CURRENT is judged against (default: CURRENT's host.name)", CO_HOST),
	OPT_ROW("fail-on", "regression|suspect", "regression", "with --history: the verdict that makes the exit status 1", CO_FAIL_ON),
	OPT_ROW("runs", "K", "10", "with --history: the earlier runs a run is judged against (5-100)", CO_RUNS),
};

const struct command compare_cmd = {
	.name = "compare",
	.args = "BASELINE CURRENT | --history CURRENT",
	.summary = "Compare two runs (results.json files or run directories) cell by cell and metric by\n"
		   "metric; exit 1 when a gated metric got worse beyond the threshold at a family-wise\n"
		   "5% error rate, or a gated cell is invalid in the current run and worse.",
	.details = "Cells match by target, host THP, prefault, guest THP, workload and variant.\n"
		   "Direction: *_ns *_us *_ms *_s *_cycles and fault counts are lower-is-better;\n"
		   "*_mib_s *_gib_s *_per_s higher-is-better; coverage (*_huge_pct) higher where that\n"
		   "side's THP is on, lower where it is never; exec's metric_higher and metric_lower\n"
		   "as named; other metrics are info only.\n"
		   "Change: ratio of geometric means, 95% CI on the log scale, over guest boots where\n"
		   "both runs have 2 or more (else over repetitions, labelled). Regression: worse beyond\n"
		   "the threshold, one-sided, Holm-corrected over every gated metric; ok: the interval\n"
		   "shows the change within the threshold; inconclusive: neither (counted, exit 0).\n"
		   "--history judges CURRENT against the earlier complete runs of its host and setup\n"
		   "in --db instead, per metric kind with the runs' own drift: suspect (this run\n"
		   "alone beyond the threshold), regression (the newest 3 runs), no-history (fewer\n"
		   "than 5 runs: the A/B comparison with the newest run is shown instead).\n"
		   "Exit status: 0 the gate passes, 1 it fails, 2 error or bad usage.",
	CLI_OPTS(compare_opts),
};

struct compare_args {
	struct compare_opts o;
	struct gate_opts go;
	bool history, hist_only;	/* hist_only: an option that means nothing without --history */
	char db[PATH_MAX];
	char host[65];
};

static int compare_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct compare_args *a = ctx;
	uint64_t v;

	switch ((enum compare_opt)id) {
	case CO_GATE:
		return cmp_gate_parse(arg, &a->o.gate, e);
	case CO_THRESHOLD:
		if (parse_double(arg, &a->o.threshold_pct) || a->o.threshold_pct < 0 || a->o.threshold_pct > 1000)
			return err_set(e, -EINVAL, "not a percentage from 0 to 1000: %s", err_q(arg));
		a->go.threshold_pct = a->o.threshold_pct;
		return 0;
	case CO_HISTORY:
		a->history = true;
		return 0;
	case CO_DB:
		a->hist_only = true;
		if (histdb_target_parse(arg, &(struct histdb_target){ 0 }, e))
			return e->code;
		snprintf(a->db, sizeof(a->db), "%s", arg);
		return 0;
	case CO_HOST:
		a->hist_only = true;
		if (!*arg || strlen(arg) >= sizeof(a->host) || strpbrk(arg, "\n\r\t"))
			return err_set(e, -EINVAL, "not a host name (1-64 printable characters): %s", err_q(arg));
		snprintf(a->host, sizeof(a->host), "%s", arg);
		return 0;
	case CO_FAIL_ON:
		a->hist_only = true;
		return gate_fail_on_parse(arg, &a->go.fail_on, e);
	case CO_RUNS:
		a->hist_only = true;
		if (parse_u64_range(arg, GATE_MIN_K, GATE_K_MAX, &v))
			return err_set(e, -EINVAL, "not a run count from %d to %d: %s", GATE_MIN_K, GATE_K_MAX, err_q(arg));
		a->go.k = (unsigned)v;
		return 0;
	}
	return err_set(e, -EINVAL, "internal: unhandled option %d", id);
}

/* compare --history CURRENT: the history gate; exit 1 on its failure */
static int compare_history(struct compare_args *a, const char *path)
{
	struct results *cur = malloc(sizeof(*cur));
	struct gate_result g;
	struct err e = ERR_INIT;
	int rc;

	if (!cur) {
		cmd_error("out of memory");
		return CMD_ERROR;
	}
	if (results_load(path, cur, &e)) {
		free(cur);
		return cmd_fail(&e, CMD_USAGE);
	}
	if (a->host[0])
		snprintf(cur->host.name, sizeof(cur->host.name), "%s", a->host);
	printf("current  %s\n", path);
	if (histgate_run(a->db, cur, &a->go, &a->o, &g, stdout, &e)) {
		rc = cmd_fail(&e, CMD_ERROR);
	} else {
		rc = gate_failed(&g) ? CMD_ERROR : CMD_OK;
		gate_result_release(&g);
		if (fflush(stdout)) {
			cmd_error("cannot write to stdout");
			rc = CMD_USAGE;
		}
	}
	results_release(cur);
	free(cur);
	return rc;
}

int cmd_compare(int argc, char **argv_in)
{
	char **argv = malloc(((size_t)argc + 1) * sizeof(*argv));
	struct compare_args a = { .o = { COMPARE_DEFAULT_THRESHOLD_PCT, GATE_PRIMARY },
				  .go = { COMPARE_DEFAULT_THRESHOLD_PCT, GATE_DEFAULT_K, GATE_FAIL_ON_REGRESSION, false },
				  .db = HISTORY_DEFAULT_DB };
	struct results *base = malloc(sizeof(*base)), *cur = malloc(sizeof(*cur));
	struct comparison cmp;
	struct err e = ERR_INIT;
	bool help;
	int first, rc = CMD_USAGE;

	if (!base || !cur || !argv) {
		cmd_error("out of memory");
		goto out_free;
	}
	argc = cmd_args_permute(&compare_cmd, argc, argv_in, argv);
	results_init(base);
	results_init(cur);
	if (cli_parse(&compare_cmd, argc, argv, compare_opt, &a, &first, &help, NULL, &e)) {
		cmd_fail(&e, CMD_USAGE);
		goto out;
	}
	if (help) {
		cli_help(&compare_cmd, stdout);
		rc = CMD_OK;
		goto out;
	}
	if (a.history) {
		if (argc - first != 1)
			cmd_error("compare: --history takes one run, CURRENT (a results.json file or run directory)");
		else
			rc = compare_history(&a, argv[first]);
		goto out;
	}
	if (a.hist_only) {
		cmd_error("compare: --db, --host, --fail-on and --runs are for --history");
		goto out;
	}
	if (argc - first != 2) {
		cmd_error("compare: give BASELINE and CURRENT (results.json files or run directories)");
		goto out;
	}
	if (results_load(argv[first], base, &e) || results_load(argv[first + 1], cur, &e) ||
	    compare_results(base, cur, &a.o, &cmp, &e)) {
		cmd_fail(&e, CMD_USAGE);
		goto out;
	}
	printf("baseline %s\ncurrent  %s\n\n", argv[first], argv[first + 1]);
	compare_print(&cmp, base, cur, stdout);
	rc = comparison_failed(&cmp) ? CMD_ERROR : CMD_OK;
	if (fflush(stdout)) {
		cmd_error("cannot write to stdout");
		rc = CMD_USAGE;
	}
	comparison_release(&cmp);
out:
	results_release(base);
	results_release(cur);
out_free:
	free(base);
	free(cur);
	free(argv);
	return rc;
}
