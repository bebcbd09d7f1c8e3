/*
 * arms: the host arms beyond a THP setting: the fragmented host (a holder child,
 * compaction and per-CPU lists through the journal) and the hugetlbfs
 * reference arm (the 2M pool reserved for the group).
 */
#include "orchestrator/run/arms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse.h"
#include "orchestrator/run/hostplan.h"
#include "orchestrator/run/note.h"

#define PROACTIVE_KEY "sysctl/vm/compaction_proactiveness"

#define PCP_KEY "sysctl/vm/percpu_pagelist_high_fraction"

#define PCP_LOW "1000000"	/* every per-CPU list's high mark down to its floor (4 batches) */

struct pcp_knob {
	struct host_session *hs;
	char orig[THP_VAL_MAX];
};

/* frag_pcp_fn: the undo's per-CPU list drain, through the journal */
static int pcp_set(void *ctx, bool low, struct err *e)
{
	struct pcp_knob *k = ctx;

	if (low) {
		int r = thp_read_one(k->hs->root, PCP_KEY, k->orig, sizeof(k->orig), e);

		return r ? r : host_session_set(k->hs, PCP_KEY, PCP_LOW, e);
	}
	return host_session_set(k->hs, PCP_KEY, k->orig, e);
}

static void buddy_copy(unsigned long long *dst, const struct buddyinfo *b, unsigned *orders)
{
	unsigned o;

	for (o = 0; o < b->orders && o < RES_BUDDY_ORDERS; o++)
		dst[o] = b->free[o];
	if (b->orders > *orders)
		*orders = b->orders;
}

/*
 * The fragmented arm of a group: the fragmenter needs THP on for its own
 * MADV_HUGEPAGE memory (journaled like every knob), and covers what the
 * guests do not need; a host that cannot be fragmented safely fails the run.
 */
int fragment_host(const struct run_config *cfg, const struct run_io *io, struct host_session *hs,
			 const struct host_plan *hp, const struct host_group *hg, unsigned round, struct frag *fr,
			 struct frag_log *fl, struct err *e)
{
	static const struct thp_setting fragmenter_thp = { 0, THP_MODE_MADVISE };
	uint64_t avail_kb, need = (uint64_t)(cfg->guests ? cfg->guests : 1) * (cfg->memory + GUEST_HOST_OVERHEAD);
	struct pcp_knob pk = { hs, "" };
	struct host_info hi;
	int r;

	snprintf(fl->host_thp, sizeof(fl->host_thp), "%s", hg->host_thp);
	snprintf(fl->prefault, sizeof(fl->prefault), "%s", prefault_name(hg->prefault));
	fl->round = round;
	/* THP on for the fragmenter's MADV_HUGEPAGE memory, but no direct compaction
	 * for its faults: compaction would migrate the 4K pages it keeps into a few
	 * blocks and give the 2M blocks back as it goes. defrag is put back before
	 * the guests start (their faults may compact: that is measured). */
	r = apply_host_thp(hs, hp, &fragmenter_thp, e);
	if (!r && thp_settings_get(hp->before, "defrag"))
		r = host_session_set(hs, "defrag", "never", e);
	/* kcompactd's proactive compaction (Linux 5.9+) migrates the kept 4K pages
	 * together while they are being made and gives the 2M blocks back (measured
	 * here: the unusable index for 2M reached 42-86% with it, 99.9% without):
	 * off from here until the undo, journaled like the THP knobs */
	if (!r && !thp_read_one(hs->root, PROACTIVE_KEY, fl->proactiveness, sizeof(fl->proactiveness), NULL))
		r = host_session_set(hs, PROACTIVE_KEY, "0", e);
	if (!r)
		r = meminfo_available_kb("/proc", &avail_kb, e);
	if (!r)
		r = host_info_read("/proc", &hi, e);
	if (r) {
		snprintf(fl->error, sizeof(fl->error), "%s", e->msg);
		return r;
	}
	run_note(io, "fragmenting host memory (MemAvailable %llu MiB, keeping %llu MiB free for the guests and the host%s%s%s)",
		 (unsigned long long)(avail_kb >> 10), (unsigned long long)(frag_floor_kb(avail_kb, need) >> 10),
		 fl->proactiveness[0] ? "; proactive compaction " : "", fl->proactiveness,
		 fl->proactiveness[0] ? " -> 0 until the undo" : "");
	/* the per-CPU free lists short while fragmenting: the pages the holder
	 * releases reach the buddy allocator at once, and so do pages completing a
	 * free 2M block, which the next chunk then takes; with the lists at their
	 * auto-tuned size (tens of thousands of pages here) such blocks surface only
	 * as the lists decay, after fragmenting: 0.5-1.5 GiB of them under the
	 * guests, measured */
	fl->pcp_low = !pcp_set(&pk, true, NULL);
	r = frag_start(fr, "/proc", cfg->state_dir, (hi.mem_total_kb * 1024) & ~((2ull << 20) - 1),
		       frag_floor_kb(avail_kb, need), e);
	if (fl->pcp_low) {
		struct err pe = ERR_INIT;

		if (pcp_set(&pk, false, &pe))
			run_note(io, "warning: %s", pe.msg);	/* the journal has it */
	}
	if (thp_settings_get(hp->before, "defrag")) {
		struct err de = ERR_INIT;

		if (host_session_set(hs, "defrag", thp_settings_get(hp->before, "defrag"), &de) && !r) {
			frag_stop(fr, NULL);
			r = err_set(e, de.code, "%s", de.msg);
		}
	}
	if (r) {
		snprintf(fl->error, sizeof(fl->error), "%s", e->msg);
		return err_wrap(e, "fragmented host arm");
	}
	fl->bytes = fr->bytes;
	fl->huge_kb = fr->huge_kb;
	fl->held_kb = fr->held_kb;
	fl->seconds = fr->seconds;
	fl->frag_compact_scanned = fr->frag_compact_scanned;
	snprintf(fl->stopped, sizeof(fl->stopped), "%s", fr->stopped);
	buddy_copy(fl->buddy_before, &fr->before, &fl->orders);
	buddy_copy(fl->buddy_after, &fr->after, &fl->orders);
	fl->free2m_before_kb = buddy_free_kb(&fr->before, 9);
	fl->avail_before_kb = fr->memfree_before_kb;
	fl->free2m_after_kb = buddy_free_kb(&fr->after, 9);
	run_note(io, "fragmented %llu MiB in %.1f s (%llu MiB of it on huge pages first); free memory in 2M blocks %llu -> %llu MiB, unusable for 2M %.1f%% -> %.1f%%; holder pid %d keeps %llu KiB",
		 (unsigned long long)(fr->bytes >> 20), fr->seconds, (unsigned long long)(fr->huge_kb >> 10),
		 (unsigned long long)(fl->free2m_before_kb >> 10), (unsigned long long)(fl->free2m_after_kb >> 10),
		 buddy_unusable_pct(fl->buddy_before, fl->orders, 9), buddy_unusable_pct(fl->buddy_after, fl->orders, 9),
		 fr->pid, (unsigned long long)fr->held_kb);
	return 0;
}

/* host-wide compaction and THP fault counters while the guests ran on the fragmented host */
void frag_vmstat(struct frag_log *fl, const struct vmstat *vm0)
{
	static const char *const keys[] = { "compact_stall", "compact_success", "compact_fail", "thp_fault_alloc",
					     "thp_fault_fallback", "compact_migrate_scanned", "pgmigrate_success",
					     "pgsteal_direct" };
	unsigned long long *dst[] = { &fl->compact_stall, &fl->compact_success, &fl->compact_fail, &fl->thp_fault_alloc,
				      &fl->thp_fault_fallback, &fl->compact_scanned_guests, &fl->pgmigrate_success,
				      &fl->pgsteal_direct };
	struct vmstat now;
	size_t i;

	if (vmstat_read("/proc", &now, NULL))
		return;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		uint64_t a, b;

		if (!vmstat_get(vm0, keys[i], &a) && !vmstat_get(&now, keys[i], &b))
			*dst[i] = b - a;
	}
}

/* end the fragmenter (if one runs) and record how the host came back */
static void frag_end(const struct run_io *io, struct host_session *hs, struct frag *fr, struct frag_log *fl)
{
	struct err e = ERR_INIT;
	struct pcp_knob pk = { hs, "" };
	uint64_t kb = 0;

	if (!fr->pid)
		return;
	fr->pcp = pcp_set;
	fr->pcp_ctx = &pk;
	if (frag_stop(fr, &e))
		run_note(io, "warning: %s", e.msg);
	if (!fl || !fr->have_undone)
		return;
	fl->have_undone = true;
	fl->restored = fr->restored;
	fl->compacted = fr->compacted;
	fl->compact_scanned = fr->compact_scanned;
	fl->pcp_drained = fr->pcp_drained;
	buddy_copy(fl->buddy_undone, &fr->undone, &fl->orders);
	fl->free2m_undone_kb = buddy_free_kb(&fr->undone, 9);
	meminfo_available_kb("/proc", &kb, NULL);
	fl->avail_undone_kb = kb;
	run_note(io, "%sfragmenter ended: free memory in 2M blocks %llu MiB (before %llu MiB)%s",
		 fr->restored ? "" : "warning: ", (unsigned long long)(fl->free2m_undone_kb >> 10),
		 (unsigned long long)(fl->free2m_before_kb >> 10),
		 fr->restored ? (fr->compacted ? ", after compact_memory" : fr->pcp_drained ? ", after emptying the per-CPU lists" : "")
			      : ": not back to 90% of it");
}

/* the undo of the arm: the fragmenter, then proactive compaction as it was (the journal has it too) */
void frag_undo(const struct run_io *io, struct host_session *hs, struct frag *fr, struct frag_log *fl)
{
	struct err e = ERR_INIT;

	frag_end(io, hs, fr, fl);
	if (fl && fl->proactiveness[0] && host_session_set(hs, PROACTIVE_KEY, fl->proactiveness, &e))
		run_note(io, "warning: %s", e.msg);
}

#define POOL_DIR "/sys/kernel/mm/hugepages"

void pool_key(char *buf, size_t len, uint64_t kb)
{
	snprintf(buf, len, "hugetlb/hugepages-%" PRIu64 "kB/nr_hugepages", kb);
}

static const char *size_name(uint64_t kb, char *buf, size_t len)
{
	if (kb >= (1u << 20) && kb % (1u << 20) == 0)
		snprintf(buf, len, "%" PRIu64 "G", kb >> 20);
	else
		snprintf(buf, len, "%" PRIu64 "M", kb >> 10);
	return buf;
}

static int pool_read(const struct run_config *cfg, uint64_t kb, const char *file, uint64_t *v, struct err *e)
{
	char path[PATH_MAX], buf[32], sz[24];
	FILE *f;
	int ok;

	if (snprintf(path, sizeof(path), "%s%s/hugepages-%" PRIu64 "kB/%s",
		     strcmp(cfg->sysfs_root, "/") ? cfg->sysfs_root : "", POOL_DIR, kb, file) >= (int)sizeof(path))
		return err_set(e, -ENAMETOOLONG, "--sysfs-root path too long");
	f = fopen(path, "re");
	if (!f)
		return err_set(e, -errno, "--host-backing=%s: this host offers no %s hugetlb pages ('%s': %s)%s",
			       hugetlb_arm_name(kb), size_name(kb, sz, sizeof(sz)), path, strerror(errno),
			       kb > HUGETLB_2M_KB ? ": the CPU lacks 1G pages (pdpe1gb) or the kernel gigantic "
			       "pages; leave that arm out" : ": the kernel needs CONFIG_HUGETLBFS");
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (!ok || parse_u64(buf, v))
		return err_set(e, -EBADMSG, "unexpected content in '%s'", path);
	return 0;
}

/*
 * The page size of a hugetlbfs mount from its /proc/mounts options
 * ("pagesize=2M", "pagesize=1024M"); without the option, the default size.
 */
static uint64_t mount_page_kb(const char *opts)
{
	const char *p = strstr(opts, "pagesize=");
	char *end;
	unsigned long long v;

	if (!p)
		return HUGETLB_2M_KB;
	errno = 0;
	v = strtoull(p + 9, &end, 10);
	if (errno || end == p + 9)
		return 0;
	switch (*end) {
	case 'K': case 'k': return v;
	case 'M': case 'm': return v << 10;
	case 'G': case 'g': return v << 20;
	default: return 0;
	}
}

/*
 * A hugetlbfs arm needs the host's pool of that page size and a hugetlbfs
 * mount of that size: libvirt backs <hugepages> with one it found when it
 * started.
 */
int hugetlb_arm_check(const struct run_config *cfg, uint64_t kb, struct err *e)
{
	char path[PATH_MAX], line[512], sz[24];
	bool found = false;
	uint64_t nr;
	FILE *f;
	int r;

	if ((r = pool_read(cfg, kb, "nr_hugepages", &nr, e)))
		return r;
	if (snprintf(path, sizeof(path), "%s/proc/mounts", strcmp(cfg->sysfs_root, "/") ? cfg->sysfs_root : "") >=
	    (int)sizeof(path))
		return err_set(e, -ENAMETOOLONG, "--sysfs-root path too long");
	f = fopen(path, "re");
	if (!f)
		return err_set(e, -errno, "cannot read '%s': %s", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f)) {
		char dev[128], dir[256], type[64], opts[256];

		found = sscanf(line, "%127s %255s %63s %255s", dev, dir, type, opts) == 4 &&
			!strcmp(type, "hugetlbfs") && mount_page_kb(opts) == kb;
	}
	fclose(f);
	if (!found)
		return err_set(e, -ENOENT, "--host-backing=%s: no hugetlbfs of %s pages is mounted; run 'mount -t "
			       "hugetlbfs -o pagesize=%s hugetlbfs %s' and restart libvirtd (it looks for "
			       "hugetlbfs mounts when it starts; tools/services.sh does both)", hugetlb_arm_name(kb),
			       size_name(kb, sz, sizeof(sz)), sz, kb == HUGETLB_2M_KB ? "/dev/hugepages" :
			       "/dev/hugepages1G");
	return 0;
}

/*
 * Reserve the huge pages of that size the guests' RAM needs on top of what is
 * in use; the journal records the pool size first, so a crash restores it
 * too. orig gets the size to go back to ("" when nothing was changed).
 */
int pool_reserve(struct host_session *hs, const struct run_config *cfg, uint64_t kb, char *orig, size_t len,
		 struct err *e)
{
	unsigned guests = cfg->guests ? cfg->guests : 1;
	uint64_t page = kb << 10, nr, freep, need = (cfg->memory + page - 1) / page * guests, want, got;
	char val[32], key[64], sz[24];
	int r;

	orig[0] = '\0';
	if ((r = pool_read(cfg, kb, "nr_hugepages", &nr, e)) || (r = pool_read(cfg, kb, "free_hugepages", &freep, e)))
		return r;
	if (freep >= need)
		return 0;
	want = nr - freep + need;
	snprintf(orig, len, "%" PRIu64, nr);
	snprintf(val, sizeof(val), "%" PRIu64, want);
	pool_key(key, sizeof(key), kb);
	r = host_session_set(hs, key, val, e);
	if (r && pool_read(cfg, kb, "nr_hugepages", &got, NULL) == 0 && got < want)
		return err_set(e, -ENOMEM, "--host-backing=%s: the host could reserve only %" PRIu64
			       " of the %" PRIu64 " %s huge pages %u guest%s of %" PRIu64 " MiB need%s: free or compact "
			       "memory (echo 1 > /proc/sys/vm/compact_memory), or use a smaller --memory or --guests",
			       hugetlb_arm_name(kb), got - (nr - freep), need, size_name(kb, sz, sizeof(sz)), guests,
			       guests == 1 ? "" : "s", cfg->memory >> 20, guests == 1 ? "s" : "");
	return r;
}
