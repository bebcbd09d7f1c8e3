/*
 * array: ARRAY_SIZE, the number of elements of an array, for every part of
 * the tree (host, guest, orchestrator, tests). Given a pointer instead of an
 * array it fails the build, where sizeof(p) / sizeof(p[0]) would be wrong.
 */
#ifndef THPEVAL_LIB_ARRAY_H
#define THPEVAL_LIB_ARRAY_H

#include <stddef.h>

/* a pointer makes the bit-field's width negative: a compile error */
#define ARRAY_SIZE(a)                                                                              \
	(sizeof(a) / sizeof((a)[0]) +                                                              \
	 0 * sizeof(struct {                                                                       \
		 int not_an_array : 1 - 2 * __builtin_types_compatible_p(__typeof__(a),           \
									 __typeof__(&(a)[0])); \
	 }))

#endif
