#include "orchestrator/virt/virt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <libvirt/virterror.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <linux/kvm.h>

#include "lib/clock.h"
#include "lib/parse.h"

#define POLL_TICK_MS 20			/* longest wait inside one poll round */
#define STATE_CHECK_MS 100		/* how often guest_poll asks libvirt for the state */
#define GONE_GRACE_MS 2000		/* after the domain stops: wait this long for channel EOF */
#define DRAIN_BUDGET (256u << 10)	/* bytes per stream per round: no stream starves the rest */
#define SEND_TIMEOUT_MS 5000
#define RECV_BUF 65536

struct virt {
	virConnectPtr conn;
	char *uri;
};

enum stream_state { ST_NONE, ST_OPEN, ST_EOF, ST_FAILED };

struct guest {
	struct virt *v;
	virDomainPtr dom;
	char *name;
	virStreamPtr chan, cons;
	enum stream_state chan_st, cons_st;
	int log_fd;
	unsigned long long log_bytes, log_max;
	bool log_truncated;
	int qemu_pid;
	struct rec_reader rd;
	/* channel bytes received but not yet fed (a callback stopped the last poll) */
	size_t pend_off, pend_len;
	struct guest_counters cnt;
	struct record rec;
	/* guest_poll's clock, kept across calls (a run with several guests polls with timeout 0) */
	long long last_state_ms;	/* when libvirt was last asked for the state */
	long long gone_at_ms;		/* when the domain was seen stopped, or -1 */
	char buf[RECV_BUF];
};

/* ---- libvirt plumbing --------------------------------------------------- */

static void quiet_error(void *opaque, virErrorPtr error)
{
	(void)opaque;
	(void)error;
}

/*
 * libvirt's event loop is process-wide and must be registered before the
 * first connection is opened (the remote driver then reads stream data as
 * it arrives); pthread_once keeps that to once per process.
 */
static pthread_once_t libvirt_once = PTHREAD_ONCE_INIT;
static int libvirt_init_rc;

static void libvirt_init(void)
{
	virSetErrorFunc(NULL, quiet_error);
	if (virInitialize() < 0 || virEventRegisterDefaultImpl() < 0)
		libvirt_init_rc = -1;
}

/* libvirt messages can quote QEMU's multi-line stderr: ours stay one line */
static int oneline(struct err *e, int rc)
{
	char *p;

	for (p = e ? e->msg : NULL; p && *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return rc;
}

#define lv_err(e, code, ...) oneline((e), err_set((e), (code), __VA_ARGS__))

static const char *lv_msg(void)
{
	return virGetLastErrorMessage();
}

static int lv_code(void)
{
	virErrorPtr le = virGetLastError();

	return le ? le->code : VIR_ERR_OK;
}

static void noop_timer(int timer, void *opaque)
{
	(void)timer;
	(void)opaque;
}

/* ---- connection ---------------------------------------------------------- */

static int open_error(const char *uri, struct err *e)
{
	virErrorPtr le = virGetLastError();
	const char *m = lv_msg();

	if (!le)
		return err_set(e, -EIO, "cannot connect to '%s': unknown libvirt error", uri);
	if (le->code == VIR_ERR_SYSTEM_ERROR && le->domain == VIR_FROM_RPC &&
	    (le->int1 == ENOENT || le->int1 == ECONNREFUSED))
		return lv_err(e, -ECONNREFUSED,
			       "cannot connect to '%s': libvirtd is not running (%s): "
			       "start it with 'virtlogd -d; libvirtd -d'", uri, m);
	if (le->int1 == EACCES || le->int1 == EPERM || le->code == VIR_ERR_AUTH_FAILED ||
	    le->code == VIR_ERR_AUTH_CANCELLED || le->code == VIR_ERR_AUTH_UNAVAILABLE ||
	    le->code == VIR_ERR_OPERATION_DENIED || le->domain == VIR_FROM_AUTH ||
	    /* a non-root client is checked by polkit over D-Bus */
	    le->domain == VIR_FROM_POLKIT || le->domain == VIR_FROM_DBUS)
		return lv_err(e, -EACCES,
			       "cannot connect to '%s': permission denied (%s): "
			       "run as root or join the 'libvirt' group", uri, m);
	if (le->code == VIR_ERR_NO_CONNECT || le->code == VIR_ERR_INVALID_ARG ||
	    le->domain == VIR_FROM_URI || strstr(m, "URI"))
		return lv_err(e, -EINVAL,
			       "cannot connect to '%s': bad URI (%s): use e.g. '%s'", uri, m,
			       VIRT_DEFAULT_URI);
	return lv_err(e, -EIO, "cannot connect to '%s': %s", uri, m);
}

int virt_open(const char *uri, struct virt **out, struct err *e)
{
	struct virt *v;

	*out = NULL;
	if (!uri)
		uri = VIRT_DEFAULT_URI;
	if (!*uri)
		return err_set(e, -EINVAL, "libvirt URI is empty: use e.g. '%s'", VIRT_DEFAULT_URI);
	pthread_once(&libvirt_once, libvirt_init);
	if (libvirt_init_rc < 0)
		return lv_err(e, -EIO, "cannot initialise libvirt: %s", lv_msg());
	v = calloc(1, sizeof(*v));
	if (!v || !(v->uri = strdup(uri))) {
		free(v);
		return err_set(e, -ENOMEM, "cannot connect to '%s': out of memory", uri);
	}
	v->conn = virConnectOpen(uri);
	if (!v->conn) {
		int r = open_error(uri, e);

		free(v->uri);
		free(v);
		return r;
	}
	virConnSetErrorFunc(v->conn, NULL, quiet_error);
	/* a hung daemon must not hang us: without an answer to 3 probes 5 s apart
	 * the connection is closed and the blocked call fails */
	if (virConnectSetKeepAlive(v->conn, VIRT_KEEPALIVE_INTERVAL_S, VIRT_KEEPALIVE_COUNT) < 0)
		virResetLastError();	/* in-process drivers (test:///) have no keepalive */
	*out = v;
	return 0;
}

void virt_close(struct virt *v)
{
	if (!v)
		return;
	if (v->conn)
		virConnectClose(v->conn);
	free(v->uri);
	free(v);
}

const char *virt_uri(const struct virt *v)
{
	return v ? v->uri : NULL;
}

virConnectPtr virt_conn(struct virt *v)
{
	return v ? v->conn : NULL;
}

static void format_version(unsigned long ver, char *buf, size_t len)
{
	if (ver == 0)
		snprintf(buf, len, "unknown");
	else
		snprintf(buf, len, "%lu.%lu.%lu", ver / 1000000, ver / 1000 % 1000, ver % 1000);
}

int virt_versions(struct virt *v, char *libvirt_ver, size_t l1, char *hyp_ver, size_t l2,
		  struct err *e)
{
	unsigned long lv = 0, hv = 0;

	if (virConnectGetLibVersion(v->conn, &lv) < 0)
		return lv_err(e, -EIO, "cannot get the libvirt version from '%s': %s", v->uri,
			       lv_msg());
	if (virConnectGetVersion(v->conn, &hv) < 0)
		return lv_err(e, -EIO, "cannot get the hypervisor version from '%s': %s", v->uri,
			       lv_msg());
	format_version(lv, libvirt_ver, l1);
	format_version(hv, hyp_ver, l2);
	return 0;
}

/* ---- accelerator ----------------------------------------------------------- */

int accel_decide(enum accel requested, bool dev_kvm_ok, bool cpu_virt_flags, bool caps_kvm,
		 enum accel *chosen, char *why, size_t len, struct err *e)
{
	char reasons[256] = "";
	size_t n = 0;

	if ((unsigned)requested >= ACCEL__COUNT)
		return err_set(e, -EINVAL, "invalid accelerator request %d", (int)requested);
	if (requested == ACCEL_TCG) {
		*chosen = ACCEL_TCG;
		snprintf(why, len, "tcg requested");
		return 0;
	}
	if (!dev_kvm_ok)
		n += (size_t)snprintf(reasons + n, sizeof(reasons) - n, "%s/dev/kvm is not usable",
				      n ? ", " : "");
	if (!cpu_virt_flags && n < sizeof(reasons))
		n += (size_t)snprintf(reasons + n, sizeof(reasons) - n,
				      "%sno vmx/svm in /proc/cpuinfo", n ? ", " : "");
	if (!caps_kvm && n < sizeof(reasons))
		snprintf(reasons + n, sizeof(reasons) - n,
			 "%slibvirt offers no 'kvm' domain type", n ? ", " : "");
	if (!reasons[0]) {
		*chosen = ACCEL_KVM;
		snprintf(why, len, "kvm %s: /dev/kvm, vmx/svm and libvirt's 'kvm' domain type present",
			 requested == ACCEL_KVM ? "requested and usable" : "usable");
		return 0;
	}
	if (requested == ACCEL_KVM)
		return err_set(e, -ENODEV,
			       "kvm requested but unusable: %s: request 'tcg' or 'auto' instead",
			       reasons);
	*chosen = ACCEL_TCG;
	snprintf(why, len, "kvm unusable: %s; using tcg", reasons);
	return 0;
}

bool virt_dev_kvm_usable(const char *dev_path)
{
	int fd = open(dev_path ? dev_path : "/dev/kvm", O_RDWR | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	ok = ioctl(fd, KVM_GET_API_VERSION, 0) == KVM_API_VERSION;
	close(fd);
	return ok;
}

static bool has_word(const char *line, const char *word)
{
	size_t wl = strlen(word);
	const char *p = line;

	while ((p = strstr(p, word))) {
		bool start = p == line || p[-1] == ' ' || p[-1] == '\t' || p[-1] == ':';
		bool stop = p[wl] == '\0' || p[wl] == ' ' || p[wl] == '\t' || p[wl] == '\n';

		if (start && stop)
			return true;
		p += wl;
	}
	return false;
}

bool virt_cpuinfo_has_virt(const char *cpuinfo_path)
{
	FILE *f = fopen(cpuinfo_path ? cpuinfo_path : "/proc/cpuinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		if (strncmp(line, "flags", 5) != 0)
			continue;
		found = has_word(line, "vmx") || has_word(line, "svm");
	}
	free(line);
	fclose(f);
	return found;
}

bool virt_caps_offer_kvm(const char *caps_xml)
{
	xmlDocPtr doc;
	xmlXPathContextPtr ctx = NULL;
	xmlXPathObjectPtr obj = NULL;
	bool found = false;

	if (!caps_xml)
		return false;
	doc = xmlReadMemory(caps_xml, (int)strlen(caps_xml), "capabilities.xml", NULL,
			    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc)
		return false;
	ctx = xmlXPathNewContext(doc);
	if (ctx)
		obj = xmlXPathEvalExpression((const xmlChar *)
			"/capabilities/guest[os_type='hvm']/arch[@name='x86_64']/domain[@type='kvm']",
			ctx);
	found = obj && obj->type == XPATH_NODESET && obj->nodesetval &&
		obj->nodesetval->nodeNr > 0;
	xmlXPathFreeObject(obj);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	return found;
}

int virt_accel_choose(struct virt *v, enum accel requested, const char *cpuinfo_path,
		      enum accel *chosen, char *why, size_t len, struct err *e)
{
	char *caps;
	bool caps_kvm;

	if (requested == ACCEL_TCG)
		return accel_decide(requested, false, false, false, chosen, why, len, e);
	caps = virConnectGetCapabilities(v->conn);
	if (!caps)
		return lv_err(e, -EIO, "cannot read the capabilities of '%s': %s", v->uri, lv_msg());
	caps_kvm = virt_caps_offer_kvm(caps);
	free(caps);
	return accel_decide(requested, virt_dev_kvm_usable(NULL),
			    virt_cpuinfo_has_virt(cpuinfo_path), caps_kvm, chosen, why, len, e);
}

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

static long pid_from_file(const char *name)
{
	char path[PATH_MAX], text[32];
	uint64_t pid;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/run/libvirt/qemu/%s.pid", name);
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
	long pid;

	if (!g)
		return -1;
	if (g->qemu_pid > 0 && cmdline_names_guest(g->qemu_pid, g->name))
		return g->qemu_pid;
	/* the pid file is only trusted if that process really runs this guest */
	pid = pid_from_file(g->name);
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
			       lv_msg());
	if (channel)
		r = virDomainOpenChannel(g->dom, chname, *st, 0);
	else
		r = virDomainOpenConsole(g->dom, NULL, *st, 0);
	if (r < 0) {
		bool unsupported = lv_code() == VIR_ERR_NO_SUPPORT;
		int rc;

		if (unsupported)
			rc = lv_err(e, -EOPNOTSUPP,
				     "cannot open the %s of guest '%s': %s: use a qemu:// URI",
				     channel ? "channel" : "console", g->name, lv_msg());
		else if (channel)
			rc = lv_err(e, -EIO,
				     "cannot open channel '%s' of guest '%s': %s: the domain needs "
				     "<channel type='unix'> with that target name", chname, g->name,
				     lv_msg());
		else
			rc = lv_err(e, -EIO, "cannot open the console of guest '%s': %s", g->name,
				     lv_msg());
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
	if (!g->dom && strstr(lv_msg(), "Permission denied")) {
		r = lv_err(e, -EACCES, "cannot start a guest on '%s': %s: QEMU runs as an "
			   "unprivileged user there, so the kernel, initrd, disk and every "
			   "directory above them must be readable by it (e.g. 'chmod o+rx')",
			   v->uri, lv_msg());
		goto fail;
	}
	if (!g->dom) {
		r = lv_err(e, -EIO, "cannot start a guest on '%s': %s", v->uri, lv_msg());
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

/* ---- polling ------------------------------------------------------------- */

struct poll_ctx {
	struct guest *g;
	guest_record_fn fn;
	void *opaque;
	bool stopped;
};

static int on_line(void *opaque, enum rec_line_kind kind, const char *line, size_t len)
{
	struct poll_ctx *pc = opaque;
	struct guest *g = pc->g;
	char why[128], reason[160];
	int r;

	if (kind == REC_LINE_OVERSIZED) {
		g->cnt.rejected++;
		snprintf(reason, sizeof(reason), "line longer than %d bytes", REC_MAX_LINE);
		r = pc->fn(pc->opaque, GUEST_EV_REJECTED, NULL, reason);
	} else if (rec_parse(line, len, &g->rec, why, sizeof(why)) < 0) {
		g->cnt.rejected++;
		snprintf(reason, sizeof(reason), "%s", why);
		r = pc->fn(pc->opaque, GUEST_EV_REJECTED, NULL, reason);
	} else {
		g->cnt.records++;
		r = pc->fn(pc->opaque, GUEST_EV_RECORD, &g->rec, NULL);
	}
	if (r)
		pc->stopped = true;
	return r;
}

/*
 * Feed g->buf[pend_off, pend_off+pend_len) line by line, so that when the
 * callback stops us the rest stays pending for the next guest_poll.
 */
static void feed_pending(struct poll_ctx *pc)
{
	struct guest *g = pc->g;

	while (g->pend_len && !pc->stopped) {
		const char *p = g->buf + g->pend_off;
		const char *nl = memchr(p, '\n', g->pend_len);
		size_t n = nl ? (size_t)(nl - p) + 1 : g->pend_len;

		if (rec_reader_feed(&g->rd, p, n, on_line, pc) && nl && g->rd.overflow) {
			/* stopped at an oversized line: skip its rest as the reader would */
			g->rd.overflow = false;
			g->rd.len = 0;
		}
		g->pend_off += n;
		g->pend_len -= n;
	}
}

static int log_console(struct guest *g, const char *data, size_t len, struct err *e)
{
	static const char marker[] = "\n[thpeval: console log truncated here]\n";
	size_t room, off = 0;

	g->cnt.console_bytes += len;
	if (g->log_fd < 0)
		return 0;
	room = g->log_bytes < g->log_max ? g->log_max - g->log_bytes : 0;
	if (len > room) {
		g->cnt.console_dropped += len - room;
		len = room;
	}
	while (off < len) {
		ssize_t n = write(g->log_fd, data + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int errnum = errno;

			return err_set(e, -errnum, "cannot write the console log of guest '%s': %s",
				       g->name, strerror(errnum));
		}
		off += (size_t)n;
	}
	g->log_bytes += len;
	if (g->log_bytes >= g->log_max && !g->log_truncated) {
		g->log_truncated = true;
		if (write(g->log_fd, marker, sizeof(marker) - 1) < 0) {
			int errnum = errno;

			return err_set(e, -errnum, "cannot write the console log of guest '%s': %s",
				       g->name, strerror(errnum));
		}
	}
	return 0;
}

/* 1 = still there (running, paused, shutting down), 0 = gone, < 0 = error */
static int domain_running(struct guest *g, struct err *e)
{
	int state, reason;

	if (virDomainGetState(g->dom, &state, &reason, 0) < 0) {
		if (lv_code() == VIR_ERR_NO_DOMAIN)
			return 0;	/* transient and shut off: libvirt forgot it */
		return lv_err(e, -EIO, "cannot get the state of guest '%s': %s", g->name,
			       lv_msg());
	}
	return state != VIR_DOMAIN_SHUTOFF && state != VIR_DOMAIN_CRASHED &&
	       state != VIR_DOMAIN_NOSTATE;
}

/*
 * Drain the channel: up to DRAIN_BUDGET bytes, fed to the callback.
 * Returns bytes taken, or < 0 on a stream error.
 */
static long drain_channel(struct poll_ctx *pc, struct err *e)
{
	struct guest *g = pc->g;
	long got = 0;

	feed_pending(pc);
	while (!pc->stopped && g->chan_st == ST_OPEN && (size_t)got < DRAIN_BUDGET) {
		int n = virStreamRecv(g->chan, g->buf, sizeof(g->buf));

		if (n == -2)
			break;
		if (n == 0) {
			g->chan_st = ST_EOF;
			if (g->rd.len || g->rd.overflow) {
				/* the guest never finished its last line */
				g->rd.len = 0;
				g->rd.overflow = false;
				g->cnt.rejected++;
				if (pc->fn(pc->opaque, GUEST_EV_REJECTED, NULL,
					   "incomplete line at end of channel"))
					pc->stopped = true;
			}
			break;
		}
		if (n < 0) {
			g->chan_st = ST_FAILED;
			lv_err(e, -EIO, "cannot read records from guest '%s': %s", g->name,
				lv_msg());
			return -EIO;
		}
		got += n;
		g->cnt.channel_bytes += (unsigned long long)n;
		g->pend_off = 0;
		g->pend_len = (size_t)n;
		feed_pending(pc);
	}
	return got;
}

static long drain_console(struct guest *g, char *buf, size_t len, struct err *e)
{
	long got = 0;

	while (g->cons_st == ST_OPEN && (size_t)got < DRAIN_BUDGET) {
		int n = virStreamRecv(g->cons, buf, len);

		if (n == -2)
			break;
		if (n <= 0) {
			/* the pty reports an error when QEMU exits: not a poll failure */
			g->cons_st = n == 0 ? ST_EOF : ST_FAILED;
			break;
		}
		got += n;
		if (log_console(g, buf, (size_t)n, e) < 0)
			return -EIO;
	}
	return got;
}

int guest_poll(struct guest *g, int timeout_ms, volatile const int *stop, guest_record_fn fn,
	       void *opaque, enum guest_poll_result *res, struct err *e)
{
	struct poll_ctx pc = { g, fn, opaque, false };
	struct err cherr = ERR_INIT;
	long long start = (long long)mono_ms();
	char *cbuf = NULL;
	int timer = -1, ret = 0;

	if (!g || !fn || !res)
		return err_set(e, -EINVAL, "guest_poll: guest, callback and result are required");
	*res = GUEST_POLL_TIMEOUT;
	cbuf = malloc(RECV_BUF);
	if (!cbuf)
		return err_set(e, -ENOMEM, "cannot poll guest '%s': out of memory", g->name);
	/* bounds each virEventRunDefaultImpl() wait; timeout 0 never waits (and adding
	 * and removing a timer would interrupt the caller's next wait) */
	if (timeout_ms != 0)
		timer = virEventAddTimeout(POLL_TICK_MS, noop_timer, NULL, NULL);
	if (timeout_ms != 0 && timer < 0) {
		free(cbuf);
		return lv_err(e, -EIO, "cannot poll guest '%s': no libvirt event loop: %s", g->name,
			       lv_msg());
	}
	for (;;) {
		bool chan_was_open = g->chan_st == ST_OPEN;
		long long now;
		long cg = 0, ng;

		ng = drain_channel(&pc, &cherr);
		if (ng < 0) {
			/* the stream fails when QEMU goes away under it: not an error then */
			int run = domain_running(g, e);

			if (run != 0) {
				ret = run < 0 ? run : err_set(e, cherr.code, "%s", cherr.msg);
				break;
			}
			ng = 0;
		}
		if (!pc.stopped)
			cg = drain_console(g, cbuf, RECV_BUF, e);
		if (cg < 0) {
			ret = (int)cg;
			break;
		}
		if (pc.stopped) {
			*res = GUEST_POLL_STOPPED_BY_CALLBACK;
			break;
		}
		if (stop && *stop) {
			*res = GUEST_POLL_INTERRUPTED;
			break;
		}
		now = (long long)mono_ms();
		/* ask libvirt every STATE_CHECK_MS, and at once when the channel ends */
		if (g->gone_at_ms < 0 && ((chan_was_open && g->chan_st != ST_OPEN) ||
				    now - g->last_state_ms >= STATE_CHECK_MS)) {
			int run = domain_running(g, e);

			g->last_state_ms = now;
			if (run < 0) {
				ret = run;
				break;
			}
			if (run == 0)
				g->gone_at_ms = now;
		}
		/* gone: all output is in once the channel ends (or after a grace period) */
		if (g->gone_at_ms >= 0 && (g->chan_st != ST_OPEN || now - g->gone_at_ms >= GONE_GRACE_MS)) {
			/* the console's last words, if they are in already */
			ret = drain_console(g, cbuf, RECV_BUF, e) < 0 ? -EIO : 0;
			*res = GUEST_POLL_GUEST_GONE;
			break;
		}
		if (timeout_ms == 0 || (timeout_ms > 0 && now - start >= timeout_ms)) {
			*res = GUEST_POLL_TIMEOUT;
			break;
		}
		/* nothing pending: wait for the event loop (data or the tick) */
		if (ng == 0 && cg == 0 && virEventRunDefaultImpl() < 0) {
			ret = lv_err(e, -EIO, "libvirt event loop failed: %s", lv_msg());
			break;
		}
	}
	if (timer >= 0)
		virEventRemoveTimeout(timer);
	free(cbuf);
	return ret;
}

int guest_send(struct guest *g, const char *data, size_t len, struct err *e)
{
	long long start = (long long)mono_ms();
	size_t off = 0;
	int timer = -1, ret = 0;

	if (!g || g->chan_st != ST_OPEN)
		return err_set(e, -EPIPE, "cannot send to guest '%s': its channel is closed",
			       g ? g->name : "?");
	while (off < len) {
		int n = virStreamSend(g->chan, data + off, len - off);

		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n != -2) {
			g->chan_st = ST_FAILED;
			ret = lv_err(e, -EIO, "cannot send to guest '%s': %s", g->name, lv_msg());
			break;
		}
		if ((long long)mono_ms() - start >= SEND_TIMEOUT_MS) {
			ret = err_set(e, -ETIMEDOUT,
				      "cannot send to guest '%s': its channel accepted nothing for %d ms",
				      g->name, SEND_TIMEOUT_MS);
			break;
		}
		if (timer < 0)
			timer = virEventAddTimeout(POLL_TICK_MS, noop_timer, NULL, NULL);
		virEventRunDefaultImpl();
	}
	if (timer >= 0)
		virEventRemoveTimeout(timer);
	return ret;
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

int virt_reap_stale(struct virt *v, int *removed, struct err *e)
{
	virDomainPtr *doms = NULL;
	int n, i, ret = 0;

	*removed = 0;
	n = virConnectListAllDomains(v->conn, &doms, 0);
	if (n < 0)
		return lv_err(e, -EIO, "cannot list the domains of '%s': %s", v->uri, lv_msg());
	for (i = 0; i < n; i++) {
		const char *name = virDomainGetName(doms[i]);
		long pid = stale_name_pid(name);
		bool failed = false;

		if (pid > 0 && !pid_alive(pid)) {
			if (virDomainIsActive(doms[i]) == 1 && virDomainDestroy(doms[i]) < 0 &&
			    lv_code() != VIR_ERR_NO_DOMAIN && lv_code() != VIR_ERR_OPERATION_INVALID) {
				ret = lv_err(e, -EIO, "cannot destroy stale guest '%s': %s", name,
					      lv_msg());
				failed = true;
			}
			if (!failed && virDomainIsPersistent(doms[i]) == 1 &&
			    virDomainUndefineFlags(doms[i], VIR_DOMAIN_UNDEFINE_MANAGED_SAVE |
						   VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA |
						   VIR_DOMAIN_UNDEFINE_CHECKPOINTS_METADATA |
						   VIR_DOMAIN_UNDEFINE_NVRAM) < 0 &&
			    virDomainUndefine(doms[i]) < 0) {
				ret = lv_err(e, -EIO, "cannot undefine stale guest '%s': %s", name,
					      lv_msg());
				failed = true;
			}
			if (!failed)
				(*removed)++;
		}
		virDomainFree(doms[i]);
	}
	free(doms);
	return ret;
}

bool virt_alive(struct virt *v)
{
	return v && v->conn && virConnectIsAlive(v->conn) == 1;
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
		r = lv_err(e, -EIO, "cannot destroy guest '%s': %s", name, lv_msg());
	if (virDomainIsPersistent(dom) == 1)
		virDomainUndefine(dom);
	virDomainFree(dom);
	virResetLastError();
	return r;
}

int virt_event_wait(int ms)
{
	/* one periodic timer for the process, never removed: adding and removing a
	 * timer around each wait interrupts the loop, so the next wait would return
	 * at once and a caller polling several guests would spin */
	static int timer = -1;

	if (timer < 0 && (timer = virEventAddTimeout(ms, noop_timer, NULL, NULL)) < 0)
		return -EIO;
	return virEventRunDefaultImpl() < 0 ? -EIO : 0;
}
