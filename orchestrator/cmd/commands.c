#include "orchestrator/cmd/commands.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* does --name (no "=value") take the next argument as its value? */
static bool takes_value(const struct command *cmd, const char *arg)
{
	size_t i;

	if (strncmp(arg, "--", 2) || strchr(arg, '='))
		return false;
	for (i = 0; i < cmd->nopts; i++)
		if (!strcmp(arg + 2, cmd->opts[i].name))
			return cmd->opts[i].arg != NULL;
	return false;
}

int cmd_args_permute(const struct command *cmd, int argc, char **argv, char **out)
{
	int i, n = 0, dashdash = -1;

	out[n++] = argv[0];
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			dashdash = i;
			break;
		}
		if (argv[i][0] != '-' || !argv[i][1])
			continue;
		out[n++] = argv[i];
		if (takes_value(cmd, argv[i]) && i + 1 < argc)
			out[n++] = argv[++i];
	}
	if (dashdash >= 0)
		out[n++] = argv[dashdash];
	for (i = 1; i < (dashdash >= 0 ? dashdash : argc); i++) {
		if (argv[i][0] == '-' && argv[i][1]) {
			if (takes_value(cmd, argv[i]) && i + 1 < argc)
				i++;
			continue;
		}
		out[n++] = argv[i];
	}
	for (i = dashdash >= 0 ? dashdash + 1 : argc; i < argc; i++)
		out[n++] = argv[i];
	out[n] = NULL;
	return n;
}

void cmd_error(const char *fmt, ...)
{
	char msg[ERR_MSG_MAX + PATH_MAX];
	va_list ap;
	char *p;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	for (p = msg; *p; p++)	/* a file name or argument must not break the line */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	fprintf(stderr, "thpeval: error: %s\n", msg);
}

int cmd_fail(const struct err *e, int code)
{
	cmd_error("%s", e->msg[0] ? e->msg : strerror(-e->code));
	return code;
}
