/*
 * dd: the real coreutils dd inside the guest (seeds/003), fork/exec of
 * <root>/bin/dd with an argv (no shell): if=/dev/zero to of=/dev/null and to
 * a file on a tmpfs (deleted after), for block sizes 4K, 64K, 1M and 2M.
 * Throughput is measured here (bytes / wall time) with the child's user and
 * sys time from wait4(); dd's own report is only a cross-check. One result
 * (or skip) record per (target, block size). Entry point: wl_dd. Never prints.
 */
#ifndef THPEVAL_GUEST_DD_H
#define THPEVAL_GUEST_DD_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

#define DD_PATH "/bin/dd"
#define DD_FILE "thpeval-dd"
#define DD_MARGIN (32ull << 20)	/* memory left to the rest of the system */
#define DD_STDERR_MAX 4096	/* bytes of dd's stderr kept */

extern const struct workload wl_dd;

/*
 * dd's "N bytes (...) copied" line in its stderr text: N, or -EINVAL when
 * no line says it. Strict: digits then " bytes"; the text is untrusted.
 */
int dd_parse_bytes(const char *text, uint64_t *bytes);

#endif
