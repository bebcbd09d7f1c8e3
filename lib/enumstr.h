/*
 * enumstr: one list ties an enum to its strings, libvirt's VIR_ENUM_DECL /
 * VIR_ENUM_IMPL idea under this project's names. In a header,
 * ENUM_DECL(x) declares x_name() and x_parse() for enum x; in one .c,
 * ENUM_IMPL(x, X__COUNT, "a", "b", ...) defines them from the strings, in
 * the enum's order, and the build fails unless there is exactly one string
 * per value. Never prints, never exits.
 */
#ifndef THPEVAL_LIB_ENUMSTR_H
#define THPEVAL_LIB_ENUMSTR_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* strings[v], or NULL when v is out of range */
static inline const char *enumstr_name(const char *const *strings, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? strings[v] : NULL;
}

/* the index of s among strings (exact, case-sensitive), or -EINVAL (also for NULL) */
static inline int enumstr_parse(const char *const *strings, size_t n, const char *s)
{
	size_t i;

	for (i = 0; s && i < n; i++)
		if (strings[i] && !strcmp(s, strings[i]))
			return (int)i;
	return -EINVAL;
}

/*
 * const char *x_name(enum x v): the string of v, NULL when out of range;
 * int x_parse(const char *s, enum x *out): 0 with *out set, or -EINVAL for a
 * string that is none of them (*out untouched).
 */
#define ENUM_DECL(x) \
	const char *x##_name(enum x v); \
	int x##_parse(const char *s, enum x *out)

#define ENUM_IMPL(x, count, ...) \
	static const char *const x##_strings_[] = { __VA_ARGS__ }; \
	_Static_assert(sizeof(x##_strings_) / sizeof(x##_strings_[0]) == (count), \
		       "enum " #x ": not one string per value"); \
	const char *x##_name(enum x v) \
	{ \
		return enumstr_name(x##_strings_, (count), (int)v); \
	} \
	int x##_parse(const char *s, enum x *out) \
	{ \
		int i = enumstr_parse(x##_strings_, (count), s); \
\
		if (i < 0) \
			return i; \
		*out = (enum x)i; \
		return 0; \
	} \
	_Static_assert(1, "ENUM_IMPL ends with a semicolon")

#endif
