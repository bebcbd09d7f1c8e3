#include "images/kbuild.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "images/cache.h"
#include "images/spawn.h"
#include "lib/clock.h"
#include "lib/fstree.h"

#define progress(o, ...) image_progress((o)->progress, (o)->opaque, __VA_ARGS__)

/*
 * On top of tinyconfig. The guest program needs procfs, sysfs, devtmpfs,
 * /dev/kmsg, the virtio disk, console and balloon (free page reporting),
 * perf's software events and the THP, hugetlbfs and KSM knobs; the
 * workloads need what a Debian userland uses (SysV IPC, futexes, epoll,
 * sockets on the loopback for redis and PostgreSQL, io_uring, userfaultfd).
 * Where a measurement passes through, it is built as Debian's kernel is:
 * -O2 rather than tinyconfig's -Os, SLUB, full-size tables (a small base
 * caps the page cache's folios below 2M, so shmem never got huge pages),
 * NUMA, page allocator shuffling, init_on_alloc, voluntary preemption,
 * THP always at boot, 5-level page tables, PTI, x2APIC and paravirtual
 * spinlocks, so that faults, page walks and TLB flushes run the same code.
 * No keyboard, mouse or VT: probing them is most of a small kernel's start
 * under TCG.
 */
const char *const kbuild_config[] = {
	"CONFIG_64BIT=y", "CONFIG_SMP=y", "CONFIG_NR_CPUS=64", "CONFIG_LOCALVERSION=\"-thpeval\"",
	"CONFIG_LOCALVERSION_AUTO=n", "CONFIG_PRINTK=y", "CONFIG_PRINTK_TIME=y", "CONFIG_BUG=y",
	"CONFIG_MULTIUSER=y", "CONFIG_SYSVIPC=y", "CONFIG_POSIX_MQUEUE=y", "CONFIG_FUTEX=y",
	"CONFIG_EPOLL=y", "CONFIG_SIGNALFD=y", "CONFIG_TIMERFD=y", "CONFIG_EVENTFD=y", "CONFIG_SHMEM=y",
	"CONFIG_AIO=y", "CONFIG_IO_URING=y", "CONFIG_ADVISE_SYSCALLS=y", "CONFIG_MEMBARRIER=y",
	"CONFIG_FILE_LOCKING=y", "CONFIG_POSIX_TIMERS=y", "CONFIG_USERFAULTFD=y", "CONFIG_PERF_EVENTS=y",
	"CONFIG_CGROUPS=y", "CONFIG_MEMCG=y", "CONFIG_HIGH_RES_TIMERS=y", "CONFIG_NO_HZ_IDLE=y",
	"CONFIG_HZ_250=y", "CONFIG_BASE_FULL=y", "CONFIG_CC_OPTIMIZE_FOR_PERFORMANCE=y", "CONFIG_SLUB=y",
	"CONFIG_RSEQ=y", "CONFIG_PREEMPT_VOLUNTARY=y", "CONFIG_STACKPROTECTOR=y", "CONFIG_STACKPROTECTOR_STRONG=y",
	"CONFIG_HARDENED_USERCOPY=y", "CONFIG_SLAB_FREELIST_RANDOM=y", "CONFIG_INIT_ON_ALLOC_DEFAULT_ON=y",
	/* a guest of QEMU/KVM, booted through PVH */
	"CONFIG_HYPERVISOR_GUEST=y", "CONFIG_PARAVIRT=y", "CONFIG_PARAVIRT_SPINLOCKS=y", "CONFIG_KVM_GUEST=y",
	"CONFIG_PVH=y", "CONFIG_X86_X2APIC=y", "CONFIG_MTRR=y", "CONFIG_X86_PAT=y", "CONFIG_NUMA=y",
	"CONFIG_ACPI=y", "CONFIG_PCI=y", "CONFIG_PCI_MSI=y",
	/* paging and mitigations as Debian's */
	"CONFIG_X86_5LEVEL=y", "CONFIG_CPU_MITIGATIONS=y", "CONFIG_PAGE_TABLE_ISOLATION=y",
	"CONFIG_RETPOLINE=y",
	/* memory: what the workloads measure */
	"CONFIG_ZONE_DMA=y", "CONFIG_SHUFFLE_PAGE_ALLOCATOR=y", "CONFIG_COMPACTION=y", "CONFIG_MIGRATION=y",
	"CONFIG_TRANSPARENT_HUGEPAGE=y", "CONFIG_TRANSPARENT_HUGEPAGE_ALWAYS=y", "CONFIG_HUGETLBFS=y", "CONFIG_KSM=y",
	"CONFIG_PAGE_REPORTING=y", "CONFIG_BALLOON_COMPACTION=y",
	/* files and devices */
	"CONFIG_BINFMT_ELF=y", "CONFIG_BINFMT_SCRIPT=y", "CONFIG_PROC_FS=y", "CONFIG_PROC_SYSCTL=y",
	"CONFIG_PROC_PAGE_MONITOR=y", "CONFIG_SYSFS=y", "CONFIG_TMPFS=y", "CONFIG_DEVTMPFS=y",
	"CONFIG_DEVTMPFS_MOUNT=y", "CONFIG_DEBUG_FS=y", "CONFIG_BLOCK=y", "CONFIG_BLK_DEV=y",
	"CONFIG_VIRTIO_MENU=y", "CONFIG_VIRTIO=y", "CONFIG_VIRTIO_PCI=y", "CONFIG_VIRTIO_BLK=y",
	"CONFIG_VIRTIO_BALLOON=y", "CONFIG_VIRTIO_CONSOLE=y", "CONFIG_TTY=y", "CONFIG_UNIX98_PTYS=y",
	"CONFIG_SERIAL_8250=y", "CONFIG_SERIAL_8250_CONSOLE=y", "CONFIG_EXT4_FS=y",
	"CONFIG_EXT4_USE_FOR_EXT2=y", "CONFIG_CRYPTO_CRC32C=y",
	"CONFIG_NET=y", "CONFIG_UNIX=y", "CONFIG_INET=y", "CONFIG_IPV6=n",
	/* left out */
	"CONFIG_INPUT=n", "CONFIG_SERIO=n", "CONFIG_VT=n", "CONFIG_MODULES=n", "CONFIG_BLK_DEV_INITRD=n",
	NULL,
};

static const char *cache_of(const struct image_opts *o)
{
	return o->kernel_cache && *o->kernel_cache ? o->kernel_cache : IMAGE_KERNEL_CACHE_DEFAULT;
}

static int paths(const char *abs, const char *id, struct kbuild *k, struct err *e)
{
	if (snprintf(k->dir, sizeof(k->dir), "%s/kernel-%s", abs, id) >= (int)sizeof(k->dir) ||
	    snprintf(k->vmlinux, sizeof(k->vmlinux), "%s/vmlinux", k->dir) >= (int)sizeof(k->vmlinux))
		return err_set(e, -ENAMETOOLONG, "kernel cache path too long: '%s'", abs);
	return 0;
}

/* a complete build: the marker, the vmlinux and its release */
static int load(const char *abs, const char *id, struct kbuild *k, struct err *e)
{
	char p[PATH_MAX + 16], *text = NULL;
	size_t n;
	int r;

	if (paths(abs, id, k, e))
		return e->code;
	snprintf(p, sizeof(p), "%s/complete", k->dir);
	if (access(p, F_OK) || !is_regular_file(k->vmlinux))
		return err_set(e, -ENOENT, "no guest kernel %s in '%s'", id, abs);
	snprintf(p, sizeof(p), "%s/release", k->dir);
	if ((r = read_regular(p, "kernel release", "", 0, IMAGE_KVER_MAX, &text, &n, e)))
		return r;
	n = strcspn(text, "\n");
	text[n] = '\0';
	if (!image_valid_kver(text)) {
		free(text);
		return err_set(e, -EBADMSG, "guest kernel %s in '%s' has a bad release: remove '%s'", id, abs,
			       k->dir);
	}
	snprintf(k->release, sizeof(k->release), "%s", text);
	free(text);
	return 0;
}

/* the one directory tar made in tmp */
static int source_dir(const char *tmp, char src[PATH_MAX], struct err *e)
{
	char name[256] = "";
	struct dirent *d;
	DIR *dir = opendir(tmp);
	int n = 0;

	if (!dir)
		return err_set(e, -errno, "cannot read '%s': %s", tmp, strerror(errno));
	while ((d = readdir(dir))) {
		if (d->d_name[0] == '.' || d->d_type != DT_DIR)
			continue;
		snprintf(name, sizeof(name), "%s", d->d_name);
		n++;
	}
	closedir(dir);
	if (n != 1)
		return err_set(e, -EPROTO, "the kernel source tarball holds %d top-level directories, one expected", n);
	return fstree_join(src, tmp, name, e);
}

/* .config holds every line of kbuild_config (an "=n" one: not set to y) */
static int config_check(const char *src, struct err *e)
{
	char p[PATH_MAX + 16], *text = NULL, want[160];
	size_t n, i;
	int r;

	snprintf(p, sizeof(p), "%s/.config", src);
	if ((r = read_regular(p, "kernel configuration", "", 0, 1 << 20, &text, &n, e)))
		return r;
	for (i = 0; kbuild_config[i]; i++) {
		const char *c = kbuild_config[i], *eq = strchr(c, '=');
		bool off = eq && !strcmp(eq, "=n");

		if (!eq)
			continue;	/* every entry is CONFIG_X=value */
		if (off)
			snprintf(want, sizeof(want), "\n%.*s=y\n", (int)(eq - c), c);
		else
			snprintf(want, sizeof(want), "\n%s\n", c);
		/* a line: after a newline, or the first */
		if (!(strstr(text, want) || !strncmp(text, want + 1, strlen(want + 1))) == !off) {
			free(text);
			return err_set(e, -EINVAL, "the guest kernel's configuration did not take '%s' (this "
				       "kernel source's Kconfig differs): pass --kernel=/boot/vmlinuz-VERSION to boot "
				       "a Debian kernel", c);
		}
	}
	free(text);
	return 0;
}

static int make_in(const char *src, const char *const *args, char *out, size_t outlen, struct err *e)
{
	static const char *const env[] = { "KBUILD_BUILD_USER=thpeval", "KBUILD_BUILD_HOST=thpeval",
					   "KBUILD_BUILD_TIMESTAMP=thpeval", NULL };
	const char *argv[8] = { "make", "-s", "-C", src };
	size_t n = 4;

	while (*args && n < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	return spawn_run(argv, env, out, outlen, e);
}

static int build_in(const struct image_opts *o, const char *tarball, const char *tmp, char release[IMAGE_KVER_MAX],
		    struct err *e)
{
	const char *tar_argv[] = { "tar", "-xJf", tarball, "-C", tmp, "--no-same-owner", NULL };
	const char *tiny[] = { "tinyconfig", NULL }, *old[] = { "olddefconfig", NULL };
	const char *rel[] = { "kernelrelease", NULL };
	char src[PATH_MAX], p[PATH_MAX + 16], jobs[32], to[PATH_MAX];
	const char *vm[] = { jobs, "vmlinux", NULL };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	FILE *f;
	size_t i;

	if (spawn_run(tar_argv, NULL, NULL, 0, e))
		return err_wrap(e, "cannot extract the kernel source '%s'", tarball);
	if (source_dir(tmp, src, e) || make_in(src, tiny, NULL, 0, e))
		return err_wrap(e, "cannot configure the guest kernel");
	/* kconfig takes the last of two lines for one symbol */
	snprintf(p, sizeof(p), "%s/.config", src);
	if (!(f = fopen(p, "a")))
		return err_set(e, -errno, "cannot write '%s': %s", p, strerror(errno));
	for (i = 0; kbuild_config[i]; i++)
		fprintf(f, "%s\n", kbuild_config[i]);
	if (fclose(f))
		return err_set(e, -errno, "cannot write '%s': %s", p, strerror(errno));
	if (make_in(src, old, NULL, 0, e))
		return err_wrap(e, "cannot configure the guest kernel");
	if (config_check(src, e))
		return e->code;
	snprintf(jobs, sizeof(jobs), "-j%ld", cpus > 0 ? cpus : 1);
	if (make_in(src, vm, NULL, 0, e))
		return err_wrap(e, "cannot build the guest kernel");
	if (make_in(src, rel, release, IMAGE_KVER_MAX, e))
		return err_wrap(e, "cannot read the guest kernel's release");
	release[strcspn(release, "\n")] = '\0';
	if (!image_valid_kver(release))
		return err_set(e, -EBADMSG, "the guest kernel's release '%.64s' is not a version", release);
	snprintf(p, sizeof(p), "%s/vmlinux", src);
	if (fstree_join(to, tmp, "vmlinux", e))
		return e->code;
	if (rename(p, to))
		return err_set(e, -errno, "cannot move '%s': %s", p, strerror(errno));
	chmod(to, 0644);
	snprintf(p, sizeof(p), "%s/.config", src);
	if (fstree_join(to, tmp, "config", e))
		return e->code;
	if (rename(p, to))
		return err_set(e, -errno, "cannot move '%s': %s", p, strerror(errno));
	fstree_remove(src);
	(void)o;
	return 0;
}

int kbuild_ensure(const struct image_opts *o, const char *tarball, const char *id, struct kbuild *out,
		  struct err *e)
{
	char abs[PATH_MAX], tmp[PATH_MAX], p[PATH_MAX], release[IMAGE_KVER_MAX] = "";
	struct err le = ERR_INIT;
	double t0 = mono_s();
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int r;

	memset(out, 0, sizeof(*out));
	if (mkdir(cache_of(o), 0755) && errno != EEXIST)
		return err_set(e, -errno, "cannot create the kernel cache '%s': %s", cache_of(o), strerror(errno));
	if (!realpath(cache_of(o), abs))
		return err_set(e, -errno, "cannot use the kernel cache '%s': %s", cache_of(o), strerror(errno));
	if (!o->force && load(abs, id, out, &le) == 0)
		return 0;
	err_clear(&le);
	if (geteuid() != 0)
		return err_set(e, -EPERM, "building the guest kernel needs root (it goes into '%s'): run as root", abs);
	cache_cleanup_stale(abs);	/* builds whose process is gone */
	if (snprintf(tmp, sizeof(tmp), "%s/.tmp-%ld-XXXXXX", abs, (long)getpid()) >= (int)sizeof(tmp))
		return err_set(e, -ENAMETOOLONG, "path too long under '%s'", abs);
	if (!mkdtemp(tmp))
		return err_set(e, -errno, "cannot create a directory in '%s': %s", abs, strerror(errno));
	chmod(tmp, 0755);
	progress(o, "building the guest kernel %s from %s with %ld CPUs: once, cached in %s "
		 "(about 10 minutes on 2 CPUs)", id, tarball, cpus > 0 ? cpus : 1, abs);
	r = build_in(o, tarball, tmp, release, e);
	if (!r && fstree_join(p, tmp, "release", e) == 0)
		r = write_file_synced(p, release, e);
	else if (!r)
		r = e->code;
	if (!r && fstree_join(p, tmp, "vmlinux", e) == 0)
		r = fsync_path(p, e);
	else if (!r)
		r = e->code;
	if (!r && fstree_join(p, tmp, "complete", e) == 0)
		r = write_file_synced(p, "", e);
	else if (!r)
		r = e->code;
	if (!r && paths(abs, id, out, e) == 0) {
		if (o->force)
			fstree_remove(out->dir);
		if (rename(tmp, out->dir) && errno != EEXIST && errno != ENOTEMPTY)
			r = err_set(e, -errno, "cannot rename '%s' to '%s': %s", tmp, out->dir, strerror(errno));
	} else if (!r) {
		r = e->code;
	}
	fstree_remove(tmp);	/* gone after the rename; a concurrent build's leftovers otherwise */
	if (r)
		return r;
	r = load(abs, id, out, e);
	if (!r)
		progress(o, "guest kernel %s (%s) built in %.0f s", id, out->release, mono_s() - t0);
	return r;
}
