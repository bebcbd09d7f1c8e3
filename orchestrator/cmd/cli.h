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

/*
 * An option is given once unless a rule says OPT_REPEATS (then each value
 * once); a list option (metavar "LIST" or "...,...") names each item once.
 * Ids are below CLI_MAX_ID: the bits of the given-set.
 */
#define CLI_MAX_ID 64

struct opt {
	const char *name;	/* long option name */
	const char *arg;	/* metavar, NULL for a flag */
	const char *def;	/* default shown in help, NULL for none */
	const char *help;
	int id;
};

/* what one option asks of another, checked once all options are parsed */
enum opt_rule_kind {
	OPT_NEEDS,		/* a does something only with b */
	OPT_CONFLICTS,		/* a and b not together */
	OPT_REPEATS,		/* a may be given more than once, each value once (b unused) */
};

struct opt_rule {
	enum opt_rule_kind kind;
	int a, b;		/* option ids */
	const char *why;	/* the reason, said after both names */
};

struct command {
	const char *name;
	const char *args;	/* positional synopsis */
	const char *summary;
	const char *details;	/* paragraph for --help, may be NULL */
	const struct opt *opts;
	size_t nopts;
	const struct opt_rule *rules;
	size_t nrules;
};

/* .opts and .nopts of a struct command from its option table */
#define CLI_OPTS(table) .opts = (table), .nopts = sizeof(table) / sizeof((table)[0])
/* .rules and .nrules from its rule table */
#define CLI_RULES(table) .rules = (table), .nrules = sizeof(table) / sizeof((table)[0])
/* the bit of option id in a given-set */
#define CLI_BIT(id) (UINT64_C(1) << (id))

typedef int (*cli_opt_fn)(void *ctx, int id, const char *arg, struct err *e);

/*
 * Parse argv (argv[0] = command name). On return *first_arg indexes the
 * positionals and *given (when not NULL) has CLI_BIT(id) of every option seen.
 * Refused with one line naming the option(s): an option given twice, an item
 * twice in a list, and every rule of cmd->rules broken.
 */
int cli_parse(const struct command *cmd, int argc, char **argv, cli_opt_fn fn, void *ctx,
	      int *first_arg, bool *want_help, uint64_t *given, struct err *e);
/* the name of option id in cmd, without its dashes ("?" for none) */
const char *cli_opt_name(const struct command *cmd, int id);
void cli_help(const struct command *cmd, FILE *out);

#endif
