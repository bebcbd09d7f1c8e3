/* thpeval workloads: every workload the guest program offers, with its parameters and defaults */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/err.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/run/workloads.h"

int cmd_workloads(int argc, char **argv)
{
	char bin[PATH_MAX], *buf;
	struct err e = ERR_INIT;
	int rc = CMD_OK;

	if (argc > 1) {
		cmd_error("workloads: takes no arguments; it lists every workload with its parameters and defaults");
		return CMD_USAGE;
	}
	if (cmd_default_guest_bin(bin, sizeof(bin), &e))
		return cmd_fail(&e, CMD_ERROR);
	buf = malloc(1 << 16);
	if (!buf || workloads_describe(bin, buf, 1 << 16, &e))
		rc = buf ? cmd_fail(&e, CMD_ERROR) : CMD_ERROR;
	else
		fputs(buf, stdout);
	free(buf);
	return rc;
}
