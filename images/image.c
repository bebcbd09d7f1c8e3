#include "images/image.h"

#include <errno.h>
#include <guestfs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/build.h"
#include "images/gfs.h"
#include "images/inputs.h"
#include "lib/fstree.h"

#define progress(o, ...) image_progress((o)->progress, (o)->opaque, __VA_ARGS__)

int image_compute_id(const struct image_opts *o, char id[IMAGE_ID_LEN + 1],
		     struct err *e)
{
	struct inputs in;
	int ret;

	if (!o)
		return err_set(e, -EINVAL, "no image options given");
	ret = inputs_prepare(o, &in, e);
	if (!ret)
		memcpy(id, in.id, sizeof(in.id));
	inputs_release(&in);
	return ret;
}

int image_build(const struct image_opts *o, struct image *out, struct err *e)
{
	struct inputs in;
	int ret;

	if (!o || !out)
		return err_set(e, -EINVAL, "no image options given");
	ret = inputs_prepare(o, &in, e);
	if (!ret)
		ret = image_build_in(o, &in, out, e);
	inputs_release(&in);
	return ret;
}

int image_ensure(const struct image_opts *o, struct image *out, bool *built,
		 struct err *e)
{
	struct err le = ERR_INIT;
	struct inputs in;
	int ret;

	if (built)
		*built = false;
	if (!o || !out)
		return err_set(e, -EINVAL, "no image options given");
	ret = inputs_prepare(o, &in, e);
	if (ret)
		goto cleanup;
	if (!o->force && image_load(in.cache_dir, in.id, out, &le) == 0) {
		if (out->build_s > 0)
			progress(o, "guest image %s is cached (%s, built in %.1f s, %.0f MiB on disk%s%s)", in.id,
				 out->dir, out->build_s, (double)out->disk_bytes / (1 << 20),
				 out->packages[0] ? ", packages " : "", out->packages);
		else
			progress(o, "guest image %s is cached (%s)", in.id, out->dir);
		goto cleanup;
	}
	ret = image_build_in(o, &in, out, e);
	if (!ret && built)
		*built = true;
cleanup:
	inputs_release(&in);
	return ret;
}

int image_overlay_create(const struct image *img, const char *path,
			 struct err *e)
{
	guestfs_h *g;
	int ret = 0;

	if (!img || !path || !*path)
		return err_set(e, -EINVAL, "no image or overlay path given");
	if (img->root[0] != '/' || !is_regular_file(img->root))
		return err_set(e, -ENOENT, "image root '%s' is missing: rebuild the image",
			       img->root);
	g = gfs_open(e);
	if (!g)
		return e->code;
	/* unlink first so a guest still running on an old overlay keeps its own */
	if (unlink(path) && errno != ENOENT) {
		ret = err_set(e, -errno, "cannot replace '%s': %s", path,
			      strerror(errno));
		goto cleanup;
	}
	if (guestfs_disk_create(g, path, "qcow2", -1,
				GUESTFS_DISK_CREATE_BACKINGFILE, img->root,
				GUESTFS_DISK_CREATE_BACKINGFORMAT, "raw", -1)) {
		ret = gfs_fail(g, e, "cannot create overlay '%s' over '%s'", path,
			       img->root);
		goto cleanup;
	}
	if (chmod(path, 0644))
		ret = err_set(e, -errno, "cannot chmod '%s': %s", path,
			      strerror(errno));
cleanup:
	guestfs_close(g);
	return ret;
}

int image_verify(const struct image *img, struct err *e)
{
	char modules[PATH_MAX], pattern[PATH_MAX + 64];
	struct guestfs_statns *st = NULL;
	char **found = NULL;
	char *idtext = NULL;
	guestfs_h *g = NULL;
	size_t len;
	int ret;

	if (!img)
		return err_set(e, -EINVAL, "no image given");
	if (!is_regular_file(img->kernel) || (img->initrd[0] && !is_regular_file(img->initrd)) ||
	    !is_regular_file(img->root))
		return err_set(e, -ENOENT, "image '%s' is incomplete (kernel, initrd or root missing in '%s'): rebuild it with --force",
			       img->id, img->dir);
	if (!image_valid_kver(img->kernel_version))
		return err_set(e, -EINVAL, "image '%s' has a bad kernel version '%s'",
			       img->id, img->kernel_version);
	g = gfs_open(e);
	if (!g)
		return e->code;
	ret = gfs_launch(g, img->root, true, e);
	if (ret)
		goto cleanup;

	st = guestfs_statns(g, "/init");
	if (!st) {
		ret = gfs_fail(g, e, "image '%s' has no /init: rebuild it with --force",
			       img->id);
		goto cleanup;
	}
	if (!S_ISREG(st->st_mode) || (st->st_mode & 0111) != 0111) {
		ret = err_set(e, -ENOEXEC, "image '%s': /init is not an executable file (mode %o): rebuild it with --force",
			      img->id, (unsigned)st->st_mode);
		goto cleanup;
	}
	if (guestfs_is_file_opts(g, IMAGE_GUEST_PATH, -1) != 1 ||
	    guestfs_is_dir_opts(g, "/tmp", -1) != 1) {
		ret = err_set(e, -ENOENT, "image '%s' lacks %s or /tmp: rebuild it with --force",
			      img->id, IMAGE_GUEST_PATH);
		goto cleanup;
	}
	/* a Debian kernel's initrd loads its modules from the root; thpeval's has them built in */
	snprintf(modules, sizeof(modules), "/lib/modules/%s", img->kernel_version);
	if (!img->initrd[0])
		goto modules_done;
	if (guestfs_is_dir_opts(g, modules, -1) != 1) {
		ret = err_set(e, -ENOENT, "image '%s' has no %s: the guest cannot load modules; rebuild it with --force",
			      img->id, modules);
		goto cleanup;
	}
	snprintf(pattern, sizeof(pattern), "%s/kernel/drivers/char/virtio_console.ko*", modules);
	found = guestfs_glob_expand(g, pattern);
	if (!found || !found[0]) {
		ret = err_set(e, -ENOENT, "image '%s' has no virtio_console module under %s: rebuild it with --force",
			      img->id, modules);
		goto cleanup;
	}
modules_done:
	idtext = guestfs_cat(g, "/etc/thpeval-image");
	if (!idtext) {
		ret = gfs_fail(g, e, "image '%s' has no /etc/thpeval-image", img->id);
		goto cleanup;
	}
	len = strcspn(idtext, "\n");
	if (len != strlen(img->id) || strncmp(idtext, img->id, len)) {
		ret = err_set(e, -EBADMSG, "image '%s' contains the id '%.*s': the cache is inconsistent; rebuild it with --force",
			      img->id, (int)(len > 32 ? 32 : len), idtext);
		goto cleanup;
	}
	if (guestfs_umount_all(g) || guestfs_shutdown(g)) {
		ret = gfs_fail(g, e, "cannot close image '%s' cleanly", img->id);
		goto cleanup;
	}
	ret = 0;
cleanup:
	if (found) {
		char **f;

		for (f = found; *f; f++)
			free(*f);
		free(found);
	}
	if (st)
		guestfs_free_statns(st);
	free(idtext);
	guestfs_close(g);
	return ret;
}
