#include "twinmap.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "region.h"
#include "sysinfo.h"

/*
 * Reserve len + 2M + 2 pages of PROT_NONE and map the memfd over
 * [aligned + skew, + len) inside it, guard pages staying on both sides.
 */
static int view(struct twinmap *t, int i, size_t skew, char **out, struct err *e)
{
	size_t res_len = t->len + REGION_HUGE + 2 * REGION_PAGE;
	char *res, *at, *v;
	int saved;

	res = mmap(NULL, res_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (res == MAP_FAILED)
		return err_set(e, -errno, "cannot reserve %zu bytes of address space: %s", res_len,
			       strerror(errno));
	t->res[i] = res;
	t->res_len[i] = res_len;
	at = (char *)(((uintptr_t)res + REGION_PAGE + REGION_HUGE - 1) & ~(uintptr_t)(REGION_HUGE - 1)) + skew;
	v = mmap(at, t->len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, t->fd, 0);
	if (v == MAP_FAILED) {
		saved = errno;
		return err_set(e, -saved, "cannot map the shared buffer (%zu bytes): %s", t->len,
			       strerror(saved));
	}
	*out = v;
	return 0;
}

int twinmap_open(struct twinmap *t, size_t len, struct err *e)
{
	volatile char sink = 0;
	size_t off;
	int r, saved;

	memset(t, 0, sizeof(*t));
	t->fd = -1;
	if (!len || len % REGION_HUGE || len > SIZE_MAX / 2)
		return err_set(e, -EINVAL, "shared buffer of %zu bytes: not a positive multiple of 2M", len);
	t->len = len;
	t->fd = memfd_create("thpeval-tlb", MFD_CLOEXEC);
	if (t->fd < 0) {
		saved = errno;
		return err_set(e, -saved, "memfd_create failed: %s", strerror(saved));
	}
	if (ftruncate(t->fd, (off_t)len)) {
		saved = errno;
		twinmap_close(t);
		return err_set(e, -saved, "cannot size the shared buffer to %zu bytes: %s", len,
			       strerror(saved));
	}
	if ((r = view(t, 0, 0, &t->huge, e)) || (r = view(t, 1, REGION_PAGE, &t->small, e))) {
		twinmap_close(t);
		return r;
	}
	if (madvise(t->huge, len, MADV_HUGEPAGE)) {
		saved = errno;
		twinmap_close(t);
		return err_set(e, -saved, "madvise(MADV_HUGEPAGE) of the shared buffer failed: %s",
			       strerror(saved));
	}
	/* write through the aligned view first: that fault is the one that can allocate huge */
	memset(t->huge, 0, len);
	for (off = 0; off < len; off += REGION_PAGE)
		sink += t->small[off];
	(void)sink;
	return 0;
}

void twinmap_close(struct twinmap *t)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < 2; i++)
		if (t->res[i])
			munmap(t->res[i], t->res_len[i]);
	if (t->fd >= 0)
		close(t->fd);
	memset(t, 0, sizeof(*t));
	t->fd = -1;
}

static int pmd_pct(const char *root, const char *v, double *pct, struct err *e)
{
	struct smaps_vma vma;
	int r = smaps_self(root, (uint64_t)(uintptr_t)v, &vma, e);

	if (r)
		return r;
	if (!vma.have_shmem_pmd)
		return err_set(e, -ENOENT, "smaps has no ShmemPmdMapped field (kernel without shmem THP)");
	*pct = vma.rss_bytes ? 100.0 * (double)vma.shmem_pmd_bytes / (double)vma.rss_bytes : 0.0;
	return 0;
}

int twinmap_coverage(const char *root, const struct twinmap *t, double *huge_pct, double *small_pct,
		     struct err *e)
{
	int r = pmd_pct(root, t->huge, huge_pct, e);

	return r ? r : pmd_pct(root, t->small, small_pct, e);
}
