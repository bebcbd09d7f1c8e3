/*
 * registry: the guest's workloads by name, and the two commands that walk
 * them: `workload NAME ...` (looked up here, run by the harness) and
 * `workloads` (every table as text or JSON). The one file that names every
 * workload: it sits above them and the harness, which never look it up.
 */
#ifndef THPEVAL_GUEST_REGISTRY_H
#define THPEVAL_GUEST_REGISTRY_H

#include <stddef.h>
#include <stdio.h>

#include "lib/err.h"
#include "workload.h"

const struct workload *workload_find(const char *name);
const struct workload *workload_at(size_t i);	/* NULL past the end */

/*
 * `workload NAME [--name=value ...]`: argv[0] is NAME. Runs one repetition
 * and writes its records to out_fd, seq from 0. Returns an enum harness_exit.
 */
/* e holds why when the return is not HARNESS_OK (the record says it too). */
int registry_workload_main(int argc, char *const argv[], const struct wl_env *env, int out_fd,
			   struct err *e);

/* `workloads`: name, description, parameters with defaults, result fields. */
void registry_list(FILE *f);

/*
 * `workloads --format=json`: the same tables as one JSON document, what the
 * orchestrator reads (never the text above):
 *   {"schema_version": 1, "workloads": [{"name", "description",
 *     "params": [{"name", "type": size|u64|bool|keep01|word, "default" (text,
 *       as a user would pass it), "min" and "max" (size, u64), "max_length"
 *       (word), "help", "common" (true: every workload's rep, warmup, seed)}],
 *     "labels": {"max", "help"} (--label=KEY=VALUE, at most max of them),
 *     "metrics": [{"key", "help", "common" (true: in every record)}],
 *     "evidence": [{"variant", "rule"}] (lib/wltraits; [] when it has none)}]}
 */
#define REGISTRY_LIST_SCHEMA 1
void registry_list_json(FILE *f);
/* s as a JSON string, quoted: " \ and control characters escaped, invalid UTF-8 as U+FFFD */
void registry_json_str(FILE *f, const char *s);

#endif
