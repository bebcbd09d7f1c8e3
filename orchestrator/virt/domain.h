/*
 * domain: renders the libvirt domain XML for one thpeval guest from a typed
 * spec. Owns the accel and prefault enums and their names. All text goes
 * through libxml2's xmlTextWriter, so every value is escaped; the output is
 * deterministic (golden-file tested). Pure: no libvirt calls, no I/O, never
 * prints, never exits.
 */
#ifndef THPEVAL_ORCHESTRATOR_DOMAIN_H
#define THPEVAL_ORCHESTRATOR_DOMAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/enumstr.h"
#include "lib/err.h"

enum accel {
	ACCEL_AUTO,	/* decide at run time (virt_accel_choose) */
	ACCEL_KVM,	/* domain type 'kvm' */
	ACCEL_TCG,	/* domain type 'qemu' (QEMU's TCG emulation) */
	ACCEL__COUNT
};

/* accel_name(): "auto", "kvm", "tcg", NULL when out of range; accel_parse(): 0, or -EINVAL */
ENUM_DECL(accel);

/* how QEMU faults guest RAM in: libvirt <allocation mode='...'/> */
enum prefault {
	PREFAULT_ONDEMAND,	/* host faults happen as the guest touches RAM */
	PREFAULT_IMMEDIATE,	/* QEMU preallocates all guest RAM at start */
	PREFAULT__COUNT
};

/* prefault_name(): "ondemand", "immediate", NULL when out of range; prefault_parse(): 0, or -EINVAL */
ENUM_DECL(prefault);

#define DOMAIN_CHANNEL_NAME "org.thpeval.records"

struct domain_spec {
	const char *name;		/* thpeval-<pid>-<n>; no '/' */
	const char *uuid;		/* optional: libvirt generates one */
	uint64_t memory_bytes;		/* > 0, a multiple of 1 KiB */
	unsigned vcpus;			/* >= 1 */
	enum accel accel;		/* KVM or TCG here, never AUTO */
	const char *kernel;		/* required */
	const char *initrd;		/* optional */
	const char *cmdline;		/* optional */
	const char *disk_path;		/* optional: virtio disk vda, cache='unsafe' */
	const char *disk_format;	/* "qcow2" or "raw"; required with disk_path */
	const char *ro_disk_path;	/* optional: raw virtio disk vdb, read-only (kcompile source) */
	const char *channel_name;	/* virtio-serial port name, e.g. DOMAIN_CHANNEL_NAME */
	enum prefault prefault;
	uint64_t hugetlb_kb;		/* <memoryBacking><hugepages/>: 0 none, 2048 the default size, else <page size=> */
	bool memfd;			/* <memoryBacking><source type='memfd'/> */
	bool balloon_reporting;		/* <memballoon model='virtio' freePageReporting='on'/>, else none */
	bool share_pages;		/* no <nosharepages/>: KSM may merge guest RAM (the KSM arm) */
	const char *emulator;		/* optional: libvirt picks one */
	/* optional: an absolute path QEMU appends the serial console to (<log>), the
	 * destination's QEMU too after a migration */
	const char *serial_log;
	/* check the guest CPU with QEMU's two feature-word properties instead of
	 * one QMP read per CPU property (a second of every TCG boot); TCG only, the
	 * KVM path keeps libvirt's own check */
	bool quick_cpu_check;
	/* optional pinning: host CPU of each vCPU (vcpus entries) and of QEMU's other threads,
	 * -1 or a NULL vcpu_pin for none (<cputune>) */
	const int *vcpu_pin;
	int emulator_pin;
	const char *description;	/* optional free text */
};

/*
 * Render the domain XML into a malloc'ed string (caller free()s). Returns 0,
 * or -EINVAL for an invalid spec (the message names the field), -ENOMEM.
 * Strings must be valid UTF-8 without control characters (description may
 * hold tabs and newlines).
 */
int domain_xml(const struct domain_spec *s, char **xml, struct err *e);

#endif
