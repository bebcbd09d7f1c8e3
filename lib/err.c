#include "err.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* in parentheses: the function, not err.h's macro of the same name */
int (err_set)(struct err *e, int code, const char *fmt, ...)
{
	va_list ap;

	if (code >= 0)
		code = -EINVAL;
	if (!e)
		return code;
	if (e->code)
		return e->code;
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

int err_wrap(struct err *e, const char *fmt, ...)
{
	char prefix[ERR_MSG_MAX];
	char old[ERR_MSG_MAX];
	va_list ap;

	if (!e || !e->code)
		return e ? e->code : 0;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, e->msg, sizeof(old));
	/* both halves fit; the tail of an overlong message is cut */
	if ((size_t)snprintf(e->msg, sizeof(e->msg), "%.200s: %.300s", prefix, old) >= sizeof(e->msg))
		e->msg[sizeof(e->msg) - 1] = '\0';
	return e->code;
}

int err_why(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why && len) {
		va_start(ap, fmt);
		vsnprintf(why, len, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

void err_clear(struct err *e)
{
	if (!e)
		return;
	e->code = 0;
	e->msg[0] = '\0';
}

bool err_isset(const struct err *e)
{
	return e && e->code != 0;
}
