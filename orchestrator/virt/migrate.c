/*
 * migrate: the second libvirt daemon of a migration arm (its start in a mount
 * namespace of its own, its stop and the reaping of one a killed run left),
 * one guest's live migration in a thread, and its streams moved to the
 * destination afterwards.
 */
#include "orchestrator/virt/migrate.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "lib/clock.h"
#include "lib/fstree.h"
#include "lib/parse.h"
#include "orchestrator/virt/internal.h"

ENUM_IMPL(migrate_mode, MIGRATE__COUNT, "none", "precopy", "postcopy");

#define MIGD_LIBVIRTD "/usr/sbin/libvirtd"
#define MIGD_START_MS 20000
#define MIGD_STOP_MS 10000
#define MIGRATE_BANDWIDTH_MIBS 100000ull	/* no cap: the machine's own speed */
#define MIGRATE_SWITCH_AFTER_MS 2000	/* postcopy: switch after this long at the latest */
#define MIGRATE_SWITCH_RETRY_MS 250

struct migd {
	char dir[128];
	char log_dir[PATH_MAX];		/* the daemon's and its QEMUs' logs (kept after it stops) */
	char uri[256];
	int pid;
	unsigned long long start_ticks;
	char state_path[PATH_MAX];
	struct virt *v;
};

/* the directories bind-mounted over the host's in the daemon's namespace */
static const struct {
	const char *sub, *target;
} migd_binds[] = {
	{ "run", "/run/libvirt" },
	{ "lib", "/var/lib/libvirt" },
	{ "cache", "/var/cache/libvirt" },
	{ "log", "/var/log/libvirt" },
	{ "etc-qemu", "/etc/libvirt/qemu" },
};

struct virt *migd_virt(struct migd *d)
{
	return d ? d->v : NULL;
}

const char *migd_uri(const struct migd *d)
{
	return d ? d->uri : NULL;
}

int migd_pid(const struct migd *d)
{
	return d ? d->pid : -1;
}

/* field 22 of /proc/<pid>/stat: the process's start time, to tell a reused pid apart */
static unsigned long long proc_start_ticks(int pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the command name may hold spaces */
	if (!p)
		return 0;
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

/* /proc/<pid>/cmdline holds needle as one of its arguments' substrings */
static bool cmdline_has(int pid, const char *needle)
{
	char path[64], buf[4096];
	ssize_t n;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (i = 0; i < (size_t)n; i += strlen(buf + i) + 1)
		if (strstr(buf + i, needle))
			return true;
	return false;
}

static int write_text(const char *path, const char *text, struct err *e)
{
	return write_file_atomic(path, text, strlen(text), 0644, e);
}

static int migd_files(struct migd *d, struct err *e)
{
	char path[PATH_MAX], text[PATH_MAX + 1024];
	size_t i;
	int r;

	if ((r = mkdir_p(d->dir, 0755, e)))
		return r;
	for (i = 0; i < sizeof(migd_binds) / sizeof(migd_binds[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", d->dir, migd_binds[i].sub);
		if ((r = mkdir_p(path, 0755, e)))
			return r;
	}
	if ((r = mkdir_p(d->log_dir, 0755, e)))
		return r;
	snprintf(path, sizeof(path), "%s/sock", d->dir);
	if ((r = mkdir_p(path, 0700, e)))
		return r;
	/* a host_uuid of its own: libvirt refuses a migration between equal host UUIDs */
	snprintf(text, sizeof(text),
		 "unix_sock_dir = \"%s/sock\"\nunix_sock_group = \"root\"\nunix_sock_rw_perms = \"0700\"\n"
		 "auth_unix_rw = \"none\"\nauth_unix_ro = \"none\"\n"
		 "host_uuid = \"7e57e57e-%04x-4000-8000-%012x\"\n"
		 "log_outputs = \"3:file:%s/libvirtd.log\"\n",
		 d->dir, (unsigned)getpid() & 0xffff, (unsigned)d->start_ticks & 0xffffffu, d->log_dir);
	snprintf(path, sizeof(path), "%s/libvirtd.conf", d->dir);
	if ((r = write_text(path, text, e)))
		return r;
	/*
	 * QEMU as root with its capabilities: QEMU 7.2 opens userfaultfd itself
	 * (no /dev/userfaultfd), which an unprivileged QEMU is refused while
	 * vm.unprivileged_userfaultfd is 0 (postcopy: "Postcopy is not supported").
	 * No cgroups (the first daemon's), no virtlogd (its socket is the first
	 * daemon's), no ownership changes of the files both QEMUs share.
	 */
	snprintf(text, sizeof(text),
		 "user = \"root\"\ngroup = \"root\"\nclear_emulator_capabilities = 0\ndynamic_ownership = 0\n"
		 "remember_owner = 0\ncgroup_controllers = [ ]\nstdio_handler = \"file\"\n");
	snprintf(path, sizeof(path), "%s/qemu.conf", d->dir);
	return write_text(path, text, e);
}

/* the child: a mount namespace with the daemon's directories over the host's, then libvirtd */
static void migd_child(const struct migd *d, const char *libvirtd)
{
	char src[PATH_MAX], conf[PATH_MAX], pidf[PATH_MAX], logf[PATH_MAX + 16];
	size_t i;
	int fd;

	setsid();
	snprintf(logf, sizeof(logf), "%s/stdout.log", d->log_dir);
	fd = open(logf, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		dup2(fd, 0);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		dprintf(2, "thpeval: cannot make a mount namespace: %s\n", strerror(errno));
		_exit(126);
	}
	for (i = 0; i < sizeof(migd_binds) / sizeof(migd_binds[0]); i++) {
		if (!strcmp(migd_binds[i].sub, "log"))
			snprintf(src, sizeof(src), "%s", d->log_dir);
		else
			snprintf(src, sizeof(src), "%s/%s", d->dir, migd_binds[i].sub);
		mkdir(migd_binds[i].target, 0755);
		if (mount(src, migd_binds[i].target, NULL, MS_BIND, NULL)) {
			dprintf(2, "thpeval: cannot bind %s over %s: %s\n", src, migd_binds[i].target,
				strerror(errno));
			_exit(126);
		}
	}
	snprintf(src, sizeof(src), "%s/qemu.conf", d->dir);
	if (mount(src, "/etc/libvirt/qemu.conf", NULL, MS_BIND, NULL)) {
		dprintf(2, "thpeval: cannot bind %s over /etc/libvirt/qemu.conf: %s\n", src, strerror(errno));
		_exit(126);
	}
	snprintf(conf, sizeof(conf), "%s/libvirtd.conf", d->dir);
	snprintf(pidf, sizeof(pidf), "%s/libvirtd.pid", d->dir);
	execl(libvirtd, "libvirtd", "--config", conf, "--pid-file", pidf, (char *)NULL);
	dprintf(2, "thpeval: cannot run %s: %s\n", libvirtd, strerror(errno));
	_exit(127);
}

/* the last line of the daemon's output or log, for a refusal */
static void migd_last_words(const struct migd *d, char *buf, size_t len)
{
	static const char *const logs[] = { "stdout.log", "libvirtd.log" };
	char path[PATH_MAX + 16], line[512];
	size_t i;

	buf[0] = '\0';
	for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", d->log_dir, logs[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (line[0] && line[0] != '\n') {
				line[strcspn(line, "\n")] = '\0';
				snprintf(buf, len, "%s", line);
			}
		fclose(f);
		if (buf[0])
			return;
	}
	snprintf(buf, len, "no output");
}

static void migd_kill(int pid, bool child)
{
	int64_t deadline = mono_ms() + MIGD_STOP_MS;

	if (pid <= 0)
		return;
	kill(pid, SIGTERM);
	while (mono_ms() < deadline) {
		if (child ? waitpid(pid, NULL, WNOHANG) == pid : kill(pid, 0) != 0)
			return;
		usleep(50 * 1000);
	}
	kill(pid, SIGKILL);
	if (child)
		waitpid(pid, NULL, 0);
}

int migd_start(const char *state_dir, const char *log_dir, const char *libvirtd_path, struct migd **out,
	       struct err *e)
{
	const char *libvirtd = libvirtd_path ? libvirtd_path : MIGD_LIBVIRTD;
	char text[512], why[512];
	struct migd *d;
	int64_t deadline;
	pid_t pid;
	int r;

	*out = NULL;
	if (access(libvirtd, X_OK))
		return err_set(e, -ENOENT, "cannot start a second libvirt daemon for the migration arms: %s is "
			       "not there (install libvirt-daemon)", libvirtd);
	d = calloc(1, sizeof(*d));
	if (!d)
		return err_set(e, -ENOMEM, "out of memory");
	d->pid = -1;
	d->start_ticks = (unsigned long long)mono_ms();
	snprintf(d->dir, sizeof(d->dir), "/run/thpeval-migd-%d", (int)getpid());
	if (snprintf(d->log_dir, sizeof(d->log_dir), "%s", log_dir ? log_dir : "") >= (int)sizeof(d->log_dir)) {
		free(d);
		return err_set(e, -ENAMETOOLONG, "the second daemon's log directory: path too long");
	}
	if (!log_dir)
		snprintf(d->log_dir, sizeof(d->log_dir), "%s/log", d->dir);
	snprintf(d->uri, sizeof(d->uri), "qemu+unix:///system?socket=%s/sock/libvirt-sock", d->dir);
	snprintf(d->state_path, sizeof(d->state_path), "%s/%s", state_dir, MIGD_STATE_NAME);
	fstree_remove(d->dir);
	if ((r = migd_files(d, e)))
		goto fail;
	pid = fork();
	if (pid < 0) {
		r = err_set(e, -errno, "cannot fork the second libvirt daemon: %s", strerror(errno));
		goto fail;
	}
	if (pid == 0)
		migd_child(d, libvirtd);
	d->pid = (int)pid;
	d->start_ticks = proc_start_ticks(d->pid);
	/* on disk before anything else: a killed run's daemon is found by it */
	snprintf(text, sizeof(text), "pid=%d\nstart=%llu\ndir=%s\nrun=%d\n", d->pid, d->start_ticks, d->dir,
		 (int)getpid());
	if ((r = mkdir_p(state_dir, 0755, e)) || (r = write_file_atomic(d->state_path, text, strlen(text), 0600, e)))
		goto fail;
	deadline = mono_ms() + MIGD_START_MS;
	for (;;) {
		struct err ce = ERR_INIT;
		char sock[PATH_MAX];

		if (waitpid(d->pid, NULL, WNOHANG) == d->pid) {
			d->pid = -1;
			migd_last_words(d, why, sizeof(why));
			r = err_set(e, -ECHILD, "the second libvirt daemon for the migration arms exited at its start: %s",
				    why);
			goto fail;
		}
		snprintf(sock, sizeof(sock), "%s/sock/libvirt-sock", d->dir);
		if (access(sock, F_OK) == 0 && virt_open(d->uri, &d->v, &ce) == 0)
			break;
		if (mono_ms() >= deadline) {
			migd_last_words(d, why, sizeof(why));
			r = err_set(e, -ETIMEDOUT, "the second libvirt daemon for the migration arms did not answer "
				    "within %d s: %s", MIGD_START_MS / 1000, ce.code ? ce.msg : why);
			goto fail;
		}
		usleep(100 * 1000);
	}
	*out = d;
	return 0;
fail:
	migd_stop(d);
	return r;
}

int migd_qemu_pid(const struct migd *d, const char *name)
{
	char path[PATH_MAX];

	if (!d || !name)
		return -1;
	snprintf(path, sizeof(path), "%s/run/qemu/%s.pid", d->dir, name);
	return (int)virt_pid_file(path);
}

/* every domain of the daemon is a thpeval guest: destroy them all */
static int destroy_all(struct virt *v)
{
	virDomainPtr *doms = NULL;
	int n, i, gone = 0;

	n = virConnectListAllDomains(v->conn, &doms, 0);
	for (i = 0; i < n; i++) {
		if (virDomainIsActive(doms[i]) == 1 && virDomainDestroy(doms[i]) == 0)
			gone++;
		if (virDomainIsPersistent(doms[i]) == 1)
			virDomainUndefine(doms[i]);
		virDomainFree(doms[i]);
	}
	free(doms);
	virResetLastError();
	return gone;
}

void migd_stop(struct migd *d)
{
	if (!d)
		return;
	if (d->v) {
		destroy_all(d->v);
		virt_close(d->v);
	}
	migd_kill(d->pid, true);
	fstree_remove(d->dir);
	unlink(d->state_path);
	free(d);
}

/* QEMU processes running as root for guests of run pid run: those of a daemon gone before them */
static int kill_orphan_qemus(int run)
{
	char needle[64];
	struct dirent *de;
	DIR *dir = opendir("/proc");
	int killed = 0;

	if (!dir)
		return 0;
	snprintf(needle, sizeof(needle), "guest=" VIRT_NAME_PREFIX "%d-", run);
	while ((de = readdir(dir))) {
		char path[300];
		struct stat st;
		uint64_t pid;

		if (parse_u64_range(de->d_name, 1, INT_MAX, &pid) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%s", de->d_name);
		if (stat(path, &st) || st.st_uid != 0 || !cmdline_has((int)pid, needle))
			continue;
		if (kill((pid_t)pid, SIGKILL) == 0)
			killed++;
	}
	closedir(dir);
	return killed;
}

int migd_reap_stale(const char *state_dir, bool *found, char *what, size_t len, struct err *e)
{
	char path[PATH_MAX], text[512], dir[128] = "", conf[200];
	unsigned long long start = 0;
	int pid = -1, run = -1, guests = 0;
	bool alive;
	FILE *f;

	*found = false;
	if (what && len)
		what[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", state_dir, MIGD_STATE_NAME);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(text, sizeof(text), f)) {
		text[strcspn(text, "\n")] = '\0';
		if (!strncmp(text, "pid=", 4))
			pid = atoi(text + 4);	/* NOLINT: checked below against /proc */
		else if (!strncmp(text, "start=", 6))
			start = strtoull(text + 6, NULL, 10);
		else if (!strncmp(text, "dir=", 4) && strlen(text + 4) < sizeof(dir))
			memcpy(dir, text + 4, strlen(text + 4) + 1);
		else if (!strncmp(text, "run=", 4))
			run = atoi(text + 4);
	}
	fclose(f);
	if (run > 0 && (kill(run, 0) == 0 || errno == EPERM) && run != (int)getpid())
		return err_set(e, -EBUSY, "the second libvirt daemon of '%s' belongs to run pid %d, which still runs",
			       path, run);
	*found = true;
	if (strncmp(dir, "/run/thpeval-migd-", 18) || strstr(dir, ".."))
		return err_set(e, -EINVAL, "'%s' names no daemon directory of thpeval's (%s): remove it by hand",
			       path, dir);
	snprintf(conf, sizeof(conf), "%s/libvirtd.conf", dir);
	/* the same process: its start time and its --config (a reused pid is left alone) */
	alive = pid > 0 && proc_start_ticks(pid) == start && cmdline_has(pid, conf);
	if (alive) {
		struct virt *v = NULL;
		struct err ce = ERR_INIT;
		char uri[256];

		snprintf(uri, sizeof(uri), "qemu+unix:///system?socket=%s/sock/libvirt-sock", dir);
		if (virt_open(uri, &v, &ce) == 0) {
			guests = destroy_all(v);
			virt_close(v);
		}
		migd_kill(pid, false);
	}
	if (run > 0)
		guests += kill_orphan_qemus(run);
	fstree_remove(dir);
	unlink(path);
	if (what && len)
		snprintf(what, len, "%s, %d guest(s) of it removed (run pid %d)",
			 alive ? "stopped the second libvirt daemon" : "its second libvirt daemon was gone", guests, run);
	return 0;
}

/* ---- one migration ---------------------------------------------------------- */

struct migjob {
	struct guest *g;
	struct migd *d;
	enum migrate_mode m;
	pthread_t th;
	bool started;
	atomic_bool done;
	int r;
	struct err e;
	int cb_id;
	bool switched;
	int64_t t0_ms, last_try_ms;
	char switch_err[256];		/* why the last switch to postcopy was refused */
	struct migrate_stats ev;	/* from the completion event */
};

static void stats_from_params(virTypedParameterPtr p, int n, struct migrate_stats *s)
{
	unsigned long long u;

	s->have = true;
	if (virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_TIME_ELAPSED, &u) == 1)
		s->total_ms = (double)u;
	if (virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_DOWNTIME, &u) == 1)
		s->downtime_ms = (double)u;
	if (virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_SETUP_TIME, &u) == 1)
		s->setup_ms = (double)u;
	virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_DATA_TOTAL, &s->data_total);
	virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_MEMORY_PROCESSED, &s->mem_processed);
	virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_MEMORY_TOTAL, &s->mem_total);
	virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_MEMORY_BPS, &s->mem_bps);
	virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_MEMORY_DIRTY_RATE, &s->dirty_rate);
	virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_MEMORY_POSTCOPY_REQS, &s->postcopy_reqs);
	virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_MEMORY_ITERATION, &s->iterations);
	virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_MEMORY_CONSTANT, &s->constant_pages);
	virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_MEMORY_NORMAL, &s->normal_pages);
}

static void on_job_completed(virConnectPtr conn, virDomainPtr dom, virTypedParameterPtr params, int n,
			     void *opaque)
{
	struct migjob *j = opaque;

	(void)conn;
	(void)dom;
	stats_from_params(params, n, &j->ev);
}

static void *migjob_main(void *arg)
{
	struct migjob *j = arg;
	virTypedParameterPtr params = NULL;
	int np = 0, maxp = 0;
	unsigned int flags = VIR_MIGRATE_LIVE | VIR_MIGRATE_PEER2PEER | VIR_MIGRATE_UNSAFE;

	if (j->m == MIGRATE_POSTCOPY)
		flags |= VIR_MIGRATE_POSTCOPY;
	else
		flags |= VIR_MIGRATE_AUTO_CONVERGE;
	if (virTypedParamsAddULLong(&params, &np, &maxp, VIR_MIGRATE_PARAM_BANDWIDTH, MIGRATE_BANDWIDTH_MIBS) < 0 ||
	    virDomainMigrateToURI3(j->g->dom, j->d->uri, params, (unsigned)np, flags) < 0)
		j->r = lv_err(&j->e, -EIO, "cannot migrate guest '%s' (%s) to '%s': %s", j->g->name,
			      migrate_mode_name(j->m), j->d->uri, virt_lv_msg());
	virTypedParamsFree(params, np);
	atomic_store(&j->done, true);
	return NULL;
}

int migjob_start(struct guest *g, struct migd *d, enum migrate_mode m, struct migjob **out, struct err *e)
{
	struct migjob *j;
	int r;

	*out = NULL;
	if (!g || !d || (m != MIGRATE_PRECOPY && m != MIGRATE_POSTCOPY))
		return err_set(e, -EINVAL, "migjob_start: guest, daemon and a migration mode are required");
	j = calloc(1, sizeof(*j));
	if (!j)
		return err_set(e, -ENOMEM, "out of memory");
	j->g = g;
	j->d = d;
	j->m = m;
	j->t0_ms = mono_ms();
	err_clear(&j->e);
	atomic_init(&j->done, false);
	j->cb_id = virConnectDomainEventRegisterAny(g->v->conn, g->dom, VIR_DOMAIN_EVENT_ID_JOB_COMPLETED,
						    VIR_DOMAIN_EVENT_CALLBACK(on_job_completed), j, NULL);
	r = pthread_create(&j->th, NULL, migjob_main, j);
	if (r) {
		migjob_free(j);
		return err_set(e, -r, "cannot start the migration thread: %s", strerror(r));
	}
	j->started = true;
	*out = j;
	return 0;
}

bool migjob_done(struct migjob *j)
{
	return !j || atomic_load(&j->done);
}

int migjob_postcopy_step(struct migjob *j, struct err *e)
{
	virTypedParameterPtr p = NULL;
	unsigned long long it = 0;
	int64_t now = mono_ms();
	int type = 0, n = 0;

	if (j->m != MIGRATE_POSTCOPY || j->switched)
		return 1;
	if (atomic_load(&j->done) || now - j->last_try_ms < MIGRATE_SWITCH_RETRY_MS)
		return 0;
	j->last_try_ms = now;
	if (virDomainGetJobStats(j->g->dom, &type, &p, &n, 0) == 0) {
		virTypedParamsGetULLong(p, n, VIR_DOMAIN_JOB_MEMORY_ITERATION, &it);
		virTypedParamsFree(p, n);
	}
	virResetLastError();
	/* as virsh's --postcopy-after-precopy: after the first pass over memory; a
	 * libvirt that reports no iteration: once the job has run MIGRATE_SWITCH_AFTER_MS */
	if (type != VIR_DOMAIN_JOB_UNBOUNDED || (it < 2 && now - j->t0_ms < MIGRATE_SWITCH_AFTER_MS))
		return 0;
	if (virDomainMigrateStartPostCopy(j->g->dom, 0) < 0) {
		/* too early ("before the start of migration") is tried again; the last reason is kept */
		snprintf(j->switch_err, sizeof(j->switch_err), "%s", virt_lv_msg());
		virResetLastError();
		return 0;
	}
	j->switched = true;
	(void)e;
	return 1;
}

int migjob_finish(struct migjob *j, struct migrate_stats *s, struct err *e)
{
	memset(s, 0, sizeof(*s));
	if (!j)
		return err_set(e, -EINVAL, "no migration");
	if (j->started) {
		pthread_join(j->th, NULL);
		j->started = false;
	}
	if (j->r)
		return err_set(e, j->r, "%s", j->e.msg);
	s->postcopy_switched = j->switched;
	snprintf(s->switch_err, sizeof(s->switch_err), "%s", j->switched ? "" : j->switch_err);
	/* the event may still be in the loop */
	for (int i = 0; i < 10 && !j->ev.have; i++)
		virt_event_wait(20);
	if (j->ev.have) {
		bool sw = s->postcopy_switched;
		char why[256];

		snprintf(why, sizeof(why), "%s", s->switch_err);
		*s = j->ev;
		s->postcopy_switched = sw;
		snprintf(s->switch_err, sizeof(s->switch_err), "%s", why);
	} else {
		virDomainPtr dom = virDomainLookupByName(j->d->v->conn, j->g->name);
		virTypedParameterPtr p = NULL;
		int type = 0, n = 0;

		if (dom && virDomainGetJobStats(dom, &type, &p, &n, VIR_DOMAIN_JOB_STATS_COMPLETED) == 0 &&
		    type == VIR_DOMAIN_JOB_COMPLETED)
			stats_from_params(p, n, s);
		virTypedParamsFree(p, n);
		if (dom)
			virDomainFree(dom);
		virResetLastError();
	}
	return 0;
}

void migjob_abort(struct migjob *j)
{
	if (j && !atomic_load(&j->done) && virDomainAbortJob(j->g->dom) < 0)
		virResetLastError();
}

void migjob_free(struct migjob *j)
{
	if (!j)
		return;
	if (j->started)
		pthread_join(j->th, NULL);
	if (j->cb_id >= 0 && j->g && j->g->v)
		virConnectDomainEventDeregisterAny(j->g->v->conn, j->cb_id);
	free(j);
}

/* ---- the guest on the destination ------------------------------------------- */

static void stream_drop(virStreamPtr *st, enum stream_state *state)
{
	if (!*st)
		return;
	if (*state == ST_OPEN)
		virStreamAbort(*st);
	else if (*state == ST_EOF)
		virStreamFinish(*st);
	virStreamFree(*st);
	*st = NULL;
	*state = ST_NONE;
}

int guest_rebind(struct guest *g, struct migd *d, struct err *e)
{
	virDomainPtr nd;

	if (!g || !d || !d->v)
		return err_set(e, -EINVAL, "guest_rebind: guest and daemon are required");
	nd = virDomainLookupByName(d->v->conn, g->name);
	if (!nd)
		return lv_err(e, -ENOENT, "guest '%s' is not on the destination after its migration: %s", g->name,
			      virt_lv_msg());
	stream_drop(&g->chan, &g->chan_st);
	stream_drop(&g->cons, &g->cons_st);
	if (g->dom)
		virDomainFree(g->dom);
	g->dom = nd;
	g->v = d->v;
	g->qemu_pid = -1;
	g->gone_at_ms = -1;
	g->last_state_ms = 0;
	g->chan = virStreamNew(d->v->conn, VIR_STREAM_NONBLOCK);
	if (!g->chan || virDomainOpenChannel(nd, DOMAIN_CHANNEL_NAME, g->chan, 0) < 0)
		return lv_err(e, -EIO, "cannot open the record channel of '%s' on the destination: %s", g->name,
			      virt_lv_msg());
	g->chan_st = ST_OPEN;
	g->cons = virStreamNew(d->v->conn, VIR_STREAM_NONBLOCK);
	if (!g->cons || virDomainOpenConsole(nd, NULL, g->cons, 0) < 0)
		return lv_err(e, -EIO, "cannot open the console of '%s' on the destination: %s", g->name,
			      virt_lv_msg());
	g->cons_st = ST_OPEN;
	return 0;
}
