#include "host/lock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lib/fstree.h"
#include "lib/parse.h"

#define LOCK_NAME "lock"
#define LOCK_REC_MAX 1024

/* mkdir -p with 0700 for what we create; the last component must be ours and private */
int state_dir_prepare(const char *dir, struct err *e)
{
	char buf[PATH_MAX];
	struct stat st;
	size_t len, i;
	int saved;

	len = strlen(dir);
	if (len == 0 || len >= sizeof(buf))
		return err_set(e, -ENAMETOOLONG, "bad state directory '%s'", dir);
	memcpy(buf, dir, len + 1);
	for (i = 1; i <= len; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, 0700) < 0 && errno != EEXIST) {
			saved = errno;
			return err_set(e, -saved, "cannot create state directory '%s': %s", buf,
				       strerror(saved));
		}
		if (i < len)
			buf[i] = '/';
	}
	if (lstat(dir, &st) < 0) {
		saved = errno;
		return err_set(e, -saved, "cannot stat state directory '%s': %s", dir, strerror(saved));
	}
	if (!S_ISDIR(st.st_mode))
		return err_set(e, -ENOTDIR, "state directory '%s' is not a directory: remove it or choose another",
			       dir);
	if (st.st_uid != geteuid())
		return err_set(e, -EPERM, "state directory '%s' belongs to uid %u, not to us: choose another",
			       dir, (unsigned)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return err_set(e, -EPERM, "state directory '%s' is writable by others: 'chmod 700 %s'",
			       dir, dir);
	return 0;
}

static int lock_path(const char *state_dir, char *buf, size_t len, struct err *e)
{
	int n = snprintf(buf, len, "%s/%s", state_dir, LOCK_NAME);

	if (n < 0 || (size_t)n >= len)
		return err_set(e, -ENAMETOOLONG, "state directory path '%s' is too long", state_dir);
	return 0;
}

/* whole record from fd (at most len-1 bytes); returns its length */
static ssize_t read_record(int fd, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t r;

	while (off + 1 < len) {
		r = pread(fd, buf + off, len - 1 - off, (off_t)off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		off += (size_t)r;
	}
	buf[off] = '\0';
	return (ssize_t)off;
}

/* "pid N\nstarted T\ncmd X\n" -> "pid N (thpeval run started <time>)" */
static int describe(char *rec, char *info, size_t len)
{
	uint64_t pid = 0, started = 0;
	bool have_pid = false, have_started = false;
	char *line, *save = NULL;
	char when[64] = "at an unknown time";
	struct tm tm;
	time_t t;

	for (line = strtok_r(rec, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "pid ", 4))
			have_pid = !parse_u64_range(line + 4, 1, INT32_MAX, &pid);
		else if (!strncmp(line, "started ", 8))
			have_started = !parse_u64(line + 8, &started);
	}
	if (!have_pid)
		return -ENOENT;
	if (have_started) {
		t = (time_t)started;
		if (localtime_r(&t, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	}
	snprintf(info, len, "pid %" PRIu64 " (thpeval run started %s)", pid, when);
	return 0;
}

int host_lock_holder(const char *state_dir, char *info, size_t len)
{
	char path[PATH_MAX], rec[LOCK_REC_MAX];
	ssize_t n;
	int fd, r;

	if (info && len)
		info[0] = '\0';
	if (lock_path(state_dir, path, sizeof(path), NULL))
		return -ENAMETOOLONG;
	{
		struct err ignore = ERR_INIT;
		struct stat st;

		/* a FIFO there must not hang the one asking */
		fd = open_regular_flags(path, "", "", RF_NOFOLLOW, &st, &ignore);
	}
	if (fd < 0)
		return fd;
	n = read_record(fd, rec, sizeof(rec));
	close(fd);
	if (n < 0)
		return (int)n;
	r = describe(rec, info, len);
	return r;
}

static void sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			*s = '?';
}

int host_lock_take(struct host_lock *l, const char *state_dir, bool *stale, struct err *e)
{
	char rec[LOCK_REC_MAX], who[256], cmd[256];
	struct stat st;
	ssize_t n;
	int fd, r, saved;

	l->fd = -1;
	l->path[0] = '\0';
	if (stale)
		*stale = false;
	r = state_dir_prepare(state_dir, e);
	if (r)
		return r;
	r = lock_path(state_dir, l->path, sizeof(l->path), e);
	if (r)
		return r;
	fd = open(l->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		saved = errno;
		return err_set(e, -saved, "cannot open lock file '%s': %s", l->path, strerror(saved));
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return err_set(e, -EPERM, "lock file '%s' is not a regular file of ours: remove it",
			       l->path);
	}
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		saved = errno;
		if (saved == EINTR)
			continue;
		if (saved == EWOULDBLOCK) {
			n = read_record(fd, rec, sizeof(rec));
			close(fd);
			if (n < 0 || describe(rec, who, sizeof(who)))
				snprintf(who, sizeof(who), "another process");
			return err_set(e, -EBUSY, "host settings are locked by %s: wait for it or stop it",
				       who);
		}
		close(fd);
		return err_set(e, -saved, "cannot lock '%s': %s", l->path, strerror(saved));
	}
	n = read_record(fd, rec, sizeof(rec));
	if (stale && n > 0)
		*stale = true;	/* a holder died without emptying its record */
	snprintf(cmd, sizeof(cmd), "%s", program_invocation_name ? program_invocation_name : "?");
	sanitize(cmd);
	snprintf(rec, sizeof(rec), "pid %ld\nstarted %lld\ncmd %s\n", (long)getpid(),
		 (long long)time(NULL), cmd);
	errno = 0;
	if (fchmod(fd, 0600) < 0 || ftruncate(fd, 0) < 0 ||
	    pwrite(fd, rec, strlen(rec), 0) != (ssize_t)strlen(rec)) {
		saved = errno ? errno : EIO;
		close(fd);
		return err_set(e, -saved, "cannot write lock file '%s': %s", l->path, strerror(saved));
	}
	l->fd = fd;
	return 0;
}

void host_lock_release(struct host_lock *l)
{
	if (!l || l->fd < 0)
		return;
	/* empty the record while still holding the lock, then let go */
	if (ftruncate(l->fd, 0) < 0) {
		/* nothing to report to: the next taker sees a stale record */
	}
	close(l->fd);
	l->fd = -1;
}
