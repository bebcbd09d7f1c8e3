/* thpeval image: build or show the cached guest image (and the kcompile source disk) */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "images/image.h"
#include "images/srcdisk.h"
#include "lib/err.h"
#include "orchestrator/cmd/commands.h"

enum image_opt { IO_KERNEL, IO_CACHE_DIR, IO_GUEST_BIN, IO_FORCE, IO_KCOMPILE, IO_PACKAGES };

static const struct opt image_opts[] = {
	OPT_ROW("kernel", "PATH", "newest /boot/vmlinuz-*", "guest kernel", IO_KERNEL),
	OPT_ROW("cache-dir", "DIR", "/var/cache/thpeval/images", "image cache", IO_CACHE_DIR),
	OPT_ROW("guest-bin", "PATH", "thpeval-guest beside thpeval, else ../libexec/thpeval/", "static guest program", IO_GUEST_BIN),
	OPT_ROW("force", NULL, NULL, "rebuild even if a cached image matches", IO_FORCE),
	OPT_ROW("kcompile", NULL, NULL, "the image kcompile guests use (the root adds the toolchain) and the kernel source disk (" SRCDISK_PACKAGE ", extracted, ext4, attached read-only)", IO_KCOMPILE),
	OPT_ROW("packages", "PKG,...", NULL, "Debian packages added to the root (with their dependencies), copied from the host where they must be installed ('apt-get install -y --no-install-recommends PKG'); the list joins the image's content address (thpeval run --image-packages gives the same image)", IO_PACKAGES),
};

const struct command image_cmd = {
	.name = "image",
	.args = "build | show",
	.summary = "Build (or show) the guest image: a Debian kernel and a root made from host packages\n"
		   "with the guest program as /init, cached by content.",
	CLI_OPTS(image_opts),
};

struct image_args {
	char kernel[PATH_MAX], cache_dir[PATH_MAX], guest_bin[PATH_MAX];
	bool force, kcompile;
	char pkgs[IMAGE_PKGS_MAX][IMAGE_PKG_MAX];
	size_t npkgs;
};

static int image_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct image_args *a = ctx;
	char *dst = NULL;

	switch ((enum image_opt)id) {
	case IO_KERNEL: dst = a->kernel; break;
	case IO_CACHE_DIR: dst = a->cache_dir; break;
	case IO_GUEST_BIN: dst = a->guest_bin; break;
	case IO_FORCE: a->force = true; return 0;
	case IO_KCOMPILE: a->kcompile = true; return 0;
	case IO_PACKAGES: return image_packages_parse(arg, a->pkgs, IMAGE_PKGS_MAX, &a->npkgs, e);
	}
	if (!dst || strlen(arg) >= PATH_MAX)
		return err_set(e, -ENAMETOOLONG, "path too long");
	strcpy(dst, arg);
	return 0;
}

static void print_progress(void *opaque, const char *msg)
{
	(void)opaque;
	fprintf(stderr, "thpeval: %s\n", msg);
}

static int image_main(int argc, char **argv)
{
	struct image_args a = { "", "/var/cache/thpeval/images", "", false, false, { "" }, 0 };
	const char *user[IMAGE_PKGS_MAX + 1];
	size_t i;
	struct image_opts o = { 0 };
	struct srcdisk_opts so = { 0 };
	struct srcdisk sd;
	struct err e = ERR_INIT;
	struct image img;
	bool help, built = false, sd_built = false;
	int first, r;

	if (cli_parse(&image_cmd, argc, argv, image_opt, &a, &first, &help, NULL, &e))
		return cmd_fail(&e, CMD_USAGE);
	if (help) {
		cli_help(&image_cmd, stdout);
		return CMD_OK;
	}
	if (first + 1 != argc || (strcmp(argv[first], "build") && strcmp(argv[first], "show"))) {
		cmd_error("image: give one subcommand: build or show");
		return CMD_USAGE;
	}
	if (a.guest_bin[0] ? cmd_guest_bin_check(a.guest_bin, &e) :
			     cmd_default_guest_bin(a.guest_bin, sizeof(a.guest_bin), &e))
		return cmd_fail(&e, CMD_ERROR);
	o.cache_dir = a.cache_dir;
	o.kernel = a.kernel[0] ? a.kernel : NULL;
	o.guest_bin = a.guest_bin;
	o.force = a.force;
	o.progress = print_progress;
	o.extra_packages = a.kcompile ? srcdisk_toolchain_packages : NULL;
	for (i = 0; i < a.npkgs; i++)
		user[i] = a.pkgs[i];
	user[a.npkgs] = NULL;
	o.user_packages = a.npkgs ? user : NULL;
	if (a.kcompile) {
		so.cache_dir = a.cache_dir;
		so.force = a.force;
		so.progress = print_progress;
		r = srcdisk_ensure(&so, &sd, &sd_built, &e);
		if (r)
			return cmd_fail(&e, CMD_ERROR);
	}
	r = image_ensure(&o, &img, &built, &e);
	if (!r && !strcmp(argv[first], "show"))
		r = image_verify(&img, &e);
	if (r)
		return cmd_fail(&e, CMD_ERROR);
	printf("image %s (%s%s)\n  kernel  %s (%s)\n  initrd  %s\n  root    %s\n  cmdline %s\n", img.id,
	       built ? "built" : "cached", a.kcompile ? ", kcompile: with the toolchain" : "", img.kernel,
	       img.kernel_version, img.initrd, img.root, img.cmdline);
	printf("  packages %s\n  size    %.0f MiB on disk (kernel, initrd and the sparse root)\n",
	       img.packages[0] ? img.packages : "(the base set only)", (double)img.disk_bytes / (1 << 20));
	if (img.build_s > 0)
		printf("  build   %.1f s\n", img.build_s);
	else
		printf("  build   not recorded (built before thpeval recorded build times)\n");
	if (a.kcompile)
		printf("source %s (%s)\n  package %s %s\n  disk    %s (%llu MiB, read-only vdb, mounted on /mnt/linux-src)\n"
		       "  tree    %s (bare-host builds)\n",
		       sd.id, sd_built ? "built" : "cached", SRCDISK_PACKAGE, sd.version, sd.disk, sd.disk_bytes >> 20,
		       sd.tree);
	return CMD_OK;
}

int cmd_image(int argc, char **argv)
{
	return cmd_options_first(&image_cmd, image_main, argc, argv);
}
