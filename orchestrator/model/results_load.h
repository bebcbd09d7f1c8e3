/*
 * results_load: results.json back into the results model (json-c),
 * strictly: a known schema_version, every key the writer writes, the right
 * types, bounded strings and counts. Derived numbers are recomputed from
 * the samples, so they cannot disagree. The writer is results_json.h's
 * (included). Never prints, never exits.
 */
#ifndef THPEVAL_ORCH_RESULTS_LOAD_H
#define THPEVAL_ORCH_RESULTS_LOAD_H

#include <stddef.h>

#include "lib/err.h"
#include "orchestrator/model/results.h"
#include "orchestrator/model/results_json.h"

#define RESULTS_FILE "results.json"
#define RESULTS_MAX_BYTES (256u << 20)	/* larger is not a results file */
/*
 * More cells, or more JSON values (lib/jsonscan.h's count), is not a results
 * file either; both are counted before json-c builds a tree (about 200 bytes
 * a value: at most ~900 MB) and the model (about 330 KB a cell: at most
 * ~660 MB). A default run has 4 cells and 2.2k values; every workload at
 * both host THP settings, both prefaults and a fragmented host ~530 cells;
 * a cell at the most samples the loader takes (512 a metric) ~25k values.
 */
#define RESULTS_MAX_CELLS 2000u
#define RESULTS_MAX_VALUES (4u << 20)

/*
 * Load path (a results.json, or a directory holding one) into out, which is
 * initialised here. On error out is left empty (released) and e says why:
 * not JSON (json-c's reason, line and column), not a thpeval results file,
 * an unknown schema version, or a key with the wrong type or size.
 */
int results_load(const char *path, struct results *out, struct err *e);
/* the same from text in memory; name is used in messages */
int results_load_text(const char *text, size_t len, const char *name, struct results *out,
		      struct err *e);
/* "DIR/results.json" when path is a directory, else path */
int results_path_resolve(const char *path, char *buf, size_t len, struct err *e);

#endif
