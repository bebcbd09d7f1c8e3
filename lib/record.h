/*
 * record: the guest <-> host record protocol, compiled by both sides.
 * One record per line:  THPEVAL1 <seq> <type> key=value ... #<crc32>\n
 * Keys are [a-z0-9_]{1,31}; values are percent-encoded outside [A-Za-z0-9._:+/-].
 * The CRC-32 (IEEE) covers every byte before '#'. The parser is strict and
 * bounded: a line is accepted whole or rejected with a reason, never half-read.
 * libc only (the guest side is a static binary); never prints, never exits.
 */
#ifndef THPEVAL_LIB_RECORD_H
#define THPEVAL_LIB_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REC_MAGIC "THPEVAL1"
#define REC_MAX_LINE 2048	/* bytes, newline excluded */
#define REC_MAX_FIELDS 48
#define REC_KEY_MAX 32		/* including NUL */
#define REC_VAL_MAX 160		/* decoded, including NUL */
#define REC_MAX_SEQ 100000000u
/* host -> guest on the same port: end the access passes of a recovery arm (guest/probe.c) */
#define REC_PROBE_STOP "stop\n"
/* and: touch a fresh buffer once, so the host faults guest RAM it never backed (guest/probe.c) */
#define REC_PROBE_TOUCH "touch\n"

enum rec_type {
	REC_HELLO,	/* runner started: version, kernel */
	REC_RESULT,	/* one workload repetition's metrics */
	REC_SKIP,	/* workload not run here: reason */
	REC_FAIL,	/* workload failed: reason */
	REC_INFO,	/* free-form diagnostic (key=value) */
	REC_END,	/* runner finished all work */
	REC__COUNT
};

struct rec_field {
	char key[REC_KEY_MAX];
	char val[REC_VAL_MAX];
};

struct record {
	enum rec_type type;
	uint32_t seq;
	size_t nfields;
	struct rec_field f[REC_MAX_FIELDS];
};

const char *rec_type_name(enum rec_type t);
int rec_type_parse(const char *s, enum rec_type *out);

uint32_t rec_crc32(const void *data, size_t len);

void rec_init(struct record *r, enum rec_type type, uint32_t seq);
/* 0, -EINVAL (bad key, duplicate, a control character), -E2BIG (too many fields / too long) */
int rec_add_str(struct record *r, const char *key, const char *val);
int rec_add_u64(struct record *r, const char *key, uint64_t v);
int rec_add_i64(struct record *r, const char *key, int64_t v);
int rec_add_f64(struct record *r, const char *key, double v);	/* finite only */

/* Encode into buf (NUL-terminated, with trailing '\n'); length or -E2BIG. */
int rec_format(const struct record *r, char *buf, size_t buflen);

/*
 * Parse one line (without or with its trailing '\n'). Returns 0 or -EINVAL
 * with a short reason in why.
 */
int rec_parse(const char *line, size_t len, struct record *out, char *why, size_t whylen);

const char *rec_get(const struct record *r, const char *key);
int rec_get_u64(const struct record *r, const char *key, uint64_t *out);
int rec_get_f64(const struct record *r, const char *key, double *out);

/*
 * Whether v is in the range a field's name gives it, for values from an
 * untrusted side (a guest's record, a results file): a coverage (the name
 * ends in huge_pct, pmd_pct or huge_fault_pct) from 0 to 100; a time or a
 * rate (ends in _ns, _us, _ms, _s or _cycles, or holds _ns_per_, _us_per_
 * or _cycles_per_) 0 or more, unless the name says it is a difference
 * ("extra": tlb_walk_extra_ns); a count (ends in _bytes, _minflt, _majflt,
 * _blocks or _pages) 0 or more; never NaN or infinite. Other names: any
 * finite value. 0, or -EINVAL with why ("'access_ns' is -5: a time cannot
 * be negative").
 */
int rec_value_check(const char *key, double v, char *why, size_t whylen);
/* whether a field's name says it is a time or a rate, not a difference (as above) */
bool rec_key_is_time(const char *key);
/* rec_value_check on each numeric field of r (the first refusal); 0 or -EINVAL with why */
int rec_check_values(const struct record *r, char *why, size_t whylen);

/*
 * rec_reader: splits a byte stream into lines with a fixed buffer. Lines
 * longer than REC_MAX_LINE are reported once as oversized and skipped.
 */
struct rec_reader {
	char buf[REC_MAX_LINE + 1];
	size_t len;
	bool overflow;		/* inside an oversized line */
	uint64_t lines, oversized;
};

enum rec_line_kind { REC_LINE_OK, REC_LINE_OVERSIZED };

typedef int (*rec_line_fn)(void *opaque, enum rec_line_kind kind, const char *line, size_t len);

void rec_reader_init(struct rec_reader *rd);
/* Feed bytes; calls fn per complete line; stops and returns fn's non-zero return. */
int rec_reader_feed(struct rec_reader *rd, const char *data, size_t len, rec_line_fn fn, void *opaque);

#endif
