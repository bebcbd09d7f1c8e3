/*
 * inputs: what one build is made of, resolved: the kernel (a Debian one
 * given, or thpeval's own built from the kernel source, with the newest in
 * /boot for the root), the sorted packages, and the id, a hash of everything
 * that goes into the image (the recipe, kernel, guest program and the host
 * packages' installed versions). Runs dpkg-query, apt-cache and gcc by argv.
 * Never prints, never exits.
 */
#ifndef THPEVAL_IMAGES_INPUTS_H
#define THPEVAL_IMAGES_INPUTS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "images/recipe.h"
#include "lib/err.h"

/* The resolved inputs of one build. */
struct inputs {
	const char *cache_dir;		/* as given (or the default) */
	char kernel[PATH_MAX];		/* the Debian kernel: booted, or (own_kernel) only the one
					 * whose package supermin puts in the root */
	char kver[IMAGE_KVER_MAX];
	bool own_kernel;		/* thpeval's kernel boots (images/kbuild), no initrd */
	char kernel_id[IMAGE_ID_LEN + 1];	/* its build's: source, configuration, compiler */
	char **pkgs;			/* sorted, unique: what supermin installs */
	size_t npkgs;
	char id[IMAGE_ID_LEN + 1];
};

/* resolve kernel and packages and compute the id; inputs_release() after, also on failure */
int inputs_prepare(const struct image_opts *o, struct inputs *in, struct err *e);
void inputs_release(struct inputs *in);
/* the packages beyond the base set and the kernel's, comma-separated (sorted) */
void inputs_pkgs_extra(const struct inputs *in, char *buf, size_t len);

#endif
