/*
 * gfs: libguestfs for images/: a handle (direct backend, TCG where KVM is
 * not usable) with errors taken from guestfs_last_error, a root launched
 * and mounted, and the guest program installed into a built root.
 * Never prints, never exits.
 */
#ifndef THPEVAL_IMAGES_GFS_H
#define THPEVAL_IMAGES_GFS_H

#include <guestfs.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"

/* vmx/svm visible and /dev/kvm usable; otherwise libguestfs must use TCG */
bool gfs_kvm_usable(void);
/* e set to "WHAT: libguestfs's last error"; returns its negative errno */
int gfs_fail(guestfs_h *g, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* a handle with no error handler and the direct backend; NULL with e set */
guestfs_h *gfs_open(struct err *e);
/* launch on root (raw) and mount its filesystem on / */
int gfs_launch(guestfs_h *g, const char *root, bool readonly, struct err *e);
/* put the guest program in, write the id; uuid gets the filesystem UUID */
int gfs_guest_install(const char *root, const char *guest_bin, const char *id, char *uuid, size_t uuid_size,
		      struct err *e);

#endif
