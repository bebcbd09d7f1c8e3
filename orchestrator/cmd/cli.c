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

/* n bytes as the largest suffix that divides it: "256M", "1T" */
static void fmt_size(char *buf, size_t len, uint64_t n)
{
	static const char units[] = "KMGT";
	int u = -1;

	while (u < 3 && n && n % 1024 == 0) {
		n /= 1024;
		u++;
	}
	snprintf(buf, len, "%llu%.*s", (unsigned long long)n, u >= 0 ? 1 : 0, u >= 0 ? &units[u] : "");
}

/* ms as the largest unit that divides it: "10s", "48h" */
static void fmt_duration(char *buf, size_t len, uint64_t ms)
{
	if (ms && ms % 3600000 == 0)
		snprintf(buf, len, "%lluh", (unsigned long long)(ms / 3600000));
	else if (ms && ms % 60000 == 0)
		snprintf(buf, len, "%llum", (unsigned long long)(ms / 60000));
	else if (ms % 1000 == 0)
		snprintf(buf, len, "%llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, len, "%llums", (unsigned long long)ms);
}

/*
 * A size or a duration refused: "not a guest memory size from 256M to 1T
 * (e.g. 1G): 'abc'", "... that is a non-zero multiple of 2M", "... of at
 * least 1s"; the bounds and the example come from the row.
 */
static int bad_scaled(const struct opt *o, int rc, const char *arg, struct err *e)
{
	void (*fmt)(char *, size_t, uint64_t) = o->type == OPT_SIZE ? fmt_size : fmt_duration;
	char lo[32], hi[32], range[96] = "", eg[64] = "";

	fmt(lo, sizeof(lo), o->min);
	fmt(hi, sizeof(hi), o->max);
	if (o->step > 1) {
		fmt(lo, sizeof(lo), o->step);
		snprintf(range, sizeof(range), " that is a non-zero multiple of %s", lo);
	} else if (o->max != UINT64_MAX) {
		snprintf(range, sizeof(range), " from %s to %s", lo, hi);
	} else if (o->min) {
		snprintf(range, sizeof(range), " of at least %s", lo);
	}
	if (o->def)
		snprintf(eg, sizeof(eg), " (e.g. %s)", o->def);
	return err_set(e, rc == -ERANGE ? -ERANGE : -EINVAL, "not %s%s%s: %s", o->what, range, eg, err_q(arg));
}

/* OPT_ENUM: "not a gate: use primary or all: 'x'" */
static int bad_enum(const struct opt *o, const char *arg, struct err *e)
{
	char list[256] = "";
	size_t i, n = 0, len = 0;

	while (o->vals[n])
		n++;
	for (i = 0; i < n && len < sizeof(list); i++)
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
					o->vals[i]);
	return err_set(e, -EINVAL, "not %s: use %s: %s", o->what, list, err_q(arg));
}

/* a number of a typed row, checked against its bounds, into *v (OPT_UINT .. OPT_DURATION) */
static int parse_number(const struct opt *o, const char *arg, uint64_t *v, struct err *e)
{
	int r;

	if (o->type == OPT_UINT || o->type == OPT_U64) {
		r = parse_u64_range(arg, o->min, o->max, v);
		if (r)
			return err_set(e, r == -ERANGE ? -ERANGE : -EINVAL, "not %s from %llu to %llu: %s", o->what,
				       (unsigned long long)o->min, (unsigned long long)o->max, err_q(arg));
		return 0;
	}
	r = o->type == OPT_SIZE ? parse_size(arg, v) : parse_duration_ms(arg, v);
	if (r || *v < o->min || *v > o->max || (o->step > 1 && (*v == 0 || *v % o->step)))
		return bad_scaled(o, r ? r : -ERANGE, arg, e);
	return 0;
}

/* a typed row's value into ctx at o->off */
static int store_typed(const struct opt *o, const char *arg, void *ctx, struct err *e)
{
	char *at = (char *)ctx + o->off;
	uint64_t v;
	double d;
	int r, i;

	if ((o->type == OPT_FLAG && o->size != sizeof(bool)) || (o->type == OPT_DOUBLE && o->size != sizeof(double)))
		return err_set(e, -EINVAL, "internal: option --%s has a target of %zu bytes", o->name, o->size);
	switch (o->type) {
	case OPT_FLAG:
		*(bool *)at = true;
		return 0;
	case OPT_UINT:
	case OPT_U64:
	case OPT_SIZE:
	case OPT_DURATION:
		if (parse_number(o, arg, &v, e))
			return e->code;
		if (o->size == sizeof(unsigned) && v <= UINT_MAX)
			*(unsigned *)at = (unsigned)v;
		else if (o->size == sizeof(uint64_t))
			*(uint64_t *)at = v;
		else
			return err_set(e, -EINVAL, "internal: option --%s has a target of %zu bytes", o->name, o->size);
		return 0;
	case OPT_DOUBLE:
		r = parse_double(arg, &d);
		if (r || d < o->dmin || d > o->dmax)
			return err_set(e, r ? (r == -ERANGE ? -ERANGE : -EINVAL) : -ERANGE, "not %s from %g to %g: %s",
				       o->what, o->dmin, o->dmax, err_q(arg));
		*(double *)at = d;
		return 0;
	case OPT_ENUM:
		for (i = 0; o->vals[i] && strcmp(o->vals[i], arg); i++)
			;
		if (!o->vals[i])
			return bad_enum(o, arg, e);
		if (o->size == sizeof(bool))
			*(bool *)at = i != 0;
		else
			*(unsigned *)at = (unsigned)i;
		return 0;
	case OPT_STRING:
		if (strlen(arg) >= o->size)
			return err_set(e, -ENAMETOOLONG, "%s path too long", o->what);
		memcpy(at, arg, strlen(arg) + 1);
		return 0;
	default:
		return err_set(e, -EINVAL, "internal: option --%s has no type", o->name);
	}
}

/* one option's value: typed rows here, the others through the command's callback */
static int apply(const struct opt *o, const char *arg, cli_opt_fn fn, void *ctx, struct err *e)
{
	if (o->type < OPT_FLAG)
		return fn(ctx, o->id, arg, e);
	return store_typed(o, arg, ctx, e);
}

int cli_defaults(const struct command *cmd, cli_opt_fn fn, void *ctx, struct err *e)
{
	size_t i;

	for (i = 0; i < cmd->nopts; i++) {
		const struct opt *o = &cmd->opts[i];

		if (o->type == OPT_TEXT || !o->def)
			continue;
		if (apply(o, o->def, fn, ctx, e))
			return err_wrap(e, "internal: %s: the default of --%s", cmd->name, o->name);
	}
	return 0;
}

const char *cli_default_text(const struct opt *o, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", o->def ? o->def : "", o->def && o->def_note ? ", " : "",
		 o->def_note ? o->def_note : "");
	return buf;
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
			r = apply(o, optarg, fn, ctx, e);
			if (r)
				return err_wrap(e, "%s: --%s", cmd->name, o->name);
			if (o->has_set)
				*(bool *)((char *)ctx + o->set_off) = true;
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
		char left[64], def[256], text[768];

		snprintf(left, sizeof(left), "--%s%s%s", o->name, o->arg ? "=" : "", o->arg ? o->arg : "");
		cli_default_text(o, def, sizeof(def));
		snprintf(text, sizeof(text), "%s%s%s%s", o->help, def[0] ? " (default: " : "", def,
			 def[0] ? ")" : "");
		print_wrapped(out, left, text);
	}
	print_wrapped(out, "-h, --help", "show this help");
}
