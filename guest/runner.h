/*
 * runner: PID 1 of a thpeval guest (or `thpeval-guest runner` for tests).
 * Mounts the pseudo file systems, reads the plan from the kernel command line,
 * opens the virtio-serial port, runs every (round, guest THP, workload) cell
 * as a child `thpeval-guest workload ...` with a timeout, validates and
 * re-sequences the child's records onto the port, and powers off. As PID 1
 * it never returns; the guest's only way out is reboot(RB_POWER_OFF).
 */
#ifndef THPEVAL_GUEST_RUNNER_H
#define THPEVAL_GUEST_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "emit.h"
#include "forward.h"
#include "lib/err.h"
#include "lib/record.h"

#define RUNNER_BYE_MS 30000
#define RUNNER_PORT_WAIT_MS 10000
#define RUNNER_WRITE_MS 60000	/* a host that does not read for this long is gone */
#define RUNNER_USAGE "[--cmdline=FILE] [--port=PATH|-] [--exe=PATH] [--root=DIR] [--set-thp]"

/*
 * The runner. pid1: mount, use /dev/console, write THP knobs, power off at
 * the end (never returns). Otherwise (test mode) it takes RUNNER_USAGE:
 * the command line from FILE (default /proc/cmdline), records to PATH or
 * stdout instead of the virtio port, workloads run from --exe (default
 * /proc/self/exe), /proc and /sys under DIR; the THP knob is only written
 * with --set-thp, else cells that need another setting are skipped. Returns
 * 0 when no fail record was sent, 1 otherwise, 2 on bad usage.
 */
int runner_main(int argc, char *const argv[], bool pid1);

#endif
