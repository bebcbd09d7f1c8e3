/*
 * parse: strict conversion of user and guest text to numbers. The whole
 * string must be consumed; no atoi, no silent truncation, no overflow.
 * Returns 0 or -EINVAL / -ERANGE; never prints. Also the lines of a text
 * that is not NUL-terminated, for the parsers of program output.
 */
#ifndef THPEVAL_LIB_PARSE_H
#define THPEVAL_LIB_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int parse_u64(const char *s, uint64_t *out);
int parse_i64(const char *s, int64_t *out);
/* unsigned integer within [min, max] */
int parse_u64_range(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* finite double (no nan/inf, no hex floats) */
int parse_double(const char *s, double *out);
/* bytes with optional binary suffix: K, M, G, T (also KiB, MiB, GiB, TiB, k) */
int parse_size(const char *s, uint64_t *bytes);
/* seconds, or numbers with units h, m, s, ms in that order ("4m30s"); result in milliseconds */
int parse_duration_ms(const char *s, uint64_t *ms);
/* a comma-separated list with no empty item (no leading, trailing or double comma) */
int parse_list_check(const char *s);
/*
 * The first item of a comma-separated list that appears again (exact text;
 * empty items are parse_list_check()'s),
 * copied to item (cut to len); -EEXIST then, else 0.
 */
int parse_list_dup(const char *s, char *item, size_t len);
/*
 * The next line of text[0..n) from *pos: *s and *len (without its '\n'; the
 * last line may lack one), *pos moved past it. false at the end.
 */
bool parse_next_line(const char *text, size_t n, size_t *pos, const char **s, size_t *len);

#endif
