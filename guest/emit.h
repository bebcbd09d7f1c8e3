/*
 * emit: the writing end of the record stream. An emitter owns the sequence
 * numbers of one stream (0, 1, 2, ... per record sent), formats records with
 * lib/record and writes each line whole (EINTR, EAGAIN and short writes
 * retried, bounded by a timeout). Never prints, never exits.
 */
#ifndef THPEVAL_GUEST_EMIT_H
#define THPEVAL_GUEST_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"
#include "lib/record.h"

struct emitter {
	int fd;
	uint32_t seq;			/* the next record's sequence number */
	int timeout_ms;			/* per record; < 0 waits for ever */
	unsigned sent[REC__COUNT];	/* records sent, per type */
};

void emitter_init(struct emitter *em, int fd, int timeout_ms);
/* Number r with the stream's next seq, format it and write it whole. */
int emitter_send(struct emitter *em, struct record *r, struct err *e);
/* Shorthand: a record of type t with fields from base (may be NULL) plus reason. */
int emitter_send_reason(struct emitter *em, enum rec_type t, const struct record *base,
			const char *reason, struct err *e);

/*
 * Write all of buf to fd. A non-blocking fd is polled; a peer that is not
 * connected yet (POLLHUP, as a virtio port before the host opens it) is
 * waited for. -ETIMEDOUT after timeout_ms (< 0: no limit).
 */
int write_full(int fd, const void *buf, size_t len, int timeout_ms, struct err *e);

#endif
