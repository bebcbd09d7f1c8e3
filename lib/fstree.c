#include "lib/fstree.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void fstree_remove(const char *path)
{
	nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS);
}

int mkdir_p(const char *path, mode_t mode, struct err *e)
{
	char buf[PATH_MAX];
	size_t i, n = strlen(path);

	if (n == 0 || n >= sizeof(buf))
		return err_set(e, -ENAMETOOLONG, "bad directory name '%s'", path);
	memcpy(buf, path, n + 1);
	for (i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		buf[i] = '\0';
		if (mkdir(buf, mode) == 0) {
			if (chmod(buf, mode))
				return err_set(e, -errno, "cannot chmod '%s': %s", buf, strerror(errno));
		} else if (errno != EEXIST) {
			return err_set(e, -errno, "cannot create directory '%s': %s", buf, strerror(errno));
		}
		buf[i] = path[i];
	}
	return 0;
}

int mkdir_parents(const char *path, mode_t mode, struct err *e)
{
	char dir[PATH_MAX];
	char *slash;

	if (strlen(path) >= sizeof(dir))
		return err_set(e, -ENAMETOOLONG, "path too long: '%s'", path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;	/* in the current directory, or in / */
	*slash = '\0';
	return mkdir_p(dir, mode, e);
}

int write_file_atomic(const char *path, const char *buf, size_t len, mode_t mode, struct err *e)
{
	char tmp[PATH_MAX], dir[PATH_MAX];
	size_t off = 0;
	int fd, dfd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
		return err_set(e, -ENAMETOOLONG, "path too long: '%s'", path);
	/* never follow or reuse what someone else put there: a stale temporary of a
	 * dead process with our pid is removed, a symlink is not followed */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 && errno == EEXIST && unlink(tmp) == 0)
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0)
		return err_set(e, -errno, "cannot create '%s': %s", tmp, strerror(errno));
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = err_set(e, -errno, "cannot write '%s': %s", tmp, strerror(errno));
			break;
		}
		off += (size_t)n;
	}
	if (!r && fsync(fd) < 0)
		r = err_set(e, -errno, "cannot write '%s': %s", tmp, strerror(errno));
	if (close(fd) < 0 && !r)
		r = err_set(e, -errno, "cannot write '%s': %s", tmp, strerror(errno));
	if (!r && rename(tmp, path) < 0)
		r = err_set(e, -errno, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
	if (r) {
		unlink(tmp);
		return r;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd);
		close(dfd);
	}
	return 0;
}

int open_regular(const char *path, const char *what, const char *advice, struct stat *st, struct err *e)
{
	const char *sp = *what ? " " : "";
	int fd, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		return err_set(e, -saved, "cannot open %s%s'%s': %s%s", what, sp, path, strerror(saved),
			       saved == ENOENT ? advice : "");
	}
	if (fstat(fd, st)) {
		saved = errno;
		close(fd);
		return err_set(e, -saved, "cannot stat %s%s'%s': %s", what, sp, path, strerror(saved));
	}
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return err_set(e, -EINVAL, "%s%s'%s' is not a regular file", what, sp, path);
	}
	return fd;
}
