/*
 * dd: the real coreutils dd in the guest, by fork/exec with an argv:
 * /dev/zero to /dev/null and to a tmpfs file for block sizes 4K to 2M, its
 * throughput timed by the workload with the child's user and sys time. One
 * record per (target, block size); the evidence is the tmpfs file's huge
 * share. Entry point: wl_dd. Never prints.
 */
#ifndef THPEVAL_GUEST_DD_H
#define THPEVAL_GUEST_DD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "workload.h"

/*
 * The real coreutils dd inside the guest (seeds/003), fork/exec of
 * <root>/bin/dd with an argv (no shell): if=/dev/zero to of=/dev/null and to
 * a file on a tmpfs (deleted after), for block sizes 4K, 64K, 1M and 2M.
 * The file is made by dd with conv=excl oflag=nofollow in a directory of the
 * run's own (mkdtemp): never over, or through, anything someone left there.
 * Throughput is measured here (bytes / wall time) with the child's user and
 * sys time from wait4(); dd's own report is only a cross-check. One result
 * (or skip) record per (target, block size). Coverage: the tmpfs file's huge
 * share (ShmemHugePages grown by the file) beside what its mount and
 * shmem_enabled ask for; dd's own buffer (the /dev/null runs) lives in the dd
 * process and is not measured, which the record says. Entry point: wl_dd.
 * Never prints.
 */

#define DD_PATH "/bin/dd"
#define DD_FILE "thpeval-dd"	/* in a fresh DD_DIR_PREFIX-XXXXXX directory on the tmpfs */
#define DD_DIR_PREFIX "thpeval-dd-"
#define DD_MARGIN (32ull << 20)	/* memory left to the rest of the system */
#define DD_STDERR_MAX 4096	/* bytes of dd's stderr kept */

/* dd's options: its parameter table points into them */
struct dd_opts {
	uint64_t volume;	/* bytes moved per (target, block size) */
};

extern const struct workload wl_dd;

/*
 * dd's "N bytes (...) copied" line in its stderr text: N, or -EINVAL when
 * no line says it. Strict: digits then " bytes"; the text is untrusted.
 */
int dd_parse_bytes(const char *text, uint64_t *bytes);

/*
 * The huge= option of the tmpfs that holds path (the mount with the longest
 * matching mount point in <root>/proc/self/mounts): its value, or "never"
 * when the mount has none; -ENOENT when no mount holds path.
 */
int dd_mount_huge(const char *root, const char *path, char *out, size_t len);
/*
 * Whether a file written by dd with block size bs on that tmpfs should get
 * huge pages: shmem_enabled force yes, deny no; else huge=always yes,
 * within_size when every write ends on a 2M boundary (bs a multiple of 2M),
 * advise (dd does not madvise) and never no.
 */
bool dd_tmpfs_want_huge(const char *shmem_enabled, const char *mount_huge, uint64_t bs);

#endif
