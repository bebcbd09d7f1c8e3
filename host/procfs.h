/*
 * procfs: read-only views of /proc for verifying a treatment: THP coverage of
 * a QEMU process's guest RAM (smaps), THP/compaction event counters
 * (vmstat), host identity and per-process minor faults. proc_root is a
 * parameter ("/proc" on a host, a fake tree in tests). Parses strictly with
 * bounded lines; never writes, never prints, never exits.
 */
#ifndef THPEVAL_HOST_PROCFS_H
#define THPEVAL_HOST_PROCFS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/err.h"

struct smaps_cov {
	uint64_t mapping_kb;	/* Size */
	uint64_t rss_kb;	/* Rss (smaps leaves hugetlb pages out of it) */
	uint64_t anon_huge_kb;	/* AnonHugePages */
	uint64_t shmem_pmd_kb;	/* ShmemPmdMapped (memfd guest RAM) */
	uint64_t hugetlb_kb;	/* Private_Hugetlb + Shared_Hugetlb */
	unsigned mappings;	/* how many mappings were summed */
	uint64_t hugetlb_page_kb;	/* KernelPageSize of the hugetlbfs mappings (smallest); 0: none */
};

/*
 * Sum the guest-RAM mapping(s) of a QEMU process: mappings with Size >=
 * guest_ram_bytes that are anonymous (no name or "[anon:...]"), memfd
 * ("/memfd:...") or hugetlbfs (VmFlags "ht"); other files and [heap],
 * [stack]... never count. -ENOENT when the process is gone, -ESRCH when no
 * mapping matched, -EBADMSG for malformed smaps.
 */
int smaps_guest_ram(const char *proc_root, int pid, uint64_t guest_ram_bytes,
		    struct smaps_cov *out, struct err *e);
/* (anon_huge + shmem_pmd + hugetlb) / (rss + hugetlb) * 100, capped at 100; 0 when empty */
double smaps_huge_pct(const struct smaps_cov *c);

#define VMSTAT_NAME_MAX 48
#define VMSTAT_MAX 128

struct vmstat {
	size_t n;
	struct {
		char name[VMSTAT_NAME_MAX];
		uint64_t v;
	} e[VMSTAT_MAX];
};

/* only thp_*, compact_*, pgfault, pgmajfault, nr_anon_transparent_hugepages, pgmigrate_success,
 * pgsteal_direct */
int vmstat_read(const char *proc_root, struct vmstat *out, struct err *e);
/* 0, or -ENOENT when the counter is not there */
int vmstat_get(const struct vmstat *v, const char *name, uint64_t *out);

struct host_info {
	char name[65];		/* uname(2) nodename: the host in a history of many */
	char kernel[128];	/* uname(2) release */
	char cpu_model[128];	/* first "model name" of cpuinfo, "unknown" without one */
	unsigned cpus;		/* "processor" entries of cpuinfo */
	uint64_t mem_total_kb;	/* MemTotal of meminfo */
	/* the host is itself a guest (CPUID's hypervisor bit); have_virt: that was read (x86) */
	bool have_virt, virtualized;
	/* it reports free memory to its hypervisor (a virtio balloon bound with
	 * VIRTIO_BALLOON_F_REPORTING), in blocks of reporting_order (have_order) */
	bool have_nested, reporting, have_order;
	unsigned reporting_order;
};

int host_info_read(const char *proc_root, struct host_info *out, struct err *e);
/*
 * Whether the host is a virtual machine, and whether it reports free memory to
 * its hypervisor: a virtio device 0x0005 under <sysfs_root>/sys/bus/virtio/
 * devices bound to virtio_balloon with feature bit 5 (free page reporting),
 * and page_reporting's block order; sysfs_root "" or "/" is the real one.
 * There a host-cold first touch can take a fault in the outer hypervisor too.
 */
int host_nested_read(const char *sysfs_root, struct host_info *out, struct err *e);
/* field 10 (minflt) of /proc/PID/stat, read past the last ')' of comm */
int proc_minflt(const char *proc_root, int pid, uint64_t *minflt, struct err *e);
/* VmRSS of /proc/PID/status in kB: -ENOENT when the process is gone, -ENODATA without one */
int proc_vmrss(const char *proc_root, int pid, uint64_t *kb, struct err *e);

/* MemAvailable of meminfo, in kB */
int meminfo_available_kb(const char *proc_root, uint64_t *kb, struct err *e);

#define BUDDY_MAX_ORDERS 16

/* free blocks per order, summed over every node and zone of /proc/buddyinfo */
struct buddyinfo {
	unsigned orders;
	uint64_t free[BUDDY_MAX_ORDERS];
};

int buddyinfo_read(const char *proc_root, struct buddyinfo *out, struct err *e);
/* free memory in blocks of at least 4K << min_order (9: 2M blocks on x86-64), in kB */
uint64_t buddy_free_kb(const struct buddyinfo *b, unsigned min_order);
/*
 * The kernel's unusable free space index for an order (mm/vmstat.c,
 * /sys/kernel/debug/extfrag/unusable_index) in percent: the share of free
 * memory that lies in blocks smaller than 4K << order, so cannot serve such
 * an allocation without compaction. free[] holds free blocks per order.
 * NAN when nothing is free.
 */
double buddy_unusable_pct(const unsigned long long *free, unsigned orders, unsigned order);

#endif
