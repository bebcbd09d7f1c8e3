/* thpeval compare: the regression gate between two stored runs */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/model/results_load.h"

enum compare_opt { CO_THRESHOLD, CO_GATE };

static const struct opt compare_opts[] = {
	{ "threshold", "PCT", "5", "smallest change, in percent, that counts as a regression", CO_THRESHOLD },
	{ "gate", "primary|all", "primary", "metrics that gate: each workload's primary ones ('thpeval workloads' lists them under 'gated by default'), or every metric with a direction", CO_GATE },
};

const struct command compare_cmd = {
	.name = "compare",
	.args = "BASELINE CURRENT",
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
		   "Exit status: 0 the gate passes, 1 it fails, 2 error or bad usage.",
	CLI_OPTS(compare_opts),
};

static int compare_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct compare_opts *o = ctx;

	if (id == CO_GATE)
		return cmp_gate_parse(arg, &o->gate, e);
	if (id != CO_THRESHOLD)
		return err_set(e, -EINVAL, "internal: unhandled option %d", id);
	if (parse_double(arg, &o->threshold_pct) || o->threshold_pct < 0 || o->threshold_pct > 1000)
		return err_set(e, -EINVAL, "not a percentage from 0 to 1000: %s", err_q(arg));
	return 0;
}

int cmd_compare(int argc, char **argv_in)
{
	char **argv = malloc(((size_t)argc + 1) * sizeof(*argv));
	struct compare_opts o = { COMPARE_DEFAULT_THRESHOLD_PCT, GATE_PRIMARY };
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
	if (cli_parse(&compare_cmd, argc, argv, compare_opt, &o, &first, &help, NULL, &e)) {
		cmd_fail(&e, CMD_USAGE);
		goto out;
	}
	if (help) {
		cli_help(&compare_cmd, stdout);
		rc = CMD_OK;
		goto out;
	}
	if (argc - first != 2) {
		cmd_error("compare: give BASELINE and CURRENT (results.json files or run directories)");
		goto out;
	}
	if (results_load(argv[first], base, &e) || results_load(argv[first + 1], cur, &e) ||
	    compare_results(base, cur, &o, &cmp, &e)) {
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
