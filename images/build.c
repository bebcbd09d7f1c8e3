#include "images/build.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/boot.h"
#include "images/cache.h"
#include "images/gfs.h"
#include "images/kbuild.h"
#include "images/spawn.h"
#include "lib/clock.h"
#include "lib/fstree.h"

#define progress(o, ...) image_progress((o)->progress, (o)->opaque, __VA_ARGS__)

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
	const char *initrd;	/* "slim", "supermin" or "none" */
	const char *kver;	/* the booted kernel's release */
};

/* thpeval's kernel in place of supermin's, and no initrd: the kernel mounts the root itself */
static int own_boot_files(const struct kbuild *kb, const char *tmp, struct boot_info *bi, struct err *e)
{
	char kernel[PATH_MAX], initrd[PATH_MAX], *buf = NULL;
	size_t n;
	int r;

	if (fstree_join(kernel, tmp, "kernel", e) || fstree_join(initrd, tmp, "initrd", e))
		return e->code;
	if ((r = read_regular(kb->vmlinux, "guest kernel", "", 0, (size_t)1 << 30, &buf, &n, e)))
		return r;
	r = write_file_atomic(kernel, buf, n, 0644, e);
	free(buf);
	if (r)
		return r;
	if (unlink(initrd) && errno != ENOENT)
		return err_set(e, -errno, "cannot remove '%s': %s", initrd, strerror(errno));
	bi->kernel = "vmlinux";
	bi->initrd = "none";
	bi->kver = kb->release;
	return 0;
}

/*
 * Make supermin's kernel and initrd quick to boot: the kernel unpacked to the
 * ELF vmlinux it carries (QEMU boots it directly, no emulated decompression)
 * and the initrd cut to image_initrd_modules. Each falls back to supermin's file,
 * with a progress note, when that cannot be done: the guest still boots, only
 * slower (seconds under TCG).
 */
static int boot_files(const struct image_opts *o, const struct inputs *in, const struct kbuild *kb,
		      const char *tmp, struct boot_info *bi, struct err *e)
{
	char kernel[PATH_MAX], initrd[PATH_MAX], dep[PATH_MAX], p[PATH_MAX];
	struct err le = ERR_INIT;
	size_t kept = 0, total = 0;

	bi->kver = in->kver;
	if (in->own_kernel)
		return own_boot_files(kb, tmp, bi, e);
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
	if (boot_initrd_slim(initrd, p, dep, image_initrd_modules, &kept, &total, &le) == 0) {
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

/*
 * The build's directories, needing root: abs the cache (created), final where
 * the image goes, tmp a new 0755 directory beside it ("" when none was made).
 * Leftovers of dead builds are removed first.
 */
static int build_dirs(const struct inputs *in, char abs[PATH_MAX], char final[PATH_MAX], char tmp[PATH_MAX],
		      struct err *e)
{
	int ret;

	tmp[0] = '\0';
	if (geteuid() != 0)
		return err_set(e, -EPERM, "building the guest image needs root (supermin reads host package files and libguestfs runs qemu): run as root");
	ret = mkdir_p(in->cache_dir, 0755, e);
	if (ret == -EACCES) {
		char msg[ERR_MSG_MAX];

		snprintf(msg, sizeof(msg), "%s", e->msg);
		err_set(e, ret, "%.400s: run as root or pass another cache directory", msg);
	}
	if (ret)
		return ret;
	if (!realpath(in->cache_dir, abs))
		return err_set(e, -errno, "cannot use image cache '%s': %s",
			       in->cache_dir, strerror(errno));
	cache_cleanup_stale(abs);
	if (fstree_join(final, abs, in->id, e) ||
	    snprintf(tmp, PATH_MAX, "%s/.tmp-%ld-XXXXXX", abs, (long)getpid()) >= PATH_MAX) {
		tmp[0] = '\0';
		return err_set(e, -ENAMETOOLONG, "path too long under '%s'", abs);
	}
	if (!mkdtemp(tmp)) {
		ret = err_set(e, -errno, "cannot create a directory in '%s': %s",
			      abs, strerror(errno));
		tmp[0] = '\0';
		return ret;
	}
	if (chmod(tmp, 0755))
		return err_set(e, -errno, "cannot chmod '%s': %s", tmp,
			       strerror(errno));
	return 0;
}

/* metadata, then data on disk, then the marker: tmp is then ready for the rename */
static int build_seal(const struct inputs *in, const char *tmp, const char *uuid, const struct boot_info *bi,
		      double t0, const char *extras, struct err *e)
{
	static const char *const synced[] = { "kernel", "root", "initrd" };
	char p[PATH_MAX], root[128], meta[768 + sizeof(((const struct image *)NULL)->packages)];
	size_t i;

	/* no initrd: the kernel mounts the first disk (the guest's overlay) and runs /init */
	if (in->own_kernel)
		snprintf(root, sizeof(root), "root=/dev/vda rw rootfstype=ext4 init=/init");
	else
		snprintf(root, sizeof(root), "root=UUID=%s", uuid);
	snprintf(meta, sizeof(meta),
		 "id=%s\nkernel_version=%s\ncmdline=%s console=ttyS0 panic=1 %s\n"
		 "kernel_format=%s\ninitrd=%s\nbuilder=%s\nbuild_s=%.1f\npackages=%s\n",
		 in->id, bi->kver, root, IMAGE_BOOT_PARAMS, bi->kernel, bi->initrd,
		 IMAGE_BUILDER_VERSION, mono_s() - t0, extras);
	if (fstree_join(p, tmp, "meta", e) || write_file_synced(p, meta, e))
		return e->code;
	for (i = 0; i < sizeof(synced) / sizeof(synced[0]) - in->own_kernel; i++)
		if (fstree_join(p, tmp, synced[i], e) || fsync_path(p, e))
			return e->code;
	if (fstree_join(p, tmp, "complete", e) || write_file_synced(p, "", e) ||
	    fsync_path(tmp, e))
		return e->code;
	return 0;
}

int image_build_in(const struct image_opts *o, const struct inputs *in,
		   struct image *out, struct err *e)
{
	char abs[PATH_MAX], tmp[PATH_MAX] = "", final[PATH_MAX], p[PATH_MAX];
	char uuid[64], extras[sizeof(out->packages)] = "";
	struct boot_info bi = { "bzImage", "supermin", "" };
	struct kbuild kb;
	double t0 = mono_s(), t1, t2;
	int ret;

	memset(&kb, 0, sizeof(kb));
	if (in->own_kernel && (ret = kbuild_ensure(o, IMAGE_KERNEL_SOURCE, in->kernel_id, &kb, e)))
		return ret;
	t0 = mono_s();	/* the image's own time, without the kernel's build */
	ret = build_dirs(in, abs, final, tmp, e);
	if (ret)
		goto cleanup;

	progress(o, "building guest image %s (supermin, kernel %s, %zu packages)",
		 in->id, in->own_kernel ? kb.release : in->kver, in->npkgs);
	ret = run_supermin(in, tmp, e);
	if (!ret)
		ret = collect_outputs(tmp, e);
	if (ret)
		goto cleanup;
	t1 = mono_s();
	progress(o, "supermin done in %.1f s", t1 - t0);
	ret = boot_files(o, in, &kb, tmp, &bi, e);
	if (ret)
		goto cleanup;
	t1 = mono_s();

	progress(o, "installing guest program (libguestfs%s)",
		 gfs_kvm_usable() ? "" : ", TCG: about 20-40 s");
	if (fstree_join(p, tmp, "root", e)) {
		ret = e->code;
		goto cleanup;
	}
	ret = gfs_guest_install(p, o->guest_bin, in->id, uuid, sizeof(uuid), e);
	if (ret)
		goto cleanup;
	t2 = mono_s();
	progress(o, "libguestfs done in %.1f s", t2 - t1);

	inputs_pkgs_extra(in, extras, sizeof(extras));
	ret = build_seal(in, tmp, uuid, &bi, t0, extras, e);
	if (ret)
		goto cleanup;
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
