/* thpeval history: the trend of the headline metrics over recorded runs; --import of fetched results */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/history/gatedb.h"
#include "orchestrator/history/history.h"
#include "orchestrator/report/gatetext.h"
#include "orchestrator/model/results.h"

enum history_opt { HIO_DB, HIO_HOST, HIO_WORKLOAD, HIO_LAST, HIO_IMPORT, HIO_GATE_FAILED, HIO_MARK_CHANGE, HIO_WHY, HIO_CHANGES, HIO_EFFECTS };

static const struct opt history_opts[] = {
	OPT_ROW("db", "PATH|URI", HISTORY_DEFAULT_DB, "the history database: an SQLite file, or PostgreSQL as "
	        "postgresql://[USER@]HOST[:PORT]/DBNAME (libpq; the password from ~/.pgpass or PGPASSWORD)", HIO_DB),
	OPT_ROW("host", "NAME", NULL, "only runs of this host (default: every host); with --import, the host name to "
	        "record the runs under (default: the name in each results.json)", HIO_HOST),
	OPT_ROW("workload", "W", "all", "only cells of this workload", HIO_WORKLOAD),
	OPT_ROW("last", "N", "10", "the newest N runs (1-10000)", HIO_LAST),
	OPT_ROW("import", NULL, NULL, "record the runs of the results.json files given (a directory: every results.json "
	        "under it); a run recorded already is skipped, so importing again is safe", HIO_IMPORT),
	OPT_ROW("gate-failed", NULL, NULL, "with --import: these runs failed their regression gate ('thpeval run' "
	        "exited 1): recorded so; like every complete run they stay in the gate's history", HIO_GATE_FAILED),
	OPT_ROW("mark-change", "RUN", NULL, "mark run RUN (its number in the trend) as the first after a known change of the "
	        "host (kernel, QEMU, BIOS): the history gate reads the runs of its host and setup from it on", HIO_MARK_CHANGE),
	OPT_ROW("why", "TEXT", NULL, "with --mark-change: what changed (1-200 printable characters), kept with the mark",
	        HIO_WHY),
	OPT_ROW("changes", NULL, NULL, "list the change points of each metric kind's series (of --host's runs, or every "
	        "host's), with the kernel, QEMU and libvirt on both sides, and the marked changes", HIO_CHANGES),
	OPT_ROW("effects", NULL, NULL, "each split effect pooled over the host's runs from its newest marked change on "
	        "(random effects, with the between-run tau and I2), beside the newest run's", HIO_EFFECTS),
};

/* what history's options ask of each other */
static const struct opt_rule history_rules[] = {
	{ OPT_NEEDS, HIO_GATE_FAILED, HIO_IMPORT, "it says how imported runs fared" },
	{ OPT_CONFLICTS, HIO_IMPORT, HIO_WORKLOAD, "--workload chooses what the trend shows" },
	{ OPT_CONFLICTS, HIO_IMPORT, HIO_LAST, "--last chooses what the trend shows" },
};

const struct command history_cmd = {
	.name = "history",
	.args = "[--import FILE|DIR... | --mark-change=RUN --why=TEXT]",
	.summary = "Show the trend of the headline metrics (fault ns/4K, access ns, host and guest\n"
		   "huge-page coverage) per cell over the recorded runs, oldest first; or, with\n"
		   "--import, record runs fetched from other hosts.",
	.details = "Runs are recorded by nightly 'thpeval run' invocations (--db) or imported from\n"
		   "their results.json; each row names the host and says whether that run passed\n"
		   "its regression gate (gate) and whether the cell was valid. Hosts are keyed by\n"
		   "name (results.json host.name, or --host at import), CPU model and kernel.",
	CLI_OPTS(history_opts),
	CLI_RULES(history_rules),
};

struct history_args {
	char db[PATH_MAX];
	char host[65];
	char workload[RES_NAME_MAX];
	unsigned last;
	bool last_set, import, gate_failed, changes, effects;
	long long mark;			/* --mark-change: the run; 0 none */
	char why[201];
};

static int history_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct history_args *a = ctx;
	uint64_t v;

	switch ((enum history_opt)id) {
	case HIO_DB: {
		struct histdb_target t;

		if (histdb_target_parse(arg, &t, e))
			return e->code;
		snprintf(a->db, sizeof(a->db), "%s", arg);
		return 0;
	}
	case HIO_HOST: {
		size_t i, n = strlen(arg);

		for (i = 0; i < n; i++)
			if ((unsigned char)arg[i] < 0x20 || arg[i] == 0x7f)
				break;
		if (!n || n >= sizeof(a->host) || i < n)
			return err_set(e, -EINVAL, "not a host name (1-64 printable characters): %s", err_q(arg));
		strcpy(a->host, arg);
		return 0;
	}
	case HIO_IMPORT:
		a->import = true;
		return 0;
	case HIO_GATE_FAILED:
		a->gate_failed = true;
		return 0;
	case HIO_CHANGES:
		a->changes = true;
		return 0;
	case HIO_EFFECTS:
		a->effects = true;
		return 0;
	case HIO_MARK_CHANGE:
		if (parse_u64_range(arg, 1, INT64_MAX, &v))
			return err_set(e, -EINVAL, "not a run number (the first column of 'thpeval history'): %s", err_q(arg));
		a->mark = (long long)v;
		return 0;
	case HIO_WHY: {
		size_t i, n = strlen(arg);

		for (i = 0; i < n; i++)
			if ((unsigned char)arg[i] < 0x20 || arg[i] == 0x7f)
				break;
		if (!n || n >= sizeof(a->why) || i < n)
			return err_set(e, -EINVAL, "--why: say what changed in 1-200 printable characters");
		strcpy(a->why, arg);
		return 0;
	}
	case HIO_WORKLOAD:
		if (strlen(arg) >= sizeof(a->workload))
			return err_set(e, -EINVAL, "not a workload name: %s", err_q(arg));
		strcpy(a->workload, arg);
		return 0;
	case HIO_LAST:
		if (parse_u64_range(arg, 1, 10000, &v))
			return err_set(e, -EINVAL, "not a run count from 1 to 10000: %s", err_q(arg));
		a->last = (unsigned)v;
		a->last_set = true;
		return 0;
	}
	return err_set(e, -EINVAL, "internal: unhandled option %d", id);
}

int cmd_history(int argc, char **argv_in)
{
	char **argv = malloc(((size_t)argc + 1) * sizeof(*argv));
	struct history_args a = { .db = HISTORY_DEFAULT_DB, .last = HISTORY_DEFAULT_LAST };
	struct history_query q;
	struct err e = ERR_INIT;
	bool help;
	int first, rc = CMD_OK;

	if (!argv) {
		cmd_error("out of memory");
		return CMD_ERROR;
	}
	argc = cmd_args_permute(&history_cmd, argc, argv_in, argv);
	if (cli_parse(&history_cmd, argc, argv, history_opt, &a, &first, &help, NULL, &e)) {
		rc = cmd_fail(&e, CMD_USAGE);
	} else if (help) {
		cli_help(&history_cmd, stdout);
	} else if (a.effects) {
		struct pooled_effect *pe = NULL;
		size_t npe = 0;

		if (a.changes || a.import || a.mark || a.why[0] || first < argc || a.workload[0] || a.last_set) {
			cmd_error("history: --effects takes only --db and --host");
			rc = CMD_USAGE;
		} else if (history_effects_pool(a.db, a.host[0] ? a.host : NULL, &pe, &npe, &e)) {
			rc = cmd_fail(&e, CMD_ERROR);
		} else {
			effects_pooled_print(pe, npe, stdout);
			free(pe);
			if (fflush(stdout)) {
				cmd_error("cannot write to stdout");
				rc = CMD_ERROR;
			}
		}
	} else if (a.changes) {
		struct gate_series *ser = NULL;
		size_t nser = 0;

		if (a.import || a.mark || a.why[0] || first < argc || a.workload[0] || a.last_set) {
			cmd_error("history: --changes takes only --db and --host");
			rc = CMD_USAGE;
		} else if (history_series_load(a.db, a.host[0] ? a.host : NULL, &ser, &nser, &e)) {
			rc = cmd_fail(&e, CMD_ERROR);
		} else {
			changes_print(ser, nser, stdout);
			gate_series_free(ser, nser);
			if (fflush(stdout)) {
				cmd_error("cannot write to stdout");
				rc = CMD_ERROR;
			}
		}
	} else if (a.mark || a.why[0]) {
		if (!a.mark || !a.why[0]) {
			cmd_error("history: --mark-change=RUN and --why=TEXT go together");
			rc = CMD_USAGE;
		} else if (a.import || first < argc || a.workload[0] || a.last_set || a.host[0]) {
			cmd_error("history: --mark-change takes only --db and --why");
			rc = CMD_USAGE;
		} else if (history_mark_change(a.db, a.mark, a.why, &e)) {
			rc = cmd_fail(&e, CMD_ERROR);
		} else {
			printf("run %lld marked as the first after a change: %s\n", a.mark, a.why);
		}
	} else if (a.import) {
		struct history_import_opts io = { a.host[0] ? a.host : NULL, !a.gate_failed, gatedb_insert };

		if (first >= argc) {
			cmd_error("history: --import needs the results.json files or directories to import");
			rc = CMD_USAGE;
		} else if (history_import(a.db, argv + first, (size_t)(argc - first), &io, stdout, &e) ||
			   fflush(stdout)) {
			if (!err_isset(&e))
				err_set(&e, -EIO, "cannot write to stdout");
			rc = cmd_fail(&e, CMD_ERROR);
		}
	} else if (first < argc) {
		cmd_error("history: unexpected argument '%s'; see 'thpeval history --help'",
			argv[first]);
		rc = CMD_USAGE;
	} else {
		q.workload = a.workload[0] ? a.workload : NULL;
		q.last = a.last;
		q.host = a.host[0] ? a.host : NULL;
		if (history_print_trend(a.db, &q, stdout, &e) || fflush(stdout)) {
			if (!err_isset(&e))
				err_set(&e, -EIO, "cannot write to stdout");
			rc = cmd_fail(&e, CMD_ERROR);
		}
	}
	free(argv);
	return rc;
}
