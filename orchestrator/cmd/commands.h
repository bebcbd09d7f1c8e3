/*
 * commands: the thpeval commands that work on stored results (report,
 * compare, history), each with its option table for main's command table.
 * These are the only functions here that print (data to stdout, one-line
 * errors to stderr) and pick exit codes; they never call exit().
 */
#ifndef THPEVAL_ORCH_COMMANDS_H
#define THPEVAL_ORCH_COMMANDS_H

#include "orchestrator/cmd/cli.h"

/* the exit status of every command (main returns what the command returns) */
enum cmd_exit {
	CMD_OK = 0,
	CMD_ERROR = 1,		/* the command failed; compare, and run with --baseline: a regression */
	CMD_USAGE = 2,		/* bad options or arguments; compare: any error */
	CMD_INTERRUPTED = 130,	/* run: stopped by SIGINT, SIGTERM or SIGHUP (128 + SIGINT) */
};

/*
 * cli_parse() stops at the first positional argument; these commands also take
 * options after them ("thpeval compare A B --threshold=10"). Reorder argv into
 * out (argc + 1 slots): argv[0], the options with their values, then "--" if
 * given, then the positionals. Returns the new argc.
 */
int cmd_args_permute(const struct command *cmd, int argc, char **argv, char **out);
/* "thpeval: error: <msg>" as one line on stderr (control characters become '?') */
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cmd_error() of e's message; returns code */
int cmd_fail(const struct err *e, int code);

/* thpeval report DIR|results.json [--format=LIST] [--out=DIR] [--baseline=PATH] [--threshold=PCT] */
extern const struct command report_cmd;
int cmd_report(int argc, char **argv);

/* thpeval compare BASELINE CURRENT [--threshold=PCT]: 0 no regression, 1 regression, 2 error */
extern const struct command compare_cmd;
int cmd_compare(int argc, char **argv);

/* thpeval history [--db=PATH] [--workload=W] [--last=N] */
extern const struct command history_cmd;
int cmd_history(int argc, char **argv);

#endif
