/*
 * spawn: run a host program from an argv (no shell), wait for it and judge
 * its exit status. stdout can be collected; the tail of stderr goes into the
 * error message. Used by images/ for supermin and dpkg-query.
 * Never prints, never exits; returns 0 or a negative errno and fills err.
 */
#ifndef THPEVAL_IMAGES_SPAWN_H
#define THPEVAL_IMAGES_SPAWN_H

#include <stddef.h>

#include "lib/err.h"

/*
 * Run argv[0] (looked up in PATH) with argv, stdin from /dev/null.
 * env_add: NULL-terminated "NAME=value" strings set on top of the caller's
 * environment (may be NULL). out: if not NULL, receives stdout, NUL-terminated
 * (-EOVERFLOW if it does not fit in out_size); if NULL stdout is discarded.
 * The program must exit with status 0; otherwise the error names the program,
 * the status or signal, and the last line(s) it wrote to stderr.
 */
int spawn_run(const char *const *argv, const char *const *env_add,
	      char *out, size_t out_size, struct err *e);

#endif
