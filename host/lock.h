/*
 * lock: one thpeval run at a time may hold the host settings. Owns the
 * state directory (created 0700, must be ours and not group/world writable)
 * and state_dir/lock, an flock(2)ed file naming its holder. A dead holder's
 * flock is gone with it, so a left-over lock file is taken over safely.
 * Never prints, never exits, never touches /sys.
 */
#ifndef THPEVAL_HOST_LOCK_H
#define THPEVAL_HOST_LOCK_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"

struct host_lock {
	int fd;			/* -1 when not held */
	char path[PATH_MAX];
};

#define HOST_LOCK_INIT { -1, { 0 } }

/*
 * Create state_dir (0700) if needed, open state_dir/lock (0600, O_CLOEXEC)
 * and flock(LOCK_EX|LOCK_NB) it; then write "pid N\nstarted <unix-time>\n
 * cmd <argv0>\n". *stale (may be NULL) is true when a killed holder left its
 * record behind. Held by another: -EBUSY, "host settings are locked by pid N
 * (thpeval run started <time>): wait for it or stop it".
 */
int host_lock_take(struct host_lock *l, const char *state_dir, bool *stale, struct err *e);
/* Empty the record and unlock. Accepts NULL and a lock not held; idempotent. */
void host_lock_release(struct host_lock *l);
/*
 * Describe the recorded holder: "pid N (thpeval run started <time>)".
 * 0, or -ENOENT when there is no lock file or no record in it (released).
 */
int host_lock_holder(const char *state_dir, char *info, size_t len);

/* mkdir -p (0700 for what is created); the directory must be ours and not group/other-writable */
int state_dir_prepare(const char *dir, struct err *e);

#endif
