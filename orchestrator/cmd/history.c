/* thpeval history: the trend of the headline metrics over recorded runs */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/report/history.h"
#include "orchestrator/model/results.h"

enum history_opt { HIO_DB, HIO_WORKLOAD, HIO_LAST };

static const struct opt history_opts[] = {
	{ "db", "PATH", HISTORY_DEFAULT_DB, "the history database (SQLite)", HIO_DB },
	{ "workload", "W", "all", "only cells of this workload", HIO_WORKLOAD },
	{ "last", "N", "10", "the newest N runs (1-10000)", HIO_LAST },
};

const struct command history_cmd = {
	.name = "history",
	.args = NULL,
	.summary = "Show the trend of the headline metrics (fault ns/4K, access ns, host and guest\n"
		   "huge-page coverage) per cell over the recorded runs, oldest first.",
	.details = "Runs are recorded by nightly 'thpeval run' invocations; each row says whether\n"
		   "that run passed its regression gate (gate) and whether the cell was valid.",
	CLI_OPTS(history_opts),
};

struct history_args {
	char db[PATH_MAX];
	char workload[RES_NAME_MAX];
	unsigned last;
};

static int history_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct history_args *a = ctx;
	uint64_t v;

	switch ((enum history_opt)id) {
	case HIO_DB:
		if (strlen(arg) >= sizeof(a->db))
			return err_set(e, -ENAMETOOLONG, "path too long");
		strcpy(a->db, arg);
		return 0;
	case HIO_WORKLOAD:
		if (strlen(arg) >= sizeof(a->workload))
			return err_set(e, -EINVAL, "'%s' is not a workload name", arg);
		strcpy(a->workload, arg);
		return 0;
	case HIO_LAST:
		if (parse_u64_range(arg, 1, 10000, &v))
			return err_set(e, -EINVAL, "'%s' is not a run count from 1 to 10000", arg);
		a->last = (unsigned)v;
		return 0;
	}
	return err_set(e, -EINVAL, "internal: unhandled option %d", id);
}

int cmd_history(int argc, char **argv_in)
{
	char **argv = malloc(((size_t)argc + 1) * sizeof(*argv));
	struct history_args a = { HISTORY_DEFAULT_DB, "", HISTORY_DEFAULT_LAST };
	struct history_query q;
	struct err e = ERR_INIT;
	bool help;
	int first, rc = CMD_OK;

	if (!argv) {
		cmd_error("out of memory");
		return CMD_ERROR;
	}
	argc = cmd_args_permute(&history_cmd, argc, argv_in, argv);
	if (cli_parse(&history_cmd, argc, argv, history_opt, &a, &first, &help, &e)) {
		rc = cmd_fail(&e, CMD_USAGE);
	} else if (help) {
		cli_help(&history_cmd, stdout);
	} else if (first < argc) {
		cmd_error("history: unexpected argument '%s'; see 'thpeval history --help'",
			argv[first]);
		rc = CMD_USAGE;
	} else {
		q.workload = a.workload[0] ? a.workload : NULL;
		q.last = a.last;
		if (history_print_trend(a.db, &q, stdout, &e) || fflush(stdout)) {
			if (!err_isset(&e))
				err_set(&e, -EIO, "cannot write to stdout");
			rc = cmd_fail(&e, CMD_ERROR);
		}
	}
	free(argv);
	return rc;
}
