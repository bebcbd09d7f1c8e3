/*
 * srcdisk: the kernel source for the kcompile workload. Debian's
 * linux-source tarball extracted once on the host (the bare-host builds read
 * it there) with a prepared tinyconfig O= tree, then copied into a read-only
 * ext4 image that kcompile guests mount at /mnt/linux-src. Cached by a hash
 * of recipe and source; tar and mkfs.ext4 by argv. Never prints, never exits.
 */
#ifndef THPEVAL_IMAGES_SRCDISK_H
#define THPEVAL_IMAGES_SRCDISK_H

#include <limits.h>
#include <stdbool.h>

#include "lib/err.h"

#define SRCDISK_PACKAGE "linux-source-6.1"
#define SRCDISK_TARBALL "/usr/src/linux-source-6.1.tar.xz"
#define SRCDISK_ID_LEN 16
/* where guests mount the disk: guest/kcompile.h KC_SRC_DEFAULT (a test checks they agree) */
#define SRCDISK_GUEST_PATH "/mnt/linux-src"
/* O= trees made at build time for the default config: guest/kcompile.h KC_PREPARED_DIR */
#define SRCDISK_PREPARED ".thpeval-prepared"

/* Host packages the kcompile guest image adds to the root: the toolchain a kernel build runs. */
extern const char *const srcdisk_toolchain_packages[];

struct srcdisk {
	char id[SRCDISK_ID_LEN + 1];
	char dir[PATH_MAX];		/* <cache_dir>/src-<id>, absolute */
	char tree[PATH_MAX];		/* <dir>/tree: the pristine source, for host builds */
	char disk[PATH_MAX];		/* <dir>/src.img: raw ext4 of the tree, attached read-only */
	char version[64];		/* the linux-source package version */
	unsigned long long disk_bytes;	/* the disk's size (sparse) */
};

struct srcdisk_opts {
	const char *cache_dir;		/* NULL = IMAGE_CACHE_DIR_DEFAULT */
	const char *tarball;		/* NULL = SRCDISK_TARBALL */
	bool force;			/* rebuild even if cached */
	void (*progress)(void *opaque, const char *msg);	/* may be NULL */
	void *opaque;
};

/*
 * The source disk for these options: load it from the cache, or build it
 * (about a minute here: tar 15 s, mkfs.ext4 -d) and set *built. built may be
 * NULL. -ENOENT with the apt-get line when the package is not installed.
 */
int srcdisk_ensure(const struct srcdisk_opts *o, struct srcdisk *out, bool *built, struct err *e);
/* Only load a complete cached disk (no build); -ENOENT if there is none. */
int srcdisk_load(const struct srcdisk_opts *o, struct srcdisk *out, struct err *e);

#endif
