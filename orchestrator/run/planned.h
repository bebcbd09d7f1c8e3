/*
 * planned: pure questions about the run configuration that the files of the
 * run loop ask (which guest settings and workloads it plans, a guest's time
 * limit). No I/O, never prints.
 */
#ifndef THPEVAL_ORCH_RUN_PLANNED_H
#define THPEVAL_ORCH_RUN_PLANNED_H

#include <stdbool.h>
#include <stdint.h>

#include "orchestrator/run/config.h"

bool guest_thp_planned(const struct run_config *cfg, const char *s);
bool workload_planned(const struct run_config *cfg, const char *w);
/* a planned workload takes --src: the kernel source disk is prepared */
bool srcdisk_planned(const struct run_config *cfg);
uint64_t guest_timeout_ms(const struct run_config *cfg);

#endif
