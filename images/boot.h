/*
 * boot: the files a guest boots from, made fast to boot under TCG. The kernel
 * is unpacked from its bzImage into the plain ELF vmlinux it carries (QEMU
 * boots that directly through its PVH entry, skipping seconds of emulated
 * decompression), and supermin's initrd is cut down to the modules the guest
 * needs. libc and liblzma only: pure file work; never prints, never exits,
 * returns 0 or a negative errno and fills struct err.
 */
#ifndef THPEVAL_IMAGES_BOOT_H
#define THPEVAL_IMAGES_BOOT_H

#include <stddef.h>

#include "lib/err.h"

/*
 * Unpack the vmlinux inside the bzImage at bzimage into a new file at out
 * (0644): the payload must be XZ or LZMA (Debian ships XZ) and hold an x86-64
 * ELF with a PVH entry note (CONFIG_PVH), or QEMU could not boot it. -ENOTSUP
 * for another payload format or an ELF without the note, -EBADMSG for a file
 * that is not a bzImage or a damaged payload. On error out does not exist.
 */
int boot_kernel_unpack(const char *bzimage, const char *out, struct err *e);

/*
 * Write to out (0644) the supermin "ext2 mini initrd" at in (an uncompressed
 * newc cpio holding its static init, a "modules" list and the *.ko files it
 * insmods in that order) with only the modules named in want (NULL-terminated,
 * '-' and '_' alike) and what they depend on according to modules_dep (the
 * kernel's modules.dep), dependencies first. A wanted module that modules.dep
 * does not list is taken to be built in. -ENOTSUP if in is not such an initrd,
 * -ENOENT if a module that must be loaded is not in it. *kept and *total (may
 * be NULL) receive the number of modules written and found.
 */
int boot_initrd_slim(const char *in, const char *out, const char *modules_dep,
		     const char *const *want, size_t *kept, size_t *total,
		     struct err *e);

#endif
