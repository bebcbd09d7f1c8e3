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

struct image_args {
	char kernel[PATH_MAX], cache_dir[PATH_MAX], guest_bin[PATH_MAX];
	bool force, kcompile;
	char pkgs[IMAGE_PKGS_MAX][IMAGE_PKG_MAX];
	size_t npkgs;
};

/* the target of a typed row in struct image_args */
#define IA(field) OPT_AT(struct image_args, field)

static const struct opt image_opts[] = {
	{ .name = "kernel", .arg = "PATH", .def_note = "thpeval's own, from linux-source-6.1", .id = IO_KERNEL, .type = OPT_STRING,
	  IA(kernel), .what = "kernel", .help = "guest kernel: a Debian vmlinuz-<version> from /boot, booted with a slim initrd of its modules; without it thpeval's own: tinyconfig plus what the guest uses, drivers built in, no modules or initrd, built once (minutes on a fresh host) and cached in /var/cache/thpeval/kernels" },
	{ .name = "cache-dir", .arg = "DIR", .def = "/var/cache/thpeval/images", .id = IO_CACHE_DIR,
	  .type = OPT_STRING, IA(cache_dir), .what = "cache", .help = "image cache" },
	{ .name = "guest-bin", .arg = "PATH", .def_note = "thpeval-guest beside thpeval, else ../libexec/thpeval/",
	  .id = IO_GUEST_BIN, .type = OPT_STRING, IA(guest_bin), .what = "guest program",
	  .help = "static guest program" },
	{ .name = "force", .id = IO_FORCE, .type = OPT_FLAG, IA(force),
	  .help = "rebuild even if a cached image matches" },
	{ .name = "kcompile", .id = IO_KCOMPILE, .type = OPT_FLAG, IA(kcompile),
	  .help = "the image kcompile guests use (the root adds the toolchain) and the kernel source disk (" SRCDISK_PACKAGE ", extracted, ext4, attached read-only)" },
	{ .name = "packages", .arg = "PKG,...", .id = IO_PACKAGES, .type = OPT_CALL,
	  .help = "Debian packages added to the root (with their dependencies), copied from the host where they must be installed ('apt-get install -y --no-install-recommends PKG'); the list joins the image's content address (thpeval run --image-packages gives the same image)" },
};

const struct command image_cmd = {
	.name = "image",
	.args = "build | show",
	.summary = "Build (or show) the guest image: thpeval's own kernel (or a Debian one) and a root made\n"
		   "from host packages with the guest program as /init, cached by content.",
	CLI_OPTS(image_opts),
};

/* --packages: the one compound option (the others are typed rows) */
static int image_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct image_args *a = ctx;

	if (id != IO_PACKAGES)
		return err_set(e, -EINVAL, "internal: unhandled option %d", id);
	return image_packages_parse(arg, a->pkgs, IMAGE_PKGS_MAX, &a->npkgs, e);
}

static void print_progress(void *opaque, const char *msg)
{
	(void)opaque;
	fprintf(stderr, "thpeval: %s\n", msg);
}

static int image_main(int argc, char **argv)
{
	struct image_args a = { "", "", "", false, false, { "" }, 0 };
	const char *user[IMAGE_PKGS_MAX + 1];
	size_t i;
	struct image_opts o = { 0 };
	struct srcdisk_opts so = { 0 };
	struct srcdisk sd;
	struct err e = ERR_INIT;
	struct image img;
	bool help, built = false, sd_built = false;
	int first, r;

	if (cli_defaults(&image_cmd, image_opt, &a, &e))
		return cmd_fail(&e, CMD_ERROR);
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
	       img.kernel_version, img.initrd[0] ? img.initrd : "none (the kernel has its drivers built in)", img.root,
	       img.cmdline);
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
