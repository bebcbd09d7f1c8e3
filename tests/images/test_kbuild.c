/*
 * tests for images/kbuild.c, thpeval's guest kernel build, on a fake kernel
 * source: a tarball whose Makefile answers tinyconfig, olddefconfig, vmlinux
 * and kernelrelease in a few milliseconds (FAKE_MODE in the environment
 * makes one of them misbehave). The build, the cache, and each refusal with
 * nothing left in the cache. The real build is test_image's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/kbuild.h"

struct fixture {
	char dir[64];			/* scratch: the source, its tarball, the cache */
	char tarball[128];
	char cache[128];
};

/* kconfig keeps the last line of a symbol; FAKE_MODE=drop loses CONFIG_PVH, as another Kconfig would */
static const char fake_makefile[] =
	"tinyconfig:\n"
	"\tprintf 'CONFIG_64BIT=y\\nCONFIG_PVH=n\\n' > .config\n"
	"olddefconfig:\n"
	"\tawk -F= '/^CONFIG_/ { if (!($$1 in v)) k[n++] = $$1; v[$$1] = $$0 } "
	"END { for (i = 0; i < n; i++) print v[k[i]] }' .config > .config.new\n"
	"\tif [ \"$$FAKE_MODE\" = drop ]; then grep -v '^CONFIG_PVH=' .config.new > .config; "
	"else mv .config.new .config; fi\n"
	"vmlinux:\n"
	"\t[ \"$$FAKE_MODE\" != fail ] || { echo 'ld: vmlinux: out of disk' >&2; exit 2; }\n"
	"\tprintf '\\177ELF fake' > vmlinux\n"
	"kernelrelease:\n"
	"\tif [ \"$$FAKE_MODE\" = badrel ]; then echo '6.1 bad/release'; else echo 6.1.999-thpeval; fi\n";

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
	char src[PATH_MAX], cmd[3 * PATH_MAX];

	if (!fx)
		return -1;
	snprintf(fx->dir, sizeof(fx->dir), "/tmp/thpeval-test-kbuild-XXXXXX");
	if (!mkdtemp(fx->dir))
		return -1;
	snprintf(src, sizeof(src), "%s/linux-fake", fx->dir);
	if (mkdir(src, 0755))
		return -1;
	snprintf(cmd, sizeof(cmd), "%s/Makefile", src);
	write_bytes(cmd, fake_makefile);
	snprintf(fx->tarball, sizeof(fx->tarball), "%s/linux-fake.tar.xz", fx->dir);
	snprintf(fx->cache, sizeof(fx->cache), "%s/kernels", fx->dir);
	snprintf(cmd, sizeof(cmd), "tar -cJf '%s' -C '%s' linux-fake", fx->tarball, fx->dir);
	if (system(cmd))
		return -1;
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	nftw(fx->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(fx);
	return 0;
}

/* entries in the cache directory (the temporary build directories included) */
static int entries(const char *dir)
{
	struct dirent *d;
	DIR *h = opendir(dir);
	int n = 0;

	if (!h)
		return -1;
	while ((d = readdir(h)))
		n += strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
	closedir(h);
	return n;
}

static bool need_root(void)
{
	if (geteuid() == 0)
		return true;
	print_message("skipped: building a kernel into the cache needs root\n");
	return false;
}

static void test_build_then_cached(void **state)
{
	struct fixture *fx = *state;
	struct image_opts o = { .kernel_cache = fx->cache };
	struct kbuild k, again;
	struct err e = ERR_INIT;
	char p[PATH_MAX + 64], *text = NULL;
	size_t i;
	FILE *f;
	long n;

	if (!need_root())
		skip();
	unsetenv("FAKE_MODE");
	if (kbuild_ensure(&o, fx->tarball, "0123456789abcdef", &k, &e))
		fail_msg("kbuild_ensure: %s", e.msg);
	assert_string_equal(k.release, "6.1.999-thpeval");
	snprintf(p, sizeof(p), "%s/kernel-0123456789abcdef/vmlinux", fx->cache);
	assert_string_equal(k.vmlinux, p);
	assert_int_equal(entries(fx->cache), 1);	/* the kernel, no temporary directory */
	/* the configuration kept beside it holds every line asked for */
	snprintf(p, sizeof(p), "%s/config", k.dir);
	f = fopen(p, "r");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	for (i = 0; kbuild_config[i]; i++)
		if (!strstr(text, kbuild_config[i]))
			fail_msg("'%s' is not in the kept configuration", kbuild_config[i]);
	free(text);
	/* the source tree is gone: only the kernel, its configuration and release */
	assert_int_equal(entries(k.dir), 4);

	/* cached: found without the source */
	if (kbuild_ensure(&o, "/nonexistent/linux.tar.xz", "0123456789abcdef", &again, &e))
		fail_msg("cached kbuild_ensure: %s", e.msg);
	assert_string_equal(again.vmlinux, k.vmlinux);
	assert_string_equal(again.release, k.release);
}

static void test_refusals_leave_nothing(void **state)
{
	struct fixture *fx = *state;
	struct image_opts o = { .kernel_cache = fx->cache };
	const struct {
		const char *mode, *want;
		int code;
	} cases[] = {
		{ "drop", "the guest kernel's configuration did not take 'CONFIG_PVH=y'", -EINVAL },
		{ "fail", "cannot build the guest kernel", -ECHILD },
		{ "badrel", "the guest kernel's release '6.1 bad/release' is not a version", -EBADMSG },
	};
	struct kbuild k;
	struct err e = ERR_INIT;
	size_t i;

	if (!need_root())
		skip();
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv("FAKE_MODE", cases[i].mode, 1);
		assert_int_equal(kbuild_ensure(&o, fx->tarball, "fedcba9876543210", &k, &e), cases[i].code);
		if (!strstr(e.msg, cases[i].want))
			fail_msg("%s: '%s' lacks '%s'", cases[i].mode, e.msg, cases[i].want);
		assert_null(strchr(e.msg, '\n'));
		err_clear(&e);
		assert_int_equal(entries(fx->cache), 0);
	}
	unsetenv("FAKE_MODE");
	/* no source: the error names it */
	assert_int_not_equal(kbuild_ensure(&o, "/nonexistent/linux.tar.xz", "fedcba9876543210", &k, &e), 0);
	assert_non_null(strstr(e.msg, "cannot extract the kernel source '/nonexistent/linux.tar.xz'"));
	assert_int_equal(entries(fx->cache), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_build_then_cached, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refusals_leave_nothing, setup, teardown),
	};

	return cmocka_run_group_tests_name("images/kbuild", tests, NULL, NULL);
}
