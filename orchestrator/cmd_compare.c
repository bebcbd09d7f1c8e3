/* thpeval compare: the regression gate between two stored runs */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse.h"
#include "orchestrator/commands.h"
#include "orchestrator/compare.h"
#include "orchestrator/results_load.h"

enum compare_opt { CO_THRESHOLD };

static const struct opt compare_opts[] = {
	{ "threshold", "PCT", "5", "smallest change, in percent, that counts as a regression", CO_THRESHOLD },
};

const struct command compare_cmd = {
	.name = "compare",
	.args = "BASELINE CURRENT",
	.summary = "Compare two runs (results.json files or run directories) cell by cell and metric by\n"
		   "metric; exit 1 when a metric got worse beyond the threshold and significantly.",
	.details = "Cells match by target, host THP, prefault, guest THP, workload and variant.\n"
		   "Direction: *_ns *_us *_ms *_s *_cycles and fault counts are lower-is-better;\n"
		   "*_mib_s *_gib_s *_per_s higher-is-better; coverage (*_huge_pct) higher where that\n"
		   "side's THP is on, lower where it is never; other metrics are info only.\n"
		   "Significance: Welch's t-test on the samples, two-sided p < 0.05.\n"
		   "Exit status: 0 no regression, 1 regression, 2 error or bad usage.",
	.opts = compare_opts,
	.nopts = sizeof(compare_opts) / sizeof(compare_opts[0]),
};

static int compare_opt(void *ctx, int id, const char *arg, struct err *e)
{
	double *threshold = ctx;

	if (id != CO_THRESHOLD)
		return err_set(e, -EINVAL, "internal: unhandled option %d", id);
	if (parse_double(arg, threshold) || *threshold < 0 || *threshold > 1000)
		return err_set(e, -EINVAL, "'%s' is not a percentage from 0 to 1000", arg);
	return 0;
}

int cmd_compare(int argc, char **argv_in)
{
	char **argv = malloc(((size_t)argc + 1) * sizeof(*argv));
	double threshold = COMPARE_DEFAULT_THRESHOLD_PCT;
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
	if (cli_parse(&compare_cmd, argc, argv, compare_opt, &threshold, &first, &help, &e)) {
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
	    compare_results(base, cur, threshold, &cmp, &e)) {
		cmd_fail(&e, CMD_USAGE);
		goto out;
	}
	printf("baseline %s\ncurrent  %s\n\n", argv[first], argv[first + 1]);
	compare_print(&cmp, base, cur, stdout);
	rc = cmp.nregressions ? CMD_ERROR : CMD_OK;
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
