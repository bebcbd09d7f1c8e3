/* thpeval report: regenerate reports from a stored results.json */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/analysis/abtest.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/report/fleet.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/history/history.h"
#include "orchestrator/report/report.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/model/results_load.h"

enum report_opt { RPO_FORMAT, RPO_OUT, RPO_BASELINE, RPO_THRESHOLD, RPO_GATE, RPO_FLEET, RPO_DB, RPO_HOST, RPO_LAST };

#define REPORT_MAX_HOSTS 64

static const struct opt report_opts[] = {
	OPT_ROW("format", "LIST", "text", "comma-separated formats: " REPORT_FORMATS_HELP
	        "; several need --out", RPO_FORMAT),
	OPT_ROW("out", "DIR", "stdout", "write results.txt, results.json, results.csv, report.html or junit.xml"
	        " into DIR (created); each file appears only when complete", RPO_OUT),
	OPT_ROW("baseline", "PATH", NULL, "compare with this results.json (or run directory): adds the"
	        " comparison to text and HTML and the regression gates to JUnit", RPO_BASELINE),
	OPT_ROW("threshold", "PCT", "5", "smallest change, in percent, that counts as a regression"
	        " (with --baseline)", RPO_THRESHOLD),
	OPT_ROW("gate", "primary|all", "primary", "with --baseline: metrics that gate, each workload's primary"
	        " ones or every metric with a direction ('thpeval help compare')", RPO_GATE),
	OPT_ROW("fleet", NULL, NULL, "instead of one run: " FLEET_FILE " from the run history (--db), every host's"
	        " latest split and the trend of its headline effects", RPO_FLEET),
	OPT_ROW("db", "PATH|URI", HISTORY_DEFAULT_DB, "with --fleet: the history database (SQLite file or"
	        " postgresql://...), as 'thpeval history' takes it", RPO_DB),
	OPT_ROW("host", "NAME", NULL, "with --fleet: only this host (repeat for more; default: every host)", RPO_HOST),
	OPT_ROW("last", "N", "10", "with --fleet: the newest N runs of each host in its trend (1-10000)", RPO_LAST),
};

/* what report's options ask of each other, checked in this order */
static const struct opt_rule report_rules[] = {
	{ OPT_REPEATS, RPO_HOST, RPO_HOST, NULL },
	{ OPT_CONFLICTS, RPO_FLEET, RPO_FORMAT, "--fleet writes one HTML page" },
	{ OPT_CONFLICTS, RPO_FLEET, RPO_BASELINE, "--fleet draws from the history, not from one run" },
	{ OPT_CONFLICTS, RPO_FLEET, RPO_THRESHOLD, "--fleet has no regression gate" },
	{ OPT_CONFLICTS, RPO_FLEET, RPO_GATE, "--fleet has no regression gate" },
	{ OPT_NEEDS, RPO_DB, RPO_FLEET, "the fleet page is drawn from the history database" },
	{ OPT_NEEDS, RPO_HOST, RPO_FLEET, "it chooses the hosts of the fleet page" },
	{ OPT_NEEDS, RPO_LAST, RPO_FLEET, "it chooses the runs of the fleet page's trend" },
	{ OPT_NEEDS, RPO_THRESHOLD, RPO_BASELINE, "the threshold is the comparison's, which --baseline adds" },
	{ OPT_NEEDS, RPO_GATE, RPO_BASELINE, "it chooses what the comparison gates, which --baseline adds" },
};

const struct command report_cmd = {
	.name = "report",
	.args = "DIR|results.json | --fleet",
	.summary = "Render the results of a finished run again, without rerunning it: the text table,\n"
		   "JSON, CSV (one row per sample), a self-contained HTML report with charts, or JUnit XML.",
	.details = "DIR is a run's output directory (its results.json is read). Without --out the\n"
		   "single format given is written to stdout.\n"
		   "Example: thpeval report results --format=html,junit,csv --out=results\n"
		   "With --fleet the page is " FLEET_FILE " (to --out DIR, else stdout), drawn from the\n"
		   "run history: thpeval report --fleet --db=/var/lib/thpeval/history.db --out=DIR",
	CLI_OPTS(report_opts),
	CLI_RULES(report_rules),
};

struct report_args {
	unsigned formats;
	char out[PATH_MAX];
	char baseline[PATH_MAX];
	struct compare_opts cmp;
	bool fleet;
	char db[PATH_MAX];
	const char *hosts[REPORT_MAX_HOSTS];
	struct fleet_opts fo;
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
			return err_set(e, -EINVAL, "not a percentage from 0 to 1000: %s", err_q(arg));
		return 0;
	case RPO_GATE:
		return cmp_gate_parse(arg, &a->cmp.gate, e);
	case RPO_FLEET:
		a->fleet = true;
		return 0;
	case RPO_DB: {
		struct histdb_target t;

		if (histdb_target_parse(arg, &t, e))
			return e->code;
		snprintf(a->db, sizeof(a->db), "%s", arg);
		return 0;
	}
	case RPO_HOST:
		if (!*arg || strlen(arg) > 64)
			return err_set(e, -EINVAL, "not a host name (1-64 characters): %s", err_q(arg));
		if (a->fo.nhosts == REPORT_MAX_HOSTS)
			return err_set(e, -E2BIG, "more than %d --host options", REPORT_MAX_HOSTS);
		a->hosts[a->fo.nhosts++] = arg;
		return 0;
	case RPO_LAST: {
		uint64_t v;

		if (parse_u64_range(arg, 1, 10000, &v))
			return err_set(e, -EINVAL, "not a run count from 1 to 10000: %s", err_q(arg));
		a->fo.last = (unsigned)v;
		return 0;
	}
	}
	return err_set(e, -EINVAL, "internal: unhandled option %d", id);
}

static int report_fleet(struct report_args *a, int npos)
{
	struct err e = ERR_INIT;

	if (npos) {
		cmd_error("report: --fleet takes no run directory; see 'thpeval report --help'");
		return CMD_USAGE;
	}
	a->fo.hosts = a->hosts;
	if (a->out[0] ? fleet_write(a->db, &a->fo, a->out, &e) : fleet_html(a->db, &a->fo, stdout, &e) || fflush(stdout)) {
		if (!err_isset(&e))
			err_set(&e, -EIO, "cannot write to stdout");
		return cmd_fail(&e, CMD_ERROR);
	}
	if (a->out[0])
		fprintf(stderr, "thpeval: wrote %s/%s\n", a->out, FLEET_FILE);
	return CMD_OK;
}

int cmd_report(int argc, char **argv_in)
{
	char **argv = malloc(((size_t)argc + 1) * sizeof(*argv));
	struct report_args a = { REPORT_BIT(REPORT_TEXT), "", "", { COMPARE_DEFAULT_THRESHOLD_PCT, GATE_PRIMARY },
				 .db = HISTORY_DEFAULT_DB };
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
	if (cli_parse(&report_cmd, argc, argv, report_opt, &a, &first, &help, NULL, &e)) {
		rc = cmd_fail(&e, CMD_USAGE);
		goto out;
	}
	if (help) {
		cli_help(&report_cmd, stdout);
		goto out;
	}
	if (a.fleet) {
		rc = report_fleet(&a, argc - first);
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
	if (results_load(argv[first], res, &e) || effects_attach(res, &e) || abtest_attach(res, &e)) {
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
