/*
 * results_json: results.json as field tables (jtable.h), one per JSON object
 * kind (the document, host, telemetry, settings, cell, coverage, metric,
 * guest, fragmented arm, effect, variance), and the writer and the reader
 * they both drive, so every key is declared once. Derived values (summaries,
 * coverage means, effects) are written and, read back, only checked: the
 * model recomputes them. Never prints, never exits.
 */
#ifndef THPEVAL_ORCH_RESULTS_JSON_H
#define THPEVAL_ORCH_RESULTS_JSON_H

#include <json-c/json.h>
#include <stddef.h>

#include "lib/err.h"
#include "orchestrator/model/jtable.h"
#include "orchestrator/model/results.h"

/* the document's table: its fields and, through them, every other table */
extern const struct jt_table results_jt;

/* results.json text of r (pretty, with a final newline); free() it */
int results_to_json_text(const struct results *r, char **text, size_t *len, struct err *e);
/* the same, written to path atomically (a temporary name, then rename) */
int results_write_json(const struct results *r, const char *path, struct err *e);
/*
 * The parsed document root into r (initialised by the caller); name is used
 * in messages. Not a thpeval results file, an unknown schema_version, or a
 * key missing, of the wrong type or too large is an error naming the key.
 */
int results_from_json(json_object *root, const char *name, struct results *r, struct err *e);

#endif
