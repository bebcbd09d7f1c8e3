#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int digits_only(const char *s)
{
	if (!s || !*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

int parse_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!digits_only(s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_i64(const char *s, int64_t *out)
{
	uint64_t v;
	int neg = 0, r;

	if (s && *s == '-') {
		neg = 1;
		s++;
	}
	r = parse_u64(s, &v);
	if (r)
		return r;
	if (neg) {
		if (v > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)v;
	} else {
		if (v > INT64_MAX)
			return -ERANGE;
		*out = (int64_t)v;
	}
	return 0;
}

int parse_u64_range(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	int r = parse_u64(s, &v);

	if (r)
		return r;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_double(const char *s, double *out)
{
	const char *p;
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	for (p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && !strchr("+-.eE", *p))
			return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || end == s)
		return -EINVAL;
	if (errno == ERANGE || !isfinite(v))
		return -ERANGE;
	*out = v;
	return 0;
}

static int split_suffix(const char *s, char *num, size_t numlen, const char **suffix)
{
	size_t n = 0;

	if (!s)
		return -EINVAL;
	while (isdigit((unsigned char)s[n]))
		n++;
	if (n == 0 || n >= numlen)
		return n == 0 ? -EINVAL : -ERANGE;
	memcpy(num, s, n);
	num[n] = '\0';
	*suffix = s + n;
	return 0;
}

/* a number with one of the suffixes of tab (the empty suffix too if listed), times its factor */
struct unit {
	const char *sfx;
	uint64_t mult;
};

static int parse_with_unit(const char *s, const struct unit *tab, size_t n, uint64_t *out)
{
	char num[32];
	const char *sfx;
	uint64_t v;
	size_t i;
	int r;

	r = split_suffix(s, num, sizeof(num), &sfx);
	if (r)
		return r;
	r = parse_u64(num, &v);
	if (r)
		return r;
	for (i = 0; i < n; i++) {
		if (strcmp(sfx, tab[i].sfx))
			continue;
		if (v > UINT64_MAX / tab[i].mult)
			return -ERANGE;
		*out = v * tab[i].mult;
		return 0;
	}
	return -EINVAL;
}

int parse_size(const char *s, uint64_t *bytes)
{
	static const struct unit tab[] = {
		{ "", 1 }, { "B", 1 },
		{ "K", 1ull << 10 }, { "k", 1ull << 10 }, { "KiB", 1ull << 10 }, { "KB", 1ull << 10 },
		{ "M", 1ull << 20 }, { "MiB", 1ull << 20 }, { "MB", 1ull << 20 },
		{ "G", 1ull << 30 }, { "GiB", 1ull << 30 }, { "GB", 1ull << 30 },
		{ "T", 1ull << 40 }, { "TiB", 1ull << 40 }, { "TB", 1ull << 40 },
	};

	return parse_with_unit(s, tab, sizeof(tab) / sizeof(tab[0]), bytes);
}

/*
 * One number and unit, or several with units from larger to smaller, each at
 * most once ("4m30s", "1h30m", "1s500ms"); a bare number is seconds.
 */
int parse_duration_ms(const char *s, uint64_t *ms)
{
	static const struct unit tab[] = {
		{ "h", 3600000 }, { "m", 60000 }, { "s", 1000 }, { "ms", 1 },
	};
	const size_t nt = sizeof(tab) / sizeof(tab[0]);
	uint64_t total = 0, v;
	size_t next = 0, i, n;
	char num[32];
	const char *sfx;
	int r;

	r = split_suffix(s, num, sizeof(num), &sfx);
	if (r)
		return r;
	if (!*sfx) {
		static const struct unit secs[] = { { "", 1000 } };

		return parse_with_unit(s, secs, 1, ms);
	}
	while (*s) {
		r = split_suffix(s, num, sizeof(num), &sfx);
		if (r || (r = parse_u64(num, &v)))
			return r;
		/* the unit: "ms" before "m", and each one after the last */
		for (i = next, n = 0; i < nt; i++) {
			n = strlen(tab[i].sfx);
			if (!strncmp(sfx, tab[i].sfx, n) && !(n == 1 && sfx[0] == 'm' && sfx[1] == 's'))
				break;
		}
		if (i == nt)
			return -EINVAL;
		if (v > UINT64_MAX / tab[i].mult || total > UINT64_MAX - v * tab[i].mult)
			return -ERANGE;
		total += v * tab[i].mult;
		next = i + 1;
		s = sfx + n;
	}
	*ms = total;
	return 0;
}

int parse_list_check(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || s[0] == ',' || s[n - 1] == ',' || strstr(s, ",,"))
		return -EINVAL;
	return 0;
}

int parse_list_dup(const char *s, char *item, size_t len)
{
	const char *a, *b;

	for (a = s; *a; a = strchr(a, ',') ? strchr(a, ',') + 1 : a + strlen(a)) {
		size_t an = strcspn(a, ",");

		for (b = a + an; an && *b == ','; ) {
			size_t bn;

			b++;
			bn = strcspn(b, ",");
			if (bn == an && !memcmp(a, b, an)) {
				if (item && len)
					snprintf(item, len, "%.*s", (int)an, a);
				return -EEXIST;
			}
			b += bn;
		}
	}
	return 0;
}

bool parse_next_line(const char *text, size_t n, size_t *pos, const char **s, size_t *len)
{
	const char *nl;

	if (*pos >= n)
		return false;
	*s = text + *pos;
	nl = memchr(*s, '\n', n - *pos);
	*len = nl ? (size_t)(nl - *s) : n - *pos;
	*pos += *len + (nl ? 1 : 0);
	return true;
}
