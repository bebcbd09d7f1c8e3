/*
 * tests for images/image.c: the content hash (id), input errors, the cache,
 * and (as root, with supermin and libguestfs) a real build + verify + overlay.
 * The real build takes about a minute under TCG; THPEVAL_SKIP_IMAGE_BUILD=1
 * skips it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "images/image.h"

struct fixture {
	char dir[64];		/* scratch directory */
	char guest_a[PATH_MAX];
	char guest_b[PATH_MAX];
	char fake_kernel[PATH_MAX];	/* vmlinuz-0.0.0-test: a name, not a kernel */
	char cache[PATH_MAX];	/* the real build's cache, removed even if a check fails */
};

static void write_bytes(const char *path, const char *content)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(content, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/thpeval-test-image-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(fx->guest_a, sizeof(fx->guest_a), "%s/guest-a", fx->dir);
	snprintf(fx->guest_b, sizeof(fx->guest_b), "%s/guest-b", fx->dir);
	snprintf(fx->fake_kernel, sizeof(fx->fake_kernel), "%s/vmlinuz-0.0.0-test",
		 fx->dir);
	write_bytes(fx->guest_a, "guest program A\n");
	write_bytes(fx->guest_b, "guest program B\n");
	write_bytes(fx->fake_kernel, "not really a kernel\n");
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	if (fx->cache[0])
		nftw(fx->cache, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* the newest /boot kernel, or skip: the id needs an installed linux-image */
static bool have_boot_kernel(void)
{
	struct image_opts o = { .guest_bin = "/nonexistent" };
	char id[IMAGE_ID_LEN + 1];
	struct err e = ERR_INIT;

	image_compute_id(&o, id, &e);
	return !strstr(e.msg, "no guest kernel in /boot");
}

/* the newest /boot/vmlinuz-* (have_boot_kernel() said there is one) */
static void newest_boot_kernel(char src[PATH_MAX])
{
	struct dirent *d;
	DIR *dir = opendir("/boot");
	char best[256] = "";

	assert_non_null(dir);
	while ((d = readdir(dir)))
		if (!strncmp(d->d_name, "vmlinuz-", 8) && (!best[0] || strverscmp(d->d_name, best) > 0))
			snprintf(best, sizeof(best), "%s", d->d_name);
	closedir(dir);
	snprintf(src, PATH_MAX, "/boot/%s", best);
}

/* the kernel source thpeval's own guest kernel is built from, or skip: the default id needs it */
static bool have_kernel_source(void)
{
	if (access(IMAGE_KERNEL_SOURCE, R_OK) == 0)
		return true;
	print_message("skipped: no %s (apt-get install %s)\n", IMAGE_KERNEL_SOURCE, IMAGE_KERNEL_SOURCE_PACKAGE);
	return false;
}

static void test_input_errors(void **state)
{
	struct fixture *fx = *state;
	const char *bad_pkgs[] = { "-rf", NULL };
	const char *upper_pkgs[] = { "Bash", NULL };
	const struct {
		const char *name;
		struct image_opts o;
		int code;
		const char *want;	/* substring of the message */
	} cases[] = {
		{ "missing kernel file",
		  { .kernel = "/nonexistent/vmlinuz-6.1.0-1-amd64", .guest_bin = fx->guest_a },
		  -ENOENT, "--kernel" },
		{ "kernel without a version in its name",
		  { .kernel = fx->guest_a, .guest_bin = fx->guest_a },
		  -EINVAL, "vmlinuz-<version>" },
		{ "kernel is a directory",
		  { .kernel = fx->dir, .guest_bin = fx->guest_a },
		  -EINVAL, "--kernel" },
		{ "no guest program",
		  { .kernel = fx->fake_kernel },
		  -EINVAL, "no guest program given" },
		{ "missing guest program",
		  { .kernel = fx->fake_kernel, .guest_bin = "/nonexistent/thpeval-guest" },
		  -ENOENT, "cannot open guest program '/nonexistent/thpeval-guest'" },
		{ "guest program is a directory",
		  { .kernel = fx->fake_kernel, .guest_bin = fx->dir },
		  -EINVAL, "is a directory, not a regular file" },
		{ "package name that looks like an option",
		  { .kernel = fx->fake_kernel, .guest_bin = fx->guest_a, .extra_packages = bad_pkgs },
		  -EINVAL, "invalid package name '-rf'" },
		{ "package name in upper case",
		  { .kernel = fx->fake_kernel, .guest_bin = fx->guest_a, .extra_packages = upper_pkgs },
		  -EINVAL, "invalid package name 'Bash'" },
		{ "kernel with no installed linux-image package",
		  { .kernel = fx->fake_kernel, .guest_bin = fx->guest_a },
		  -ENOENT, "kernel 0.0.0-test is not from an installed Debian package" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char id[IMAGE_ID_LEN + 1] = "";
		struct image img;
		struct err e = ERR_INIT;
		bool built = true;
		int rc;

		rc = image_compute_id(&cases[i].o, id, &e);
		if (rc != cases[i].code || e.code != rc || !strstr(e.msg, cases[i].want))
			fail_msg("%s: rc %d (want %d), message '%s' (want '%s')",
				 cases[i].name, rc, cases[i].code, e.msg,
				 cases[i].want);
		/* image_ensure fails the same way before touching the cache */
		err_clear(&e);
		rc = image_ensure(&cases[i].o, &img, &built, &e);
		if (rc != cases[i].code || built)
			fail_msg("%s: image_ensure rc %d built %d", cases[i].name,
				 rc, built);
	}
}

static void test_id_stable_and_sensitive(void **state)
{
	struct fixture *fx = *state;
	const char *extra_dup[] = { "grep", "bash", NULL };	/* already in the base set */
	const char *extra_new[] = { "dpkg", NULL };
	char a1[IMAGE_ID_LEN + 1], a2[IMAGE_ID_LEN + 1], b[IMAGE_ID_LEN + 1];
	char dup[IMAGE_ID_LEN + 1], pk[IMAGE_ID_LEN + 1];
	struct image_opts o = { .guest_bin = fx->guest_a };
	struct err e = ERR_INIT;

	if (!have_boot_kernel()) {
		print_message("skipped: no /boot/vmlinuz-* (install linux-image-amd64)\n");
		skip();
	}
	if (!have_kernel_source())
		skip();
	assert_int_equal(image_compute_id(&o, a1, &e), 0);
	assert_int_equal(image_compute_id(&o, a2, &e), 0);
	assert_string_equal(a1, a2);
	assert_int_equal(strlen(a1), IMAGE_ID_LEN);
	assert_int_equal(strspn(a1, "0123456789abcdef"), IMAGE_ID_LEN);

	/* the cache directory is not an input */
	o.cache_dir = fx->dir;
	assert_int_equal(image_compute_id(&o, a2, &e), 0);
	assert_string_equal(a1, a2);

	o.guest_bin = fx->guest_b;
	assert_int_equal(image_compute_id(&o, b, &e), 0);
	assert_string_not_equal(a1, b);

	/* same bytes under another name: same id */
	write_bytes(fx->guest_b, "guest program A\n");
	assert_int_equal(image_compute_id(&o, b, &e), 0);
	assert_string_equal(a1, b);
	write_bytes(fx->guest_b, "guest program B\n");

	o.guest_bin = fx->guest_a;
	o.extra_packages = extra_dup;
	assert_int_equal(image_compute_id(&o, dup, &e), 0);
	assert_string_equal(a1, dup);

	o.extra_packages = extra_new;
	assert_int_equal(image_compute_id(&o, pk, &e), 0);
	assert_string_not_equal(a1, pk);
	assert_int_equal(e.code, 0);

	/* the user's packages join the id as the toolchain's do: the same set, the same id */
	o.extra_packages = NULL;
	o.user_packages = extra_new;
	assert_int_equal(image_compute_id(&o, dup, &e), 0);
	assert_string_equal(pk, dup);
}

struct pkgs_case {
	const char *name;
	const char *in;
	int code;
	const char *want;	/* the names joined with ' ', or the message */
};

static const struct pkgs_case pkgs_cases[] = {
	{ "one", "stress-ng", 0, "stress-ng" },
	{ "several, a duplicate dropped", "sysbench,libfoo2.0+x,sysbench,g++", 0, "sysbench libfoo2.0+x g++" },
	{ "empty", "", -EINVAL, "empty package list: give Debian package names such as stress-ng,sysbench" },
	{ "empty item", "a1,,b2", -EINVAL,
	  "empty item in the package list 'a1,,b2': separate package names with single commas" },
	{ "trailing comma", "stress-ng,", -EINVAL,
	  "empty item in the package list 'stress-ng,': separate package names with single commas" },
	{ "upper case", "Bash", -EINVAL, "'Bash' is not a Debian package name (lower-case letters, digits, '+', "
	  "'-' and '.', starting with a letter or digit)" },
	{ "like an option", "-rf", -EINVAL, "'-rf' is not a Debian package name" },
	{ "an architecture", "gcc:amd64", -EINVAL, "'gcc:amd64' is not a Debian package name" },
	{ "a space", "stress ng", -EINVAL, "'stress ng' is not a Debian package name" },
	{ "metacharacters", "a;touch /tmp/x", -EINVAL, "'a;touch /tmp/x' is not a Debian package name" },
	{ "one character", "a", -EINVAL, "'a' is not a Debian package name (two characters at least)" },
	{ "64 characters",
	  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", -EINVAL,
	  "package name 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is longer than 63 characters" },
	{ "17 packages", "p1,p2,p3,p4,p5,p6,p7,p8,p9,p10,p11,p12,p13,p14,p15,p16,p17", -E2BIG,
	  "more than 16 packages" },
};

static void test_packages_parse(void **state)
{
	char out[IMAGE_PKGS_MAX][IMAGE_PKG_MAX], got[IMAGE_PKGS_MAX * (IMAGE_PKG_MAX + 1)];
	size_t i, k, n;

	(void)state;
	for (i = 0; i < sizeof(pkgs_cases) / sizeof(pkgs_cases[0]); i++) {
		const struct pkgs_case *c = &pkgs_cases[i];
		struct err e = ERR_INIT;
		int r = image_packages_parse(c->in, out, IMAGE_PKGS_MAX, &n, &e);

		if (r != c->code)
			fail_msg("%s: %d (%s), want %d", c->name, r, e.msg, c->code);
		if (r) {
			if (strncmp(e.msg, c->want, strlen(c->want)))
				fail_msg("%s: '%s', want '%s'", c->name, e.msg, c->want);
			continue;
		}
		got[0] = '\0';
		for (k = 0; k < n; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", k ? " " : "", out[k]);
		if (strcmp(got, c->want))
			fail_msg("%s: '%s', want '%s'", c->name, got, c->want);
	}
}

/* a name apt does not know: one line naming it, before anything is built */
static void test_package_unknown_to_apt(void **state)
{
	struct fixture *fx = *state;
	const char *user[] = { "thpeval-no-such-package", NULL };
	struct image_opts o = { .guest_bin = fx->guest_a, .user_packages = user };
	char id[IMAGE_ID_LEN + 1];
	struct err e = ERR_INIT;

	if (!have_boot_kernel()) {
		print_message("skipped: no /boot/vmlinuz-* (install linux-image-amd64)\n");
		skip();
	}
	if (!have_kernel_source())
		skip();
	if (system("command -v apt-cache >/dev/null 2>&1")) {
		print_message("skipped: no apt-cache here to ask\n");
		skip();
	}
	assert_int_equal(image_compute_id(&o, id, &e), -ENOENT);
	assert_string_equal(e.msg, "package 'thpeval-no-such-package' is unknown to apt on this host (apt-cache "
				   "policy shows no candidate): check its name, or run 'apt-get update'");
}

static void test_id_changes_with_kernel(void **state)
{
	struct fixture *fx = *state;
	struct image_opts o = { .guest_bin = fx->guest_a };
	char a[IMAGE_ID_LEN + 1], b[IMAGE_ID_LEN + 1], src[PATH_MAX];
	char copy[PATH_MAX + 64];
	struct err e = ERR_INIT;
	const char *base;
	char buf[65536];
	FILE *in, *out;
	size_t n;

	if (!have_boot_kernel()) {
		print_message("skipped: no /boot/vmlinuz-* (install linux-image-amd64)\n");
		skip();
	}
	/* the newest /boot/vmlinuz-*, given */
	newest_boot_kernel(src);
	o.kernel = src;
	assert_int_equal(image_compute_id(&o, a, &e), 0);
	/* thpeval's own kernel (the default) boots instead: another image */
	if (access(IMAGE_KERNEL_SOURCE, R_OK) == 0) {
		o.kernel = NULL;
		assert_int_equal(image_compute_id(&o, b, &e), 0);
		assert_string_not_equal(a, b);
	}
	base = strrchr(src, '/') + 1;
	snprintf(copy, sizeof(copy), "%s/%s", fx->dir, base);
	in = fopen(src, "rb");
	out = fopen(copy, "wb");
	assert_non_null(in);
	assert_non_null(out);
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		assert_int_equal(fwrite(buf, 1, n, out), n);
	fclose(in);
	assert_int_equal(fclose(out), 0);

	/* identical bytes and version elsewhere: same id */
	o.kernel = copy;
	assert_int_equal(image_compute_id(&o, b, &e), 0);
	assert_string_equal(a, b);

	/* one more byte: another id */
	out = fopen(copy, "ab");
	assert_non_null(out);
	fputc('x', out);
	assert_int_equal(fclose(out), 0);
	assert_int_equal(image_compute_id(&o, b, &e), 0);
	assert_string_not_equal(a, b);
	unlink(copy);
}

static void test_load_rejects(void **state)
{
	struct fixture *fx = *state;
	char d[PATH_MAX + 32];
	struct err e = ERR_INIT;
	struct image img;

	assert_int_equal(image_load(fx->dir, "0123456789abcdef", &img, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "no complete image"));
	err_clear(&e);
	assert_int_equal(image_load(fx->dir, "../../etc/passwd", &img, &e), -EINVAL);
	err_clear(&e);
	assert_int_equal(image_load(fx->dir, "0123456789ABCDEF", &img, &e), -EINVAL);
	err_clear(&e);
	assert_int_equal(image_load(fx->dir, NULL, &img, &e), -EINVAL);
	err_clear(&e);

	/* all files but no 'complete' marker: not an image */
	snprintf(d, sizeof(d), "%s/fedcba9876543210", fx->dir);
	assert_int_equal(mkdir(d, 0755), 0);
	{
		static const char *const names[] = { "kernel", "initrd", "root", "meta" };
		char p[PATH_MAX + 64];
		size_t i;

		for (i = 0; i < 4; i++) {
			snprintf(p, sizeof(p), "%s/%s", d, names[i]);
			write_bytes(p, "x\n");
		}
		assert_int_equal(image_load(fx->dir, "fedcba9876543210", &img, &e), -ENOENT);
		err_clear(&e);
		/* marker present but metadata garbage: malformed, not trusted */
		snprintf(p, sizeof(p), "%s/complete", d);
		write_bytes(p, "");
		assert_int_equal(image_load(fx->dir, "fedcba9876543210", &img, &e), -EBADMSG);
		assert_non_null(strstr(e.msg, "--force"));
		err_clear(&e);
		/* metadata that is a FIFO: refused, never waited on */
		snprintf(p, sizeof(p), "%s/meta", d);
		assert_int_equal(unlink(p), 0);
		assert_int_equal(mkfifo(p, 0600), 0);
		assert_int_equal(image_load(fx->dir, "fedcba9876543210", &img, &e), -EINVAL);
		assert_non_null(strstr(e.msg, "meta' is a FIFO, not a regular file"));
		err_clear(&e);
		assert_int_equal(unlink(p), 0);
		/* well-formed metadata: loads, paths absolute */
		snprintf(p, sizeof(p), "%s/meta", d);
		write_bytes(p, "id=fedcba9876543210\nkernel_version=6.1.0-57-amd64\n"
			       "cmdline=root=UUID=1234 console=ttyS0 panic=1\n");
		assert_int_equal(image_load(fx->dir, "fedcba9876543210", &img, &e), 0);
		assert_string_equal(img.id, "fedcba9876543210");
		assert_string_equal(img.kernel_version, "6.1.0-57-amd64");
		assert_string_equal(img.cmdline, "root=UUID=1234 console=ttyS0 panic=1");
		assert_string_equal(img.dir, d);
		assert_true(img.root[0] == '/');
		/* without its initrd: incomplete, unless the metadata says it boots without one */
		snprintf(p, sizeof(p), "%s/initrd", d);
		assert_int_equal(unlink(p), 0);
		assert_int_equal(image_load(fx->dir, "fedcba9876543210", &img, &e), -ENOENT);
		assert_non_null(strstr(e.msg, "no complete image"));
		err_clear(&e);
		snprintf(p, sizeof(p), "%s/meta", d);
		write_bytes(p, "id=fedcba9876543210\nkernel_version=6.1.158-thpeval\n"
			       "cmdline=root=/dev/vda rw rootfstype=ext4 init=/init console=ttyS0 panic=1\n"
			       "initrd=none\n");
		assert_int_equal(image_load(fx->dir, "fedcba9876543210", &img, &e), 0);
		assert_string_equal(img.initrd, "");
		assert_string_equal(img.kernel_version, "6.1.158-thpeval");
	}
}

static void test_overlay_needs_root_file(void **state)
{
	struct image img;
	struct err e = ERR_INIT;

	(void)state;
	memset(&img, 0, sizeof(img));
	snprintf(img.root, sizeof(img.root), "/nonexistent/root");
	assert_int_equal(image_overlay_create(&img, "/tmp/x.qcow2", &e), -ENOENT);
	assert_non_null(strstr(e.msg, "rebuild"));
}

/* a failing supermin: the error carries its stderr, no temporary dir is left */
static void test_build_failure_cleans_up(void **state)
{
	struct fixture *fx = *state;
	char bin[PATH_MAX], script[PATH_MAX + 16], cache[PATH_MAX], path[8192], kernel[PATH_MAX];
	const char *old_path = getenv("PATH");
	char *saved = old_path ? strdup(old_path) : NULL;
	struct image_opts o = { .guest_bin = fx->guest_a };
	struct err e = ERR_INIT;
	struct image img;
	struct dirent *d;
	bool built = true;
	int rc, left = 0;
	DIR *dir;

	if (geteuid() != 0) {
		print_message("skipped: image_build needs root\n");
		skip();
	}
	if (!have_boot_kernel()) {
		print_message("skipped: no /boot/vmlinuz-* (install linux-image-amd64)\n");
		skip();
	}
	/* a Debian kernel: supermin's failure, not a kernel build first */
	newest_boot_kernel(kernel);
	o.kernel = kernel;
	snprintf(bin, sizeof(bin), "%s/fakebin", fx->dir);
	snprintf(cache, sizeof(cache), "%s/cache", fx->dir);
	assert_int_equal(mkdir(bin, 0755), 0);
	snprintf(script, sizeof(script), "%s/supermin", bin);
	write_bytes(script, "#!/bin/sh\necho 'supermin: fake failure: disk on fire' >&2\nexit 3\n");
	assert_int_equal(chmod(script, 0755), 0);
	snprintf(path, sizeof(path), "%s:%s", bin, old_path ? old_path : "/usr/bin:/bin");
	setenv("PATH", path, 1);

	o.cache_dir = cache;
	rc = image_ensure(&o, &img, &built, &e);
	if (saved)
		setenv("PATH", saved, 1);
	free(saved);
	assert_int_equal(rc, -ECHILD);
	assert_false(built);
	if (!strstr(e.msg, "supermin") || !strstr(e.msg, "disk on fire") ||
	    !strstr(e.msg, "exit status 3"))
		fail_msg("unexpected message '%s'", e.msg);

	dir = opendir(cache);
	assert_non_null(dir);
	while ((d = readdir(dir)))
		if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
			left++;
	closedir(dir);
	assert_int_equal(left, 0);
}

/* ---- real build -------------------------------------------------------------- */

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	while (path && *path) {
		size_t n = strcspn(path, ":");

		if (snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog) < (int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_progress(void *opaque, const char *msg)
{
	int *calls = opaque;

	(*calls)++;
	print_message("  [image] %s\n", msg);
}

static void test_real_build(void **state)
{
	struct fixture *fx = *state;
	char *cache = fx->cache, overlay[PATH_MAX], p[PATH_MAX + 32];
	const char *guest = getenv("THPEVAL_TEST_GUEST_BIN");
	struct image img, img2;
	struct err e = ERR_INIT;
	bool built = false;
	int calls = 0, fd;
	unsigned char magic[4];
	double t0, t_build, t_cached, t_verify;
	struct timespec root_mtime, kernel_mtime;
	struct stat st;

	if (getenv("THPEVAL_SKIP_IMAGE_BUILD")) {
		print_message("skipped: THPEVAL_SKIP_IMAGE_BUILD is set\n");
		skip();
	}
	if (geteuid() != 0) {
		print_message("skipped: building an image needs root\n");
		skip();
	}
	if (!in_path("supermin")) {
		print_message("skipped: supermin is not installed (apt-get install supermin)\n");
		skip();
	}
	if (access("/usr/lib/x86_64-linux-gnu/guestfs/supermin.d", R_OK) &&
	    access("/usr/lib/guestfs/supermin.d", R_OK) &&
	    access("/usr/lib64/guestfs/supermin.d", R_OK)) {
		print_message("skipped: the libguestfs appliance is not installed (apt-get install "
			      "libguestfs0)\n");
		skip();
	}
	if (!have_boot_kernel()) {
		print_message("skipped: no /boot/vmlinuz-* (install linux-image-amd64)\n");
		skip();
	}
	if (!have_kernel_source())
		skip();
	if (!guest)
		guest = access("bin/thpeval-guest", R_OK) == 0 ? "bin/thpeval-guest" : "/bin/true";

	/* in /var/tmp: ~530 MiB written, /tmp may be small */
	snprintf(cache, sizeof(fx->cache), "/var/tmp/thpeval-test-cache-XXXXXX");
	if (!mkdtemp(cache)) {
		cache[0] = '\0';
		fail_msg("cannot create a directory in /var/tmp");
	}
	{
		struct image_opts o = {
			.cache_dir = cache, .guest_bin = guest,
			.progress = on_progress, .opaque = &calls,
		};

		t0 = now_s();
		if (image_ensure(&o, &img, &built, &e))
			fail_msg("image_ensure: %s", e.msg);
		t_build = now_s() - t0;
		assert_true(built);
		assert_true(calls >= 3);

		assert_true(stat(img.kernel, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 1000000);
		assert_int_equal(st.st_mode & 0777, 0644);
		assert_string_equal(img.initrd, "");	/* thpeval's kernel: drivers built in */
		assert_true(stat(img.root, &st) == 0 && S_ISREG(st.st_mode));
		assert_int_equal(st.st_mode & 0777, 0644);
		assert_true(stat(img.dir, &st) == 0 && S_ISDIR(st.st_mode));
		assert_int_equal(st.st_mode & 0777, 0755);
		assert_true(strncmp(img.cmdline, "root=/dev/vda rw rootfstype=ext4 init=/init ", 44) == 0);
		assert_non_null(strstr(img.cmdline, "console=ttyS0"));
		/* the boot files: the vmlinux unpacked (an ELF) or, where that could not
		 * be done, the vmlinuz; supermin's initrd slimmed or as it was */
		{
			char text[1024] = "";
			ssize_t n;

			snprintf(p, sizeof(p), "%s/meta", img.dir);
			fd = open(p, O_RDONLY);
			assert_true(fd >= 0);
			n = read(fd, text, sizeof(text) - 1);
			close(fd);
			assert_true(n > 0);
			text[n] = '\0';
			assert_non_null(strstr(text, "\nkernel_format=vmlinux\n"));
			assert_non_null(strstr(text, "\ninitrd=none\n"));
			fd = open(img.kernel, O_RDONLY);
			assert_true(fd >= 0);
			assert_int_equal(read(fd, magic, 4), 4);
			close(fd);
			if (strstr(text, "kernel_format=vmlinux"))
				assert_memory_equal(magic, "\177ELF", 4);
			else
				assert_memory_not_equal(magic, "\177ELF", 4);
			print_message("  [image] boot files: thpeval's kernel %s, no initrd\n", img.kernel_version);
		}
		assert_non_null(strstr(img.kernel_version, "-thpeval"));
		assert_true(strncmp(img.dir, cache, strlen(cache)) == 0);
		/* nothing left behind but the image */
		snprintf(p, sizeof(p), "%s/%s/supermin.d", cache, img.id);
		assert_int_not_equal(access(p, F_OK), 0);

		t0 = now_s();
		if (image_verify(&img, &e))
			fail_msg("image_verify: %s", e.msg);
		t_verify = now_s() - t0;

		/* cached: nothing rebuilt or rewritten; far cheaper than the build is all we ask of its time */
		assert_int_equal(stat(img.root, &st), 0);
		root_mtime = st.st_mtim;
		assert_int_equal(stat(img.kernel, &st), 0);
		kernel_mtime = st.st_mtim;
		t0 = now_s();
		built = true;
		if (image_ensure(&o, &img2, &built, &e))
			fail_msg("second image_ensure: %s", e.msg);
		t_cached = now_s() - t0;
		assert_false(built);
		assert_string_equal(img.id, img2.id);
		assert_string_equal(img.root, img2.root);
		assert_string_equal(img.cmdline, img2.cmdline);
		assert_int_equal(stat(img.root, &st), 0);
		assert_true(st.st_mtim.tv_sec == root_mtime.tv_sec &&
			    st.st_mtim.tv_nsec == root_mtime.tv_nsec);
		assert_int_equal(stat(img.kernel, &st), 0);
		assert_true(st.st_mtim.tv_sec == kernel_mtime.tv_sec &&
			    st.st_mtim.tv_nsec == kernel_mtime.tv_nsec);
		assert_true(t_cached < t_build);
	}

	snprintf(overlay, sizeof(overlay), "%s/guest-1.qcow2", fx->dir);
	if (image_overlay_create(&img, overlay, &e))
		fail_msg("image_overlay_create: %s", e.msg);
	fd = open(overlay, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, magic, 4), 4);
	close(fd);
	assert_memory_equal(magic, "QFI\xfb", 4);
	/* again over the same path: replaced, not an error */
	if (image_overlay_create(&img, overlay, &e))
		fail_msg("image_overlay_create again: %s", e.msg);

	/* a broken image is caught (before paying for a libguestfs launch) */
	{
		struct image bad = img;

		snprintf(bad.root, sizeof(bad.root), "/nonexistent/thpeval-root");
		assert_int_equal(image_verify(&bad, &e), -ENOENT);
		assert_non_null(strstr(e.msg, "--force"));
		err_clear(&e);
	}

	print_message("  [image] timings: first build %.1f s, verify %.1f s, cached ensure %.3f s\n",
		      t_build, t_verify, t_cached);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_input_errors),
		cmocka_unit_test(test_id_stable_and_sensitive),
		cmocka_unit_test(test_id_changes_with_kernel),
		cmocka_unit_test(test_packages_parse),
		cmocka_unit_test(test_package_unknown_to_apt),
		cmocka_unit_test(test_load_rejects),
		cmocka_unit_test(test_overlay_needs_root_file),
		cmocka_unit_test(test_build_failure_cleans_up),
		cmocka_unit_test(test_real_build),
	};

	return cmocka_run_group_tests_name("images/image", tests, setup, teardown);
}
