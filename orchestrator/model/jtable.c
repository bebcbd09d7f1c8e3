#include "orchestrator/model/jtable.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ------------------------------------------------------------------ */

json_object *jt_num(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

json_object *jt_str(const char *s)
{
	return json_object_new_string(s ? s : "");
}

void jt_path(char *buf, size_t len, const char *at, const char *key)
{
	if (snprintf(buf, len, "%s%s%s", at, at[0] ? "." : "", key) >= (int)len)
		buf[len - 1] = '\0';
}

const char *jt_type(json_object *v)
{
	switch (json_object_get_type(v)) {
	case json_type_null: return "null";
	case json_type_boolean: return "a boolean";
	case json_type_double: return "a fractional number";
	case json_type_int: return "an integer";
	case json_type_object: return "an object";
	case json_type_array: return "an array";
	case json_type_string: return "a string";
	}
	return "something else";
}

int jt_bad_type(const struct jt_ctx *c, const char *at, const char *want, json_object *v)
{
	return err_set(c->e, -EINVAL, "'%s': '%s' must be %s, not %s: the file was edited or damaged", c->name,
		       at, want, jt_type(v));
}

int jt_get_str(const struct jt_ctx *c, json_object *v, const char *at, bool nullable, char *dst, size_t len)
{
	const char *s;
	size_t n;

	if (!v && nullable) {
		dst[0] = '\0';
		return 0;
	}
	if (!json_object_is_type(v, json_type_string))
		return jt_bad_type(c, at, nullable ? "a string or null" : "a string", v);
	s = json_object_get_string(v);
	n = (size_t)json_object_get_string_len(v);
	if (n >= len || strlen(s) != n)
		return err_set(c->e, -EINVAL, "'%s': '%s' is longer than %zu bytes or holds a NUL", c->name, at,
			       len - 1);
	memcpy(dst, s, n + 1);
	return 0;
}

int jt_get_int(const struct jt_ctx *c, json_object *v, const char *at, int64_t min, int64_t max, int64_t *out)
{
	int64_t x;

	if (!json_object_is_type(v, json_type_int))
		return jt_bad_type(c, at, "an integer", v);
	errno = 0;
	x = json_object_get_int64(v);
	if (errno == ERANGE || x < min || x > max)
		return err_set(c->e, -ERANGE, "'%s': '%s' is out of range (%lld to %lld)", c->name, at,
			       (long long)min, (long long)max);
	*out = x;
	return 0;
}

int jt_get_num(const struct jt_ctx *c, json_object *v, const char *at, bool nullable, double *out)
{
	if (!v && nullable) {
		*out = NAN;
		return 0;
	}
	if (!json_object_is_type(v, json_type_double) && !json_object_is_type(v, json_type_int))
		return jt_bad_type(c, at, nullable ? "a number or null" : "a number", v);
	*out = json_object_get_double(v);
	if (!isfinite(*out))
		return err_set(c->e, -ERANGE, "'%s': '%s' is not a finite number", c->name, at);
	return 0;
}

/* ---- writing ------------------------------------------------------------------ */

/* an integer member: unsigned (4 bytes) or a 64-bit one (uint64_t, size_t, time_t) */
static int64_t int_at(const char *p, size_t size)
{
	unsigned u;
	int64_t x;

	if (size == sizeof(u)) {
		memcpy(&u, p, sizeof(u));
		return u;
	}
	memcpy(&x, p, sizeof(x));
	return x;
}

static json_object *write_arr(const struct jt_field *f, const char *base)
{
	json_object *a = json_object_new_array();
	size_t n = *(const size_t *)(base + f->count), i;
	const char *elems = f->flags & JT_INLINE ? base + f->off : *(char *const *)(base + f->off);

	for (i = 0; i < n; i++)
		json_object_array_add(a, jt_write(f->sub, elems + i * f->sub->size));
	return a;
}

static json_object *write_value(const struct jt_field *f, const char *base)
{
	const char *p = base + f->off;
	int64_t x;
	double d;

	if (((f->flags & JT_IF) && !*(const bool *)(base + f->cond)) ||
	    ((f->flags & JT_UNLESS) && *(const bool *)(base + f->cond)))
		return NULL;
	if (f->write)
		return f->write(base, f);
	switch (f->kind) {
	case JT_STR:
		if (!*p && (f->flags & JT_WNULL))
			return NULL;
		return jt_str(!*p && (f->flags & JT_WDEF) ? f->def : p);
	case JT_INT:
		x = int_at(p, f->size);
		if (!x && (f->flags & JT_WNULL))
			return NULL;
		return json_object_new_int64(!x && (f->flags & JT_WDEF) ? f->idef : x);
	case JT_DOUBLE:
		d = *(const double *)p;
		return (f->flags & JT_POS) && !(d > 0) ? NULL : jt_num(d);
	case JT_BOOL:
		return json_object_new_boolean(*(const bool *)p);
	case JT_CONST:
		return jt_str(f->def);
	case JT_OBJ:
		return jt_write(f->sub, p);
	case JT_ARR:
		return write_arr(f, base);
	case JT_CUSTOM:
		break;
	}
	return NULL;
}

json_object *jt_write(const struct jt_table *t, const void *base)
{
	json_object *o = json_object_new_object();
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct jt_field *f = &t->f[i];

		if (((f->flags & JT_IFSET) && !*((const char *)base + f->cond)) ||
		    ((f->flags & JT_KEYIF) && !*(const bool *)((const char *)base + f->cond)))
			continue;
		json_object_object_add(o, f->key, write_value(f, base));
	}
	return o;
}

/* ---- loading ------------------------------------------------------------------ */

static void put_int(char *p, size_t size, int64_t x)
{
	unsigned u = (unsigned)x;

	if (size == sizeof(u))
		memcpy(p, &u, sizeof(u));
	else
		memcpy(p, &x, sizeof(x));
}

/* absent: the field's default; null (where the flags allow it): "", 0 or NAN, or as it is (JT_NULLSKIP) */
static void set_default(const struct jt_field *f, char *p, bool null)
{
	if (null && (f->flags & JT_NULLSKIP))
		return;
	switch (f->kind) {
	case JT_STR:
		snprintf(p, f->size, "%s", f->def ? f->def : "");
		break;
	case JT_INT:
		put_int(p, f->size, null ? 0 : f->idef);
		break;
	case JT_DOUBLE:
		if (null)
			*(double *)p = f->flags & JT_POS ? 0 : NAN;
		break;
	default:
		break;
	}
}

static int load_arr(const struct jt_ctx *c, const struct jt_field *f, json_object *a, const char *at, char *base)
{
	const struct jt_table *t = f->sub;
	size_t *count = (size_t *)(base + f->count);
	size_t i, len = json_object_array_length(a);
	char here[JT_PATH_MAX];
	int rc = 0;

	if ((f->flags & JT_INLINE) && len > f->cap)
		return err_set(c->e, -E2BIG, "'%s': '%s' has more than %zu entries", c->name, at, f->cap);
	for (i = 0; i < len && !rc; i++) {
		json_object *v = json_object_array_get_idx(a, i);
		void *elem;

		if (snprintf(here, sizeof(here), "%s[%zu]", at, i) >= (int)sizeof(here))
			here[sizeof(here) - 1] = '\0';
		if (!json_object_is_type(v, json_type_object))
			return err_set(c->e, -EINVAL, "'%s': '%s' must be an object, not %s", c->name, here,
				       jt_type(v));
		if (f->flags & JT_INLINE) {
			elem = base + f->off + *count * t->size;
			memset(elem, 0, t->size);
			if (t->init)
				t->init(elem);
			rc = jt_load(c, t, v, here, elem);
			if (!rc)
				(*count)++;
			continue;
		}
		elem = calloc(1, t->size);
		if (!elem)
			return err_set(c->e, -ENOMEM, "out of memory reading '%s'", c->name);
		if (t->init)
			t->init(elem);
		rc = jt_load(c, t, v, here, elem);
		if (!rc)
			rc = t->put(c, base, elem, here);
		free(elem);
	}
	return rc;
}

static int load_value(const struct jt_ctx *c, const struct jt_field *f, json_object *v, const char *at,
		      char *base)
{
	bool nullok = f->flags & JT_NULL;
	union {
		int64_t i;
		double d;
		bool b;
	} tmp;
	/* a derived scalar is read into tmp, checked and dropped */
	char *p = (f->flags & JT_DERIVED) && f->kind <= JT_BOOL ? (char *)&tmp : base + f->off;
	char *s = NULL;
	int64_t x;
	int rc;

	switch (f->kind) {
	case JT_STR:
	case JT_CONST:
		if (f->kind == JT_CONST || (f->flags & JT_DERIVED)) {
			s = malloc(f->size ? f->size : 4096);
			if (!s)
				return err_set(c->e, -ENOMEM, "out of memory reading '%s'", c->name);
			p = s;
		}
		rc = jt_get_str(c, v, at, nullok || f->kind == JT_CONST, p, f->size ? f->size : 4096);
		if (!rc && !*p && f->def && f->kind == JT_STR)
			snprintf(p, f->size, "%s", f->def);
		free(s);
		return rc;
	case JT_INT:
		if (!json_object_is_type(v, json_type_int))
			return jt_bad_type(c, at, nullok ? "an integer or null" : "an integer", v);
		if (jt_get_int(c, v, at, f->flags & JT_RANGE ? f->lo : 0,
			       f->flags & JT_RANGE ? f->hi : f->size == sizeof(unsigned) ? UINT32_MAX : INT64_MAX, &x))
			return -EINVAL;
		put_int(p, f->size, x);
		return 0;
	case JT_DOUBLE:
		if (jt_get_num(c, v, at, true, (double *)p))
			return -EINVAL;
		if ((f->flags & JT_RANGE) && f->hi == LLONG_MAX && *(double *)p < (double)f->lo)
			return err_set(c->e, -ERANGE, "'%s': '%s' is %.6g, out of range (%lld and up)", c->name, at,
				       *(double *)p, f->lo);
		if ((f->flags & JT_RANGE) && (*(double *)p < (double)f->lo || *(double *)p > (double)f->hi))
			return err_set(c->e, -ERANGE, "'%s': '%s' is %.6g, out of range (%lld to %lld)", c->name, at,
				       *(double *)p, f->lo, f->hi);
		if ((f->flags & JT_POS) && !(*(double *)p >= 0))
			*(double *)p = 0;
		return 0;
	case JT_BOOL:
		if (!json_object_is_type(v, json_type_boolean))
			return jt_bad_type(c, at, "true or false", v);
		*(bool *)p = json_object_get_boolean(v);
		return 0;
	case JT_OBJ:
		if (!json_object_is_type(v, json_type_object))
			return jt_bad_type(c, at, nullok ? "an object or null" : "an object", v);
		return jt_load(c, f->sub, v, at, p);
	case JT_ARR:
		if (!json_object_is_type(v, json_type_array))
			return jt_bad_type(c, at, "an array", v);
		return load_arr(c, f, v, at, base);
	case JT_CUSTOM:
		return f->load(c, v, at, base, f);
	}
	return err_set(c->e, -EINVAL, "internal: field '%s' of unknown kind", f->key);
}

int jt_load(const struct jt_ctx *c, const struct jt_table *t, json_object *o, const char *at, void *obj)
{
	char *base = obj, k[JT_PATH_MAX];
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct jt_field *f = &t->f[i];
		json_object *v;

		jt_path(k, sizeof(k), at, f->key);
		if (!json_object_object_get_ex(o, f->key, &v)) {
			if (!(f->flags & JT_OPT))
				return err_set(c->e, -EINVAL, "'%s': missing key '%s': the file was edited or damaged",
					       c->name, k);
			if (!(f->flags & JT_DERIVED))
				set_default(f, base + f->off, false);
			continue;
		}
		if (!v && (f->kind == JT_DOUBLE || (f->flags & (JT_NULL | JT_NULLSKIP)))) {
			if (!(f->flags & JT_DERIVED) && f->kind != JT_CUSTOM)
				set_default(f, base + f->off, true);
			continue;
		}
		if (load_value(c, f, v, k, base))
			return c->e->code ? c->e->code : -EINVAL;
		if ((f->flags & (JT_IF | JT_KEYIF)) && !(f->flags & JT_DERIVED))
			*(bool *)(base + f->cond) = true;
	}
	return 0;
}

/* ---- strict parsing ----------------------------------------------------------- */

/* the first byte at or after i that is not JSON white space, or len */
static size_t skip_ws(const char *text, size_t i, size_t len)
{
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
		i++;
	return i;
}

/* four hex digits at s (at least 4 bytes readable), or -1 */
static long hex4(const char *s)
{
	long v = 0;
	int i;

	for (i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

/*
 * What json-c's strict mode still lets through, refused before it parses:
 * single-quoted names, NaN and Infinity, raw control characters in strings,
 * a lone UTF-16 surrogate escape, "1." -- outside strings only JSON's
 * punctuation, white space, numbers and true/false/null. The offset of the
 * first such byte (and why), or len.
 */
static size_t lex_check(const char *text, size_t len, const char **why)
{
	size_t i = 0, j;

	while (i < len) {
		unsigned char c = (unsigned char)text[i];

		if (c == '"') {
			for (j = i + 1; j < len && text[j] != '"'; j++) {
				long u, lo;

				if ((unsigned char)text[j] < 0x20) {
					*why = "a control character in a string";
					return j;
				}
				if (text[j] != '\\')
					continue;
				if (j + 1 < len && text[j + 1] == 'u' && j + 5 < len && (u = hex4(text + j + 2)) >= 0) {
					lo = u >= 0xd800 && u <= 0xdbff && j + 11 < len && text[j + 6] == '\\' &&
					     text[j + 7] == 'u' ? hex4(text + j + 8) : -1;
					if ((u >= 0xd800 && u <= 0xdbff && !(lo >= 0xdc00 && lo <= 0xdfff)) ||
					    (u >= 0xdc00 && u <= 0xdfff)) {
						*why = "a lone UTF-16 surrogate in a string";
						return j;
					}
					j += lo >= 0 ? 11 : 5;
					continue;
				}
				j++;	/* json-c checks the other escapes */
			}
			i = j + 1;
		} else if (c && strchr("{}[]:, \t\r\n", c)) {
			i++;
		} else if (c == '-' || (c >= '0' && c <= '9')) {
			for (j = i; j < len && text[j] && strchr("0123456789.eE+-", text[j]); j++)
				if (text[j] == '.' && !(j + 1 < len && text[j + 1] >= '0' && text[j + 1] <= '9')) {
					*why = "a number without digits after its '.'";
					return j;
				}
			i = j;
		} else if (c >= 'a' && c <= 'z') {
			for (j = i; j < len && text[j] >= 'a' && text[j] <= 'z'; j++)
				;
			if (!((j - i == 4 && (!memcmp(text + i, "true", 4) || !memcmp(text + i, "null", 4))) ||
			      (j - i == 5 && !memcmp(text + i, "false", 5)))) {
				*why = "a word that is not true, false or null";
				return i;
			}
			i = j;
		} else {
			*why = c == '\'' ? "a single quote" : "an unexpected character";
			return i;
		}
	}
	return len;
}

/* the string at text[*i] == '"' (valid JSON, checked) decoded into buf (as long as the raw string) */
static void str_decode(const char *text, size_t *i, char *buf)
{
	size_t j = *i + 1, n = 0;

	while (text[j] != '"') {
		long u;

		if (text[j] != '\\') {
			buf[n++] = text[j++];
			continue;
		}
		switch (text[j + 1]) {
		case 'b': buf[n++] = '\b'; break;
		case 'f': buf[n++] = '\f'; break;
		case 'n': buf[n++] = '\n'; break;
		case 'r': buf[n++] = '\r'; break;
		case 't': buf[n++] = '\t'; break;
		case 'u':
			u = hex4(text + j + 2);
			if (u >= 0xd800 && u <= 0xdbff) {	/* a pair (lex_check): 12 bytes, 4 out */
				u = 0x10000 + ((u - 0xd800) << 10) + (hex4(text + j + 8) - 0xdc00);
				j += 6;
			}
			if (u < 0x80) {
				buf[n++] = (char)u;
			} else if (u < 0x800) {
				buf[n++] = (char)(0xc0 | u >> 6);
				buf[n++] = (char)(0x80 | (u & 0x3f));
			} else if (u < 0x10000) {
				buf[n++] = (char)(0xe0 | u >> 12);
				buf[n++] = (char)(0x80 | (u >> 6 & 0x3f));
				buf[n++] = (char)(0x80 | (u & 0x3f));
			} else {
				buf[n++] = (char)(0xf0 | u >> 18);
				buf[n++] = (char)(0x80 | (u >> 12 & 0x3f));
				buf[n++] = (char)(0x80 | (u >> 6 & 0x3f));
				buf[n++] = (char)(0x80 | (u & 0x3f));
			}
			j += 4;
			break;
		default: buf[n++] = text[j + 1]; break;	/* " \ / */
		}
		j += 2;
	}
	buf[n] = '\0';
	*i = j + 1;
}

/* the index after the string at text[i] == '"' (valid JSON, checked) */
static size_t str_end(const char *text, size_t i)
{
	for (i++; text[i] != '"'; i++)
		if (text[i] == '\\')
			i++;
	return i + 1;
}

struct dup_scan {
	const char *text;
	size_t len;
	char *key;		/* the repeated key, decoded (malloc'd) */
	size_t at;		/* where its second occurrence is */
};

/* one key of an object: decoded as json-c keeps it (up to a NUL), and where it is */
struct key_at {
	char *k;
	size_t at;
};

static int key_cmp(const void *a, const void *b)
{
	const struct key_at *x = a, *y = b;
	int c = strcmp(x->k, y->k);

	return c ? c : (x->at > y->at) - (x->at < y->at);
}

static void keys_free(struct key_at *k, size_t n)
{
	while (n--)
		free(k[n].k);
	free(k);
}

/*
 * A repeat among an object's keys: sorted by key then place, the later of two
 * equal neighbours; of several, the first in the text. 1 (s->key, s->at), 0.
 */
static int keys_repeat(struct dup_scan *s, struct key_at *k, size_t n)
{
	size_t m, best = SIZE_MAX, bi = 0;

	if (n < 2)	/* an empty object has no keys (and no array) */
		return 0;
	qsort(k, n, sizeof(*k), key_cmp);
	for (m = 1; m < n; m++)
		if (!strcmp(k[m - 1].k, k[m].k) && k[m].at < best) {
			best = k[m].at;
			bi = m;
		}
	if (best == SIZE_MAX)
		return 0;
	s->key = k[bi].k;
	s->at = best;
	k[bi].k = NULL;
	return 1;
}

/*
 * The value at text[*i] (valid JSON, as json-c parsed it) walked for an
 * object that repeats a key: json-c keeps one of them silently, so the text
 * itself is read, not the tree. Each object's keys are sorted once; as deep
 * as json-c let the document be. 1 (s->key, s->at: the repeat), -ENOMEM or 0.
 */
static int dup_walk(struct dup_scan *s, size_t *i)
{
	const char *t = s->text;
	size_t j = skip_ws(t, *i, s->len);
	int r;

	if (t[j] == '{') {
		struct key_at *keys = NULL;
		size_t n = 0, cap = 0;

		j = skip_ws(t, j + 1, s->len);
		while (t[j] != '}') {
			size_t kat = j;
			char *k;

			if (n == cap) {
				struct key_at *g = realloc(keys, (cap = cap ? 2 * cap : 8) * sizeof(*keys));

				if (!g) {
					keys_free(keys, n);
					return -ENOMEM;
				}
				keys = g;
			}
			if (!(k = malloc(str_end(t, j) - j))) {
				keys_free(keys, n);
				return -ENOMEM;
			}
			str_decode(t, &j, k);
			keys[n].k = k;
			keys[n++].at = kat;
			j = skip_ws(t, j, s->len) + 1;	/* ':' */
			if ((r = dup_walk(s, &j))) {
				keys_free(keys, n);
				return r;
			}
			j = skip_ws(t, j, s->len);
			if (t[j] == ',')
				j = skip_ws(t, j + 1, s->len);
		}
		r = keys_repeat(s, keys, n);
		keys_free(keys, n);
		if (r)
			return r;
		*i = j + 1;
		return 0;
	}
	if (t[j] == '[') {
		j = skip_ws(t, j + 1, s->len);
		while (t[j] != ']') {
			if ((r = dup_walk(s, &j)))
				return r;
			j = skip_ws(t, j, s->len);
			if (t[j] == ',')
				j = skip_ws(t, j + 1, s->len);
		}
		*i = j + 1;
		return 0;
	}
	if (t[j] == '"') {
		*i = str_end(t, j);
		return 0;
	}
	while (j < s->len && !strchr(",]} \t\r\n", t[j]))	/* number, true, false, null */
		j++;
	*i = j;
	return 0;
}

int jt_parse(const char *text, size_t len, int depth, json_object **out, size_t *off, char *why,
	     size_t whylen)
{
	struct json_tokener *tok;
	enum json_tokener_error jerr;
	struct dup_scan s = { text, len, NULL, 0 };
	json_object *root;
	const char *lex = NULL;
	size_t end, i = 0;
	int r;

	*out = NULL;
	*off = 0;
	if (len > INT32_MAX) {
		snprintf(why, whylen, "more than %d bytes", INT32_MAX);
		return -EFBIG;
	}
	if ((end = lex_check(text, len, &lex)) < len) {
		*off = end;
		snprintf(why, whylen, "%s", lex);
		return -EINVAL;
	}
	tok = json_tokener_new_ex(depth);
	if (!tok) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	/* trailing characters: refused below, with a message of its own */
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_ALLOW_TRAILING_CHARS |
				    JSON_TOKENER_VALIDATE_UTF8);
	root = json_tokener_parse_ex(tok, text, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!root && jerr == json_tokener_continue)
		jerr = json_tokener_error_parse_eof;
	if (jerr != json_tokener_success) {
		json_object_put(root);
		*off = end;
		snprintf(why, whylen, "%s", json_tokener_error_desc(jerr));
		return -EINVAL;
	}
	if (skip_ws(text, end, len) != len) {
		json_object_put(root);
		*off = skip_ws(text, end, len);
		snprintf(why, whylen, "data after the end of the document");
		return -EINVAL;
	}
	r = dup_walk(&s, &i);
	if (r) {
		json_object_put(root);
		*off = s.at;
		if (r < 0) {
			snprintf(why, whylen, "out of memory");
		} else {
			for (i = 0; s.key[i]; i++)	/* quoted in a message: no control characters */
				if ((unsigned char)s.key[i] < 0x20 || s.key[i] == 0x7f)
					s.key[i] = '?';
			snprintf(why, whylen, "an object repeats the key '%.80s'", s.key);
		}
		free(s.key);
		return r < 0 ? r : -EINVAL;
	}
	free(s.key);
	*out = root;
	return 0;
}
