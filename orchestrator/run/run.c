#include "orchestrator/run/run.h"
#include "orchestrator/analysis/stopping.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "host/frag.h"
#include "host/journal.h"
#include "host/kvmstat.h"
#include "host/procfs.h"
#include "host/thp.h"
#include "images/image.h"
#include "images/srcdisk.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "orchestrator/virt/domain.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/virt/virt.h"

#define MAX_REJECTED 64		/* garbage lines tolerated from one guest */

static void progress(const struct run_io *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void progress(const struct run_io *io, const char *fmt, ...)
{
	va_list ap;

	if (!io->progress)
		return;
	if (io->bar && io->bar->tty) {
		/* on a terminal the status line carries the progress: only warnings and
		 * errors are printed, above it */
		if (strncmp(fmt, "warning", 7) && strncmp(fmt, "error", 5))
			return;
		fputs("\r\033[K", io->progress);
		io->bar->drawn = 0;
	}
	fputs("thpeval: ", io->progress);
	va_start(ap, fmt);
	vfprintf(io->progress, fmt, ap);
	va_end(ap);
	fputc('\n', io->progress);
	fflush(io->progress);
}

static void image_line(void *opaque, const char *msg)
{
	FILE *out = opaque;

	if (out) {
		fprintf(out, "thpeval: %s\n", msg);
		fflush(out);
	}
}

static void *io_progress_opaque(const struct run_io *io)
{
	return io->progress;
}

static int mkdir_p(const char *path, mode_t mode, struct err *e)
{
	char buf[PATH_MAX];
	char *p;

	if (strlen(path) >= sizeof(buf))
		return err_set(e, -ENAMETOOLONG, "path too long: '%s'", path);
	strcpy(buf, path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return err_set(e, -errno, "cannot create directory '%s': %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return err_set(e, -errno, "cannot create directory '%s': %s", buf, strerror(errno));
	return 0;
}

/* one host configuration: a freshly booted guest runs every guest cell in it */
struct host_group {
	const char *host_thp;		/* the cells' host_thp: a THP setting, or "hugetlbfs" */
	enum prefault prefault;
	const char *host_state;		/* "fresh" or "fragmented" */
	bool hugetlbfs;			/* the reference arm: guest RAM on hugetlbfs 2M pages */
};

/* per-size mTHP counters of one size (host-wide), for coverage below PMD size */
struct mthp_snap {
	bool have;
	uint64_t alloc, fallback;
};

/* what the guests of one group share: the host-wide per-size counters at boot */
struct group_shared {
	unsigned mthp_kb;		/* the group's host size below PMD size, else 0 */
	struct mthp_snap base;
	size_t n;
	struct guest_ctx *all[8];
};

/* host-side counters sampled at every record, for per-repetition deltas */
struct host_snap {
	bool have;
	uint64_t qemu_minflt;
	struct vmstat vm;
	bool have_kvm, have_pmu;
	struct kvm_vm_stats kvm;	/* KVM guests with debugfs */
	uint64_t pmu[GPMU__COUNT];	/* KVM guests on a host with a PMU */
};

/* what one guest is expected to produce, and what it did */
struct guest_ctx {
	const struct run_config *cfg;
	const struct run_io *io;
	struct results *res;
	struct guest_log *log;
	unsigned boot;			/* this boot's index in results.guests: every sample carries it */
	struct guest *g;
	const char *host_thp;
	const char *prefault;
	const char *proc_root;
	const char *host_state;
	struct group_shared *grp;
	uint64_t last_rss_kb;		/* of the guest-RAM mapping at the last sample */
	struct mthp_snap msnap;		/* per repetition */
	struct host_snap snap;
	double t_create;
	bool got_first, got_end;
	uint32_t next_seq;
	int qemu_pid;
	bool kvm;		/* a KVM guest: KVM stats and guest-mode counters apply */
	bool pmu_tried;
	struct guest_pmu pmu;
	struct err err;		/* a protocol violation that stops this guest */
};

static bool in_list(const char list[][THP_NAME_LEN], size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* guest settings of this run: never + the treatments */
static bool guest_thp_planned(const struct run_config *cfg, const char *s)
{
	return !strcmp(s, "never") || in_list(cfg->guest_thp, cfg->n_guest_thp, s);
}

static bool workload_planned(const struct run_config *cfg, const char *w)
{
	size_t i;

	for (i = 0; i < cfg->n_wl; i++)
		if (!strcmp(w, cfg->wl[i]))
			return true;
	return false;
}

static bool is_label(const char *key)
{
	static const char *const labels[] = {
		"workload", "guest_thp", "rep", "warmup", "thp_enabled", "thp_defrag", "seed", "madvise",
		"size_bytes", "accesses", "guest_huge_pct", "reason", "target",
	};
	size_t i;

	for (i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(key, labels[i]))
			return true;
	return false;
}

static int read_u64_file(const char *path, uint64_t *v)
{
	char buf[64];
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ok && parse_u64(buf, v) == 0 ? 0 : -EBADMSG;
}

/* hugepages-<kb>kB/stats/anon_fault_{alloc,fallback} (Linux 6.9+) */
static void mthp_read(const char *root, unsigned kb, struct mthp_snap *m)
{
	char p[PATH_MAX];
	const char *r = strcmp(root, "/") ? root : "";

	m->have = false;
	snprintf(p, sizeof(p), "%s%s/hugepages-%ukB/stats/anon_fault_alloc", r, THP_DIR, kb);
	if (read_u64_file(p, &m->alloc))
		return;
	snprintf(p, sizeof(p), "%s%s/hugepages-%ukB/stats/anon_fault_fallback", r, THP_DIR, kb);
	if (read_u64_file(p, &m->fallback))
		return;
	m->have = true;
}

static void sample_host_coverage(struct guest_ctx *gc, struct cell *c)
{
	struct smaps_cov cov;
	struct err e = ERR_INIT;

	if (gc->qemu_pid <= 0)
		gc->qemu_pid = guest_qemu_pid(gc->g);
	if (gc->qemu_pid <= 0) {
		progress(gc->io, "warning: QEMU pid of %s unknown: no host coverage evidence", gc->log->name);
		return;
	}
	if (smaps_guest_ram(gc->proc_root, gc->qemu_pid, gc->cfg->memory, &cov, &e)) {
		progress(gc->io, "warning: %s", e.msg);
		return;
	}
	gc->last_rss_kb = cov.rss_kb;
	if (gc->grp && gc->grp->mthp_kb) {
		/* smaps has no per-size count below PMD size: the host-wide allocations of
		 * that size since the group's guests booted, over their resident guest RAM */
		struct mthp_snap now;
		uint64_t rss = 0;
		size_t i;

		mthp_read(gc->cfg->sysfs_root, gc->grp->mthp_kb, &now);
		for (i = 0; i < gc->grp->n; i++)
			rss += gc->grp->all[i]->last_rss_kb;
		snprintf(c->host_cov_source, sizeof(c->host_cov_source), "mthp_stats");
		if (now.have && gc->grp->base.have && rss) {
			double pct = (double)(now.alloc - gc->grp->base.alloc) * gc->grp->mthp_kb / (double)rss * 100.0;
			struct metric *raw = cell_metric(c, "host_mthp_cov_raw_pct", NULL);

			/* host-wide: QEMU's other memory and other processes count too, so the
			 * raw ratio can pass 100; kept uncapped beside the capped coverage */
			if (raw)
				metric_add_boot(raw, pct, gc->boot);
			metric_add_boot(&c->host_cov, pct > 100 ? 100 : pct, gc->boot);
		}
		return;
	}
	metric_add_boot(&c->host_cov, smaps_huge_pct(&cov), gc->boot);
}

/* host telemetry deltas since the previous record (one repetition), recorded as
 * per-cell metrics: the QEMU process's minor faults and the host's THP and
 * compaction counters (host-wide: other activity on the host shows up too) */
static const char *const vmstat_keys[] = {
	"thp_fault_alloc", "thp_fault_fallback", "thp_collapse_alloc", "thp_split_page",
	"thp_split_pmd", "compact_stall", "compact_success", "compact_fail",
};

static void host_snap_take(struct guest_ctx *gc, struct host_snap *s)
{
	/* every flag false until its counters are read: a TCG guest has no KVM stats */
	memset(s, 0, sizeof(*s));
	if (gc->qemu_pid <= 0)
		gc->qemu_pid = guest_qemu_pid(gc->g);
	if (gc->qemu_pid <= 0 || proc_minflt(gc->proc_root, gc->qemu_pid, &s->qemu_minflt, NULL) ||
	    vmstat_read(gc->proc_root, &s->vm, NULL))
		return;
	s->have = true;
	if (!gc->kvm)
		return;
	s->have_kvm = kvm_vm_stats_read("/", gc->qemu_pid, &s->kvm, NULL) == 0;
	if (!gc->pmu_tried) {
		/* guest-mode TLB misses on the vCPU threads, opened once the guest runs */
		int tids[VCPU_MAX], n = vcpu_threads(gc->proc_root, gc->qemu_pid, tids, VCPU_MAX, NULL);
		struct err pe = ERR_INIT;

		gc->pmu_tried = true;
		if (n > 0 && guest_pmu_open(&gc->pmu, tids, (size_t)n, &pe))
			snprintf(gc->res->pmu_note, sizeof(gc->res->pmu_note), "not available: %.150s", pe.msg);
	}
	s->have_pmu = gc->pmu.open && guest_pmu_read(&gc->pmu, s->pmu, NULL) == 0;
}

/* KVM's view per repetition: mapping sizes now (gauges), splits and guest-mode TLB misses since */
static void kvm_telemetry(struct guest_ctx *gc, struct cell *c, const struct host_snap *now)
{
	struct metric *m;
	size_t i;

	if (now->have_kvm) {
		double pct = kvm_huge_pct(&now->kvm);

		for (i = 0; i < KVM_STAT__COUNT; i++) {
			char name[64];

			if (!now->kvm.have[i])
				continue;
			snprintf(name, sizeof(name), "host_kvm_%s", kvm_stat_name((enum kvm_stat)i));
			if (i == KVM_NX_LPAGE_SPLITS) {
				if (!gc->snap.have_kvm || !gc->snap.kvm.have[i])
					continue;
				m = cell_metric(c, name, NULL);
				if (m)
					metric_add_boot(m, (double)(now->kvm.v[i] - gc->snap.kvm.v[i]), gc->boot);
			} else if ((m = cell_metric(c, name, NULL))) {
				metric_add_boot(m, (double)now->kvm.v[i], gc->boot);
			}
		}
		if (pct == pct && (m = cell_metric(c, "host_kvm_huge_pct", NULL)))
			metric_add_boot(m, pct, gc->boot);
	}
	if (now->have_pmu && gc->snap.have_pmu)
		for (i = 0; i < GPMU__COUNT; i++) {
			char name[64];

			snprintf(name, sizeof(name), "host_guest_%s", guest_pmu_event_name((enum guest_pmu_event)i));
			if ((m = cell_metric(c, name, NULL)))
				metric_add_boot(m, (double)(now->pmu[i] - gc->snap.pmu[i]), gc->boot);
		}
}

static void host_telemetry(struct guest_ctx *gc, struct cell *c, bool keep)
{
	struct host_snap now;
	struct metric *m;
	size_t i;

	host_snap_take(gc, &now);
	if (gc->grp && gc->grp->mthp_kb) {
		struct mthp_snap ms;

		mthp_read(gc->cfg->sysfs_root, gc->grp->mthp_kb, &ms);
		if (keep && ms.have && gc->msnap.have) {
			m = cell_metric(c, "host_mthp_fault_alloc", NULL);
			if (m)
				metric_add_boot(m, (double)(ms.alloc - gc->msnap.alloc), gc->boot);
			m = cell_metric(c, "host_mthp_fault_fallback", NULL);
			if (m)
				metric_add_boot(m, (double)(ms.fallback - gc->msnap.fallback), gc->boot);
		}
		gc->msnap = ms;
	}
	if (keep && now.have && gc->snap.have) {
		m = cell_metric(c, "host_qemu_minflt", NULL);
		if (m)
			metric_add_boot(m, (double)(now.qemu_minflt - gc->snap.qemu_minflt), gc->boot);
		for (i = 0; i < sizeof(vmstat_keys) / sizeof(vmstat_keys[0]); i++) {
			uint64_t a, b;
			char name[REC_KEY_MAX];

			if (vmstat_get(&now.vm, vmstat_keys[i], &b) || vmstat_get(&gc->snap.vm, vmstat_keys[i], &a))
				continue;
			snprintf(name, sizeof(name), "host_%s", vmstat_keys[i]);
			m = cell_metric(c, name, NULL);
			if (m)
				metric_add_boot(m, (double)(b - a), gc->boot);
		}
		kvm_telemetry(gc, c, &now);
	}
	gc->snap = now;
}

static struct cell *record_cell(struct guest_ctx *gc, const struct record *rec)
{
	const char *w = rec_get(rec, "workload");
	const char *gt = rec_get(rec, "guest_thp");
	struct cell *c;

	if (!w || !gt) {
		err_set(&gc->err, -EPROTO, "guest %s sent a %s record without workload/guest_thp",
			gc->log->name, rec_type_name(rec->type));
		return NULL;
	}
	if (!workload_planned(gc->cfg, w) || !guest_thp_planned(gc->cfg, gt)) {
		err_set(&gc->err, -EPROTO, "guest %s sent a record for a cell that was not asked for (%s/%s)",
			gc->log->name, w, gt);
		return NULL;
	}
	{
		struct cell_key k = { "guest", gc->host_thp, gc->prefault, gt, w, rec_get(rec, "variant"), gc->host_state };

		c = results_cell_key(gc->res, &k, &gc->err);
	}
	if (c)
		snprintf(c->guest, sizeof(c->guest), "%s", gc->log->name);
	return c;
}

static int on_result(struct guest_ctx *gc, const struct record *rec)
{
	struct cell *c = record_cell(gc, rec);
	uint64_t warm = 0;
	double v;
	size_t i;

	if (!c)
		return 1;
	if (rec_get(rec, "warmup") && rec_get_u64(rec, "warmup", &warm)) {
		err_set(&gc->err, -EPROTO, "guest %s sent a bad warmup field", gc->log->name);
		return 1;
	}
	if (warm) {
		c->warmups++;
		host_telemetry(gc, c, false);
		return 0;
	}
	for (i = 0; i < rec->nfields; i++) {
		const struct rec_field *f = &rec->f[i];
		struct metric *m;

		if (is_label(f->key))
			continue;
		if (rec_get_f64(rec, f->key, &v))
			continue;	/* non-numeric annotation */
		m = cell_metric(c, f->key, &gc->err);
		if (!m)
			return 1;
		metric_add_boot(m, v, gc->boot);
	}
	/* the workload's own evidence (lib/wltraits.c): its coverage field is the guest side's */
	cell_take_evidence(c, rec, &c->guest_cov, gc->boot);
	{
		size_t before = c->host_cov.n;
		struct guest_cellstat *cs = c->variant[0] ? NULL : guest_cellstat(gc->log, c->guest_thp, c->workload);

		sample_host_coverage(gc, c);
		if (cs) {
			cs->reps++;
			if (c->host_cov.n > before)
				cs->cov_sum += c->host_cov.samples[c->host_cov.n - 1], cs->ncov++;
			if (rec_get_f64(rec, "fault_ns_per_4k", &v) == 0)
				cs->fault_sum += v, cs->nfault++;
			if (rec_get_f64(rec, "access_ns", &v) == 0)
				cs->access_sum += v, cs->naccess++;
		}
	}
	host_telemetry(gc, c, true);
	c->reps_ok++;
	progress(gc->io, "  host=%s/%s guest=%s %s%s%s rep %u done", gc->host_thp, gc->prefault, c->guest_thp,
		 c->workload, c->variant[0] ? "/" : "", c->variant, c->reps_ok);
	return 0;
}

static int on_record(void *opaque, enum guest_event ev, const struct record *rec, const char *reason)
{
	struct guest_ctx *gc = opaque;
	char msg[256];
	struct cell *c;

	if (gc->io->bar)
		progress_tick(gc->io->bar);
	if (ev == GUEST_EV_REJECTED) {
		gc->log->rejected++;
		progress(gc->io, "warning: %s: rejected a line from the guest: %s", gc->log->name, reason);
		if (gc->log->rejected > MAX_REJECTED) {
			err_set(&gc->err, -EPROTO, "guest %s sent more than %d malformed lines", gc->log->name,
				MAX_REJECTED);
			return 1;
		}
		return 0;
	}
	if (!gc->got_first) {
		gc->got_first = true;
		gc->log->create_to_first_record_s = mono_s() - gc->t_create;
	}
	if (rec->seq != gc->next_seq) {
		err_set(&gc->err, -EPROTO, "guest %s sent record %u where %u was due (lost or replayed output)",
			gc->log->name, rec->seq, gc->next_seq);
		return 1;
	}
	gc->next_seq++;
	gc->log->records++;
	switch (rec->type) {
	case REC_HELLO:
		snprintf(gc->log->guest_kernel, sizeof(gc->log->guest_kernel), "%s",
			 rec_get(rec, "kernel") ? rec_get(rec, "kernel") : "");
		snprintf(gc->log->mthp_sizes_kb, sizeof(gc->log->mthp_sizes_kb), "%s",
			 rec_get(rec, "mthp_sizes_kb") ? rec_get(rec, "mthp_sizes_kb") : "unknown (older guest program)");
		progress(gc->io, "  %s is up (%.1f s after create)", gc->log->name,
			 gc->log->create_to_first_record_s);
		host_snap_take(gc, &gc->snap);
		if (gc->grp && gc->grp->mthp_kb)
			mthp_read(gc->cfg->sysfs_root, gc->grp->mthp_kb, &gc->msnap);
		return 0;
	case REC_RESULT:
		return on_result(gc, rec);
	case REC_FAIL:
	case REC_SKIP:
		snprintf(msg, sizeof(msg), "%s: %s", rec->type == REC_FAIL ? "failed" : "skipped",
			 rec_get(rec, "reason") ? rec_get(rec, "reason") : "no reason given");
		if (!rec_get(rec, "workload")) {
			/* the runner itself failed */
			err_set(&gc->err, -EIO, "guest %s %s", gc->log->name, msg);
			return 1;
		}
		c = record_cell(gc, rec);
		if (!c)
			return 1;
		cell_add_failure(c, msg);
		progress(gc->io, "  host=%s/%s guest=%s %s %s", gc->host_thp, gc->prefault, c->guest_thp, c->workload,
			 msg);
		return 0;
	case REC_INFO:
		return 0;
	case REC_END:
		gc->got_end = true;
		return 1;
	case REC__COUNT:
		break;
	}
	return 0;
}

/* a planned workload reads a kernel source (kcompile): it needs the source disk */
static bool kcompile_planned(const struct run_config *cfg)
{
	size_t w;

	for (w = 0; w < cfg->n_wl; w++) {
		const struct workload_info *wi = workload_find(cfg->wl_info, cfg->n_wl_info, cfg->wl[w]);

		if (wi && wi->has_src)
			return true;
	}
	return false;
}

/*
 * The per-guest limit: --timeout for everything, plus --kcompile-timeout for
 * every kcompile run the guest makes (each round, each guest THP setting).
 */
static uint64_t guest_timeout_ms(const struct run_config *cfg)
{
	uint64_t runs = (uint64_t)(cfg->warmup + cfg->reps) * (1 + cfg->n_guest_thp);

	return cfg->timeout_ms + (kcompile_planned(cfg) ? runs * cfg->kc_timeout_ms : 0);
}

static void append(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void append(char *dst, size_t len, const char *fmt, ...)
{
	size_t n = strlen(dst);
	va_list ap;

	if (n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(dst + n, len - n, fmt, ap);
	va_end(ap);
}

static void build_cmdline(const struct run_config *cfg, const struct image *img, uint64_t seed, char *buf,
			  size_t len)
{
	size_t i;

	snprintf(buf, len, "%s thpeval.guest_thp=never", img->cmdline);
	for (i = 0; i < cfg->n_guest_thp; i++)
		append(buf, len, ",%s", cfg->guest_thp[i]);
	append(buf, len, " thpeval.workloads=");
	for (i = 0; i < cfg->n_wl; i++)
		append(buf, len, "%s%s", i ? "," : "", cfg->wl[i]);
	append(buf, len, " thpeval.reps=%u thpeval.warmup=%u thpeval.size=%llu", cfg->reps, cfg->warmup,
	       (unsigned long long)cfg->size);
	if (cfg->cold_reps)
		append(buf, len, " thpeval.cold=%u", cfg->cold_reps);
	append(buf, len, " thpeval.accesses=%llu thpeval.seed=%llu thpeval.timeout=%llu",
	       (unsigned long long)cfg->accesses, (unsigned long long)seed,
	       (unsigned long long)(cfg->timeout_ms / 1000));
	if (kcompile_planned(cfg))
		append(buf, len, " thpeval.kcompile=%s:%s thpeval.long_timeout=%llu", cfg->kc_config,
		       cfg->kc_target, (unsigned long long)(cfg->kc_timeout_ms / 1000));
}

/* record a failure in every planned cell of this host group that lacks repetitions */
static void fail_missing(struct results *res, const struct run_config *cfg, const struct host_group *hg,
			 unsigned want_reps, const char *reason)
{
	size_t i, w;

	for (w = 0; w < cfg->n_wl; w++)
		for (i = 0; i <= cfg->n_guest_thp; i++) {
			const char *gt = i == 0 ? "never" : cfg->guest_thp[i - 1];
			struct cell_key k = { "guest", hg->host_thp, prefault_name(hg->prefault), gt, cfg->wl[w], NULL,
					      hg->host_state };
			struct cell *c = results_cell_key(res, &k, NULL);

			if (c && c->reps_ok + c->reps_failed < want_reps)
				cell_add_failure(c, reason);
		}
}

/* one guest of a group in flight */
struct guest_run {
	struct guest_ctx gc;
	struct guest_log *log;
	char name[64], overlay[PATH_MAX];
	char *xml;
	bool started, done;
	int r;
	struct err e;
	double t_end;
};

/*
 * --pin=auto: QEMU's other threads on host CPU 0, vCPU i of guest gi (of n)
 * on CPU 1 + gi * vcpus + i, where the host has a CPU for each; false (no
 * pinning) where it has not
 */
static bool guest_pins(const struct run_config *cfg, unsigned gi, unsigned n, int *pins)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned i;

	if (cfg->vcpus > 64 || ncpu < 2 || (long)n * cfg->vcpus + 1 > ncpu)
		return false;
	for (i = 0; i < cfg->vcpus; i++)
		pins[i] = (int)(1 + gi * cfg->vcpus + i);
	return true;
}

static int gr_start(const struct run_config *cfg, const struct run_io *io, struct virt *v, enum accel accel,
		    const struct image *img, const struct srcdisk *sd, const struct host_group *hg, unsigned idx,
		    unsigned gi, unsigned n, unsigned round, struct results *res, struct group_shared *grp,
		    struct guest_run *gr)
{
	char cmdline[2048];
	int pins[64];
	struct domain_spec spec = { 0 };
	struct guest_opts go = { 0 };
	struct err *e = &gr->e;
	struct guest_log *log;
	int r;

	snprintf(gr->name, sizeof(gr->name), "thpeval-%d-%u", (int)getpid(), idx);
	log = results_guest_add(res, e);
	if (!log)
		return e->code;
	gr->log = log;
	snprintf(log->name, sizeof(log->name), "%s", gr->name);
	snprintf(log->host_thp, sizeof(log->host_thp), "%s", hg->host_thp);
	snprintf(log->prefault, sizeof(log->prefault), "%s", prefault_name(hg->prefault));
	snprintf(log->host_state, sizeof(log->host_state), "%s", hg->host_state);
	log->index = gi;
	log->concurrency = n;
	log->round = round;
	snprintf(log->status, sizeof(log->status), "failed");
	if (snprintf(log->xml_path, sizeof(log->xml_path), "%s/guests/%s.xml", cfg->out_dir, gr->name) >=
		    (int)sizeof(log->xml_path) ||
	    snprintf(log->console_path, sizeof(log->console_path), "%s/guests/%s.console.log", cfg->out_dir,
		     gr->name) >= (int)sizeof(log->console_path) ||
	    snprintf(gr->overlay, sizeof(gr->overlay), "%s/overlays/%s.qcow2", cfg->cache_dir, gr->name) >=
		    (int)sizeof(gr->overlay))
		return err_set(e, -ENAMETOOLONG, "--out or --cache-dir path too long");

	/* per-guest writable layers live beside the images: QEMU (an unprivileged
	 * user under qemu:///system) must be able to reach them */
	{
		char d[PATH_MAX];

		if (snprintf(d, sizeof(d), "%s/overlays", cfg->cache_dir) >= (int)sizeof(d))
			r = err_set(e, -ENAMETOOLONG, "--cache-dir path too long");
		else
			r = mkdir_p(d, 0755, e);
	}
	if (!r)
		r = image_overlay_create(img, gr->overlay, e);
	if (r)
		return r;

	build_cmdline(cfg, img, cfg->seed + round, cmdline, sizeof(cmdline));
	spec.name = gr->name;
	spec.memory_bytes = cfg->memory;
	spec.vcpus = cfg->vcpus;
	spec.accel = accel;
	spec.kernel = img->kernel;
	spec.initrd = img->initrd;
	spec.cmdline = cmdline;
	spec.disk_path = gr->overlay;
	spec.disk_format = "qcow2";
	spec.ro_disk_path = sd ? sd->disk : NULL;
	spec.channel_name = DOMAIN_CHANNEL_NAME;
	spec.prefault = hg->prefault;
	spec.memfd = cfg->memfd && !hg->hugetlbfs;
	spec.hugetlbfs = hg->hugetlbfs;
	spec.description = "thpeval guest";
	spec.emulator_pin = -1;
	if (cfg->pin && guest_pins(cfg, gi, n, pins)) {
		spec.vcpu_pin = pins;
		spec.emulator_pin = 0;
	}
	r = domain_xml(&spec, &gr->xml, e);
	if (r)
		return r;
	r = write_file_atomic(log->xml_path, gr->xml, strlen(gr->xml), 0644, e);
	if (r)
		return r;

	go.xml = gr->xml;
	go.console_log_path = log->console_path;
	go.channel_name = DOMAIN_CHANNEL_NAME;
	gr->gc.cfg = cfg;
	gr->gc.io = io;
	gr->gc.res = res;
	gr->gc.log = log;
	gr->gc.boot = (unsigned)(log - res->guests);
	gr->gc.host_thp = hg->host_thp;
	gr->gc.prefault = prefault_name(hg->prefault);
	gr->gc.host_state = hg->host_state;
	gr->gc.grp = grp;
	gr->gc.proc_root = "/proc";
	gr->gc.qemu_pid = -1;
	gr->gc.kvm = accel == ACCEL_KVM;
	if (n > 1)
		progress(io, "booting %s (guest %u of %u; host THP %s, allocation %s, host %s, %s)", gr->name, gi + 1, n,
			 hg->host_thp, gr->gc.prefault, hg->host_state, accel_name(accel));
	else
		progress(io, "booting %s (host THP %s, allocation %s%s%s, %s)", gr->name, hg->host_thp, gr->gc.prefault,
			 strcmp(hg->host_state, "fresh") ? ", host " : "",
			 strcmp(hg->host_state, "fresh") ? hg->host_state : "", accel_name(accel));
	gr->gc.t_create = mono_s();
	r = guest_start(v, &go, &gr->gc.g, e);
	if (r)
		return r;
	gr->started = true;
	return 0;
}

/* one non-blocking round for one guest: true when it is finished (gr->r says how) */
static bool gr_poll(const struct run_config *cfg, const struct run_io *io, struct guest_run *gr, double t0)
{
	enum guest_poll_result pr;
	struct err *e = &gr->e;
	int r;

	r = guest_poll(gr->gc.g, 0, (volatile const int *)io->stop, on_record, &gr->gc, &pr, e);
	if (r) {
		gr->r = r;
		return true;
	}
	if (err_isset(&gr->gc.err)) {
		gr->r = err_set(e, gr->gc.err.code, "%s", gr->gc.err.msg);
		return true;
	}
	if (gr->gc.got_end) {
		/* The evidence was sampled on every result; the guest now waits for a "bye"
		 * to power off. We do not let it: a guest shutting down by itself while a
		 * client finishes its streams can deadlock libvirtd 9.0 (the domain's
		 * chardevs are freed while the stream holds them). guest_destroy() aborts
		 * both streams first, then destroys the domain: one thing at a time. */
		snprintf(gr->log->status, sizeof(gr->log->status), "ok");
		gr->r = 0;
		return true;
	}
	switch (pr) {
	case GUEST_POLL_INTERRUPTED:
		snprintf(gr->log->status, sizeof(gr->log->status), "interrupted");
		gr->r = err_set(e, -EINTR, "interrupted");
		return true;
	case GUEST_POLL_GUEST_GONE:
		gr->r = err_set(e, -EIO, "guest %s stopped before it finished (QEMU killed or guest crashed): see %s",
				gr->name, gr->log->console_path);
		return true;
	default:
		break;
	}
	if (mono_s() - t0 >= (double)guest_timeout_ms(cfg) / 1000) {
		snprintf(gr->log->status, sizeof(gr->log->status), "timeout");
		gr->r = err_set(e, -ETIMEDOUT, "guest %s did not finish within %llu s: destroyed it (raise --timeout?)",
				gr->name, (unsigned long long)(guest_timeout_ms(cfg) / 1000));
		return true;
	}
	return false;
}

static void gr_finish(struct guest_run *gr)
{
	guest_pmu_close(&gr->gc.pmu);
	if (gr->gc.g) {
		double t0 = mono_s();

		guest_destroy(gr->gc.g);
		gr->gc.g = NULL;
		if (gr->r == 0)
			gr->log->teardown_s = mono_s() - gr->t_end;
		else
			gr->log->teardown_s = mono_s() - t0;
		gr->log->total_s = mono_s() - gr->gc.t_create;
	}
	if (gr->overlay[0])
		unlink(gr->overlay);
	free(gr->xml);
	gr->xml = NULL;
	if (gr->r && gr->log)
		snprintf(gr->log->error, sizeof(gr->log->error), "%s", gr->e.msg);
}

/*
 * The guests of one host group: n of them boot one after the other, then run
 * the same cells at the same time, each with its own records, coverage and
 * telemetry (their samples go to the same cells). Returns 0 when every guest
 * finished; otherwise the first error (e), the cells that lack repetitions
 * say why. *idx advances by n.
 */
static int run_guests(const struct run_config *cfg, const struct run_io *io, struct virt *v, enum accel accel,
		      const struct image *img, const struct srcdisk *sd, const struct host_group *hg, unsigned *idx,
		      unsigned round, struct results *res, struct err *e)
{
	unsigned n = cfg->guests ? cfg->guests : 1, i, left = 0;
	struct group_shared grp = { 0 };
	struct guest_run *gr;
	double t0;
	int r = 0;

	gr = calloc(n, sizeof(*gr));
	if (!gr)
		return err_set(e, -ENOMEM, "out of memory for %u guests", n);
	{
		unsigned kb;
		char mode[16];

		if (thp_sized_value(hg->host_thp, &kb, mode, sizeof(mode)) && kb < 2048) {
			grp.mthp_kb = kb;
			mthp_read(cfg->sysfs_root, kb, &grp.base);
			if (!grp.base.have)
				progress(io, "warning: no hugepages-%ukB/stats/anon_fault_alloc on this host: no coverage evidence for %s",
					 kb, hg->host_thp);
		}
	}
	for (i = 0; i < n; i++) {
		err_clear(&gr[i].e);
		grp.all[grp.n++] = &gr[i].gc;
	}
	for (i = 0; i < n && !*io->stop; i++) {
		gr[i].r = gr_start(cfg, io, v, accel, img, sd, hg, (*idx)++, i, n, round, res, &grp, &gr[i]);
		if (gr[i].r)
			gr[i].done = true;
		else
			left++;
	}
	t0 = mono_s();
	while (left && !*io->stop) {
		for (i = 0; i < n; i++) {
			if (gr[i].done)
				continue;
			if (gr_poll(cfg, io, &gr[i], t0)) {
				gr[i].done = true;
				gr[i].t_end = mono_s();
				left--;
			}
		}
		if (left && virt_event_wait(20) < 0)
			break;
	}
	for (i = 0; i < n; i++) {
		if (!gr[i].done) {
			gr[i].r = err_set(&gr[i].e, -EINTR, "interrupted");
			if (gr[i].log)
				snprintf(gr[i].log->status, sizeof(gr[i].log->status), "interrupted");
		}
		gr_finish(&gr[i]);
		if (gr[i].r && !r) {
			r = gr[i].r;
			err_set(e, r, "%s", gr[i].e.msg);
		}
	}
	if (r)
		fail_missing(res, cfg, hg, (round + 1) * cfg->reps * n, e->msg);
	free(gr);
	return r;
}

/* ---- the bare-host rows: the same workload binary, run directly on the host ---- */

struct local_ctx {
	const struct run_config *cfg;
	const struct run_io *io;
	struct results *res;
	const char *host_thp;
	const char *workload;
	bool warmup;
	unsigned results;
	char fail[256];
	unsigned round;			/* the samples' boot id: the host setting is applied anew each round */
};

static int on_local_record(void *opaque, const struct record *rec, const char *rejected)
{
	struct local_ctx *lc = opaque;
	struct cell_key k = { "host", lc->host_thp, "none", "none", lc->workload, NULL, NULL };
	struct cell *c;
	double v;
	size_t i;

	if (!rec) {
		snprintf(lc->fail, sizeof(lc->fail), "workload printed a malformed record: %s", rejected);
		return 1;
	}
	if (rec->type == REC_FAIL || rec->type == REC_SKIP) {
		snprintf(lc->fail, sizeof(lc->fail), "%s: %s", rec->type == REC_FAIL ? "failed" : "skipped",
			 rec_get(rec, "reason") ? rec_get(rec, "reason") : "no reason given");
		return 0;
	}
	if (rec->type != REC_RESULT)
		return 0;
	if (!rec_get(rec, "workload") || strcmp(rec_get(rec, "workload"), lc->workload)) {
		snprintf(lc->fail, sizeof(lc->fail), "record for another workload");
		return 1;
	}
	k.variant = rec_get(rec, "variant");
	c = results_cell_key(lc->res, &k, NULL);
	if (!c)
		return 1;
	if (lc->warmup) {
		c->warmups++;
		return 0;
	}
	for (i = 0; i < rec->nfields; i++) {
		struct metric *m;

		if (is_label(rec->f[i].key) || rec_get_f64(rec, rec->f[i].key, &v))
			continue;
		m = cell_metric(c, rec->f[i].key, NULL);
		if (m)
			metric_add_boot(m, v, lc->round);
	}
	/* on the bare host the workload's own coverage (lib/wltraits.c) is the host evidence */
	cell_take_evidence(c, rec, &c->host_cov, lc->round);
	c->reps_ok++;
	lc->results++;
	return 0;
}

/* the host's per-size mTHP knobs, and whether this run sets any of them */
struct host_plan {
	unsigned sizes[16];		/* kB, with a hugepages-<N>kB/enabled file */
	size_t nsizes;
	bool sized;			/* a SIZE:MODE value is planned */
	const struct thp_settings *before;
};

/*
 * Put the host THP setting of a group in place. A plain value sets 'enabled'
 * (and, in a run that also sets sizes, every size back to its value before the
 * run; 'never' turns every size off too). SIZE:MODE sets that size to MODE and
 * every other size and 'enabled' to never, so that the size is alone.
 */
static int apply_host_thp(struct host_session *hs, const struct host_plan *hp, const char *value, struct err *e)
{
	char key[THP_KEY_MAX], mode[16];
	unsigned kb;
	size_t i;
	int r;

	if (thp_sized_value(value, &kb, mode, sizeof(mode))) {
		for (i = 0; i < hp->nsizes; i++) {
			snprintf(key, sizeof(key), "hugepages-%ukB/enabled", hp->sizes[i]);
			r = host_session_set(hs, key, hp->sizes[i] == kb ? mode : "never", e);
			if (r)
				return r;
		}
		return host_session_set(hs, "enabled", "never", e);
	}
	for (i = 0; hp->sized && i < hp->nsizes; i++) {
		const char *orig;

		snprintf(key, sizeof(key), "hugepages-%ukB/enabled", hp->sizes[i]);
		orig = thp_settings_get(hp->before, key);
		if (!strcmp(value, "never"))
			orig = "never";
		if (orig && (r = host_session_set(hs, key, orig, e)))
			return r;
	}
	return host_session_set(hs, "enabled", value, e);
}

static int run_host_target(const struct run_config *cfg, const struct run_io *io, struct host_session *hs,
			   const struct host_plan *hp, const struct srcdisk *sd, const char *host_thp, unsigned round,
			   struct results *res, struct err *e)
{
	unsigned rep;
	size_t w;
	int r;

	r = apply_host_thp(hs, hp, host_thp, e);
	if (r)
		return r;
	progress(io, "round %u, bare host, host THP enabled=%s", round + 1, host_thp);
	for (w = 0; w < cfg->n_wl && !*io->stop; w++) {
		const struct workload_info *wi = workload_find(cfg->wl_info, cfg->n_wl_info, cfg->wl[w]);

		for (rep = 0; rep < cfg->warmup + cfg->reps && !*io->stop; rep++) {
			char a[12][PATH_MAX + 16];
			const char *args[14];
			struct local_ctx lc = { cfg, io, res, host_thp, cfg->wl[w], rep < cfg->warmup, 0, "", round };
			struct err le = ERR_INIT;
			size_t n = 0, k;

			snprintf(a[n++], sizeof(a[0]), "%s", cfg->wl[w]);
			snprintf(a[n++], sizeof(a[0]), "--rep=%u", round * (cfg->warmup + cfg->reps) + rep);
			snprintf(a[n++], sizeof(a[0]), "--warmup=%d", rep < cfg->warmup);
			snprintf(a[n++], sizeof(a[0]), "--seed=%llu", (unsigned long long)(cfg->seed + round));
			if (wi && wi->has_size)
				snprintf(a[n++], sizeof(a[0]), "--size=%llu", (unsigned long long)cfg->size);
			if (wi && wi->has_accesses)
				snprintf(a[n++], sizeof(a[0]), "--accesses=%llu", (unsigned long long)cfg->accesses);
			if (wi && wi->has_madvise)
				snprintf(a[n++], sizeof(a[0]), "--madvise=%d", strstr(host_thp, "madvise") != NULL);
			if (wi && wi->has_src && sd) {
				/* the host copy of the guests' source disk; O= trees in /tmp */
				snprintf(a[n++], sizeof(a[0]), "--src=%s", sd->tree);
				snprintf(a[n++], sizeof(a[0]), "--config=%s", cfg->kc_config);
				snprintf(a[n++], sizeof(a[0]), "--target=%s", cfg->kc_target);
			}
			for (k = 0; k < n; k++)
				args[k] = a[k];
			args[n] = NULL;
			r = workload_run_local(cfg->guest_bin, args,
					       (int)(wi && wi->has_src ? cfg->kc_timeout_ms : cfg->timeout_ms), io->stop,
					       on_local_record, &lc, &le);
			if (r == -EINTR)
				return err_set(e, -EINTR, "interrupted");
			if (r || lc.fail[0]) {
				struct cell_key k2 = { "host", host_thp, "none", "none", cfg->wl[w], NULL, NULL };
				struct cell *c = results_cell_key(res, &k2, NULL);

				if (c)
					cell_add_failure(c, lc.fail[0] ? lc.fail : le.msg);
				progress(io, "  bare host %s %s: %s", host_thp, cfg->wl[w], lc.fail[0] ? lc.fail : le.msg);
			} else if (rep >= cfg->warmup) {
				progress(io, "  bare host=%s %s rep %u done", host_thp, cfg->wl[w], rep - cfg->warmup + 1);
			}
		}
	}
	return 0;
}

/*
 * libvirtd died or was restarted under us: reconnect (for up to a minute) and
 * make sure the guest we lost is gone, then go on with the next group.
 */
static int reconnect_if_lost(const struct run_config *cfg, const struct run_io *io, struct virt **v, unsigned idx,
			     struct err *e)
{
	char name[64];
	double t0 = mono_s();
	struct err ce = ERR_INIT;

	if (virt_alive(*v))
		return 0;
	progress(io, "warning: lost the connection to libvirtd: reconnecting to '%s'", cfg->uri);
	virt_close(*v);
	*v = NULL;
	while (!*io->stop) {
		err_clear(&ce);
		if (virt_open(cfg->uri, v, &ce) == 0)
			break;
		if (mono_s() - t0 > 60)
			return err_set(e, ce.code, "libvirtd went away and did not come back within 60 s: %s", ce.msg);
		usleep(500 * 1000);
	}
	if (!*v)
		return err_set(e, -EINTR, "interrupted while reconnecting to libvirtd");
	{
		unsigned n = cfg->guests ? cfg->guests : 1, k;

		/* the group's guests were idx-n+1 .. idx */
		for (k = 0; k < n && k <= idx; k++) {
			snprintf(name, sizeof(name), "thpeval-%d-%u", (int)getpid(), idx - k);
			if (virt_destroy_name(*v, name, &ce))
				progress(io, "warning: %s", ce.msg);
		}
	}
	progress(io, "warning: reconnected to libvirtd after %.1f s; the lost guest's cells are marked failed",
		 mono_s() - t0);
	return 0;
}

/* what host telemetry this host can give beyond smaps and vmstat, and why not */
static void telemetry_notes(struct results *res, enum accel accel, bool guests)
{
	struct perf_event_attr pa;
	long fd;

	if (!guests)
		snprintf(res->kvm_stats_note, sizeof(res->kvm_stats_note), "not available: no guests (--target=host)");
	else if (accel != ACCEL_KVM)
		snprintf(res->kvm_stats_note, sizeof(res->kvm_stats_note),
			 "not available: guests run under %s; pages_4k/2m/1g and nx_lpage_splits exist only for KVM guests",
			 accel_name(accel));
	else if (access("/sys/kernel/debug/kvm", R_OK) != 0)
		snprintf(res->kvm_stats_note, sizeof(res->kvm_stats_note),
			 "not available: /sys/kernel/debug/kvm is not readable (mount debugfs)");
	else
		snprintf(res->kvm_stats_note, sizeof(res->kvm_stats_note),
			 "collected per repetition from debugfs: host_kvm_pages_4k/2m/1g (mapped now), "
			 "host_kvm_huge_pct, host_kvm_nx_lpage_splits (since the previous repetition)");
	if (guests && accel != ACCEL_KVM) {
		snprintf(res->pmu_note, sizeof(res->pmu_note),
			 "not available: guests run under %s, which has no guest mode to count TLB walks in",
			 accel_name(accel));
		return;
	}
	memset(&pa, 0, sizeof(pa));
	pa.type = PERF_TYPE_HARDWARE;
	pa.size = sizeof(pa);
	pa.config = PERF_COUNT_HW_CPU_CYCLES;
	pa.disabled = 1;
	pa.exclude_kernel = 1;
	fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0);
	if (fd < 0)
		snprintf(res->pmu_note, sizeof(res->pmu_note),
			 "not available: no hardware PMU here (perf_event_open of cpu-cycles: %s); dTLB/EPT walk counts need one",
			 strerror(errno));
	else {
		close((int)fd);
		snprintf(res->pmu_note, sizeof(res->pmu_note),
			 "collected per repetition on the vCPU threads in guest mode: host_guest_dtlb_load_misses, "
			 "host_guest_itlb_load_misses; EPT/NPT walk cycles need model-specific events and are not counted");
	}
}

/* /proc for the memory checks: <sysfs-root>/proc when a test tree has one, else the host's */
static void run_proc_root(const struct run_config *cfg, char *buf, size_t len)
{
	char p[PATH_MAX];

	snprintf(buf, len, "/proc");
	if (strcmp(cfg->sysfs_root, "/") && snprintf(p, sizeof(p), "%s/proc/meminfo", cfg->sysfs_root) < (int)sizeof(p) &&
	    access(p, R_OK) == 0 && strlen(p) - strlen("/meminfo") < len) {
		p[strlen(p) - strlen("/meminfo")] = '\0';
		strcpy(buf, p);
	}
}

/*
 * The host treatments: --host-thp, plus SIZE:always for every size the host
 * offers with --mthp-sweep. SIZE:MODE values must name a size this kernel
 * offers. Records what a guest-side sweep would need in the settings.
 */
static int plan_host_thp(const struct run_config *cfg, struct results *res, struct host_plan *hp,
			 char list[][THP_NAME_LEN], size_t *n, struct err *e)
{
	unsigned sizes[32], kb;
	size_t ns = 0, i, k;
	char mode[16], key[THP_KEY_MAX], offered[200] = "";
	int r;

	*n = 0;
	r = thp_sizes(cfg->sysfs_root, sizes, 32, &ns, e);
	if (r)
		return r;
	hp->nsizes = 0;
	for (i = 0; i < ns && hp->nsizes < 16; i++) {
		snprintf(key, sizeof(key), "hugepages-%ukB/enabled", sizes[i]);
		if (!thp_settings_get(&res->thp_before, key))
			continue;	/* shmem only */
		hp->sizes[hp->nsizes++] = sizes[i];
		append(offered, sizeof(offered), "%s%uK", offered[0] ? "," : "", sizes[i]);
	}
	for (i = 0; i < cfg->n_host_thp; i++) {
		if (thp_sized_value(cfg->host_thp[i], &kb, mode, sizeof(mode))) {
			bool have = false;

			for (k = 0; k < hp->nsizes; k++)
				have |= hp->sizes[k] == kb;
			if (!have)
				return err_set(e, -EOPNOTSUPP,
					       "host THP '%s': this host kernel offers no hugepages-%ukB/enabled (%s): use one of them",
					       cfg->host_thp[i], kb, hp->nsizes ? offered : "no per-size mTHP before Linux 6.8");
			hp->sized = true;
		}
		snprintf(list[(*n)++], THP_NAME_LEN, "%s", cfg->host_thp[i]);
	}
	if (!cfg->mthp_sweep)
		return 0;
	if (!hp->nsizes)
		return err_set(e, -EOPNOTSUPP,
			       "--mthp-sweep: this host kernel offers no per-size mTHP (no %s/hugepages-<N>kB/enabled; Linux 6.8+): drop --mthp-sweep",
			       THP_DIR);
	hp->sized = true;
	for (k = 0; k < hp->nsizes; k++) {
		char v[THP_NAME_LEN];
		bool dup = false;

		snprintf(v, sizeof(v), "%uK:always", hp->sizes[k]);
		for (i = 0; i < *n; i++)
			dup |= !strcmp(list[i], v);
		if (dup)
			continue;
		if (*n >= THP_LIST_MAX)
			return err_set(e, -E2BIG, "--mthp-sweep: %zu host settings plus %zu sizes are more than %d: shorten --host-thp",
				       cfg->n_host_thp, hp->nsizes, THP_LIST_MAX);
		snprintf(list[(*n)++], THP_NAME_LEN, "%s", v);
	}
	return 0;
}

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
static int fragment_host(const struct run_config *cfg, const struct run_io *io, struct host_session *hs,
			 const struct host_plan *hp, const struct host_group *hg, unsigned round, struct frag *fr,
			 struct frag_log *fl, struct err *e)
{
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
	r = apply_host_thp(hs, hp, "madvise", e);
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
	progress(io, "fragmenting host memory (MemAvailable %llu MiB, keeping %llu MiB free for the guests and the host%s%s%s)",
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
			progress(io, "warning: %s", pe.msg);	/* the journal has it */
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
	progress(io, "fragmented %llu MiB in %.1f s (%llu MiB of it on huge pages first); free memory in 2M blocks %llu -> %llu MiB, unusable for 2M %.1f%% -> %.1f%%; holder pid %d keeps %llu KiB",
		 (unsigned long long)(fr->bytes >> 20), fr->seconds, (unsigned long long)(fr->huge_kb >> 10),
		 (unsigned long long)(fl->free2m_before_kb >> 10), (unsigned long long)(fl->free2m_after_kb >> 10),
		 buddy_unusable_pct(fl->buddy_before, fl->orders, 9), buddy_unusable_pct(fl->buddy_after, fl->orders, 9),
		 fr->pid, (unsigned long long)fr->held_kb);
	return 0;
}

/* host-wide compaction and THP fault counters while the guests ran on the fragmented host */
static void frag_vmstat(struct frag_log *fl, const struct vmstat *vm0)
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
		progress(io, "warning: %s", e.msg);
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
	progress(io, "%sfragmenter ended: free memory in 2M blocks %llu MiB (before %llu MiB)%s",
		 fr->restored ? "" : "warning: ", (unsigned long long)(fl->free2m_undone_kb >> 10),
		 (unsigned long long)(fl->free2m_before_kb >> 10),
		 fr->restored ? (fr->compacted ? ", after compact_memory" : fr->pcp_drained ? ", after emptying the per-CPU lists" : "")
			      : ": not back to 90% of it");
}

/* the undo of the arm: the fragmenter, then proactive compaction as it was (the journal has it too) */
static void frag_undo(const struct run_io *io, struct host_session *hs, struct frag *fr, struct frag_log *fl)
{
	struct err e = ERR_INIT;

	frag_end(io, hs, fr, fl);
	if (fl && fl->proactiveness[0] && host_session_set(hs, PROACTIVE_KEY, fl->proactiveness, &e))
		progress(io, "warning: %s", e.msg);
}

/* a guest-side mTHP sweep needs per-size knobs in the guest kernel: say what it offers */
static void guest_mthp_note(const struct run_config *cfg, const struct run_io *io, struct results *res)
{
	size_t i;

	if (!cfg->mthp_sweep)
		return;
	for (i = 0; i < res->nguests; i++) {
		const struct guest_log *g = &res->guests[i];

		if (!g->mthp_sizes_kb[0])
			continue;
		if (!strcmp(g->mthp_sizes_kb, "none"))
			snprintf(res->settings.guest_mthp, sizeof(res->settings.guest_mthp),
				 "not offered by the guest kernel %s (no hugepages-<N>kB in its sysfs; Linux 6.8+): the sweep is host-side only",
				 g->guest_kernel);
		else
			snprintf(res->settings.guest_mthp, sizeof(res->settings.guest_mthp),
				 "the guest kernel %s offers %s kB; this version sweeps the host sizes only", g->guest_kernel,
				 g->mthp_sizes_kb);
		progress(io, "guest-side mTHP sweep: %s", res->settings.guest_mthp);
		return;
	}
}

/* Fisher-Yates with splitmix64: the order is reproducible from the recorded seed */
static void shuffle_groups(struct host_group *g, size_t n, uint64_t seed)
{
	size_t i;

	for (i = n; i > 1; i--) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
		struct host_group t;
		size_t j;

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		j = (size_t)(z % i);
		t = g[i - 1];
		g[i - 1] = g[j];
		g[j] = t;
	}
}

static void reverse_groups(struct host_group *g, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		struct host_group t = g[i];

		g[i] = g[n - 1 - i];
		g[n - 1 - i] = t;
	}
}

/* "host tlb (guest never) access_ns": which effect a stopping message is about */
static void gap_name(const struct results *res, const struct stop_gap *g, char *buf, size_t len)
{
	const struct effect *e = g->effect >= 0 ? &res->effects->e[g->effect] : NULL;

	if (e)
		snprintf(buf, len, "%s %s%s%s%s %s", e->side, e->component, e->at_guest[0] ? " (guest " : "",
			 e->at_guest, e->at_guest[0] ? ")" : "", e->metric);
	else
		snprintf(buf, len, "none");
}

/* --boots, then the CI target: another round while a split effect's interval is wider than asked */
static bool more_rounds(const struct run_config *cfg, const struct run_io *io, struct results *res,
			unsigned rounds_done, double elapsed_s)
{
	const struct stop_params sp = { cfg->boots, cfg->reps, cfg->target_ci_host, cfg->target_ci_guest,
					cfg->max_reps, cfg->budget_ms };
	struct stop_gap g;
	enum stop_verdict v;
	char name[160];

	if (rounds_done >= cfg->boots && cfg->target_ci_host > 0) {
		struct err e = ERR_INIT;

		results_finish(res, cfg->min_coverage);
		if (effects_attach(res, &e))
			progress(io, "warning: %s", e.msg);
	}
	v = stop_decide(res->effects, &sp, rounds_done, elapsed_s, &g);
	if (v != STOP_BOOTS && v != STOP_MORE && v != STOP_NO_EFFECT)
		snprintf(res->settings.stopped, sizeof(res->settings.stopped), "%s", stop_verdict_name(v));
	gap_name(res, &g, name, sizeof(name));
	switch (v) {
	case STOP_BOOTS:
		return true;
	case STOP_FIXED:
		return false;
	case STOP_NO_TARGETS:
		progress(io, "no split effect in these workloads to narrow: %u rounds", rounds_done);
		return false;
	case STOP_TARGET_MET:
		progress(io, "every split effect's 95%% CI is within its target (host-side %.1f, guest-side %.1f "
			 "points) after %u rounds; closest: %s, %.2f of %.1f", cfg->target_ci_host,
			 cfg->target_ci_guest, rounds_done, name, g.half, g.target);
		return false;
	case STOP_MAX_REPS:
		progress(io, "%s: 95%% CI half-width %.2f points > target %.1f, but --max-reps %u is reached; "
			 "the results say so", name, g.half, g.target, cfg->max_reps);
		return false;
	case STOP_BUDGET:
		progress(io, "%s: 95%% CI half-width %.2f points > target %.1f, but another round would end past "
			 "the %llu s budget; the results say so", name, g.half, g.target,
			 (unsigned long long)(cfg->budget_ms / 1000));
		return false;
	case STOP_NO_EFFECT:
		progress(io, "no split effect is available yet: another round");
		return true;
	case STOP_MORE:
		break;
	}
	progress(io, "%s: 95%% CI half-width %.2f points > target %.1f: another round", name, g.half, g.target);
	return true;
}

static void save_partial(struct results *res, const struct run_config *cfg, const char *path)
{
	struct err e = ERR_INIT;

	results_finish(res, cfg->min_coverage);
	if (effects_attach(res, &e) || results_write_json(res, path, &e))
		fprintf(stderr, "thpeval: warning: %s\n", e.msg);
}

/* ---- the hugetlbfs reference arm ------------------------------------------------ */

#define POOL_KEY "hugetlb/hugepages-2048kB/nr_hugepages"
#define POOL_DIR "/sys/kernel/mm/hugepages/hugepages-2048kB"

static int pool_read(const struct run_config *cfg, const char *file, uint64_t *v, struct err *e)
{
	char path[PATH_MAX], buf[32];
	FILE *f;
	int ok;

	if (snprintf(path, sizeof(path), "%s%s/%s", strcmp(cfg->sysfs_root, "/") ? cfg->sysfs_root : "",
		     POOL_DIR, file) >= (int)sizeof(path))
		return err_set(e, -ENAMETOOLONG, "--sysfs-root path too long");
	f = fopen(path, "re");
	if (!f)
		return err_set(e, -errno, "this host has no 2M hugetlb pool ('%s': %s): the hugetlbfs arm needs "
			       "CONFIG_HUGETLBFS", path, strerror(errno));
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	if (!ok || parse_u64(buf, v))
		return err_set(e, -EBADMSG, "unexpected content in '%s'", path);
	return 0;
}

/* libvirt backs <hugepages/> with a hugetlbfs mount it found when it started */
static int hugetlbfs_mounted(const struct run_config *cfg, struct err *e)
{
	char path[PATH_MAX], line[512];
	bool found = false;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/proc/mounts", strcmp(cfg->sysfs_root, "/") ? cfg->sysfs_root : "") >=
	    (int)sizeof(path))
		return err_set(e, -ENAMETOOLONG, "--sysfs-root path too long");
	f = fopen(path, "re");
	if (!f)
		return err_set(e, -errno, "cannot read '%s': %s", path, strerror(errno));
	while (!found && fgets(line, sizeof(line), f)) {
		char dev[128], dir[256], type[64];

		found = sscanf(line, "%127s %255s %63s", dev, dir, type) == 3 && !strcmp(type, "hugetlbfs");
	}
	fclose(f);
	if (!found)
		return err_set(e, -ENOENT, "--host-backing=hugetlbfs: no hugetlbfs is mounted; run "
			       "'mount -t hugetlbfs hugetlbfs /dev/hugepages' and restart libvirtd (it looks for "
			       "hugetlbfs mounts when it starts; tools/services.sh does both)");
	return 0;
}

/*
 * Reserve the 2M pages the guests' RAM needs on top of what is in use; the
 * journal records the pool size first, so a crash restores it too. orig gets
 * the size to go back to ("" when nothing was changed).
 */
static int pool_reserve(struct host_session *hs, const struct run_config *cfg, char *orig, size_t len,
			struct err *e)
{
	unsigned guests = cfg->guests ? cfg->guests : 1;
	uint64_t nr, freep, need = (cfg->memory + (2ull << 20) - 1) / (2ull << 20) * guests, want, got;
	char val[32];
	int r;

	orig[0] = '\0';
	if ((r = pool_read(cfg, "nr_hugepages", &nr, e)) || (r = pool_read(cfg, "free_hugepages", &freep, e)))
		return r;
	if (freep >= need)
		return 0;
	want = nr - freep + need;
	snprintf(orig, len, "%" PRIu64, nr);
	snprintf(val, sizeof(val), "%" PRIu64, want);
	r = host_session_set(hs, POOL_KEY, val, e);
	if (r && pool_read(cfg, "nr_hugepages", &got, NULL) == 0 && got < want)
		return err_set(e, -ENOMEM, "--host-backing=hugetlbfs: the host could reserve only %" PRIu64
			       " of the %" PRIu64 " 2M huge pages %u guest%s of %" PRIu64 " MiB need%s: free or compact "
			       "memory (echo 1 > /proc/sys/vm/compact_memory), or use a smaller --memory or --guests",
			       got - (nr - freep), need, guests, guests == 1 ? "" : "s", cfg->memory >> 20,
			       guests == 1 ? "s" : "");
	return r;
}

int run_experiment(const struct run_config *cfg, const struct run_io *io, struct results *res,
		   char *json_path, size_t json_len, struct err *e)
{
	struct image_opts io_img = { 0 };
	struct srcdisk_opts so = { 0 };
	struct srcdisk sd;
	struct host_session hs;
	struct image img;
	struct virt *v = NULL;
	enum accel accel = ACCEL_TCG;
	bool session = false, stale = false, built = false, kc = kcompile_planned(cfg);
	char gdir[PATH_MAX];
	struct host_group groups[2 * (THP_LIST_MAX + 2) * PREFAULT__COUNT];
	char pool_orig[32] = "";
	char hthp[THP_LIST_MAX][THP_NAME_LEN];	/* host treatments: --host-thp + the sweep's sizes */
	size_t nh = 0;
	struct host_plan hp = { .before = &res->thp_before };
	size_t i, p, ngroups, st;
	unsigned idx = 0, round;
	double t_start;
	int r, reaped = 0;

	memset(&hs, 0, sizeof(hs));
	if (snprintf(json_path, json_len, "%s/results.json", cfg->out_dir) >= (int)json_len ||
	    snprintf(gdir, sizeof(gdir), "%s/guests", cfg->out_dir) >= (int)sizeof(gdir))
		return err_set(e, -ENAMETOOLONG, "--out path too long");
	r = mkdir_p(gdir, 0755, e);
	if (r)
		return r;

	/* settings echo */
	res->settings.reps = cfg->reps;
	res->settings.boots = cfg->boots;
	res->settings.warmup = cfg->warmup;
	res->settings.cold_reps = cfg->cold_reps;
	res->settings.vcpus = cfg->vcpus;
	res->settings.memory_bytes = cfg->memory;
	res->settings.size_bytes = cfg->size;
	res->settings.accesses = cfg->accesses;
	res->settings.seed = cfg->seed;
	res->settings.min_coverage_pct = cfg->min_coverage;
	snprintf(res->settings.uri, sizeof(res->settings.uri), "%s", cfg->uri);
	snprintf(res->settings.workloads, sizeof(res->settings.workloads), "%s", cfg->workloads);
	snprintf(res->settings.host_thp_list, sizeof(res->settings.host_thp_list), "never");

	for (i = 0; i < cfg->n_prefault; i++)
		append(res->settings.prefault_list, sizeof(res->settings.prefault_list), "%s%s", i ? "," : "",
		       prefault_name(cfg->prefault[i]));
	res->settings.target_ci_host = cfg->target_ci_host;
	res->settings.target_ci_guest = cfg->target_ci_guest;
	res->settings.budget_s = (double)cfg->budget_ms / 1000;
	res->settings.guests = cfg->guests ? cfg->guests : 1;
	{
		int pins[64];

		if (!cfg->pin)
			snprintf(res->settings.pin, sizeof(res->settings.pin), "none: the host scheduler places them");
		else if (guest_pins(cfg, 0, res->settings.guests, pins) && res->settings.guests * cfg->vcpus == 1)
			snprintf(res->settings.pin, sizeof(res->settings.pin), "auto: QEMU's other threads on CPU 0, "
				 "the vCPU on CPU 1");
		else if (guest_pins(cfg, 0, res->settings.guests, pins))
			snprintf(res->settings.pin, sizeof(res->settings.pin), "auto: QEMU's other threads on CPU 0, "
				 "the vCPUs on CPUs 1-%u", res->settings.guests * cfg->vcpus);
		else
			snprintf(res->settings.pin, sizeof(res->settings.pin), "auto: not pinned: %u guest(s) x %u "
				 "vCPU(s) + 1 is more than the host's %ld CPUs", res->settings.guests, cfg->vcpus,
				 sysconf(_SC_NPROCESSORS_ONLN));
	}
	res->settings.mthp_sweep = cfg->mthp_sweep;
	for (i = 0; i < cfg->n_host_state; i++)
		append(res->settings.host_state_list, sizeof(res->settings.host_state_list), "%s%s", i ? "," : "",
		       cfg->host_state[i]);
	snprintf(res->settings.backing, sizeof(res->settings.backing), "%s%s", cfg->memfd ? "memfd" : "anonymous",
		 cfg->hugetlbfs ? ",hugetlbfs" : "");
	if (cfg->hugetlbfs)
		append(res->settings.host_thp_list, sizeof(res->settings.host_thp_list), ",hugetlbfs");
	snprintf(res->settings.guest_thp_list, sizeof(res->settings.guest_thp_list), "never");
	for (i = 0; i < cfg->n_guest_thp; i++)
		append(res->settings.guest_thp_list, sizeof(res->settings.guest_thp_list), ",%s", cfg->guest_thp[i]);

	r = host_info_read("/proc", &res->host, e);
	if (r)
		return r;
	r = thp_settings_read(cfg->sysfs_root, &res->thp_before, e);
	if (r)
		return r;
	if (!thp_settings_get(&res->thp_before, "enabled"))
		return err_set(e, -EOPNOTSUPP, "this host kernel has no transparent hugepage support (%s%s missing)",
			       cfg->sysfs_root, THP_DIR);
	r = plan_host_thp(cfg, res, &hp, hthp, &nh, e);
	if (r)
		return r;
	for (i = 0; i < nh; i++)
		append(res->settings.host_thp_list, sizeof(res->settings.host_thp_list), ",%s", hthp[i]);
	if (cfg->target_guest) {
		char proc[PATH_MAX], note[200];

		run_proc_root(cfg, proc, sizeof(proc));
		r = guests_fit(proc, cfg->guests ? cfg->guests : 1, cfg->memory, note, sizeof(note), e);
		if (r)
			return r;
		if (cfg->guests > 1)
			progress(io, "memory for %u guests: %s", cfg->guests, note);
	}

	memset(&sd, 0, sizeof(sd));
	if (kc) {
		/* the kernel source: a read-only disk for guests, its tree for the host */
		so.cache_dir = cfg->cache_dir;
		so.progress = image_line;
		so.opaque = io_progress_opaque(io);
		r = srcdisk_ensure(&so, &sd, &built, e);
		if (r)
			return r;
		progress(io, "kernel source disk %s (%s, %s %s)", sd.id, built ? "built" : "cached",
			 SRCDISK_PACKAGE, sd.version);
		snprintf(res->settings.kcompile, sizeof(res->settings.kcompile), "%s:%s", cfg->kc_config,
			 cfg->kc_target);
		snprintf(res->settings.srcdisk_id, sizeof(res->settings.srcdisk_id), "%s", sd.id);
		built = false;
	}
	if (!cfg->target_guest) {
		snprintf(res->accel, sizeof(res->accel), "none");
		snprintf(res->accel_reason, sizeof(res->accel_reason), "bare host only (--target=host)");
	} else {
		r = virt_open(cfg->uri, &v, e);
		if (r)
			return r;
		virt_versions(v, res->libvirt_version, sizeof(res->libvirt_version), res->hypervisor_version,
			      sizeof(res->hypervisor_version), NULL);
		r = virt_accel_choose(v, cfg->accel, "/proc/cpuinfo", &accel, res->accel_reason,
				      sizeof(res->accel_reason), e);
		if (r)
			goto out;
		snprintf(res->accel, sizeof(res->accel), "%s", accel_name(accel));
		progress(io, "accelerator: %s (%s)", res->accel, res->accel_reason);
		if (virt_reap_stale(v, &reaped, NULL) == 0 && reaped)
			progress(io, "removed %d guest(s) left by a killed thpeval run", reaped);

		/* the image build can take a minute with no libvirt event loop running:
		 * the daemon's keepalive would drop the connection, so reconnect after it */
		virt_close(v);
		v = NULL;
		io_img.cache_dir = cfg->cache_dir;
		io_img.kernel = cfg->kernel[0] ? cfg->kernel : NULL;
		io_img.guest_bin = cfg->guest_bin;
		/* kcompile guests need the toolchain in the root: another image */
		io_img.extra_packages = kc ? srcdisk_toolchain_packages : NULL;
		io_img.progress = image_line;
		io_img.opaque = io_progress_opaque(io);
		r = image_ensure(&io_img, &img, &built, e);
		if (r)
			goto out;
		snprintf(res->image_id, sizeof(res->image_id), "%s", img.id);
		r = virt_open(cfg->uri, &v, e);
		if (r)
			goto out;
		progress(io, "guest image %s (%s, kernel %s)", img.id, built ? "built" : "cached", img.kernel_version);
	}
	telemetry_notes(res, accel, cfg->target_guest);
	if (cfg->target_guest && cfg->hugetlbfs && (r = hugetlbfs_mounted(cfg, e)))
		goto out;
	r = host_session_begin(&hs, cfg->sysfs_root, cfg->state_dir, &stale, e);
	if (r)
		goto out;
	session = true;
	if (stale)
		progress(io, "restored host THP settings left changed by a killed thpeval run");

	/* host groups (host THP x allocation mode), each round in a seeded random order */
	ngroups = 0;
	for (st = 0; st < cfg->n_host_state; st++)
		for (p = 0; p < cfg->n_prefault; p++) {
			for (i = 0; i <= nh; i++) {
				groups[ngroups].host_thp = i == 0 ? "never" : hthp[i - 1];
				groups[ngroups].prefault = cfg->prefault[p];
				groups[ngroups].host_state = cfg->host_state[st];
				groups[ngroups].hugetlbfs = false;
				ngroups++;
			}
			if (cfg->hugetlbfs) {
				groups[ngroups].host_thp = "hugetlbfs";
				groups[ngroups].prefault = cfg->prefault[p];
				groups[ngroups].host_state = cfg->host_state[st];
				groups[ngroups].hugetlbfs = true;
				ngroups++;
			}
		}
	t_start = mono_s();
	if (cfg->target_ci_host > 0)
		progress(io, "%u rounds (a boot per host setting each), then more while a split effect's 95%% CI half-width "
			 "is over %.3g points (host-side) or %.3g (guest-side)%s", cfg->boots, cfg->target_ci_host,
			 cfg->target_ci_guest, cfg->budget_ms ? ", within the --budget" : "");
	if (io->bar)
		progress_init(io->bar, io->progress,
			      cfg->boots * ((cfg->target_guest ? ngroups : 0) + (cfg->target_host ? nh + 1 : 0)));
	for (round = 0; !*io->stop; round++) {
		/* ABBA: a seeded random order, then the same reversed, so a drift of the
		 * machine over the run falls on every host setting alike */
		if (round % 2 == 0)
			shuffle_groups(groups, ngroups, cfg->seed * 1000003u + round);
		else
			reverse_groups(groups, ngroups);
		for (i = 0; cfg->target_guest && i < ngroups && !*io->stop; i++) {
			const struct host_group *hg = &groups[i];
			struct err ge = ERR_INIT;

			struct frag_log *fl = NULL;
			struct frag fr;
			struct vmstat vm0;
			bool have_vm0 = false;

			memset(&fr, 0, sizeof(fr));
			append(res->settings.group_order, sizeof(res->settings.group_order), "%s%u:%s/%s%s",
			       res->settings.group_order[0] ? " " : "", round, hg->host_thp, prefault_name(hg->prefault),
			       strcmp(hg->host_state, "fresh") ? "/fragmented" : "");
			if (!strcmp(hg->host_state, "fragmented")) {
				fl = results_frag_add(res, e);
				if (!fl) {
					r = e->code;
					goto out;
				}
				/* fragmenting takes a while with no libvirt event loop running: the
				 * daemon's keepalive would drop the connection, so reconnect after it */
				virt_close(v);
				v = NULL;
				r = fragment_host(cfg, io, &hs, &hp, hg, round, &fr, fl, e);
				if (!r)
					r = virt_open(cfg->uri, &v, e);
				if (r) {
					frag_undo(io, &hs, &fr, fl);
					goto out;
				}
			}
			/* the hugetlbfs arm: THP off (guest RAM is hugetlb), the pool reserved */
			r = apply_host_thp(&hs, &hp, hg->hugetlbfs ? "never" : hg->host_thp, e);
			if (!r && hg->hugetlbfs)
				r = pool_reserve(&hs, cfg, pool_orig, sizeof(pool_orig), e);
			if (r) {
				frag_undo(io, &hs, &fr, fl);
				goto out;
			}
			have_vm0 = vmstat_read("/proc", &vm0, NULL) == 0;
			progress(io, "round %u, host THP %s, allocation %s%s%s (group %zu of %zu this round)", round + 1,
				 hg->host_thp, prefault_name(hg->prefault), strcmp(hg->host_state, "fresh") ? ", host " : "",
				 strcmp(hg->host_state, "fresh") ? hg->host_state : "", i + 1, ngroups);
			if (io->bar) {
				char name[96];

				snprintf(name, sizeof(name), "round %u: host %s/%s, guest cells", round + 1, hg->host_thp,
					 prefault_name(hg->prefault));
				progress_cell_start(io->bar, name);
			}
			r = run_guests(cfg, io, v, accel, &img, kc ? &sd : NULL, hg, &idx, round, res, &ge);
			if (hg->hugetlbfs && pool_orig[0]) {
				struct err pe = ERR_INIT;	/* release the pool now; the journal has it too */

				if (host_session_set(&hs, POOL_KEY, pool_orig, &pe))
					progress(io, "warning: %s", pe.msg);
				pool_orig[0] = '\0';
			}
			if (fl && have_vm0)
				frag_vmstat(fl, &vm0);
			if (fr.pid) {
				/* the undo (compact_memory) takes a while too */
				virt_close(v);
				v = NULL;
				frag_undo(io, &hs, &fr, fl);
				if (virt_open(cfg->uri, &v, e)) {
					r = e->code;
					goto out;
				}
			} else if (fl) {
				frag_undo(io, &hs, &fr, fl);	/* the holder died: the knob still goes back */
			}
			if (io->bar && r != -EINTR)
				progress_cell_done(io->bar, r == 0, r ? ge.msg : NULL);
			if (r == -EINTR || *io->stop) {
				r = err_set(e, -EINTR, "interrupted: partial results kept");
				save_partial(res, cfg, json_path);
				goto out;
			}
			if (r) {
				/* one guest failing does not stop the run: the cells say why */
				progress(io, "error: %s", ge.msg);
				r = reconnect_if_lost(cfg, io, &v, idx - 1, e);
				if (r)
					goto out;
			}
			save_partial(res, cfg, json_path);
		}
		for (i = 0; cfg->target_host && i <= nh && !*io->stop; i++) {
			/* every round: never first is fine here, nothing is cached between processes */
			if (io->bar) {
				char name[96];

				snprintf(name, sizeof(name), "round %u: bare host, host %s", round + 1,
					 i == 0 ? "never" : hthp[i - 1]);
				progress_cell_start(io->bar, name);
			}
			r = run_host_target(cfg, io, &hs, &hp, kc ? &sd : NULL, i == 0 ? "never" : hthp[i - 1], round,
					    res, e);
			if (r)
				goto out;
			if (io->bar)
				progress_cell_done(io->bar, true, NULL);
			save_partial(res, cfg, json_path);
		}
		res->settings.rounds = round + 1;
		if (!more_rounds(cfg, io, res, round + 1, mono_s() - t_start))
			break;
		if (io->bar && round + 1 >= cfg->boots)	/* a round past --boots: the total grows */
			io->bar->total += (cfg->target_guest ? ngroups : 0) + (cfg->target_host ? nh + 1 : 0);
	}
	if (*io->stop)
		r = err_set(e, -EINTR, "interrupted: partial results kept");
out:
	if (io->bar && io->bar->total)
		progress_finish(io->bar);
	guest_mthp_note(cfg, io, res);
	if (session) {
		struct err re = ERR_INIT;

		if (host_session_end(&hs, &re)) {
			r = r ? r : re.code;
			err_set(e, re.code, "%s", re.msg);
		}
	}
	if (thp_settings_read(cfg->sysfs_root, &res->thp_after, NULL) == 0)
		res->have_thp_after = true;
	virt_close(v);
	return r;
}
