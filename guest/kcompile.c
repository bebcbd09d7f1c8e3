#include "kcompile.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "harness.h"
#include "sysinfo.h"
#include "lib/fstree.h"

#define KC_TMPFS_MAGIC 0x01021994	/* linux/magic.h TMPFS_MAGIC */
#define KC_OUT_KEEP 4096		/* bytes of make's output kept (the end) */
#define KC_MARGIN (64ull << 20)		/* memory left to the rest of the system */

/*
 * The config targets a run may ask for: make targets of the kernel's own
 * Makefile that write a .config with no questions. Space: measured O= trees
 * here (tinyconfig mm/ 5 MiB, defconfig vmlinux ~1 GiB), with room to spare.
 */
static const struct {
	const char *name;
	unsigned long long space;	/* bytes of build directory and of memory */
} kc_configs[] = {
	{ "tinyconfig", 256ull << 20 },
	{ "allnoconfig", 256ull << 20 },
	{ "defconfig", 2048ull << 20 },
	{ "x86_64_defconfig", 2048ull << 20 },
	{ "i386_defconfig", 2048ull << 20 },
};

#define KC_NCONFIGS (sizeof(kc_configs) / sizeof(kc_configs[0]))

static const struct wl_param kc_params[] = {
	{ "config", WL_P_WORD, offsetof(struct kcompile_opts, config), "tinyconfig", 0, WL_WORD_MAX,
	  "config target made first, with make prepare, untimed: tinyconfig, allnoconfig, "
	  "defconfig, x86_64_defconfig, i386_defconfig" },
	{ "target", WL_P_WORD, offsetof(struct kcompile_opts, target), "mm/", 0, WL_WORD_MAX,
	  "what the timed make builds: a directory such as mm/ or a target such as vmlinux" },
	{ "jobs", WL_P_U64, offsetof(struct kcompile_opts, jobs), "0", 0, 256,
	  "make -j; 0 = the online CPUs" },
	{ "src", WL_P_WORD, offsetof(struct kcompile_opts, src), KC_SRC_DEFAULT, 0, WL_PATH_MAX,
	  "the pristine kernel source tree (absolute path; only read)" },
	{ "build-dir", WL_P_WORD, offsetof(struct kcompile_opts, build_dir), "/tmp", 0, WL_PATH_MAX,
	  "where each repetition's fresh O= tree is made (and removed after)" },
	{ "timeout", WL_P_U64, offsetof(struct kcompile_opts, timeout), "1200", 10, 24 * 3600,
	  "seconds one build may take (a kernel build under TCG takes minutes): the runner kills it then" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

static const struct wl_metric kc_metrics[] = {
	{ "config", "the config target (setup, untimed)" },
	{ "target", "the make target timed" },
	{ "jobs", "make -j" },
	{ "src", "the source tree" },
	{ "setup", "how the O= tree was set up: make (make CONFIG, make prepare) or prepared "
		   "(a copy of the tree the image build configured and prepared)" },
	{ "setup_s", "wall time of the setup (untimed part)" },
	{ "wall_s", "wall time of make TARGET, measured here" },
	{ "user_s", "user CPU time of make and the compilers it ran (wait4)" },
	{ "sys_s", "system CPU time of make and the compilers it ran (wait4): THP fault savings" },
	{ "minflt", "minor page faults of make and its children (wait4)" },
	{ "majflt", "major page faults of make and its children (wait4)" },
	{ "exit_status", "make's exit status (0: a result; else a fail record)" },
	{ "vm_pgfault", "/proc/vmstat pgfault delta over the build (whole system)" },
	{ "vm_thp_fault_alloc", "/proc/vmstat thp_fault_alloc delta (huge pages faulted in)" },
	{ "vm_thp_fault_fallback", "/proc/vmstat thp_fault_fallback delta" },
	{ "vm_thp_collapse_alloc", "/proc/vmstat thp_collapse_alloc delta (khugepaged)" },
	{ "huge_fault_pct", "thp_fault_alloc / (thp_fault_alloc + thp_fault_fallback) * 100 over the "
			    "build (whole system; 0 when no fault tried a huge page): the coverage "
			    "evidence" },
	{ "cov_note", "why huge_fault_pct is 0 or absent" },
	{ NULL, NULL },
};

int kc_huge_fault_pct(const struct guest_vmstat *before, const struct guest_vmstat *after, double *pct)
{
	uint64_t alloc, fallback;

	if (!before->have[GVM_THP_FAULT_ALLOC] || !after->have[GVM_THP_FAULT_ALLOC] ||
	    !before->have[GVM_THP_FAULT_FALLBACK] || !after->have[GVM_THP_FAULT_FALLBACK] ||
	    after->v[GVM_THP_FAULT_ALLOC] < before->v[GVM_THP_FAULT_ALLOC] ||
	    after->v[GVM_THP_FAULT_FALLBACK] < before->v[GVM_THP_FAULT_FALLBACK])
		return -ENOENT;
	alloc = after->v[GVM_THP_FAULT_ALLOC] - before->v[GVM_THP_FAULT_ALLOC];
	fallback = after->v[GVM_THP_FAULT_FALLBACK] - before->v[GVM_THP_FAULT_FALLBACK];
	*pct = alloc + fallback ? 100.0 * (double)alloc / (double)(alloc + fallback) : 0.0;
	return alloc + fallback ? 0 : -ENODATA;
}

bool kc_config_allowed(const char *config)
{
	size_t i;

	for (i = 0; i < KC_NCONFIGS; i++)
		if (!strcmp(kc_configs[i].name, config))
			return true;
	return false;
}

unsigned long long kc_space_needed(const char *config)
{
	size_t i;

	for (i = 0; i < KC_NCONFIGS; i++)
		if (!strcmp(kc_configs[i].name, config))
			return kc_configs[i].space;
	return 0;
}

int kc_target_check(const char *t, struct err *e)
{
	size_t i;

	if (!t[0])
		return err_set(e, -EINVAL, "empty --target: give a make target such as mm/ or vmlinux");
	if (t[0] == '-' || t[0] == '/' || t[0] == '.')
		return err_set(e, -EINVAL,
			       "bad --target '%s': it must not start with '-', '/' or '.' "
			       "(a directory such as mm/ or a target such as vmlinux)", t);
	if (strstr(t, ".."))
		return err_set(e, -EINVAL, "bad --target '%s': no '..' (stay in the tree)", t);
	for (i = 0; t[i]; i++) {
		char c = t[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '/' || c == '-'))
			return err_set(e, -EINVAL,
				       "bad --target '%s': use letters, digits and _./- only", t);
	}
	return 0;
}

/* [start, end) of a line: make's own messages ("make[2]: *** ...", "make: Leaving ...") */
static bool make_says(const char *l, size_t n)
{
	return n >= 4 && !strncmp(l, "make", 4) && memchr(l, ':', n);
}

static bool says_error(const char *l, size_t n)
{
	static const char *const words[] = { "error", "Error", "not found", "No such file",
					     "denied", "Read-only" };
	size_t i, w;

	for (w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
		size_t k = strlen(words[w]);

		for (i = 0; i + k <= n; i++)
			if (!memcmp(l + i, words[w], k))
				return true;
	}
	return false;
}

void kc_last_line(const char *text, size_t n, char *out, size_t len)
{
	size_t end = n, start = 0, k, i, pass;
	bool found = false;

	/* the last line that names an error, else the last that is not make's own, else the last */
	for (pass = 0; pass < 3 && !found; pass++) {
		size_t e = n;

		while (e > 0 && !found) {
			size_t s, t;

			while (e && (text[e - 1] == '\n' || text[e - 1] == '\r' || text[e - 1] == ' '))
				e--;
			s = e;
			while (s && text[s - 1] != '\n')
				s--;
			t = e - s;
			if (t && (pass == 2 || (!make_says(text + s, t) &&
						(pass == 1 || says_error(text + s, t))))) {
				start = s;
				end = e;
				found = true;
			}
			e = s;
		}
	}
	if (!found)
		end = start = 0;
	k = end - start < len - 1 ? end - start : len - 1;
	for (i = 0; i < k; i++) {
		unsigned char c = (unsigned char)text[start + i];

		out[i] = c >= 0x20 && c <= 0x7e ? (char)c : '?';
	}
	out[k] = '\0';
}

static bool path_ok(const char *p)
{
	return p[0] == '/' && !strstr(p, "..");
}

static int kc_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const struct kcompile_opts *a = opts;
	char path[WL_PATH_MAX + 600], have[32], need[32];
	unsigned long long space;
	uint64_t avail = 0, free_b;
	struct statvfs sv;
	struct statfs sf;
	int r;

	if (!kc_config_allowed(a->config))
		return err_set(e, -EINVAL,
			       "unknown --config '%s': use tinyconfig, allnoconfig, defconfig, "
			       "x86_64_defconfig or i386_defconfig", a->config);
	if ((r = kc_target_check(a->target, e)))
		return r;
	if (!path_ok(a->src))
		return err_set(e, -EINVAL, "bad --src '%s': an absolute path without '..'", a->src);
	if (!path_ok(a->build_dir))
		return err_set(e, -EINVAL, "bad --build-dir '%s': an absolute path without '..'",
			       a->build_dir);
	snprintf(path, sizeof(path), "%s%s", env->root, KC_MAKE);
	if (access(path, X_OK))
		return err_set(e, -EOPNOTSUPP, "no '%s' here: the kcompile image has the toolchain "
			       "(thpeval image build --kcompile)", path);
	snprintf(path, sizeof(path), "%s%s", env->root, KC_CC);
	if (access(path, X_OK))
		return err_set(e, -EOPNOTSUPP, "no '%s' here: the kcompile image has the toolchain "
			       "(thpeval image build --kcompile)", path);
	snprintf(path, sizeof(path), "%s%s/Makefile", env->root, a->src);
	if (access(path, R_OK))
		return err_set(e, -EOPNOTSUPP, "no kernel source at '%s%s' (%s): a kcompile guest "
			       "mounts the source disk there", env->root, a->src, strerror(errno));
	/* space for the O= tree, and memory for it when it is a tmpfs, and for gcc */
	space = kc_space_needed(a->config);
	snprintf(path, sizeof(path), "%s%s", env->root, a->build_dir);
	if (statvfs(path, &sv) || statfs(path, &sf))
		return err_set(e, -EOPNOTSUPP, "cannot use --build-dir '%s': %s", path,
			       strerror(errno));
	free_b = (uint64_t)sv.f_bavail * sv.f_frsize;
	fmt_size(space, need, sizeof(need));
	if (free_b < space) {
		fmt_size(free_b, have, sizeof(have));
		return err_set(e, -EOPNOTSUPP, "'%s' has %s free, a %s build needs %s", path, have,
			       a->config, need);
	}
	if (meminfo_get(env->root, "MemAvailable", &avail, NULL) ||
	    avail < space * ((unsigned long)sf.f_type == KC_TMPFS_MAGIC ? 2 : 1) + KC_MARGIN) {
		fmt_size(avail, have, sizeof(have));
		return err_set(e, -EOPNOTSUPP,
			       "%s available memory, a %s build needs %s%s + 64M (give the guest "
			       "more --memory)", have, a->config, need,
			       (unsigned long)sf.f_type == KC_TMPFS_MAGIC ? " x2 (its tree is on a tmpfs)"
									  : "");
	}
	return 0;
}

/* ---- running make ---------------------------------------------------------- */

struct kc_result {
	uint64_t wall_ns;
	struct rusage ru;
	int status;
	char tail[KC_TAIL_MAX];	/* the last line of make's output */
};

/* the last KC_OUT_KEEP bytes of make's output */
struct kc_keep {
	char buf[KC_OUT_KEEP];
	size_t have;
};

static void keep_tail(void *opaque, const char *chunk, size_t n)
{
	struct kc_keep *k = opaque;

	if (n >= sizeof(k->buf)) {
		memcpy(k->buf, chunk + n - sizeof(k->buf), sizeof(k->buf));
		k->have = sizeof(k->buf);
	} else {
		size_t drop = k->have + n > sizeof(k->buf) ? k->have + n - sizeof(k->buf) : 0;

		memmove(k->buf, k->buf + drop, k->have - drop);
		memcpy(k->buf + k->have - drop, chunk, n);
		k->have = k->have - drop + n;
	}
}

/* run path argv with stdout+stderr read here (the end kept); 0, or errno with e set */
static int run_make(const char *path, char *const argv[], struct kc_result *res, struct err *e)
{
	static char lc[] = "LC_ALL=C", pathv[] = "PATH=/usr/bin:/bin", home[] = "HOME=/tmp";
	/* fixed build identity: no whoami or hostname (a supermin root has no passwd) */
	static char user[] = "KBUILD_BUILD_USER=thpeval", host[] = "KBUILD_BUILD_HOST=thpeval";
	static char *const envp[] = { lc, pathv, home, user, host, NULL };
	static struct kc_keep keep;
	const struct child_opts o = { .envp = envp, .out_to_pipe = true, .err_to_pipe = true };
	struct child_result cr;
	int ret;

	memset(res, 0, sizeof(*res));
	keep.have = 0;
	ret = child_run(path, argv, &o, keep_tail, &keep, &cr, e);
	if (ret)
		return ret;
	res->status = cr.status;
	res->ru = cr.ru;
	res->wall_ns = cr.wall_ns;
	kc_last_line(keep.buf, keep.have, res->tail, sizeof(res->tail));
	return 0;
}

/* 0 when make exited 0; else -EIO with what and the last line of its output */
static int make_status(const struct kc_result *res, const char *what, struct err *e)
{
	if (WIFSIGNALED(res->status))
		return err_set(e, -EIO, "%s: make killed by signal %d (%s)", what,
			       WTERMSIG(res->status), strsignal(WTERMSIG(res->status)));
	if (!WIFEXITED(res->status) || WEXITSTATUS(res->status))
		return err_set(e, -EIO, "%s: make exited with status %d: %s", what,
			       WEXITSTATUS(res->status), res->tail[0] ? res->tail : "no output");
	return 0;
}

/* ---- the prepared tree ------------------------------------------------------ */

/*
 * <root><src>/KC_PREPARED_DIR/<config>, made at image build by make CONFIG and
 * make prepare with the source at the same path (its 'source' link says
 * which): usable only where that path is src. 0 with path set, or -ENOENT.
 */
static int prepared_tree(const struct kcompile_opts *a, const struct wl_env *env, char *path,
			 size_t len)
{
	char link[WL_PATH_MAX + 1], p[3 * WL_PATH_MAX + 16];
	ssize_t n;

	if ((size_t)snprintf(path, len, "%s%s/%s/%s", env->root, a->src, KC_PREPARED_DIR,
			     a->config) >= len)
		return -ENOENT;
	snprintf(p, sizeof(p), "%s/.config", path);
	if (access(p, R_OK))
		return -ENOENT;
	snprintf(p, sizeof(p), "%s/source", path);
	n = readlink(p, link, sizeof(link) - 1);
	if (n <= 0)
		return -ENOENT;
	link[n] = '\0';
	return strcmp(link, a->src) ? -ENOENT : 0;
}

static const char *copy_from, *copy_to;	/* for copy_one (nftw has no context) */
static int copy_errno;

static int copy_file(const char *from, const char *to, const struct stat *st)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out, ret = 0;
	ssize_t n;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, st->st_mode & 07777);
	if (out < 0) {
		ret = -errno;
		close(in);
		return ret;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			ret = -EIO;
			break;
		}
	if (n < 0)
		ret = -errno;
	if (!ret) {
		/* make compares times: the copy keeps the prepared tree's */
		struct timespec ts[2] = { st->st_atim, st->st_mtim };

		if (futimens(out, ts))
			ret = -errno;
	}
	close(in);
	if (close(out) && !ret)
		ret = -errno;
	return ret;
}

static int copy_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	char to[4 * WL_PATH_MAX], target[4 * WL_PATH_MAX];
	ssize_t n;
	int r = 0;

	(void)ftw;
	if ((size_t)snprintf(to, sizeof(to), "%s%s", copy_to, path + strlen(copy_from)) >= sizeof(to))
		r = -ENAMETOOLONG;
	else if (flag == FTW_D)
		r = !path[strlen(copy_from)] ? 0 : mkdir(to, st->st_mode & 07777) ? -errno : 0;
	else if (flag == FTW_SL) {
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0)
			r = -errno;
		else {
			target[n] = '\0';
			r = symlink(target, to) ? -errno : 0;
		}
	} else if (flag == FTW_F)
		r = copy_file(path, to, st);
	else
		r = -EIO;	/* unreadable entries */
	if (r)
		copy_errno = -r;
	return r ? 1 : 0;
}

/* a copy of the tree from into the (existing, empty) directory to; 0 or -errno */
static int copy_tree(const char *from, const char *to)
{
	copy_from = from;
	copy_to = to;
	copy_errno = 0;
	if (nftw(from, copy_one, 32, FTW_PHYS))
		return -(copy_errno ? copy_errno : EIO);
	return 0;
}

/* ---- one repetition -------------------------------------------------------- */

static double tv_s(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

static int build(const struct kcompile_opts *a, const struct wl_env *env, const char *odir,
		 unsigned jobs, struct record *res, struct err *e)
{
	char make[WL_PATH_MAX + 32], o_c[2 * WL_PATH_MAX + 8], o_o[2 * WL_PATH_MAX + 48], o_j[24];
	char a0[] = "make", o_s[] = "-s", o_cfg[WL_WORD_MAX], o_tgt[WL_WORD_MAX], what[160];
	char o_prep[] = "prepare", prepared[3 * WL_PATH_MAX];
	char *cfg_argv[] = { a0, o_s, o_c, o_o, o_cfg, NULL };
	char *prep_argv[] = { a0, o_s, o_c, o_o, o_j, o_prep, NULL };
	char *tgt_argv[] = { a0, o_c, o_o, o_j, o_tgt, NULL };
	struct kc_result cr, tr;
	struct guest_vmstat before, after;
	uint64_t t0 = harness_now_ns(), setup_ns;
	bool copied = false;
	int ret = 0;

	snprintf(make, sizeof(make), "%s%s", env->root, KC_MAKE);
	snprintf(o_c, sizeof(o_c), "-C%s%s", env->root, a->src);
	snprintf(o_o, sizeof(o_o), "O=%s", odir);
	snprintf(o_j, sizeof(o_j), "-j%u", jobs);
	snprintf(o_cfg, sizeof(o_cfg), "%s", a->config);
	snprintf(o_tgt, sizeof(o_tgt), "%s", a->target);

	/*
	 * setup, untimed: a configured and prepared tree (make CONFIG, make
	 * prepare), copied from the one the image build made where there is one
	 * for this source path (minutes of gcc probes saved under TCG), else made
	 */
	if (!prepared_tree(a, env, prepared, sizeof(prepared))) {
		if ((ret = copy_tree(prepared, odir)))
			return err_set(e, ret, "cannot copy the prepared tree '%s' to '%s': %s",
				       prepared, odir, strerror(-ret));
		copied = true;
	} else {
		if ((ret = run_make(make, cfg_argv, &cr, e)))
			return ret;
		snprintf(what, sizeof(what), "config step 'make %s'", a->config);
		if ((ret = make_status(&cr, what, e)))
			return ret;
		if ((ret = run_make(make, prep_argv, &cr, e)))
			return ret;
		snprintf(what, sizeof(what), "setup step 'make prepare' (%s)", a->config);
		if ((ret = make_status(&cr, what, e)))
			return ret;
	}
	setup_ns = harness_now_ns() - t0;

	guest_vmstat_read(env->root, &before);
	if ((ret = run_make(make, tgt_argv, &tr, e)))
		return ret;
	guest_vmstat_read(env->root, &after);
	snprintf(what, sizeof(what), "'make -j%u %s' (%s) after %.1f s", jobs, a->target,
		 a->config, (double)tr.wall_ns / 1e9);
	if ((ret = make_status(&tr, what, e)))
		return ret;

	ret |= rec_add_str(res, "config", a->config);
	ret |= rec_add_str(res, "target", a->target);
	ret |= rec_add_u64(res, "jobs", jobs);
	ret |= rec_add_str(res, "src", a->src);
	ret |= rec_add_str(res, "setup", copied ? "prepared" : "make");
	ret |= rec_add_f64(res, "setup_s", (double)setup_ns / 1e9);
	ret |= rec_add_f64(res, "wall_s", (double)tr.wall_ns / 1e9);
	ret |= rec_add_f64(res, "user_s", tv_s(&tr.ru.ru_utime));
	ret |= rec_add_f64(res, "sys_s", tv_s(&tr.ru.ru_stime));
	ret |= rec_add_u64(res, "minflt", (uint64_t)tr.ru.ru_minflt);
	ret |= rec_add_u64(res, "majflt", (uint64_t)tr.ru.ru_majflt);
	ret |= rec_add_u64(res, "exit_status", 0);
	ret |= guest_vmstat_add(res, "vm_", &before, &after);
	{
		double pct = 0;
		int r = kc_huge_fault_pct(&before, &after, &pct);

		if (r != -ENOENT)
			ret |= rec_add_f64(res, "huge_fault_pct", pct);
		if (r == -ENOENT)
			ret |= rec_add_str(res, "cov_note", "no thp_fault_alloc and thp_fault_fallback "
							    "in /proc/vmstat");
		else if (r == -ENODATA)
			ret |= rec_add_str(res, "cov_note", "no page fault of the build tried a huge page");
	}
	if (ret)
		return err_set(e, -EINVAL, "cannot build the kcompile record");
	return 0;
}

static int kc_run(const void *opts, const struct wl_env *env, struct record *res, struct err *e)
{
	const struct kcompile_opts *a = opts;
	char odir[2 * WL_PATH_MAX + 32];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned jobs = a->jobs ? (unsigned)a->jobs : (unsigned)(cpus > 0 ? cpus : 1);
	int ret;

	/* a fresh O= tree every repetition; the source tree is only read */
	snprintf(odir, sizeof(odir), "%s%s/thpeval-kc-XXXXXX", env->root, a->build_dir);
	if (!mkdtemp(odir))
		return err_set(e, -errno, "cannot create a build directory in '%s%s': %s", env->root,
			       a->build_dir, strerror(errno));
	ret = build(a, env, odir, jobs, res, e);
	fstree_remove(odir);
	return ret;
}

const struct workload wl_kcompile = {
	.name = "kcompile",
	.description = "a real Linux build: make CONFIG and make prepare (untimed) then make "
		       "-jJOBS TARGET in a fresh O= tree of a pristine source; wall, user and sys "
		       "time and page faults of the build (wait4), /proc/vmstat deltas",
	.params = kc_params,
	.opts_size = sizeof(struct kcompile_opts),
	.metrics = kc_metrics,
	.check = kc_check,
	.run = kc_run,
};
