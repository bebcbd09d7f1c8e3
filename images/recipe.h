/*
 * recipe: what a guest image is and is made of: the options of a build and
 * the description of a built image, the initrd's modules, the links made for
 * Debian's alternatives, the kernel parameters and the builder version hashed
 * into the id; the package-list syntax and the progress line all of images/
 * shares. Never prints, never exits.
 */
#ifndef THPEVAL_IMAGES_RECIPE_H
#define THPEVAL_IMAGES_RECIPE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/err.h"

#define IMAGE_CACHE_DIR_DEFAULT "/var/cache/thpeval/images"
/* thpeval's guest kernels (images/kbuild), shared by every image cache */
#define IMAGE_KERNEL_CACHE_DEFAULT "/var/cache/thpeval/kernels"
/* what they are built from (Debian's linux-source-6.1) */
#define IMAGE_KERNEL_SOURCE_PACKAGE "linux-source-6.1"
#define IMAGE_KERNEL_SOURCE "/usr/src/linux-source-6.1.tar.xz"
#define IMAGE_ID_LEN 16		/* hex digits */
#define IMAGE_PKGS_MAX 16	/* packages a user adds (--image-packages, --packages) */
#define IMAGE_PKG_MAX 64	/* bytes of one package name, with the NUL */
/* where the guest program lives in the root (a second copy is /init) */
#define IMAGE_GUEST_PATH "/usr/lib/thpeval/thpeval-guest"

struct image_opts {
	const char *cache_dir;	/* NULL = IMAGE_CACHE_DIR_DEFAULT */
	const char *kernel;	/* a Debian vmlinuz-<version> to boot, with a slim initrd; NULL = thpeval's
				 * own kernel (images/kbuild), no initrd */
	const char *kernel_cache;	/* NULL = IMAGE_KERNEL_CACHE_DEFAULT */
	const char *guest_bin;	/* the static guest program, installed as /init */
	const char *const *extra_packages; /* NULL-terminated, may be NULL: host Debian packages added to the root */
	const char *const *user_packages;  /* the same, the user's (--image-packages): both join the id */
	bool force;		/* rebuild even if cached */
	void (*progress)(void *opaque, const char *msg); /* may be NULL */
	void *opaque;
};

struct image {
	char id[IMAGE_ID_LEN + 1];	/* content hash, 16 hex digits */
	char dir[PATH_MAX];		/* <cache_dir>/<id>, absolute */
	char kernel[PATH_MAX];		/* <dir>/kernel (0644): thpeval's own vmlinux, or the ELF vmlinux from
					 * a Debian vmlinuz (QEMU boots either through its PVH entry), or a copy
					 * of the vmlinuz if it could not be unpacked */
	char initrd[PATH_MAX];		/* <dir>/initrd: with a Debian kernel, supermin's mini initrd cut to
					 * the modules the guest needs (virtio, ext4, virtio_console), mounting
					 * root=; "" with thpeval's kernel, which has them built in */
	char root[PATH_MAX];		/* <dir>/root: raw ext2 disk image, never written after the build */
	char cmdline[256];		/* what the image needs to boot: "root=UUID=... console=ttyS0 panic=1"
					 * and boot-time savers; append your own params */
	char kernel_version[64];	/* the booted kernel's release: "6.1.158-thpeval", or a Debian one
					 * ("6.1.0-57-amd64") whose /lib/modules/<it> is in the root */
	/* from the build's metadata (images built before they were recorded: 0 and "") */
	double build_s;			/* seconds the build took */
	char packages[1024];		/* the packages added to the base set, comma-separated */
	unsigned long long disk_bytes;	/* bytes kernel, initrd and root take on disk (the root is sparse) */
};

/*
 * Bump when the recipe changes (packages, size, layout, boot files, cmdline):
 * it is hashed into the id, so old cached images are simply not used any more.
 */
#define IMAGE_BUILDER_VERSION "thpeval-image/2 supermin-ext2 size=8G root=UUID console=ttyS0 panic=1 kernel=vmlinux-pvh initrd=slim"
/*
 * Kernel parameters every guest of this image boots with, after root=,
 * console= and panic=. Each one shortens the boot (measured under TCG, where
 * the guest kernel's own start costs seconds; the same on KVM, only cheaper)
 * and none touches user memory, page faults or THP, which the workloads
 * measure:
 *  acpi=noirq         legacy PCI interrupt routing from the BIOS's MP table
 *                     (virtio uses MSI-X anyway): evaluating the ACPI link
 *                     devices' AML took about 0.5 s while virtio_pci probed
 *  cryptomgr.notests  no crypto self-tests at boot (about 0.3-0.4 s)
 *  rodata=off         no read-only remapping and W+X scan of the kernel
 *                     image (about 0.25 s): fine for a throwaway guest
 */
#define IMAGE_BOOT_PARAMS "acpi=noirq cryptomgr.notests rodata=off"
#define IMAGE_ROOT_SIZE "8G"	/* sparse: costs only what is written (~530 MiB) */
#define IMAGE_KVER_MAX 64

/* the modules the slim initrd loads, NULL-terminated */
extern const char *const image_initrd_modules[];
/* {link, target}: made where the target is in the root */
extern const char *const image_alternatives[][2];
extern const size_t image_nalternatives;

/* a kernel version as /lib/modules and vmlinuz-<version> name it */
bool image_valid_kver(const char *s);

/*
 * "pkg,pkg,...": Debian package names (Debian Policy 5.6.1: lower-case
 * letters, digits, '+', '-' and '.', at least two, starting with a letter or
 * digit; no architecture qualifier), at most max, duplicates dropped. 0 or
 * -EINVAL/-E2BIG with one line (the option's name is the caller's to add).
 */
int image_packages_parse(const char *list, char out[][IMAGE_PKG_MAX], size_t max, size_t *n, struct err *e);

/* format a progress line and hand it to fn (NULL: dropped); shared by every module of images/ */
void image_progress(void (*fn)(void *opaque, const char *msg), void *opaque, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
