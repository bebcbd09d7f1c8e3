/*
 * cli: a command's option table (struct command, struct opt; each command's
 * own is in its file in cmd/) turned into getopt_long input, --help text and,
 * for typed rows, the parsed values, their bounds and their defaults: one
 * source for all. Never prints except through cli_help(); never exits.
 */
#ifndef THPEVAL_ORCH_CLI_H
#define THPEVAL_ORCH_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/err.h"

/*
 * An option is given once unless a rule says OPT_REPEATS (then each value
 * once); a list option (metavar "LIST" or "...,...") names each item once.
 * Ids are below CLI_MAX_ID: the bits of the given-set.
 */
#define CLI_MAX_ID 64

/*
 * What an option's value is. OPT_TEXT and OPT_CALL rows go to the command's
 * callback; the typed ones (OPT_FLAG and below) cli_parse() stores itself at
 * .off in the callback's context, checked against the row's bounds.
 */
enum opt_type {
	OPT_TEXT = 0,	/* the callback parses it; .def is help text, the default is set in code */
	OPT_CALL,	/* the callback parses it (a compound option); cli_defaults() applies .def */
	OPT_FLAG,	/* a bool, true when given */
	OPT_UINT,	/* an unsigned from .min to .max */
	OPT_U64,	/* a uint64_t from .min to .max */
	OPT_SIZE,	/* a uint64_t of bytes (K, M, G, T), from .min to .max, a multiple of .step */
	OPT_DURATION,	/* a uint64_t of milliseconds (s, m, h), from .min to .max */
	OPT_DOUBLE,	/* a double from .dmin to .dmax */
	OPT_ENUM,	/* one of .vals, its index stored in a bool or an unsigned */
	OPT_STRING,	/* a string (a path, a URI) in a char array of .size */
	OPT_TYPE__COUNT
};

struct opt {
	const char *name;	/* long option name */
	const char *arg;	/* metavar, NULL for a flag */
	const char *def;	/* the default: help text; for OPT_CALL and typed rows also its value */
	const char *help;
	int id;
	/* rows with a type (see "Adding an option" in doc/HACKING.md) */
	enum opt_type type;
	const char *def_note;	/* said after .def in --help ("4, then by --target-ci"), or alone
				 * for a default computed at run time ("time-based") */
	size_t off, size;	/* the target in the context struct (OPT_AT) */
	bool has_set;		/* typed rows: a bool at .set_off becomes true when given */
	size_t set_off;
	const char *what;	/* the value's noun in errors: "a repetition count" */
	uint64_t min, max, step;	/* OPT_UINT, OPT_U64, OPT_SIZE, OPT_DURATION */
	double dmin, dmax;	/* OPT_DOUBLE */
	const char *const *vals;	/* OPT_ENUM: the names, NULL-terminated */
};

/* a row of the older kind: the callback parses it, .def is text (OPT_TEXT) */
#define OPT_ROW(n, a, d, h, i) { .name = (n), .arg = (a), .def = (d), .help = (h), .id = (i) }
/* .off and .size of a typed row: field of struct type st */
#define OPT_AT(st, field) .off = offsetof(st, field), .size = sizeof(((st *)0)->field)
/* a typed row's "given" marker: bool field of st */
#define OPT_SET(st, field) .has_set = true, .set_off = offsetof(st, field)

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
/*
 * Apply the default of every OPT_CALL and typed row of cmd to ctx (zeroed or
 * set up by the caller), parsing .def as if it were given: what the user gets
 * is what --help says. Nothing is marked given.
 */
int cli_defaults(const struct command *cmd, cli_opt_fn fn, void *ctx, struct err *e);
/* "DEF", "DEF, NOTE" or "NOTE" into buf: the default --help shows ("" for none) */
const char *cli_default_text(const struct opt *o, char *buf, size_t len);
/* the name of option id in cmd, without its dashes ("?" for none) */
const char *cli_opt_name(const struct command *cmd, int id);
void cli_help(const struct command *cmd, FILE *out);

#endif
