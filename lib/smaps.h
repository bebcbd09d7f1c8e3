/*
 * smaps: the one parser of /proc/PID/smaps and smaps_rollup text, for host
 * and guest. The caller reads lines with its own bound and feeds them one at
 * a time; each mapping comes back whole (range, permissions, name and the
 * "N kB" fields the tree reads). A malformed line is refused with the reason,
 * never skipped. Never prints, never exits.
 */
#ifndef THPEVAL_LIB_SMAPS_H
#define THPEVAL_LIB_SMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

#define SMAPS_NAME_MAX 256	/* a mapping's name is cut to fit (with the NUL) */
#define SMAPS_WHY_MAX 96

/* the "N kB" fields kept; every other known kB field is checked and dropped */
enum smaps_key {
	SMAPS_SIZE,		/* Size */
	SMAPS_RSS,		/* Rss (hugetlb pages are not in it) */
	SMAPS_ANON,		/* Anonymous */
	SMAPS_ANON_HUGE,	/* AnonHugePages */
	SMAPS_SHMEM_PMD,	/* ShmemPmdMapped: shmem mapped by PMD entries */
	SMAPS_PAGE_KB,		/* KernelPageSize */
	SMAPS_PRIVATE_HUGETLB,	/* Private_Hugetlb */
	SMAPS_SHARED_HUGETLB,	/* Shared_Hugetlb */
	SMAPS__COUNT
};

struct smaps_map {
	uint64_t start, end;		/* [start, end) */
	char perms[5];			/* "rw-p", "r-xs", ... */
	char name[SMAPS_NAME_MAX];	/* path, [heap], [rollup]...; "" when anonymous */
	unsigned line;			/* its header's line number, from 1 */
	uint64_t kb[SMAPS__COUNT];	/* at most UINT64_MAX / 1024: * 1024 never overflows */
	bool have[SMAPS__COUNT];	/* the field was present (each at most once) */
	bool vm_hugetlb;		/* VmFlags lists "ht" (hugetlbfs) */
};

struct smaps_parser {
	struct smaps_map cur;
	bool open;			/* cur holds a mapping */
	unsigned line;			/* lines fed so far */
	char why[SMAPS_WHY_MAX];	/* the reason of the last refusal */
};

void smaps_init(struct smaps_parser *p);
/*
 * Feed line (len bytes, no '\n'). 1: the line opened a mapping and the one
 * before it is complete, in *done; 0: nothing completed; -EBADMSG: the line
 * is malformed (p->why says how, p->line is its number): a header that does
 * not parse, a line that is neither a header nor "Name: value", a field
 * before any mapping, a kB field that is not "N kB" or given twice.
 */
int smaps_feed(struct smaps_parser *p, const char *line, size_t len, struct smaps_map *done);
/* The end of the text: 1 with the last mapping in *done, 0 when there was none. */
int smaps_finish(struct smaps_parser *p, struct smaps_map *done);

/* each complete mapping: 0 to go on, > 0 to stop there (returned), < 0 an error with e set */
typedef int (*smaps_fn)(const struct smaps_map *m, void *ctx, struct err *e);
/*
 * Text of n bytes, line by line through fn: at most max_lines lines of at
 * most line_max bytes, else -EBADMSG. What fn returns when it is not 0,
 * -EBADMSG on a malformed line ("smaps line N: why" in e), else 0.
 */
int smaps_parse_text(const char *text, size_t n, unsigned max_lines, size_t line_max, smaps_fn fn,
		     void *ctx, struct err *e);

#endif
