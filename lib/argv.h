/*
 * argv: a user's command as an argument vector. argv_split() parses the
 * --exec string with a small strict quote-aware grammar (never a shell);
 * argv_encode() and argv_decode() carry the vector through channels of plain
 * words (the guest's kernel command line). Both sides compile it (libc
 * only); never prints, never exits.
 */
#ifndef THPEVAL_LIB_ARGV_H
#define THPEVAL_LIB_ARGV_H

#include <stddef.h>

#include "lib/err.h"

#define ARGV_MAX_ARGS 64	/* words of one command */
#define ARGV_MAX_CHARS 4096	/* characters of the --exec string */
#define ARGV_PATTERN_MAX 512	/* characters of an --exec-metric pattern */
/*
 * The exec workload kills the command at its own timeout (--exec-timeout);
 * the guest runner kills the workload this much later, and the host adds it
 * to a guest's limit for every exec run, so the workload's own fail record
 * ("timed out after N s") is what a hang leaves.
 */
#define ARGV_EXEC_MARGIN_MS 30000

struct argv_list {
	size_t n;
	char *v[ARGV_MAX_ARGS + 1];	/* v[0..n), then NULL: pointers into buf */
	char buf[ARGV_MAX_CHARS + ARGV_MAX_ARGS + 1];
};

/*
 * Split s into words, as a POSIX shell would split a simple command of
 * literal words:
 *   - words are separated by spaces;
 *   - '...' is literal up to the next single quote;
 *   - "..." is literal except \" and \\ (a backslash before anything else
 *     stays a backslash);
 *   - outside quotes a backslash makes the next character literal;
 *   - quoted and unquoted parts next to each other make one word, and ''
 *     or "" alone is an empty word.
 * $, `, *, ?, ;, |, &, <, > and the rest are bytes of the words like any
 * other. Refused, with one line in e naming what (e.g. "--exec"): an empty
 * or blank string, more than ARGV_MAX_CHARS characters, a control character
 * (tab and newline included), an unterminated quote, a trailing backslash,
 * more than ARGV_MAX_ARGS words, an empty first word. 0 or -EINVAL/-E2BIG.
 */
int argv_split(const char *what, const char *s, struct argv_list *out, struct err *e);

/*
 * Text checks shared by the command's words and its metric pattern: not
 * empty, at most max characters, no control character. 0 or -EINVAL/-E2BIG
 * with one line naming what.
 */
int argv_text_check(const char *what, const char *s, size_t max, struct err *e);

/*
 * The plan-word encoding: bytes of [A-Za-z0-9_./-] as they are, every other
 * byte as ':' and two upper-case hex digits, the words joined by '+'. The
 * result holds only [A-Za-z0-9_./:+-]: no space, quote, comma or '=' that a
 * kernel command line or a --name=value argument would split on. Returns the
 * length written (NUL excluded), or -E2BIG when it does not fit in len.
 */
int argv_encode(const struct argv_list *a, char *buf, size_t len);
/* One word (a pattern) in the same encoding; the length, or -E2BIG. */
int argv_encode_word(const char *s, char *buf, size_t len);
/* Bytes argv_encode() would write for a (NUL excluded). */
size_t argv_encoded_len(const struct argv_list *a);

/*
 * Decode an argv_encode() string strictly: only its characters, ':' before
 * exactly two upper-case hex digits, no encoded NUL or control character, at
 * most ARGV_MAX_ARGS words, a non-empty first word. 0 or -EINVAL/-E2BIG with
 * one line naming what.
 */
int argv_decode(const char *what, const char *enc, struct argv_list *out, struct err *e);
/* One word: decoded into buf (len bytes with the NUL); 0 or -EINVAL/-E2BIG. */
int argv_decode_word(const char *what, const char *enc, char *buf, size_t len, struct err *e);

/* "sh -c 'echo hi'": the words for people, quoted where needed, cut to len - 1. */
void argv_join(const struct argv_list *a, char *buf, size_t len);

#endif
