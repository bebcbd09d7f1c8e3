#include "images/inputs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "images/kbuild.h"
#include "images/spawn.h"
#include "lib/fstree.h"

#define IMAGE_DPKG_OUT_MAX (64 * 1024)

static const char *const base_packages[] = {
	"bash", "coreutils", "kmod", "util-linux", "mount", "grep",
	"findutils", "procps",
	/* /bin/sh: what a user's command runs through system(), #!/bin/sh and sh -c */
	"dash",
	/* + linux-image-<kernel_version>, added at run time */
};
#define N_BASE_PACKAGES (sizeof(base_packages) / sizeof(base_packages[0]))

/* hashed (their versions change what the image contains) but not installed */
static const char *const tool_packages[] = { "supermin" };
#define N_TOOL_PACKAGES (sizeof(tool_packages) / sizeof(tool_packages[0]))

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
	if (strncmp(base, "vmlinuz-", 8) || !image_valid_kver(base + 8))
		return err_set(e, -EINVAL, "cannot tell the version of kernel '%s': its file name must be vmlinuz-<version> (pass it with --kernel)",
			       in->kernel);
	snprintf(in->kver, sizeof(in->kver), "%s", base + 8);
	return 0;
}

/*
 * thpeval's kernel: its build's id from the source tarball (package version,
 * path, size and time), the configuration and the compiler that builds it
 */
static int own_kernel_id(struct inputs *in, struct err *e)
{
	const char *dpkg[] = { "dpkg-query", "-W", "-f=${Version}", IMAGE_KERNEL_SOURCE_PACKAGE, NULL };
	const char *gcc[] = { "gcc", "--version", NULL };
	char version[128], cc[512], num[64];
	uint64_t h = FNV_OFFSET;
	struct stat st;
	size_t i;

	if (stat(IMAGE_KERNEL_SOURCE, &st) || !S_ISREG(st.st_mode))
		return err_set(e, -ENOENT, "no kernel source '%s' (thpeval builds its guest kernel from it): install it "
			       "with 'apt-get install %s', or pass --kernel=/boot/vmlinuz-VERSION to boot a Debian kernel",
			       IMAGE_KERNEL_SOURCE, IMAGE_KERNEL_SOURCE_PACKAGE);
	if (spawn_run(gcc, NULL, cc, sizeof(cc), NULL))
		return err_set(e, -ENOENT, "no gcc to build the guest kernel with: install it with 'apt-get install gcc "
			       "make flex bison bc libelf-dev', or pass --kernel=/boot/vmlinuz-VERSION to boot a Debian "
			       "kernel");
	cc[strcspn(cc, "\n")] = '\0';
	if (spawn_run(dpkg, NULL, version, sizeof(version), NULL) || !version[0])
		snprintf(version, sizeof(version), "unpackaged");
	snprintf(num, sizeof(num), "%lld:%lld", (long long)st.st_size, (long long)st.st_mtime);
	fnv_field(&h, "source", IMAGE_KERNEL_SOURCE, strlen(IMAGE_KERNEL_SOURCE));
	fnv_field(&h, "version", version, strlen(version));
	fnv_field(&h, "stat", num, strlen(num));
	fnv_field(&h, "cc", cc, strlen(cc));
	for (i = 0; kbuild_config[i]; i++)
		fnv_field(&h, "config", kbuild_config[i], strlen(kbuild_config[i]));
	snprintf(in->kernel_id, sizeof(in->kernel_id), "%016llx", (unsigned long long)h);
	in->own_kernel = true;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void inputs_release(struct inputs *in)
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
void inputs_pkgs_extra(const struct inputs *in, char *buf, size_t len)
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
int inputs_prepare(const struct image_opts *o, struct inputs *in,
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
	if (!ret && !o->kernel)
		ret = own_kernel_id(in, e);
	if (ret)
		return ret;
	ret = pkgs_build(o, in, e);
	if (ret)
		return ret;

	fnv_field(&h, "builder", IMAGE_BUILDER_VERSION, strlen(IMAGE_BUILDER_VERSION));
	fnv_field(&h, "params", IMAGE_BOOT_PARAMS, strlen(IMAGE_BOOT_PARAMS));
	for (i = 0; image_initrd_modules[i]; i++)
		fnv_field(&h, "initrd-module", image_initrd_modules[i], strlen(image_initrd_modules[i]));
	fnv_field(&h, "kver", in->kver, strlen(in->kver));
	if (in->own_kernel)
		fnv_field(&h, "own-kernel", in->kernel_id, strlen(in->kernel_id));
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
	for (i = 0; i < image_nalternatives; i++) {
		size_t k;

		for (k = 0; k < in->npkgs; k++)
			if (!strcmp(in->pkgs[k], image_alternatives[i][1]))
				fnv_field(&h, "alternative", image_alternatives[i][0],
					  strlen(image_alternatives[i][0]));
	}
	ret = pkgs_hash(&h, in, e);
	if (ret)
		return ret;
	snprintf(in->id, sizeof(in->id), "%016llx", (unsigned long long)h);
	return 0;
}
