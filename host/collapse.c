/* collapse: guest-RAM ranges of a QEMU, process_madvise(MADV_COLLAPSE), coverage arithmetic */
#include "host/collapse.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "lib/clock.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

#define MAPS_LINE_MAX (PATH_MAX + 256)
#define HUGE_2M (2u << 20)

/* the name part of a maps line names guest RAM: anonymous or memfd */
static bool ram_name(const char *name)
{
	return !*name || !strncmp(name, "[anon:", 6) || !strncmp(name, "[anon_shmem:", 12) ||
	       !strcmp(name, "/dev/zero (deleted)") || !strncmp(name, "/memfd:", 7);
}

/* "start-end perms offset dev inode [name]"; false when malformed */
static bool parse_maps_line(char *line, uint64_t *start, uint64_t *end, char perms[5], const char **name)
{
	char *p = line, *q;
	int i;

	errno = 0;
	*start = strtoull(p, &q, 16);
	if (q == p || *q != '-' || errno)
		return false;
	p = q + 1;
	*end = strtoull(p, &q, 16);
	if (q == p || *q != ' ' || errno || *end < *start)
		return false;
	p = q + 1;
	if (strspn(p, "rwxsp-") != 4 || p[4] != ' ')
		return false;
	memcpy(perms, p, 4);
	perms[4] = '\0';
	p += 5;
	for (i = 0; i < 3; i++) {	/* offset, dev, inode */
		size_t l = strcspn(p, " ");

		if (!l)
			return false;
		p += l;
		while (*p == ' ')
			p++;
	}
	*name = p;
	return true;
}

int collapse_find_ranges(const char *proc_root, int pid, uint64_t guest_ram_bytes, struct collapse_ranges *out,
			 struct err *e)
{
	char path[PATH_MAX], line[MAPS_LINE_MAX];
	unsigned no = 0;
	FILE *f;
	int n, saved;

	memset(out, 0, sizeof(*out));
	if (!proc_root || !*proc_root || pid <= 0 || guest_ram_bytes == 0)
		return err_set(e, -EINVAL, "bad maps query: pid %d, guest RAM %" PRIu64 " bytes", pid, guest_ram_bytes);
	n = snprintf(path, sizeof(path), "%s/%d/maps", proc_root, pid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return err_set(e, -ENAMETOOLONG, "proc root '%s' is too long", proc_root);
	f = fopen(path, "re");
	if (!f) {
		saved = errno;
		if (saved == ENOENT || saved == ESRCH)
			return err_set(e, -ENOENT, "process %d is gone (no '%s')", pid, path);
		return err_set(e, -saved, "cannot open '%s': %s", path, strerror(saved));
	}
	while (fgets(line, sizeof(line), f)) {
		size_t l = strlen(line);
		uint64_t start, end;
		const char *name;
		char perms[5];

		no++;
		if (l && line[l - 1] == '\n')
			line[--l] = '\0';
		else if (!feof(f)) {
			fclose(f);
			return err_set(e, -EBADMSG, "malformed '%s' line %u: line too long", path, no);
		}
		if (!parse_maps_line(line, &start, &end, perms, &name)) {
			fclose(f);
			return err_set(e, -EBADMSG, "malformed '%s' line %u: expected 'start-end perms offset dev inode [name]'",
				       path, no);
		}
		/* guest RAM is writable and never executable on the host (TCG's code buffer is) */
		if (perms[1] != 'w' || perms[2] == 'x' || !ram_name(name) || end - start < guest_ram_bytes)
			continue;
		if (out->n == COLLAPSE_RANGES_MAX) {
			fclose(f);
			return err_set(e, -E2BIG, "more than %d guest-RAM mappings in '%s'", COLLAPSE_RANGES_MAX, path);
		}
		out->r[out->n].start = start;
		out->r[out->n].end = end;
		out->n++;
		out->bytes += end - start;
	}
	saved = ferror(f) ? (errno ? errno : EIO) : 0;
	fclose(f);
	if (saved == ESRCH)
		return err_set(e, -ENOENT, "process %d exited while '%s' was read", pid, path);
	if (saved)
		return err_set(e, -saved, "cannot read '%s': %s", path, strerror(saved));
	if (!out->n)
		return err_set(e, -ESRCH, "no guest-RAM mapping of %" PRIu64 " MiB in '%s': is pid %d the QEMU of this guest?",
			       guest_ram_bytes >> 20, path, pid);
	return 0;
}

static long pm_collapse(int pidfd, const struct iovec *iov, size_t n)
{
	return syscall(SYS_process_madvise, pidfd, iov, n, MADV_COLLAPSE, 0u);
}

int collapse_probe(struct err *e)
{
	size_t len = 2 * HUGE_2M;
	struct iovec iov;
	int pidfd, saved;
	char *buf;
	long r;

	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0u);
	if (pidfd < 0) {
		saved = errno;
		return err_set(e, -EOPNOTSUPP, "no pidfd_open on this kernel (%s): collapse arms need Linux 6.1+",
			       strerror(saved));
	}
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		saved = errno;
		close(pidfd);
		return err_set(e, -saved, "cannot map a probe buffer: %s", strerror(saved));
	}
	/* one aligned 2M block, touched on 4K pages: something to collapse */
	iov.iov_base = (void *)(((uintptr_t)buf + HUGE_2M - 1) & ~(uintptr_t)(HUGE_2M - 1));
	iov.iov_len = HUGE_2M;
	memset(iov.iov_base, 1, HUGE_2M);
	r = pm_collapse(pidfd, &iov, 1);
	saved = r >= 0 ? 0 : errno;
	munmap(buf, len);
	close(pidfd);
	return collapse_probe_verdict(saved, e);
}

int collapse_probe_verdict(int err, struct err *e)
{
	if (!err || err == EAGAIN || err == ENOMEM)
		return 0;	/* supported; no free 2M block now is a figure of the arm */
	if (err == ENOSYS)
		return err_set(e, -EOPNOTSUPP, "no process_madvise on this kernel: collapse arms need Linux 6.1+");
	if (err == EINVAL)
		return err_set(e, -EOPNOTSUPP,
			       "process_madvise refuses MADV_COLLAPSE (EINVAL): collapse arms need Linux 6.1+ with THP");
	if (err == EPERM)
		return err_set(e, -EOPNOTSUPP, "process_madvise MADV_COLLAPSE not permitted: run as root");
	return err_set(e, -EOPNOTSUPP, "process_madvise MADV_COLLAPSE failed on a probe buffer: %s", strerror(err));
}

/* one block: 0 collapsed, 1 counted as not collapsed, or -errno that stops the calls */
static int collapse_block(int pidfd, uint64_t addr, struct collapse_call *out)
{
	struct iovec iov = { (void *)(uintptr_t)addr, HUGE_2M };
	int saved;

	out->blocks++;
	if (pm_collapse(pidfd, &iov, 1) >= 0) {
		out->collapsed++;
		return 0;
	}
	saved = errno;
	if (saved == EINVAL)
		out->refused++;
	else if (saved == EAGAIN)
		out->busy++;
	else if (saved == ENOMEM)
		out->nomem++;
	else
		return -saved;
	out->result = -saved;
	return 1;
}

int collapse_run(int pid, const struct collapse_ranges *rs, volatile const sig_atomic_t *stop,
		 struct collapse_call *out, struct err *e)
{
	int pidfd, saved, r = 0;
	double t0;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!rs || !rs->n || rs->n > COLLAPSE_RANGES_MAX)
		return err_set(e, -EINVAL, "no guest-RAM ranges to collapse");
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0u);
	if (pidfd < 0) {
		saved = errno;
		if (saved == ESRCH)
			return err_set(e, -ENOENT, "process %d is gone: cannot collapse its memory", pid);
		return err_set(e, -saved, "pidfd_open(%d): %s", pid, strerror(saved));
	}
	t0 = mono_s();
	for (i = 0; i < rs->n && r >= 0; i++) {
		uint64_t a = (rs->r[i].start + HUGE_2M - 1) & ~(uint64_t)(HUGE_2M - 1);

		for (; a + HUGE_2M <= rs->r[i].end && r >= 0; a += HUGE_2M)
			r = stop && *stop ? -EINTR : collapse_block(pidfd, a, out);
	}
	out->duration_s = mono_s() - t0;
	close(pidfd);
	if (r == -EINTR)
		return err_set(e, r, "interrupted after %llu of the 2M blocks", (unsigned long long)out->blocks);
	if (r < 0)
		return err_set(e, r, "process_madvise(%d, MADV_COLLAPSE): %s", pid, strerror(-r));
	return 0;
}

double collapse_cov_pct(const struct smaps_cov *c)
{
	double pct;

	if (!c || !c->mapping_kb)
		return 0;
	pct = ((double)c->anon_huge_kb + (double)c->shmem_pmd_kb) / (double)c->mapping_kb * 100.0;
	return pct > 100.0 ? 100.0 : pct;
}

double collapse_time_to(const double *t_s, const double *pct, size_t n, double level_pct)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (pct[i] < level_pct)
			continue;
		if (i == 0)
			return t_s[i];
		return t_s[i - 1] + (t_s[i] - t_s[i - 1]) * (level_pct - pct[i - 1]) / (pct[i] - pct[i - 1]);
	}
	return NAN;
}
