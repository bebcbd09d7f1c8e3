/*
 * image: the guest image (kernel, initrd, raw ext2 root with the guest
 * program as /init), built with supermin and libguestfs and cached by a hash
 * of its inputs (images/boot makes it quick to boot), and per-guest qcow2
 * overlays. Runs supermin and dpkg-query by argv (no shell). Never prints,
 * never exits; progress goes through image_opts' callback.
 */
#ifndef THPEVAL_IMAGES_IMAGE_H
#define THPEVAL_IMAGES_IMAGE_H

#include <stdbool.h>

#include "images/cache.h"
#include "images/recipe.h"
#include "lib/err.h"

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

#endif
