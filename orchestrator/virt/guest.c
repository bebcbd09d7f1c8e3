/*
 * guest: one transient guest's lifecycle (start with its streams, find its
 * QEMU pid, destroy), and the reaping of guests a killed run left behind.
 */
#include "orchestrator/virt/internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "lib/clock.h"
#include "lib/parse.h"

/* ---- guests ---------------------------------------------------------------- */

static bool pid_alive(long pid)
{
	return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* /proc/<pid>/cmdline holds "-name" "guest=<name>,..." (or "guest=<name>") */
static bool cmdline_names_guest(long pid, const char *name)
{
	char path[64], *buf;
	size_t nl = strlen(name), off = 0;
	ssize_t n;
	bool found = false;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	buf = malloc(RECV_BUF);
	if (!buf) {
		close(fd);
		return false;
	}
	while (off < RECV_BUF - 1 && (n = read(fd, buf + off, RECV_BUF - 1 - off)) > 0)
		off += (size_t)n;
	close(fd);
	buf[off] = '\0';
	for (size_t i = 0; i < off && !found; i += strlen(buf + i) + 1) {
		const char *a = buf + i;

		found = strncmp(a, "guest=", 6) == 0 && strncmp(a + 6, name, nl) == 0 &&
			(a[6 + nl] == ',' || a[6 + nl] == '\0');
	}
	free(buf);
	return found;
}

long virt_pid_file(const char *path)
{
	char text[32];
	uint64_t pid;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	text[strcspn(text, "\n")] = '\0';
	if (parse_u64_range(text, 1, INT_MAX, &pid) < 0)
		return -1;
	return (long)pid;
}

static long pid_from_proc_scan(const char *name)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	long found = -1;

	if (!d)
		return -1;
	while (found < 0 && (de = readdir(d))) {
		uint64_t pid;

		if (parse_u64_range(de->d_name, 1, INT_MAX, &pid) < 0)
			continue;
		if (cmdline_names_guest((long)pid, name))
			found = (long)pid;
	}
	closedir(d);
	return found;
}

int guest_qemu_pid(struct guest *g)
{
	char path[PATH_MAX];
	long pid;

	if (!g)
		return -1;
	if (g->qemu_pid > 0 && cmdline_names_guest(g->qemu_pid, g->name))
		return g->qemu_pid;
	/* the pid file is only trusted if that process really runs this guest */
	snprintf(path, sizeof(path), "/run/libvirt/qemu/%s.pid", g->name);
	pid = virt_pid_file(path);
	if (pid <= 0 || !cmdline_names_guest(pid, g->name))
		pid = pid_from_proc_scan(g->name);
	g->qemu_pid = pid > 0 ? (int)pid : -1;
	return g->qemu_pid;
}

const char *guest_name(const struct guest *g)
{
	return g ? g->name : NULL;
}

void guest_counters(const struct guest *g, struct guest_counters *out)
{
	if (g)
		*out = g->cnt;
	else
		memset(out, 0, sizeof(*out));
}

static void stream_close(virStreamPtr *st, enum stream_state *state)
{
	if (!*st)
		return;
	/* a stream that reached EOF is finished; one still open is aborted */
	if (*state == ST_EOF)
		virStreamFinish(*st);
	else if (*state == ST_OPEN)
		virStreamAbort(*st);
	virStreamFree(*st);
	*st = NULL;
	*state = ST_NONE;
}

void guest_destroy(struct guest *g)
{
	if (!g)
		return;
	stream_close(&g->chan, &g->chan_st);
	stream_close(&g->cons, &g->cons_st);
	if (g->dom) {
		if (virDomainIsActive(g->dom) == 1)
			virDomainDestroy(g->dom);
		/* someone made our transient domain persistent: remove the definition */
		if (virDomainIsPersistent(g->dom) == 1 &&
		    virDomainUndefineFlags(g->dom, VIR_DOMAIN_UNDEFINE_MANAGED_SAVE |
					   VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA |
					   VIR_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA |
					   VIR_DOMAIN_UNDEFINE_NVRAM) < 0)
			virDomainUndefine(g->dom);
		virDomainFree(g->dom);
	}
	if (g->log_fd >= 0)
		close(g->log_fd);
	virResetLastError();
	free(g->name);
	free(g);
}

static int open_stream(struct guest *g, bool channel, const char *chname, virStreamPtr *st,
		       enum stream_state *state, struct err *e)
{
	int r;

	*st = virStreamNew(g->v->conn, VIR_STREAM_NONBLOCK);
	if (!*st)
		return lv_err(e, -EIO, "cannot create a stream for guest '%s': %s", g->name,
			       virt_lv_msg());
	if (channel)
		r = virDomainOpenChannel(g->dom, chname, *st, 0);
	else
		r = virDomainOpenConsole(g->dom, NULL, *st, 0);
	if (r < 0) {
		bool unsupported = virt_lv_code() == VIR_ERR_NO_SUPPORT;
		int rc;

		if (unsupported)
			rc = lv_err(e, -EOPNOTSUPP,
				     "cannot open the %s of guest '%s': %s: use a qemu:// URI",
				     channel ? "channel" : "console", g->name, virt_lv_msg());
		else if (channel)
			rc = lv_err(e, -EIO,
				     "cannot open channel '%s' of guest '%s': %s: the domain needs "
				     "<channel type='unix'> with that target name", chname, g->name,
				     virt_lv_msg());
		else
			rc = lv_err(e, -EIO, "cannot open the console of guest '%s': %s", g->name,
				     virt_lv_msg());
		virStreamFree(*st);
		*st = NULL;
		return rc;
	}
	*state = ST_OPEN;
	return 0;
}

int guest_start(struct virt *v, const struct guest_opts *o, struct guest **out, struct err *e)
{
	struct guest *g;
	const char *name;
	int r;

	*out = NULL;
	if (!v || !o || !o->xml || !o->channel_name || !*o->channel_name)
		return err_set(e, -EINVAL, "cannot start a guest: domain XML or channel name missing");
	g = calloc(1, sizeof(*g));
	if (!g)
		return err_set(e, -ENOMEM, "cannot start a guest: out of memory");
	g->v = v;
	g->log_fd = -1;
	g->log_max = o->console_log_max ? o->console_log_max : GUEST_CONSOLE_LOG_MAX;
	g->qemu_pid = -1;
	g->gone_at_ms = -1;
	rec_reader_init(&g->rd);
	if (o->console_log_path) {
		g->log_fd = open(o->console_log_path,
				 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0644);
		if (g->log_fd < 0) {
			int errnum = errno;

			r = err_set(e, -errnum, "cannot open console log '%s': %s",
				    o->console_log_path, strerror(errnum));
			goto fail;
		}
	}
	g->dom = virDomainCreateXML(v->conn, o->xml, 0);
	if (!g->dom && strstr(virt_lv_msg(), "Permission denied")) {
		r = lv_err(e, -EACCES, "cannot start a guest on '%s': %s: QEMU runs as an "
			   "unprivileged user there, so the kernel, initrd, disk and every "
			   "directory above them must be readable by it (e.g. 'chmod o+rx')",
			   v->uri, virt_lv_msg());
		goto fail;
	}
	if (!g->dom) {
		r = lv_err(e, -EIO, "cannot start a guest on '%s': %s", v->uri, virt_lv_msg());
		goto fail;
	}
	name = virDomainGetName(g->dom);
	g->name = strdup(name ? name : "?");
	if (!g->name) {
		r = err_set(e, -ENOMEM, "cannot start a guest: out of memory");
		goto fail;
	}
	r = open_stream(g, true, o->channel_name, &g->chan, &g->chan_st, e);
	if (r)
		goto fail;
	r = open_stream(g, false, NULL, &g->cons, &g->cons_st, e);
	if (r)
		goto fail;
	*out = g;
	return 0;

fail:
	guest_destroy(g);
	return r;
}

/* ---- stale guests ---------------------------------------------------------- */

/* "thpeval-<pid>-<rest>" -> pid; -1 if the name does not have that shape */
static long stale_name_pid(const char *name)
{
	const char *p, *dash;
	char digits[24];
	uint64_t pid;
	size_t n;

	if (!name || strncmp(name, VIRT_NAME_PREFIX, strlen(VIRT_NAME_PREFIX)) != 0)
		return -1;
	p = name + strlen(VIRT_NAME_PREFIX);
	dash = strchr(p, '-');
	if (!dash || !dash[1])
		return -1;
	n = (size_t)(dash - p);
	if (n == 0 || n >= sizeof(digits))
		return -1;
	memcpy(digits, p, n);
	digits[n] = '\0';
	if (parse_u64_range(digits, 1, INT_MAX, &pid) < 0)
		return -1;
	return (long)pid;
}

/*
 * A dead run's domain is gone only when libvirt no longer lists it. One that
 * libvirtd is still starting for a run killed inside virDomainCreateXML can
 * be neither running nor defined yet, or refuse a destroy while its start
 * holds the domain's job; passed over, it runs on (seen after a SIGKILL in
 * integration/run.sh). So: destroy, undefine, look again, until it is gone or
 * this long has passed.
 */
#define REAP_SETTLE_MS 60000
#define REAP_POLL_MS 200

/* remove one dead run's domain: 1 removed, 0 it vanished by itself, or <0 */
static int reap_one(virDomainPtr dom, const char *name, struct err *e)
{
	int64_t deadline = mono_ms() + REAP_SETTLE_MS;
	bool acted = false;
	int active, persistent;

	for (;;) {
		active = virDomainIsActive(dom);
		persistent = active < 0 ? -1 : virDomainIsPersistent(dom);
		if (active < 0 || persistent < 0) {
			if (virt_lv_code() == VIR_ERR_NO_DOMAIN)
				return acted ? 1 : 0;
			return lv_err(e, -EIO, "cannot query stale guest '%s': %s", name, virt_lv_msg());
		}
		if (active == 1) {
			acted = true;
			if (virDomainDestroy(dom) == 0)
				continue;	/* a transient one is gone now, a defined one next */
		} else if (persistent == 1) {
			acted = true;
			if (virDomainUndefineFlags(dom, VIR_DOMAIN_UNDEFINE_MANAGED_SAVE |
						   VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA |
						   VIR_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA |
						   VIR_DOMAIN_UNDEFINE_NVRAM) == 0 ||
			    virDomainUndefine(dom) == 0)
				continue;
		}
		/* starting (neither running nor defined), or a call refused: look again */
		if (mono_ms() >= deadline)
			return lv_err(e, -ETIMEDOUT,
				      "stale guest '%s' is still there after %d s (%s): remove it with "
				      "'virsh destroy %s'", name, REAP_SETTLE_MS / 1000,
				      active == 1 || persistent == 1 ? virt_lv_msg() : "still starting", name);
		usleep(REAP_POLL_MS * 1000);
	}
}

int virt_reap_stale(struct virt *v, int *removed, struct err *e)
{
	virDomainPtr *doms = NULL;
	int n, i, r, ret = 0;

	*removed = 0;
	n = virConnectListAllDomains(v->conn, &doms, 0);
	if (n < 0)
		return lv_err(e, -EIO, "cannot list the domains of '%s': %s", v->uri, virt_lv_msg());
	for (i = 0; i < n; i++) {
		const char *name = virDomainGetName(doms[i]);
		long pid = stale_name_pid(name);

		if (pid > 0 && !pid_alive(pid)) {
			r = reap_one(doms[i], name, ret ? NULL : e);
			if (r > 0)
				(*removed)++;
			else if (r < 0 && !ret)
				ret = r;
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	return ret;
}

int virt_destroy_name(struct virt *v, const char *name, struct err *e)
{
	virDomainPtr dom = virDomainLookupByName(v->conn, name);
	int r = 0;

	if (!dom) {
		virResetLastError();
		return 0;	/* already gone */
	}
	if (virDomainIsActive(dom) == 1 && virDomainDestroy(dom) < 0)
		r = lv_err(e, -EIO, "cannot destroy guest '%s': %s", name, virt_lv_msg());
	if (virDomainIsPersistent(dom) == 1)
		virDomainUndefine(dom);
	virDomainFree(dom);
	virResetLastError();
	return r;
}
