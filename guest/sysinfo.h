/*
 * sysinfo: what the guest programs read from /proc and /sys: MemAvailable,
 * the THP knobs (read and, for the runner, write with read-back) and the
 * smaps entry of one mapping. Every path is under a caller-given root ("" on
 * a real system, a fake tree in tests). Parsing is strict and bounded; nothing
 * here prints or exits.
 */
#ifndef THPEVAL_GUEST_SYSINFO_H
#define THPEVAL_GUEST_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/err.h"
#include "lib/record.h"

#define SYSINFO_LINE_MAX 4608	/* a smaps header holds a path: PATH_MAX plus the rest */
#define SYSINFO_MAX_LINES 4000000u
#define THP_VALUE_MAX 32
#define THP_UNSUPPORTED "unsupported"

/* "MemAvailable" etc. from <root>/proc/meminfo, in bytes; -ENOENT if absent. */
int meminfo_get(const char *root, const char *key, uint64_t *bytes, struct err *e);

/* The /proc/vmstat counters a phase reports deltas of (whole system). */
enum guest_vm { GVM_PGFAULT, GVM_THP_FAULT_ALLOC, GVM_THP_FAULT_FALLBACK, GVM_THP_COLLAPSE_ALLOC, GVM__COUNT };
struct guest_vmstat {
	bool have[GVM__COUNT];
	uint64_t v[GVM__COUNT];
};
const char *guest_vm_name(enum guest_vm k);
/* <root>/proc/vmstat; counters it lacks (or an unreadable file) stay have=false */
void guest_vmstat_read(const char *root, struct guest_vmstat *vm);
/* one counter of <root>/proc/vmstat; -ENOENT when the file or the counter is missing */
int guest_vmstat_one(const char *root, const char *key, uint64_t *v);
/* add "<prefix><name>" = after - before for every counter both have; 0 or -EINVAL */
int guest_vmstat_add(struct record *r, const char *prefix, const struct guest_vmstat *before,
		     const struct guest_vmstat *after);

/* The bracketed choice of a THP knob's text ("always [madvise] never\n"). */
int thp_knob_parse(const char *text, char *out, size_t len);
/*
 * <root>/sys/kernel/mm/transparent_hugepage/<knob>: the selected value, or
 * THP_UNSUPPORTED (and -ENOENT) when the file does not exist, "unreadable" or
 * "invalid" (and the error) when it cannot be read or parsed.
 */
int thp_knob_get(const char *root, const char *knob, char *out, size_t len, struct err *e);
/* Write value to the knob and read it back; -EIO if the kernel kept another. */
int thp_knob_set(const char *root, const char *knob, const char *value, struct err *e);
/*
 * A THP knob that holds a number ("use_zero_page": "0" or "1"), not a
 * [bracketed] choice: -ENOENT if the file does not exist. The setter reads
 * the value back (-EIO if the kernel kept another).
 */
int thp_knob_get_u64(const char *root, const char *knob, uint64_t *v, struct err *e);
int thp_knob_set_u64(const char *root, const char *knob, uint64_t v, struct err *e);
bool thp_supported(const char *root);
bool thp_value_valid(const char *v);	/* always | madvise | never */
/* a value of shmem_enabled: always | within_size | advise | never | deny | force */
bool shmem_value_valid(const char *v);

struct smaps_vma {
	uint64_t start, end;	/* [start, end) */
	uint64_t rss_bytes;
	uint64_t anon_huge_bytes;
	bool have_anon_huge;	/* false on kernels without THP */
	uint64_t shmem_pmd_bytes;	/* ShmemPmdMapped: shmem mapped by 2M entries */
	bool have_shmem_pmd;
};

/* Find the mapping that contains addr in smaps text; -ENOENT if none. */
int smaps_find(FILE *f, uint64_t addr, struct smaps_vma *out, struct err *e);
/* Same on <root>/proc/self/smaps. */
int smaps_self(const char *root, uint64_t addr, struct smaps_vma *out, struct err *e);

/* true if the first "flags" line of <root>/proc/cpuinfo lists flag (x86) */
bool cpuinfo_has_flag(const char *root, const char *flag);

/* One of cpu0's caches, from <root>/sys/devices/system/cpu/cpu0/cache/index<N>/. */
struct cache_geom {
	unsigned level;
	uint64_t ways, sets, line_bytes, size_bytes;
};

/* The cache of this level and type ("Data", "Unified"); -ENOENT if there is none. */
int cache_geom_get(const char *root, unsigned level, const char *type, struct cache_geom *g,
		   struct err *e);

/* "256M", "1G": exact T/G/M multiples as such; else MiB rounded down ("900M"), or K, or bytes. */
void fmt_size(uint64_t bytes, char *buf, size_t len);

#endif
