#include "emit.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/clock.h"

/* milliseconds left until deadline (-1 = none), at least 0 */
static int left_ms(int64_t deadline)
{
	int64_t left;

	if (deadline < 0)
		return -1;
	left = deadline - mono_ms();
	return left < 0 ? 0 : left > 60000 ? 60000 : (int)left;
}

int write_full(int fd, const void *buf, size_t len, int timeout_ms, struct err *e)
{
	const char *p = buf;
	int64_t deadline = timeout_ms < 0 ? -1 : mono_ms() + timeout_ms;

	while (len) {
		struct pollfd pfd = { fd, POLLOUT, 0 };
		ssize_t n = write(fd, p, len);
		int r, wait;

		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return err_set(e, -errno, "cannot write record: %s", strerror(errno));
		/* EAGAIN (or a zero-length write): wait until writable */
		wait = left_ms(deadline);
		if (wait == 0)
			return err_set(e, -ETIMEDOUT, "cannot write record: peer not reading for %d ms",
				       timeout_ms);
		r = poll(&pfd, 1, wait);
		if (r < 0 && errno != EINTR)
			return err_set(e, -errno, "cannot poll record output: %s", strerror(errno));
		if (r > 0 && (pfd.revents & POLLHUP) && !(pfd.revents & POLLOUT)) {
			/* not connected yet: poll would return at once, so sleep a little */
			poll(NULL, 0, 20);
		}
		if (r > 0 && (pfd.revents & (POLLERR | POLLNVAL)) && !(pfd.revents & POLLOUT))
			return err_set(e, -EIO, "record output failed (poll events 0x%x)",
				       (unsigned)pfd.revents);
	}
	return 0;
}

void emitter_init(struct emitter *em, int fd, int timeout_ms)
{
	memset(em, 0, sizeof(*em));
	em->fd = fd;
	em->timeout_ms = timeout_ms;
}

int emitter_send(struct emitter *em, struct record *r, struct err *e)
{
	char line[REC_MAX_LINE + 2];
	int n, ret;

	r->seq = em->seq;
	n = rec_format(r, line, sizeof(line));
	if (n < 0)
		return err_set(e, n, "cannot format %s record: %s", rec_type_name(r->type),
			       n == -E2BIG ? "too long" : "invalid");
	ret = write_full(em->fd, line, (size_t)n, em->timeout_ms, e);
	if (ret)
		return ret;
	em->seq++;
	if ((unsigned)r->type < REC__COUNT)
		em->sent[r->type]++;
	return 0;
}

int emitter_send_reason(struct emitter *em, enum rec_type t, const struct record *base,
			const char *reason, struct err *e)
{
	struct err first = ERR_INIT;
	char val[REC_VAL_MAX];
	struct record r;
	size_t i;
	int ret;

	/* a reason longer than a record value is cut, never dropped */
	snprintf(val, sizeof(val), "%s", reason);
	for (i = 0; val[i]; i++)	/* one line of text: a record value has no control characters */
		if ((unsigned char)val[i] < 0x20 || val[i] == 0x7f)
			val[i] = ' ';
	rec_init(&r, t, 0);
	for (i = 0; base && i < base->nfields && r.nfields < REC_MAX_FIELDS - 1; i++)
		if (strcmp(base->f[i].key, "reason"))
			rec_add_str(&r, base->f[i].key, base->f[i].val);
	rec_add_str(&r, "reason", val);
	ret = emitter_send(em, &r, &first);
	if (ret == -E2BIG && r.nfields > 1) {
		/* the context made the line too long: send the reason alone */
		rec_init(&r, t, 0);
		rec_add_str(&r, "reason", val);
		return emitter_send(em, &r, e);
	}
	return ret ? err_set(e, ret, "%s", first.msg) : 0;
}
