#include "orchestrator/cmd/cli.h"

#include <errno.h>
#include <getopt.h>
#include <string.h>

#define CLI_MAX_OPTS 64

int cli_parse(const struct command *cmd, int argc, char **argv, cli_opt_fn fn, void *ctx,
	      int *first_arg, bool *want_help, struct err *e)
{
	struct option lo[CLI_MAX_OPTS + 2];
	size_t i, n = 0;
	int c, idx;

	*want_help = false;
	if (cmd->nopts > CLI_MAX_OPTS)
		return err_set(e, -E2BIG, "internal: too many options for '%s'", cmd->name);
	for (i = 0; i < cmd->nopts; i++) {
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
			const struct opt *o = &cmd->opts[c - 1000];
			int r;

			if (o->arg && optarg && !*optarg)
				return err_set(e, -EINVAL, "%s: option '--%s' needs a non-empty value",
					       cmd->name, o->name);
			r = fn(ctx, o->id, optarg, e);
			if (r)
				return err_wrap(e, "%s: --%s", cmd->name, o->name);
		}
	}
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
