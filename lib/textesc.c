#include "lib/textesc.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * The length of the character at s (at most n bytes) if it passes, 0 if its
 * first byte must be escaped. Valid UTF-8 only: no overlong forms, no
 * surrogates, nothing past U+10FFFF.
 */
static size_t char_ok(const unsigned char *s, size_t n, unsigned flags)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80) {
		if (s[0] == 0x7f)
			return 0;
		if (s[0] < 0x20)
			return (flags & TEXTESC_KEEP_LINES) && (s[0] == '\n' || s[0] == '\t');
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		len = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		len = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x80 && cp <= 0x9f) || cp == 0xfffe || cp == 0xffff)
		return 0;
	return len;
}

bool textesc_clean(const char *s, size_t n, unsigned flags)
{
	size_t i = 0, k;

	while (i < n) {
		if (!(k = char_ok((const unsigned char *)s + i, n - i, flags)))
			return false;
		i += k;
	}
	return true;
}

size_t textesc(char *dst, size_t len, const char *src, unsigned flags)
{
	size_t n = strlen(src), i = 0, o = 0, k;

	if (!len)
		return 0;
	while (i < n) {
		k = char_ok((const unsigned char *)src + i, n - i, flags);
		if (k) {
			if (o + k >= len)
				break;
			memcpy(dst + o, src + i, k);
			o += k;
			i += k;
		} else {
			if (o + 4 >= len)
				break;
			snprintf(dst + o, 5, "\\x%02x", (unsigned char)src[i]);
			o += 4;
			i++;
		}
	}
	dst[o] = '\0';
	return o;
}

int textesc_write(FILE *out, const char *src, size_t n, unsigned flags)
{
	size_t i = 0, k;

	while (i < n) {
		/* the longest run that passes, in one write */
		for (k = i; k < n;) {
			size_t c = char_ok((const unsigned char *)src + k, n - k, flags);

			if (!c)
				break;
			k += c;
		}
		if (k > i && fwrite(src + i, 1, k - i, out) != k - i)
			return -EIO;
		i = k;
		if (i < n) {
			if (fprintf(out, "\\x%02x", (unsigned char)src[i]) < 0)
				return -EIO;
			i++;
		}
	}
	return ferror(out) ? -EIO : 0;
}

FILE *textesc_open(struct textesc_sink *s, FILE *out, unsigned flags)
{
	memset(s, 0, sizeof(*s));
	s->out = out;
	s->flags = flags;
	s->mem = open_memstream(&s->buf, &s->len);
	return s->mem;
}

int textesc_close(struct textesc_sink *s)
{
	int rc = 0;

	if (!s->mem)
		return -ENOMEM;
	if (fclose(s->mem))
		rc = -ENOMEM;
	s->mem = NULL;
	if (!rc)
		rc = textesc_write(s->out, s->buf, s->len, s->flags);
	free(s->buf);
	s->buf = NULL;
	return rc;
}
