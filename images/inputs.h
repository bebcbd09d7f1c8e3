/*
 * inputs: what one build is made of, resolved: the kernel (given, or the
 * newest in /boot), the sorted packages, and the id, a hash of everything
 * that goes into the image (the recipe, kernel, guest program and the host
 * packages' installed versions). Runs dpkg-query and apt-cache by argv.
 * Never prints, never exits.
 */
#ifndef THPEVAL_IMAGES_INPUTS_H
#define THPEVAL_IMAGES_INPUTS_H

#include <limits.h>
#include <stddef.h>

#include "images/recipe.h"
#include "lib/err.h"

/* The resolved inputs of one build. */
struct inputs {
	const char *cache_dir;		/* as given (or the default) */
	char kernel[PATH_MAX];
	char kver[IMAGE_KVER_MAX];
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
