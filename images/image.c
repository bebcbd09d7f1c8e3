#include "images/image.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <guestfs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "images/boot.h"
#include "images/spawn.h"
#include "lib/clock.h"
#include "lib/fstree.h"

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
#define IMAGE_DPKG_OUT_MAX (64 * 1024)

static const char *const base_packages[] = {
	"bash", "coreutils", "kmod", "util-linux", "mount", "grep",
	"findutils", "procps",
	/* /bin/sh: what a user's command runs through system(), #!/bin/sh and sh -c */
	"dash",
	/* + linux-image-<kernel_version>, added at run time */
};
#define N_BASE_PACKAGES (sizeof(base_packages) / sizeof(base_packages[0]))

/*
 * What the slim initrd loads (with their dependencies from modules.dep)
 * before it mounts the root: the virtio PCI transport, the root disk, ext4
 * (which mounts the ext2 root; crc32c is its soft dependency) and the
 * virtio-serial port the records go to, so the runner finds it at once.
 */
static const char *const initrd_modules[] = {
	"virtio_pci", "virtio_blk", "virtio_console", "crc32c_generic", "ext4", NULL,
};

/*
 * Links Debian makes with update-alternatives when a package is installed:
 * supermin copies package files only, so a root with mawk has no awk (the
 * kernel build's scripts call awk). Made only where the target is there.
 */
static const char *const alternatives[][2] = {
	{ "/usr/bin/awk", "mawk" },
	{ "/usr/bin/cc", "gcc" },
};
#define N_ALTERNATIVES (sizeof(alternatives) / sizeof(alternatives[0]))

/* hashed (their versions change what the image contains) but not installed */
static const char *const tool_packages[] = { "supermin" };
#define N_TOOL_PACKAGES (sizeof(tool_packages) / sizeof(tool_packages[0]))

/* The resolved inputs of one build. */
struct inputs {
	const char *cache_dir;		/* as given (or the default) */
	char kernel[PATH_MAX];
	char kver[IMAGE_KVER_MAX];
	char **pkgs;			/* sorted, unique: what supermin installs */
	size_t npkgs;
	char id[IMAGE_ID_LEN + 1];
};

/* ---- small helpers ------------------------------------------------------- */

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

#define progress(o, ...) image_progress((o)->progress, (o)->opaque, __VA_ARGS__)

static int copy_str(char *dst, size_t size, const char *src, const char *what,
		    struct err *e)
{
	size_t n = strlen(src);

	if (n >= size)
		return err_set(e, -ENAMETOOLONG, "%s too long: '%s'", what, src);
	memcpy(dst, src, n + 1);
	return 0;
}

/* ---- content hash: 64-bit FNV-1a over tagged, length-prefixed fields ----- */

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)
#define FNV_PRIME UINT64_C(0x100000001b3)

static void fnv_add(uint64_t *h, const void *p, size_t n)
{
	const unsigned char *c = p;
	uint64_t v = *h;
	size_t i;

	for (i = 0; i < n; i++) {
		v ^= c[i];
		v *= FNV_PRIME;
	}
	*h = v;
}

static void fnv_u64(uint64_t *h, uint64_t x)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < 8; i++)
		b[i] = (unsigned char)(x >> (8 * i));
	fnv_add(h, b, sizeof(b));
}

/* tag and length first, so "ab"+"c" never hashes like "a"+"bc" */
static void fnv_field(uint64_t *h, const char *tag, const void *p, size_t n)
{
	fnv_add(h, tag, strlen(tag) + 1);
	fnv_u64(h, n);
	fnv_add(h, p, n);
}

static int fnv_file(uint64_t *h, const char *tag, const char *path,
		    const char *what, const char *advice, struct err *e)
{
	unsigned char *buf = NULL;
	struct stat st;
	uint64_t done = 0;
	int fd, ret = 0;

	fd = open_regular(path, what, advice, &st, e);
	if (fd < 0)
		return fd;
	buf = malloc(1 << 16);
	if (!buf) {
		ret = err_set(e, -ENOMEM, "cannot hash '%s': out of memory", path);
		goto cleanup;
	}
	fnv_add(h, tag, strlen(tag) + 1);
	fnv_u64(h, (uint64_t)st.st_size);
	for (;;) {
		ssize_t r = read(fd, buf, 1 << 16);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = err_set(e, -errno, "cannot read %s '%s': %s", what,
				      path, strerror(errno));
			goto cleanup;
		}
		if (r == 0)
			break;
		fnv_add(h, buf, (size_t)r);
		done += (uint64_t)r;
	}
	if (done != (uint64_t)st.st_size)
		ret = err_set(e, -EIO, "%s '%s' changed while it was read", what,
			      path);
cleanup:
	free(buf);
	close(fd);
	return ret;
}

/* ---- inputs ---------------------------------------------------------------- */

static bool valid_kver(const char *s)
{
	if (!*s || strlen(s) >= IMAGE_KVER_MAX)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+-~", *s))
			return false;
	return true;
}

/* Debian package name, optionally ":arch"; never an option for argv */
static bool valid_pkg(const char *s)
{
	size_t n = strlen(s);

	if (n < 2 || n > 128 || !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
		return false;
	for (; *s; s++)
		if (!islower((unsigned char)*s) && !isdigit((unsigned char)*s) &&
		    !strchr("+-.:", *s))
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

static int kernel_pick(const char *given, struct inputs *in, struct err *e)
{
	const char *base;
	char best[NAME_MAX + 1] = "";
	char real[PATH_MAX];

	if (!given) {
		struct dirent *d;
		DIR *dir = opendir("/boot");

		if (!dir && errno != ENOENT)
			return err_set(e, -errno, "cannot read '/boot': %s",
				       strerror(errno));
		while (dir && (d = readdir(dir))) {
			char p[PATH_MAX];

			if (strncmp(d->d_name, "vmlinuz-", 8) || !d->d_name[8])
				continue;
			if (snprintf(p, sizeof(p), "/boot/%s", d->d_name) >= (int)sizeof(p) ||
			    !is_regular_file(p))
				continue;
			if (!best[0] || strverscmp(d->d_name, best) > 0)
				snprintf(best, sizeof(best), "%s", d->d_name);
		}
		if (dir)
			closedir(dir);
		if (!best[0])
			return err_set(e, -ENOENT,
				       "no guest kernel in /boot: install linux-image-amd64 or pass --kernel");
		if (fstree_join(in->kernel, "/boot", best, e))
			return e->code;
	} else {
		if (!realpath(given, real))
			return err_set(e, -errno, "cannot use kernel '%s': %s: pass an existing vmlinuz-<version> file with --kernel",
				       given, strerror(errno));
		if (!is_regular_file(real))
			return err_set(e, -EINVAL, "kernel '%s' is not a regular file: pass a vmlinuz-<version> file with --kernel",
				       given);
		if (copy_str(in->kernel, sizeof(in->kernel), real, "kernel path", e))
			return e->code;
	}
	base = strrchr(in->kernel, '/');
	base = base ? base + 1 : in->kernel;
	if (strncmp(base, "vmlinuz-", 8) || !valid_kver(base + 8))
		return err_set(e, -EINVAL, "cannot tell the version of kernel '%s': its file name must be vmlinuz-<version> (pass it with --kernel)",
			       in->kernel);
	snprintf(in->kver, sizeof(in->kver), "%s", base + 8);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void inputs_release(struct inputs *in)
{
	size_t i;

	for (i = 0; in->pkgs && i < in->npkgs; i++)
		free(in->pkgs[i]);
	free(in->pkgs);
	in->pkgs = NULL;
	in->npkgs = 0;
}

static int pkgs_build(const struct image_opts *o, struct inputs *in,
		      struct err *e)
{
	size_t nextra = 0, nuser = 0, n = 0, i, j;
	char kpkg[IMAGE_KVER_MAX + 16];

	while (o->extra_packages && o->extra_packages[nextra])
		nextra++;
	while (o->user_packages && o->user_packages[nuser])
		nuser++;
	for (i = 0; i < nextra + nuser; i++) {
		const char *p = i < nextra ? o->extra_packages[i] : o->user_packages[i - nextra];

		if (!valid_pkg(p))
			return err_set(e, -EINVAL, "invalid package name '%s': use Debian package names such as 'gcc' or 'make'",
				       p);
	}
	in->pkgs = calloc(N_BASE_PACKAGES + 1 + nextra + nuser, sizeof(*in->pkgs));
	if (!in->pkgs)
		return err_set(e, -ENOMEM, "cannot list packages: out of memory");
	snprintf(kpkg, sizeof(kpkg), "linux-image-%s", in->kver);
	for (i = 0; i < N_BASE_PACKAGES + 1 + nextra + nuser; i++) {
		size_t x = i - N_BASE_PACKAGES - 1;
		const char *p = i < N_BASE_PACKAGES ? base_packages[i] :
				i == N_BASE_PACKAGES ? kpkg :
				x < nextra ? o->extra_packages[x] : o->user_packages[x - nextra];
		char *dup;

		/* into a local, checked, then stored: gcc 12's -fanalyzer loses a pointer stored
		 * in an array element and read back from it there, and calls it a leak */
		dup = strdup(p);
		if (!dup)
			return err_set(e, -ENOMEM, "cannot list packages: out of memory");
		in->pkgs[n++] = dup;
		in->npkgs = n;
	}
	qsort(in->pkgs, n, sizeof(*in->pkgs), cmp_str);
	for (i = 1, j = 1; i < n; i++) {
		if (!strcmp(in->pkgs[i], in->pkgs[j - 1]))
			free(in->pkgs[i]);
		else
			in->pkgs[j++] = in->pkgs[i];
	}
	in->npkgs = j;
	return 0;
}

/* the packages beyond the base set and the kernel's, comma-separated (sorted) */
static void pkgs_extra(const struct inputs *in, char *buf, size_t len)
{
	size_t i, k, pos = 0;

	buf[0] = '\0';
	for (i = 0; i < in->npkgs; i++) {
		bool base = !strncmp(in->pkgs[i], "linux-image-", 12) && !strcmp(in->pkgs[i] + 12, in->kver);

		for (k = 0; k < N_BASE_PACKAGES; k++)
			base |= !strcmp(in->pkgs[i], base_packages[k]);
		if (!base && pos < len)
			pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", pos ? "," : "", in->pkgs[i]);
	}
}

/* does one dpkg-query line ("binpkg\tpkg\tversion\tstatus") name p? */
static bool dpkg_line_is(const char *line, const char *p)
{
	size_t n = strlen(p);
	const char *tab = strchr(line, '\t');

	if (!strncmp(line, p, n) && line[n] == '\t')
		return true;
	return tab && !strncmp(tab + 1, p, n) && tab[1 + n] == '\t';
}

/* apt knows p: `apt-cache policy p` names a candidate version (an unknown name prints nothing) */
static bool apt_knows(const char *p)
{
	const char *argv[] = { "apt-cache", "policy", p, NULL };
	char out[4096];
	const char *c;

	if (spawn_run(argv, NULL, out, sizeof(out), NULL))
		return true;	/* no apt to ask: say what to install */
	c = strstr(out, "Candidate: ");
	return c && strncmp(c + 11, "(none)", 6);
}

static int pkg_missing(const char *p, const char *kver, struct err *e)
{
	if (!strncmp(p, "linux-image-", 12) && !strcmp(p + 12, kver))
		return err_set(e, -ENOENT, "kernel %s is not from an installed Debian package ('%s'; its modules go into the image): install it with 'apt-get install %s' or pass another --kernel",
			       kver, p, p);
	if (!apt_knows(p))
		return err_set(e, -ENOENT, "package '%s' is unknown to apt on this host (apt-cache policy shows no candidate): check its name, or run 'apt-get update'",
			       p);
	return err_set(e, -ENOENT, "package '%s' is not installed on the host (supermin builds the image from installed host packages): install it with 'apt-get install -y --no-install-recommends %s'",
		       p, p);
}

/* hash the installed versions of the packages (and of supermin itself) */
static int pkgs_hash(uint64_t *h, const struct inputs *in, struct err *e)
{
	size_t nargs = 4 + in->npkgs + N_TOOL_PACKAGES + 1, i, nlines = 0;
	const char **argv = NULL;
	char **lines = NULL;
	char *out = NULL, *s, *save = NULL;
	struct err qe = ERR_INIT;
	int ret = 0;

	argv = calloc(nargs, sizeof(*argv));
	out = malloc(IMAGE_DPKG_OUT_MAX);
	lines = calloc(in->npkgs + N_TOOL_PACKAGES + 1, sizeof(*lines));
	if (!argv || !out || !lines) {
		ret = err_set(e, -ENOMEM, "cannot query packages: out of memory");
		goto cleanup;
	}
	argv[0] = "dpkg-query";
	argv[1] = "-W";
	argv[2] = "-f";
	argv[3] = "${binary:Package}\t${Package}\t${Version}\t${db:Status-Abbrev}\n";
	for (i = 0; i < in->npkgs; i++)
		argv[4 + i] = in->pkgs[i];
	for (i = 0; i < N_TOOL_PACKAGES; i++)
		argv[4 + in->npkgs + i] = tool_packages[i];
	if (spawn_run(argv, NULL, out, IMAGE_DPKG_OUT_MAX, &qe)) {
		/* "dpkg-query: no packages found matching X": name X */
		for (i = 0; i < in->npkgs + N_TOOL_PACKAGES; i++) {
			const char *m = strstr(qe.msg, "matching ");

			for (; m; m = strstr(m + 1, "matching ")) {
				size_t n = strlen(argv[4 + i]);

				if (!strncmp(m + 9, argv[4 + i], n) &&
				    strchr(" ;", m[9 + n]))
					break;
			}
			if (m) {
				ret = pkg_missing(argv[4 + i], in->kver, e);
				goto cleanup;
			}
		}
		ret = err_set(e, qe.code,
			      "cannot query the host packages the image is built from (supermin copies them from the host; install what is missing with 'apt-get install'): %s",
			      qe.msg);
		goto cleanup;
	}
	for (s = strtok_r(out, "\n", &save); s; s = strtok_r(NULL, "\n", &save)) {
		if (nlines == in->npkgs + N_TOOL_PACKAGES)
			break;	/* more lines than asked for: ignore the extra */
		lines[nlines++] = s;
	}
	/* every package must be there and installed */
	for (i = 0; i < in->npkgs + N_TOOL_PACKAGES; i++) {
		const char *p = argv[4 + i];
		size_t k;

		for (k = 0; k < nlines; k++)
			if (dpkg_line_is(lines[k], p))
				break;
		if (k == nlines || !strstr(lines[k], "\tii")) {
			ret = pkg_missing(p, in->kver, e);
			goto cleanup;
		}
	}
	qsort(lines, nlines, sizeof(*lines), cmp_str);
	for (i = 0; i < nlines; i++)
		fnv_field(h, "dpkg", lines[i], strlen(lines[i]));
cleanup:
	free(lines);
	free(out);
	free(argv);
	return ret;
}

/* resolve kernel and packages and compute the id */
static int inputs_prepare(const struct image_opts *o, struct inputs *in,
			  struct err *e)
{
	uint64_t h = FNV_OFFSET;
	size_t i;
	int ret;

	memset(in, 0, sizeof(*in));
	in->cache_dir = o->cache_dir && *o->cache_dir ? o->cache_dir :
			IMAGE_CACHE_DIR_DEFAULT;
	if (!o->guest_bin || !*o->guest_bin)
		return err_set(e, -EINVAL, "no guest program given: build bin/thpeval-guest with 'make' and pass it");
	ret = kernel_pick(o->kernel, in, e);
	if (ret)
		return ret;
	ret = pkgs_build(o, in, e);
	if (ret)
		return ret;

	fnv_field(&h, "builder", IMAGE_BUILDER_VERSION, strlen(IMAGE_BUILDER_VERSION));
	fnv_field(&h, "params", IMAGE_BOOT_PARAMS, strlen(IMAGE_BOOT_PARAMS));
	for (i = 0; initrd_modules[i]; i++)
		fnv_field(&h, "initrd-module", initrd_modules[i], strlen(initrd_modules[i]));
	fnv_field(&h, "kver", in->kver, strlen(in->kver));
	ret = fnv_file(&h, "kernel", in->kernel, "kernel", "", e);
	if (ret)
		return ret;
	ret = fnv_file(&h, "guest", o->guest_bin, "guest program",
		       ": build it with 'make bin/thpeval-guest'", e);
	if (ret)
		return ret;
	for (i = 0; i < in->npkgs; i++)
		fnv_field(&h, "pkg", in->pkgs[i], strlen(in->pkgs[i]));
	/* a link is made where its package is in (the targets are named after
	 * their packages): the base image is unchanged and keeps its id */
	for (i = 0; i < N_ALTERNATIVES; i++) {
		size_t k;

		for (k = 0; k < in->npkgs; k++)
			if (!strcmp(in->pkgs[k], alternatives[i][1]))
				fnv_field(&h, "alternative", alternatives[i][0],
					  strlen(alternatives[i][0]));
	}
	ret = pkgs_hash(&h, in, e);
	if (ret)
		return ret;
	snprintf(in->id, sizeof(in->id), "%016llx", (unsigned long long)h);
	return 0;
}

/* ---- the cache --------------------------------------------------------------- */

static bool valid_id(const char *id)
{
	size_t i;

	for (i = 0; i < IMAGE_ID_LEN; i++)
		if (!isxdigit((unsigned char)id[i]) || isupper((unsigned char)id[i]))
			return false;
	return id[IMAGE_ID_LEN] == '\0';
}

/* strict "key=value" lines; value copied into dst */
static int meta_get(const char *text, const char *key, char *dst, size_t size)
{
	size_t klen = strlen(key);
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len > klen && !strncmp(p, key, klen) && p[klen] == '=') {
			len -= klen + 1;
			if (len >= size)
				return -ENAMETOOLONG;
			memcpy(dst, p + klen + 1, len);
			dst[len] = '\0';
			return 0;
		}
		p += len + (nl ? 1 : 0);
	}
	return -ENOENT;
}

int image_load(const char *cache_dir, const char *id, struct image *out,
	       struct err *e)
{
	char abs[PATH_MAX], p[PATH_MAX], text[4096], val[256];
	const char *files[3];
	struct stat fst;
	size_t i;
	struct image img;
	ssize_t n;
	int fd;

	memset(&img, 0, sizeof(img));
	if (!cache_dir || !*cache_dir)
		cache_dir = IMAGE_CACHE_DIR_DEFAULT;
	if (!id || !valid_id(id))
		return err_set(e, -EINVAL, "invalid image id '%s': expected %d lower-case hex digits",
			       id ? id : "(null)", IMAGE_ID_LEN);
	if (!realpath(cache_dir, abs))
		return err_set(e, -errno, "cannot use image cache '%s': %s",
			       cache_dir, strerror(errno));
	if (fstree_join(img.dir, abs, id, e) ||
	    fstree_join(img.kernel, img.dir, "kernel", e) ||
	    fstree_join(img.initrd, img.dir, "initrd", e) ||
	    fstree_join(img.root, img.dir, "root", e) ||
	    fstree_join(p, img.dir, "complete", e))
		return e->code;
	if (!is_regular_file(p) || !is_regular_file(img.kernel) ||
	    !is_regular_file(img.initrd) || !is_regular_file(img.root))
		return err_set(e, -ENOENT, "no complete image '%s' in '%s': build it (again)",
			       id, abs);
	if (fstree_join(p, img.dir, "meta", e))
		return e->code;
	fd = open_regular(p, "image metadata", "", &fst, e);	/* never waits on a FIFO there */
	if (fd < 0)
		return fd;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return err_set(e, -errno, "cannot read '%s': %s", p, strerror(errno));
	text[n] = '\0';
	if (meta_get(text, "id", val, sizeof(val)) || strcmp(val, id) ||
	    meta_get(text, "kernel_version", img.kernel_version,
		     sizeof(img.kernel_version)) ||
	    !valid_kver(img.kernel_version) ||
	    meta_get(text, "cmdline", img.cmdline, sizeof(img.cmdline)) ||
	    strncmp(img.cmdline, "root=", 5))
		return err_set(e, -EBADMSG, "image metadata '%s' is malformed: rebuild the image with --force",
			       p);
	/* recorded since images with packages: absent in older ones */
	if (meta_get(text, "build_s", val, sizeof(val)) == 0)
		img.build_s = strtod(val, NULL);
	if (meta_get(text, "packages", img.packages, sizeof(img.packages)))
		img.packages[0] = '\0';
	files[0] = img.kernel;
	files[1] = img.initrd;
	files[2] = img.root;
	for (i = 0; i < 3; i++)
		if (stat(files[i], &fst) == 0)
			img.disk_bytes += (unsigned long long)fst.st_blocks * 512;
	snprintf(img.id, sizeof(img.id), "%s", id);
	*out = img;
	return 0;
}

/* remove .tmp-<pid>-* / .old-<pid>-* left by builds whose process is gone */
static void cleanup_stale(const char *cache_dir)
{
	struct dirent *d;
	DIR *dir = opendir(cache_dir);

	while (dir && (d = readdir(dir))) {
		char p[PATH_MAX];
		char *end;
		long pid;

		if (strncmp(d->d_name, ".tmp-", 5) && strncmp(d->d_name, ".old-", 5))
			continue;
		errno = 0;
		pid = strtol(d->d_name + 5, &end, 10);
		if (errno || end == d->d_name + 5 || *end != '-' || pid <= 0 ||
		    pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (snprintf(p, sizeof(p), "%s/%s", cache_dir, d->d_name) < (int)sizeof(p))
			fstree_remove(p);
	}
	if (dir)
		closedir(dir);
}

/* ---- libguestfs ------------------------------------------------------------ */

/* vmx/svm visible and /dev/kvm usable; otherwise libguestfs must use TCG */
static bool kvm_usable(void)
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

static int gfs_fail(guestfs_h *g, struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int gfs_fail(guestfs_h *g, struct err *e, const char *fmt, ...)
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

static guestfs_h *gfs_open(struct err *e)
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
	    (!kvm_usable() && guestfs_set_backend_setting(g, "force_tcg", "1"))) {
		gfs_fail(g, e, "cannot set the libguestfs backend");
		guestfs_close(g);
		return NULL;
	}
	return g;
}

/* launch on root (raw) and mount its filesystem on / */
static int gfs_launch(guestfs_h *g, const char *root, bool readonly,
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

/* put the guest program in, write the id; returns the filesystem UUID */

static int link_alternatives(guestfs_h *g)
{
	char target[64];
	size_t i;

	for (i = 0; i < N_ALTERNATIVES; i++) {
		snprintf(target, sizeof(target), "/usr/bin/%s", alternatives[i][1]);
		if (guestfs_exists(g, target) == 1 && guestfs_exists(g, alternatives[i][0]) == 0 &&
		    guestfs_ln_s(g, alternatives[i][1], alternatives[i][0]))
			return -1;
	}
	return 0;
}

static int guest_install(const char *root, const char *guest_bin,
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

/* ---- build ------------------------------------------------------------------- */

static int run_supermin(const struct inputs *in,
			const char *tmp, struct err *e)
{
	char sm_d[PATH_MAX], app_d[PATH_MAX];
	char env_kernel[PATH_MAX + 32], env_mods[PATH_MAX + 32], env_kver[96];
	const char *env[] = { env_kernel, env_mods, env_kver, NULL };
	const char **argv;
	size_t i, n = 0;
	int ret;

	if (fstree_join(sm_d, tmp, "supermin.d", e) ||
	    fstree_join(app_d, tmp, "appliance.d", e))
		return e->code;
	argv = calloc(in->npkgs + 8, sizeof(*argv));
	if (!argv)
		return err_set(e, -ENOMEM, "cannot run supermin: out of memory");
	/* --use-installed: copy files of installed packages, no downloads */
	argv[n++] = "supermin";
	argv[n++] = "--prepare";
	argv[n++] = "--use-installed";
	argv[n++] = "-o";
	argv[n++] = sm_d;
	for (i = 0; i < in->npkgs; i++)
		argv[n++] = in->pkgs[i];
	argv[n] = NULL;
	ret = spawn_run(argv, NULL, NULL, 0, e);
	free(argv);
	if (ret)
		return err_wrap(e, "cannot prepare the guest root with supermin");

	snprintf(env_kernel, sizeof(env_kernel), "SUPERMIN_KERNEL=%s", in->kernel);
	snprintf(env_mods, sizeof(env_mods), "SUPERMIN_MODULES=/lib/modules/%s", in->kver);
	snprintf(env_kver, sizeof(env_kver), "SUPERMIN_KERNEL_VERSION=%s", in->kver);
	{
		const char *bargv[] = {
			"supermin", "--build", "--format", "ext2",
			"--size", IMAGE_ROOT_SIZE,
			"--copy-kernel",	/* our own 0644 copy, not a link into /boot */
			"-o", app_d, sm_d, NULL
		};

		ret = spawn_run(bargv, env, NULL, 0, e);
	}
	if (ret)
		return err_wrap(e, "cannot build the guest root with supermin");
	return 0;
}

/* move appliance.d/{kernel,initrd,root} up into tmp, 0644, drop the rest */
static int collect_outputs(const char *tmp, struct err *e)
{
	static const char *const names[] = { "kernel", "initrd", "root" };
	char from[PATH_MAX], to[PATH_MAX], d[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (snprintf(from, sizeof(from), "%s/appliance.d/%s", tmp, names[i]) >= (int)sizeof(from) ||
		    fstree_join(to, tmp, names[i], e))
			return err_set(e, -ENAMETOOLONG, "path too long under '%s'", tmp);
		if (!is_regular_file(from))
			return err_set(e, -ENOENT, "supermin did not produce '%s'", from);
		if (rename(from, to))
			return err_set(e, -errno, "cannot move '%s' to '%s': %s",
				       from, to, strerror(errno));
		/* qemu runs as another user under qemu:///system */
		if (chmod(to, 0644))
			return err_set(e, -errno, "cannot chmod '%s': %s", to,
				       strerror(errno));
	}
	if (fstree_join(d, tmp, "appliance.d", e))
		return e->code;
	fstree_remove(d);
	if (fstree_join(d, tmp, "supermin.d", e))
		return e->code;
	fstree_remove(d);
	return 0;
}

/* what boot_files() made; goes into the metadata */
struct boot_info {
	const char *kernel;	/* "vmlinux" (ELF, PVH entry) or "bzImage" */
	const char *initrd;	/* "slim" or "supermin" */
};

/*
 * Make supermin's kernel and initrd quick to boot: the kernel unpacked to the
 * ELF vmlinux it carries (QEMU boots it directly, no emulated decompression)
 * and the initrd cut to initrd_modules. Each falls back to supermin's file,
 * with a progress note, when that cannot be done: the guest still boots, only
 * slower (seconds under TCG).
 */
static int boot_files(const struct image_opts *o, const struct inputs *in,
		      const char *tmp, struct boot_info *bi, struct err *e)
{
	char kernel[PATH_MAX], initrd[PATH_MAX], dep[PATH_MAX], p[PATH_MAX];
	struct err le = ERR_INIT;
	size_t kept = 0, total = 0;

	bi->kernel = "bzImage";
	bi->initrd = "supermin";
	if (fstree_join(kernel, tmp, "kernel", e) || fstree_join(p, tmp, "kernel.elf", e))
		return e->code;
	if (boot_kernel_unpack(kernel, p, &le) == 0) {
		if (rename(p, kernel))
			return err_set(e, -errno, "cannot move '%s' to '%s': %s", p, kernel,
				       strerror(errno));
		bi->kernel = "vmlinux";
	} else {
		progress(o, "note: booting the compressed kernel (slower under TCG): %s", le.msg);
		err_clear(&le);
	}

	if (fstree_join(initrd, tmp, "initrd", e) || fstree_join(p, tmp, "initrd.slim", e))
		return e->code;
	if (snprintf(dep, sizeof(dep), "/lib/modules/%s/modules.dep", in->kver) >= (int)sizeof(dep))
		return err_set(e, -ENAMETOOLONG, "kernel version too long: '%s'", in->kver);
	if (boot_initrd_slim(initrd, p, dep, initrd_modules, &kept, &total, &le) == 0) {
		if (rename(p, initrd))
			return err_set(e, -errno, "cannot move '%s' to '%s': %s", p, initrd,
				       strerror(errno));
		bi->initrd = "slim";
		progress(o, "boot files: %s kernel, initrd with %zu of supermin's %zu modules",
			 bi->kernel, kept, total);
	} else {
		progress(o, "note: keeping supermin's initrd (it loads every module it has, slower): %s",
			 le.msg);
	}
	return 0;
}

static int publish(const struct image_opts *o, const char *abs,
		   const char *tmp, const char *final, const char *id,
		   struct err *e)
{
	char old[PATH_MAX];
	struct image other;
	struct err le = ERR_INIT;

	if (rename(tmp, final) == 0)
		return 0;
	if (errno != EEXIST && errno != ENOTEMPTY)
		return err_set(e, -errno, "cannot rename '%s' to '%s': %s", tmp,
			       final, strerror(errno));
	if (!o->force && image_load(abs, id, &other, &le) == 0) {
		/* a concurrent build of the same inputs finished first */
		fstree_remove(tmp);
		progress(o, "guest image %s: another build finished first, using it", id);
		return 0;
	}
	/* replace: swap the old one onto an empty dir, then put ours in place */
	if (snprintf(old, sizeof(old), "%s/.old-%ld-XXXXXX", abs, (long)getpid()) >= (int)sizeof(old))
		return err_set(e, -ENAMETOOLONG, "path too long under '%s'", abs);
	if (!mkdtemp(old))
		return err_set(e, -errno, "cannot create a directory in '%s': %s",
			       abs, strerror(errno));
	if (rename(final, old)) {
		int ret = err_set(e, -errno, "cannot move '%s' aside: %s", final,
				  strerror(errno));

		rmdir(old);
		return ret;
	}
	if (rename(tmp, final)) {
		int ret = err_set(e, -errno, "cannot rename '%s' to '%s': %s",
				  tmp, final, strerror(errno));

		rename(old, final);	/* best effort: put the old one back */
		return ret;
	}
	/* guests still running on the old root keep their open file */
	fstree_remove(old);
	return 0;
}

static int build_in(const struct image_opts *o, const struct inputs *in,
		    struct image *out, struct err *e)
{
	static const char *const synced[] = { "kernel", "initrd", "root" };
	char abs[PATH_MAX], tmp[PATH_MAX] = "", final[PATH_MAX], p[PATH_MAX];
	char uuid[64], meta[768 + sizeof(out->packages)], extras[sizeof(out->packages)] = "";
	struct boot_info bi;
	double t0 = mono_s(), t1, t2;
	size_t i;
	int ret;

	if (geteuid() != 0) {
		ret = err_set(e, -EPERM, "building the guest image needs root (supermin reads host package files and libguestfs runs qemu): run as root");
		goto cleanup;
	}
	ret = mkdir_p(in->cache_dir, 0755, e);
	if (ret == -EACCES) {
		char msg[ERR_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		err_set(e, ret, "%.400s: run as root or pass another cache directory", msg);
	}
	if (ret)
		goto cleanup;
	if (!realpath(in->cache_dir, abs)) {
		ret = err_set(e, -errno, "cannot use image cache '%s': %s",
			      in->cache_dir, strerror(errno));
		goto cleanup;
	}
	cleanup_stale(abs);
	if (fstree_join(final, abs, in->id, e) ||
	    snprintf(tmp, sizeof(tmp), "%s/.tmp-%ld-XXXXXX", abs, (long)getpid()) >= (int)sizeof(tmp)) {
		tmp[0] = '\0';
		ret = err_set(e, -ENAMETOOLONG, "path too long under '%s'", abs);
		goto cleanup;
	}
	if (!mkdtemp(tmp)) {
		ret = err_set(e, -errno, "cannot create a directory in '%s': %s",
			      abs, strerror(errno));
		tmp[0] = '\0';
		goto cleanup;
	}
	if (chmod(tmp, 0755)) {
		ret = err_set(e, -errno, "cannot chmod '%s': %s", tmp,
			      strerror(errno));
		goto cleanup;
	}

	progress(o, "building guest image %s (supermin, kernel %s, %zu packages)",
		 in->id, in->kver, in->npkgs);
	ret = run_supermin(in, tmp, e);
	if (!ret)
		ret = collect_outputs(tmp, e);
	if (ret)
		goto cleanup;
	t1 = mono_s();
	progress(o, "supermin done in %.1f s", t1 - t0);
	ret = boot_files(o, in, tmp, &bi, e);
	if (ret)
		goto cleanup;
	t1 = mono_s();

	progress(o, "installing guest program (libguestfs%s)",
		 kvm_usable() ? "" : ", TCG: about 20-40 s");
	if (fstree_join(p, tmp, "root", e)) {
		ret = e->code;
		goto cleanup;
	}
	ret = guest_install(p, o->guest_bin, in->id, uuid, sizeof(uuid), e);
	if (ret)
		goto cleanup;
	t2 = mono_s();
	progress(o, "libguestfs done in %.1f s", t2 - t1);

	/* metadata, then data on disk, then the marker, then the rename */
	pkgs_extra(in, extras, sizeof(extras));
	snprintf(meta, sizeof(meta),
		 "id=%s\nkernel_version=%s\ncmdline=root=UUID=%s console=ttyS0 panic=1 %s\n"
		 "kernel_format=%s\ninitrd=%s\nbuilder=%s\nbuild_s=%.1f\npackages=%s\n",
		 in->id, in->kver, uuid, IMAGE_BOOT_PARAMS, bi.kernel, bi.initrd,
		 IMAGE_BUILDER_VERSION, mono_s() - t0, extras);
	if (fstree_join(p, tmp, "meta", e) || write_file_synced(p, meta, e)) {
		ret = e->code;
		goto cleanup;
	}
	for (i = 0; i < sizeof(synced) / sizeof(synced[0]); i++) {
		if (fstree_join(p, tmp, synced[i], e) || fsync_path(p, e)) {
			ret = e->code;
			goto cleanup;
		}
	}
	if (fstree_join(p, tmp, "complete", e) || write_file_synced(p, "", e) ||
	    fsync_path(tmp, e)) {
		ret = e->code;
		goto cleanup;
	}
	ret = publish(o, abs, tmp, final, in->id, e);
	if (ret)
		goto cleanup;
	tmp[0] = '\0';
	fsync_path(abs, NULL);
	ret = image_load(abs, in->id, out, e);
	if (ret)
		goto cleanup;
	progress(o, "guest image %s ready in %.1f s (%s, %.0f MiB on disk%s%s)", in->id,
		 mono_s() - t0, final, (double)out->disk_bytes / (1 << 20), extras[0] ? ", packages " : "",
		 extras);
cleanup:
	if (tmp[0])
		fstree_remove(tmp);
	return ret;
}

/* ---- public -------------------------------------------------------------------- */

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
		ret = build_in(o, &in, out, e);
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
	ret = build_in(o, &in, out, e);
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
	if (!is_regular_file(img->kernel) || !is_regular_file(img->initrd) ||
	    !is_regular_file(img->root))
		return err_set(e, -ENOENT, "image '%s' is incomplete (kernel, initrd or root missing in '%s'): rebuild it with --force",
			       img->id, img->dir);
	if (!valid_kver(img->kernel_version))
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
	snprintf(modules, sizeof(modules), "/lib/modules/%s", img->kernel_version);
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
