/*
 * commands: every thpeval command, one file each in cmd/ with its usage text
 * and option table, declared here for main's command table; and what they
 * share: the exit status, the one-line error, argument reordering. Commands
 * are the only functions that print (data to stdout, one-line errors to
 * stderr through cmd_error()) and pick exit codes; they never call exit().
 */
#ifndef THPEVAL_ORCH_COMMANDS_H
#define THPEVAL_ORCH_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "orchestrator/cmd/cli.h"

/* the exit status of every command (main returns what the command returns) */
enum cmd_exit {
	CMD_OK = 0,
	CMD_ERROR = 1,		/* the command failed; compare, and run with --baseline: a regression */
	CMD_USAGE = 2,		/* bad options or arguments; compare: any error */
	CMD_INTERRUPTED = 130,	/* run: stopped by SIGINT, SIGTERM or SIGHUP (128 + SIGINT) */
};

/* "thpeval: error: <msg>" as one line on stderr (control characters become '?') */
void cmd_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* cmd_error() of e's message; returns code */
int cmd_fail(const struct err *e, int code);

/*
 * cli_parse() stops at the first positional argument; these commands also take
 * options after them ("thpeval compare A B --threshold=10"). Reorder argv into
 * out (argc + 1 slots): argv[0], the options with their values, then "--" if
 * given, then the positionals. Returns the new argc.
 */
int cmd_args_permute(const struct command *cmd, int argc, char **argv, char **out);
/* fn on argv reordered by cmd_args_permute(); CMD_ERROR when out of memory */
int cmd_options_first(const struct command *cmd, int (*fn)(int argc, char **argv), int argc, char **argv);

/* does root (a --sysfs-root) name the real filesystem root ("/", "//", "/.", a link to "/")? */
bool cmd_is_host_root(const char *root);
/* 0 as root, else the one-line "WHAT needs root" error and CMD_ERROR */
int cmd_need_root(const char *what);
/*
 * The default guest program of the thpeval executable exe (a resolved path,
 * EXEDIR = its directory, PREFIX = EXEDIR's parent), the first that is
 * executable: EXEDIR/thpeval-guest (a checkout's bin/), then
 * PREFIX/libexec/thpeval/thpeval-guest (an installed package: /usr/bin/thpeval
 * finds /usr/libexec/thpeval/thpeval-guest). Its path goes to buf; -ENOENT with
 * both places named when neither is there.
 */
int cmd_guest_bin_lookup(const char *exe, char *buf, size_t len, struct err *e);
/*
 * --guest-bin as given: an executable regular file (access() calls a
 * directory executable, and a missing x bit is not "not found")
 */
int cmd_guest_bin_check(const char *path, struct err *e);
/* cmd_guest_bin_lookup() of this executable (/proc/self/exe) */
int cmd_default_guest_bin(char *buf, size_t len, struct err *e);

/* thpeval run [options]: 0 complete (and the gate passed), 1 failed or a regression, 2 usage, 130 interrupted */
extern const struct command run_cmd;
int cmd_run(int argc, char **argv);
/* option callback for cli_parse() on run_cmd: fills a struct run_config (run/config.h) */
int run_config_opt(void *ctx, int id, const char *arg, struct err *e);
/* after the options: exec named, --exec given and the workloads selected agree (cmd/run_alias.c) */
struct run_config;
/*
 * A run's configuration as no option leaves it: run_config_defaults(), then
 * the default of every row of run_cmd's table (cli_defaults())
 */
int run_config_init(struct run_config *c, struct err *e);
/* after the options: exec named, --exec given and the workloads selected agree (cmd/run_opts.c) */
int exec_select(struct run_config *c, struct err *e);
/* a selected workload takes --shmem-thp (the guest shmem axis applies to it) */
bool shmem_axis_planned(const struct run_config *c);
/*
 * After the workloads are selected: options given (given: cli_parse()'s set)
 * whose values leave them nothing to do or that contradict each other
 * (--guests with --target=host, --kcompile without kcompile, --baseline=last
 * with --db=none).
 */
int run_opts_check(const struct run_config *c, uint64_t given, struct err *e);
/*
 * Before anything starts: --kernel a readable regular file, --state-dir one
 * the run can use or create, --baseline a results file that loads.
 */
int run_paths_check(const struct run_config *c, struct err *e);

/* thpeval host show | set KEY=VALUE... | restore [--sysfs-root=DIR] [--state-dir=DIR] */
extern const struct command host_cmd;
int cmd_host(int argc, char **argv);

/* thpeval image build | show [--kernel=PATH] [--cache-dir=DIR] [--guest-bin=PATH] [--force] [--kcompile] */
extern const struct command image_cmd;
int cmd_image(int argc, char **argv);

/* thpeval report DIR|results.json [--format=LIST] [--out=DIR] [--baseline=PATH] [--threshold=PCT] */
extern const struct command report_cmd;
int cmd_report(int argc, char **argv);

/* thpeval compare BASELINE CURRENT [--threshold=PCT]: 0 no regression, 1 regression, 2 error */
extern const struct command compare_cmd;
int cmd_compare(int argc, char **argv);

/* thpeval history [--db=PATH|URI] [--host=NAME] [--workload=W] [--last=N] | --import [--gate-failed] FILE|DIR... */
extern const struct command history_cmd;
int cmd_history(int argc, char **argv);

/* thpeval workloads: no options (no option table) */
int cmd_workloads(int argc, char **argv);

#endif
