#include "record.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static const char *const rec_type_names[] = {
	[REC_HELLO] = "hello",
	[REC_RESULT] = "result",
	[REC_SKIP] = "skip",
	[REC_FAIL] = "fail",
	[REC_INFO] = "info",
	[REC_END] = "end",
};
_Static_assert(sizeof(rec_type_names) / sizeof(rec_type_names[0]) == REC__COUNT,
	       "rec_type_names out of sync with enum rec_type");

const char *rec_type_name(enum rec_type t)
{
	return (unsigned)t < REC__COUNT ? rec_type_names[t] : "?";
}

int rec_type_parse(const char *s, enum rec_type *out)
{
	unsigned i;

	for (i = 0; i < REC__COUNT; i++) {
		if (!strcmp(s, rec_type_names[i])) {
			*out = (enum rec_type)i;
			return 0;
		}
	}
	return -EINVAL;
}

uint32_t rec_crc32(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t crc = 0xffffffffu;
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		crc ^= p[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
	}
	return ~crc;
}

static bool key_ok(const char *k)
{
	size_t n = 0;

	if (!k || !*k)
		return false;
	for (; k[n]; n++) {
		char c = k[n];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return n < REC_KEY_MAX;
}

static bool val_char_plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == ':' || c == '+' || c == '/' || c == '-';
}

void rec_init(struct record *r, enum rec_type type, uint32_t seq)
{
	r->type = type;
	r->seq = seq;
	r->nfields = 0;
}

int rec_add_str(struct record *r, const char *key, const char *val)
{
	size_t i, n;

	if (!key_ok(key) || !val)
		return -EINVAL;
	for (i = 0; i < r->nfields; i++)
		if (!strcmp(r->f[i].key, key))
			return -EINVAL;
	if (r->nfields >= REC_MAX_FIELDS)
		return -E2BIG;
	n = strlen(val);
	if (n >= REC_VAL_MAX)
		return -E2BIG;
	for (i = 0; i < n; i++)	/* what rec_parse refuses */
		if ((unsigned char)val[i] < 0x20 || val[i] == 0x7f)
			return -EINVAL;
	strcpy(r->f[r->nfields].key, key);
	memcpy(r->f[r->nfields].val, val, n + 1);
	r->nfields++;
	return 0;
}

int rec_add_u64(struct record *r, const char *key, uint64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRIu64, v);
	return rec_add_str(r, key, b);
}

int rec_add_i64(struct record *r, const char *key, int64_t v)
{
	char b[32];

	snprintf(b, sizeof(b), "%" PRId64, v);
	return rec_add_str(r, key, b);
}

int rec_add_f64(struct record *r, const char *key, double v)
{
	char b[40];

	if (!isfinite(v))
		return -EINVAL;
	snprintf(b, sizeof(b), "%.9g", v);
	return rec_add_str(r, key, b);
}

struct out {
	char *buf;
	size_t len, pos;
	bool full;
};

static void out_putc(struct out *o, char c)
{
	if (o->pos + 1 < o->len)
		o->buf[o->pos++] = c;
	else
		o->full = true;
}

static void out_puts(struct out *o, const char *s)
{
	while (*s)
		out_putc(o, *s++);
}

int rec_format(const struct record *r, char *buf, size_t buflen)
{
	static const char hex[] = "0123456789abcdef";
	struct out o = { buf, buflen, 0, false };
	char tmp[32];
	size_t i;

	if (!buf || buflen == 0 || (unsigned)r->type >= REC__COUNT || r->seq > REC_MAX_SEQ)
		return -EINVAL;
	out_puts(&o, REC_MAGIC " ");
	snprintf(tmp, sizeof(tmp), "%" PRIu32 " ", r->seq);
	out_puts(&o, tmp);
	out_puts(&o, rec_type_name(r->type));
	for (i = 0; i < r->nfields; i++) {
		const unsigned char *v = (const unsigned char *)r->f[i].val;

		out_putc(&o, ' ');
		out_puts(&o, r->f[i].key);
		out_putc(&o, '=');
		for (; *v; v++) {
			if (val_char_plain(*v)) {
				out_putc(&o, (char)*v);
			} else {
				out_putc(&o, '%');
				out_putc(&o, hex[*v >> 4]);
				out_putc(&o, hex[*v & 15]);
			}
		}
	}
	out_putc(&o, ' ');
	if (o.full)
		return -E2BIG;
	snprintf(tmp, sizeof(tmp), "#%08" PRIx32 "\n", rec_crc32(buf, o.pos));
	out_puts(&o, tmp);
	if (o.full || o.pos - 1 > REC_MAX_LINE)
		return -E2BIG;
	buf[o.pos] = '\0';
	return (int)o.pos;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* parse one "key=value" token [p, end) into f */
static int parse_field(const char *p, const char *end, struct rec_field *f, char *why, size_t whylen)
{
	const char *eq = memchr(p, '=', (size_t)(end - p));
	size_t klen, n = 0;

	if (!eq)
		return err_why(why, whylen, "field without '='");
	klen = (size_t)(eq - p);
	if (klen == 0 || klen >= REC_KEY_MAX)
		return err_why(why, whylen, "bad key length %zu", klen);
	memcpy(f->key, p, klen);
	f->key[klen] = '\0';
	if (!key_ok(f->key))
		return err_why(why, whylen, "bad character in key");
	for (p = eq + 1; p < end; p++) {
		int c = (unsigned char)*p;

		if (c == '%') {
			int hi, lo;

			if (end - p < 3 || (hi = hexval(p[1])) < 0 || (lo = hexval(p[2])) < 0)
				return err_why(why, whylen, "bad escape in value of '%s'", f->key);
			c = hi << 4 | lo;
			if (c == 0 || val_char_plain((unsigned char)c))
				return err_why(why, whylen, "non-canonical escape in value of '%s'", f->key);
			/* text that ends up in reports, XML and terminals: no control characters */
			if (c < 0x20 || c == 0x7f)
				return err_why(why, whylen, "control character %%%02x in value of '%s'", c, f->key);
			p += 2;
		} else if (!val_char_plain((unsigned char)c)) {
			return err_why(why, whylen, "bad character in value of '%s'", f->key);
		}
		if (n + 1 >= REC_VAL_MAX)
			return err_why(why, whylen, "value of '%s' too long", f->key);
		f->val[n++] = (char)c;
	}
	f->val[n] = '\0';
	return 0;
}

int rec_parse(const char *line, size_t len, struct record *out, char *why, size_t whylen)
{
	const size_t mlen = sizeof(REC_MAGIC) - 1;
	const char *p, *end, *hash, *tok;
	char tmp[16];
	uint32_t want, got;
	uint64_t seq;
	size_t i, n;

	if (len && line[len - 1] == '\n')
		len--;
	if (len > REC_MAX_LINE)
		return err_why(why, whylen, "line longer than %d bytes", REC_MAX_LINE);
	if (memchr(line, '\0', len))
		return err_why(why, whylen, "NUL byte in line");
	if (len < mlen + 1 || memcmp(line, REC_MAGIC " ", mlen + 1))
		return err_why(why, whylen, "not a " REC_MAGIC " record");
	/* checksum: " #xxxxxxxx" at the very end */
	if (len < mlen + 11 || line[len - 10] != ' ' || line[len - 9] != '#')
		return err_why(why, whylen, "missing checksum");
	hash = line + len - 9;
	want = 0;
	for (i = 1; i <= 8; i++) {
		int h = hexval(hash[i]);

		if (h < 0)
			return err_why(why, whylen, "bad checksum digits");
		want = want << 4 | (uint32_t)h;
	}
	got = rec_crc32(line, (size_t)(hash - line));
	if (got != want)
		return err_why(why, whylen, "checksum mismatch (got %08x, want %08x)", got, want);

	end = hash - 1; /* the space before '#' */
	p = line + mlen + 1;
	/* seq */
	tok = p;
	while (p < end && *p != ' ')
		p++;
	n = (size_t)(p - tok);
	if (n == 0 || n >= sizeof(tmp))
		return err_why(why, whylen, "bad sequence number");
	memcpy(tmp, tok, n);
	tmp[n] = '\0';
	for (i = 0; i < n; i++)
		if (tmp[i] < '0' || tmp[i] > '9')
			return err_why(why, whylen, "bad sequence number");
	seq = strtoull(tmp, NULL, 10);
	if (seq > REC_MAX_SEQ || (n > 1 && tmp[0] == '0'))
		return err_why(why, whylen, "bad sequence number");
	if (p >= end)
		return err_why(why, whylen, "missing record type");
	p++;
	/* type */
	tok = p;
	while (p < end && *p != ' ')
		p++;
	n = (size_t)(p - tok);
	if (n == 0 || n >= sizeof(tmp))
		return err_why(why, whylen, "bad record type");
	memcpy(tmp, tok, n);
	tmp[n] = '\0';
	if (rec_type_parse(tmp, &out->type))
		return err_why(why, whylen, "unknown record type");
	out->seq = (uint32_t)seq;
	out->nfields = 0;
	while (p < end) {
		const char *fend;
		size_t k;
		int r;

		if (*p != ' ')
			return err_why(why, whylen, "malformed separator");
		p++;
		fend = p;
		while (fend < end && *fend != ' ')
			fend++;
		if (fend == p)
			return err_why(why, whylen, "empty field");
		if (out->nfields >= REC_MAX_FIELDS)
			return err_why(why, whylen, "more than %d fields", REC_MAX_FIELDS);
		r = parse_field(p, fend, &out->f[out->nfields], why, whylen);
		if (r)
			return r;
		for (k = 0; k < out->nfields; k++)
			if (!strcmp(out->f[k].key, out->f[out->nfields].key))
				return err_why(why, whylen, "duplicate key '%s'", out->f[k].key);
		out->nfields++;
		p = fend;
	}
	return 0;
}

const char *rec_get(const struct record *r, const char *key)
{
	size_t i;

	for (i = 0; i < r->nfields; i++)
		if (!strcmp(r->f[i].key, key))
			return r->f[i].val;
	return NULL;
}

int rec_get_u64(const struct record *r, const char *key, uint64_t *out)
{
	const char *v = rec_get(r, key);
	unsigned long long x;
	char *end;
	size_t i;

	if (!v || !*v || strlen(v) > 20)
		return -EINVAL;
	for (i = 0; v[i]; i++)
		if (v[i] < '0' || v[i] > '9')
			return -EINVAL;
	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || *end)
		return -ERANGE;
	*out = x;
	return 0;
}

int rec_get_f64(const struct record *r, const char *key, double *out)
{
	const char *v = rec_get(r, key);
	char *end;
	double x;
	size_t i;

	if (!v || !*v)
		return -EINVAL;
	for (i = 0; v[i]; i++)
		if (!((v[i] >= '0' && v[i] <= '9') || v[i] == '.' || v[i] == '-' || v[i] == '+' ||
		      v[i] == 'e' || v[i] == 'E'))
			return -EINVAL;
	errno = 0;
	x = strtod(v, &end);
	if (*end || errno || !isfinite(x))
		return -ERANGE;
	*out = x;
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

bool rec_key_is_time(const char *key)
{
	static const char *const time_suffix[] = { "_ns", "_us", "_ms", "_s", "_cycles" };
	static const char *const time_infix[] = { "_ns_per_", "_us_per_", "_cycles_per_" };
	bool is_time = false;
	size_t i;

	/* a difference of two times may be negative: tlb_miss_extra_ns, small_4k_minus_2m_ns,
	 * tlb_cache_miss_ns (large_4k_access_ns - base_access_ns) */
	if (strstr(key, "extra") || strstr(key, "_minus_") || strstr(key, "cache_miss"))
		return false;
	for (i = 0; i < sizeof(time_suffix) / sizeof(time_suffix[0]); i++)
		is_time |= ends_with(key, time_suffix[i]);
	for (i = 0; i < sizeof(time_infix) / sizeof(time_infix[0]); i++)
		is_time |= strstr(key, time_infix[i]) != NULL;
	return is_time;
}

int rec_value_check(const char *key, double v, char *why, size_t whylen)
{
	static const char *const cov[] = { "huge_pct", "pmd_pct", "huge_fault_pct" };
	static const char *const count[] = { "_bytes", "_minflt", "_majflt", "_blocks", "_pages" };
	size_t i;

	if (!isfinite(v))
		return err_why(why, whylen, "'%s' is not a finite number", key);
	for (i = 0; i < sizeof(cov) / sizeof(cov[0]); i++)
		if (ends_with(key, cov[i]) && !(v >= 0 && v <= 100))
			return err_why(why, whylen, "'%s' is %.6g: a coverage is from 0 to 100 percent", key, v);
	if (rec_key_is_time(key) && v < 0)
		return err_why(why, whylen, "'%s' is %.6g: a time or rate cannot be negative", key, v);
	for (i = 0; i < sizeof(count) / sizeof(count[0]); i++)
		if (ends_with(key, count[i]) && v < 0)
			return err_why(why, whylen, "'%s' is %.6g: a count cannot be negative", key, v);
	return 0;
}

int rec_check_values(const struct record *r, char *why, size_t whylen)
{
	size_t i;
	double v;

	for (i = 0; i < r->nfields; i++)
		if (rec_get_f64(r, r->f[i].key, &v) == 0 && rec_value_check(r->f[i].key, v, why, whylen))
			return -EINVAL;
	return 0;
}

void rec_reader_init(struct rec_reader *rd)
{
	rd->len = 0;
	rd->overflow = false;
	rd->lines = 0;
	rd->oversized = 0;
}

int rec_reader_feed(struct rec_reader *rd, const char *data, size_t len, rec_line_fn fn, void *opaque)
{
	size_t i;
	int r;

	for (i = 0; i < len; i++) {
		char c = data[i];

		if (c == '\n') {
			if (rd->overflow) {
				rd->overflow = false;
				rd->len = 0;
				continue;
			}
			rd->buf[rd->len] = '\0';
			rd->lines++;
			r = fn(opaque, REC_LINE_OK, rd->buf, rd->len);
			rd->len = 0;
			if (r)
				return r;
			continue;
		}
		if (rd->overflow)
			continue;
		if (rd->len >= REC_MAX_LINE) {
			rd->overflow = true;
			rd->oversized++;
			rd->len = 0;
			r = fn(opaque, REC_LINE_OVERSIZED, NULL, 0);
			if (r)
				return r;
			continue;
		}
		rd->buf[rd->len++] = c;
	}
	return 0;
}
