/*
 * kcompile: a real Linux build. Each repetition sets up a fresh O= tree
 * from the pristine source (untimed), then times `make -jJOBS TARGET` by
 * fork/exec, never a shell: wall, user and sys time, faults, vmstat deltas
 * and the huge share of the faults that tried one (the evidence). Entry
 * point: wl_kcompile. Never prints.
 */
#ifndef THPEVAL_GUEST_KCOMPILE_H
#define THPEVAL_GUEST_KCOMPILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sysinfo.h"
#include "workload.h"

/*
 * A real Linux build (seeds/003, Arcangeli's guest kernel compile).
 * The kernel source is a pristine tree (in a guest: the read-only source disk
 * the runner mounts at KC_SRC_DEFAULT; on the bare host: the extracted copy
 * in the image cache); every repetition makes a fresh O= directory under
 * --build-dir and sets it up, untimed: `make -C SRC O=DIR CONFIG` and `make
 * prepare`, or, where the source disk holds such a tree made at image build
 * for this config and this source path, a copy of it (the same files, without
 * minutes of compiler probes under TCG); then it times `make -C SRC O=DIR
 * -jJOBS TARGET` and removes the directory. make runs by
 * fork/exec with an argv, never through a shell. Reported: wall time, user
 * and sys time and minor/major faults of make and everything it waited for
 * (wait4), /proc/vmstat deltas (pgfault, thp_fault_alloc...) with the huge
 * page share of the faults that tried one (huge_fault_pct, the coverage
 * evidence), the exit status; a failed build is a fail record with the last
 * line of its output.
 * Guest sys time carries the fault savings of THP, user time the TLB savings
 * (REFERENCE.md section 2). Entry point: wl_kcompile. Never prints.
 */

#define KC_SRC_DEFAULT "/mnt/linux-src"	/* where the runner mounts the source disk */
#define KC_SRC_DEVICE "/dev/vdb"		/* the source disk in a kcompile guest */
/* in the source disk: <src>/KC_PREPARED_DIR/<config>, O= trees the image build configured */
#define KC_PREPARED_DIR ".thpeval-prepared"
#define KC_MAKE "/usr/bin/make"
#define KC_CC "/usr/bin/gcc"
#define KC_TAIL_MAX 160			/* bytes of make's last output line kept */

/* kcompile's options: its parameter table points into them */
struct kcompile_opts {
	char config[WL_WORD_MAX];	/* make's config target (tinyconfig) */
	char target[WL_WORD_MAX];	/* what is built, timed (mm/, vmlinux) */
	char src[WL_PATH_MAX];		/* the pristine kernel source tree */
	char build_dir[WL_PATH_MAX];	/* where each fresh O= tree is made */
	uint64_t jobs;			/* make -j; 0 = the online CPUs */
	uint64_t timeout;		/* seconds one build may take: the runner's limit */
};

extern const struct workload wl_kcompile;

/* one of the config targets kcompile accepts (tinyconfig, defconfig...) */
bool kc_config_allowed(const char *config);
/*
 * A make target: a word (vmlinux, bzImage) or a directory path (mm/,
 * kernel/sched/): [A-Za-z0-9_./-], no leading '-', '/' or '.', no "..".
 * 0, or -EINVAL with the reason in e.
 */
int kc_target_check(const char *target, struct err *e);
/* bytes of memory and of build-directory space one build of config needs */
unsigned long long kc_space_needed(const char *config);
/*
 * The last non-empty line of text (make's output), printable ASCII only,
 * cut to len - 1 bytes; "" if there is none.
 */
void kc_last_line(const char *text, size_t n, char *out, size_t len);
/*
 * The build's huge page share of the faults that tried one: thp_fault_alloc /
 * (thp_fault_alloc + thp_fault_fallback) * 100 between the two readings. 0;
 * -ENODATA (pct 0) when no fault tried; -ENOENT when the counters are missing.
 */
int kc_huge_fault_pct(const struct guest_vmstat *before, const struct guest_vmstat *after, double *pct);

#endif
