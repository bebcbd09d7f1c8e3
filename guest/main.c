/*
 * thpeval-guest: one static binary, three modes. `workload NAME ...` runs one
 * repetition and prints records; `workloads` lists the table; `runner` (or
 * running as PID 1, installed as /init) executes the plan from the kernel
 * command line and streams records to the host over virtio-serial.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "guest/registry.h"
#include "guest/runner.h"
#include "lib/err.h"

#ifndef THPEVAL_VERSION
#define THPEVAL_VERSION "dev"
#endif

static const struct {
	const char *name;
	const char *args;
	const char *help;
} commands[] = {
	{ "workload", "NAME [--name=value ...] [--label=KEY=VALUE ...]",
	  "run one repetition of a workload, records to stdout" },
	{ "workloads", "[--format=text|json]",
	  "list the workloads, their parameters and result fields (json: for programs)" },
	{ "runner", RUNNER_USAGE, "run the plan from the kernel command line (what PID 1 does)" },
	{ "help", "", "this text" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "thpeval-guest %s: THP workloads for guests and hosts\n\n", THPEVAL_VERSION);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  thpeval-guest %s%s%s\n      %s\n", commands[i].name,
			*commands[i].args ? " " : "", commands[i].args, commands[i].help);
	fprintf(f, "\nExit: 0 ok, 1 the run failed, 2 bad parameters (a fail record says why).\n");
}

/* `workloads [--format=text|json]`: the text listing (for people) or the JSON (for programs) */
static int workloads_main(int argc, char **argv)
{
	bool json = false;

	if (argc > 1) {
		fprintf(stderr, "thpeval-guest: 'workloads' takes one option, --format=text or "
			"--format=json, not '%s'\n", argv[1]);
		return 2;
	}
	if (argc == 1 && !strcmp(argv[0], "--format=json")) {
		json = true;
	} else if (argc == 1 && strcmp(argv[0], "--format=text")) {
		fprintf(stderr, "thpeval-guest: bad argument '%s' for 'workloads': expected "
			"--format=text or --format=json\n", argv[0]);
		return 2;
	}
	if (json)
		registry_list_json(stdout);
	else
		registry_list(stdout);
	return fflush(stdout) || ferror(stdout) ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct wl_env env = { .root = "" };
	struct err e = ERR_INIT;
	int rc;

	if (getpid() == 1)
		return runner_main(0, NULL, true);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "workload")) {
		rc = registry_workload_main(argc - 2, argv + 2, &env, STDOUT_FILENO, &e);
		if (rc)
			fprintf(stderr, "thpeval-guest: %s\n", e.msg);
		return rc;
	}
	if (!strcmp(argv[1], "workloads"))
		return workloads_main(argc - 2, argv + 2);
	if (!strcmp(argv[1], "runner"))
		return runner_main(argc - 2, argv + 2, false);
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "thpeval-guest: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
