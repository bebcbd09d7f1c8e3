/*
 * err: a caller-owned error slot (first error wins: code + one-line message).
 * Every module below main reports failure through it; nothing here prints,
 * exits or aborts. Codes are negative errno values.
 */
#ifndef THPEVAL_LIB_ERR_H
#define THPEVAL_LIB_ERR_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#define ERR_MSG_MAX 512

struct err {
	int code;		/* 0 = no error, else a negative errno */
	char msg[ERR_MSG_MAX];
};

#define ERR_INIT { 0, { 0 } }

/* Record an error unless one is already set; returns the code kept, never 0. */
int err_set(struct err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * The same call, its "never 0" visible where it is made: callers write
 * `return err_set(...)` on failure paths and test the result for non-zero,
 * and gcc -fanalyzer (make lint) sees into this line but not into err.c.
 */
static inline int err_nonzero(int code)
{
	return code ? code : -EINVAL;
}
#define err_set(e, code, ...) err_nonzero(err_set((e), (code), __VA_ARGS__))
/* Prefix the stored message with context ("while X: <old msg>"). */
int err_wrap(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * For the pure parsers that explain a refusal in a caller's buffer instead:
 * why (when not NULL and len > 0) filled printf-style; returns -EINVAL.
 */
int err_why(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/*
 * A value for a message, after its reason ("not a run count: 'x'"): quoted,
 * control characters, quotes and backslashes escaped (\n, \t, \xNN), at most
 * the first ERR_QUOTE_SHOWN bytes, then "..." and the whole length, so a long
 * value never pushes the reason out of the message. Writes buf, returns it.
 */
#define ERR_QUOTE_SHOWN 80
#define ERR_QUOTE_MAX (ERR_QUOTE_SHOWN * 4 + 48)
const char *err_quote(char *buf, size_t len, const char *value);
/* err_quote() into a buffer of the enclosing block: err_set(e, r, "not X: %s", err_q(arg)) */
#define err_q(value) err_quote((char[ERR_QUOTE_MAX]){ 0 }, ERR_QUOTE_MAX, (value))
void err_clear(struct err *e);
bool err_isset(const struct err *e);

#endif
