#include "region.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

uint64_t region_round_huge(uint64_t len)
{
	if (len > UINT64_MAX - (REGION_HUGE - 1))
		return 0;
	return (len + REGION_HUGE - 1) & ~(uint64_t)(REGION_HUGE - 1);
}

int region_map(struct region *r, size_t len, int advice, struct err *e)
{
	size_t map_len;
	char *map, *buf;
	int saved;

	memset(r, 0, sizeof(*r));
	if (!len || len % REGION_PAGE)
		return err_set(e, -EINVAL, "region of %zu bytes: not a positive multiple of 4K", len);
	if (len > SIZE_MAX - REGION_HUGE - 2 * REGION_PAGE)
		return err_set(e, -E2BIG, "region of %zu bytes is too large", len);
	map_len = len + REGION_HUGE + 2 * REGION_PAGE;
	map = mmap(NULL, map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return err_set(e, -errno, "cannot map %zu bytes: %s", map_len, strerror(errno));
	/* at least one page below the buffer and one above stay PROT_NONE */
	buf = (char *)(((uintptr_t)map + REGION_PAGE + REGION_HUGE - 1) &
		       ~(uintptr_t)(REGION_HUGE - 1));
	r->map = map;
	r->map_len = map_len;
	r->buf = buf;
	r->len = len;
	if (mprotect(map, (size_t)(buf - map), PROT_NONE) ||
	    mprotect(buf + len, (size_t)(map + map_len - buf - len), PROT_NONE)) {
		saved = errno;
		region_release(r);
		return err_set(e, -saved, "cannot protect the guard pages: %s", strerror(saved));
	}
	if (advice != REGION_NO_ADVICE && madvise(buf, len, advice)) {
		saved = errno;
		region_release(r);
		return err_set(e, -saved, "madvise(%s) of %zu bytes failed: %s",
			       advice == MADV_HUGEPAGE ? "MADV_HUGEPAGE" :
			       advice == MADV_NOHUGEPAGE ? "MADV_NOHUGEPAGE" : "?",
			       len, strerror(saved));
	}
	return 0;
}

void region_release(struct region *r)
{
	if (r && r->map)
		munmap(r->map, r->map_len);
	if (r)
		memset(r, 0, sizeof(*r));
}

int region_smaps(const char *root, const struct region *r, struct smaps_vma *vma, double *huge_pct,
		 struct err *e)
{
	int ret = smaps_self(root, (uint64_t)(uintptr_t)r->buf, vma, e);

	if (ret)
		return ret;
	*huge_pct = vma->rss_bytes ? 100.0 * (double)vma->anon_huge_bytes / (double)vma->rss_bytes
				   : 0.0;
	return 0;
}
