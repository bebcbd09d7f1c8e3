/*
 * tests for orchestrator/virt/ (virt.h: conn.c, guest.c, stream.c).
 * Unit tier (no root): libvirt's in-process mock driver test:///default,
 * fake cpuinfo files, capabilities strings, connection errors.
 * Integration tier (root + a running libvirtd; THPEVAL_SKIP_INTEGRATION=1
 * skips it): the golden domain XML through qemu:///system's validator, and
 * a real TCG guest booted from the Debian kernel with a tiny initramfs
 * (mkinitramfs.sh + smoke_init.c) that talks the record protocol.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "orchestrator/virt/domain.h"
#include "orchestrator/virt/virt.h"
#include "tests/orchestrator/fixture.h"

#define TEST_URI "test:///default"
#define SYSTEM_SOCK "/run/libvirt/libvirt-sock"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static char *make_tmpdir(void)
{
	char tmpl[] = "/tmp/thpeval-test-virt-XXXXXX";
	char *d = mkdtemp(tmpl);

	assert_non_null(d);
	/* qemu:///system runs QEMU as libvirt-qemu: it must reach files in here */
	assert_int_equal(chmod(d, 0755), 0);
	return strdup(d);
}

static void rm_tree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

static bool domain_exists(virConnectPtr c, const char *name)
{
	virDomainPtr d = virDomainLookupByName(c, name);

	if (!d)
		return false;
	virDomainFree(d);
	return true;
}

static char *spec_xml(const char *name, enum accel a, const char *kernel, const char *initrd,
		      const char *cmdline)
{
	struct domain_spec s = {
		.name = name, .memory_bytes = 256ull << 20, .vcpus = 1, .accel = a,
		.kernel = kernel, .initrd = initrd, .cmdline = cmdline,
		.channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_ONDEMAND,
		.description = "thpeval test_virt",
	};
	struct err e = ERR_INIT;
	char *xml = NULL;

	if (domain_xml(&s, &xml, &e))
		fail_msg("domain_xml: %s", e.msg);
	return xml;
}

/* ---- unit tier: connection -------------------------------------------------- */

static void test_open_test_driver(void **state)
{
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	char lv[32], hv[32];

	assert_int_equal(virt_open(TEST_URI, &v, &e), 0);
	assert_non_null(v);
	assert_string_equal(virt_uri(v), TEST_URI);
	assert_non_null(virt_conn(v));
	assert_int_equal(virt_versions(v, lv, sizeof(lv), hv, sizeof(hv), &e), 0);
	/* "major.minor.micro" */
	assert_int_equal(strspn(lv, "0123456789."), strlen(lv));
	assert_non_null(strchr(lv, '.'));
	assert_true(strlen(hv) > 0);
	virt_close(v);
	virt_close(NULL);
	assert_null(virt_uri(NULL));
}

static void test_open_errors(void **state)
{
	static const struct {
		const char *what, *uri;
		int code;
		const char *msg1, *msg2;
		bool root_only;		/* for others a running libvirtd asks polkit first; these
					 * cases also need the daemon (it judges the URI) */
	} cases[] = {
		{ "socket missing", "qemu+unix:///system?socket=/nonexistent", -ECONNREFUSED,
		  "cannot connect to 'qemu+unix:///system?socket=/nonexistent': libvirtd is not running",
		  "start it with 'virtlogd -d; libvirtd -d'", false },
		{ "socket refuses", NULL /* filled below */, -ECONNREFUSED,
		  "libvirtd is not running", "Connection refused", false },
		{ "unknown driver", "bogus:///x", -EINVAL, "bad URI", "use e.g. 'qemu:///system'",
		  true },
		{ "bad qemu path", "qemu:///sistem", -EINVAL, "bad URI", "qemu:///system", true },
		{ "empty", "", -EINVAL, "URI is empty", "qemu:///system", false },
	};
	char *dir = make_tmpdir();
	char uri[400];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;
	size_t i;

	/* a socket that exists but refuses: bound, never listening */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/refuse.sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	snprintf(uri, sizeof(uri), "qemu+unix:///system?socket=%s", sa.sun_path);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err e = ERR_INIT;
		struct virt *v = (struct virt *)&e;	/* must be reset to NULL */
		const char *u = cases[i].uri ? cases[i].uri : uri;

		if (cases[i].root_only && (geteuid() != 0 || access("/run/libvirt/libvirt-sock", F_OK) != 0))
			continue;
		assert_int_equal(virt_open(u, &v, &e), cases[i].code);
		assert_null(v);
		if (!strstr(e.msg, cases[i].msg1) || !strstr(e.msg, cases[i].msg2))
			fail_msg("case '%s': message '%s' lacks '%s' or '%s'", cases[i].what, e.msg,
				 cases[i].msg1, cases[i].msg2);
		/* one line, lower-case start */
		assert_null(strchr(e.msg, '\n'));
		assert_true(e.msg[0] >= 'a' && e.msg[0] <= 'z');
	}
	close(fd);
	rm_tree(dir);
	free(dir);
}

/* libvirt URIs that reach another host are refused before any connection; local ones pass */
static void test_uri_check_local(void **state)
{
	static const struct {
		const char *uri;
		int code;
		const char *msg;	/* part of the message when refused */
	} cases[] = {
		{ "qemu:///system", 0, NULL },
		{ "qemu:///session", 0, NULL },
		{ "qemu+unix:///system?socket=/run/libvirt/libvirt-sock", 0, NULL },
		{ "qemu+UNIX:///system", 0, NULL },
		{ "test:///default", 0, NULL },
		{ "qemu:///embed?root=/tmp/x", 0, NULL },
		{ "$(touch /tmp/x)", 0, NULL },		/* not a URI: libvirt refuses it */
		{ "qemu+ssh://x/system", -EREMOTE, "names the host 'x'" },
		{ "qemu+ssh://root@lab-7.example.org:2222/system", -EREMOTE, "names the host 'lab-7.example.org'" },
		{ "qemu+tcp://10.0.0.2/system", -EREMOTE, "names the host '10.0.0.2'" },
		{ "qemu+tls://host.example/system?no_verify=1", -EREMOTE, "names the host 'host.example'" },
		{ "qemu://host/system", -EREMOTE, "names the host 'host'" },
		{ "qemu://localhost/system", -EREMOTE, "names the host 'localhost'" },
		{ "qemu+libssh2://h/system", -EREMOTE, "names the host 'h'" },
		{ "qemu+ssh:///system", -EREMOTE, "uses the transport 'ssh'" },
		{ "qemu+tcp:///system", -EREMOTE, "uses the transport 'tcp'" },
		{ "qemu+TLS:///system", -EREMOTE, "uses the transport 'TLS'" },
		{ "qemu+ext:///system?command=/bin/x", -EREMOTE, "uses the transport 'ext'" },
		{ "qemu+tcp://:16509/system", -EREMOTE, "uses the transport 'tcp'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err e = ERR_INIT;
		struct virt *v = (struct virt *)&e;
		int r = virt_uri_check_local(cases[i].uri, &e);

		if (r != cases[i].code)
			fail_msg("'%s': %d, want %d (%s)", cases[i].uri, r, cases[i].code, e.msg);
		if (!cases[i].msg)
			continue;
		if (!strstr(e.msg, cases[i].msg) || !strstr(e.msg, "thpeval measures the host it runs on") ||
		    !strstr(e.msg, "contrib/ansible/") || strchr(e.msg, '\n'))
			fail_msg("'%s': message '%s'", cases[i].uri, e.msg);
		/* virt_open refuses it the same way, before connecting */
		err_clear(&e);
		assert_int_equal(virt_open(cases[i].uri, &v, &e), -EREMOTE);
		assert_null(v);
		assert_non_null(strstr(e.msg, cases[i].msg));
		/* and without an error slot (err_set takes NULL): the code, no crash */
		v = (struct virt *)&e;
		assert_int_equal(virt_open(cases[i].uri, &v, NULL), -EREMOTE);
		assert_null(v);
	}
}

static void test_open_permission(void **state)
{
	char *dir, uri[400];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	int fd;

	if (geteuid() == 0) {
		print_message("skipped: root ignores socket permissions\n");
		skip();
	}
	dir = make_tmpdir();
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/denied.sock", dir);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(listen(fd, 1), 0);
	assert_int_equal(chmod(sa.sun_path, 0), 0);
	snprintf(uri, sizeof(uri), "qemu+unix:///system?socket=%s", sa.sun_path);
	assert_int_equal(virt_open(uri, &v, &e), -EACCES);
	assert_non_null(strstr(e.msg, "permission denied"));
	close(fd);
	rm_tree(dir);
	free(dir);
}

/* ---- unit tier: accel probes -------------------------------------------------- */

static void test_cpuinfo_flags(void **state)
{
	static const struct {
		const char *text;
		bool want;
	} cases[] = {
		{ "processor\t: 0\nflags\t\t: fpu vme de pse vmx sse\n", true },
		{ "processor\t: 0\nflags\t\t: fpu svm\n", true },
		{ "flags\t\t: vmx\n", true },
		{ "processor\t: 0\nflags\t\t: fpu vme de pse tsc msr hypervisor\n", false },
		{ "flags\t\t: vmxx svmfoo\nbugs\t\t: vmx\n", false },
		{ "vmx flags\t: vnmi preemption_timer\n", false },	/* a different line */
		{ "", false },
	};
	char *dir = make_tmpdir();
	char path[300];
	size_t i;

	snprintf(path, sizeof(path), "%s/cpuinfo", dir);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		write_file(path, cases[i].text);
		if (virt_cpuinfo_has_virt(path) != cases[i].want)
			fail_msg("case %zu: want %d", i, cases[i].want);
	}
	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_false(virt_cpuinfo_has_virt(path));
	assert_false(virt_dev_kvm_usable("/nonexistent/kvm"));
	rm_tree(dir);
	free(dir);
}

static void test_caps_offer_kvm(void **state)
{
	static const struct {
		const char *xml;
		bool want;
	} cases[] = {
		{ "<capabilities><guest><os_type>hvm</os_type><arch name='x86_64'>"
		  "<domain type='qemu'/><domain type='kvm'/></arch></guest></capabilities>", true },
		{ "<capabilities><guest><os_type>hvm</os_type><arch name='x86_64'>"
		  "<domain type='qemu'/></arch></guest></capabilities>", false },
		{ "<capabilities><guest><os_type>hvm</os_type><arch name='i686'>"
		  "<domain type='kvm'/></arch></guest><guest><os_type>hvm</os_type>"
		  "<arch name='x86_64'><domain type='qemu'/></arch></guest></capabilities>", false },
		{ "<capabilities><guest><os_type>xen</os_type><arch name='x86_64'>"
		  "<domain type='kvm'/></arch></guest></capabilities>", false },
		{ "<capabilities><guest>", false },
		{ "", false },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (virt_caps_offer_kvm(cases[i].xml) != cases[i].want)
			fail_msg("case %zu: want %d", i, cases[i].want);
	assert_false(virt_caps_offer_kvm(NULL));
}

/* the QEMU binary libvirt runs for a domain that names none: the balloon arm probes it */
static void test_caps_emulator(void **state)
{
	static const struct {
		const char *xml, *want;
	} cases[] = {
		{ "<capabilities><guest><os_type>hvm</os_type><arch name='x86_64'><emulator>/usr/bin/qemu-system-x86_64"
		  "</emulator><domain type='qemu'/></arch></guest></capabilities>", "/usr/bin/qemu-system-x86_64" },
		{ "<capabilities><guest><os_type>hvm</os_type><arch name='i686'><emulator>/usr/bin/qemu-i386</emulator>"
		  "</arch></guest><guest><os_type>hvm</os_type><arch name='x86_64'><emulator>/opt/q</emulator>"
		  "</arch></guest></capabilities>", "/opt/q" },
		{ "<capabilities><guest><os_type>hvm</os_type><arch name='x86_64'><domain type='qemu'/></arch>"
		  "</guest></capabilities>", NULL },
		{ "<capabilities><guest>", NULL },
	};
	char buf[64];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = virt_caps_emulator(cases[i].xml, buf, sizeof(buf));

		if (got != (cases[i].want != NULL) || (got && strcmp(buf, cases[i].want)))
			fail_msg("case %zu: got %d '%s'", i, got, got ? buf : "");
	}
	assert_false(virt_caps_emulator(NULL, buf, sizeof(buf)));
	assert_false(virt_caps_emulator(cases[0].xml, buf, 8));	/* does not fit */
}

static void test_accel_choose_test_driver(void **state)
{
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	char *dir = make_tmpdir(), path[300], why[256];
	enum accel chosen = ACCEL__COUNT;

	snprintf(path, sizeof(path), "%s/cpuinfo", dir);
	write_file(path, "flags\t\t: fpu vme hypervisor\n");
	assert_int_equal(virt_open(TEST_URI, &v, &e), 0);
	assert_int_equal(virt_accel_choose(v, ACCEL_AUTO, path, &chosen, why, sizeof(why), &e), 0);
	assert_int_equal(chosen, ACCEL_TCG);
	/* the test driver offers only domain type 'test' */
	assert_non_null(strstr(why, "no vmx/svm in /proc/cpuinfo"));
	assert_non_null(strstr(why, "libvirt offers no 'kvm' domain type; using tcg"));
	assert_int_equal(virt_accel_choose(v, ACCEL_TCG, path, &chosen, why, sizeof(why), &e), 0);
	assert_int_equal(chosen, ACCEL_TCG);
	assert_int_equal(virt_accel_choose(v, ACCEL_KVM, path, &chosen, why, sizeof(why), &e),
			 -ENODEV);
	assert_non_null(strstr(e.msg, "kvm requested but unusable"));
	virt_close(v);
	rm_tree(dir);
	free(dir);
}

/* ---- unit tier: guests on the mock driver --------------------------------------- */

static void test_guest_start_test_driver(void **state)
{
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	struct guest *g = (struct guest *)&e;	/* must be reset to NULL */
	char *dir = make_tmpdir(), log[300], *xml;
	struct guest_opts o = { .channel_name = DOMAIN_CHANNEL_NAME };
	struct stat st;

	assert_int_equal(virt_open(TEST_URI, &v, &e), 0);
	xml = spec_xml("thpeval-1-1", ACCEL_TCG, "/boot/vmlinuz", NULL, NULL);
	snprintf(log, sizeof(log), "%s/console.log", dir);
	o.xml = xml;
	o.console_log_path = log;
	/* the mock driver creates the domain but cannot stream its channel */
	assert_int_equal(guest_start(v, &o, &g, &e), -EOPNOTSUPP);
	assert_null(g);
	assert_non_null(strstr(e.msg, "cannot open the channel of guest 'thpeval-1-1'"));
	assert_non_null(strstr(e.msg, "not supported"));
	/* cleaned up: no domain left behind; the log was created before the domain */
	assert_false(domain_exists(virt_conn(v), "thpeval-1-1"));
	assert_int_equal(stat(log, &st), 0);

	/* a domain XML libvirt rejects: clean error, nothing left */
	err_clear(&e);
	o.xml = "<domain type='test'><name>thpeval-1-2</name></domain>";
	assert_int_equal(guest_start(v, &o, &g, &e), -EIO);
	assert_non_null(strstr(e.msg, "cannot start a guest on 'test:///default'"));
	assert_false(domain_exists(virt_conn(v), "thpeval-1-2"));

	/* an unwritable console log: fails before any domain exists */
	err_clear(&e);
	o.xml = xml;
	o.console_log_path = "/nonexistent/dir/console.log";
	assert_int_equal(guest_start(v, &o, &g, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "cannot open console log '/nonexistent/dir/console.log'"));
	assert_false(domain_exists(virt_conn(v), "thpeval-1-1"));

	/* missing arguments */
	err_clear(&e);
	o.xml = NULL;
	assert_int_equal(guest_start(v, &o, &g, &e), -EINVAL);

	/* NULL-tolerant accessors */
	guest_destroy(NULL);
	assert_null(guest_name(NULL));
	assert_int_equal(guest_qemu_pid(NULL), -1);
	free(xml);
	virt_close(v);
	rm_tree(dir);
	free(dir);
}

static void define_test_domain(virConnectPtr c, const char *name, bool running)
{
	char *xml = spec_xml(name, ACCEL_TCG, "/boot/vmlinuz", NULL, NULL);
	virDomainPtr d = running ? virDomainCreateXML(c, xml, 0) : virDomainDefineXML(c, xml);

	if (!d)
		fail_msg("cannot create '%s' in the test driver: %s", name, virGetLastErrorMessage());
	virDomainFree(d);
	free(xml);
}

static void test_reap_stale(void **state)
{
	static const struct {
		const char *name;	/* NULL: thpeval-<our pid>-1 */
		bool running, reaped;
	} cases[] = {
		{ "thpeval-999999-1", false, true },	/* persistent, dead owner */
		{ "thpeval-999999-2", true, true },	/* transient running, dead owner */
		{ NULL, true, false },			/* our own: alive */
		{ "thpeval-999999", false, false },	/* not the naming scheme */
		{ "thpeval-abc-1", false, false },
		{ "other-999999-1", false, false },
	};
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	char names[6][64];
	int removed = -1;
	size_t i;

	/* pid_max is at most 4194304: make sure 999999 is really free here */
	if (kill(999999, 0) == 0 || errno != ESRCH) {
		print_message("skipped: pid 999999 exists on this machine\n");
		skip();
	}
	assert_int_equal(virt_open(TEST_URI, &v, &e), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].name)
			snprintf(names[i], sizeof(names[i]), "%s", cases[i].name);
		else
			snprintf(names[i], sizeof(names[i]), "thpeval-%d-1", (int)getpid());
		define_test_domain(virt_conn(v), names[i], cases[i].running);
	}
	assert_int_equal(virt_reap_stale(v, &removed, &e), 0);
	assert_int_equal(removed, 2);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		virDomainPtr d;

		if (domain_exists(virt_conn(v), names[i]) == cases[i].reaped)
			fail_msg("'%s' %s", names[i], cases[i].reaped ? "not reaped" : "reaped");
		d = virDomainLookupByName(virt_conn(v), names[i]);
		if (!d)
			continue;
		if (virDomainIsActive(d) == 1)
			virDomainDestroy(d);
		if (virDomainIsPersistent(d) == 1)
			virDomainUndefine(d);
		virDomainFree(d);
	}
	/* nothing stale left: a second pass removes nothing */
	assert_int_equal(virt_reap_stale(v, &removed, &e), 0);
	assert_int_equal(removed, 0);
	virt_close(v);
}

static const char *const goldens[] = { "kvm", "tcg_immediate_hugetlbfs", "escaping",
				       "minimal" };

/* tests/orchestrator/golden/NAME.xml into buf; its path into path */
static void read_golden(const char *name, char *path, size_t path_len, char *buf, size_t len)
{
	char rel[128];
	size_t n;
	FILE *f;

	snprintf(rel, sizeof(rel), "tests/orchestrator/golden/%s.xml", name);
	fixture_path(path, path_len, rel);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open '%s' (run from the repository root)", path);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	assert_true(n < len - 1);
	fclose(f);
}

/* define (validating), then undefine: the driver's parser and checks, never started */
static void define_golden(virConnectPtr conn, const char *uri, const char *name)
{
	char path[300], buf[16384];
	virDomainPtr d;

	read_golden(name, path, sizeof(path), buf, sizeof(buf));
	d = virDomainDefineXMLFlags(conn, buf, VIR_DOMAIN_DEFINE_VALIDATE);
	if (!d)
		fail_msg("%s rejects '%s': %s", uri, path, virGetLastErrorMessage());
	assert_int_equal(virDomainUndefine(d), 0);
	virDomainFree(d);
}

/* every golden file is a domain the test driver's parser accepts */
static void test_goldens_define_test_driver(void **state)
{
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	size_t i;

	assert_int_equal(virt_open(TEST_URI, &v, &e), 0);
	for (i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++)
		define_golden(virt_conn(v), TEST_URI, goldens[i]);
	virt_close(v);
}

/*
 * every golden file is valid against libvirt's domain schema, whatever the
 * machine offers (virt-xml-validate, from libvirt-clients)
 */
static void test_goldens_schema(void **state)
{
	size_t i;

	if (system("command -v virt-xml-validate >/dev/null 2>&1") != 0) {
		print_message("skipped: virt-xml-validate is missing (apt-get install "
			      "libvirt-clients)\n");
		skip();
	}
	for (i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++) {
		char rel[128], path[300], cmd[700];
		int rc;

		snprintf(rel, sizeof(rel), "tests/orchestrator/golden/%s.xml", goldens[i]);
		fixture_path(path, sizeof(path), rel);
		/* its output (the errors) only when it fails */
		snprintf(cmd, sizeof(cmd),
			 "out=$(virt-xml-validate '%s' domain 2>&1) || { echo \"$out\"; exit 1; }",
			 path);
		rc = system(cmd);
		if (rc != 0)
			fail_msg("'%s' is not valid against libvirt's domain schema "
				 "(virt-xml-validate exit %d)", path, rc);
	}
}

/* ---- integration tier: qemu:///system -------------------------------------------- */

static bool integration_ok(void)
{
	if (getenv("THPEVAL_SKIP_INTEGRATION")) {
		print_message("skipped: THPEVAL_SKIP_INTEGRATION is set\n");
		return false;
	}
	if (geteuid() != 0) {
		print_message("skipped: needs root for qemu:///system\n");
		return false;
	}
	if (access(SYSTEM_SOCK, F_OK) != 0) {
		print_message("skipped: no %s: start 'virtlogd -d; libvirtd -d'\n", SYSTEM_SOCK);
		return false;
	}
	return true;
}

/*
 * the goldens through qemu:///system's own checks. Whether it accepts a 'kvm'
 * domain is the machine's business (a KVM device, libvirt's capabilities):
 * the kvm golden is defined there only where libvirt offers the 'kvm' type,
 * and skipped with the reason elsewhere; the schema test covers it everywhere.
 */
static void system_golden(bool kvm)
{
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	size_t i;

	if (!integration_ok())
		skip();
	if (virt_open(VIRT_DEFAULT_URI, &v, &e))
		fail_msg("%s", e.msg);
	if (kvm) {
		char *caps = virConnectGetCapabilities(virt_conn(v));
		bool offered;

		assert_non_null(caps);
		offered = virt_caps_offer_kvm(caps);
		free(caps);
		if (!offered) {
			virt_close(v);
			print_message("skipped: libvirt offers no 'kvm' domain type on this "
				      "machine; kvm.xml is checked by the schema and the test "
				      "driver only\n");
			skip();
		}
		define_golden(virt_conn(v), VIRT_DEFAULT_URI, "kvm");
	}
	for (i = 0; !kvm && i < sizeof(goldens) / sizeof(goldens[0]); i++)
		if (strcmp(goldens[i], "kvm"))
			define_golden(virt_conn(v), VIRT_DEFAULT_URI, goldens[i]);
	virt_close(v);
}

static void test_system_goldens_validate(void **state)
{
	system_golden(false);
}

static void test_system_golden_kvm(void **state)
{
	system_golden(true);
}

struct smoke {
	char *dir, kernel[300], initrd[300], log[300];
};

static struct smoke *smoke_setup(void)
{
	struct smoke *s = calloc(1, sizeof(*s));
	char cmd[1000], src[300];
	FILE *p;
	int status;

	assert_non_null(s);
	s->dir = make_tmpdir();
	snprintf(s->initrd, sizeof(s->initrd), "%s/initrd.gz", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/console.log", s->dir);
	fixture_path(src, sizeof(src), "");
	/* the script builds relative to the repository root */
	snprintf(cmd, sizeof(cmd), "cd '%s.' && sh tests/orchestrator/mkinitramfs.sh '%s'", src,
		 s->initrd);
	p = popen(cmd, "r");
	assert_non_null(p);
	if (!fgets(s->kernel, sizeof(s->kernel), p))
		s->kernel[0] = '\0';
	s->kernel[strcspn(s->kernel, "\n")] = '\0';
	status = pclose(p);
	if (status != 0 || !s->kernel[0]) {
		rm_tree(s->dir);
		free(s->dir);
		free(s);
		/* 77: the machine lacks a part (the script said which); else ours failed */
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
			return NULL;
		fail_msg("tests/orchestrator/mkinitramfs.sh failed (status %d): the smoke init or "
			 "its initramfs did not build (its messages above)", status);
	}
	return s;
}

static void smoke_free(struct smoke *s)
{
	if (!s)
		return;
	rm_tree(s->dir);
	free(s->dir);
	free(s);
}

/*
 * What every system guest test starts with: skipped unless integration_ok() and the smoke
 * initramfs builds; *v opened on the default URI.
 */
static struct smoke *smoke_begin(struct virt **v)
{
	struct err e = ERR_INIT;
	struct smoke *s;

	if (!integration_ok())
		skip();
	s = smoke_setup();
	if (!s) {
		print_message("skipped: this machine lacks a part of the smoke initramfs (mkinitramfs.sh said which)\n");
		skip();
	}
	if (virt_open(VIRT_DEFAULT_URI, v, &e))
		fail_msg("%s", e.msg);
	return s;
}

struct collect {
	unsigned records, rejected;
	uint32_t seq[8];
	char reasons[4][160];
	bool stop_on_first, stop_on_end;
};

static int collect_fn(void *opaque, enum guest_event ev, const struct record *rec,
		      const char *reason)
{
	struct collect *c = opaque;

	if (ev == GUEST_EV_REJECTED) {
		if (c->rejected < 4)
			snprintf(c->reasons[c->rejected], sizeof(c->reasons[0]), "%s", reason);
		c->rejected++;
		return 0;
	}
	if (c->records < 8)
		c->seq[c->records] = rec->seq;
	c->records++;
	if (c->stop_on_first)
		return 1;
	return c->stop_on_end && rec->type == REC_END;
}

static bool file_contains(const char *path, const char *needle)
{
	char *buf = calloc(1, 1 << 20);
	bool found = false;
	FILE *f = fopen(path, "r");

	if (f && buf) {
		size_t n = fread(buf, 1, (1 << 20) - 1, f);

		buf[n] = '\0';
		found = strstr(buf, needle) != NULL;
	}
	if (f)
		fclose(f);
	free(buf);
	return found;
}

/*
 * Limits for a TCG guest: generous, so that a slow or busy host only takes
 * longer (how long is printed; speed belongs in `make bench`). Boot to the
 * first record; each later step; a poll that must not wait out its timeout.
 */
#define TCG_BOOT_MS 300000
#define TCG_STEP_MS 120000
#define POLL_SANITY_MS 30000

/* boot, read records (stopping early and resuming), say bye, see it power off */
static void test_system_guest_records(void **state)
{
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	struct guest *g = NULL;
	struct smoke *s;
	struct collect c = { .stop_on_first = true };
	struct guest_counters cnt;
	enum guest_poll_result res;
	long long t0, t_first, t_end, t_bye, t_gone, t_teardown;
	char name[64], *xml, path[64], comm[64] = "";
	int pid;
	FILE *f;

	s = smoke_begin(&v);
	snprintf(name, sizeof(name), "thpeval-%d-1", (int)getpid());
	xml = spec_xml(name, ACCEL_TCG, s->kernel, s->initrd, "console=ttyS0 panic=-1 quiet");

	t0 = now_ms();
	if (guest_start(v, &(struct guest_opts){ .xml = xml, .console_log_path = s->log,
						 .channel_name = DOMAIN_CHANNEL_NAME }, &g, &e))
		fail_msg("%s", e.msg);
	assert_string_equal(guest_name(g), name);

	/* QEMU's pid, and it is QEMU */
	pid = guest_qemu_pid(g);
	assert_true(pid > 0);
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(comm, sizeof(comm), f));
	fclose(f);
	assert_non_null(strstr(comm, "qemu"));

	/* stop at the first record ... */
	assert_int_equal(guest_poll(g, TCG_BOOT_MS, NULL, collect_fn, &c, &res, &e), 0);
	t_first = now_ms();
	assert_int_equal(res, GUEST_POLL_STOPPED_BY_CALLBACK);
	assert_int_equal(c.records, 1);
	/* ... and resume: nothing lost in between */
	c.stop_on_first = false;
	c.stop_on_end = true;
	assert_int_equal(guest_poll(g, TCG_STEP_MS, NULL, collect_fn, &c, &res, &e), 0);
	t_end = now_ms();
	assert_int_equal(res, GUEST_POLL_STOPPED_BY_CALLBACK);
	assert_int_equal(c.records, 3);
	assert_int_equal(c.seq[0], 1);
	assert_int_equal(c.seq[1], 2);
	assert_int_equal(c.seq[2], 3);
	assert_int_equal(c.rejected, 2);
	assert_non_null(strstr(c.reasons[1], "longer than"));

	t_bye = now_ms();
	assert_int_equal(guest_send(g, "bye\n", 4, &e), 0);
	c.stop_on_end = false;
	assert_int_equal(guest_poll(g, TCG_STEP_MS, NULL, collect_fn, &c, &res, &e), 0);
	t_gone = now_ms();
	assert_int_equal(res, GUEST_POLL_GUEST_GONE);
	guest_counters(g, &cnt);
	assert_int_equal(cnt.records, 3);
	assert_int_equal(cnt.rejected, 2);
	assert_true(cnt.console_bytes > 0);

	t_teardown = now_ms();
	guest_destroy(g);
	t_teardown = now_ms() - t_teardown;
	assert_false(domain_exists(virt_conn(v), name));
	assert_true(file_contains(s->log, "smoke_init: started"));
	assert_true(file_contains(s->log, "smoke_init: got bye"));
	print_message("timing: create -> first record %lld ms, -> end record %lld ms, "
		      "bye -> guest gone %lld ms, guest_destroy after poweroff %lld ms\n",
		      t_first - t0, t_end - t0, t_gone - t_bye, t_teardown);
	free(xml);
	virt_close(v);
	smoke_free(s);
}

static long rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	return kib;
}

struct flood {
	unsigned records, rejected, oversized;
	bool end;
};

static int flood_fn(void *opaque, enum guest_event ev, const struct record *rec,
		    const char *reason)
{
	struct flood *f = opaque;

	if (ev == GUEST_EV_REJECTED) {
		f->rejected++;
		f->oversized += strstr(reason, "longer than") != NULL;
		return 0;
	}
	f->records++;
	f->end = rec->type == REC_END;
	return f->end;
}

/* a guest flooding channel and console: all of it read, memory flat, log capped */
#define FLOOD_MIB 16
#define FLOOD_LOG_MAX 65536

static void test_system_guest_flood(void **state)
{
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	struct guest *g = NULL;
	struct smoke *s;
	struct flood f = { 0 };
	struct guest_counters cnt;
	enum guest_poll_result res;
	struct stat st;
	long long t;
	long rss0, rss1;
	char name[64], *xml;

	s = smoke_begin(&v);
	snprintf(name, sizeof(name), "thpeval-%d-3", (int)getpid());
	xml = spec_xml(name, ACCEL_TCG, s->kernel, s->initrd,
		       "console=ttyS0 panic=-1 quiet thpeval.flood=16");
	if (guest_start(v, &(struct guest_opts){ .xml = xml, .console_log_path = s->log,
						 .channel_name = DOMAIN_CHANNEL_NAME,
						 .console_log_max = FLOOD_LOG_MAX }, &g, &e))
		fail_msg("%s", e.msg);
	rss0 = rss_kib();
	t = now_ms();
	assert_int_equal(guest_poll(g, TCG_BOOT_MS + TCG_STEP_MS, NULL, flood_fn, &f, &res, &e), 0);
	t = now_ms() - t;
	rss1 = rss_kib();
	assert_int_equal(res, GUEST_POLL_STOPPED_BY_CALLBACK);
	assert_true(f.end);
	assert_int_equal(f.records, 3);
	/* garbage + oversized + FLOOD_MIB MiB of 64-byte lines */
	assert_int_equal(f.rejected, 2 + FLOOD_MIB * 16384);
	assert_int_equal(f.oversized, 1);
	guest_counters(g, &cnt);
	assert_true(cnt.channel_bytes > (unsigned long long)FLOOD_MIB << 20);
	assert_true(cnt.console_bytes >= 256 * 1024);
	assert_true(cnt.console_dropped > 0);
	guest_destroy(g);
	/* capped log: FLOOD_LOG_MAX bytes and the marker line */
	assert_int_equal(stat(s->log, &st), 0);
	assert_true(st.st_size > FLOOD_LOG_MAX && st.st_size < FLOOD_LOG_MAX + 100);
	assert_true(file_contains(s->log, "[thpeval: console log truncated here]"));
	print_message("flood: %d MiB channel + %llu KiB console in %lld ms, RSS %ld -> %ld KiB\n",
		      FLOOD_MIB, cnt.console_bytes >> 10, t, rss0, rss1);
#ifndef __SANITIZE_ADDRESS__
	/* bounded buffers: the flood must not show up in our memory */
	assert_true(rss1 - rss0 < 16 * 1024);
#endif
	free(xml);
	virt_close(v);
	smoke_free(s);
}

/* stop flag, zero timeout, and tearing down a guest that still runs */
static void test_system_guest_teardown(void **state)
{
	volatile int stop = 0;
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	struct guest *g = NULL;
	struct smoke *s;
	struct collect c = { 0 };
	enum guest_poll_result res;
	long long t, t_create;
	char name[64], *xml;
	int pid;

	s = smoke_begin(&v);
	snprintf(name, sizeof(name), "thpeval-%d-2", (int)getpid());
	xml = spec_xml(name, ACCEL_TCG, s->kernel, s->initrd, "console=ttyS0 panic=-1");
	t = now_ms();
	if (guest_start(v, &(struct guest_opts){ .xml = xml, .channel_name = DOMAIN_CHANNEL_NAME },
			&g, &e))
		fail_msg("%s", e.msg);
	t_create = now_ms() - t;
	pid = guest_qemu_pid(g);
	assert_true(pid > 0);

	/*
	 * The guest runs under TCG meanwhile: how fast this host serves it is
	 * not the point. A zero timeout and a set stop flag return without
	 * waiting out the poll (bounded well under the 600 s given), a 300 ms
	 * timeout waits 300 ms and then returns.
	 */
	t = now_ms();
	assert_int_equal(guest_poll(g, 0, NULL, collect_fn, &c, &res, &e), 0);
	assert_int_equal(res, GUEST_POLL_TIMEOUT);
	assert_true(now_ms() - t < POLL_SANITY_MS);

	stop = 1;
	t = now_ms();
	assert_int_equal(guest_poll(g, 600000, &stop, collect_fn, &c, &res, &e), 0);
	assert_int_equal(res, GUEST_POLL_INTERRUPTED);
	assert_true(now_ms() - t < POLL_SANITY_MS);

	stop = 0;
	t = now_ms();
	assert_int_equal(guest_poll(g, 300, &stop, collect_fn, &c, &res, &e), 0);
	t = now_ms() - t;
	assert_int_equal(res, GUEST_POLL_TIMEOUT);
	assert_true(t >= 300 && t < POLL_SANITY_MS);

	t = now_ms();
	guest_destroy(g);
	t = now_ms() - t;
	assert_false(domain_exists(virt_conn(v), name));
	assert_true(kill(pid, 0) < 0 && errno == ESRCH);
	print_message("timing: guest_start %lld ms, guest_destroy of a running guest %lld ms\n",
		      t_create, t);
	free(xml);
	virt_close(v);
	smoke_free(s);
}

/* a real left-over: a paused transient domain of a dead thpeval */
static void test_system_reap(void **state)
{
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	virDomainPtr d;
	glob_t gl;
	char *xml, kernel[512];
	int removed = -1;

	if (!integration_ok())
		skip();
	if (kill(999999, 0) == 0 || errno != ESRCH) {
		print_message("skipped: pid 999999 exists on this machine: no dead thpeval to "
			      "pretend\n");
		skip();
	}
	if (virt_open(VIRT_DEFAULT_URI, &v, &e))
		fail_msg("%s", e.msg);
	/* QEMU loads the kernel even when paused: give it a real one */
	if (glob("/boot/vmlinuz-*", 0, NULL, &gl) != 0 || gl.gl_pathc == 0) {
		print_message("skipped: no /boot/vmlinuz-*\n");
		virt_close(v);
		skip();
	}
	snprintf(kernel, sizeof(kernel), "%s", gl.gl_pathv[0]);
	globfree(&gl);
	xml = spec_xml("thpeval-999999-7", ACCEL_TCG, kernel, NULL, NULL);
	d = virDomainCreateXML(virt_conn(v), xml, VIR_DOMAIN_START_PAUSED);
	if (!d)
		fail_msg("cannot create a paused domain: %s", virGetLastErrorMessage());
	virDomainFree(d);
	free(xml);
	/* and one defined, never started: undefined */
	xml = spec_xml("thpeval-999999-8", ACCEL_TCG, kernel, NULL, NULL);
	d = virDomainDefineXML(virt_conn(v), xml);
	if (!d)
		fail_msg("cannot define a domain: %s", virGetLastErrorMessage());
	virDomainFree(d);
	assert_int_equal(virt_reap_stale(v, &removed, &e), 0);
	assert_true(removed >= 2);
	assert_false(domain_exists(virt_conn(v), "thpeval-999999-7"));
	assert_false(domain_exists(virt_conn(v), "thpeval-999999-8"));
	free(xml);
	virt_close(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_test_driver),
		cmocka_unit_test(test_open_errors),
		cmocka_unit_test(test_uri_check_local),
		cmocka_unit_test(test_open_permission),
		cmocka_unit_test(test_cpuinfo_flags),
		cmocka_unit_test(test_caps_offer_kvm),
		cmocka_unit_test(test_caps_emulator),
		cmocka_unit_test(test_accel_choose_test_driver),
		cmocka_unit_test(test_guest_start_test_driver),
		cmocka_unit_test(test_reap_stale),
		cmocka_unit_test(test_goldens_define_test_driver),
		cmocka_unit_test(test_goldens_schema),
		cmocka_unit_test(test_system_goldens_validate),
		cmocka_unit_test(test_system_golden_kvm),
		cmocka_unit_test(test_system_guest_records),
		cmocka_unit_test(test_system_guest_flood),
		cmocka_unit_test(test_system_guest_teardown),
		cmocka_unit_test(test_system_reap),
	};

	return cmocka_run_group_tests_name("orchestrator/virt", tests, NULL, NULL);
}
