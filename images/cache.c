#include "images/cache.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fstree.h"

static bool valid_id(const char *id)
{
	size_t i;

	for (i = 0; i < IMAGE_ID_LEN; i++)
		if (!isxdigit((unsigned char)id[i]) || isupper((unsigned char)id[i]))
			return false;
	return id[IMAGE_ID_LEN] == '\0';
}

/* strict "key=value" lines; value copied into dst */
static int meta_get(const char *text, const char *key, char *dst, size_t size)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len > klen && !strncmp(p, key, klen) && p[klen] == '=') {
			len -= klen + 1;
			if (len >= size)
				return -ENAMETOOLONG;
			memcpy(dst, p + klen + 1, len);
			dst[len] = '\0';
			return 0;
		}
		p += len + (nl ? 1 : 0);
	}
	return -ENOENT;
}

int image_load(const char *cache_dir, const char *id, struct image *out,
	       struct err *e)
{
	char abs[PATH_MAX], p[PATH_MAX], text[4096], val[256];
	const char *files[3];
	struct stat fst;
	size_t i;
	struct image img;
	ssize_t n;
	int fd;

	memset(&img, 0, sizeof(img));
	if (!cache_dir || !*cache_dir)
		cache_dir = IMAGE_CACHE_DIR_DEFAULT;
	if (!id || !valid_id(id))
		return err_set(e, -EINVAL, "invalid image id '%s': expected %d lower-case hex digits",
			       id ? id : "(null)", IMAGE_ID_LEN);
	if (!realpath(cache_dir, abs))
		return err_set(e, -errno, "cannot use image cache '%s': %s",
			       cache_dir, strerror(errno));
	if (fstree_join(img.dir, abs, id, e) ||
	    fstree_join(img.kernel, img.dir, "kernel", e) ||
	    fstree_join(img.initrd, img.dir, "initrd", e) ||
	    fstree_join(img.root, img.dir, "root", e) ||
	    fstree_join(p, img.dir, "complete", e))
		return e->code;
	if (!is_regular_file(p) || !is_regular_file(img.kernel) || !is_regular_file(img.root))
		return err_set(e, -ENOENT, "no complete image '%s' in '%s': build it (again)",
			       id, abs);
	if (fstree_join(p, img.dir, "meta", e))
		return e->code;
	fd = open_regular(p, "image metadata", "", &fst, e);	/* never waits on a FIFO there */
	if (fd < 0)
		return fd;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return err_set(e, -errno, "cannot read '%s': %s", p, strerror(errno));
	text[n] = '\0';
	if (meta_get(text, "id", val, sizeof(val)) || strcmp(val, id) ||
	    meta_get(text, "kernel_version", img.kernel_version,
		     sizeof(img.kernel_version)) ||
	    !image_valid_kver(img.kernel_version) ||
	    meta_get(text, "cmdline", img.cmdline, sizeof(img.cmdline)) ||
	    strncmp(img.cmdline, "root=", 5))
		return err_set(e, -EBADMSG, "image metadata '%s' is malformed: rebuild the image with --force",
			       p);
	/* thpeval's own kernel boots without one */
	if (meta_get(text, "initrd", val, sizeof(val)) == 0 && !strcmp(val, "none"))
		img.initrd[0] = '\0';
	else if (!is_regular_file(img.initrd))
		return err_set(e, -ENOENT, "no complete image '%s' in '%s': build it (again)", id, abs);
	/* recorded since images with packages: absent in older ones */
	if (meta_get(text, "build_s", val, sizeof(val)) == 0)
		img.build_s = strtod(val, NULL);
	if (meta_get(text, "packages", img.packages, sizeof(img.packages)))
		img.packages[0] = '\0';
	files[0] = img.kernel;
	files[1] = img.initrd;
	files[2] = img.root;
	for (i = 0; i < 3; i++)
		if (files[i][0] && stat(files[i], &fst) == 0)
			img.disk_bytes += (unsigned long long)fst.st_blocks * 512;
	snprintf(img.id, sizeof(img.id), "%s", id);
	*out = img;
	return 0;
}

/* remove .tmp-<pid>-* / .old-<pid>-* left by builds whose process is gone */
void cache_cleanup_stale(const char *cache_dir)
{
	struct dirent *d;
	DIR *dir = opendir(cache_dir);

	while (dir && (d = readdir(dir))) {
		char p[PATH_MAX];
		char *end;
		long pid;

		if (strncmp(d->d_name, ".tmp-", 5) && strncmp(d->d_name, ".old-", 5))
			continue;
		errno = 0;
		pid = strtol(d->d_name + 5, &end, 10);
		if (errno || end == d->d_name + 5 || *end != '-' || pid <= 0 ||
		    pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", cache_dir, d->d_name) < (int)sizeof(p))
			fstree_remove(p);
	}
	if (dir)
		closedir(dir);
}
