/*
 * thpeval: the command table, `thpeval help` and `thpeval version`. Each
 * command lives in a file of its own in this folder with its usage text and
 * option table (commands.h lists them); they print their own errors and
 * return their exit status, which main returns.
 */
#include <stdio.h>
#include <string.h>

#include "orchestrator/cmd/commands.h"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const struct command *cmd;
	const char *summary;
} commands[] = {
	{ "run", cmd_run, &run_cmd, "boot guests with host THP set and measure the 2x2 (host x guest THP)" },
	{ "host", cmd_host, &host_cmd, "show, set or restore host THP settings" },
	{ "image", cmd_image, &image_cmd, "build or show the cached guest image" },
	{ "report", cmd_report, &report_cmd, "render a stored run again: text, json, csv, html, junit" },
	{ "compare", cmd_compare, &compare_cmd, "regression gate between two runs (exit 1 on a regression)" },
	{ "history", cmd_history, &history_cmd, "trend of the headline metrics over recorded runs" },
	{ "workloads", cmd_workloads, NULL, "list the workloads with their parameters and defaults" },
	{ "help", cmd_help, NULL, "show help for a command" },
	{ "version", cmd_version, NULL, "print the version" },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: thpeval COMMAND [options]\n\n"
		     "Measure what transparent hugepages buy QEMU/KVM guests: host vs guest THP,\n"
		     "page-fault (prefault) vs TLB effects, with the evidence that THP took effect.\n\n"
		     "commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'thpeval help COMMAND' or 'thpeval COMMAND --help' for a command's options.\n");
}

static int cmd_help(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stdout);
		return CMD_OK;
	}
	if (argc > 2) {
		cmd_error("help: give one command, not '%s'", argv[2]);
		return CMD_USAGE;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		if (commands[i].cmd)
			cli_help(commands[i].cmd, stdout);
		else
			printf("thpeval %s: %s\n", commands[i].name, commands[i].summary);
		return CMD_OK;
	}
	cmd_error("no such command '%s'; see 'thpeval help'", argv[1]);
	return CMD_USAGE;
}

static int cmd_version(int argc, char **argv)
{
	if (argc > 1) {
		cmd_error("version: takes no arguments, not '%s'", argv[1]);
		return CMD_USAGE;
	}
	printf("thpeval %s\n", THPEVAL_VERSION);
	return CMD_OK;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return CMD_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return CMD_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(0, NULL);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		/* commands without options still answer --help, as 'thpeval help NAME' does */
		if (!commands[i].cmd && argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
			printf("thpeval %s: %s\n", commands[i].name, commands[i].summary);
			return CMD_OK;
		}
		return commands[i].fn(argc - 1, argv + 1);
	}
	cmd_error("unknown command '%s'; see 'thpeval help'", argv[1]);
	return CMD_USAGE;
}
