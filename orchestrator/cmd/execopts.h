/*
 * execopts: the exec workload's options of `thpeval run` (--exec,
 * --exec-metric, --exec-direction, --exec-timeout), checked on the host
 * before anything boots: the command split by lib/argv (never a shell on the
 * host), the pattern compiled here with the same POSIX regex the guest uses,
 * both encoded for the guest's kernel command line and held to what fits
 * there. Never prints, never exits.
 */
#ifndef THPEVAL_ORCH_CMD_EXECOPTS_H
#define THPEVAL_ORCH_CMD_EXECOPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/argv.h"
#include "lib/err.h"
#include "lib/wlopts.h"

/*
 * Bytes the two encoded values (command and pattern) may take on the guest's
 * kernel command line: x86 keeps 2048 bytes of it (COMMAND_LINE_SIZE), and
 * the image's boot words and every other thpeval.* key at their longest take
 * about 780 (run/guests.c refuses a longer line rather than cut it).
 */
#define EXEC_CMDLINE_BUDGET 1200
#define EXEC_ENC_MAX (3 * ARGV_MAX_CHARS + ARGV_MAX_ARGS)
#define EXEC_TIMEOUT_DEFAULT_MS (10ull * 60 * 1000)

struct exec_opts {
	bool set;				/* --exec given */
	char argv_enc[EXEC_ENC_MAX + 1];	/* its words, lib/argv-encoded */
	size_t nargs;
	char program[ARGV_MAX_CHARS + 1];	/* its first word, for messages */
	bool metric_set;
	char metric_enc[3 * ARGV_PATTERN_MAX + 1];
	bool dir_set;
	char dir[8];				/* higher or lower */
	bool timeout_set;
	uint64_t timeout_ms;			/* one exec run at most */
};

void exec_opts_defaults(struct exec_opts *x);
/*
 * --exec='CMD ARGS': split, checked, encoded, held to the budget; 0 or
 * -EINVAL/-E2BIG. The option setters' messages leave the option's name to
 * the caller (the CLI puts "--exec: " before them).
 */
int exec_opts_command(struct exec_opts *x, const char *arg, struct err *e);
/* --exec-metric=REGEX: printable, at most ARGV_PATTERN_MAX, compiles, one capture group */
int exec_opts_metric(struct exec_opts *x, const char *arg, struct err *e);
/* --exec-direction=higher|lower */
int exec_opts_direction(struct exec_opts *x, const char *arg, struct err *e);
/* --exec-timeout=DURATION: 1s to 24h */
int exec_opts_timeout(struct exec_opts *x, const char *arg, struct err *e);
/*
 * The checks across options, once the workloads are known: planned (exec is
 * among them) needs --exec, the others need exec planned, a pattern needs a
 * direction and a direction a pattern, and exec runs in guests only (on_host:
 * --target=host or both). 0 or -EINVAL with one line.
 */
int exec_opts_check(const struct exec_opts *x, bool planned, bool on_host, struct err *e);
/*
 * The exec items of a --workload-opts list (argv, metric, direction,
 * timeout, as the options above write them) back into x over its
 * defaults: what the checks and a later option see. A list that does not
 * parse leaves the defaults (its own check reports it).
 */
void exec_opts_from_wlopts(struct exec_opts *x, const char *spec);
/* bytes of the encoded values on the kernel command line */
size_t exec_opts_cmdline_bytes(const struct exec_opts *x);

#endif
