/* thpeval report: regenerate reports from a stored results.json */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/report/report.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/model/results_load.h"

enum report_opt { RPO_FORMAT, RPO_OUT, RPO_BASELINE, RPO_THRESHOLD, RPO_GATE };

static const struct opt report_opts[] = {
	{ "format", "LIST", "text", "comma-separated formats: " REPORT_FORMATS_HELP
	  "; several need --out", RPO_FORMAT },
	{ "out", "DIR", "stdout", "write results.txt, results.json, results.csv, report.html or junit.xml"
	  " into DIR (created); each file appears only when complete", RPO_OUT },
	{ "baseline", "PATH", NULL, "compare with this results.json (or run directory): adds the"
	  " comparison to text and HTML and the regression gates to JUnit", RPO_BASELINE },
	{ "threshold", "PCT", "5", "smallest change, in percent, that counts as a regression"
	  " (with --baseline)", RPO_THRESHOLD },
	{ "gate", "primary|all", "primary", "with --baseline: metrics that gate, each workload's primary"
	  " ones or every metric with a direction ('thpeval help compare')", RPO_GATE },
};

const struct command report_cmd = {
	.name = "report",
	.args = "DIR|results.json",
	.summary = "Render the results of a finished run again, without rerunning it: the text table,\n"
		   "JSON, CSV (one row per sample), a self-contained HTML report with charts, or JUnit XML.",
	.details = "DIR is a run's output directory (its results.json is read). Without --out the\n"
		   "single format given is written to stdout.\n"
		   "Example: thpeval report results --format=html,junit,csv --out=results",
	CLI_OPTS(report_opts),
};

struct report_args {
	unsigned formats;
	char out[PATH_MAX];
	char baseline[PATH_MAX];
	struct compare_opts cmp;
};

static int report_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct report_args *a = ctx;

	switch ((enum report_opt)id) {
	case RPO_FORMAT:
		return report_formats_parse(arg, &a->formats, e);
	case RPO_OUT:
	case RPO_BASELINE: {
		char *dst = id == RPO_OUT ? a->out : a->baseline;

		if (strlen(arg) >= PATH_MAX)
			return err_set(e, -ENAMETOOLONG, "path too long");
		strcpy(dst, arg);
		return 0;
	}
	case RPO_THRESHOLD:
		if (parse_double(arg, &a->cmp.threshold_pct) || a->cmp.threshold_pct < 0 ||
		    a->cmp.threshold_pct > 1000)
			return err_set(e, -EINVAL, "'%s' is not a percentage from 0 to 1000", arg);
		return 0;
	case RPO_GATE:
		return cmp_gate_parse(arg, &a->cmp.gate, e);
	}
	return err_set(e, -EINVAL, "internal: unhandled option %d", id);
}

int cmd_report(int argc, char **argv_in)
{
	char **argv = malloc(((size_t)argc + 1) * sizeof(*argv));
	struct report_args a = { REPORT_BIT(REPORT_TEXT), "", "", { COMPARE_DEFAULT_THRESHOLD_PCT, GATE_PRIMARY } };
	struct results *res = malloc(sizeof(*res)), *base = malloc(sizeof(*base));
	struct report_input in = { 0 };
	struct comparison cmp = { 0 };
	struct err e = ERR_INIT;
	bool help, have_base = false, have_cmp = false;
	int first, rc = CMD_OK;
	unsigned f;

	if (!res || !base || !argv) {
		cmd_error("out of memory");
		free(res);
		free(base);
		free(argv);
		return CMD_ERROR;
	}
	argc = cmd_args_permute(&report_cmd, argc, argv_in, argv);
	results_init(res);
	if (cli_parse(&report_cmd, argc, argv, report_opt, &a, &first, &help, &e)) {
		rc = cmd_fail(&e, CMD_USAGE);
		goto out;
	}
	if (help) {
		cli_help(&report_cmd, stdout);
		goto out;
	}
	if (argc - first != 1) {
		cmd_error("report: give one run directory or results.json; see 'thpeval report --help'");
		rc = CMD_USAGE;
		goto out;
	}
	if (!a.out[0] && (a.formats & (a.formats - 1))) {
		cmd_error("report: several formats need --out DIR (one format goes to stdout)");
		rc = CMD_USAGE;
		goto out;
	}
	if (results_load(argv[first], res, &e) || effects_attach(res, &e)) {
		rc = cmd_fail(&e, CMD_ERROR);
		goto out;
	}
	in.res = res;
	if (a.baseline[0]) {
		if (results_load(a.baseline, base, &e) || effects_attach(base, &e)) {
			rc = cmd_fail(&e, CMD_ERROR);
			goto out;
		}
		have_base = true;
		if (compare_results(base, res, &a.cmp, &cmp, &e)) {
			rc = cmd_fail(&e, CMD_ERROR);
			goto out;
		}
		have_cmp = true;
		in.base = base;
		in.cmp = &cmp;
		in.base_name = a.baseline;
	}
	if (a.out[0]) {
		if (report_write_dir(&in, a.formats, a.out, &e)) {
			rc = cmd_fail(&e, CMD_ERROR);
			goto out;
		}
		for (f = 0; f < REPORT__COUNT; f++)
			if (a.formats & REPORT_BIT(f))
				fprintf(stderr, "thpeval: wrote %s/%s\n", a.out, report_format_file((enum report_format)f));
		goto out;
	}
	for (f = 0; f < REPORT__COUNT; f++)
		if (a.formats & REPORT_BIT(f))
			break;
	if (report_render(&in, (enum report_format)f, stdout, &e) || fflush(stdout)) {
		if (!err_isset(&e))
			err_set(&e, -EIO, "cannot write to stdout");
		rc = cmd_fail(&e, CMD_ERROR);
	}
out:
	if (have_cmp)
		comparison_release(&cmp);
	if (have_base)
		results_release(base);
	results_release(res);
	free(res);
	free(base);
	free(argv);
	return rc;
}
