/*
 * abaxis: the A/B axis of a run: one or two QEMU binaries (--emulator=A[,B]),
 * checked before the first boot. With two, every host group of every round
 * boots once with each (arm "A" and "B"), interleaved in the rounds' ABBA
 * order like the host settings; analysis/abtest.c compares them. Never
 * prints, never exits.
 */
#ifndef THPEVAL_ORCH_RUN_ABAXIS_H
#define THPEVAL_ORCH_RUN_ABAXIS_H

#include "lib/err.h"
#include "orchestrator/model/results.h"
#include "orchestrator/run/config.h"

/* "PATH[,PATH]": each an executable regular file; the same path twice is an A/A run */
int ab_emulator_parse(struct run_config *c, const char *arg, struct err *e);
/* arms of the run: 2 with two emulators, else 1 */
unsigned ab_arms(const struct run_config *c);
/* "A", "B" with two arms; "" with one */
const char *ab_arm_name(const struct run_config *c, unsigned arm);
/* the emulator of an arm, NULL when libvirt chooses */
const char *ab_emulator(const struct run_config *c, unsigned arm);
/* the axis into the settings echo */
void ab_echo(const struct run_config *c, struct results *res);

#endif
