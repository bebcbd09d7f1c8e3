#include "orchestrator/virt/domain.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/encoding.h>
#include <libxml/xmlstring.h>
#include <libxml/xmlwriter.h>

/* libxml2 strings are UTF-8 bytes; BAD_CAST would also drop const */
static const xmlChar *xc(const char *s)
{
	return (const xmlChar *)s;
}

ENUM_IMPL(accel, ACCEL__COUNT, "auto", "kvm", "tcg");
ENUM_IMPL(prefault, PREFAULT__COUNT, "ondemand", "immediate");

/*
 * XML 1.0 cannot carry most C0 controls at all, and libxml2 needs UTF-8:
 * reject both here with a message naming the field, rather than let libvirt
 * fail on a document we produced.
 */
static int check_text(const char *field, const char *v, bool multiline, bool required,
		      struct err *e)
{
	const unsigned char *p;

	if (!v || !*v) {
		if (required)
			return err_set(e, -EINVAL, "domain spec: '%s' is missing", field);
		return 0;
	}
	if (!xmlCheckUTF8(xc(v)))
		return err_set(e, -EINVAL, "domain spec: '%s' is not valid UTF-8", field);
	for (p = (const unsigned char *)v; *p; p++) {
		if (*p >= 0x20 && *p != 0x7f)
			continue;
		if (multiline && (*p == '\t' || *p == '\n'))
			continue;
		return err_set(e, -EINVAL,
			       "domain spec: '%s' contains control character 0x%02x", field, *p);
	}
	return 0;
}

static int check_spec(const struct domain_spec *s, struct err *e)
{
	int r = 0;

	r = r ?: check_text("name", s->name, false, true, e);
	r = r ?: check_text("uuid", s->uuid, false, false, e);
	r = r ?: check_text("kernel", s->kernel, false, true, e);
	r = r ?: check_text("initrd", s->initrd, false, false, e);
	r = r ?: check_text("cmdline", s->cmdline, false, false, e);
	r = r ?: check_text("serial_log", s->serial_log, false, false, e);
	if (!r && s->serial_log && *s->serial_log && s->serial_log[0] != '/')
		r = err_set(e, -EINVAL, "domain spec: 'serial_log' must be an absolute path");
	r = r ?: check_text("disk_path", s->disk_path, false, false, e);
	r = r ?: check_text("ro_disk_path", s->ro_disk_path, false, false, e);
	r = r ?: check_text("channel_name", s->channel_name, false, true, e);
	r = r ?: check_text("emulator", s->emulator, false, false, e);
	r = r ?: check_text("description", s->description, true, false, e);
	if (r)
		return r;
	if (strchr(s->name, '/'))
		return err_set(e, -EINVAL, "domain spec: name '%s' contains '/'", s->name);
	if (s->accel != ACCEL_KVM && s->accel != ACCEL_TCG)
		return err_set(e, -EINVAL,
			       "domain spec: accel must be 'kvm' or 'tcg', resolve 'auto' first");
	if ((unsigned)s->prefault >= PREFAULT__COUNT)
		return err_set(e, -EINVAL, "domain spec: invalid prefault mode %d", (int)s->prefault);
	if (s->memory_bytes == 0 || s->memory_bytes % 1024)
		return err_set(e, -EINVAL,
			       "domain spec: memory %" PRIu64 " bytes is not a positive multiple of 1 KiB",
			       s->memory_bytes);
	if (s->vcpus == 0)
		return err_set(e, -EINVAL, "domain spec: vcpus must be at least 1");
	if (s->disk_path && *s->disk_path) {
		if (!s->disk_format)
			return err_set(e, -EINVAL, "domain spec: 'disk_format' is missing for disk '%s'",
				       s->disk_path);
		if (strcmp(s->disk_format, "qcow2") && strcmp(s->disk_format, "raw"))
			return err_set(e, -EINVAL,
				       "domain spec: disk format '%s' is not 'qcow2' or 'raw'",
				       s->disk_format);
	}
	return 0;
}

/*
 * A writer with a sticky failure flag: each helper is a no-op once a libxml2
 * call has failed, so the renderer reads as the document it writes and is
 * checked once at the end.
 */
struct xw {
	xmlTextWriterPtr w;
	bool failed;
};

static void xw_check(struct xw *x, int rc)
{
	if (rc < 0)
		x->failed = true;
}

static void start(struct xw *x, const char *name)
{
	if (!x->failed)
		xw_check(x, xmlTextWriterStartElement(x->w, xc(name)));
}

static void end(struct xw *x)
{
	if (!x->failed)
		xw_check(x, xmlTextWriterEndElement(x->w));
}

static void attr(struct xw *x, const char *name, const char *val)
{
	if (!x->failed)
		xw_check(x, xmlTextWriterWriteAttribute(x->w, xc(name), xc(val)));
}

static void text(struct xw *x, const char *s)
{
	if (!x->failed)
		xw_check(x, xmlTextWriterWriteString(x->w, xc(s)));
}

/* <name>text</name> */
static void elem(struct xw *x, const char *name, const char *s)
{
	start(x, name);
	text(x, s);
	end(x);
}

/* <name [a1='v1' [a2='v2' [a3='v3']]]/>: attribute names may be NULL */
static void empty(struct xw *x, const char *name, const char *a1, const char *v1,
		  const char *a2, const char *v2, const char *a3, const char *v3)
{
	start(x, name);
	if (a1)
		attr(x, a1, v1);
	if (a2)
		attr(x, a2, v2);
	if (a3)
		attr(x, a3, v3);
	end(x);
}

static bool set(const char *s)
{
	return s && *s;
}

/*
 * No balloon (a THP confounder), or for the free page reporting arm a virtio
 * balloon that reports the guest's free 2M blocks (QEMU discards them)
 */
static void write_memballoon(struct xw *x, const struct domain_spec *s)
{
	if (s->balloon_reporting)
		empty(x, "memballoon", "model", "virtio", "freePageReporting", "on", NULL, NULL);
	else
		empty(x, "memballoon", "model", "none", NULL, NULL, NULL, NULL);
}

/* <nosharepages/>: KSM splits the host's huge pages under guest RAM; only the KSM arm lets it merge */
static void write_nosharepages(struct xw *x, const struct domain_spec *s)
{
	if (!s->share_pages)
		empty(x, "nosharepages", NULL, NULL, NULL, NULL, NULL, NULL);
}

/* <memory> and <memoryBacking>: size, hugetlbfs pages, sharing, source, allocation */
static void write_memory(struct xw *x, const struct domain_spec *s)
{
	char num[32];

	snprintf(num, sizeof(num), "%" PRIu64, s->memory_bytes / 1024);
	start(x, "memory");
	attr(x, "unit", "KiB");
	text(x, num);
	end(x);
	start(x, "memoryBacking");
	if (s->hugetlb_kb == 2048) {
		empty(x, "hugepages", NULL, NULL, NULL, NULL, NULL, NULL);
	} else if (s->hugetlb_kb) {
		snprintf(num, sizeof(num), "%" PRIu64, s->hugetlb_kb);
		start(x, "hugepages");
		empty(x, "page", "size", num, "unit", "KiB", NULL, NULL);
		end(x);
	}
	write_nosharepages(x, s);
	if (s->memfd)	/* guest RAM as shmem: governed by shmem_enabled, not enabled */
		empty(x, "source", "type", "memfd", NULL, NULL, NULL, NULL);
	/* libvirt refuses hugepages with mode='ondemand'; without the element hugetlbfs
	 * pages are reserved up front but faulted in as the guest touches them */
	if (!(s->hugetlb_kb && s->prefault == PREFAULT_ONDEMAND))
		empty(x, "allocation", "mode", prefault_name(s->prefault), NULL, NULL, NULL, NULL);
	end(x);
}

/* <vcpu> and, with a pinning, <cputune> */
static void write_vcpus(struct xw *x, const struct domain_spec *s)
{
	char num[32];

	snprintf(num, sizeof(num), "%u", s->vcpus);
	start(x, "vcpu");
	attr(x, "placement", "static");
	text(x, num);
	end(x);
	if (s->vcpu_pin) {
		unsigned i;

		start(x, "cputune");
		for (i = 0; i < s->vcpus; i++) {
			char v[16], c[16];

			if (s->vcpu_pin[i] < 0)
				continue;
			snprintf(v, sizeof(v), "%u", i);
			snprintf(c, sizeof(c), "%d", s->vcpu_pin[i]);
			empty(x, "vcpupin", "vcpu", v, "cpuset", c, NULL, NULL);
		}
		if (s->emulator_pin >= 0) {
			snprintf(num, sizeof(num), "%d", s->emulator_pin);
			empty(x, "emulatorpin", "cpuset", num, NULL, NULL, NULL, NULL);
		}
		end(x);
	}
}

/* <os> (direct kernel boot), <features>, <cpu>, <clock> and the lifecycle actions */
static void write_os(struct xw *x, const struct domain_spec *s)
{
	start(x, "os");
	start(x, "type");
	attr(x, "arch", "x86_64");
	attr(x, "machine", "pc");
	text(x, "hvm");
	end(x);
	elem(x, "kernel", s->kernel);
	if (set(s->initrd))
		elem(x, "initrd", s->initrd);
	if (set(s->cmdline))
		elem(x, "cmdline", s->cmdline);
	end(x);

	start(x, "features");		/* ACPI: reboot(RB_POWER_OFF) powers off */
	empty(x, "acpi", NULL, NULL, NULL, NULL, NULL, NULL);
	empty(x, "apic", NULL, NULL, NULL, NULL, NULL, NULL);
	end(x);
	if (s->accel == ACCEL_KVM)
		empty(x, "cpu", "mode", "host-passthrough", NULL, NULL, NULL, NULL);
	empty(x, "clock", "offset", "utc", NULL, NULL, NULL, NULL);
	elem(x, "on_poweroff", "destroy");
	elem(x, "on_reboot", "destroy");
	elem(x, "on_crash", "destroy");
}

/* the guest's disks: its overlay and the read-only source disk */
static void write_disks(struct xw *x, const struct domain_spec *s)
{
	if (set(s->disk_path)) {
		start(x, "disk");
		attr(x, "type", "file");
		attr(x, "device", "disk");
		/* a throwaway overlay: no flushes, works on any host filesystem */
		empty(x, "driver", "name", "qemu", "type", s->disk_format, "cache", "unsafe");
		empty(x, "source", "file", s->disk_path, NULL, NULL, NULL, NULL);
		empty(x, "target", "dev", "vda", "bus", "virtio", NULL, NULL);
		end(x);
	}
	if (set(s->ro_disk_path)) {
		/* shared by every kcompile guest, never written */
		start(x, "disk");
		attr(x, "type", "file");
		attr(x, "device", "disk");
		empty(x, "driver", "name", "qemu", "type", "raw", NULL, NULL);
		empty(x, "source", "file", s->ro_disk_path, NULL, NULL, NULL, NULL);
		empty(x, "target", "dev", "vdb", "bus", "virtio", NULL, NULL);
		empty(x, "readonly", NULL, NULL, NULL, NULL, NULL, NULL);
		end(x);
	}
}

/* <devices>: emulator, disks, serial console, the record channel */
static void write_devices(struct xw *x, const struct domain_spec *s)
{
	start(x, "devices");
	if (set(s->emulator))
		elem(x, "emulator", s->emulator);
	write_disks(x, s);
	start(x, "serial");
	attr(x, "type", "pty");
	if (set(s->serial_log))
		empty(x, "log", "file", s->serial_log, "append", "on", NULL, NULL);
	empty(x, "target", "port", "0", NULL, NULL, NULL, NULL);
	end(x);
	start(x, "console");
	attr(x, "type", "pty");
	empty(x, "target", "type", "serial", "port", "0", NULL, NULL);
	end(x);
	/* no implicit USB controller: nothing to emulate that no test needs */
	empty(x, "controller", "type", "usb", "model", "none", NULL, NULL);
	/* unix + bind without a path: libvirt picks the socket path */
	start(x, "channel");
	attr(x, "type", "unix");
	empty(x, "source", "mode", "bind", NULL, NULL, NULL, NULL);
	empty(x, "target", "type", "virtio", "name", s->channel_name, NULL, NULL);
	end(x);
	write_memballoon(x, s);
	end(x);			/* devices */
}

#define QEMU_NS "http://libvirt.org/schemas/domain/qemu/1.0"

/*
 * libvirt verifies a started guest's CPU by reading each of the CPU's ~400
 * QOM properties over QMP when QEMU offers 'unavailable-features'; without
 * that capability it reads the two feature-word lists, the same check.
 */
static void write_qemu_caps(struct xw *x, const struct domain_spec *s)
{
	if (!s->quick_cpu_check)
		return;
	start(x, "qemu:capabilities");
	empty(x, "qemu:del", "capability", "cpu-unavailable-features", NULL, NULL, NULL, NULL);
	end(x);
}

static void write_domain(struct xw *x, const struct domain_spec *s)
{
	start(x, "domain");
	attr(x, "type", s->accel == ACCEL_KVM ? "kvm" : "qemu");
	if (s->quick_cpu_check)
		attr(x, "xmlns:qemu", QEMU_NS);
	elem(x, "name", s->name);
	if (set(s->uuid))
		elem(x, "uuid", s->uuid);
	if (set(s->description))
		elem(x, "description", s->description);
	write_memory(x, s);
	write_vcpus(x, s);
	write_os(x, s);
	write_devices(x, s);
	write_qemu_caps(x, s);
	end(x);			/* domain */
}

int domain_xml(const struct domain_spec *s, char **xml, struct err *e)
{
	struct xw x = { NULL, false };
	xmlBufferPtr buf = NULL;
	int ret = -ENOMEM;

	*xml = NULL;
	if (!s)
		return err_set(e, -EINVAL, "domain spec is missing");
	ret = check_spec(s, e);
	if (ret)
		return ret;
	ret = -ENOMEM;
	buf = xmlBufferCreate();
	if (!buf)
		goto cleanup;
	x.w = xmlNewTextWriterMemory(buf, 0);
	if (!x.w)
		goto cleanup;
	xw_check(&x, xmlTextWriterSetIndent(x.w, 1));
	xw_check(&x, xmlTextWriterSetIndentString(x.w, xc("  ")));
	write_domain(&x, s);
	if (!x.failed)
		xw_check(&x, xmlTextWriterEndDocument(x.w));
	if (!x.failed)
		xw_check(&x, xmlTextWriterFlush(x.w));
	if (x.failed)
		goto cleanup;
	/* one trailing newline, so the document is a well-formed text file */
	if (asprintf(xml, "%s\n", (const char *)xmlBufferContent(buf)) < 0)
		*xml = NULL;
	else
		ret = 0;

cleanup:
	xmlFreeTextWriter(x.w);
	xmlBufferFree(buf);
	if (ret == -ENOMEM)
		err_set(e, -ENOMEM, "cannot render the domain XML for '%s': out of memory", s->name);
	return ret;
}
