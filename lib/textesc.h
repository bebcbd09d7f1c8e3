/*
 * textesc: untrusted text (names and reasons from a results.json, a guest's
 * records, a history database) made safe for a terminal, a text file and
 * XML 1.0: C0 controls, DEL, C1 controls, U+FFFE/U+FFFF and bytes that are
 * not part of valid UTF-8 become the four characters \xNN; everything else,
 * UTF-8 included, passes. Never allocates except textesc_open's memory
 * stream; writes only where it is told.
 */
#ifndef THPEVAL_LIB_TEXTESC_H
#define THPEVAL_LIB_TEXTESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TEXTESC_KEEP_LINES 1u	/* \n and \t pass (a whole text); without it they are escaped too (a field) */

/* whether s (n bytes) would pass unchanged */
bool textesc_clean(const char *s, size_t n, unsigned flags);
/* src escaped into dst (NUL-terminated, cut before an escape that does not fit); returns its length */
size_t textesc(char *dst, size_t len, const char *src, unsigned flags);
/* src (n bytes) escaped to out; 0 or -EIO */
int textesc_write(FILE *out, const char *src, size_t n, unsigned flags);

/*
 * A renderer's output escaped as a whole: write to the FILE* textesc_open
 * returns (NULL: out of memory, nothing to write to), then textesc_close
 * writes it to out escaped (0 or -ENOMEM / -EIO).
 */
struct textesc_sink {
	FILE *mem, *out;
	char *buf;
	size_t len;
	unsigned flags;
};
FILE *textesc_open(struct textesc_sink *s, FILE *out, unsigned flags);
int textesc_close(struct textesc_sink *s);

#endif
