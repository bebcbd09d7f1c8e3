/*
 * twinmap: one memfd (shmem) buffer mapped twice in this process, a view
 * that 2M entries can map and one that only 4K PTEs can: the same frames
 * and cache lines behind both, so a chase over either differs only in the
 * translation's page size. Never prints.
 */
#ifndef THPEVAL_GUEST_TWINMAP_H
#define THPEVAL_GUEST_TWINMAP_H

#include <stddef.h>

#include "lib/err.h"

/*
 * One memfd (shmem) buffer mapped twice in this process. `huge`
 * starts on a 2M boundary and is advised MADV_HUGEPAGE, so the kernel maps
 * it with 2M entries where shmem THP is allowed (shmem_enabled advise,
 * always, within_size or force); `small` starts 4K past a 2M boundary, so
 * no 2M entry can map it and its translations are 4K PTEs. Behind both are
 * the same physical frames and the same cache lines: a chase over either
 * differs only in the page size of the translation (and, in a VM, not in
 * the host's backing either). Never prints.
 */

struct twinmap {
	int fd;			/* -1 when closed */
	size_t len;		/* a multiple of 2M */
	char *huge, *small;	/* the two views of the buffer */
	char *res[2];		/* the reservations they sit in */
	size_t res_len[2];
};

/*
 * Create the memfd (len: a positive multiple of 2M), map both views, write
 * every page through `huge` (faulting it in, huge where allowed) and read
 * every page through `small`. On failure nothing is left mapped or open.
 */
int twinmap_open(struct twinmap *t, size_t len, struct err *e);
/* Unmap and close; a zeroed, failed or closed twinmap is fine. */
void twinmap_close(struct twinmap *t);
/*
 * From <root>/proc/self/smaps: the share of each view mapped by 2M entries
 * (ShmemPmdMapped / Rss, percent). -ENOENT for a kernel without the field.
 */
int twinmap_coverage(const char *root, const struct twinmap *t, double *huge_pct, double *small_pct,
		     struct err *e);

#endif
