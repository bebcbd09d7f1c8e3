/*
 * conn: the libvirt connection (open, close, versions, liveness), the error
 * helpers the other files of virt/ share, and the KVM/TCG decision.
 */
#include "orchestrator/virt/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <libvirt/virterror.h>
#include <libxml/parser.h>
#include <libxml/uri.h>
#include <libxml/xpath.h>
#include <linux/kvm.h>

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

int virt_oneline(struct err *e, int rc)
{
	char *p;

	for (p = e ? e->msg : NULL; p && *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	return rc;
}

const char *virt_lv_msg(void)
{
	return virGetLastErrorMessage();
}

int virt_lv_code(void)
{
	virErrorPtr le = virGetLastError();

	return le ? le->code : VIR_ERR_OK;
}

void virt_noop_timer(int timer, void *opaque)
{
	(void)timer;
	(void)opaque;
}

/* ---- connection ---------------------------------------------------------- */

static int open_error(const char *uri, struct err *e)
{
	virErrorPtr le = virGetLastError();
	const char *m = virt_lv_msg();

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

int virt_uri_check_local(const char *uri, struct err *e)
{
	const char *transport;
	xmlURIPtr u;
	int r = 0;

	if (!uri || !(u = xmlParseURI(uri)))
		return 0;
	transport = u->scheme ? strchr(u->scheme, '+') : NULL;
	if (u->server && *u->server)
		r = err_set(e, -EREMOTE, "libvirt URI '%s' names the host '%s': thpeval measures the host it runs on, "
			    "so run it on that host (for many hosts, the playbook in contrib/ansible/)", uri, u->server);
	else if (transport && strcasecmp(transport + 1, "unix"))
		r = err_set(e, -EREMOTE, "libvirt URI '%s' uses the transport '%s', which may reach another host: "
			    "thpeval measures the host it runs on, so connect locally (qemu:///system, qemu+unix:///...) "
			    "on the host to measure (for many hosts, the playbook in contrib/ansible/)", uri, transport + 1);
	xmlFreeURI(u);
	return virt_oneline(e, r);
}

int virt_open(const char *uri, struct virt **out, struct err *e)
{
	char *resolved;
	struct virt *v;
	int r;

	*out = NULL;
	if (!uri)
		uri = VIRT_DEFAULT_URI;
	if (!*uri)
		return err_set(e, -EINVAL, "libvirt URI is empty: use e.g. '%s'", VIRT_DEFAULT_URI);
	/* its code, not e->code: e may be NULL (err_set takes one) */
	if ((r = virt_uri_check_local(uri, e)))
		return r;
	pthread_once(&libvirt_once, libvirt_init);
	if (libvirt_init_rc < 0)
		return lv_err(e, -EIO, "cannot initialise libvirt: %s", virt_lv_msg());
	v = calloc(1, sizeof(*v));
	if (!v || !(v->uri = strdup(uri))) {
		free(v);
		return err_set(e, -ENOMEM, "cannot connect to '%s': out of memory", uri);
	}
	v->conn = virConnectOpen(uri);
	if (!v->conn) {
		r = open_error(uri, e);
		free(v->uri);
		free(v);
		return r;
	}
	virConnSetErrorFunc(v->conn, NULL, quiet_error);
	/* what libvirt made of it: an alias from libvirt.conf may name a remote host */
	resolved = virConnectGetURI(v->conn);
	if (resolved && strcmp(resolved, uri) && (r = virt_uri_check_local(resolved, e))) {
		err_wrap(e, "'%s' resolves to another host", uri);
		free(resolved);
		virt_close(v);
		return r;
	}
	free(resolved);
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
			       virt_lv_msg());
	if (virConnectGetVersion(v->conn, &hv) < 0)
		return lv_err(e, -EIO, "cannot get the hypervisor version from '%s': %s", v->uri,
			       virt_lv_msg());
	format_version(lv, libvirt_ver, l1);
	format_version(hv, hyp_ver, l2);
	return 0;
}

bool virt_alive(struct virt *v)
{
	return v && v->conn && virConnectIsAlive(v->conn) == 1;
}

bool virt_quick_cpu_check(struct virt *v)
{
	unsigned long lv = 0;

	return v && v->conn && virConnectGetLibVersion(v->conn, &lv) == 0 && lv >= 6000000;
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

bool virt_caps_emulator(const char *caps_xml, char *buf, size_t len)
{
	xmlDocPtr doc;
	xmlXPathContextPtr ctx = NULL;
	xmlXPathObjectPtr obj = NULL;
	bool found = false;

	if (!caps_xml || !len)
		return false;
	doc = xmlReadMemory(caps_xml, (int)strlen(caps_xml), "capabilities.xml", NULL,
			    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc)
		return false;
	ctx = xmlXPathNewContext(doc);
	if (ctx)
		obj = xmlXPathEvalExpression((const xmlChar *)
			"string(/capabilities/guest[os_type='hvm']/arch[@name='x86_64']/emulator)", ctx);
	if (obj && obj->type == XPATH_STRING && obj->stringval && obj->stringval[0] &&
	    strlen((const char *)obj->stringval) < len) {
		snprintf(buf, len, "%s", (const char *)obj->stringval);
		found = true;
	}
	xmlXPathFreeObject(obj);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	return found;
}

int virt_default_emulator(struct virt *v, char *buf, size_t len, struct err *e)
{
	char *caps = virConnectGetCapabilities(v->conn);
	bool found;

	if (!caps)
		return lv_err(e, -EIO, "cannot read the capabilities of '%s': %s", v->uri, virt_lv_msg());
	found = virt_caps_emulator(caps, buf, len);
	free(caps);
	if (!found)
		return err_set(e, -ENOENT, "'%s' names no emulator for an x86_64 hvm guest", v->uri);
	return 0;
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
		return lv_err(e, -EIO, "cannot read the capabilities of '%s': %s", v->uri, virt_lv_msg());
	caps_kvm = virt_caps_offer_kvm(caps);
	free(caps);
	return accel_decide(requested, virt_dev_kvm_usable(NULL),
			    virt_cpuinfo_has_virt(cpuinfo_path), caps_kvm, chosen, why, len, e);
}
