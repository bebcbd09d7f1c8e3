#include "lib/fstree.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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

int fstree_join(char dst[PATH_MAX], const char *dir, const char *name,
		struct err *e)
{
	int n = snprintf(dst, PATH_MAX, "%s/%s", dir, name);

	if (n < 0 || n >= PATH_MAX)
		return err_set(e, -ENAMETOOLONG, "path too long: '%s/%s'", dir,
			       name);
	return 0;
}

bool is_regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int fsync_path(const char *path, struct err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return err_set(e, -errno, "cannot open '%s': %s", path,
			       strerror(errno));
	if (fsync(fd)) {
		int ret = err_set(e, -errno, "cannot sync '%s': %s", path,
				  strerror(errno));

		close(fd);
		return ret;
	}
	close(fd);
	return 0;
}

int write_file_synced(const char *path, const char *content, struct err *e)
{
	size_t len = strlen(content);
	int fd, ret = 0;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_set(e, -errno, "cannot create '%s': %s", path,
			       strerror(errno));
	while (len > 0) {
		ssize_t w = write(fd, content, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			ret = err_set(e, w < 0 ? -errno : -EIO,
				      "cannot write '%s': %s", path,
				      w < 0 ? strerror(errno) : "short write");
			break;
		}
		content += w;
		len -= (size_t)w;
	}
	if (!ret && fchmod(fd, 0644))
		ret = err_set(e, -errno, "cannot chmod '%s': %s", path,
			      strerror(errno));
	if (!ret && fsync(fd))
		ret = err_set(e, -errno, "cannot sync '%s': %s", path,
			      strerror(errno));
	if (close(fd) && !ret)
		ret = err_set(e, -errno, "cannot write '%s': %s", path,
			      strerror(errno));
	return ret;
}

const char *file_kind(mode_t mode)
{
	if (S_ISREG(mode))
		return "a regular file";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode))
		return "a character device";
	if (S_ISBLK(mode))
		return "a block device";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISLNK(mode))
		return "a symbolic link";
	return "of an unknown type";
}

static int not_regular(const char *path, const char *what, mode_t mode, struct err *e)
{
	return err_set(e, -EINVAL, "%s%s'%s' is %s, not a regular file", what,
		       *what ? " " : "", path, file_kind(mode));
}

int check_regular(const char *path, const char *what, unsigned flags, struct err *e)
{
	struct stat st;
	int saved;

	if ((flags & RF_NOFOLLOW ? lstat(path, &st) : stat(path, &st)) < 0) {
		saved = errno;
		if (saved == ENOENT)
			return -ENOENT;
		return err_set(e, -saved, "cannot stat %s%s'%s': %s", what, *what ? " " : "", path,
			       strerror(saved));
	}
	return S_ISREG(st.st_mode) ? 0 : not_regular(path, what, st.st_mode, e);
}

int open_regular_flags(const char *path, const char *what, const char *advice, unsigned flags, struct stat *st,
		       struct err *e)
{
	const char *sp = *what ? " " : "";
	struct err pre = ERR_INIT;
	int fd, saved, r;

	/* the type first, so that a device is never opened (opening some has effects) */
	r = check_regular(path, what, flags, &pre);
	if (r && r != -ENOENT)
		return err_set(e, r, "%s", pre.msg);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (flags & RF_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0) {
		saved = errno;
		if (saved == ELOOP && (flags & RF_NOFOLLOW))
			return err_set(e, -ELOOP, "%s%s'%s' is a symbolic link, not a regular file", what, sp, path);
		return err_set(e, -saved, "cannot open %s%s'%s': %s%s", what, sp, path, strerror(saved),
			       saved == ENOENT ? advice : "");
	}
	if (fstat(fd, st)) {
		saved = errno;
		close(fd);
		return err_set(e, -saved, "cannot stat %s%s'%s': %s", what, sp, path, strerror(saved));
	}
	/* swapped since the stat: what was opened is what counts */
	if (!S_ISREG(st->st_mode)) {
		close(fd);
		return not_regular(path, what, st->st_mode, e);
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		saved = errno;
		close(fd);
		return err_set(e, -saved, "cannot read %s%s'%s': %s", what, sp, path, strerror(saved));
	}
	return fd;
}

int open_regular(const char *path, const char *what, const char *advice, struct stat *st, struct err *e)
{
	return open_regular_flags(path, what, advice, 0, st, e);
}

int read_regular(const char *path, const char *what, const char *advice, unsigned flags, size_t max, char **buf,
		 size_t *len, struct err *e)
{
	const char *sp = *what ? " " : "";
	size_t off = 0, cap;
	struct stat st;
	char *b;
	int fd, saved;

	*buf = NULL;
	*len = 0;
	fd = open_regular_flags(path, what, advice, flags, &st, e);
	if (fd < 0)
		return fd;
	if ((uint64_t)st.st_size > (uint64_t)max) {
		close(fd);
		return err_set(e, -EFBIG, "%s%s'%s' is %lld bytes, over the limit of %zu", what, sp, path,
			       (long long)st.st_size, max);
	}
	/* one byte more than the limit, to see a file that grew past it */
	cap = (size_t)st.st_size < max ? (size_t)st.st_size + 1 : max + 1;
	b = malloc(cap + 1);
	if (!b) {
		close(fd);
		return err_set(e, -ENOMEM, "out of memory reading %s%s'%s'", what, sp, path);
	}
	for (;;) {
		ssize_t n;

		if (off == cap) {
			char *nb;

			if (cap > max)
				break;
			cap = cap * 2 < max + 1 ? cap * 2 : max + 1;
			nb = realloc(b, cap + 1);
			if (!nb) {
				free(b);
				close(fd);
				return err_set(e, -ENOMEM, "out of memory reading %s%s'%s'", what, sp, path);
			}
			b = nb;
		}
		n = read(fd, b + off, cap - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			saved = errno;
			free(b);
			close(fd);
			return err_set(e, -saved, "cannot read %s%s'%s': %s", what, sp, path, strerror(saved));
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	if (off > max) {
		free(b);
		return err_set(e, -EFBIG, "%s%s'%s' grew over the limit of %zu bytes while read", what, sp, path, max);
	}
	b[off] = '\0';
	*buf = b;
	*len = off;
	return 0;
}
