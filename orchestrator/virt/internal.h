/*
 * internal: what the files of virt/ share and nothing else sees: the
 * connection and guest structs, the libvirt error helpers (one-line messages
 * with libvirt's own text copied in) and the no-op event-loop timer. conn.c
 * holds the connection and the accelerator choice, guest.c a guest's
 * lifecycle and the reaping of stale ones, stream.c the polling of its
 * record channel and console. virt.h is the module's face.
 */
#ifndef THPEVAL_ORCH_VIRT_INTERNAL_H
#define THPEVAL_ORCH_VIRT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <libvirt/libvirt.h>

#include "lib/err.h"
#include "lib/record.h"
#include "orchestrator/virt/virt.h"

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

/* libvirt messages can quote QEMU's multi-line stderr: ours stay one line */
/* the pid in a libvirt pid file (either daemon's run directory); -1 if none or not a pid */
long virt_pid_file(const char *path);

int virt_oneline(struct err *e, int rc);

#define lv_err(e, code, ...) virt_oneline((e), err_set((e), (code), __VA_ARGS__))

const char *virt_lv_msg(void);
int virt_lv_code(void);
/* a timer callback that does nothing: bounds a wait of libvirt's event loop */
void virt_noop_timer(int timer, void *opaque);

#endif
