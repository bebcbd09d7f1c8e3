#include "dd.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
#include "lib/fstree.h"
#include "lib/parse.h"
#include "prng.h"
#include "region.h"
#include "sysinfo.h"

#define DD_TMPFS_MAGIC 0x01021994	/* linux/magic.h TMPFS_MAGIC */
#define DD_NBS 4

enum dd_target { DD_NULL, DD_TMPFS, DD__TARGETS };

static const char *const target_names[] = { [DD_NULL] = "null", [DD_TMPFS] = "tmpfs" };
_Static_assert(sizeof(target_names) / sizeof(target_names[0]) == DD__TARGETS,
	       "target_names out of sync with enum dd_target");

static const struct {
	uint64_t bytes;
	const char *name;	/* as dd's bs= takes it, and in the variant */
} block_sizes[DD_NBS] = {
	{ 4096, "4K" }, { 65536, "64K" }, { 1u << 20, "1M" }, { 2u << 20, "2M" },
};

static const struct wl_param dd_params[] = {
	/* a default that keeps the slowest run (bs 4K to tmpfs) to seconds under TCG (bench/README.md) */
	{ "volume", WL_P_SIZE, offsetof(struct dd_opts, volume), "128M", 2u << 20, 1ull << 40,
	  "bytes each dd run moves (a multiple of 2M; count = volume / bs)" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

static const struct wl_metric dd_metrics[] = {
	{ "variant", "<dest>-<bs>: null-4k ... tmpfs-2m (one record each)" },
	{ "dest", "null (of=/dev/null) or tmpfs (of=a file on a tmpfs, deleted after)" },
	{ "dest_path", "the of= path" },
	{ "bs_bytes", "dd's bs=" },
	{ "count", "dd's count=" },
	{ "bytes", "bytes moved (bs x count)" },
	{ "elapsed_ns", "wall time from fork to wait4, measured here" },
	{ "mib_s", "bytes / elapsed, measured here" },
	{ "user_us", "dd's user CPU time (wait4)" },
	{ "sys_us", "dd's system CPU time (wait4)" },
	{ "minflt", "dd's minor page faults (wait4)" },
	{ "dd_reported_bytes", "the byte count dd printed (cross-check only; absent if unreadable)" },
	{ "shmem_enabled", "tmpfs: THP shmem_enabled when dd ran" },
	{ "tmpfs_huge", "tmpfs: the huge= option of the tmpfs mount (never when it has none)" },
	{ "tmpfs_huge_want", "tmpfs: 1 if shmem_enabled and the mount ask for huge pages for a file "
			     "dd writes with this bs, else 0" },
	{ "tmpfs_huge_pct", "tmpfs: ShmemHugePages grown while dd wrote the file, over its size, "
			    "* 100 (whole system): the file's huge page coverage" },
	{ "cov_note", "why the coverage of the memory measured is not known (the /dev/null runs: "
		      "dd's own buffer)" },
	{ NULL, NULL },
};

/* the mount that holds path: the longest mount point that is path or a parent of it */
int dd_mount_huge(const char *root, const char *path, char *out, size_t len)
{
	char file[600], line[1024], best_opts[512] = "";
	size_t best = 0, lines = 0;
	bool found = false;
	FILE *f;

	snprintf(file, sizeof(file), "%s/proc/self/mounts", root);
	f = fopen(file, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f) && ++lines < 10000) {
		char *save = NULL, *dev = strtok_r(line, " ", &save), *mnt = strtok_r(NULL, " ", &save);
		char *type = strtok_r(NULL, " ", &save), *opts = strtok_r(NULL, " ", &save);
		size_t n;

		if (!dev || !mnt || !type || !opts)
			continue;
		n = strlen(mnt);
		/* "/" holds everything; "/tmp" holds "/tmp" and "/tmp/x", not "/tmpx" */
		if (strncmp(path, mnt, n) || (n > 1 && path[n] && path[n] != '/'))
			continue;
		if (found && n < best)
			continue;
		found = true;
		best = n;	/* a later mount on the same point hides the earlier one */
		snprintf(best_opts, sizeof(best_opts), "%s", opts);
	}
	fclose(f);
	if (!found)
		return -ENOENT;
	snprintf(out, len, "never");
	{
		char *save = NULL, *o;

		for (o = strtok_r(best_opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
			if (!strncmp(o, "huge=", 5))
				snprintf(out, len, "%s", o + 5);
	}
	return 0;
}

bool dd_tmpfs_want_huge(const char *shmem_enabled, const char *mount_huge, uint64_t bs)
{
	if (!strcmp(shmem_enabled, "force"))
		return true;
	if (!strcmp(shmem_enabled, "deny") || !strcmp(shmem_enabled, THP_UNSUPPORTED))
		return false;
	if (!strcmp(mount_huge, "always"))
		return true;
	return !strcmp(mount_huge, "within_size") && bs % REGION_HUGE == 0;
}

int dd_parse_bytes(const char *text, uint64_t *bytes)
{
	const char *line = text;
	int ret = -EINVAL;

	while (line && *line) {
		const char *nl = strchr(line, '\n');
		size_t n = strspn(line, "0123456789");
		char num[24];
		uint64_t v;

		if (n > 0 && n < sizeof(num) && !strncmp(line + n, " bytes", 6)) {
			memcpy(num, line, n);
			num[n] = '\0';
			if (!parse_u64(num, &v)) {
				*bytes = v;
				ret = 0;	/* the last such line wins */
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	return ret;
}

static int dd_path(const char *root, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s%s", root, DD_PATH);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static int dd_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const struct dd_opts *a = opts;
	char path[512], s[32];

	fmt_size(a->volume, s, sizeof(s));
	if (a->volume % REGION_HUGE)
		return err_set(e, -EINVAL, "volume %s is not a multiple of 2M (the largest bs)", s);
	if (dd_path(env->root, path, sizeof(path)))
		return err_set(e, -ENAMETOOLONG, "root path too long");
	if (access(path, X_OK))
		return err_set(e, -EOPNOTSUPP, "no executable '%s' here (coreutils): %s", path,
			       strerror(errno));
	return 0;
}

/* "<root>/tmp" or "<root>/dev/shm" when it is a tmpfs; "" and why otherwise */
static void find_tmpfs(const char *root, char *dir, size_t len, char *why, size_t wlen)
{
	static const char *const cand[] = { "/tmp", "/dev/shm" };
	struct statfs sf;
	size_t i;

	for (i = 0; i < sizeof(cand) / sizeof(cand[0]); i++) {
		snprintf(dir, len, "%s%s", root, cand[i]);
		if (!statfs(dir, &sf) && (unsigned long)sf.f_type == DD_TMPFS_MAGIC)
			return;
	}
	dir[0] = '\0';
	snprintf(why, wlen, "neither '%s/tmp' nor '%s/dev/shm' is a tmpfs", root, root);
}

/* room for the file on the tmpfs and in memory; "" or why not */
static void tmpfs_room(const char *root, const char *dir, uint64_t volume, char *why, size_t wlen)
{
	char v[32], have[32];
	struct statvfs sv;
	uint64_t avail, free_b;

	fmt_size(volume, v, sizeof(v));
	if (statvfs(dir, &sv)) {
		snprintf(why, wlen, "cannot statvfs '%s': %s", dir, strerror(errno));
		return;
	}
	free_b = (uint64_t)sv.f_bavail * sv.f_frsize;
	if (free_b < volume + DD_MARGIN) {
		fmt_size(free_b, have, sizeof(have));
		snprintf(why, wlen, "'%s' has %s free, %s + 32M needed", dir, have, v);
		return;
	}
	if (meminfo_get(root, "MemAvailable", &avail, NULL) || avail < volume + DD_MARGIN) {
		fmt_size(avail, have, sizeof(have));
		snprintf(why, wlen, "a %s tmpfs file needs memory: %s available, 32M kept free", v,
			 have);
		return;
	}
	why[0] = '\0';
}

struct dd_result {
	uint64_t elapsed_ns;
	struct rusage ru;
	bool have_reported;
	uint64_t reported;
	char err_tail[120];	/* the end of dd's stderr, for a failure message */
};

/* the first DD_STDERR_MAX bytes of dd's stderr; the rest is drained */
struct dd_text {
	char buf[DD_STDERR_MAX + 1];
	size_t have;
};

static void keep_head(void *opaque, const char *chunk, size_t n)
{
	struct dd_text *t = opaque;
	size_t k = n < DD_STDERR_MAX - t->have ? n : DD_STDERR_MAX - t->have;

	memcpy(t->buf + t->have, chunk, k);
	t->have += k;
}

/* run dd with argv; res filled; 0, or a negative errno with e set */
static int run_dd(const char *path, char *const argv[], struct dd_result *res, struct err *e)
{
	static char lc[] = "LC_ALL=C", pathv[] = "PATH=/usr/bin:/bin";
	static char *const envp[] = { lc, pathv, NULL };
	const struct child_opts o = { .envp = envp, .err_to_pipe = true };
	struct dd_text dt = { .have = 0 };
	struct child_result cr;
	char *text = dt.buf;
	size_t have, tail;
	int status, ret;
	ssize_t n;

	memset(res, 0, sizeof(*res));
	ret = child_run(path, argv, &o, keep_head, &dt, &cr, e);
	if (ret)
		return ret;
	status = cr.status;
	res->ru = cr.ru;
	res->elapsed_ns = cr.wall_ns;
	have = dt.have;
	text[have] = '\0';
	/* the last line of stderr, printable characters only, for messages */
	while (have && (text[have - 1] == '\n' || text[have - 1] == ' '))
		text[--have] = '\0';
	tail = have;
	while (tail && text[tail - 1] != '\n')
		tail--;
	snprintf(res->err_tail, sizeof(res->err_tail), "%.119s", text + tail);
	for (n = 0; res->err_tail[n]; n++)
		if ((unsigned char)res->err_tail[n] < 0x20 || (unsigned char)res->err_tail[n] > 0x7e)
			res->err_tail[n] = '?';
	if (WIFSIGNALED(status))
		return err_set(e, -EIO, "dd killed by signal %d (%s)", WTERMSIG(status),
			       strsignal(WTERMSIG(status)));
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return err_set(e, -EIO, "dd exited with status %d: %s", WEXITSTATUS(status),
			       res->err_tail[0] ? res->err_tail : "no message");
	res->have_reported = !dd_parse_bytes(text, &res->reported);
	return 0;
}

static uint64_t tv_us(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;
}

static void variant_name(enum dd_target t, size_t b, char *buf, size_t len)
{
	size_t i, n;

	n = (size_t)snprintf(buf, len, "%s-%s", target_names[t], block_sizes[b].name);
	for (i = 0; i < n && i < len; i++)
		if (buf[i] >= 'A' && buf[i] <= 'Z')
			buf[i] = (char)(buf[i] - 'A' + 'a');
}

/* the coverage evidence of the memory a run's speed depends on, or why there is none */
static int add_coverage(const struct wl_env *env, enum dd_target t, const char *tmpdir, uint64_t bs,
			const char *shm, bool have_shm, uint64_t shm0, uint64_t shm1, uint64_t volume,
			struct record *r)
{
	size_t rootlen = strlen(env->root);
	char huge[32];
	double pct;
	int ret = 0;

	if (t == DD_NULL)
		return rec_add_str(r, "cov_note", "dd's own buffer is in the dd process: its page sizes "
					       "are not read from outside");
	if (dd_mount_huge(env->root, tmpdir + rootlen, huge, sizeof(huge)))
		snprintf(huge, sizeof(huge), "unknown");
	ret |= rec_add_str(r, "tmpfs_huge", huge);
	if (strcmp(huge, "unknown"))
		ret |= rec_add_u64(r, "tmpfs_huge_want", dd_tmpfs_want_huge(shm, huge, bs));
	if (!have_shm)
		return ret | rec_add_str(r, "cov_note", "no ShmemHugePages in /proc/meminfo");
	pct = shm1 > shm0 ? 100.0 * (double)(shm1 - shm0) / (double)volume : 0.0;
	return ret | rec_add_f64(r, "tmpfs_huge_pct", pct > 100 ? 100 : pct);
}

static int one(const struct dd_opts *a, const struct wl_env *env, enum dd_target t, size_t b,
	       const char *tmpdir, const char *filedir, const char *skip_why, struct err *e)
{
	uint64_t bs = block_sizes[b].bytes, count = a->volume / bs;
	char path[512], of[600], o_if[600], o_of[640], o_bs[32], o_count[40], variant[32];
	char shm[THP_VALUE_MAX];
	uint64_t shm0 = 0, shm1 = 0;
	bool have_shm;
	char a0[] = "dd", o_excl[] = "conv=excl", o_nofollow[] = "oflag=nofollow";
	/* the file: made by dd itself, never over anything there nor through a link (the
	 * /dev/null runs end at the NULL) */
	char *argv[] = { a0, o_if, o_of, o_bs, o_count, t == DD_TMPFS ? o_excl : NULL, o_nofollow, NULL };
	struct dd_result res;
	struct record r;
	struct stat st;
	int ret = 0;

	variant_name(t, b, variant, sizeof(variant));
	if (t == DD_TMPFS && skip_why[0]) {
		harness_record_init(env, REC_SKIP, &r);
		rec_add_str(&r, "variant", variant);
		rec_add_str(&r, "dest", target_names[t]);
		rec_add_str(&r, "reason", skip_why);
		return harness_emit(env, &r, e);
	}
	dd_path(env->root, path, sizeof(path));
	if (t == DD_NULL)
		snprintf(of, sizeof(of), "%s/dev/null", env->root);
	else
		snprintf(of, sizeof(of), "%s/%s", filedir, DD_FILE);
	snprintf(o_if, sizeof(o_if), "if=%.500s/dev/zero", env->root);
	snprintf(o_of, sizeof(o_of), "of=%s", of);
	snprintf(o_bs, sizeof(o_bs), "bs=%s", block_sizes[b].name);
	snprintf(o_count, sizeof(o_count), "count=%" PRIu64, count);
	thp_knob_get(env->root, "shmem_enabled", shm, sizeof(shm), NULL);
	have_shm = t == DD_TMPFS && !meminfo_get(env->root, "ShmemHugePages", &shm0, NULL);
	ret = run_dd(path, argv, &res, e);
	if (!ret && t == DD_TMPFS && (stat(of, &st) || (uint64_t)st.st_size != a->volume))
		ret = err_set(e, -EIO, "dd left '%s' with %lld bytes, %" PRIu64 " expected", of,
			      (long long)st.st_size, a->volume);
	/* while the file is there: the huge pages the tmpfs gave it */
	have_shm = have_shm && !ret && !meminfo_get(env->root, "ShmemHugePages", &shm1, NULL);
	if (t == DD_TMPFS)
		unlink(of);
	if (ret)
		return err_wrap(e, "dd %s", variant);

	harness_record_init(env, REC_RESULT, &r);
	ret |= rec_add_str(&r, "variant", variant);
	ret |= rec_add_str(&r, "dest", target_names[t]);
	ret |= rec_add_str(&r, "dest_path", of);
	ret |= rec_add_u64(&r, "bs_bytes", bs);
	ret |= rec_add_u64(&r, "count", count);
	ret |= rec_add_u64(&r, "bytes", bs * count);
	ret |= rec_add_u64(&r, "elapsed_ns", res.elapsed_ns);
	ret |= rec_add_f64(&r, "mib_s", (double)(bs * count) / (1024.0 * 1024.0) /
					     ((double)(res.elapsed_ns ? res.elapsed_ns : 1) / 1e9));
	ret |= rec_add_u64(&r, "user_us", tv_us(&res.ru.ru_utime));
	ret |= rec_add_u64(&r, "sys_us", tv_us(&res.ru.ru_stime));
	ret |= rec_add_u64(&r, "minflt", (uint64_t)res.ru.ru_minflt);
	if (res.have_reported)
		ret |= rec_add_u64(&r, "dd_reported_bytes", res.reported);
	if (t == DD_TMPFS)
		ret |= rec_add_str(&r, "shmem_enabled", shm);
	ret |= add_coverage(env, t, tmpdir, bs, shm, have_shm, shm0, shm1, a->volume, &r);
	if (ret)
		return err_set(e, -EINVAL, "cannot build the %s record", variant);
	return harness_emit(env, &r, e);
}

/*
 * The directories of killed runs, each with up to a volume of tmpfs memory:
 * only ours (owner, 0700, DD_DIR_PREFIX), removed without following links
 */
static void remove_stale(const char *tmpdir)
{
	size_t plen = strlen(DD_DIR_PREFIX);
	struct dirent *de;
	DIR *d = opendir(tmpdir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		char path[800];
		struct stat st;

		if (strncmp(de->d_name, DD_DIR_PREFIX, plen) || strlen(de->d_name) != plen + 6)
			continue;
		snprintf(path, sizeof(path), "%s/%s", tmpdir, de->d_name);
		if (!lstat(path, &st) && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
		    (st.st_mode & 07777) == 0700)
			fstree_remove(path);
	}
	closedir(d);
}

static int dd_run(const void *opts, const struct wl_env *env, struct record *res, struct err *e)
{
	const struct dd_opts *a = opts;
	unsigned char order[DD__TARGETS * DD_NBS];
	char tmpdir[512], filedir[540] = "", why[256] = "";
	uint64_t st = prng_mix(env->common->seed ^ 0xddu);
	size_t i;
	int ret = 0;

	find_tmpfs(env->root, tmpdir, sizeof(tmpdir), why, sizeof(why));
	if (tmpdir[0])
		tmpfs_room(env->root, tmpdir, a->volume, why, sizeof(why));
	/*
	 * dd's file goes in a directory of this run's own (0700): the tmpfs is
	 * world-writable (/dev/shm on a bare host), where a fixed name could be
	 * a link someone planted
	 */
	if (tmpdir[0] && !why[0]) {
		remove_stale(tmpdir);
		snprintf(filedir, sizeof(filedir), "%s/" DD_DIR_PREFIX "XXXXXX", tmpdir);
		if (!mkdtemp(filedir)) {
			snprintf(why, sizeof(why), "cannot create a directory in '%s': %s", tmpdir,
				 strerror(errno));
			filedir[0] = '\0';
		}
	}
	/* the variants in a seeded random order */
	for (i = 0; i < sizeof(order); i++)
		order[i] = (unsigned char)i;
	for (i = sizeof(order) - 1; i > 0; i--) {
		size_t j = (size_t)prng_below(&st, i + 1);
		unsigned char x = order[i];

		order[i] = order[j];
		order[j] = x;
	}
	for (i = 0; i < sizeof(order); i++) {
		ret = one(a, env, (enum dd_target)(order[i] / DD_NBS), order[i] % DD_NBS, tmpdir,
			  filedir, why, e);
		if (ret)
			break;
	}
	if (filedir[0])
		fstree_remove(filedir);
	(void)res;	/* one record per variant, no summary */
	return ret;
}

const struct workload wl_dd = {
	.name = "dd",
	.description = "the real coreutils dd: if=/dev/zero to /dev/null and to a tmpfs file, "
		       "bs 4K, 64K, 1M, 2M; MiB/s measured here, dd's user/sys time from "
		       "wait4 (one record per destination and bs)",
	.params = dd_params,
	.opts_size = sizeof(struct dd_opts),
	.metrics = dd_metrics,
	.check = dd_check,
	.run = dd_run,
};
