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
	/*
	 * the context short, the message (reason first, then any value) in the
	 * rest: an overlong one loses its tail, never its reason
	 */
	if ((size_t)snprintf(e->msg, sizeof(e->msg), "%.160s: %s", prefix, old) >= sizeof(e->msg))
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

const char *err_quote(char *buf, size_t len, const char *value)
{
	size_t n, i, o = 0, shown;

	if (!buf || len < 8)
		return "''";
	if (!value)
		value = "";
	n = strlen(value);
	shown = n > ERR_QUOTE_SHOWN ? ERR_QUOTE_SHOWN : n;
	while (shown < n && shown > 0 && ((unsigned char)value[shown] & 0xc0) == 0x80)
		shown--;	/* never cut a UTF-8 character */
	buf[o++] = '\'';
	for (i = 0; i < shown && o + 5 < len; i++) {
		unsigned char c = (unsigned char)value[i];

		if (c == '\n' || c == '\t' || c == '\\' || c == '\'') {
			buf[o++] = '\\';
			buf[o++] = c == '\n' ? 'n' : c == '\t' ? 't' : (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
		} else {
			buf[o++] = (char)c;
		}
	}
	buf[o++] = '\'';
	buf[o] = '\0';
	if (i < n)
		snprintf(buf + o, len - o, "... (%zu bytes)", n);
	return buf;
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
