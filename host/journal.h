/*
 * journal: a run's hold on the host THP settings: save -> journal to disk ->
 * apply -> restore. Owns state_dir/host-journal (0600, replaced atomically,
 * fsynced before the first sysfs write) so that a killed run is undone by
 * the next start or by `thpeval host restore`. Changes /sys only through
 * thp.h, locks only through lock.h; never prints, never exits.
 */
#ifndef THPEVAL_HOST_JOURNAL_H
#define THPEVAL_HOST_JOURNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "host/lock.h"
#include "host/thp.h"
#include "lib/err.h"

#define HOST_JOURNAL_NAME "host-journal"

struct host_session {		/* one run's hold on host settings */
	char root[PATH_MAX];	/* resolved filesystem root */
	char state_dir[PATH_MAX];
	struct thp_settings original;	/* values before our first write of each key */
	bool journal_written;	/* state_dir/host-journal is ours and on disk */
	bool active;		/* begin succeeded and end has not run */
	struct host_lock lock;
	bool stale_lock;	/* begin found a killed run's lock record */
	int stale_pid;		/* pid of the killed run whose journal begin restored, else 0 */
};

/*
 * Take the host lock (host_lock_dir), then, if a journal from a dead run exists,
 * restore it first and set *restored_stale (s->stale_pid names that run:
 * "restored host settings left by a killed run (pid N)"). A journal written
 * for another root, a corrupt one or a failed restore fail begin.
 */
int host_session_begin(struct host_session *s, const char *root, const char *state_dir,
		       bool *restored_stale, struct err *e);
/*
 * Validate; unless the key already holds value, journal its current value
 * (first original wins; temp file, fsync, rename, fsync dir) and then
 * thp_write it. Keys left unchanged are not journaled.
 */
int host_session_set(struct host_session *s, const char *key, const char *value, struct err *e);
/*
 * Put every journaled key back (reverse order, all of them even if one
 * fails; first error reported), then delete the journal. Keys that could
 * not be restored stay in the journal for `thpeval host restore`. Idempotent.
 */
int host_session_restore(struct host_session *s, struct err *e);
/*
 * The host lock guards host settings, so it lives with the host, not with the
 * state directory: <root>/run/thpeval ("/run/thpeval" on a real host), so two
 * runs with different --state-dir still exclude each other.
 */
#define HOST_LOCK_SUBDIR "/run/thpeval"
int host_lock_dir(const char *root, char *buf, size_t len, struct err *e);

/* restore + release the lock. Safe to call twice and after a failed begin. */
int host_session_end(struct host_session *s, struct err *e);
/*
 * `thpeval host restore`: restore from the on-disk journal if there is one
 * (*restored = true, holder_info = "pid N" of the run that wrote it), else
 * *restored = false (holder_info says so when a killed run's fragmenter was
 * ended all the same). Takes the lock itself: a live run holding it gives
 * -EBUSY with holder_info describing it. A missing state_dir is no journal.
 */
int host_restore_journal(const char *root, const char *state_dir, bool *restored,
			 char *holder_info, size_t len, struct err *e);

#endif
