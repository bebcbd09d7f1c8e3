#include "images/gfs.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "images/recipe.h"

/* vmx/svm visible and /dev/kvm usable; otherwise libguestfs must use TCG */
bool gfs_kvm_usable(void)
{
	char line[4096];
	bool ok = false;
	FILE *f;

	if (access("/dev/kvm", R_OK | W_OK))
		return false;
	f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "flags", 5))
			continue;
		ok = strstr(line, " vmx") || strstr(line, " svm");
		break;
	}
	fclose(f);
	return ok;
}

int gfs_fail(guestfs_h *g, struct err *e, const char *fmt, ...)
{
	const char *msg = guestfs_last_error(g);
	int code = guestfs_last_errno(g);
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return err_set(e, code > 0 ? -code : -EIO, "%s: %s", what,
		       msg ? msg : "unknown libguestfs error");
}

guestfs_h *gfs_open(struct err *e)
{
	guestfs_h *g = guestfs_create_flags(0);

	if (!g) {
		err_set(e, errno ? -errno : -ENOMEM,
			"cannot create a libguestfs handle: %s",
			errno ? strerror(errno) : "out of memory");
		return NULL;
	}
	guestfs_set_error_handler(g, NULL, NULL);
	if (guestfs_set_backend(g, "direct") ||
	    (!gfs_kvm_usable() && guestfs_set_backend_setting(g, "force_tcg", "1"))) {
		gfs_fail(g, e, "cannot set the libguestfs backend");
		guestfs_close(g);
		return NULL;
	}
	return g;
}

/* launch on root (raw) and mount its filesystem on / */
int gfs_launch(guestfs_h *g, const char *root, bool readonly,
		      struct err *e)
{
	if (guestfs_add_drive_opts(g, root,
				   GUESTFS_ADD_DRIVE_OPTS_FORMAT, "raw",
				   GUESTFS_ADD_DRIVE_OPTS_READONLY, readonly ? 1 : 0,
				   -1))
		return gfs_fail(g, e, "cannot add '%s' to libguestfs", root);
	if (guestfs_launch(g))
		return gfs_fail(g, e, "cannot launch the libguestfs appliance (try LIBGUESTFS_DEBUG=1 or libguestfs-test-tool)");
	if ((readonly ? guestfs_mount_ro(g, "/dev/sda", "/") :
			guestfs_mount(g, "/dev/sda", "/")))
		return gfs_fail(g, e, "cannot mount the root of '%s'", root);
	return 0;
}

static int link_alternatives(guestfs_h *g)
{
	char target[64];
	size_t i;

	for (i = 0; i < image_nalternatives; i++) {
		snprintf(target, sizeof(target), "/usr/bin/%s", image_alternatives[i][1]);
		if (guestfs_exists(g, target) == 1 && guestfs_exists(g, image_alternatives[i][0]) == 0 &&
		    guestfs_ln_s(g, image_alternatives[i][1], image_alternatives[i][0]))
			return -1;
	}
	return 0;
}

int gfs_guest_install(const char *root, const char *guest_bin,
			 const char *id, char *uuid, size_t uuid_size,
			 struct err *e)
{
	char idline[IMAGE_ID_LEN + 2];
	char *u = NULL;
	guestfs_h *g;
	int ret;

	g = gfs_open(e);
	if (!g)
		return e->code;
	ret = gfs_launch(g, root, false, e);
	if (ret)
		goto cleanup;
	snprintf(idline, sizeof(idline), "%s\n", id);
	if (guestfs_mkdir_p(g, "/usr/lib/thpeval") ||
	    guestfs_upload(g, guest_bin, IMAGE_GUEST_PATH) ||
	    guestfs_chmod(g, 0755, IMAGE_GUEST_PATH) ||
	    guestfs_upload(g, guest_bin, "/init") ||
	    guestfs_chmod(g, 0755, "/init") ||
	    guestfs_mkdir_p(g, "/etc") ||
	    guestfs_write(g, "/etc/thpeval-image", idline, strlen(idline)) ||
	    guestfs_mkdir_p(g, "/tmp") ||
	    guestfs_chmod(g, 01777, "/tmp") ||
	    link_alternatives(g)) {
		ret = gfs_fail(g, e, "cannot install the guest program '%s' into the image",
			       guest_bin);
		goto cleanup;
	}
	u = guestfs_vfs_uuid(g, "/dev/sda");
	if (!u) {
		ret = gfs_fail(g, e, "cannot read the filesystem UUID of '%s'", root);
		goto cleanup;
	}
	if (!*u || strlen(u) >= uuid_size || strspn(u, "0123456789abcdef-") != strlen(u)) {
		ret = err_set(e, -EINVAL, "unexpected filesystem UUID '%s' in '%s'",
			      u, root);
		goto cleanup;
	}
	memcpy(uuid, u, strlen(u) + 1);
	if (guestfs_umount_all(g)) {
		ret = gfs_fail(g, e, "cannot unmount the root of '%s'", root);
		goto cleanup;
	}
	/* shutdown reports write-back errors; close would swallow them */
	if (guestfs_shutdown(g)) {
		ret = gfs_fail(g, e, "cannot write the image '%s'", root);
		goto cleanup;
	}
	ret = 0;
cleanup:
	free(u);
	guestfs_close(g);
	return ret;
}
