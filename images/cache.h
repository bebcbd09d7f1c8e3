/*
 * cache: the image cache directory: a complete image read back by its id
 * (checked: every file there, the metadata well-formed) and the leftovers
 * of builds whose process is gone removed. Never prints, never exits.
 */
#ifndef THPEVAL_IMAGES_CACHE_H
#define THPEVAL_IMAGES_CACHE_H

#include "images/recipe.h"
#include "lib/err.h"

/* Fill out from a complete cached image <cache_dir>/<id>; -ENOENT if there is none. */
int image_load(const char *cache_dir, const char *id, struct image *out,
	       struct err *e);

/* remove .tmp-<pid>-* and .old-<pid>-* left in cache_dir by builds whose process is gone */
void cache_cleanup_stale(const char *cache_dir);

#endif
