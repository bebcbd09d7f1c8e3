/*
 * tests for orchestrator/virt/domain.c: enum tables, spec validation, golden
 * XML (byte for byte), escaping, and orchestrator/virt/conn.c's accel_decide
 * (a pure function: every combination). THPEVAL_REGENERATE_GOLDEN=1
 * rewrites the golden files instead of comparing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "orchestrator/virt/domain.h"
#include "orchestrator/virt/virt.h"
#include "tests/orchestrator/fixture.h"

/* run from the repository root (make unit does); THPEVAL_SRCDIR overrides */
static void golden_path(const char *name, char *buf, size_t len)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "tests/orchestrator/golden/%s.xml", name);
	fixture_path(buf, len, rel);
}

/* ---- enum tables ---------------------------------------------------------- */

static void test_accel_names(void **state)
{
	static const struct {
		const char *s;
		int rc;
		enum accel a;
	} cases[] = {
		{ "auto", 0, ACCEL_AUTO }, { "kvm", 0, ACCEL_KVM }, { "tcg", 0, ACCEL_TCG },
		{ "KVM", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "tcg ", -EINVAL, 0 },
		{ "qemu", -EINVAL, 0 }, { NULL, -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum accel a = ACCEL__COUNT;

		assert_int_equal(accel_parse(cases[i].s, &a), cases[i].rc);
		if (cases[i].rc == 0) {
			assert_int_equal(a, cases[i].a);
			assert_string_equal(accel_name(a), cases[i].s);
		} else {
			assert_int_equal(a, ACCEL__COUNT);	/* untouched */
		}
	}
	assert_null(accel_name(ACCEL__COUNT));
	assert_null(accel_name((enum accel)-1));
}

static void test_prefault_names(void **state)
{
	static const struct {
		const char *s;
		int rc;
		enum prefault p;
	} cases[] = {
		{ "ondemand", 0, PREFAULT_ONDEMAND }, { "immediate", 0, PREFAULT_IMMEDIATE },
		{ "on-demand", -EINVAL, 0 }, { "Immediate", -EINVAL, 0 }, { "", -EINVAL, 0 },
		{ NULL, -EINVAL, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum prefault p = PREFAULT__COUNT;

		assert_int_equal(prefault_parse(cases[i].s, &p), cases[i].rc);
		if (cases[i].rc == 0) {
			assert_int_equal(p, cases[i].p);
			assert_string_equal(prefault_name(p), cases[i].s);
		}
	}
	assert_null(prefault_name(PREFAULT__COUNT));
}

/* ---- golden files ----------------------------------------------------------- */

#define ESC_DESCRIPTION "host THP <always> & guest 'never' \"cell 3\"\n\tsecond line"
#define ESC_CMDLINE "console=ttyS0 thpeval.tag=<a&b> quote=' dq=\""

static const struct golden_case {
	const char *name;
	struct domain_spec spec;
} goldens[] = {
	{ "kvm", {
		.name = "thpeval-1234-1",
		.uuid = "c7a5fdbd-cdaf-9455-926a-d65c16db1809",
		.memory_bytes = 1ull << 30, .vcpus = 2, .accel = ACCEL_KVM,
		.kernel = "/var/lib/thpeval/images/vmlinuz",
		.initrd = "/var/lib/thpeval/images/initrd",
		.cmdline = "console=ttyS0 root=/dev/vda rw transparent_hugepage=always",
		.disk_path = "/var/lib/thpeval/run/overlay-1.qcow2", .disk_format = "qcow2",
		.channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_ONDEMAND,
		.emulator = "/usr/bin/qemu-system-x86_64",
	} },
	{ "tcg_immediate_hugetlbfs", {
		.name = "thpeval-1234-2",
		.memory_bytes = 512ull << 20, .vcpus = 1, .accel = ACCEL_TCG,
		.kernel = "/boot/vmlinuz-6.1.0-57-amd64", .initrd = "/tmp/initrd.img",
		.cmdline = "console=ttyS0",
		.disk_path = "/tmp/root.img", .disk_format = "raw",
		.channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_IMMEDIATE,
		.hugetlb_kb = 2048,
	} },
	{ "escaping", {
		.name = "thpeval-1234-3",
		.memory_bytes = 256ull << 20, .vcpus = 1, .accel = ACCEL_TCG,
		.kernel = "/tmp/a&b/<k>'\"vmlinuz",
		.cmdline = ESC_CMDLINE,
		.disk_path = "/tmp/it's \"a\" <disk> & more.qcow2", .disk_format = "qcow2",
		.channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_ONDEMAND,
		.description = ESC_DESCRIPTION,
	} },
	{ "kcompile_srcdisk", {
		.name = "thpeval-1234-5",
		.memory_bytes = 2ull << 30, .vcpus = 2, .accel = ACCEL_TCG,
		.kernel = "/var/cache/thpeval/images/0123456789abcdef/kernel",
		.cmdline = "console=ttyS0 thpeval.kcompile=tinyconfig:mm/",
		.disk_path = "/var/cache/thpeval/images/overlays/thpeval-1234-5.qcow2", .disk_format = "qcow2",
		.ro_disk_path = "/var/cache/thpeval/images/src-0123456789abcdef/src.img",
		.channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_ONDEMAND,
	} },
	{ "minimal", {
		.name = "thpeval-1234-4",
		.memory_bytes = 128ull << 20, .vcpus = 1, .accel = ACCEL_TCG,
		.kernel = "/boot/vmlinuz",
		.channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_ONDEMAND,
	} },
};

static void test_goldens(void **state)
{
	bool regen = getenv("THPEVAL_REGENERATE_GOLDEN") != NULL;
	size_t i;

	for (i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++) {
		struct err e = ERR_INIT;
		char path[512], *xml = NULL, *want;

		golden_path(goldens[i].name, path, sizeof(path));
		assert_int_equal(domain_xml(&goldens[i].spec, &xml, &e), 0);
		assert_non_null(xml);
		if (regen) {
			FILE *f = fopen(path, "w");

			assert_non_null(f);
			fputs(xml, f);
			assert_int_equal(fclose(f), 0);
		}
		want = fixture_slurp(path, NULL);
		if (!want)
			fail_msg("golden '%s' is missing: run with THPEVAL_REGENERATE_GOLDEN=1", path);
		if (strcmp(xml, want) != 0) {
			fprintf(stderr, "--- golden %s\n%s--- got\n%s", path, want, xml);
			fail_msg("case '%s' differs from %s", goldens[i].name, path);
		}
		free(want);
		free(xml);
	}
}

static char *xpath_string(xmlDocPtr doc, const char *expr)
{
	xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
	xmlXPathObjectPtr obj;
	char *s = NULL;

	assert_non_null(ctx);
	obj = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
	if (obj && obj->type == XPATH_STRING)
		s = strdup((const char *)obj->stringval);
	xmlXPathFreeObject(obj);
	xmlXPathFreeContext(ctx);
	return s;
}

/* every golden file is well-formed; the escaping one round-trips the hostile text */
static void test_goldens_parse(void **state)
{
	static const struct {
		const char *golden, *xpath, *want;
	} checks[] = {
		{ "escaping", "string(/domain/description)", ESC_DESCRIPTION },
		{ "escaping", "string(/domain/os/cmdline)", ESC_CMDLINE },
		{ "escaping", "string(/domain/os/kernel)", "/tmp/a&b/<k>'\"vmlinuz" },
		{ "escaping", "string(/domain/devices/disk/source/@file)",
		  "/tmp/it's \"a\" <disk> & more.qcow2" },
		{ "kvm", "string(/domain/@type)", "kvm" },
		{ "kvm", "string(/domain/cpu/@mode)", "host-passthrough" },
		{ "kvm", "string(/domain/memory)", "1048576" },
		{ "kvm", "string(/domain/memoryBacking/allocation/@mode)", "ondemand" },
		{ "kvm", "string(/domain/devices/disk/driver/@type)", "qcow2" },
		{ "kvm", "string(/domain/devices/channel/target/@name)", DOMAIN_CHANNEL_NAME },
		{ "kvm", "string(/domain/devices/memballoon/@model)", "none" },
		{ "kvm", "string(/domain/on_crash)", "destroy" },
		{ "tcg_immediate_hugetlbfs", "string(/domain/@type)", "qemu" },
		{ "tcg_immediate_hugetlbfs", "string(count(/domain/cpu))", "0" },
		{ "tcg_immediate_hugetlbfs", "string(count(/domain/memoryBacking/hugepages))", "1" },
		{ "tcg_immediate_hugetlbfs", "string(count(/domain/memoryBacking/nosharepages))", "1" },
		{ "tcg_immediate_hugetlbfs", "string(/domain/memoryBacking/allocation/@mode)",
		  "immediate" },
		{ "tcg_immediate_hugetlbfs", "string(count(/domain/devices/graphics))", "0" },
		{ "tcg_immediate_hugetlbfs", "string(count(/domain/devices/interface))", "0" },
		{ "minimal", "string(count(/domain/devices/disk))", "0" },
		{ "minimal", "string(count(/domain/os/initrd))", "0" },
	};
	size_t i, j;

	for (i = 0; i < sizeof(goldens) / sizeof(goldens[0]); i++) {
		char path[512];
		xmlDocPtr doc;

		golden_path(goldens[i].name, path, sizeof(path));
		doc = xmlReadFile(path, NULL, XML_PARSE_NONET);
		if (!doc)
			fail_msg("golden '%s' is not well-formed XML", path);
		for (j = 0; j < sizeof(checks) / sizeof(checks[0]); j++) {
			char *got;

			if (strcmp(checks[j].golden, goldens[i].name) != 0)
				continue;
			got = xpath_string(doc, checks[j].xpath);
			assert_non_null(got);
			if (strcmp(got, checks[j].want) != 0)
				fail_msg("%s: %s = '%s', want '%s'", goldens[i].name, checks[j].xpath,
					 got, checks[j].want);
			free(got);
		}
		xmlFreeDoc(doc);
	}
}

/* ---- invalid specs ---------------------------------------------------------- */

enum mutation {
	M_NO_NAME, M_SLASH_NAME, M_AUTO, M_BAD_ACCEL, M_MEM0, M_MEM_ODD, M_VCPU0, M_NO_KERNEL,
	M_NO_CHANNEL, M_BAD_FORMAT, M_NO_FORMAT, M_CTRL_CMDLINE, M_NL_CMDLINE, M_BAD_UTF8,
	M_BAD_PREFAULT,
};

/* libvirt refuses <hugepages/> with allocation ondemand: the element is left out */
static void test_hugetlbfs_ondemand(void **state)
{
	struct domain_spec s = {
		.name = "thpeval-1234-9", .memory_bytes = 512ull << 20, .vcpus = 1, .accel = ACCEL_TCG,
		.kernel = "/boot/vmlinuz", .channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_ONDEMAND,
		.hugetlb_kb = 2048,
	};
	struct err e = ERR_INIT;
	char *xml = NULL;

	(void)state;
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	assert_non_null(strstr(xml, "<hugepages/>"));
	assert_null(strstr(xml, "<allocation"));
	assert_null(strstr(xml, "<page "));
	free(xml);
	/* the 1G arm names its page size, so that libvirt picks the 1G mount */
	s.hugetlb_kb = 1048576;
	s.memory_bytes = 1ull << 30;
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	assert_non_null(strstr(xml, "<hugepages>"));
	assert_non_null(strstr(xml, "<page size=\"1048576\" unit=\"KiB\"/>"));
	assert_null(strstr(xml, "<hugepages/>"));
	assert_null(strstr(xml, "<allocation"));
	free(xml);
	s.hugetlb_kb = 0;
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	assert_non_null(strstr(xml, "<allocation mode=\"ondemand\"/>"));
	free(xml);
}

/* the KSM arm's guests share pages (no <nosharepages/>); every other guest keeps it */
static void test_share_pages(void **state)
{
	struct domain_spec s = {
		.name = "thpeval-1234-9", .memory_bytes = 512ull << 20, .vcpus = 1, .accel = ACCEL_TCG,
		.kernel = "/boot/vmlinuz", .channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_ONDEMAND,
	};
	struct err e = ERR_INIT;
	char *xml = NULL;

	(void)state;
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	assert_non_null(strstr(xml, "<nosharepages/>"));
	free(xml);
	s.share_pages = true;
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	assert_null(strstr(xml, "nosharepages"));
	assert_non_null(strstr(xml, "<memoryBacking>"));
	free(xml);
}

/*
 * The quick CPU check: libvirt's <qemu:capabilities> in its own namespace
 * (a parser that knows the namespace finds the element), and nothing of the
 * namespace without it.
 */
static void test_quick_cpu_check(void **state)
{
	struct domain_spec s = {
		.name = "thpeval-1234-9", .memory_bytes = 512ull << 20, .vcpus = 1, .accel = ACCEL_TCG,
		.kernel = "/boot/vmlinuz", .channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_ONDEMAND,
	};
	struct err e = ERR_INIT;
	xmlXPathContextPtr ctx;
	xmlXPathObjectPtr obj;
	xmlDocPtr doc;
	char *xml = NULL;

	(void)state;
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	assert_null(strstr(xml, "qemu:"));
	free(xml);
	s.quick_cpu_check = true;
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	doc = xmlReadMemory(xml, (int)strlen(xml), "d.xml", NULL, XML_PARSE_NONET);
	assert_non_null(doc);
	ctx = xmlXPathNewContext(doc);
	assert_int_equal(xmlXPathRegisterNs(ctx, (const xmlChar *)"q",
					    (const xmlChar *)"http://libvirt.org/schemas/domain/qemu/1.0"), 0);
	obj = xmlXPathEvalExpression((const xmlChar *)"string(/domain/q:capabilities/q:del/@capability)", ctx);
	assert_non_null(obj);
	assert_string_equal((const char *)obj->stringval, "cpu-unavailable-features");
	xmlXPathFreeObject(obj);
	xmlXPathFreeContext(ctx);
	xmlFreeDoc(doc);
	free(xml);
}

/* a migrated guest's console also goes to a file QEMU appends to; the path must be absolute */
static void test_serial_log(void **state)
{
	struct domain_spec s = {
		.name = "thpeval-1234-9", .memory_bytes = 512ull << 20, .vcpus = 1, .accel = ACCEL_TCG,
		.kernel = "/boot/vmlinuz", .channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_ONDEMAND,
	};
	struct err e = ERR_INIT;
	char *xml = NULL;

	(void)state;
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	assert_null(strstr(xml, "<log "));
	free(xml);
	s.serial_log = "/tmp/out/guests/thpeval-1234-9.serial.log";
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	assert_non_null(strstr(xml, "<log file=\"/tmp/out/guests/thpeval-1234-9.serial.log\" append=\"on\"/>"));
	free(xml);
	s.serial_log = "out/x.log";
	assert_int_equal(domain_xml(&s, &xml, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "absolute"));
}

/* --pin: <cputune> with a vcpupin per pinned vCPU and the emulator's; none without pins */
static void test_pinning(void **state)
{
	const int pins[2] = { 1, -1 };
	struct domain_spec s = {
		.name = "thpeval-1234-9", .memory_bytes = 512ull << 20, .vcpus = 2, .accel = ACCEL_TCG,
		.kernel = "/boot/vmlinuz", .channel_name = DOMAIN_CHANNEL_NAME, .prefault = PREFAULT_ONDEMAND,
		.emulator_pin = 0,
	};
	struct err e = ERR_INIT;
	char *xml = NULL;

	(void)state;
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	assert_null(strstr(xml, "<cputune"));
	free(xml);
	s.vcpu_pin = pins;
	assert_int_equal(domain_xml(&s, &xml, &e), 0);
	assert_non_null(strstr(xml, "<cputune>\n    <vcpupin vcpu=\"0\" cpuset=\"1\"/>\n    <emulatorpin cpuset=\"0\"/>\n  </cputune>"));
	assert_null(strstr(xml, "vcpu=\"1\""));
	free(xml);
}

static void test_invalid_specs(void **state)
{
	static const struct {
		const char *what;
		enum mutation m;
		const char *msg;
	} cases[] = {
		{ "missing name", M_NO_NAME, "'name' is missing" },
		{ "slash in name", M_SLASH_NAME, "contains '/'" },
		{ "auto accel", M_AUTO, "resolve 'auto' first" },
		{ "accel out of range", M_BAD_ACCEL, "accel must be" },
		{ "zero memory", M_MEM0, "not a positive multiple of 1 KiB" },
		{ "memory not KiB", M_MEM_ODD, "not a positive multiple of 1 KiB" },
		{ "zero vcpus", M_VCPU0, "vcpus must be at least 1" },
		{ "missing kernel", M_NO_KERNEL, "'kernel' is missing" },
		{ "missing channel", M_NO_CHANNEL, "'channel_name' is missing" },
		{ "bad disk format", M_BAD_FORMAT, "disk format 'vmdk' is not" },
		{ "disk without format", M_NO_FORMAT, "'disk_format' is missing" },
		{ "control char", M_CTRL_CMDLINE, "'cmdline' contains control character 0x01" },
		{ "newline in cmdline", M_NL_CMDLINE, "'cmdline' contains control character 0x0a" },
		{ "invalid utf-8", M_BAD_UTF8, "'description' is not valid UTF-8" },
		{ "bad prefault", M_BAD_PREFAULT, "invalid prefault mode" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct domain_spec s = goldens[0].spec;
		static char sentinel[] = "sentinel";
		struct err e = ERR_INIT;
		char *xml = sentinel;

		switch (cases[i].m) {
		case M_NO_NAME: s.name = NULL; break;
		case M_SLASH_NAME: s.name = "a/b"; break;
		case M_AUTO: s.accel = ACCEL_AUTO; break;
		case M_BAD_ACCEL: s.accel = ACCEL__COUNT; break;
		case M_MEM0: s.memory_bytes = 0; break;
		case M_MEM_ODD: s.memory_bytes = 1000; break;
		case M_VCPU0: s.vcpus = 0; break;
		case M_NO_KERNEL: s.kernel = ""; break;
		case M_NO_CHANNEL: s.channel_name = NULL; break;
		case M_BAD_FORMAT: s.disk_format = "vmdk"; break;
		case M_NO_FORMAT: s.disk_format = NULL; break;
		case M_CTRL_CMDLINE: s.cmdline = "console=ttyS0\001"; break;
		case M_NL_CMDLINE: s.cmdline = "console=ttyS0\nquiet"; break;
		case M_BAD_UTF8: s.description = "caf\xc3"; break;
		case M_BAD_PREFAULT: s.prefault = PREFAULT__COUNT; break;
		}
		assert_int_equal(domain_xml(&s, &xml, &e), -EINVAL);
		assert_null(xml);
		assert_int_equal(e.code, -EINVAL);
		if (!strstr(e.msg, cases[i].msg))
			fail_msg("case '%s': message '%s' lacks '%s'", cases[i].what, e.msg,
				 cases[i].msg);
	}
}

/* ---- accel_decide ----------------------------------------------------------- */

static void test_accel_decide(void **state)
{
	static const struct {
		enum accel req;
		bool dev, flags, caps;
		int rc;
		enum accel chosen;
		const char *text;	/* in why, or in the error message */
	} cases[] = {
		{ ACCEL_AUTO, true, true, true, 0, ACCEL_KVM, "kvm usable" },
		{ ACCEL_AUTO, true, true, false, 0, ACCEL_TCG,
		  "kvm unusable: libvirt offers no 'kvm' domain type; using tcg" },
		{ ACCEL_AUTO, true, false, true, 0, ACCEL_TCG,
		  "kvm unusable: no vmx/svm in /proc/cpuinfo; using tcg" },
		{ ACCEL_AUTO, true, false, false, 0, ACCEL_TCG,
		  "kvm unusable: no vmx/svm in /proc/cpuinfo, libvirt offers no 'kvm' domain type; using tcg" },
		{ ACCEL_AUTO, false, true, true, 0, ACCEL_TCG,
		  "kvm unusable: /dev/kvm is not usable; using tcg" },
		{ ACCEL_AUTO, false, true, false, 0, ACCEL_TCG,
		  "kvm unusable: /dev/kvm is not usable, libvirt offers no 'kvm' domain type; using tcg" },
		{ ACCEL_AUTO, false, false, true, 0, ACCEL_TCG,
		  "kvm unusable: /dev/kvm is not usable, no vmx/svm in /proc/cpuinfo; using tcg" },
		{ ACCEL_AUTO, false, false, false, 0, ACCEL_TCG,
		  "kvm unusable: /dev/kvm is not usable, no vmx/svm in /proc/cpuinfo, libvirt offers no 'kvm' domain type; using tcg" },
		{ ACCEL_KVM, true, true, true, 0, ACCEL_KVM, "kvm requested and usable" },
		{ ACCEL_KVM, true, true, false, -ENODEV, 0,
		  "kvm requested but unusable: libvirt offers no 'kvm' domain type: request 'tcg' or 'auto' instead" },
		{ ACCEL_KVM, true, false, true, -ENODEV, 0,
		  "kvm requested but unusable: no vmx/svm in /proc/cpuinfo: request 'tcg' or 'auto' instead" },
		{ ACCEL_KVM, true, false, false, -ENODEV, 0, "no vmx/svm in /proc/cpuinfo, libvirt" },
		{ ACCEL_KVM, false, true, true, -ENODEV, 0,
		  "kvm requested but unusable: /dev/kvm is not usable: request" },
		{ ACCEL_KVM, false, true, false, -ENODEV, 0, "/dev/kvm is not usable, libvirt" },
		{ ACCEL_KVM, false, false, true, -ENODEV, 0, "/dev/kvm is not usable, no vmx/svm" },
		{ ACCEL_KVM, false, false, false, -ENODEV, 0,
		  "/dev/kvm is not usable, no vmx/svm in /proc/cpuinfo, libvirt offers no" },
		{ ACCEL_TCG, true, true, true, 0, ACCEL_TCG, "tcg requested" },
		{ ACCEL_TCG, false, false, false, 0, ACCEL_TCG, "tcg requested" },
		{ ACCEL_TCG, true, false, true, 0, ACCEL_TCG, "tcg requested" },
		{ ACCEL__COUNT, true, true, true, -EINVAL, 0, "invalid accelerator request" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err e = ERR_INIT;
		enum accel chosen = ACCEL__COUNT;
		char why[256] = "";
		int rc = accel_decide(cases[i].req, cases[i].dev, cases[i].flags, cases[i].caps,
				      &chosen, why, sizeof(why), &e);

		if (rc != cases[i].rc)
			fail_msg("case %zu: rc %d, want %d (%s)", i, rc, cases[i].rc, e.msg);
		if (rc == 0) {
			assert_int_equal(chosen, cases[i].chosen);
			assert_false(err_isset(&e));
			if (!strstr(why, cases[i].text))
				fail_msg("case %zu: why '%s' lacks '%s'", i, why, cases[i].text);
		} else {
			assert_int_equal(chosen, ACCEL__COUNT);
			assert_int_equal(e.code, rc);
			if (!strstr(e.msg, cases[i].text))
				fail_msg("case %zu: error '%s' lacks '%s'", i, e.msg, cases[i].text);
		}
	}
}

/* the free page reporting arm: a virtio balloon that reports; every other guest: none */
static void test_balloon_reporting(void **state)
{
	static const struct {
		const char *name;
		bool reporting;
		const char *want, *not_want;
	} cases[] = {
		{ "no balloon", false, "<memballoon model=\"none\"/>", "virtio\" freePageReporting" },
		{ "reporting", true, "<memballoon model=\"virtio\" freePageReporting=\"on\"/>", "memballoon model=\"none\"" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct domain_spec s = goldens[0].spec;
		struct err e = ERR_INIT;
		char *xml = NULL;

		s.balloon_reporting = cases[i].reporting;
		assert_int_equal(domain_xml(&s, &xml, &e), 0);
		if (!strstr(xml, cases[i].want) || strstr(xml, cases[i].not_want))
			fail_msg("%s: want '%s' and no '%s' in\n%s", cases[i].name, cases[i].want, cases[i].not_want, xml);
		free(xml);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_accel_names),
		cmocka_unit_test(test_prefault_names),
		cmocka_unit_test(test_goldens),
		cmocka_unit_test(test_goldens_parse),
		cmocka_unit_test(test_invalid_specs),
		cmocka_unit_test(test_hugetlbfs_ondemand),
		cmocka_unit_test(test_pinning),
		cmocka_unit_test(test_share_pages),
		cmocka_unit_test(test_quick_cpu_check),
		cmocka_unit_test(test_serial_log),
		cmocka_unit_test(test_accel_decide),
		cmocka_unit_test(test_balloon_reporting),
	};

	return cmocka_run_group_tests_name("orchestrator/domain", tests, NULL, NULL);
}
