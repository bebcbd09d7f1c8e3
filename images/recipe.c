#include "images/recipe.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * What the slim initrd loads (with their dependencies from modules.dep)
 * before it mounts the root: the virtio PCI transport, the root disk, ext4
 * (which mounts the ext2 root; crc32c is its soft dependency) and the
 * virtio-serial port the records go to, so the runner finds it at once;
 * and the virtio balloon, whose free page reporting the --balloon=reporting
 * arm measures (with no balloon device it binds nothing).
 */
const char *const image_initrd_modules[] = {
	"virtio_pci", "virtio_blk", "virtio_console", "crc32c_generic", "ext4", "virtio_balloon", NULL,
};

/*
 * Links Debian makes with update-alternatives when a package is installed:
 * supermin copies package files only, so a root with mawk has no awk (the
 * kernel build's scripts call awk). Made only where the target is there.
 */
const char *const image_alternatives[][2] = {
	{ "/usr/bin/awk", "mawk" },
	{ "/usr/bin/cc", "gcc" },
};
const size_t image_nalternatives = sizeof(image_alternatives) / sizeof(image_alternatives[0]);

void image_progress(void (*fn)(void *opaque, const char *msg), void *opaque, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fn(opaque, msg);
}

bool image_valid_kver(const char *s)
{
	if (!*s || strlen(s) >= IMAGE_KVER_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+-~", *s))
			return false;
	return true;
}

int image_packages_parse(const char *list, char out[][IMAGE_PKG_MAX], size_t max, size_t *n, struct err *e)
{
	const char *s = list;
	size_t i;

	*n = 0;
	if (!*list)
		return err_set(e, -EINVAL, "empty package list: give Debian package names such as stress-ng,sysbench");
	for (;;) {
		size_t len = strcspn(s, ","), k;
		bool dup = false;

		if (len == 0)
			return err_set(e, -EINVAL, "empty item in the package list '%.80s': separate package names "
				       "with single commas", list);
		if (len >= IMAGE_PKG_MAX)
			return err_set(e, -EINVAL, "package name '%.40s...' is longer than %d characters", s,
				       IMAGE_PKG_MAX - 1);
		for (i = 0; i < len; i++) {
			char c = s[i];

			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
			      (i > 0 && (c == '+' || c == '-' || c == '.'))))
				return err_set(e, -EINVAL, "'%.*s' is not a Debian package name (lower-case "
					       "letters, digits, '+', '-' and '.', starting with a letter or "
					       "digit)", (int)len, s);
		}
		if (len < 2)
			return err_set(e, -EINVAL, "'%.*s' is not a Debian package name (two characters at "
				       "least)", (int)len, s);
		for (k = 0; k < *n; k++)
			dup |= strlen(out[k]) == len && !strncmp(out[k], s, len);
		if (!dup) {
			if (*n >= max)
				return err_set(e, -E2BIG, "more than %zu packages", max);
			memcpy(out[*n], s, len);
			out[(*n)++][len] = '\0';
		}
		if (!s[len])
			return 0;
		s += len + 1;
	}
}
