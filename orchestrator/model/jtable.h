/*
 * jtable: a JSON object described once, by a table of its fields (key, type,
 * offsetof into the C struct, flags), and written and read from that one
 * table with json-c, so a field cannot be written and then dropped by the
 * reader. The few irregular values (maps, sample arrays) are callbacks named
 * in the table. Reading is strict (types, sizes, ranges) and every error is
 * one line naming the file and the key path. Never prints, never exits.
 */
#ifndef THPEVAL_ORCH_JTABLE_H
#define THPEVAL_ORCH_JTABLE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define JT_PATH_MAX 256		/* key paths in messages: "cells[2].metrics.access_ns" */

enum jt_kind {
	JT_STR,			/* char[size]: a string */
	JT_INT,			/* unsigned (size 4) or 64-bit integer (size 8), 0 and up */
	JT_DOUBLE,		/* a number; not finite <-> null */
	JT_BOOL,
	JT_CONST,		/* fixed text (def), nothing in the struct */
	JT_OBJ,			/* a sub-table on the struct at off */
	JT_ARR,			/* an array of sub-table structs: see count, cap */
	JT_CUSTOM,		/* write and load callbacks */
};

/* flags */
#define JT_OPT		(1u << 0)	/* may be absent (added after schema 1): the default stays */
#define JT_NULL		(1u << 1)	/* null reads as "", 0 or the default, and messages say "or null" */
#define JT_NULLSKIP	(1u << 2)	/* null reads as the default, messages not saying so */
#define JT_WNULL	(1u << 3)	/* "" or 0 is written as null */
#define JT_WDEF		(1u << 4)	/* "" or 0 is written as the default (def, idef) */
#define JT_IF		(1u << 5)	/* null unless the bool at cond is true; a value read sets it */
#define JT_UNLESS	(1u << 6)	/* null when the bool at cond is true */
#define JT_IFSET	(1u << 7)	/* the key only when the string at cond is not empty */
#define JT_DERIVED	(1u << 8)	/* computed from other fields: written, and read only to check it
					 * (strings, numbers, booleans; a callback checks its own) */
#define JT_POS		(1u << 9)	/* a double written only when above 0 (else null); read, below 0 is 0 */
#define JT_INLINE	(1u << 10)	/* JT_ARR: the elements are an array in the struct, not a pointer */
#define JT_KEYIF	(1u << 11)	/* the key only when the bool at cond is true (a field measured
					 * or not); a value read sets it */
#define JT_RANGE	(1u << 12)	/* JT_INT, JT_DOUBLE: a value read must be from lo to hi */

struct jt_field;
struct jt_table;

/* where a load is: the file's name for messages, and the error slot */
struct jt_ctx {
	const char *name;
	struct err *e;
};

/* the value of f in the struct at base; NULL is JSON null */
typedef json_object *jt_write_fn(const void *base, const struct jt_field *f);
/* v (NULL: JSON null) into the struct at base; at is v's key path */
typedef int jt_load_fn(const struct jt_ctx *c, json_object *v, const char *at, void *base,
		       const struct jt_field *f);
/* a loaded array element (scratch) into the struct holding the array */
typedef int jt_put_fn(const struct jt_ctx *c, void *parent, void *elem, const char *at);

struct jt_field {
	const char *key;
	enum jt_kind kind;
	size_t off, size;		/* the member: offsetof and sizeof */
	unsigned flags;
	size_t cond;			/* JT_IF, JT_UNLESS: offsetof the bool; JT_IFSET: of the string */
	size_t count;			/* JT_ARR: offsetof the size_t count; callbacks: a second member */
	size_t cap;			/* JT_ARR with JT_INLINE: the array's length */
	const char *def;		/* JT_STR: read for absent, null and ""; JT_CONST: the text */
	long long idef;			/* JT_INT: read for absent */
	long long lo, hi;		/* JT_RANGE: the accepted range */
	const struct jt_table *sub;	/* JT_OBJ, JT_ARR; JT_CUSTOM: the table of its elements, if any */
	jt_write_fn *write;		/* JT_CUSTOM; any other kind: written by this instead */
	jt_load_fn *load;		/* JT_CUSTOM */
};

struct jt_table {
	size_t size;			/* sizeof the struct (array elements are loaded into one) */
	void (*init)(void *obj);	/* array elements: before loading; NULL: zeroed */
	jt_put_fn *put;			/* array elements: add the loaded one; NULL: JT_INLINE append */
	size_t n;
	const struct jt_field *f;
};

/* a field: key, kind, member m of struct T, then its flags and any other initialisers */
#define JT_F(k, kd, T, m, ...) .key = (k), .kind = (kd), .off = offsetof(T, m), .size = sizeof(((T *)0)->m), \
	.flags = __VA_ARGS__
#define JT_TABLE(T, fields) { sizeof(T), NULL, NULL, sizeof(fields) / sizeof((fields)[0]), fields }

/* the struct at base as a JSON object (fields in table order) */
json_object *jt_write(const struct jt_table *t, const void *base);
/* the JSON object o (at: its key path, "" for the document) into the struct at base */
int jt_load(const struct jt_ctx *c, const struct jt_table *t, json_object *o, const char *at, void *base);

/*
 * text as one strict JSON document (RFC 8259) at most depth deep: json-c with
 * JSON_TOKENER_STRICT and JSON_TOKENER_VALIDATE_UTF8, and refused too what
 * those let through: single quotes, NaN and Infinity, "1.", a control
 * character or a lone UTF-16 surrogate in a string, an object that repeats
 * a key (json-c would keep the last value), data after the document.
 * 0 and *out (the caller puts it); or -EINVAL, -EFBIG, -ENOMEM with why
 * (lower case: "an object repeats the key 'n'") and *off the byte it is at.
 */
int jt_parse(const char *text, size_t len, int depth, json_object **out, size_t *off, char *why,
	     size_t whylen);

/* for callbacks */
json_object *jt_num(double v);			/* null when not finite */
json_object *jt_str(const char *s);
void jt_path(char *buf, size_t len, const char *at, const char *key);	/* at.key, cut to len */
const char *jt_type(json_object *v);		/* "a string", "null", ... */
int jt_bad_type(const struct jt_ctx *c, const char *at, const char *want, json_object *v);
/* v as a string of at most len - 1 bytes into dst (null: "", if nullable) */
int jt_get_str(const struct jt_ctx *c, json_object *v, const char *at, bool nullable, char *dst, size_t len);
int jt_get_int(const struct jt_ctx *c, json_object *v, const char *at, int64_t min, int64_t max, int64_t *out);
/* a finite number (null: NAN, if nullable) */
int jt_get_num(const struct jt_ctx *c, json_object *v, const char *at, bool nullable, double *out);

#endif
