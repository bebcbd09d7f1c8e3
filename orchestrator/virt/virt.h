/*
 * virt: the libvirt connection, the KVM/TCG decision, and the lifecycle of
 * one transient guest: create, pump its record channel and console, send to
 * it, find its QEMU pid, destroy it; plus reaping guests left by a killed run.
 * Talks to libvirt only through its C API (never virsh). Never prints (a
 * no-op libvirt error callback is installed), never exits; failures go to
 * the caller's struct err with libvirt's own message copied in.
 */
#ifndef THPEVAL_ORCHESTRATOR_VIRT_H
#define THPEVAL_ORCHESTRATOR_VIRT_H

#include <stdbool.h>
#include <stddef.h>

#include <libvirt/libvirt.h>

#include "lib/err.h"
#include "lib/record.h"
#include "orchestrator/virt/domain.h"

#define VIRT_DEFAULT_URI "qemu:///system"
/* guest names are "thpeval-<pid>-<n>"; virt_reap_stale relies on it */
#define VIRT_NAME_PREFIX "thpeval-"
#define VIRT_KEEPALIVE_INTERVAL_S 5
#define VIRT_KEEPALIVE_COUNT 3

struct virt;

/*
 * Connect (uri NULL = VIRT_DEFAULT_URI). Registers libvirt's default event
 * loop first (once per process: non-blocking streams need it), and tells
 * apart in the message: daemon not running (socket missing or refused),
 * permission denied, and a bad URI.
 */
int virt_open(const char *uri, struct virt **out, struct err *e);
/*
 * 0 when uri connects to this machine, else -EREMOTE with the reason: thpeval
 * measures the host it runs on (THP knobs, /proc), so guests on another host
 * would be measured with this host's settings and counters. Parsed with
 * libxml2's xmlParseURI, the parser libvirt's virURIParse wraps. Refused: a
 * host in the authority (qemu+ssh://x/system, qemu://h/system, localhost too)
 * and every transport but none and unix (ssh, libssh, libssh2, tcp, tls reach
 * other machines; ext runs a command). A string that does not parse is left
 * to libvirt, which refuses it. virt_open checks this before connecting and
 * again on the URI libvirt resolved (aliases, defaults).
 */
int virt_uri_check_local(const char *uri, struct err *e);
void virt_close(struct virt *v);		/* NULL-tolerant */
const char *virt_uri(const struct virt *v);
/* for tests and diagnostics: the underlying connection */
virConnectPtr virt_conn(struct virt *v);
/* "9.0.0" and e.g. "7.2.0" (the hypervisor's version, "unknown" if none) */
int virt_versions(struct virt *v, char *libvirt_ver, size_t l1, char *hyp_ver, size_t l2,
		  struct err *e);

/*
 * Pure decision. requested AUTO: KVM only if all three hold, else TCG with
 * why = "kvm unusable: <reasons>; using tcg". Requested KVM while any fails:
 * -ENODEV with the reasons. Requested TCG: TCG. why is always filled on 0.
 */
int accel_decide(enum accel requested, bool dev_kvm_ok, bool cpu_virt_flags, bool caps_kvm,
		 enum accel *chosen, char *why, size_t len, struct err *e);
/* true if /dev/kvm opens read-write and answers KVM_GET_API_VERSION */
bool virt_dev_kvm_usable(const char *dev_path);
/* true if a "flags" line of cpuinfo_path lists vmx or svm */
bool virt_cpuinfo_has_virt(const char *cpuinfo_path);
/* true if capabilities XML offers <domain type='kvm'/> for an x86_64 hvm guest */
bool virt_caps_offer_kvm(const char *caps_xml);
/* the emulator capabilities XML names for an x86_64 hvm guest into buf: false without one */
bool virt_caps_emulator(const char *caps_xml, char *buf, size_t len);
/* that emulator of the connection (the QEMU binary libvirt runs when a domain names none) */
int virt_default_emulator(struct virt *v, char *buf, size_t len, struct err *e);
/* probe /dev/kvm, cpuinfo_path (NULL = /proc/cpuinfo) and capabilities, then decide */
int virt_accel_choose(struct virt *v, enum accel requested, const char *cpuinfo_path,
		      enum accel *chosen, char *why, size_t len, struct err *e);

struct guest;

/* the console log is capped: past the cap one marker line, the rest is dropped */
#define GUEST_CONSOLE_LOG_MAX (64u << 20)

struct guest_opts {
	const char *xml;		/* from domain_xml */
	const char *console_log_path;	/* guest console appended here; NULL = not kept */
	const char *channel_name;	/* the virtio-serial port to read records from */
	unsigned long console_log_max;	/* bytes; 0 = GUEST_CONSOLE_LOG_MAX */
};

/*
 * virDomainCreateXML (transient), then open the channel and the console on
 * non-blocking streams. On failure everything started is destroyed again.
 */
int guest_start(struct virt *v, const struct guest_opts *o, struct guest **out, struct err *e);

enum guest_event { GUEST_EV_RECORD, GUEST_EV_REJECTED };

/*
 * Called for every channel line: rec is the parsed record (GUEST_EV_RECORD),
 * or NULL with reason set (GUEST_EV_REJECTED). Both pointers are valid only
 * during the call. Return non-zero to stop polling.
 */
typedef int (*guest_record_fn)(void *opaque, enum guest_event ev, const struct record *rec,
			       const char *reason);

enum guest_poll_result {
	GUEST_POLL_STOPPED_BY_CALLBACK,
	GUEST_POLL_GUEST_GONE,		/* domain no longer running; all its output read */
	GUEST_POLL_TIMEOUT,
	GUEST_POLL_INTERRUPTED,		/* *stop became non-zero */
};

/*
 * Pump channel and console until one of the results above. timeout_ms < 0:
 * no timeout; 0: take what is there now. *stop (may be NULL) is checked at
 * least every 50 ms. Memory is bounded whatever the guest sends; a guest
 * flooding its console cannot starve the channel, the stop flag or the
 * timeout. Returns 0 with *res set, or a negative errno (channel stream
 * failure while the domain still runs, console log write failure).
 */
int guest_poll(struct guest *g, int timeout_ms, volatile const int *stop, guest_record_fn fn,
	       void *opaque, enum guest_poll_result *res, struct err *e);
/* write all of data to the channel (host -> guest), waiting up to 5 s */
int guest_send(struct guest *g, const char *data, size_t len, struct err *e);
/* the QEMU process: /run/libvirt/qemu/<name>.pid, else a /proc scan; -1 if unknown */
int guest_qemu_pid(struct guest *g);
const char *guest_name(const struct guest *g);
/* counters since guest_start (for reports and tests) */
struct guest_counters {
	unsigned long long records, rejected, channel_bytes, console_bytes, console_dropped;
};
void guest_counters(const struct guest *g, struct guest_counters *out);

/*
 * Abort the streams, destroy the domain if it still runs, undefine it if a
 * persistent definition with its UUID appeared, free everything. NULL-tolerant;
 * every step tolerates work already done (guest powered off, streams broken).
 * g is invalid afterwards.
 */
void guest_destroy(struct guest *g);

/*
 * Run libvirt's event loop once, for at most ms: with several guests in
 * flight, poll each with guest_poll(timeout 0), then wait here.
 */
int virt_event_wait(int ms);

/*
 * Destroy (and undefine) every domain named "thpeval-<pid>-*" whose <pid> is
 * not a live process, until libvirt no longer lists it: one still being
 * started for a run killed meanwhile is waited for (up to a minute).
 * *removed = how many. Returns 0 or the first error (other domains are still
 * tried).
 */
int virt_reap_stale(struct virt *v, int *removed, struct err *e);

/* the connection still answers (false after libvirtd died or was restarted) */
bool virt_alive(struct virt *v);

/* whether the daemon takes <qemu:capabilities> (libvirt 6.0 and later) */
bool virt_quick_cpu_check(struct virt *v);
/* destroy (and undefine) a domain by name if it exists: cleanup after a reconnect */
int virt_destroy_name(struct virt *v, const char *name, struct err *e);

#endif
