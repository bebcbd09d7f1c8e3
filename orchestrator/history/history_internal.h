/*
 * history_internal: what history/history.c shares with report/history_query.c,
 * and nothing outside them uses: opening a history database with its schema
 * checked (and, for a writer, migrated).
 */
#ifndef THPEVAL_HISTORY_HISTORY_INTERNAL_H
#define THPEVAL_HISTORY_HISTORY_INTERNAL_H

#include <stdbool.h>

#include "lib/err.h"
#include "orchestrator/history/histdb.h"

/*
 * Open db (a path or a postgresql:// URI) and check (write: set up or
 * migrate) its schema; empty: there is no history in it yet (history.c).
 */
int hopen(const char *db, bool write, struct histdb **out, bool *empty, struct err *e);

#endif
