/*
 * recstream: the records a guest piece wrote to a file descriptor, parsed
 * back for a test; every line must be a valid record (lib/record.h).
 */
#ifndef THPEVAL_TESTS_GUEST_RECSTREAM_H
#define THPEVAL_TESTS_GUEST_RECSTREAM_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "lib/record.h"

#define MAXREC 64

struct stream {
	size_t n;
	struct record rec[MAXREC];
};

/* Parse everything written to fd; every line must be a valid record. */
static inline void read_stream(int fd, struct stream *s)
{
	off_t len = lseek(fd, 0, SEEK_END);
	char *text = calloc(1, (size_t)len + 1), *line, *save = NULL, why[128];

	assert_non_null(text);
	assert_int_equal(pread(fd, text, (size_t)len, 0), len);
	s->n = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		assert_true(s->n < MAXREC);
		if (rec_parse(line, strlen(line), &s->rec[s->n], why, sizeof(why)))
			fail_msg("an invalid record was written: '%s': %s", line, why);
		s->n++;
	}
	free(text);
}

#endif
