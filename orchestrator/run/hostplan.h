/*
 * hostplan: host THP planning: the sizes the host offers, the knobs each
 * group sets, the guest-side mTHP note, the workload options that set a
 * host knob.
 */
#ifndef THPEVAL_ORCH_RUN_HOSTPLAN_H
#define THPEVAL_ORCH_RUN_HOSTPLAN_H

#include "orchestrator/run/internal.h"

int apply_host_thp(struct host_session *hs, const struct host_plan *hp, const struct thp_setting *t, struct err *e);
void run_proc_root(const struct run_config *cfg, char *buf, size_t len);
int plan_host_thp(const struct run_config *cfg, struct results *res, struct host_plan *hp,
	struct thp_setting *list, size_t *n, struct err *e);
void guest_mthp_note(const struct run_config *cfg, const struct run_io *io, struct results *res);
/*
 * Workload options that set a host knob (hzp zero-page):
 * on the bare host the workload would write the real knob itself, outside
 * the journal and whatever the sysfs root. host_knob_opt: arg ("--P=V") is
 * one of workload's, to be kept from it. host_knob_opts_set: the knobs
 * spec (--workload-opts) asks of workload set through the session (journal
 * first, under its root), their values before in *prev (none: prev->n 0);
 * host_knob_opts_restore puts those back.
 */
bool host_knob_opt(const char *workload, const char *arg);
int host_knob_opts_set(struct host_session *hs, const char *spec, const char *workload, struct thp_settings *prev,
	struct err *e);
int host_knob_opts_restore(struct host_session *hs, const struct thp_settings *prev, struct err *e);

#endif
