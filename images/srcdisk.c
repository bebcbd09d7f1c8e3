#include "images/srcdisk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "images/image.h"
#include "images/spawn.h"
#include "lib/clock.h"
#include "lib/fstree.h"

/* Bump when the recipe changes: it is hashed into the id. */
#define SRCDISK_BUILDER "thpeval-srcdisk/2 tar-xJ prepared=tinyconfig@/mnt/linux-src mkfs.ext4-d ^has_journal label=thpeval-src"
#define SRCDISK_MIN_BYTES (1ull << 30)
#define SRCDISK_SLACK (512ull << 20)	/* free space on the disk beyond the tree */

const char *const srcdisk_toolchain_packages[] = {
	"make", "gcc", "libc6-dev", "binutils", "bc", "flex", "bison", "perl", "libelf-dev",
	"libssl-dev", "dash", "sed", "mawk", "diffutils", "findutils", "tar", "xz-utils",
	"gzip", "cpio", "kmod", "hostname", NULL,
};

#define progress(o, ...) image_progress((o)->progress, (o)->opaque, __VA_ARGS__)

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static void fnv_str(uint64_t *h, const char *s)
{
	size_t i, n = strlen(s) + 1;	/* the NUL separates fields */

	for (i = 0; i < n; i++) {
		*h ^= (unsigned char)s[i];
		*h *= FNV_PRIME;
	}
}

static const char *cache_of(const struct srcdisk_opts *o)
{
	return o->cache_dir && *o->cache_dir ? o->cache_dir : IMAGE_CACHE_DIR_DEFAULT;
}

static const char *tarball_of(const struct srcdisk_opts *o)
{
	return o->tarball && *o->tarball ? o->tarball : SRCDISK_TARBALL;
}

/* the package version (dpkg-query), the tarball's identity, the id */
static int compute_id(const struct srcdisk_opts *o, struct srcdisk *sd, struct err *e)
{
	const char *argv[] = { "dpkg-query", "-W", "-f=${Version}", SRCDISK_PACKAGE, NULL };
	const char *tb = tarball_of(o);
	char buf[128], num[64];
	uint64_t h = FNV_OFFSET;
	struct stat st;

	if (stat(tb, &st) || !S_ISREG(st.st_mode))
		return err_set(e, -ENOENT,
			       "no kernel source tarball '%s' (kcompile needs it): install it with "
			       "'apt-get install %s'", tb, SRCDISK_PACKAGE);
	if (spawn_run(argv, NULL, buf, sizeof(buf), NULL) || !buf[0])
		snprintf(buf, sizeof(buf), "unpackaged");
	snprintf(sd->version, sizeof(sd->version), "%.63s", buf);
	fnv_str(&h, SRCDISK_BUILDER);
	fnv_str(&h, sd->version);
	fnv_str(&h, tb);
	snprintf(num, sizeof(num), "%lld:%lld", (long long)st.st_size, (long long)st.st_mtime);
	fnv_str(&h, num);
	snprintf(sd->id, sizeof(sd->id), "%016llx", (unsigned long long)h);
	return 0;
}

static int fill_paths(const char *abs, struct srcdisk *sd, struct err *e)
{
	if (snprintf(sd->dir, sizeof(sd->dir), "%s/src-%s", abs, sd->id) >= (int)sizeof(sd->dir) ||
	    snprintf(sd->tree, sizeof(sd->tree), "%s/tree", sd->dir) >= (int)sizeof(sd->tree) ||
	    snprintf(sd->disk, sizeof(sd->disk), "%s/src.img", sd->dir) >= (int)sizeof(sd->disk))
		return err_set(e, -ENAMETOOLONG, "cache directory path too long: '%s'", abs);
	return 0;
}

/* complete: the marker, the tree's Makefile and the disk exist */
static int load_at(const char *abs, struct srcdisk *sd, struct err *e)
{
	char p[PATH_MAX + 16];
	struct stat st;

	if (fill_paths(abs, sd, e))
		return e->code;
	snprintf(p, sizeof(p), "%s/complete", sd->dir);
	if (access(p, F_OK))
		return err_set(e, -ENOENT, "no source disk %s in '%s'", sd->id, abs);
	snprintf(p, sizeof(p), "%s/Makefile", sd->tree);
	if (access(p, R_OK) || stat(sd->disk, &st))
		return err_set(e, -ENOENT, "source disk %s in '%s' is incomplete: rebuild it with "
			       "'thpeval image build --kcompile --force'", sd->id, abs);
	sd->disk_bytes = (unsigned long long)st.st_size;
	return 0;
}

int srcdisk_load(const struct srcdisk_opts *o, struct srcdisk *out, struct err *e)
{
	char abs[PATH_MAX];
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = compute_id(o, out, e)))
		return r;
	if (!realpath(cache_of(o), abs))
		return err_set(e, -ENOENT, "no image cache '%s': %s", cache_of(o), strerror(errno));
	return load_at(abs, out, e);
}

/* bytes under dir (st_blocks), to size the ext4 image */
static unsigned long long tree_bytes;

static int add_size(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)flag;
	(void)ftw;
	tree_bytes += (unsigned long long)st->st_blocks * 512ull + 4096;
	return 0;
}

/* ---- prepared trees ------------------------------------------------------- */

/*
 * The configs the disk holds a prepared O= tree for (the CI default): make
 * CONFIG and make prepare, natively here, with the source bound at the path
 * guests mount it on, so the tree's absolute paths hold in a guest.
 */
static const char *const prepared_configs[] = { "tinyconfig", NULL };

/* run make with argv in this (namespaced) process's child; its exit status or -errno */
static int run_make_child(char *const argv[])
{
	static char lc[] = "LC_ALL=C", pathv[] = "PATH=/usr/bin:/bin", home[] = "HOME=/tmp";
	static char user[] = "KBUILD_BUILD_USER=thpeval", host[] = "KBUILD_BUILD_HOST=thpeval";
	char *const envp[] = { lc, pathv, home, user, host, NULL };
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execve("/usr/bin/make", argv, envp);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* the child: its own mount namespace, the tree at SRCDISK_GUEST_PATH, the makes */
static void prepare_child(const char *tree, const char *log)
{
	char o[PATH_MAX + 64], cfg[32], jobs[32], a0[] = "make", s[] = "-s", c[] = "-C",
	     src[] = SRCDISK_GUEST_PATH, prep[] = "prepare";
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int fd, nul, i, r;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/mnt", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") ||
	    mkdir(SRCDISK_GUEST_PATH, 0755) || mount(tree, SRCDISK_GUEST_PATH, NULL, MS_BIND, NULL))
		_exit(125);
	fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(124);
	snprintf(jobs, sizeof(jobs), "-j%ld", cpus > 0 ? cpus : 1);
	for (i = 0; prepared_configs[i]; i++) {
		char *cfg_argv[] = { a0, s, c, src, o, cfg, NULL };
		char *prep_argv[] = { a0, s, c, src, o, jobs, prep, NULL };

		snprintf(cfg, sizeof(cfg), "%s", prepared_configs[i]);
		snprintf(o, sizeof(o), "O=%s/%s/%s", tree, SRCDISK_PREPARED, cfg);
		if ((r = run_make_child(cfg_argv)) || (r = run_make_child(prep_argv)))
			_exit(r > 0 && r < 124 ? r : 123);
	}
	_exit(0);
}

/* the last line of the log, for a message */
static void log_tail(const char *log, char *out, size_t len)
{
	char buf[4096];
	ssize_t n = 0;
	int fd = open(log, O_RDONLY | O_CLOEXEC);
	size_t end, start;

	out[0] = '\0';
	if (fd >= 0) {
		off_t size = lseek(fd, 0, SEEK_END);

		n = pread(fd, buf, sizeof(buf) - 1, size > (off_t)sizeof(buf) - 1 ?
						   size - (off_t)sizeof(buf) + 1 : 0);
		close(fd);
	}
	if (n <= 0)
		return;
	end = (size_t)n;
	while (end && (buf[end - 1] == '\n' || buf[end - 1] == ' '))
		end--;
	start = end;
	while (start && buf[start - 1] != '\n')
		start--;
	snprintf(out, len, "%.*s", (int)(end - start), buf + start);
}

static int prepare_trees(const char *tmp, const char *tree, struct err *e)
{
	char log[PATH_MAX + 16], tail[200];
	int status;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/prepare.log", tmp);
	pid = fork();
	if (pid < 0)
		return err_set(e, -errno, "cannot fork: %s", strerror(errno));
	if (pid == 0)
		prepare_child(tree, log);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_set(e, -errno, "cannot wait for make: %s", strerror(errno));
	if (WIFEXITED(status) && !WEXITSTATUS(status)) {
		unlink(log);
		return 0;
	}
	log_tail(log, tail, sizeof(tail));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 125)
		return err_set(e, -EPERM, "cannot bind the source on %s in a mount namespace of its own "
			       "(needs root): %s", SRCDISK_GUEST_PATH, strerror(errno));
	return err_set(e, -EIO, "preparing the %s tree failed (make exit %d): %s", prepared_configs[0],
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1, tail[0] ? tail : "no output");
}

/* the one directory tar made in tmp ("linux-source-6.1"), renamed to tmp/tree */
static int rename_top(const char *tmp, struct err *e)
{
	char from[PATH_MAX + 300], to[PATH_MAX + 8], name[256] = "";
	struct dirent *d;
	DIR *dir = opendir(tmp);
	int n = 0;

	if (!dir)
		return err_set(e, -errno, "cannot read '%s': %s", tmp, strerror(errno));
	while ((d = readdir(dir))) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		snprintf(name, sizeof(name), "%s", d->d_name);
		n++;
	}
	closedir(dir);
	if (n != 1)
		return err_set(e, -EPROTO, "the source tarball holds %d top-level entries, one expected",
			       n);
	snprintf(from, sizeof(from), "%s/%s", tmp, name);
	snprintf(to, sizeof(to), "%s/tree", tmp);
	if (rename(from, to))
		return err_set(e, -errno, "cannot rename '%s': %s", from, strerror(errno));
	return 0;
}

static int build_in(const struct srcdisk_opts *o, const char *abs, struct srcdisk *sd,
		    struct err *e)
{
	char tmp[PATH_MAX], x[PATH_MAX + 16], tree[PATH_MAX + 8], img[PATH_MAX + 16], size[32];
	char meta[512];
	const char *tar_argv[] = { "tar", "-xJf", tarball_of(o), "-C", x, "--no-same-owner", NULL };
	const char *mkfs_argv[] = { "mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-L", "thpeval-src",
				    "-E", "root_owner=0:0", "-d", tree, img, size, NULL };
	unsigned long long bytes;
	double t0 = mono_s(), t1;
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s/.tmp-%ld-src-XXXXXX", abs, (long)getpid()) >=
	    (int)sizeof(tmp))
		return err_set(e, -ENAMETOOLONG, "path too long under '%s'", abs);
	if (!mkdtemp(tmp))
		return err_set(e, -errno, "cannot create a directory in '%s': %s", abs,
			       strerror(errno));
	chmod(tmp, 0755);
	snprintf(x, sizeof(x), "%s", tmp);
	snprintf(tree, sizeof(tree), "%s/tree", tmp);
	snprintf(img, sizeof(img), "%s/src.img", tmp);
	progress(o, "building kernel source disk %s (%s %s: tar, then mkfs.ext4 -d)", sd->id,
		 SRCDISK_PACKAGE, sd->version);
	r = spawn_run(tar_argv, NULL, NULL, 0, e);
	if (!r)
		r = rename_top(tmp, e);
	if (r)
		goto fail;
	t1 = mono_s();
	progress(o, "source extracted in %.1f s", t1 - t0);
	r = prepare_trees(tmp, tree, e);
	if (r)
		goto fail;
	progress(o, "%s tree configured and prepared in %.1f s (setup that kcompile guests copy)",
		 prepared_configs[0], mono_s() - t1);
	t1 = mono_s();
	tree_bytes = 0;
	nftw(tree, add_size, 32, FTW_PHYS);
	bytes = tree_bytes + tree_bytes / 8 + SRCDISK_SLACK;
	if (bytes < SRCDISK_MIN_BYTES)
		bytes = SRCDISK_MIN_BYTES;
	bytes = (bytes + (1ull << 20) - 1) >> 20 << 20;
	snprintf(size, sizeof(size), "%lluM", bytes >> 20);
	fd = open(img, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)bytes)) {
		r = err_set(e, -errno, "cannot create '%s': %s", img, strerror(errno));
		if (fd >= 0)
			close(fd);
		goto fail;
	}
	close(fd);
	r = spawn_run(mkfs_argv, NULL, NULL, 0, e);
	if (r)
		goto fail;
	chmod(img, 0644);
	progress(o, "mkfs.ext4 -d done in %.1f s (%s)", mono_s() - t1, size);
	snprintf(meta, sizeof(meta), "id=%s\npackage=%s\nversion=%s\ntarball=%s\nbuilder=%s\n",
		 sd->id, SRCDISK_PACKAGE, sd->version, tarball_of(o), SRCDISK_BUILDER);
	if (fstree_join(x, tmp, "meta", e) || write_file_synced(x, meta, e) ||
	    fstree_join(x, tmp, "complete", e) || write_file_synced(x, "", e)) {
		r = e->code;
		goto fail;
	}
	if (fill_paths(abs, sd, e)) {
		r = e->code;
		goto fail;
	}
	fstree_remove(sd->dir);	/* a --force rebuild replaces it */
	if (rename(tmp, sd->dir)) {
		r = err_set(e, -errno, "cannot rename '%s' to '%s': %s", tmp, sd->dir,
			    strerror(errno));
		goto fail;
	}
	progress(o, "kernel source disk %s ready in %.1f s (%s)", sd->id, mono_s() - t0, sd->dir);
	return load_at(abs, sd, e);
fail:
	fstree_remove(tmp);
	return r;
}

int srcdisk_ensure(const struct srcdisk_opts *o, struct srcdisk *out, bool *built, struct err *e)
{
	char abs[PATH_MAX];
	struct err le = ERR_INIT;
	int r;

	if (built)
		*built = false;
	memset(out, 0, sizeof(*out));
	if ((r = compute_id(o, out, e)))
		return r;
	if (mkdir(cache_of(o), 0755) && errno != EEXIST)
		return err_set(e, -errno, "cannot create image cache '%s': %s", cache_of(o),
			       strerror(errno));
	if (!realpath(cache_of(o), abs))
		return err_set(e, -errno, "cannot use image cache '%s': %s", cache_of(o),
			       strerror(errno));
	if (!o->force && load_at(abs, out, &le) == 0) {
		progress(o, "kernel source disk %s is cached (%s)", out->id, out->dir);
		return 0;
	}
	if (geteuid() != 0)
		return err_set(e, -EPERM, "building the kernel source disk needs root (it goes into "
			       "the image cache): run as root");
	r = build_in(o, abs, out, e);
	if (!r && built)
		*built = true;
	return r;
}
