/*
 * run_alias: the run options that are other spellings of --workload-opts
 * items (--kcompile, --kcompile-timeout, --exec and its three options):
 * each checked and turned into its workload's WORKLOAD:PARAM=VALUE items in
 * run_config.wl_opts, the one way a workload's own parameters travel. Never
 * exits; exec_select (commands.h) may print a note.
 */
#ifndef THPEVAL_ORCH_CMD_RUN_ALIAS_H
#define THPEVAL_ORCH_CMD_RUN_ALIAS_H

#include "lib/err.h"
#include "orchestrator/model/results.h"
#include "orchestrator/run/config.h"

/*
 * The option opt (its long name, e.g. "exec-metric") with its value arg:
 * its items into c->wl_opts (an item already there replaced). 0, or a
 * negative errno with a one-line message that leaves the option's name to
 * the caller; -ENOENT when opt is no alias.
 */
int run_opt_alias(struct run_config *c, const char *opt, const char *arg, struct err *e);
/* --workload-opts=SPEC: its items into c->wl_opts, an item already there replaced */
int run_wlopts_add(struct run_config *c, const char *spec, struct err *e);
/* results.json's settings.kcompile ("CONFIG:TARGET") when kcompile is planned */
void run_alias_echo(const struct run_config *c, struct results *res);

#endif
