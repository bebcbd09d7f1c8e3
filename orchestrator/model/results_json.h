/*
 * results_json: the results model as results.json (json-c), written
 * atomically. Never prints, never exits.
 */
#ifndef THPEVAL_ORCH_RESULTS_JSON_H
#define THPEVAL_ORCH_RESULTS_JSON_H

#include "lib/err.h"
#include "orchestrator/model/results.h"

int results_write_json(const struct results *r, const char *path, struct err *e);

#endif
