/*
 * workload: the table of guest workloads. One struct per workload names it,
 * describes it, lists its parameters (with defaults) and its result fields,
 * and points at its entry point. The harness parses and checks parameters
 * from these tables; a workload never parses argv and never prints.
 */
#ifndef THPEVAL_GUEST_WORKLOAD_H
#define THPEVAL_GUEST_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/record.h"

#define WL_MAX_LABELS 8

enum wl_ptype {
	WL_P_SIZE,	/* bytes with K/M/G suffix */
	WL_P_U64,	/* unsigned integer in [min, max] */
	WL_P_BOOL,	/* 0 or 1 */
	WL_P__COUNT
};

struct wl_label {
	char key[REC_KEY_MAX];
	char val[REC_VAL_MAX];
};

/* Every parameter any workload takes; each workload's table says which. */
struct wl_args {
	uint64_t size;		/* bytes */
	uint64_t accesses;
	uint64_t rep;
	uint64_t seed;
	bool warmup;
	bool madvise;
	size_t nlabels;
	struct wl_label labels[WL_MAX_LABELS];
};

struct wl_param {
	const char *name;	/* --name=value */
	enum wl_ptype type;
	size_t off;		/* offsetof(struct wl_args, ...) */
	const char *def;	/* default, parsed like a user value */
	uint64_t min, max;	/* WL_P_U64 and WL_P_SIZE */
	const char *help;
};

struct wl_metric {
	const char *key;	/* record field, unit in the name */
	const char *help;
};

/* Where the workload reads /proc and /sys: "" on a real system, a fake tree in tests. */
struct wl_env {
	const char *root;
};

struct workload {
	const char *name;
	const char *description;
	const struct wl_param *params;	/* terminated by a NULL name */
	const struct wl_metric *metrics;	/* result fields, NULL-terminated */
	/* parameter checks that need the machine (memory size); 0 or err */
	int (*check)(const struct wl_args *a, const struct wl_env *env, struct err *e);
	/* one repetition; adds its metrics to res; 0 or a negative errno with e set */
	int (*run)(const struct wl_args *a, const struct wl_env *env, struct record *res,
		   struct err *e);
};

/* The parameters every workload takes (rep, warmup, seed); NULL-terminated. */
extern const struct wl_param wl_common_params[];
/* Fields the harness puts in every workload record before the metrics. */
extern const struct wl_metric wl_common_fields[];

const struct workload *workload_find(const char *name);
const struct workload *workload_at(size_t i);	/* NULL past the end */
const struct wl_param *workload_param(const struct workload *w, const char *name);
bool workload_has_field(const struct workload *w, const char *key);

#endif
