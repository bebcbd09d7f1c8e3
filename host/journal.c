#include "host/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/frag.h"
#include "lib/fstree.h"
#include "lib/parse.h"

#define JOURNAL_MAGIC "thpeval-journal 1"
#define JOURNAL_MAX (64 * 1024)
#define JOURNAL_LINE_MAX (PATH_MAX + 16)

struct journal {
	int pid;
	char root[PATH_MAX];
	struct thp_settings set;
};

static int state_path(const char *state_dir, const char *name, char *buf, size_t len,
		      struct err *e)
{
	int n = snprintf(buf, len, "%s/%s", state_dir, name);

	if (n < 0 || (size_t)n >= len)
		return err_set(e, -ENAMETOOLONG, "state directory path '%s' is too long", state_dir);
	return 0;
}

static int fsync_dir(const char *dir, struct err *e)
{
	int fd, saved;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		return err_set(e, -saved, "cannot open state directory '%s': %s", dir, strerror(saved));
	}
	if (fsync(fd) < 0) {
		saved = errno;
		close(fd);
		return err_set(e, -saved, "cannot fsync state directory '%s': %s", dir, strerror(saved));
	}
	close(fd);
	return 0;
}

static bool value_ok(const char *v)
{
	if (!*v)
		return false;
	for (; *v; v++)
		if ((unsigned char)*v <= ' ' || *v == 0x7f)
			return false;
	return true;
}

static int corrupt(struct err *e, const char *path, unsigned line, const char *why)
{
	return err_set(e, -EBADMSG,
		       "corrupt host journal '%s' line %u: %s: check the thp settings by hand, then remove it with 'rm %s'",
		       path, line, why, path);
}

/* one line of the journal; line has no '\n' */
static int parse_line(struct journal *j, const char *path, unsigned no, char *line,
		      struct err *e)
{
	uint64_t pid;
	char *key, *val, *sp;

	if (no == 1)
		return strcmp(line, JOURNAL_MAGIC) ? corrupt(e, path, no, "not a thpeval journal") : 0;
	if (no == 2) {
		if (strncmp(line, "pid ", 4) || parse_u64_range(line + 4, 1, INT32_MAX, &pid))
			return corrupt(e, path, no, "expected 'pid N'");
		j->pid = (int)pid;
		return 0;
	}
	if (no == 3) {
		if (strncmp(line, "root /", 6) || strlen(line + 5) >= sizeof(j->root))
			return corrupt(e, path, no, "expected 'root /PATH'");
		strcpy(j->root, line + 5);
		return 0;
	}
	if (strncmp(line, "set ", 4))
		return corrupt(e, path, no, "expected 'set KEY VALUE'");
	key = line + 4;
	sp = strchr(key, ' ');
	if (!sp)
		return corrupt(e, path, no, "expected 'set KEY VALUE'");
	*sp = '\0';
	val = sp + 1;
	if (!thp_key_known(key))
		return corrupt(e, path, no, "unknown thp setting");
	if (!value_ok(val) || strlen(val) >= THP_VAL_MAX)
		return corrupt(e, path, no, "bad value");
	if (thp_settings_get(&j->set, key))
		return corrupt(e, path, no, "setting listed twice");
	if (j->set.n >= THP_MAX_SETTINGS)
		return corrupt(e, path, no, "too many settings");
	return thp_settings_put(&j->set, key, val, e);
}

/* 0 loaded, -ENOENT (e untouched) when there is no journal */
static int journal_load(const char *state_dir, struct journal *j, struct err *e)
{
	struct err why = ERR_INIT;
	char path[PATH_MAX];
	char *buf = NULL, *p, *nl;
	size_t off = 0;
	unsigned no = 0;
	int r;

	memset(j, 0, sizeof(*j));
	r = state_path(state_dir, HOST_JOURNAL_NAME, path, sizeof(path), e);
	if (r)
		return r;
	/* never blocks on a FIFO planted there, never follows a link */
	r = read_regular(path, "host journal", "", RF_NOFOLLOW, JOURNAL_MAX, &buf, &off, &why);
	if (r == -ENOENT)
		return -ENOENT;
	if (r)
		return err_set(e, r == -EFBIG ? -EBADMSG : r,
			       "%s: check the thp settings by hand, then remove it with 'rm %s'", why.msg, path);
	if (memchr(buf, '\0', off)) {
		r = corrupt(e, path, 0, "contains NUL bytes");
		goto out;
	}
	for (p = buf; *p; p = nl + 1) {
		no++;
		nl = strchr(p, '\n');
		if (!nl) {
			r = corrupt(e, path, no, "truncated line");
			goto out;
		}
		if ((size_t)(nl - p) > JOURNAL_LINE_MAX) {
			r = corrupt(e, path, no, "line too long");
			goto out;
		}
		*nl = '\0';
		r = parse_line(j, path, no, p, e);
		if (r)
			goto out;
	}
	r = no < 3 ? corrupt(e, path, no + 1, "missing header") : 0;
out:
	free(buf);
	return r;
}

/* write the whole journal atomically: temp file, fsync, rename, fsync dir */
static int journal_store(const char *state_dir, int pid, const char *root,
			 const struct thp_settings *set, struct err *e)
{
	char path[PATH_MAX], tmp[PATH_MAX];
	size_t len = 0, cap = JOURNAL_MAX, i;
	char *buf;
	ssize_t w;
	int fd, n, r, saved;

	r = state_path(state_dir, HOST_JOURNAL_NAME, path, sizeof(path), e);
	if (!r)
		r = state_path(state_dir, HOST_JOURNAL_NAME ".tmp", tmp, sizeof(tmp), e);
	if (r)
		return r;
	buf = malloc(cap);
	if (!buf)
		return err_set(e, -ENOMEM, "out of memory writing '%s'", path);
	n = snprintf(buf, cap, JOURNAL_MAGIC "\npid %d\nroot %s\n", pid, root);
	if (n < 0 || (size_t)n >= cap) {
		free(buf);
		return err_set(e, -ENAMETOOLONG, "root '%s' too long for the host journal", root);
	}
	len = (size_t)n;
	for (i = 0; i < set->n; i++) {
		n = snprintf(buf + len, cap - len, "set %s %s\n", set->s[i].key, set->s[i].value);
		if (n < 0 || (size_t)n >= cap - len) {
			free(buf);
			return err_set(e, -E2BIG, "host journal '%s' would be too large", path);
		}
		len += (size_t)n;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		saved = errno;
		free(buf);
		return err_set(e, -saved, "cannot create '%s': %s", tmp, strerror(saved));
	}
	r = 0;
	if (fchmod(fd, 0600) < 0) {
		saved = errno;
		r = err_set(e, -saved, "cannot chmod '%s': %s", tmp, strerror(saved));
	}
	for (i = 0; !r && i < len; i += (size_t)w) {
		w = write(fd, buf + i, len - i);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w <= 0) {
			saved = w < 0 ? errno : EIO;
			r = err_set(e, -saved, "cannot write '%s': %s", tmp, strerror(saved));
		}
	}
	free(buf);
	if (!r && fsync(fd) < 0) {
		saved = errno;
		r = err_set(e, -saved, "cannot fsync '%s': %s", tmp, strerror(saved));
	}
	if (close(fd) < 0 && !r) {
		saved = errno;
		r = err_set(e, -saved, "cannot write '%s': %s", tmp, strerror(saved));
	}
	if (!r && rename(tmp, path) < 0) {
		saved = errno;
		r = err_set(e, -saved, "cannot rename '%s' to '%s': %s", tmp, path, strerror(saved));
	}
	if (r) {
		unlink(tmp);
		return r;
	}
	return fsync_dir(state_dir, e);
}

static int journal_remove(const char *state_dir, struct err *e)
{
	char path[PATH_MAX];
	int r, saved;

	r = state_path(state_dir, HOST_JOURNAL_NAME, path, sizeof(path), e);
	if (r)
		return r;
	if (unlink(path) < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0;
		return err_set(e, -saved, "cannot remove host journal '%s': %s", path, strerror(saved));
	}
	return fsync_dir(state_dir, e);
}

/* write back every setting, last set first; the ones that fail go to *failed */
static int restore_all(const char *root, const struct thp_settings *set,
		       struct thp_settings *failed, struct err *e)
{
	struct err one;
	size_t i;
	int first = 0;

	failed->n = 0;
	for (i = set->n; i-- > 0;) {
		err_clear(&one);
		if (!thp_write(root, set->s[i].key, set->s[i].value, &one))
			continue;
		if (!first)
			first = err_set(e, one.code, "cannot restore thp setting '%s' to '%s': %s",
					set->s[i].key, set->s[i].value, one.msg);
		thp_settings_put(failed, set->s[i].key, set->s[i].value, NULL);
	}
	/* the journal left behind keeps the order the settings were made in */
	for (i = 0; i < failed->n / 2; i++) {
		struct thp_knob t = failed->s[i];

		failed->s[i] = failed->s[failed->n - 1 - i];
		failed->s[failed->n - 1 - i] = t;
	}
	return first;
}

static int resolve_root(const char *root, char *out, struct err *e)
{
	char buf[PATH_MAX];
	int saved;

	if (!root || !*root)
		return err_set(e, -EINVAL, "empty filesystem root");
	if (!realpath(root, buf)) {
		saved = errno;
		return err_set(e, -saved, "cannot resolve filesystem root '%s': %s", root,
			       strerror(saved));
	}
	if (strchr(buf, '\n'))
		return err_set(e, -EINVAL, "filesystem root '%s' has a newline in its name: use another path",
			       root);
	strcpy(out, buf);
	return 0;
}

/*
 * With the lock held: restore a journal found on disk. 0 and *pid = 0 when
 * there is none; on a partial failure the journal keeps what failed.
 */
static int restore_on_disk(const char *root, const char *state_dir, int *pid, struct err *e)
{
	struct thp_settings *failed;
	struct journal *j;
	char path[PATH_MAX];
	int r;

	*pid = 0;
	{
		/* a fragmenter left by a killed run holds host memory: end it first */
		char proc[PATH_MAX];
		int killed = 0;

		if ((size_t)snprintf(proc, sizeof(proc), "%s/proc", strcmp(root, "/") ? root : "") >= sizeof(proc))
			return err_set(e, -ENAMETOOLONG, "root '%s' is too long", root);
		r = frag_reap_stale(proc, state_dir, &killed, e);
		if (r)
			return r;
		if (killed)
			*pid = -1;
	}
	j = malloc(sizeof(*j));
	failed = malloc(sizeof(*failed));
	if (!j || !failed) {
		free(j);
		free(failed);
		return err_set(e, -ENOMEM, "out of memory reading the host journal");
	}
	r = journal_load(state_dir, j, e);
	if (r == -ENOENT) {
		r = 0;
		goto out;
	}
	if (r)
		goto out;
	if (strcmp(j->root, root)) {
		state_path(state_dir, HOST_JOURNAL_NAME, path, sizeof(path), NULL);
		r = err_set(e, -EXDEV,
			    "host journal '%s' was written for root '%s', not '%s': restore it with that root, or remove it",
			    path, j->root, root);
		goto out;
	}
	r = restore_all(root, &j->set, failed, e);
	if (r) {
		/* keep only what is still to be restored; the first error stays the one reported */
		journal_store(state_dir, j->pid, root, failed, NULL);
		err_wrap(e, "host settings left by pid %d are not fully restored (run 'thpeval host restore' to retry)",
			 j->pid);
		goto out;
	}
	r = journal_remove(state_dir, e);
	if (!r)
		*pid = j->pid;
out:
	free(j);
	free(failed);
	return r;
}

int host_lock_dir(const char *root, char *buf, size_t len, struct err *e)
{
	bool top = !strcmp(root, "/");

	if ((size_t)snprintf(buf, len, "%s%s", top ? "" : root, HOST_LOCK_SUBDIR) >= len)
		return err_set(e, -ENAMETOOLONG, "root path '%s' is too long", root);
	return 0;
}

int host_session_begin(struct host_session *s, const char *root, const char *state_dir,
		       bool *restored_stale, struct err *e)
{
	char lockdir[PATH_MAX];
	int r, pid;

	memset(s, 0, sizeof(*s));
	s->lock.fd = -1;
	if (restored_stale)
		*restored_stale = false;
	r = resolve_root(root, s->root, e);
	if (r)
		return r;
	if (!state_dir || strlen(state_dir) >= sizeof(s->state_dir) || !*state_dir)
		return err_set(e, -ENAMETOOLONG, "bad state directory '%s'", state_dir ? state_dir : "");
	strcpy(s->state_dir, state_dir);
	r = host_lock_dir(s->root, lockdir, sizeof(lockdir), e);
	if (!r)
		r = state_dir_prepare(state_dir, e);
	if (r)
		return r;
	r = host_lock_take(&s->lock, lockdir, &s->stale_lock, e);
	if (r)
		return r;
	r = restore_on_disk(s->root, state_dir, &pid, e);
	if (r) {
		host_lock_release(&s->lock);
		return r;
	}
	if (pid) {
		s->stale_pid = pid;
		if (restored_stale)
			*restored_stale = true;
	}
	s->active = true;
	return 0;
}

int host_session_set(struct host_session *s, const char *key, const char *value, struct err *e)
{
	char cur[THP_VAL_MAX];
	int r;

	if (!s || !s->active)
		return err_set(e, -EINVAL, "host settings changed outside a host session");
	r = thp_validate(s->root, key, value, e);
	if (r)
		return r;
	if (!thp_settings_get(&s->original, key)) {
		r = thp_read_one(s->root, key, cur, sizeof(cur), e);
		if (r)
			return r;
		if (thp_value_equal(key, cur, value))
			return 0;	/* nothing to change, nothing to journal */
		r = thp_settings_put(&s->original, key, cur, e);
		if (r)
			return r;
		r = journal_store(s->state_dir, (int)getpid(), s->root, &s->original, e);
		if (r) {
			/* not journaled, so not to be written or restored */
			s->original.n--;
			return r;
		}
		s->journal_written = true;
	}
	return thp_write(s->root, key, value, e);
}

int host_session_restore(struct host_session *s, struct err *e)
{
	struct thp_settings *failed;
	int r;

	if (!s || !s->active || !s->journal_written)
		return 0;
	failed = malloc(sizeof(*failed));
	if (!failed)
		return err_set(e, -ENOMEM, "out of memory restoring host settings");
	r = restore_all(s->root, &s->original, failed, e);
	if (r) {
		s->original = *failed;
		journal_store(s->state_dir, (int)getpid(), s->root, &s->original, NULL);
		free(failed);
		return err_wrap(e, "host settings are not fully restored (run 'thpeval host restore' to retry)");
	}
	free(failed);
	r = journal_remove(s->state_dir, e);
	if (r)
		return r;
	s->original.n = 0;
	s->journal_written = false;
	return 0;
}

int host_session_end(struct host_session *s, struct err *e)
{
	int r;

	if (!s)
		return 0;
	r = host_session_restore(s, e);
	host_lock_release(&s->lock);
	s->active = false;
	return r;
}

int host_restore_journal(const char *root, const char *state_dir, bool *restored,
			 char *holder_info, size_t len, struct err *e)
{
	struct host_lock lock = HOST_LOCK_INIT;
	char rroot[PATH_MAX], lockdir[PATH_MAX];
	struct stat st;
	int r, pid, saved;

	*restored = false;
	if (holder_info && len)
		holder_info[0] = '\0';
	if (!state_dir || !*state_dir)
		return err_set(e, -EINVAL, "empty state directory");
	if (stat(state_dir, &st) < 0) {
		saved = errno;
		if (saved == ENOENT)
			return 0;	/* no state, no journal */
		return err_set(e, -saved, "cannot stat state directory '%s': %s", state_dir,
			       strerror(saved));
	}
	/* the journal says what to write to /sys: read it only from a directory of ours */
	r = state_dir_prepare(state_dir, e);
	if (r)
		return r;
	r = resolve_root(root, rroot, e);
	if (r)
		return r;
	r = host_lock_dir(rroot, lockdir, sizeof(lockdir), e);
	if (r)
		return r;
	r = host_lock_take(&lock, lockdir, NULL, e);
	if (r) {
		if (r == -EBUSY && holder_info && len)
			host_lock_holder(lockdir, holder_info, len);
		return r;
	}
	r = restore_on_disk(rroot, state_dir, &pid, e);
	host_lock_release(&lock);
	if (r)
		return r;
	/* pid -1: no journal, only a fragmenter of a killed run was ended */
	if (pid > 0)
		*restored = true;
	if (pid && holder_info && len)
		snprintf(holder_info, len, pid > 0 ? "pid %d" : "ended the host fragmenter it left", pid);
	return 0;
}
