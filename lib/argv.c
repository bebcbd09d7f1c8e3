#include "lib/argv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* the character at s[i] for messages: itself when printable ASCII, else its code */
static const char *show_char(unsigned char c, char buf[8])
{
	if (c > 0x20 && c < 0x7f)
		snprintf(buf, 8, "'%c'", c);
	else
		snprintf(buf, 8, "0x%02x", c);
	return buf;
}

int argv_text_check(const char *what, const char *s, size_t max, struct err *e)
{
	size_t n = strlen(s), i;
	char c[8];

	if (n == 0)
		return err_set(e, -EINVAL, "empty %s", what);
	if (n > max)
		return err_set(e, -E2BIG, "%s is %zu characters long: at most %zu", what, n, max);
	for (i = 0; i < n; i++)
		if (is_control((unsigned char)s[i]))
			return err_set(e, -EINVAL, "%s has a control character (%s) at character %zu: "
				       "give printable text", what, show_char((unsigned char)s[i], c), i + 1);
	return 0;
}

int argv_split(const char *what, const char *s, struct argv_list *out, struct err *e)
{
	size_t i, pos = 0, open_at = 0;
	enum { OUT, WORD, SQ, DQ } st = OUT;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = argv_text_check(what, s, ARGV_MAX_CHARS, e)))
		return r;
	for (i = 0; s[i]; i++) {
		char ch = s[i];

		if (st == OUT) {
			if (ch == ' ')
				continue;
			if (out->n == ARGV_MAX_ARGS)
				return err_set(e, -E2BIG, "%s has more than %d words", what, ARGV_MAX_ARGS);
			out->v[out->n++] = out->buf + pos;
			st = WORD;
		}
		switch (st) {
		case WORD:
			if (ch == ' ') {
				out->buf[pos++] = '\0';
				st = OUT;
			} else if (ch == '\'') {
				st = SQ;
				open_at = i + 1;
			} else if (ch == '"') {
				st = DQ;
				open_at = i + 1;
			} else if (ch == '\\') {
				if (!s[i + 1])
					return err_set(e, -EINVAL, "%s ends with a backslash: escape it as \\\\ "
						       "or quote it", what);
				out->buf[pos++] = s[++i];
			} else {
				out->buf[pos++] = ch;
			}
			break;
		case SQ:
			if (ch == '\'')
				st = WORD;
			else
				out->buf[pos++] = ch;
			break;
		case DQ:
			if (ch == '"')
				st = WORD;
			else if (ch == '\\' && (s[i + 1] == '"' || s[i + 1] == '\\'))
				out->buf[pos++] = s[++i];
			else
				out->buf[pos++] = ch;
			break;
		case OUT:
			break;
		}
	}
	if (st == SQ || st == DQ)
		return err_set(e, -EINVAL, "%s has an unterminated %s quote (opened at character %zu)", what,
			       st == SQ ? "single" : "double", open_at);
	out->buf[pos] = '\0';
	if (out->n == 0)
		return err_set(e, -EINVAL, "%s is blank: give a command such as 'stress-ng --vm 1 -t 10s'",
			       what);
	if (!out->v[0][0])
		return err_set(e, -EINVAL, "%s starts with an empty word: the first word is the program",
			       what);
	out->v[out->n] = NULL;
	return 0;
}

/* ---- the plan-word encoding ------------------------------------------------- */

static const char hexd[] = "0123456789ABCDEF";

static bool plain(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
	       c == '.' || c == '/' || c == '-';
}

static size_t word_len(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += plain((unsigned char)*s) ? 1 : 3;
	return n;
}

/* s encoded at buf + *pos (len the whole buffer, the NUL included); false if it does not fit */
static bool put_word(const char *s, char *buf, size_t len, size_t *pos)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (*pos + (plain(c) ? 1 : 3) >= len)
			return false;
		if (plain(c)) {
			buf[(*pos)++] = (char)c;
		} else {
			buf[(*pos)++] = ':';
			buf[(*pos)++] = hexd[c >> 4];
			buf[(*pos)++] = hexd[c & 15];
		}
	}
	return true;
}

size_t argv_encoded_len(const struct argv_list *a)
{
	size_t i, n = 0;

	for (i = 0; i < a->n; i++)
		n += word_len(a->v[i]) + (i ? 1 : 0);
	return n;
}

int argv_encode(const struct argv_list *a, char *buf, size_t len)
{
	size_t i, pos = 0;

	if (!len)
		return -E2BIG;
	for (i = 0; i < a->n; i++) {
		if (i) {
			if (pos + 1 >= len)
				return -E2BIG;
			buf[pos++] = '+';
		}
		if (!put_word(a->v[i], buf, len, &pos))
			return -E2BIG;
	}
	buf[pos] = '\0';
	return (int)pos;
}

int argv_encode_word(const char *s, char *buf, size_t len)
{
	size_t pos = 0;

	if (!len || !put_word(s, buf, len, &pos))
		return -E2BIG;
	buf[pos] = '\0';
	return (int)pos;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Decode enc into buf (len bytes), '+' ending a word when words is true (each
 * word start recorded in starts, at most maxw), else '+' is refused.
 */
static int decode(const char *what, const char *enc, char *buf, size_t len, bool words, char **starts,
		  size_t maxw, size_t *nw, struct err *e)
{
	size_t i, pos = 0, n = 0;
	char c[8];

	if (!enc[0])
		return err_set(e, -EINVAL, "empty %s", what);
	if (words)
		starts[n++] = buf;
	for (i = 0; enc[i]; i++) {
		unsigned char ch = (unsigned char)enc[i];
		int hi, lo;

		if (pos + 1 >= len)
			return err_set(e, -E2BIG, "%s decodes to more than %zu bytes", what, len - 1);
		if (ch == '+' && words) {
			if (n == maxw)
				return err_set(e, -E2BIG, "%s has more than %zu words", what, maxw);
			buf[pos++] = '\0';
			starts[n++] = buf + pos;
		} else if (ch == ':') {
			hi = hexval(enc[i + 1]);
			lo = hi < 0 ? -1 : hexval(enc[i + 2]);
			if (hi < 0 || lo < 0)
				return err_set(e, -EINVAL, "%s: ':' at character %zu is not followed by two "
					       "upper-case hex digits", what, i + 1);
			ch = (unsigned char)(hi << 4 | lo);
			if (is_control(ch))
				return err_set(e, -EINVAL, "%s: encoded control character 0x%02x at character "
					       "%zu", what, ch, i + 1);
			buf[pos++] = (char)ch;
			i += 2;
		} else if (plain(ch)) {
			buf[pos++] = (char)ch;
		} else {
			return err_set(e, -EINVAL, "%s: character %s at %zu is not of the encoding "
				       "([A-Za-z0-9_./-], ':XX', '+')", what, show_char(ch, c), i + 1);
		}
	}
	buf[pos] = '\0';
	if (nw)
		*nw = n;
	return 0;
}

int argv_decode(const char *what, const char *enc, struct argv_list *out, struct err *e)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = decode(what, enc, out->buf, sizeof(out->buf), true, out->v, ARGV_MAX_ARGS, &out->n, e);
	if (r) {
		out->n = 0;
		out->v[0] = NULL;
		return r;
	}
	if (!out->v[0][0]) {
		out->n = 0;
		out->v[0] = NULL;
		return err_set(e, -EINVAL, "%s starts with an empty word: the first word is the program", what);
	}
	out->v[out->n] = NULL;
	return 0;
}

int argv_decode_word(const char *what, const char *enc, char *buf, size_t len, struct err *e)
{
	if (!len)
		return err_set(e, -E2BIG, "no room to decode %s", what);
	buf[0] = '\0';
	return decode(what, enc, buf, len, false, NULL, 0, NULL, e);
}

/* ---- for people ------------------------------------------------------------------ */

void argv_join(const struct argv_list *a, char *buf, size_t len)
{
	size_t i, pos = 0;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < a->n && pos + 1 < len; i++) {
		const char *s = a->v[i];
		bool quote = !*s;
		const char *p;

		for (p = s; *p && !quote; p++)
			quote = !plain((unsigned char)*p) && !strchr("=:,+@%", *p);
		if (i)
			buf[pos++] = ' ';
		if (quote && pos + 1 < len)
			buf[pos++] = '\'';
		for (p = s; *p && pos + 1 < len; p++) {
			if (*p == '\'') {
				/* 'it'\''s' */
				const char *esc = "'\\''";

				for (; *esc && pos + 1 < len; esc++)
					buf[pos++] = *esc;
			} else {
				buf[pos++] = *p;
			}
		}
		if (quote && pos + 1 < len)
			buf[pos++] = '\'';
	}
	buf[pos < len ? pos : len - 1] = '\0';
}
