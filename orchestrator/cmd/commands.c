#include "orchestrator/cmd/commands.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* run fn with the options moved before the positionals ('host restore --state-dir=D') */
int cmd_options_first(const struct command *cmd, int (*fn)(int argc, char **argv), int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int rc;

	if (!args) {
		cmd_error("out of memory");
		return CMD_ERROR;
	}
	rc = fn(cmd_args_permute(cmd, argc, argv, args), args);
	free(args);
	return rc;
}

/* root names the real filesystem root ("/", "//", "/.", a link to "/") */
bool cmd_is_host_root(const char *root)
{
	char buf[PATH_MAX];

	return !strcmp(root, "/") || (realpath(root, buf) && !strcmp(buf, "/"));
}

int cmd_need_root(const char *what)
{
	if (geteuid() == 0)
		return 0;
	cmd_error("%s needs root (it changes host THP settings under /sys): run it as root", what);
	return CMD_ERROR;
}

/*
 * path without its last component, "" standing for "/" so that "" + "/name" is
 * "/name": "/usr/bin/thpeval" -> "/usr/bin", "/bin" -> "", "" -> "", "x" -> "."
 */
static void path_parent(char *path)
{
	char *slash = strrchr(path, '/');

	if (slash)
		*slash = '\0';
	else if (*path)
		strcpy(path, ".");
}

/* an executable regular file (a directory is "executable" to access()) */
static bool is_program(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

int cmd_guest_bin_check(const char *path, struct err *e)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		int saved = errno;

		return err_set(e, -saved, "guest program not found: %s: %s; build it with 'make' or pass --guest-bin",
			       err_q(path), strerror(saved));
	}
	if (!S_ISREG(st.st_mode))
		return err_set(e, -EINVAL, "guest program %s is not a regular file: pass the thpeval-guest "
			       "binary with --guest-bin", err_q(path));
	if (access(path, X_OK) != 0)
		return err_set(e, -EACCES, "guest program %s is not executable: chmod +x it", err_q(path));
	return 0;
}

int cmd_guest_bin_lookup(const char *exe, char *buf, size_t len, struct err *e)
{
	char dir[PATH_MAX], beside[PATH_MAX], installed[PATH_MAX];
	const char *found;

	if (snprintf(dir, sizeof(dir), "%s", exe) >= (int)sizeof(dir))
		return err_set(e, -ENAMETOOLONG, "executable path '%s' is too long", exe);
	path_parent(dir);	/* EXEDIR */
	snprintf(beside, sizeof(beside), "%s/thpeval-guest", dir);
	path_parent(dir);	/* PREFIX */
	snprintf(installed, sizeof(installed), "%s/libexec/thpeval/thpeval-guest", dir);
	if (is_program(beside))
		found = beside;
	else if (is_program(installed))
		found = installed;
	else
		return err_set(e, -ENOENT, "guest program not found at '%s' (a checkout: build it with 'make') "
			       "nor at '%s' (the installed package); or pass --guest-bin", beside, installed);
	if (snprintf(buf, len, "%s", found) >= (int)len)
		return err_set(e, -ENAMETOOLONG, "guest program path '%s' is too long", found);
	return 0;
}

int cmd_default_guest_bin(char *buf, size_t len, struct err *e)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return err_set(e, n < 0 ? -errno : -EINVAL,
			       "cannot read '/proc/self/exe' to find the guest program: pass --guest-bin");
	exe[n] = '\0';
	return cmd_guest_bin_lookup(exe, buf, len, e);
}
