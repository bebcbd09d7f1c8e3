#include "pgbench_parse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sysinfo.h"
#include "lib/parse.h"

/* [s, s + n) as a NUL-terminated word into buf; false when longer than len - 1 */
static bool take(const char *s, size_t n, char *buf, size_t len)
{
	if (n >= len)
		return false;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return true;
}

static bool u64_of(const char *s, size_t n, uint64_t max, uint64_t *v)
{
	char num[24];

	return take(s, n, num, sizeof(num)) && !parse_u64(num, v) && *v <= max;
}

static bool f64_of(const char *s, size_t n, double *v)
{
	char num[40];

	return take(s, n, num, sizeof(num)) && !parse_double(num, v) && isfinite(*v);
}

/* the number before " unit" ending the line, or before the first space with unit NULL */
static bool num_before(const char *s, size_t n, const char *unit, const char **num, size_t *nlen)
{
	const char *sp = memchr(s, ' ', n);

	if (unit) {
		size_t u = strlen(unit);

		if (!sp || (size_t)(s + n - sp) != u + 1 || memcmp(sp + 1, unit, u))
			return false;
	}
	*num = s;
	*nlen = sp ? (size_t)(sp - s) : n;
	return *nlen > 0;
}

enum pg_line {
	PL_VERSION, PL_TYPE, PL_SCALE, PL_MODE, PL_CLIENTS, PL_THREADS, PL_TRIES, PL_DURATION,
	PL_PROCESSED, PL_FAILED, PL_LAT, PL_STDDEV, PL_CONN, PL_TPS, PL__COUNT
};

static const char *const pg_prefix[] = {
	[PL_VERSION] = "pgbench (",
	[PL_TYPE] = "transaction type: ",
	[PL_SCALE] = "scaling factor: ",
	[PL_MODE] = "query mode: ",
	[PL_CLIENTS] = "number of clients: ",
	[PL_THREADS] = "number of threads: ",
	[PL_TRIES] = "maximum number of tries: ",
	[PL_DURATION] = "duration: ",
	[PL_PROCESSED] = "number of transactions actually processed: ",
	[PL_FAILED] = "number of failed transactions: ",
	[PL_LAT] = "latency average = ",
	[PL_STDDEV] = "latency stddev = ",
	[PL_CONN] = "initial connection time = ",
	[PL_TPS] = "tps = ",
};
_Static_assert(sizeof(pg_prefix) / sizeof(pg_prefix[0]) == PL__COUNT, "pg_prefix out of sync");

/* one line's value (v, vn: after the prefix) into r; a reason or NULL */
static const char *pg_value(enum pg_line k, const char *v, size_t vn, struct pgbench_result *r)
{
	static const char without[] = " (without initial connection time)";
	const char *num;
	size_t nn;
	uint64_t u;

	switch (k) {
	case PL_VERSION:
	case PL_MODE:
	case PL_TRIES:
		return NULL;
	case PL_TYPE:
		if (vn < 11 || memcmp(v, "<builtin: ", 10) || v[vn - 1] != '>' ||
		    !take(v + 10, vn - 11, r->type, sizeof(r->type)))
			return "not <builtin: NAME>";
		return NULL;
	case PL_SCALE:
		return u64_of(v, vn, 1000000, &r->scale) && r->scale ? NULL : "not a scale";
	case PL_CLIENTS:
		return u64_of(v, vn, 100000, &r->clients) && r->clients ? NULL : "not a client count";
	case PL_THREADS:
		return u64_of(v, vn, 100000, &r->threads) && r->threads ? NULL : "not a thread count";
	case PL_DURATION:
		return num_before(v, vn, "s", &num, &nn) && u64_of(num, nn, 86400 * 365, &r->duration_s) &&
		       r->duration_s ? NULL : "not N s";
	case PL_PROCESSED:
		return u64_of(v, vn, UINT64_MAX / 2, &r->processed) ? NULL : "not a count";
	case PL_FAILED:
		/* "0 (0.000%)" */
		if (!num_before(v, vn, NULL, &num, &nn) || !u64_of(num, nn, UINT64_MAX / 2, &u) ||
		    nn + 3 > vn || v[nn + 1] != '(' || v[vn - 1] != ')')
			return "not N (P%)";
		r->failed = u;
		r->have_failed = true;
		return NULL;
	case PL_LAT:
		return num_before(v, vn, "ms", &num, &nn) && f64_of(num, nn, &r->latency_avg_ms) &&
		       r->latency_avg_ms > 0 && r->latency_avg_ms <= 1e7 ? NULL : "not X ms in (0, 1e7]";
	case PL_STDDEV:
		return NULL;
	case PL_CONN:
		if (!num_before(v, vn, "ms", &num, &nn) || !f64_of(num, nn, &r->conn_ms) || r->conn_ms < 0)
			return "not X ms";
		r->have_conn_ms = true;
		return NULL;
	case PL_TPS:
		/* "X (without initial connection time)"; PostgreSQL 13 and older print two rates */
		if (!num_before(v, vn, NULL, &num, &nn) || !f64_of(num, nn, &r->tps) || !(r->tps > 0) ||
		    r->tps > 1e8)
			return "not a rate in (0, 1e8]";
		if (vn - nn != sizeof(without) - 1 || memcmp(v + nn, without, sizeof(without) - 1))
			return "not the rate without connection time";
		return NULL;
	case PL__COUNT:
		break;
	}
	return "unknown";
}

int pgbench_parse(const char *text, size_t n, struct pgbench_result *r, struct err *e)
{
	static const enum pg_line required[] = { PL_TYPE, PL_SCALE, PL_CLIENTS, PL_DURATION, PL_PROCESSED,
						 PL_LAT, PL_TPS };
	bool seen[PL__COUNT] = { false };
	size_t pos = 0, len, lineno = 0, i;
	const char *l;

	memset(r, 0, sizeof(*r));
	if (n > 16384)
		return err_set(e, -EBADMSG, "pgbench: output over 16384 bytes");
	if (memchr(text, '\0', n))
		return err_set(e, -EBADMSG, "pgbench: a NUL byte in the output");
	while (parse_next_line(text, n, &pos, &l, &len)) {
		enum pg_line k;
		const char *why;

		lineno++;
		if (len == 0)
			continue;
		if (len > 256)
			return err_set(e, -EBADMSG, "pgbench: line %zu over 256 bytes", lineno);
		for (k = 0; k < PL__COUNT; k++)
			if (len >= strlen(pg_prefix[k]) && !memcmp(l, pg_prefix[k], strlen(pg_prefix[k])))
				break;
		if (k == PL__COUNT)
			return err_set(e, -EBADMSG, "pgbench: line %zu is none of its report's: '%.80s'", lineno,
				       l);
		if (seen[k])
			return err_set(e, -EBADMSG, "pgbench: line %zu repeats '%s'", lineno, pg_prefix[k]);
		seen[k] = true;
		why = pg_value(k, l + strlen(pg_prefix[k]), len - strlen(pg_prefix[k]), r);
		if (why)
			return err_set(e, -EBADMSG, "pgbench: line %zu: %s: '%.80s'", lineno, why, l);
	}
	for (i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!seen[required[i]])
			return err_set(e, -EBADMSG, "pgbench: no '%s' line", pg_prefix[required[i]]);
	if (r->processed == 0)
		return err_set(e, -EBADMSG, "pgbench: no transaction processed");
	if (r->have_failed && r->failed > r->processed)
		return err_set(e, -EBADMSG, "pgbench: more failed transactions than processed");
	if (!seen[PL_THREADS])
		r->threads = 1;
	return 0;
}

int pg_pidfile_ready(const char *text, size_t n, pid_t pid)
{
	size_t pos = 0, len, lineno = 0;
	const char *l;
	uint64_t v;

	if (n > 4096 || memchr(text, '\0', n))
		return -EBADMSG;
	while (parse_next_line(text, n, &pos, &l, &len)) {
		lineno++;
		if (lineno == 1 && (!u64_of(l, len, INT32_MAX, &v) || v != (uint64_t)pid))
			return -EBADMSG;
		if (lineno == 8) {
			while (len && l[len - 1] == ' ')
				len--;
			if (len == 5 && !memcmp(l, "ready", 5))
				return 0;
			if ((len == 8 && !memcmp(l, "starting", 8)) || len == 0)
				return -EAGAIN;
			return -EBADMSG;	/* stopping, standby: not a server that will serve */
		}
	}
	return lineno ? -EAGAIN : -EAGAIN;
}

bool pg_shmem_value_valid(const char *v)
{
	return !strcmp(v, "keep") || shmem_value_valid(v);
}

int pg_shmem_want(const char *s)
{
	return !strcmp(s, "always") || !strcmp(s, "within_size") || !strcmp(s, "force");
}
