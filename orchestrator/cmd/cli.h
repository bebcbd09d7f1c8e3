/*
 * cli: a command's option table (struct command, struct opt; each command's
 * own is in its file in cmd/) turned into getopt_long input and into --help
 * text, one source for both. Never prints except through cli_help(); never
 * exits.
 */
#ifndef THPEVAL_ORCH_CLI_H
#define THPEVAL_ORCH_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/err.h"

struct opt {
	const char *name;	/* long option name */
	const char *arg;	/* metavar, NULL for a flag */
	const char *def;	/* default shown in help, NULL for none */
	const char *help;
	int id;
};

struct command {
	const char *name;
	const char *args;	/* positional synopsis */
	const char *summary;
	const char *details;	/* paragraph for --help, may be NULL */
	const struct opt *opts;
	size_t nopts;
};

/* .opts and .nopts of a struct command from its option table */
#define CLI_OPTS(table) .opts = (table), .nopts = sizeof(table) / sizeof((table)[0])

typedef int (*cli_opt_fn)(void *ctx, int id, const char *arg, struct err *e);

/* Parse argv (argv[0] = command name). On return *first_arg indexes the positionals. */
int cli_parse(const struct command *cmd, int argc, char **argv, cli_opt_fn fn, void *ctx,
	      int *first_arg, bool *want_help, struct err *e);
void cli_help(const struct command *cmd, FILE *out);

#endif
