/*
 * libFuzzer harness for lib/record.c: the host's parser of untrusted guest
 * output. The input is a byte stream as the guest could send it.
 *
 *  - rec_reader_feed in chunks of varying size must report exactly the
 *    events of a one-shot feed and of a reference splitter (chunking never
 *    changes what the host sees);
 *  - every line goes through rec_parse from an exactly-sized heap copy, so
 *    ASan catches any read past the line; a second copy gets a correct
 *    checksum written in (where it has a " #xxxxxxxx" tail), or the fuzzer
 *    would hardly ever get past the CRC to the fields;
 *  - an accepted record must survive rec_format -> rec_parse unchanged, be
 *    rebuilt by rec_add_str, and re-format to the very bytes received (the
 *    encoding is canonical);
 *  - the guest's own fields: no accepted value holds a control character,
 *    and rec_check_values (what the run loop asks of a result record)
 *    refuses with a reason exactly when some numeric field is outside the
 *    range rec_value_check gives its name (seeds: real workload records).
 * A broken property calls abort() so that the fuzzer reports it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "fuzz_record: property failed at %s:%d: %s\n",     \
				__FILE__, __LINE__, #cond);                                 \
			abort();                                                            \
		}                                                                           \
	} while (0)

/* what a sequence of reader callbacks amounted to */
struct trace {
	uint64_t ok, oversized;
	uint32_t digest;	/* over kinds, lengths and bytes, in order */
	uint64_t accepted;
};

static uint32_t mix(uint32_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ b[i]) * 16777619u;	/* FNV-1a */
	return h;
}

static void trace_event(struct trace *t, enum rec_line_kind kind, const char *line, size_t len)
{
	unsigned char k = (unsigned char)kind;

	t->digest = mix(t->digest, &k, 1);
	t->digest = mix(t->digest, &len, sizeof(len));
	if (line)
		t->digest = mix(t->digest, line, len);
	if (kind == REC_LINE_OK)
		t->ok++;
	else
		t->oversized++;
}

static bool same_record(const struct record *a, const struct record *b)
{
	size_t i;

	if (a->type != b->type || a->seq != b->seq || a->nfields != b->nfields)
		return false;
	for (i = 0; i < a->nfields; i++)
		if (strcmp(a->f[i].key, b->f[i].key) || strcmp(a->f[i].val, b->f[i].val))
			return false;
	return true;
}

/* rec_parse on [line, line + len) (no NUL after it); the round trip if accepted */
static bool check_line(const char *line, size_t len)
{
	char buf[REC_MAX_LINE + 2], why[128];
	struct record *in, *again, *built;
	size_t body = len, i;
	bool accepted, out_of_range;
	uint64_t u;
	double d;
	int n;

	in = malloc(sizeof(*in));
	again = malloc(sizeof(*again));
	built = malloc(sizeof(*built));
	CHECK(in && again && built);
	why[0] = '\0';
	accepted = rec_parse(line, len, in, why, sizeof(why)) == 0;
	if (!accepted) {
		CHECK(why[0] != '\0');	/* a rejection always says why */
		CHECK(memchr(why, '\0', sizeof(why)) != NULL);
		goto out;
	}
	CHECK((unsigned)in->type < REC__COUNT && in->seq <= REC_MAX_SEQ);
	CHECK(in->nfields <= REC_MAX_FIELDS);
	out_of_range = false;
	for (i = 0; i < in->nfields; i++) {
		const unsigned char *v = (const unsigned char *)in->f[i].val;

		CHECK(memchr(in->f[i].key, '\0', REC_KEY_MAX) && in->f[i].key[0]);
		CHECK(memchr(in->f[i].val, '\0', REC_VAL_MAX));
		CHECK(rec_get(in, in->f[i].key) == in->f[i].val);	/* keys are unique */
		for (; *v; v++)
			CHECK(*v >= 0x20 && *v != 0x7f);
		(void)rec_get_u64(in, in->f[i].key, &u);
		if (rec_get_f64(in, in->f[i].key, &d) == 0) {
			why[0] = '\0';
			if (rec_value_check(in->f[i].key, d, why, sizeof(why))) {
				CHECK(why[0] != '\0');
				out_of_range = true;
			}
		}
	}
	why[0] = '\0';
	if (rec_check_values(in, why, sizeof(why))) {
		CHECK(out_of_range && why[0] != '\0' && memchr(why, '\0', sizeof(why)));
	} else {
		CHECK(!out_of_range);
	}

	/* format -> parse gives the same record */
	n = rec_format(in, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n < sizeof(buf) && buf[n - 1] == '\n' && buf[n] == '\0');
	CHECK(rec_parse(buf, (size_t)n, again, why, sizeof(why)) == 0);
	CHECK(same_record(in, again));

	/* canonical: what was accepted is exactly what rec_format writes */
	if (body && line[body - 1] == '\n')
		body--;
	CHECK((size_t)n - 1 == body && !memcmp(buf, line, body));

	/* the builder accepts every field the parser accepted */
	rec_init(built, in->type, in->seq);
	for (i = 0; i < in->nfields; i++)
		CHECK(rec_add_str(built, in->f[i].key, in->f[i].val) == 0);
	CHECK(same_record(in, built));
out:
	free(in);
	free(again);
	free(built);
	return accepted;
}

/* check_line on an exactly-sized copy, and on one with its checksum made right */
static bool check_copies(const char *line, size_t len)
{
	char *copy = malloc(len ? len : 1);
	size_t body = len;
	bool accepted;

	CHECK(copy);
	memcpy(copy, line, len);
	accepted = check_line(copy, len);
	if (body && copy[body - 1] == '\n')
		body--;
	if (body >= 10 && copy[body - 10] == ' ' && copy[body - 9] == '#') {
		char hex[9];

		snprintf(hex, sizeof(hex), "%08x", rec_crc32(copy, body - 9));
		memcpy(copy + body - 8, hex, 8);
		accepted |= check_line(copy, len);
	}
	free(copy);
	return accepted;
}

struct feed_ctx {
	struct trace t;
	bool parse;	/* parse each line (only one of the feeds needs to) */
};

static int on_line(void *opaque, enum rec_line_kind kind, const char *line, size_t len)
{
	struct feed_ctx *c = opaque;

	if (kind == REC_LINE_OK) {
		CHECK(line && len <= REC_MAX_LINE && line[len] == '\0');
		CHECK(!memchr(line, '\n', len));
	} else {
		CHECK(!line && len == 0);
	}
	trace_event(&c->t, kind, line, len);
	/* exactly-sized copies: the reader's buffer would hide over-reads */
	if (kind == REC_LINE_OK && c->parse && check_copies(line, len))
		c->t.accepted++;
	return 0;
}

/* the reader's contract, written the obvious way */
static void reference_split(const char *data, size_t size, struct trace *t)
{
	size_t start = 0, i;

	for (i = 0; i <= size; i++) {
		bool complete = i < size && data[i] == '\n';
		size_t len = i - start;

		if (i < size && !complete)
			continue;
		if (len > REC_MAX_LINE)
			trace_event(t, REC_LINE_OVERSIZED, NULL, 0);
		else if (complete)
			trace_event(t, REC_LINE_OK, data + start, len);
		start = i + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct rec_reader *rd = malloc(sizeof(*rd));
	struct feed_ctx whole = { { 0, 0, 2166136261u, 0 }, false };
	struct feed_ctx chunked = { { 0, 0, 2166136261u, 0 }, true };
	struct trace ref = { 0, 0, 2166136261u, 0 };
	uint32_t x = rec_crc32(data, size) | 1u;	/* chunk sizes: xorshift from the input */
	size_t off = 0;

	CHECK(rd);
	/* the whole input as one line */
	check_copies(s, size);

	rec_reader_init(rd);
	CHECK(rec_reader_feed(rd, s, size, on_line, &whole) == 0);
	CHECK(rd->lines == whole.t.ok && rd->oversized == whole.t.oversized);

	rec_reader_init(rd);
	while (off < size) {
		size_t n;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		/* mostly small chunks, sometimes empty, sometimes across REC_MAX_LINE */
		switch (x & 3) {
		case 0: n = 0; break;
		case 1: n = 1 + (x >> 2) % 8; break;
		case 2: n = 1 + (x >> 2) % 300; break;
		default: n = 1 + (x >> 2) % (3 * REC_MAX_LINE); break;
		}
		if (n > size - off)
			n = size - off;
		CHECK(rec_reader_feed(rd, s + off, n, on_line, &chunked) == 0);
		off += n;
	}
	CHECK(rd->lines == chunked.t.ok && rd->oversized == chunked.t.oversized);

	reference_split(s, size, &ref);
	CHECK(whole.t.ok == ref.ok && whole.t.oversized == ref.oversized &&
	      whole.t.digest == ref.digest);
	CHECK(chunked.t.ok == ref.ok && chunked.t.oversized == ref.oversized &&
	      chunked.t.digest == ref.digest);
	free(rd);
	return 0;
}
