/*
 * stream: a running guest's streams: guest_poll pumps the record channel
 * (parsed line by line) and the console (into its capped log) through
 * libvirt's event loop; guest_send writes to the channel.
 */
#include "orchestrator/virt/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libvirt/virterror.h>

#include "lib/clock.h"

#define POLL_TICK_MS 20			/* longest wait inside one poll round */
#define STATE_CHECK_MS 100		/* how often guest_poll asks libvirt for the state */
#define GONE_GRACE_MS 2000		/* after the domain stops: wait this long for channel EOF */
#define DRAIN_BUDGET (256u << 10)	/* bytes per stream per round: no stream starves the rest */
#define SEND_TIMEOUT_MS 5000

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
		if (virt_lv_code() == VIR_ERR_NO_DOMAIN)
			return 0;	/* transient and shut off: libvirt forgot it */
		return lv_err(e, -EIO, "cannot get the state of guest '%s': %s", g->name,
			       virt_lv_msg());
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
				virt_lv_msg());
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
		timer = virEventAddTimeout(POLL_TICK_MS, virt_noop_timer, NULL, NULL);
	if (timeout_ms != 0 && timer < 0) {
		free(cbuf);
		return lv_err(e, -EIO, "cannot poll guest '%s': no libvirt event loop: %s", g->name,
			       virt_lv_msg());
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
			ret = lv_err(e, -EIO, "libvirt event loop failed: %s", virt_lv_msg());
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
			ret = lv_err(e, -EIO, "cannot send to guest '%s': %s", g->name, virt_lv_msg());
			break;
		}
		if ((long long)mono_ms() - start >= SEND_TIMEOUT_MS) {
			ret = err_set(e, -ETIMEDOUT,
				      "cannot send to guest '%s': its channel accepted nothing for %d ms",
				      g->name, SEND_TIMEOUT_MS);
			break;
		}
		if (timer < 0)
			timer = virEventAddTimeout(POLL_TICK_MS, virt_noop_timer, NULL, NULL);
		virEventRunDefaultImpl();
	}
	if (timer >= 0)
		virEventRemoveTimeout(timer);
	return ret;
}

int virt_event_wait(int ms)
{
	/* one periodic timer for the process, never removed: adding and removing a
	 * timer around each wait interrupts the loop, so the next wait would return
	 * at once and a caller polling several guests would spin */
	static int timer = -1;

	if (timer < 0 && (timer = virEventAddTimeout(ms, virt_noop_timer, NULL, NULL)) < 0)
		return -EIO;
	return virEventRunDefaultImpl() < 0 ? -EIO : 0;
}
