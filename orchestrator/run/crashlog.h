/*
 * crashlog: what a guest's kernel said as it died, read from its console
 * log (untrusted guest output: bounded, printable only), for the error of a
 * guest that stopped before it finished.
 */
#ifndef THPEVAL_RUN_CRASHLOG_H
#define THPEVAL_RUN_CRASHLOG_H

#include <stddef.h>

/*
 * The last "Kernel panic" line of the log at path and the last "BUG:" or
 * "Oops" line before it, timestamps dropped, as "BUG: ...; Kernel panic - ..."
 * into out. Returns 0, or -1 with out empty when the log has no panic.
 */
int crashlog_panic(const char *path, char *out, size_t len);

#endif
