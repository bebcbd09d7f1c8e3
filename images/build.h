/*
 * build: one image built: supermin's root from the host packages, the boot
 * files made quick to boot (images/boot), the guest program installed, the
 * metadata and a completion marker synced, then the directory renamed into
 * the cache. Needs root. Never prints (progress goes to the callback),
 * never exits.
 */
#ifndef THPEVAL_IMAGES_BUILD_H
#define THPEVAL_IMAGES_BUILD_H

#include "images/inputs.h"
#include "images/recipe.h"
#include "lib/err.h"

/* build the image of these resolved inputs into the cache and load it into out */
int image_build_in(const struct image_opts *o, const struct inputs *in, struct image *out, struct err *e);

#endif
