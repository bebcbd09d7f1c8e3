#include "pgbench.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "appsrv.h"
#include "harness.h"
#include "sysinfo.h"
#include "lib/fstree.h"
#include "lib/parse.h"

#define PG_PORT "5432"			/* in a directory of its own: no clash */
#define PG_START_MS 300000u		/* postmaster.pid says ready within this (TCG) */
#define PG_STOP_MS 120000u		/* a fast shutdown ends within this */
#define PG_STEP_MS 3600000u		/* initdb, pgbench -i, a copy: each within this */
#define PG_MARGIN (128ull << 20)	/* memory left to the system */
#define PG_MAX_PROCS 256		/* postgres processes sampled at most */
#define PG_IMAGE_MARK "/etc/thpeval-image"	/* a thpeval guest root (images/gfs.c writes it) */
#define PG_UID 999			/* the user written into a thpeval guest's /etc/passwd */

static const struct wl_param pg_params[] = {
	{ "scale", WL_P_U64, offsetof(struct pgbench_opts, scale), "4", 1, 100000,
	  "pgbench -i -s: about 15 MiB of tables and indexes per unit, more than --shared-buffers" },
	{ "shared-buffers", WL_P_SIZE, offsetof(struct pgbench_opts, shared_buffers), "16M", 1ull << 20,
	  1ull << 40, "PostgreSQL shared_buffers (shared memory: shmem_enabled rules it)" },
	{ "seconds", WL_P_U64, offsetof(struct pgbench_opts, seconds), "8", 1, 86400,
	  "pgbench -T: seconds of select-only, then of TPC-B-like transactions" },
	{ "clients", WL_P_U64, offsetof(struct pgbench_opts, clients), "1", 1, 1000,
	  "pgbench -c (and -j, up to the online CPUs)" },
	{ "template", WL_P_WORD, offsetof(struct pgbench_opts, template), "auto", 0, WL_WORD_MAX,
	  "yes: the first run keeps a pristine cluster under --dir that later runs copy (left there); "
	  "no: initdb and pgbench -i every run; auto: yes in a thpeval guest (gone with it), no "
	  "elsewhere" },
	{ "shmem-thp", WL_P_WORD, offsetof(struct pgbench_opts, shmem_thp), "keep", 0, WL_WORD_MAX,
	  "shmem_enabled for the run (always, within_size, advise, never, deny, force; restored "
	  "after; the variant is shmem-VALUE), or keep" },
	{ "user", WL_P_WORD, offsetof(struct pgbench_opts, user), "postgres", 0, WL_WORD_MAX,
	  "the user PostgreSQL runs as (from /etc/passwd; a thpeval guest gets one)" },
	{ "dir", WL_P_WORD, offsetof(struct pgbench_opts, dir), "/tmp", 0, WL_PATH_MAX,
	  "where each run's directory (cluster, socket, logs) and the template are made" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

static const struct wl_metric pg_metrics[] = {
	{ "variant", "shmem-VALUE when --shmem-thp set shmem_enabled for the run" },
	{ "pg_version", "the PostgreSQL major version run" },
	{ "scale", "pgbench scaling factor" },
	{ "shared_buffers_bytes", "shared_buffers" },
	{ "db_bytes", "bytes of the database's files (more than shared_buffers)" },
	{ "clients", "pgbench -c" },
	{ "seconds", "pgbench -T per mode" },
	{ "setup", "how the cluster was made: init (initdb, pgbench -i) or copy (of the template)" },
	{ "setup_s", "wall time of the setup (untimed part)" },
	{ "shmem_enabled", "/sys/kernel/mm/transparent_hugepage/shmem_enabled during the run" },
	{ "shmem_huge_want", "1 where shmem_enabled gives shared memory huge pages (always, "
			     "within_size, force), 0 where not" },
	{ "select_tx_per_s", "select-only (-S) transactions per second (without connection time)" },
	{ "select_lat_ms", "select-only latency average (the split's access phase)" },
	{ "select_tx", "select-only transactions processed" },
	{ "tpcb_tx_per_s", "TPC-B-like transactions per second (without connection time)" },
	{ "tpcb_lat_ms", "TPC-B-like latency average" },
	{ "tpcb_tx", "TPC-B-like transactions processed" },
	{ "shm_rss_bytes", "Rss of the shared buffers' mapping summed over the postgres processes "
			   "(the sample with the most)" },
	{ "shm_pmd_bytes", "ShmemPmdMapped of that mapping summed likewise" },
	{ "shmem_pmd_pct", "shm_pmd_bytes / shm_rss_bytes * 100: the coverage evidence" },
	{ "shmem_huge_bytes", "the most /proc/meminfo ShmemHugePages seen while pgbench ran (whole system)" },
	{ "cov_note", "why shmem_pmd_pct is absent" },
	{ NULL, NULL },
};

/* ---- pure parts (the parsers are in pgbench_parse.c) ------------------------ */

int pg_find_version(const char *libdir, unsigned *version)
{
	static const char *const progs[] = { "postgres", "initdb", "pgbench" };
	DIR *d = opendir(libdir);
	struct dirent *de;
	bool found = false;

	if (!d)
		return -ENOENT;
	while ((de = readdir(d))) {
		char path[WL_PATH_MAX + 300];
		uint64_t v;
		size_t i;
		bool ok = true;

		if (parse_u64(de->d_name, &v) || v == 0 || v > 1000)
			continue;
		for (i = 0; i < 3 && ok; i++) {
			snprintf(path, sizeof(path), "%s/%s/bin/%s", libdir, de->d_name, progs[i]);
			ok = !access(path, X_OK);
		}
		if (ok && (!found || v > *version)) {
			*version = (unsigned)v;
			found = true;
		}
	}
	closedir(d);
	return found ? 0 : -ENOENT;
}

/* whether runs copy a template: yes, no, or auto (yes in a thpeval guest, which takes it along) */
static bool pg_template(const struct pgbench_opts *a, const struct wl_env *env)
{
	char mark[WL_PATH_MAX];

	if (strcmp(a->template, "auto"))
		return !strcmp(a->template, "yes");
	snprintf(mark, sizeof(mark), "%s%s", env->root, PG_IMAGE_MARK);
	return !access(mark, F_OK);
}

/* ---- the user ---------------------------------------------------------------- */

/*
 * The user's ids from <root>/etc/passwd. A thpeval guest root has no passwd
 * (supermin writes none) and initdb needs the user it runs as to have a
 * name: there, and only there (PG_IMAGE_MARK and no passwd at all), write
 * one with root and the user when create is true.
 */
static int pg_user(const char *root, const char *name, bool create, struct appsrv_user *u, struct err *e)
{
	char path[WL_PATH_MAX], buf[65536], text[512];
	size_t n;
	int r;

	u->set = true;
	snprintf(path, sizeof(path), "%s/etc/passwd", root);
	r = appsrv_read_file(path, buf, sizeof(buf), &n, NULL);
	if (r == -ENOENT) {
		char mark[WL_PATH_MAX];

		snprintf(mark, sizeof(mark), "%s%s", root, PG_IMAGE_MARK);
		if (access(mark, F_OK))
			return err_set(e, -EOPNOTSUPP, "no '%s': PostgreSQL needs its user '%s' in it", path, name);
		if (!strcmp(name, "root"))
			return err_set(e, -EINVAL, "--user=root: PostgreSQL refuses to run as root");
		u->uid = PG_UID;
		u->gid = PG_UID;
		if (!create)
			return 0;
		snprintf(text, sizeof(text), "root:x:0:0:root:/root:/bin/sh\n%s:x:%d:%d:thpeval pgbench:/tmp:/bin/sh\n",
			 name, PG_UID, PG_UID);
		if (write_file_atomic(path, text, strlen(text), 0644, e))
			return err_wrap(e, "cannot give the guest a user '%s'", name);
		snprintf(path, sizeof(path), "%s/etc/group", root);
		snprintf(text, sizeof(text), "root:x:0:\n%s:x:%d:\n", name, PG_UID);
		if (access(path, F_OK) && write_file_atomic(path, text, strlen(text), 0644, e))
			return err_wrap(e, "cannot give the guest a group '%s'", name);
		return 0;
	}
	if (r)
		return err_set(e, -EOPNOTSUPP, "cannot read '%s': %s", path, strerror(-r));
	r = passwd_find(buf, n, name, &u->uid, &u->gid);
	if (r == -ENOENT)
		return err_set(e, -EOPNOTSUPP, "no user '%s' in '%s': give PostgreSQL a user with --user", name,
			       path);
	if (r)
		return err_set(e, -EBADMSG, "the line of user '%s' in '%s' is malformed", name, path);
	if (u->uid == 0)
		return err_set(e, -EINVAL, "--user=%s is uid 0: PostgreSQL refuses to run as root", name);
	return 0;
}

/* ---- the run ------------------------------------------------------------------ */

struct pg_sample {
	uint64_t rss, pmd;
	bool have_pmd;
	unsigned samples;
	uint64_t shmem_huge;	/* the most /proc/meminfo ShmemHugePages seen */
	bool have_shmem_huge;
	char note[120];
};

struct pg_run {
	const struct pgbench_opts *a;
	const struct wl_env *env;
	struct appsrv_user user;
	unsigned version;
	char bin[WL_PATH_MAX + 64];	/* <root>/usr/lib/postgresql/N/bin */
	char base[WL_PATH_MAX + 64];	/* this run's directory: data, socket, logs */
	char data[WL_PATH_MAX + 80];
	char log[WL_PATH_MAX + 80];
	char envhome[WL_PATH_MAX + 80];
	char *envp[5];
	pid_t pid;
	struct pg_sample best;		/* the sample with the most shared Rss */
	struct appsrv_out out;
};

static char pg_env_path[] = "PATH=/usr/bin:/bin", pg_env_lc[] = "LC_ALL=C", pg_env_tz[] = "TZ=UTC";

static int pg_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const struct pgbench_opts *a = opts;
	char lib[WL_PATH_MAX], need[32], have[32];
	struct appsrv_user u;
	struct stat st;
	unsigned v;
	uint64_t avail, want, db = a->scale * PG_SCALE_BYTES;
	int r;

	if (a->dir[0] != '/' || strstr(a->dir, ".."))
		return err_set(e, -EINVAL, "bad --dir '%s': an absolute path without '..'", a->dir);
	if (!pg_shmem_value_valid(a->shmem_thp))
		return err_set(e, -EINVAL, "bad --shmem-thp '%s': keep, always, within_size, advise, never, "
			       "deny or force", a->shmem_thp);
	if (db <= a->shared_buffers) {
		fmt_size(db, need, sizeof(need));
		fmt_size(a->shared_buffers, have, sizeof(have));
		return err_set(e, -EINVAL, "--scale=%" PRIu64 " makes about %s of tables, not more than "
			       "--shared-buffers=%s: the buffers would hold it all", a->scale, need, have);
	}
	snprintf(lib, sizeof(lib), "%s%s", env->root, PG_LIBDIR);
	if (pg_find_version(lib, &v))
		return err_set(e, -EOPNOTSUPP, "no PostgreSQL under '%s' (N/bin/postgres, initdb, pgbench): "
			       "the guest image needs postgresql (thpeval run adds it for the pgbench "
			       "workload; install it on the host)", lib);
	if ((r = pg_user(env->root, a->user, false, &u, e)))
		return r;
	if (geteuid() && geteuid() != u.uid)
		return err_set(e, -EOPNOTSUPP, "PostgreSQL runs as '%s': switching to that user needs root",
			       a->user);
	snprintf(lib, sizeof(lib), "%s%s", env->root, a->dir);
	if (stat(lib, &st) || !S_ISDIR(st.st_mode))
		return err_set(e, -EINVAL, "bad --dir '%s': not a directory", lib);
	if (!(st.st_mode & S_IXOTH) && st.st_uid != u.uid)
		return err_set(e, -EINVAL, "bad --dir '%s': user '%s' cannot enter it (mode %o)", lib, a->user,
			       (unsigned)(st.st_mode & 07777));
	if (a->shmem_thp[0] && strcmp(a->shmem_thp, "keep") && geteuid())
		return err_set(e, -EOPNOTSUPP, "--shmem-thp=%s writes shmem_enabled: it needs root", a->shmem_thp);
	if (strcmp(a->template, "auto") && strcmp(a->template, "yes") && strcmp(a->template, "no"))
		return err_set(e, -EINVAL, "bad --template '%s': auto, yes or no", a->template);
	/* the run's cluster and the template, on a tmpfs in a guest; the buffers; the system */
	want = db * (pg_template(a, env) ? 3 : 2) + a->shared_buffers + PG_MARGIN;
	if (meminfo_get(env->root, "MemAvailable", &avail, e))
		return err_wrap(e, "cannot check the cluster against available memory");
	if (want > avail) {
		fmt_size(want, need, sizeof(need));
		fmt_size(avail, have, sizeof(have));
		return err_set(e, -ENOMEM, "scale %" PRIu64 " needs about %s of memory (cluster%s, buffers, "
			       "128M kept free), %s available: a smaller --scale or more guest --memory",
			       a->scale, need, pg_template(a, env) ? "s and template" : "", have);
	}
	return 0;
}

/* run a PostgreSQL program (as the user) to its end; a non-zero exit is an error with its log's last line */
static int pg_exec(struct pg_run *pr, const char *prog, char *argv[], const char *log, appsrv_tick_fn tick,
		   unsigned tick_ms, uint64_t timeout_ms, uint64_t *wall_ns, struct err *e)
{
	const struct appsrv_run_opts o = { pr->envp, &pr->user, timeout_ms, tick_ms, tick, pr, log };
	char path[WL_PATH_MAX + 96], tail[APPSRV_TAIL_MAX];
	uint64_t w;
	int r, st;

	if (!strcmp(prog, "cp"))
		snprintf(path, sizeof(path), "%s/usr/bin/cp", pr->env->root);
	else
		snprintf(path, sizeof(path), "%s/%s", pr->bin, prog);
	argv[0] = path;	/* initdb finds postgres beside itself through it */
	r = appsrv_run(path, argv, &o, &pr->out, &st, wall_ns ? wall_ns : &w, e);
	if (r)
		return r;
	if (WIFEXITED(st) && !WEXITSTATUS(st))
		return 0;
	appsrv_last_line(pr->out.buf, pr->out.len, tail, sizeof(tail));
	if (!tail[0] && log)
		appsrv_log_tail(log, tail, sizeof(tail));
	if (WIFSIGNALED(st))
		return err_set(e, -EIO, "%s killed by signal %d: %s", prog, WTERMSIG(st), tail[0] ? tail : "no output");
	return err_set(e, -EIO, "%s exited with status %d: %s", prog, WEXITSTATUS(st), tail[0] ? tail : "no output");
}

/* postgres on data with these buffers, up when its postmaster.pid says ready */
static int pg_start(struct pg_run *pr, const char *data, uint64_t buffers, struct err *e)
{
	char a0[] = "postgres", o_D[] = "-D", o_c[] = "-c", path[WL_PATH_MAX + 96], pidf[WL_PATH_MAX + 96],
	     listen[] = "listen_addresses=", sockdir[WL_PATH_MAX + 96], port[] = "port=" PG_PORT, sb[48],
	     hp[] = "huge_pages=off", fs[] = "fsync=off", sc[] = "synchronous_commit=off",
	     fpw[] = "full_page_writes=off", wal[] = "wal_level=minimal", snd[] = "max_wal_senders=0",
	     par[] = "max_parallel_workers_per_gather=0", av[] = "autovacuum=off",
	     dsm[] = "dynamic_shared_memory_type=mmap", lc[] = "logging_collector=off",
	     ddata[WL_PATH_MAX + 96], text[4096], tail[APPSRV_TAIL_MAX];
	char *argv[] = { a0, o_D, ddata, o_c, listen, o_c, sockdir, o_c, port, o_c, sb, o_c, hp, o_c, fs,
			 o_c, sc, o_c, fpw, o_c, wal, o_c, snd, o_c, par, o_c, av, o_c, dsm, o_c, lc, NULL };
	uint64_t deadline = harness_now_ns() + (uint64_t)PG_START_MS * 1000000u;
	int r, st;
	size_t n;

	snprintf(ddata, sizeof(ddata), "%s", data);
	snprintf(sockdir, sizeof(sockdir), "unix_socket_directories=%s", pr->base);
	snprintf(sb, sizeof(sb), "shared_buffers=%" PRIu64 "kB", buffers >> 10);
	snprintf(path, sizeof(path), "%s/postgres", pr->bin);
	argv[0] = path;
	snprintf(pidf, sizeof(pidf), "%s/postmaster.pid", data);
	if ((r = appsrv_start(path, argv, pr->envp, &pr->user, pr->log, &pr->pid, e)))
		return r;
	for (;;) {
		if (appsrv_exited(pr->pid, &st)) {
			pr->pid = -1;
			appsrv_log_tail(pr->log, tail, sizeof(tail));
			return err_set(e, -EIO, "postgres exited at start (status %#x): %s", st,
				       tail[0] ? tail : "no output");
		}
		r = appsrv_read_file(pidf, text, sizeof(text), &n, NULL);
		if (!r) {
			r = pg_pidfile_ready(text, n, pr->pid);
			if (!r)
				return 0;
			if (r != -EAGAIN)
				return err_set(e, -EBADMSG, "'%s' is not a ready postgres %d's", pidf, (int)pr->pid);
		}
		if (harness_now_ns() > deadline)
			return err_set(e, -ETIMEDOUT, "postgres not ready after %u s", PG_START_MS / 1000);
		harness_sleep_ms(20);
	}
}

/* a fast shutdown (SIGINT) of the server started, by its pid; SIGKILL past PG_STOP_MS */
static int pg_stop(struct pg_run *pr, struct err *e)
{
	int st, r;

	if (pr->pid <= 0)
		return 0;
	r = appsrv_stop(pr->pid, SIGINT, PG_STOP_MS, &st);
	pr->pid = -1;
	if (r == -ETIMEDOUT)
		return err_set(e, r, "postgres did not stop within %u s: killed", PG_STOP_MS / 1000);
	return 0;
}

/* a fresh cluster at data: initdb, a server, pgbench -i, stopped cleanly */
static int pg_init(struct pg_run *pr, const char *data, struct err *e)
{
	char a_init[] = "initdb", o_D[] = "-D", o_U[] = "-U", o_loc[] = "--locale=C", o_enc[] = "--encoding=UTF8",
	     o_auth[] = "--auth=trust", o_N[] = "--no-sync", a_pgb[] = "pgbench", o_i[] = "-i", o_s[] = "-s",
	     o_q[] = "-q", o_h[] = "-h", o_p[] = "-p", v_p[] = PG_PORT, db[] = "postgres", v_s[24],
	     ddata[WL_PATH_MAX + 96], user[WL_WORD_MAX], host[WL_PATH_MAX + 64], ilog[WL_PATH_MAX + 96];
	char *init_argv[] = { a_init, o_D, ddata, o_U, user, o_loc, o_enc, o_auth, o_N, NULL };
	char *pgi_argv[] = { a_pgb, o_i, o_s, v_s, o_q, o_h, host, o_p, v_p, o_U, user, db, NULL };
	int r;

	snprintf(ddata, sizeof(ddata), "%s", data);
	snprintf(user, sizeof(user), "%s", pr->a->user);
	snprintf(host, sizeof(host), "%s", pr->base);
	snprintf(v_s, sizeof(v_s), "%" PRIu64, pr->a->scale);
	snprintf(ilog, sizeof(ilog), "%s/init.log", pr->base);
	if ((r = pg_exec(pr, "initdb", init_argv, ilog, NULL, 0, PG_STEP_MS, NULL, e)))
		return r;
	if ((r = pg_start(pr, data, 128ull << 20, e)))
		return r;
	r = pg_exec(pr, "pgbench", pgi_argv, ilog, NULL, 0, PG_STEP_MS, NULL, e);
	if (r)
		err_wrap(e, "pgbench -i -s %" PRIu64, pr->a->scale);
	return pg_stop(pr, e) ? e->code : r;
}

/*
 * A directory of the user's, mode 0700: made here (fresh is true: nothing
 * may be there already) or by mkdtemp, handed over through a descriptor of
 * the directory itself, so that a link planted at path is never followed.
 */
static int user_dir(const struct pg_run *pr, const char *path, bool fresh, struct err *e)
{
	int fd, r = 0;

	if (fresh && mkdir(path, 0700))
		return err_set(e, -errno, "cannot create '%s': %s%s", path, strerror(errno),
			       errno == EEXIST ? ": someone else made it, remove it" : "");
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, -errno, "cannot open directory '%s': %s", path, strerror(errno));
	if (fchown(fd, pr->user.uid, pr->user.gid) || fchmod(fd, 0700))
		r = err_set(e, -errno, "cannot hand '%s' to uid %u: %s", path, (unsigned)pr->user.uid,
			    strerror(errno));
	close(fd);
	return r;
}

/* a template left by an earlier run is used only when it is the user's own, private directory */
static bool template_ours(const struct pg_run *pr, const char *tdir)
{
	struct stat st;

	return !lstat(tdir, &st) && S_ISDIR(st.st_mode) && st.st_uid == pr->user.uid &&
	       !(st.st_mode & 077);
}

/* the run's cluster: a copy of the template (made first where missing), or a fresh one */
static int pg_setup(struct pg_run *pr, const char **how, struct err *e)
{
	char tdir[WL_PATH_MAX + 96], tdata[WL_PATH_MAX + 112], mark[WL_PATH_MAX + 112], a_cp[] = "cp",
	     o_a[] = "-a", src[WL_PATH_MAX + 112], dst[WL_PATH_MAX + 112];
	char *cp_argv[] = { a_cp, o_a, src, dst, NULL };
	struct stat st;
	int r;

	if (!pg_template(pr->a, pr->env)) {
		*how = "init";
		return pg_init(pr, pr->data, e);
	}
	snprintf(tdir, sizeof(tdir), "%s%s/thpeval-pgbench-template-%u-s%" PRIu64, pr->env->root, pr->a->dir,
		 pr->version, pr->a->scale);
	snprintf(tdata, sizeof(tdata), "%s/data", tdir);
	snprintf(mark, sizeof(mark), "%s/complete", tdir);
	*how = "copy";
	if (!lstat(tdir, &st) && !template_ours(pr, tdir)) {
		/* something else at the template's name: neither used nor removed */
		*how = "init";
		return pg_init(pr, pr->data, e);
	}
	if (access(mark, F_OK)) {
		/* none, or one a killed run left half made */
		*how = "init";
		fstree_remove(tdir);
		if ((r = user_dir(pr, tdir, true, e)) || (r = pg_init(pr, tdata, e)))
			return r;
		if (write_file_atomic(mark, "1\n", 2, 0644, e))
			return e->code;
	}
	snprintf(src, sizeof(src), "%s", tdata);
	snprintf(dst, sizeof(dst), "%s", pr->data);
	return pg_exec(pr, "cp", cp_argv, NULL, NULL, 0, PG_STEP_MS, NULL, e);
}

/* one sample of the shared buffers' mapping over the postgres processes (while pgbench runs) */
static void pg_tick(void *opaque)
{
	struct pg_run *pr = opaque;
	pid_t pids[PG_MAX_PROCS];
	struct pg_sample s = { 0 };
	size_t n = 0, i;
	struct err e = ERR_INIT;
	uint64_t huge;

	if (pr->pid <= 0)
		return;
	if (!meminfo_get(pr->env->root, "ShmemHugePages", &huge, NULL)) {
		pr->best.have_shmem_huge = true;
		if (huge > pr->best.shmem_huge)
			pr->best.shmem_huge = huge;
	}
	pids[n++] = pr->pid;
	if (proc_children(pr->env->root, pr->pid, pids + 1, PG_MAX_PROCS - 1, &i, &e)) {
		snprintf(pr->best.note, sizeof(pr->best.note), "%.100s", e.msg);
		return;
	}
	n += i;
	s.have_pmd = true;
	for (i = 0; i < n; i++) {
		struct shm_vma v;

		err_clear(&e);
		if (shm_vma_read(pr->env->root, pids[i], &v, &e))
			continue;	/* gone meanwhile, or no shared mapping */
		s.rss += v.rss;
		s.pmd += v.shmem_pmd;
		s.have_pmd &= v.have_shmem_pmd;
	}
	pr->best.samples++;
	if (s.rss > pr->best.rss) {
		pr->best.rss = s.rss;
		pr->best.pmd = s.pmd;
		pr->best.have_pmd = s.have_pmd;
	}
}

/* pgbench -T seconds (select-only when select), parsed */
static int pg_bench(struct pg_run *pr, bool select, struct pgbench_result *res, struct err *e)
{
	char a0[] = "pgbench", o_S[] = "-S", o_T[] = "-T", o_c[] = "-c", o_j[] = "-j", o_h[] = "-h", o_p[] = "-p",
	     v_p[] = PG_PORT, o_U[] = "-U", db[] = "postgres", v_T[24], v_c[24], v_j[24], host[WL_PATH_MAX + 64],
	     user[WL_WORD_MAX], blog[WL_PATH_MAX + 96];
	char *argv[] = { a0, o_T, v_T, o_c, v_c, o_j, v_j, o_h, host, o_p, v_p, o_U, user, db, NULL, NULL };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t jobs = pr->a->clients < (uint64_t)(cpus > 0 ? cpus : 1) ? pr->a->clients : (uint64_t)(cpus > 0 ? cpus : 1);
	unsigned tick = (unsigned)(pr->a->seconds * 1000 / 4 > 1000 ? pr->a->seconds * 1000 / 4 : 1000);
	const char *want = select ? "select only" : "TPC-B (sort of)";
	int r;

	if (select) {
		memmove(argv + 2, argv + 1, sizeof(argv) - 2 * sizeof(argv[0]));
		argv[1] = o_S;
	}
	snprintf(v_T, sizeof(v_T), "%" PRIu64, pr->a->seconds);
	snprintf(v_c, sizeof(v_c), "%" PRIu64, pr->a->clients);
	snprintf(v_j, sizeof(v_j), "%" PRIu64, jobs);
	snprintf(host, sizeof(host), "%s", pr->base);
	snprintf(user, sizeof(user), "%s", pr->a->user);
	snprintf(blog, sizeof(blog), "%s/pgbench.err", pr->base);
	r = pg_exec(pr, "pgbench", argv, blog, pg_tick, tick, pr->a->seconds * 1000 + PG_STEP_MS, NULL, e);
	if (r)
		return err_wrap(e, "pgbench %s", select ? "-S" : "(TPC-B)");
	if (pr->out.truncated)
		return err_set(e, -EBADMSG, "pgbench printed more than %d bytes", APPSRV_OUT_MAX);
	if ((r = pgbench_parse(pr->out.buf, pr->out.len, res, e)))
		return r;
	if (strcmp(res->type, want))
		return err_set(e, -EBADMSG, "pgbench ran '%s', not '%s'", res->type, want);
	if (res->scale != pr->a->scale || res->clients != pr->a->clients)
		return err_set(e, -EBADMSG, "pgbench reports scale %" PRIu64 " and %" PRIu64 " clients, not %"
			       PRIu64 " and %" PRIu64, res->scale, res->clients, pr->a->scale, pr->a->clients);
	return 0;
}

static uint64_t du_sum;	/* for du_one (nftw has no context) */

static int du_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (flag == FTW_F)
		du_sum += (uint64_t)st->st_size;
	return 0;
}

static int pg_measure(struct pg_run *pr, struct record *res, struct err *e)
{
	const struct pgbench_opts *a = pr->a;
	struct pgbench_result sel, tpcb;
	char shmem[THP_VALUE_MAX], dbdir[WL_PATH_MAX + 96], variant[WL_WORD_MAX + 8];
	uint64_t t0 = harness_now_ns();
	const char *how = "init";
	double setup_s;
	int r;

	if ((r = pg_setup(pr, &how, e)))
		return r;
	setup_s = (double)(harness_now_ns() - t0) / 1e9;
	snprintf(dbdir, sizeof(dbdir), "%s/base", pr->data);
	du_sum = 0;
	nftw(dbdir, du_one, 16, FTW_PHYS);
	thp_knob_get(pr->env->root, "shmem_enabled", shmem, sizeof(shmem), NULL);
	if ((r = pg_start(pr, pr->data, a->shared_buffers, e)) || (r = pg_bench(pr, true, &sel, e)) ||
	    (r = pg_bench(pr, false, &tpcb, e)))
		return r;
	if ((r = pg_stop(pr, e)))
		return r;
	r = 0;
	if (strcmp(a->shmem_thp, "keep")) {
		snprintf(variant, sizeof(variant), "shmem-%s", a->shmem_thp);
		r |= rec_add_str(res, "variant", variant);
	}
	r |= rec_add_u64(res, "pg_version", pr->version);
	r |= rec_add_u64(res, "scale", a->scale);
	r |= rec_add_u64(res, "shared_buffers_bytes", a->shared_buffers);
	r |= rec_add_u64(res, "db_bytes", du_sum);
	r |= rec_add_u64(res, "clients", a->clients);
	r |= rec_add_u64(res, "seconds", a->seconds);
	r |= rec_add_str(res, "setup", how);
	r |= rec_add_f64(res, "setup_s", setup_s);
	r |= rec_add_str(res, "shmem_enabled", shmem);
	r |= rec_add_u64(res, "shmem_huge_want", (uint64_t)pg_shmem_want(shmem));
	r |= rec_add_f64(res, "select_tx_per_s", sel.tps);
	r |= rec_add_f64(res, "select_lat_ms", sel.latency_avg_ms);
	r |= rec_add_u64(res, "select_tx", sel.processed);
	r |= rec_add_f64(res, "tpcb_tx_per_s", tpcb.tps);
	r |= rec_add_f64(res, "tpcb_lat_ms", tpcb.latency_avg_ms);
	r |= rec_add_u64(res, "tpcb_tx", tpcb.processed);
	if (pr->best.have_shmem_huge)
		r |= rec_add_u64(res, "shmem_huge_bytes", pr->best.shmem_huge);
	if (pr->best.rss && pr->best.have_pmd) {
		r |= rec_add_u64(res, "shm_rss_bytes", pr->best.rss);
		r |= rec_add_u64(res, "shm_pmd_bytes", pr->best.pmd);
		r |= rec_add_f64(res, "shmem_pmd_pct", 100.0 * (double)pr->best.pmd / (double)pr->best.rss);
	} else {
		r |= rec_add_str(res, "cov_note", pr->best.note[0] ? pr->best.note :
						  !pr->best.samples ? "no sample of the postgres processes was taken" :
						  !pr->best.rss ? "no postgres process had its shared buffers mapped" :
								  "no ShmemPmdMapped in smaps (a kernel without THP)");
	}
	return r ? err_set(e, -EINVAL, "cannot build the pgbench record") : 0;
}

static int pg_run(const void *opts, const struct wl_env *env, struct record *res, struct err *e)
{
	const struct pgbench_opts *a = opts;
	struct pg_run *pr = calloc(1, sizeof(*pr));
	char lib[WL_PATH_MAX + 32], old[THP_VALUE_MAX] = "";
	bool restore = false;
	int r;

	if (!pr)
		return err_set(e, -ENOMEM, "out of memory");
	pr->a = a;
	pr->env = env;
	pr->pid = -1;
	snprintf(lib, sizeof(lib), "%s%s", env->root, PG_LIBDIR);
	if (pg_find_version(lib, &pr->version)) {
		free(pr);
		return err_set(e, -EOPNOTSUPP, "no PostgreSQL under '%s'", lib);
	}
	snprintf(pr->bin, sizeof(pr->bin), "%s/%u/bin", lib, pr->version);
	if ((r = pg_user(env->root, a->user, true, &pr->user, e))) {
		free(pr);
		return r;
	}
	snprintf(pr->base, sizeof(pr->base), "%s%s/thpeval-pgbench-XXXXXX", env->root, a->dir);
	if (!mkdtemp(pr->base)) {
		r = err_set(e, -errno, "cannot create a directory in '%s%s': %s", env->root, a->dir, strerror(errno));
		free(pr);
		return r;
	}
	snprintf(pr->data, sizeof(pr->data), "%s/data", pr->base);
	snprintf(pr->log, sizeof(pr->log), "%s/postgres.log", pr->base);
	snprintf(pr->envhome, sizeof(pr->envhome), "HOME=%s", pr->base);
	pr->envp[0] = pg_env_path;
	pr->envp[1] = pg_env_lc;
	pr->envp[2] = pg_env_tz;
	pr->envp[3] = pr->envhome;
	pr->envp[4] = NULL;
	r = user_dir(pr, pr->base, false, e);
	if (!r && strcmp(a->shmem_thp, "keep")) {
		/* shared_buffers' page size for this run: set, read back, restored below */
		r = thp_knob_get(env->root, "shmem_enabled", old, sizeof(old), e);
		if (r == -ENOENT)
			r = err_set(e, -EOPNOTSUPP, "--shmem-thp=%s: this kernel has no shmem_enabled", a->shmem_thp);
		if (!r && !(r = thp_knob_set(env->root, "shmem_enabled", a->shmem_thp, e)))
			restore = true;
	}
	if (!r)
		r = pg_measure(pr, res, e);
	if (pr->pid > 0) {
		struct err ignore = ERR_INIT;

		pg_stop(pr, &ignore);	/* a failure above: the server goes all the same */
	}
	if (restore) {
		struct err why = ERR_INIT;

		if (thp_knob_set(env->root, "shmem_enabled", old, &why) && !r)
			r = err_set(e, why.code, "cannot restore shmem_enabled to '%s': %s", old, why.msg);
	}
	fstree_remove(pr->base);
	free(pr);
	return r;
}

const struct workload wl_pgbench = {
	.name = "pgbench",
	.description = "PostgreSQL in the guest: a cluster at --scale larger than --shared-buffers, pgbench "
		       "select-only and TPC-B-like for --seconds each (transactions per second, latency "
		       "average); shared_buffers is shmem (shmem_enabled, --shmem-thp); coverage from "
		       "ShmemPmdMapped of the postgres processes",
	.params = pg_params,
	.opts_size = sizeof(struct pgbench_opts),
	.metrics = pg_metrics,
	.check = pg_check,
	.run = pg_run,
};
