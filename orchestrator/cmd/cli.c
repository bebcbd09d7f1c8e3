#include "orchestrator/cmd/cli.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "lib/parse.h"

#define CLI_MAX_OPTS 64

const char *cli_opt_name(const struct command *cmd, int id)
{
	size_t i;

	for (i = 0; i < cmd->nopts; i++)
		if (cmd->opts[i].id == id)
			return cmd->opts[i].name;
	return "?";
}

/* a list option: its items are named once each */
static bool is_list(const struct opt *o)
{
	return o->arg && (!strcmp(o->arg, "LIST") || strstr(o->arg, ",..."));
}

/*
 * The second time an option is seen: refused unless it repeats by design,
 * and then with a value it has not had yet (prev: its earlier values).
 */
static int check_repeat(const struct command *cmd, const struct opt *o, const char *arg,
			char *const *prev, size_t nprev, struct err *e)
{
	bool repeats = false;
	size_t i;

	for (i = 0; i < cmd->nrules; i++)
		repeats |= cmd->rules[i].kind == OPT_REPEATS && cmd->rules[i].a == o->id;
	if (!repeats) {
		if (!o->arg)
			return err_set(e, -EINVAL, "%s: --%s is given twice: give it once", cmd->name, o->name);
		return err_set(e, -EINVAL, "%s: --%s is given twice (%s, then %s): give it once", cmd->name,
			       o->name, err_q(nprev ? prev[nprev - 1] : ""), err_q(arg));
	}
	for (i = 0; i < nprev; i++)
		if (arg && !strcmp(prev[i], arg))
			return err_set(e, -EINVAL, "%s: --%s is given twice with %s: give each value once",
				       cmd->name, o->name, err_q(arg));
	return 0;
}

/* after parsing: what the options of cmd->rules ask of each other */
static int check_rules(const struct command *cmd, uint64_t given, struct err *e)
{
	size_t i;

	for (i = 0; i < cmd->nrules; i++) {
		const struct opt_rule *r = &cmd->rules[i];
		bool a = given & CLI_BIT(r->a), b = given & CLI_BIT(r->b);

		if (r->kind == OPT_NEEDS && a && !b)
			return err_set(e, -EINVAL, "%s: --%s needs --%s: %s", cmd->name, cli_opt_name(cmd, r->a),
				       cli_opt_name(cmd, r->b), r->why);
		if (r->kind == OPT_CONFLICTS && a && b)
			return err_set(e, -EINVAL, "%s: --%s and --%s do not go together: %s", cmd->name,
				       cli_opt_name(cmd, r->a), cli_opt_name(cmd, r->b), r->why);
	}
	return 0;
}

int cli_parse(const struct command *cmd, int argc, char **argv, cli_opt_fn fn, void *ctx,
	      int *first_arg, bool *want_help, uint64_t *given, struct err *e)
{
	struct option lo[CLI_MAX_OPTS + 2];
	char *seen[CLI_MAX_OPTS][16];	/* the values each option had (OPT_REPEATS) */
	size_t nseen[CLI_MAX_OPTS] = { 0 };
	uint64_t got = 0;
	size_t i, n = 0;
	int c, idx;

	*want_help = false;
	if (given)
		*given = 0;
	if (cmd->nopts > CLI_MAX_OPTS)
		return err_set(e, -E2BIG, "internal: too many options for '%s'", cmd->name);
	for (i = 0; i < cmd->nopts; i++) {
		if (cmd->opts[i].id < 0 || cmd->opts[i].id >= CLI_MAX_ID)
			return err_set(e, -E2BIG, "internal: option id %d of '%s'", cmd->opts[i].id, cmd->name);
		lo[n].name = cmd->opts[i].name;
		lo[n].has_arg = cmd->opts[i].arg ? required_argument : no_argument;
		lo[n].flag = NULL;
		lo[n].val = 1000 + (int)i;
		n++;
	}
	lo[n++] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n] = (struct option){ NULL, 0, NULL, 0 };

	optind = 0;	/* full reset (GNU) */
	opterr = 0;
	for (;;) {
		idx = -1;
		c = getopt_long(argc, argv, "+:h", lo, &idx);
		if (c == -1)
			break;
		if (c == 'h') {
			*want_help = true;
			continue;
		}
		if (c == '?') {
			const char *bad = argv[optind - 1];

			if (optopt && optopt < 1000)
				return err_set(e, -EINVAL, "%s: unknown option '-%c'; see 'thpeval %s --help'",
					       cmd->name, optopt, cmd->name);
			return err_set(e, -EINVAL, "%s: unknown option %s; see 'thpeval %s --help'",
				       cmd->name, err_q(bad ? bad : "?"), cmd->name);
		}
		if (c == ':') {
			const char *bad = argv[optind - 1];

			return err_set(e, -EINVAL, "%s: option %s needs a value; see 'thpeval %s --help'",
				       cmd->name, err_q(bad ? bad : "?"), cmd->name);
		}
		if (c >= 1000 && (size_t)(c - 1000) < cmd->nopts) {
			size_t k = (size_t)(c - 1000);
			const struct opt *o = &cmd->opts[k];
			char dup[64];
			int r;

			if (o->arg && optarg && !*optarg)
				return err_set(e, -EINVAL, "%s: option '--%s' needs a non-empty value",
					       cmd->name, o->name);
			if (nseen[k] && check_repeat(cmd, o, optarg, seen[k], nseen[k], e))
				return e->code;
			if (is_list(o) && optarg && parse_list_dup(optarg, dup, sizeof(dup)))
				return err_set(e, -EINVAL, "%s: --%s names %s twice: give each once", cmd->name,
					       o->name, err_q(dup));
			if (nseen[k] < sizeof(seen[k]) / sizeof(seen[k][0]))
				seen[k][nseen[k]++] = optarg;
			got |= CLI_BIT(o->id);
			r = fn(ctx, o->id, optarg, e);
			if (r)
				return err_wrap(e, "%s: --%s", cmd->name, o->name);
		}
	}
	if (!*want_help && check_rules(cmd, got, e))
		return e->code;
	if (given)
		*given = got;
	*first_arg = optind;
	return 0;
}

/* "  --left   text..." with text wrapped at 79 columns under itself */
static void print_wrapped(FILE *out, const char *left, const char *text)
{
	const int indent = 29, width = 79;
	const char *p = text;
	int col;

	if ((int)strlen(left) > indent - 3) {	/* too long for the column: the text starts below it */
		fprintf(out, "  %s\n", left);
		col = fprintf(out, "%*s", indent, "");
	} else {
		col = fprintf(out, "  %-26s ", left);
	}
	while (*p) {
		const char *w = p;
		bool line_start = col <= indent;
		int wl;

		while (*w && *w != ' ')
			w++;
		wl = (int)(w - p);
		if (!line_start && col + 1 + wl > width) {
			fputc('\n', out);
			col = fprintf(out, "%*s", indent, "");
			line_start = true;
		}
		col += fprintf(out, "%s%.*s", line_start ? "" : " ", wl, p);
		p = w;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

void cli_help(const struct command *cmd, FILE *out)
{
	size_t i;

	fprintf(out, "usage: thpeval %s [options]%s%s\n\n%s\n", cmd->name, cmd->args ? " " : "",
		cmd->args ? cmd->args : "", cmd->summary);
	if (cmd->details)
		fprintf(out, "\n%s\n", cmd->details);
	fprintf(out, "\noptions:\n");
	for (i = 0; i < cmd->nopts; i++) {
		const struct opt *o = &cmd->opts[i];
		char left[64];

		char text[512];

		snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? "=" : "", o->arg ? o->arg : "");
		snprintf(text, sizeof(text), "%s%s%s%s", o->help, o->def ? " (default: " : "",
			 o->def ? o->def : "", o->def ? ")" : "");
		print_wrapped(out, left, text);
	}
	print_wrapped(out, "-h, --help", "show this help");
}
