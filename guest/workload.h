/*
 * workload: the table of guest workloads. One struct per workload names it,
 * describes it, lists its parameters (with defaults, as offsets into its own
 * options struct) and its result fields, and points at its entry points. The
 * harness parses and checks parameters from these tables into a wl_common and
 * the workload's options; a workload never parses argv and never prints.
 */
#ifndef THPEVAL_GUEST_WORKLOAD_H
#define THPEVAL_GUEST_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/argv.h"
#include "lib/err.h"
#include "lib/record.h"

#define WL_MAX_LABELS 8
#define WL_WORD_MAX 64		/* WL_P_WORD values: a config name, a make target */
#define WL_PATH_MAX 256		/* WL_P_WORD values that are paths */
/* exec: its command and pattern, lib/argv-encoded (3 bytes a byte at most), with the NUL */
#define WL_EXEC_ARGV_MAX (3 * ARGV_MAX_CHARS + ARGV_MAX_ARGS)
#define WL_EXEC_METRIC_MAX (3 * ARGV_PATTERN_MAX + 1)

enum wl_ptype {
	WL_P_SIZE,	/* bytes with K/M/G suffix: uint64_t */
	WL_P_U64,	/* unsigned integer in [min, max]: uint64_t */
	WL_P_BOOL,	/* 0 or 1: bool */
	WL_P_KEEP01,	/* keep, 0 or 1 (a knob to leave alone or set): int, -1 = keep */
	WL_P_WORD,	/* text of [A-Za-z0-9_./:+-] into a char[max] (max = the array size) */
	WL_P__COUNT
};

struct wl_label {
	char key[REC_KEY_MAX];
	char val[REC_VAL_MAX];
};

/*
 * What every workload takes (wl_common_params) and the labels: the harness
 * puts them in every record; a workload may read seed (its pseudo-random
 * choices).
 */
struct wl_common {
	uint64_t rep;
	uint64_t seed;
	bool warmup;
	size_t nlabels;
	struct wl_label labels[WL_MAX_LABELS];
};

/*
 * One parameter. A workload's own parameters travel from `thpeval run
 * --workload-opts` (WORKLOAD:PARAM=VALUE) to its argv; the runner sets only
 * size, accesses and madvise itself. One name has a meaning for the runner:
 * "timeout" (WL_P_U64, seconds) is one run's own limit, which the runner and
 * the host turn into theirs (plus ARGV_EXEC_MARGIN_MS).
 */
struct wl_param {
	const char *name;	/* --name=value */
	enum wl_ptype type;
	/*
	 * offsetof() into the struct the table fills: struct wl_common for
	 * wl_common_params, the workload's own options for its params
	 */
	size_t off;
	const char *def;	/* default, parsed like a user value */
	uint64_t min, max;	/* WL_P_U64 and WL_P_SIZE */
	const char *help;
};

struct wl_metric {
	const char *key;	/* record field, unit in the name */
	const char *help;
};

struct harness_out;

/*
 * Where the workload reads /proc and /sys: "" on a real system, a fake tree in
 * tests. out and common are set by the harness while a workload runs:
 * multi-record workloads send their per-variant records through out
 * (harness_emit()); common holds this run's rep, warmup, seed and labels.
 */
struct wl_env {
	const char *root;
	struct harness_out *out;
	const struct wl_common *common;
};

struct workload {
	const char *name;
	const char *description;
	const struct wl_param *params;	/* terminated by a NULL name */
	/*
	 * sizeof the workload's options struct, the one its params point into:
	 * the harness zeroes one per run, fills it (defaults, then the user's
	 * values) and passes it as opts to check and run
	 */
	size_t opts_size;
	const struct wl_metric *metrics;	/* result fields, NULL-terminated */
	/*
	 * parameter checks that need the machine (memory size); 0 or err.
	 * -EOPNOTSUPP means "cannot run here" (a skip record), anything else is
	 * a bad parameter (a fail record).
	 */
	int (*check)(const void *opts, const struct wl_env *env, struct err *e);
	/*
	 * One repetition; adds its metrics to res (sent last, unless the
	 * workload added nothing to it and sent its records through
	 * harness_emit()); 0 or a negative errno with e set (-EOPNOTSUPP: skip).
	 */
	int (*run)(const void *opts, const struct wl_env *env, struct record *res, struct err *e);
	/*
	 * NULL, or extra arguments, NULL-terminated: the runner runs the workload
	 * once per entry (e.g. hzp with --zero-page=1 and --zero-page=0) when it
	 * may change the guest's settings.
	 */
	const char *const *runner_variants;
};

/* The parameters every workload takes (rep, warmup, seed); NULL-terminated. */
extern const struct wl_param wl_common_params[];
/* Fields the harness puts in every workload record before the metrics. */
extern const struct wl_metric wl_common_fields[];

/* the parameter called name in table t (NULL-terminated), or NULL */
const struct wl_param *wl_param_find(const struct wl_param *t, const char *name);
/* w's own parameter called name, else the common one, else NULL */
const struct wl_param *workload_param(const struct workload *w, const char *name);
bool workload_has_field(const struct workload *w, const char *key);

#endif
