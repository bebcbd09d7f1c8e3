#include "redis_proto.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "lib/parse.h"

#define REDIS_IO_MS 120000u		/* one reply within this */

/* ---- parsers ------------------------------------------------------------------ */

static const char redis_csv_header[] = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\","
				       "\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\","
				       "\"max_latency_ms\"";

/* parse_next_line(), less a carriage return at the end */
static bool next_line(const char *text, size_t n, size_t *pos, const char **s, size_t *len)
{
	if (!parse_next_line(text, n, pos, s, len))
		return false;
	if (*len && (*s)[*len - 1] == '\r')
		(*len)--;
	return true;
}

static bool test_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == ' ' || c == '(' || c == ')' || c == '-';
}

/* one CSV row: eight quoted fields, the first a test name, then seven numbers */
static int csv_row(const char *l, size_t len, struct redis_bench_row *row, const char **why)
{
	double v[7];
	size_t i = 0, f;

	for (f = 0; f < 8; f++) {
		size_t s, k;
		char num[32];

		if (f && (i >= len || l[i++] != ','))
			return *why = "expected 8 comma-separated fields", -EBADMSG;
		if (i >= len || l[i++] != '"')
			return *why = "a field is not quoted", -EBADMSG;
		s = i;
		while (i < len && l[i] != '"')
			i++;
		if (i >= len)
			return *why = "an unterminated quote", -EBADMSG;
		k = i++ - s;
		if (f == 0) {
			size_t c;

			if (k == 0 || k >= sizeof(row->test))
				return *why = "a test name empty or too long", -EBADMSG;
			for (c = 0; c < k; c++)
				if (!test_char(l[s + c]))
					return *why = "a bad character in the test name", -EBADMSG;
			memcpy(row->test, l + s, k);
			row->test[k] = '\0';
			continue;
		}
		if (k == 0 || k >= sizeof(num))
			return *why = "a number empty or too long", -EBADMSG;
		memcpy(num, l + s, k);
		num[k] = '\0';
		if (parse_double(num, &v[f - 1]) || !isfinite(v[f - 1]) || v[f - 1] < 0)
			return *why = "a field is not a non-negative number", -EBADMSG;
	}
	if (i != len)
		return *why = "more than 8 fields", -EBADMSG;
	row->rps = v[0];
	row->avg_ms = v[1];
	row->min_ms = v[2];
	row->p50_ms = v[3];
	row->p95_ms = v[4];
	row->p99_ms = v[5];
	row->max_ms = v[6];
	if (!(row->rps > 0 && row->rps <= 1e9))
		return *why = "rps out of range (0 to 1e9]", -EBADMSG;
	for (f = 1; f < 7; f++)
		if (v[f] > 1e6)
			return *why = "a latency above 1e6 ms", -EBADMSG;
	if (!(row->min_ms <= row->p50_ms && row->p50_ms <= row->p95_ms && row->p95_ms <= row->p99_ms &&
	      row->p99_ms <= row->max_ms))
		return *why = "latencies out of order (min <= p50 <= p95 <= p99 <= max)", -EBADMSG;
	/* the average is exact, the others histogram buckets printed to 1 us */
	if (row->avg_ms + 0.002 < row->min_ms || row->avg_ms > row->max_ms + 0.002)
		return *why = "the average is outside [min, max]", -EBADMSG;
	return 0;
}

int redis_bench_csv_parse(const char *text, size_t n, struct redis_bench_row *rows, size_t max,
			  size_t *nrows, struct err *e)
{
	size_t pos = 0, len, lineno = 0;
	const char *l, *why = NULL;

	*nrows = 0;
	if (n > REDIS_CSV_MAX)
		return err_set(e, -EBADMSG, "redis-benchmark --csv: output over %d bytes", REDIS_CSV_MAX);
	if (memchr(text, '\0', n))
		return err_set(e, -EBADMSG, "redis-benchmark --csv: a NUL byte in the output");
	while (next_line(text, n, &pos, &l, &len)) {
		lineno++;
		if (len > 512)
			return err_set(e, -EBADMSG, "redis-benchmark --csv: line %zu over 512 bytes", lineno);
		if (lineno == 1) {
			if (len != sizeof(redis_csv_header) - 1 || memcmp(l, redis_csv_header, len))
				return err_set(e, -EBADMSG, "redis-benchmark --csv: line 1 is not its header: "
					       "'%.80s'", l);
			continue;
		}
		if (len == 0 && pos >= n)
			break;	/* the text's last newline */
		if (*nrows >= max)
			return err_set(e, -EBADMSG, "redis-benchmark --csv: more than %zu rows", max);
		if (csv_row(l, len, &rows[*nrows], &why))
			return err_set(e, -EBADMSG, "redis-benchmark --csv: line %zu: %s: '%.80s'", lineno,
				       why, l);
		(*nrows)++;
	}
	if (lineno == 0)
		return err_set(e, -EBADMSG, "redis-benchmark --csv: no output");
	if (*nrows == 0)
		return err_set(e, -EBADMSG, "redis-benchmark --csv: a header and no row");
	return 0;
}

const struct redis_bench_row *redis_bench_row_find(const struct redis_bench_row *rows, size_t n,
						   const char *test)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].test, test))
			return &rows[i];
	return NULL;
}

int redis_info_check(const char *text, size_t n, struct err *e)
{
	size_t pos = 0, len, lineno = 0, i;
	const char *l;

	if (n > REDIS_BULK_MAX)
		return err_set(e, -EBADMSG, "INFO: over %u bytes", REDIS_BULK_MAX);
	while (next_line(text, n, &pos, &l, &len)) {
		lineno++;
		if (len == 0)
			continue;
		if (len > 1024)
			return err_set(e, -EBADMSG, "INFO: line %zu over 1024 bytes", lineno);
		if (l[0] == '#') {
			if (len < 3 || l[1] != ' ')
				return err_set(e, -EBADMSG, "INFO: line %zu: a bad section header", lineno);
			continue;
		}
		for (i = 0; i < len && ((l[i] >= 'a' && l[i] <= 'z') || (l[i] >= '0' && l[i] <= '9') ||
					l[i] == '_'); i++)
			;
		if (i == 0 || i == len || l[i] != ':')
			return err_set(e, -EBADMSG, "INFO: line %zu is not key:value: '%.60s'", lineno, l);
		for (i++; i < len; i++)
			if ((unsigned char)l[i] < 0x20 || (unsigned char)l[i] > 0x7e)
				return err_set(e, -EBADMSG, "INFO: line %zu: a control or non-ASCII byte",
					       lineno);
	}
	return 0;
}

int redis_info_get(const char *text, size_t n, const char *key, char *out, size_t len)
{
	size_t pos = 0, ll, k = strlen(key);
	const char *l;

	while (next_line(text, n, &pos, &l, &ll)) {
		if (ll <= k || memcmp(l, key, k) || l[k] != ':')
			continue;
		if (ll - k - 1 >= len)
			return -E2BIG;
		memcpy(out, l + k + 1, ll - k - 1);
		out[ll - k - 1] = '\0';
		return 0;
	}
	return -ENOENT;
}

int redis_info_u64(const char *text, size_t n, const char *key, uint64_t *v)
{
	char val[32];
	int r = redis_info_get(text, n, key, val, sizeof(val));

	if (r == -E2BIG)
		return -EBADMSG;
	if (r)
		return r;
	return parse_u64(val, v) ? -EBADMSG : 0;
}

/* a CRLF-terminated line from buf[0..n) of at most 1 KiB: its length, 0 incomplete, <0 bad */
static ssize_t resp_line(const char *buf, size_t n)
{
	size_t i, lim = n < 1026 ? n : 1026;

	for (i = 0; i < lim; i++) {
		if (buf[i] == '\n')
			return -EBADMSG;	/* a LF without its CR */
		if (buf[i] == '\r')
			return i + 1 == n ? 0 : buf[i + 1] == '\n' ? (ssize_t)i : -EBADMSG;
	}
	return n >= 1026 ? -EBADMSG : 0;
}

ssize_t resp_parse(const char *buf, size_t n, size_t max_bulk, struct resp_reply *r)
{
	char num[24];
	ssize_t l;
	int64_t v;

	if (n == 0)
		return 0;
	l = resp_line(buf + 1, n - 1);
	if (l <= 0)
		return l;
	memset(r, 0, sizeof(*r));
	switch (buf[0]) {
	case '+':
	case '-':
		r->type = buf[0] == '+' ? RESP_SIMPLE : RESP_ERROR;
		r->str = buf + 1;
		r->len = (size_t)l;
		return l + 3;
	case ':':
	case '$':
		if ((size_t)l >= sizeof(num))
			return -EBADMSG;
		memcpy(num, buf + 1, (size_t)l);
		num[l] = '\0';
		if (parse_i64(num, &v))
			return -EBADMSG;
		if (buf[0] == ':') {
			r->type = RESP_INT;
			r->num = v;
			return l + 3;
		}
		if (v == -1) {
			r->type = RESP_NULL;
			return l + 3;
		}
		if (v < 0 || (uint64_t)v > max_bulk)
			return -EBADMSG;
		if (n < (size_t)l + 3 + (size_t)v + 2)
			return 0;
		if (buf[l + 3 + v] != '\r' || buf[l + 3 + v + 1] != '\n')
			return -EBADMSG;
		r->type = RESP_BULK;
		r->str = buf + l + 3;
		r->len = (size_t)v;
		return l + 3 + v + 2;
	default:
		return -EBADMSG;	/* arrays, RESP3 types, garbage */
	}
}

/* ---- a client on the server's socket -------------------------------------------- */

void rc_close(struct rconn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	free(c->buf);
	c->buf = NULL;
}

/* 0 connected, -EAGAIN not yet (no socket, refused), else an error */
int rc_connect(struct rconn *c, const char *path, struct err *e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(sa.sun_path))
		return err_set(e, -ENAMETOOLONG, "socket path '%s' too long", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (!c->buf && !(c->buf = malloc(REDIS_BULK_MAX + 2048)))
		return err_set(e, -ENOMEM, "out of memory");
	c->have = c->used = 0;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return err_set(e, -errno, "socket: %s", strerror(errno));
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int saved = errno;

		close(c->fd);
		c->fd = -1;
		if (saved == ENOENT || saved == ECONNREFUSED)
			return -EAGAIN;
		return err_set(e, -saved, "cannot connect to '%s': %s", path, strerror(saved));
	}
	return 0;
}

static int rc_wait(struct rconn *c, short ev, struct err *e)
{
	struct pollfd p = { c->fd, ev, 0 };
	int r;

	do
		r = poll(&p, 1, REDIS_IO_MS);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return err_set(e, -errno, "poll: %s", strerror(errno));
	if (r == 0)
		return err_set(e, -ETIMEDOUT, "redis-server did not answer within %u s", REDIS_IO_MS / 1000);
	return 0;
}

int rc_send(struct rconn *c, const char *data, size_t n, struct err *e)
{
	while (n) {
		ssize_t w = send(c->fd, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			int r = rc_wait(c, POLLOUT, e);

			if (r)
				return r;
			continue;
		}
		if (w < 0)
			return err_set(e, -errno, "cannot write to redis-server: %s", strerror(errno));
		data += w;
		n -= (size_t)w;
	}
	return 0;
}

/* the next reply; its text stays valid until the next call */
int rc_reply(struct rconn *c, struct resp_reply *r, struct err *e)
{
	memmove(c->buf, c->buf + c->used, c->have - c->used);
	c->have -= c->used;
	c->used = 0;
	for (;;) {
		ssize_t k = resp_parse(c->buf, c->have, REDIS_BULK_MAX, r), n;
		int w;

		if (k > 0) {
			c->used = (size_t)k;
			return 0;
		}
		if (k < 0)
			return err_set(e, -EBADMSG, "redis-server sent a malformed or unexpected reply: '%.40s'",
				       c->buf);
		if (c->have == REDIS_BULK_MAX + 2048)
			return err_set(e, -EBADMSG, "redis-server's reply is over %u bytes", REDIS_BULK_MAX);
		if ((w = rc_wait(c, POLLIN, e)))
			return w;
		n = recv(c->fd, c->buf + c->have, REDIS_BULK_MAX + 2048 - c->have, MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return err_set(e, -errno, "cannot read from redis-server: %s", strerror(errno));
		if (n == 0)
			return err_set(e, -ECONNRESET, "redis-server closed the connection");
		c->have += (size_t)n;
	}
}

/* the RESP encoding of argv[0..argc) appended to buf (of cap bytes, *len used); false if full */
bool resp_encode(char *buf, size_t cap, size_t *len, int argc, const char *const argv[],
			const size_t *lens)
{
	int i, k;

	k = snprintf(buf + *len, cap - *len, "*%d\r\n", argc);
	if (k < 0 || (size_t)k >= cap - *len)
		return false;
	*len += (size_t)k;
	for (i = 0; i < argc; i++) {
		size_t al = lens ? lens[i] : strlen(argv[i]);

		k = snprintf(buf + *len, cap - *len, "$%zu\r\n", al);
		if (k < 0 || (size_t)k + al + 2 > cap - *len)
			return false;
		*len += (size_t)k;
		memcpy(buf + *len, argv[i], al);
		*len += al;
		memcpy(buf + *len, "\r\n", 2);
		*len += 2;
	}
	return true;
}

int rc_command(struct rconn *c, int argc, const char *const argv[], struct resp_reply *r,
		      struct err *e)
{
	char buf[512];
	size_t len = 0;
	int ret;

	if (!resp_encode(buf, sizeof(buf), &len, argc, argv, NULL))
		return err_set(e, -E2BIG, "command '%s' too long", argv[0]);
	if ((ret = rc_send(c, buf, len, e)) || (ret = rc_reply(c, r, e)))
		return ret;
	if (r->type == RESP_ERROR)
		return err_set(e, -EIO, "redis-server refused %s: %.*s", argv[0], (int)(r->len > 120 ? 120 : r->len),
			       r->str);
	return 0;
}

/* INFO section, checked, into a reply whose text lasts until the next command */
int rc_info(struct rconn *c, const char *section, struct resp_reply *r, struct err *e)
{
	const char *argv[] = { "INFO", section };
	int ret = rc_command(c, 2, argv, r, e);

	if (ret)
		return ret;
	if (r->type != RESP_BULK)
		return err_set(e, -EBADMSG, "INFO %s: not a bulk reply", section);
	if (redis_info_check(r->str, r->len, e))
		return err_wrap(e, "INFO %s", section);
	return 0;
}

int rc_info_u64(const struct resp_reply *r, const char *key, uint64_t *v, struct err *e)
{
	int ret = redis_info_u64(r->str, r->len, key, v);

	if (ret == -ENOENT)
		return err_set(e, ret, "INFO lacks %s", key);
	if (ret)
		return err_set(e, ret, "INFO: %s is not an unsigned integer", key);
	return 0;
}
