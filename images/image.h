/*
 * image: the guest image (kernel, initrd, raw ext2 root with the guest
 * program as /init), built with supermin and libguestfs and cached by a hash
 * of its inputs (images/boot makes it quick to boot), and per-guest qcow2
 * overlays. Runs supermin and dpkg-query by argv (no shell). Never prints,
 * never exits; progress goes through image_opts' callback.
 */
#ifndef THPEVAL_IMAGES_IMAGE_H
#define THPEVAL_IMAGES_IMAGE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"

#define IMAGE_CACHE_DIR_DEFAULT "/var/cache/thpeval/images"
#define IMAGE_ID_LEN 16		/* hex digits */
#define IMAGE_PKGS_MAX 16	/* packages a user adds (--image-packages, --packages) */
#define IMAGE_PKG_MAX 64	/* bytes of one package name, with the NUL */
/* where the guest program lives in the root (a second copy is /init) */
#define IMAGE_GUEST_PATH "/usr/lib/thpeval/thpeval-guest"

struct image_opts {
	const char *cache_dir;	/* NULL = IMAGE_CACHE_DIR_DEFAULT */
	const char *kernel;	/* vmlinuz-<version> path; NULL = newest /boot/vmlinuz-* */
	const char *guest_bin;	/* the static guest program, installed as /init */
	const char *const *extra_packages; /* NULL-terminated, may be NULL: host Debian packages added to the root */
	const char *const *user_packages;  /* the same, the user's (--image-packages): both join the id */
	bool force;		/* rebuild even if cached */
	void (*progress)(void *opaque, const char *msg); /* may be NULL */
	void *opaque;
};

struct image {
	char id[IMAGE_ID_LEN + 1];	/* content hash, 16 hex digits */
	char dir[PATH_MAX];		/* <cache_dir>/<id>, absolute */
	char kernel[PATH_MAX];		/* <dir>/kernel (0644): the ELF vmlinux from the vmlinuz (QEMU boots it
					 * through its PVH entry), or a copy of the vmlinuz if it could not be unpacked */
	char initrd[PATH_MAX];		/* <dir>/initrd: supermin's mini initrd, cut to the modules the guest
					 * needs (virtio, ext4, virtio_console); mounts root= */
	char root[PATH_MAX];		/* <dir>/root: raw ext2 disk image, never written after the build */
	char cmdline[256];		/* what the image needs to boot: "root=UUID=... console=ttyS0 panic=1"
					 * and boot-time savers; append your own params */
	char kernel_version[64];	/* e.g. "6.1.0-57-amd64"; /lib/modules/<it> is in the root */
	/* from the build's metadata (images built before they were recorded: 0 and "") */
	double build_s;			/* seconds the build took */
	char packages[1024];		/* the packages added to the base set, comma-separated */
	unsigned long long disk_bytes;	/* bytes kernel, initrd and root take on disk (the root is sparse) */
};

/*
 * "pkg,pkg,...": Debian package names (Debian Policy 5.6.1: lower-case
 * letters, digits, '+', '-' and '.', at least two, starting with a letter or
 * digit; no architecture qualifier), at most max, duplicates dropped. 0 or
 * -EINVAL/-E2BIG with one line (the option's name is the caller's to add).
 */
int image_packages_parse(const char *list, char out[][IMAGE_PKG_MAX], size_t max, size_t *n, struct err *e);

/*
 * The image for these options: if <cache_dir>/<id> is complete, fill out and
 * set *built = false (cheap: hashes the inputs, builds nothing); otherwise (or
 * with o->force) build it and set *built = true. built may be NULL.
 */
int image_ensure(const struct image_opts *o, struct image *out, bool *built,
		 struct err *e);
/*
 * Build the image now (replacing a cached one with the same id); needs root.
 * Built in <cache_dir>/.tmp-<pid>-XXXXXX and renamed into place, so the final
 * name only ever holds a complete image. About 30-45 s here (TCG libguestfs).
 */
int image_build(const struct image_opts *o, struct image *out, struct err *e);
/*
 * Create a writable qcow2 overlay at path backed by img->root (raw), so each
 * guest writes only to its own file. An existing file at path is replaced.
 */
int image_overlay_create(const struct image *img, const char *path,
			 struct err *e);
/*
 * Inspect the image with libguestfs (read-only): kernel, initrd and root
 * exist; the root has an executable /init, the guest program, /tmp, the
 * modules directory for kernel_version with virtio_console, and the id.
 */
int image_verify(const struct image *img, struct err *e);

/* The id these options give (hashes the kernel, guest program and package versions). */
int image_compute_id(const struct image_opts *o, char id[IMAGE_ID_LEN + 1],
		     struct err *e);
/* Fill out from a complete cached image <cache_dir>/<id>; -ENOENT if there is none. */
int image_load(const char *cache_dir, const char *id, struct image *out,
	       struct err *e);

/* format a progress line and hand it to fn (NULL: dropped); shared by image.c and srcdisk.c */
void image_progress(void (*fn)(void *opaque, const char *msg), void *opaque, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
