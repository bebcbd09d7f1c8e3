/*
 * results_json: the results model as results.json (json-c), written
 * atomically. Never prints, never exits.
 */
#ifndef THPEVAL_ORCH_RESULTS_JSON_H
#define THPEVAL_ORCH_RESULTS_JSON_H

#include <stddef.h>

#include "lib/err.h"
#include "orchestrator/model/results.h"

/* results.json text of r (pretty, with a final newline), made in memory; free() it */
int results_to_json_text(const struct results *r, char **text, size_t *len, struct err *e);
/* the same text written to path atomically (a temporary name, then rename) */
int results_write_json(const struct results *r, const char *path, struct err *e);

#endif
