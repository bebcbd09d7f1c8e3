/*
 * kbuild: thpeval's own guest kernel, built once from Debian's linux-source
 * tarball: tinyconfig plus what the guest program and its workloads use,
 * every driver built in, no modules and no initrd, so that a guest boots
 * straight into its root. Cached by the id images/inputs computes from the
 * tarball, the configuration and the compiler; built in a temporary
 * directory and renamed into place. tar and make by argv. Never prints,
 * never exits.
 */
#ifndef THPEVAL_IMAGES_KBUILD_H
#define THPEVAL_IMAGES_KBUILD_H

#include <limits.h>

#include "images/recipe.h"
#include "lib/err.h"

/* the configuration on top of tinyconfig, one CONFIG_X=value per entry, NULL-terminated */
extern const char *const kbuild_config[];

struct kbuild {
	char dir[PATH_MAX];			/* <kernel cache>/kernel-<id> */
	char vmlinux[PATH_MAX];			/* <dir>/vmlinux: the ELF QEMU boots through its PVH entry */
	char release[IMAGE_KVER_MAX];		/* `make kernelrelease`, e.g. "6.1.158-thpeval" */
};

/*
 * The kernel of id built from tarball, from the cache (o->kernel_cache, or
 * IMAGE_KERNEL_CACHE_DEFAULT) or built there now: minutes, once per id.
 */
int kbuild_ensure(const struct image_opts *o, const char *tarball, const char *id, struct kbuild *out,
		  struct err *e);

#endif
