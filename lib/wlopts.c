#include "wlopts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "err.h"

static const char *const reserved[] = { "rep", "warmup", "seed", "label", "size", "accesses", "madvise",
					"src", "shmem-thp", "hold" };

bool wlopt_reserved(const char *param)
{
	size_t i;

	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strcmp(param, reserved[i]))
			return true;
	return false;
}

static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static bool value_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '/' || c == ':' || c == '+' || c == '-';
}

/* [s, s + n) into out[max] when every byte passes ok; false if empty, too long or a bad byte */
static bool take(const char *s, size_t n, bool (*ok)(char), char *out, size_t max)
{
	size_t i;

	if (n == 0 || n >= max)
		return false;
	for (i = 0; i < n; i++)
		if (!ok(s[i]))
			return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

int wlopts_parse(const char *spec, struct wlopt *out, size_t max, size_t *n, char *why, size_t len)
{
	const char *s = spec;
	char item[WLOPTS_SPEC_MAX + 1];
	size_t k;

	*n = 0;
	if (strnlen(spec, WLOPTS_SPEC_MAX + 1) > WLOPTS_SPEC_MAX)
		return err_why(why, len, "workload options longer than %d bytes: '%.40s...'", WLOPTS_SPEC_MAX, spec);
	for (;;) {
		const char *comma = strchr(s, ','), *colon, *eq;
		size_t il = comma ? (size_t)(comma - s) : strlen(s);
		struct wlopt o;

		memcpy(item, s, il);
		item[il] = '\0';
		if (il == 0)
			return err_why(why, len, "empty item in workload options '%.60s'", spec);
		colon = strchr(item, ':');
		eq = colon ? strchr(colon, '=') : NULL;
		if (!colon || !eq)
			return err_why(why, len, "'%.60s' is not WORKLOAD:PARAM=VALUE (e.g. redis:dataset=4G)", item);
		if (!take(item, (size_t)(colon - item), name_char, o.workload, sizeof(o.workload)))
			return err_why(why, len, "'%.60s': a bad workload name (letters a-z, digits, _ and -)", item);
		if (!take(colon + 1, (size_t)(eq - colon - 1), name_char, o.param, sizeof(o.param)))
			return err_why(why, len, "'%.60s': a bad parameter name (letters a-z, digits, _ and -)", item);
		if (!take(eq + 1, strlen(eq + 1), value_char, o.value, sizeof(o.value)))
			return err_why(why, len, "'%.60s': a value must be 1-%d characters of A-Z a-z 0-9 _ . / : + -", item,
				      WLOPT_VALUE_MAX - 1);
		if (wlopt_reserved(o.param))
			return err_why(why, len, "'%.60s': --%s is set by thpeval itself (its own run option)", item,
				       o.param);
		for (k = 0; k < *n; k++)
			if (!strcmp(out[k].workload, o.workload) && !strcmp(out[k].param, o.param))
				return err_why(why, len, "'%s:%s' given twice", o.workload, o.param);
		if (*n >= max)
			return err_why(why, len, "more than %zu workload options ('%.60s')", max, spec);
		out[(*n)++] = o;
		if (!comma)
			return 0;
		s = comma + 1;
	}
}
