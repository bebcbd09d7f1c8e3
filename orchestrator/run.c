#include "orchestrator/run.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include "host/journal.h"
#include "host/procfs.h"
#include "host/thp.h"
#include "images/image.h"
#include "images/srcdisk.h"
#include "orchestrator/domain.h"
#include "orchestrator/effects.h"
#include "orchestrator/progress.h"
#include "orchestrator/virt.h"

#define MAX_REJECTED 64		/* garbage lines tolerated from one guest */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

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

static void image_progress(void *opaque, const char *msg)
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
	const char *host_thp;
	enum prefault prefault;
};

/* host-side counters sampled at every record, for per-repetition deltas */
struct host_snap {
	bool have;
	uint64_t qemu_minflt;
	struct vmstat vm;
};

/* what one guest is expected to produce, and what it did */
struct guest_ctx {
	const struct run_config *cfg;
	const struct run_io *io;
	struct results *res;
	struct guest_log *log;
	struct guest *g;
	const char *host_thp;
	const char *prefault;
	const char *proc_root;
	struct host_snap snap;
	double t_create;
	bool got_first, got_end;
	uint32_t next_seq;
	int qemu_pid;
	struct err err;		/* a protocol violation that stops this guest */
};

static bool in_list(const char list[][CLI_THP_LEN], size_t n, const char *s)
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
	metric_add(&c->host_cov, smaps_huge_pct(&cov));
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
	s->have = false;
	if (gc->qemu_pid <= 0)
		gc->qemu_pid = guest_qemu_pid(gc->g);
	if (gc->qemu_pid <= 0 || proc_minflt(gc->proc_root, gc->qemu_pid, &s->qemu_minflt, NULL) ||
	    vmstat_read(gc->proc_root, &s->vm, NULL))
		return;
	s->have = true;
}

static void host_telemetry(struct guest_ctx *gc, struct cell *c, bool keep)
{
	struct host_snap now;
	struct metric *m;
	size_t i;

	host_snap_take(gc, &now);
	if (keep && now.have && gc->snap.have) {
		m = cell_metric(c, "host_qemu_minflt", NULL);
		if (m)
			metric_add(m, (double)(now.qemu_minflt - gc->snap.qemu_minflt));
		for (i = 0; i < sizeof(vmstat_keys) / sizeof(vmstat_keys[0]); i++) {
			uint64_t a, b;
			char name[REC_KEY_MAX];

			if (vmstat_get(&now.vm, vmstat_keys[i], &b) || vmstat_get(&gc->snap.vm, vmstat_keys[i], &a))
				continue;
			snprintf(name, sizeof(name), "host_%s", vmstat_keys[i]);
			m = cell_metric(c, name, NULL);
			if (m)
				metric_add(m, (double)(b - a));
		}
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
		struct cell_key k = { "guest", gc->host_thp, gc->prefault, gt, w, rec_get(rec, "variant") };

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
		metric_add(m, v);
	}
	if (rec_get_f64(rec, "guest_huge_pct", &v) == 0 && v >= 0 && v <= 100)
		metric_add(&c->guest_cov, v);
	sample_host_coverage(gc, c);
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
		gc->log->create_to_first_record_s = now_s() - gc->t_create;
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
		progress(gc->io, "  %s is up (%.1f s after create)", gc->log->name,
			 gc->log->create_to_first_record_s);
		host_snap_take(gc, &gc->snap);
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
	append(buf, len, " thpeval.accesses=%llu thpeval.seed=%llu thpeval.timeout=%llu",
	       (unsigned long long)cfg->accesses, (unsigned long long)seed,
	       (unsigned long long)(cfg->timeout_ms / 1000));
	if (kcompile_planned(cfg))
		append(buf, len, " thpeval.kcompile=%s:%s thpeval.long_timeout=%llu", cfg->kc_config,
		       cfg->kc_target, (unsigned long long)(cfg->kc_timeout_ms / 1000));
}

/* record a failure in every planned cell of this host setting that lacks repetitions */
static void fail_missing(struct results *res, const struct run_config *cfg, const struct host_group *hg,
			 unsigned want_reps, const char *reason)
{
	size_t i, w;

	for (w = 0; w < cfg->n_wl; w++)
		for (i = 0; i <= cfg->n_guest_thp; i++) {
			const char *gt = i == 0 ? "never" : cfg->guest_thp[i - 1];
			struct cell_key k = { "guest", hg->host_thp, prefault_name(hg->prefault), gt, cfg->wl[w], NULL };
			struct cell *c = results_cell_key(res, &k, NULL);

			if (c && c->reps_ok + c->reps_failed < want_reps)
				cell_add_failure(c, reason);
		}
}

static int run_guest(const struct run_config *cfg, const struct run_io *io, struct virt *v,
		     enum accel accel, const struct image *img, const struct srcdisk *sd,
		     const struct host_group *hg, unsigned idx, unsigned round, struct results *res,
		     struct err *e)
{
	const char *host_thp = hg->host_thp;
	char name[64], overlay[PATH_MAX], cmdline[2048], *xml = NULL;
	struct domain_spec spec = { 0 };
	struct guest_opts go = { 0 };
	struct guest_ctx gc = { 0 };
	enum guest_poll_result pr;
	struct guest_log *log;
	double t_end = 0;
	int r;

	snprintf(name, sizeof(name), "thpeval-%d-%u", (int)getpid(), idx);
	log = results_guest_add(res, e);
	if (!log)
		return e->code;
	snprintf(log->name, sizeof(log->name), "%s", name);
	snprintf(log->host_thp, sizeof(log->host_thp), "%s", host_thp);
	snprintf(log->prefault, sizeof(log->prefault), "%s", prefault_name(hg->prefault));
	log->round = round;
	snprintf(log->status, sizeof(log->status), "failed");
	if (snprintf(log->xml_path, sizeof(log->xml_path), "%s/guests/%s.xml", cfg->out_dir, name) >=
		    (int)sizeof(log->xml_path) ||
	    snprintf(log->console_path, sizeof(log->console_path), "%s/guests/%s.console.log", cfg->out_dir,
		     name) >= (int)sizeof(log->console_path) ||
	    snprintf(overlay, sizeof(overlay), "%s/overlays/%s.qcow2", cfg->cache_dir, name) >= (int)sizeof(overlay))
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
		r = image_overlay_create(img, overlay, e);
	if (r)
		goto out;

	build_cmdline(cfg, img, cfg->seed + round, cmdline, sizeof(cmdline));
	spec.name = name;
	spec.memory_bytes = cfg->memory;
	spec.vcpus = cfg->vcpus;
	spec.accel = accel;
	spec.kernel = img->kernel;
	spec.initrd = img->initrd;
	spec.cmdline = cmdline;
	spec.disk_path = overlay;
	spec.disk_format = "qcow2";
	spec.ro_disk_path = sd ? sd->disk : NULL;
	spec.channel_name = DOMAIN_CHANNEL_NAME;
	spec.prefault = hg->prefault;
	spec.memfd = cfg->memfd;
	spec.description = "thpeval guest";
	r = domain_xml(&spec, &xml, e);
	if (r)
		goto out;
	r = write_file_atomic(log->xml_path, xml, strlen(xml), 0644, e);
	if (r)
		goto out;

	go.xml = xml;
	go.console_log_path = log->console_path;
	go.channel_name = DOMAIN_CHANNEL_NAME;
	gc.cfg = cfg;
	gc.io = io;
	gc.res = res;
	gc.log = log;
	gc.host_thp = host_thp;
	gc.prefault = prefault_name(hg->prefault);
	gc.proc_root = "/proc";
	gc.qemu_pid = -1;
	progress(io, "booting %s (host THP %s, allocation %s, %s)", name, host_thp, gc.prefault, accel_name(accel));
	gc.t_create = now_s();
	r = guest_start(v, &go, &gc.g, e);
	if (r)
		goto out;
	r = guest_poll(gc.g, (int)guest_timeout_ms(cfg), (volatile const int *)io->stop, on_record, &gc, &pr,
		       e);
	t_end = now_s();
	if (r)
		goto out;
	if (err_isset(&gc.err)) {
		r = err_set(e, gc.err.code, "%s", gc.err.msg);
		goto out;
	}
	if (!gc.got_end) {
		switch (pr) {
		case GUEST_POLL_TIMEOUT:
			snprintf(log->status, sizeof(log->status), "timeout");
			r = err_set(e, -ETIMEDOUT, "guest %s did not finish within %llu s: destroyed it (raise --timeout?)",
				    name, (unsigned long long)(guest_timeout_ms(cfg) / 1000));
			break;
		case GUEST_POLL_INTERRUPTED:
			snprintf(log->status, sizeof(log->status), "interrupted");
			r = err_set(e, -EINTR, "interrupted");
			break;
		default:
			r = err_set(e, -EIO, "guest %s stopped before it finished (QEMU killed or guest crashed): see %s",
				    name, log->console_path);
			break;
		}
		goto out;
	}
	/* The evidence was sampled on every result; the guest now waits for a "bye"
	 * to power off. We do not let it: a guest shutting down by itself while a
	 * client finishes its streams can deadlock libvirtd 9.0 (the domain's
	 * chardevs are freed while the stream holds them). guest_destroy() aborts
	 * both streams first, then destroys the domain: one thing at a time. */
	snprintf(log->status, sizeof(log->status), "ok");
	r = 0;
out:
	if (gc.g) {
		double t0 = now_s();

		guest_destroy(gc.g);
		if (r == 0)
			log->teardown_s = now_s() - t_end;
		else
			log->teardown_s = now_s() - t0;
		log->total_s = now_s() - gc.t_create;
	}
	unlink(overlay);
	free(xml);
	if (r) {
		snprintf(log->error, sizeof(log->error), "%s", e->msg);
		fail_missing(res, cfg, hg, (round + 1) * cfg->reps, e->msg);
	}
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
};

static int on_local_record(void *opaque, const struct record *rec, const char *rejected)
{
	struct local_ctx *lc = opaque;
	struct cell_key k = { "host", lc->host_thp, "none", "none", lc->workload, NULL };
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
			metric_add(m, v);
	}
	/* on the bare host the workload's own buffer coverage is the host evidence */
	if (rec_get_f64(rec, "guest_huge_pct", &v) == 0 && v >= 0 && v <= 100)
		metric_add(&c->host_cov, v);
	c->reps_ok++;
	lc->results++;
	return 0;
}

static int run_host_target(const struct run_config *cfg, const struct run_io *io, struct host_session *hs,
			   const struct srcdisk *sd, const char *host_thp, unsigned round, struct results *res,
			   struct err *e)
{
	unsigned rep;
	size_t w;
	int r;

	r = host_session_set(hs, "enabled", host_thp, e);
	if (r)
		return r;
	progress(io, "round %u, bare host, host THP enabled=%s", round + 1, host_thp);
	for (w = 0; w < cfg->n_wl && !*io->stop; w++) {
		const struct workload_info *wi = workload_find(cfg->wl_info, cfg->n_wl_info, cfg->wl[w]);

		for (rep = 0; rep < cfg->warmup + cfg->reps && !*io->stop; rep++) {
			char a[12][PATH_MAX + 16];
			const char *args[14];
			struct local_ctx lc = { cfg, io, res, host_thp, cfg->wl[w], rep < cfg->warmup, 0, "" };
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
				snprintf(a[n++], sizeof(a[0]), "--madvise=%d", !strcmp(host_thp, "madvise"));
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
				struct cell_key k2 = { "host", host_thp, "none", "none", cfg->wl[w], NULL };
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
	double t0 = now_s();
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
		if (now_s() - t0 > 60)
			return err_set(e, ce.code, "libvirtd went away and did not come back within 60 s: %s", ce.msg);
		usleep(500 * 1000);
	}
	if (!*v)
		return err_set(e, -EINTR, "interrupted while reconnecting to libvirtd");
	snprintf(name, sizeof(name), "thpeval-%d-%u", (int)getpid(), idx);
	if (virt_destroy_name(*v, name, &ce))
		progress(io, "warning: %s", ce.msg);
	progress(io, "warning: reconnected to libvirtd after %.1f s; the lost guest's cells are marked failed",
		 now_s() - t0);
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
			 "not collected: debugfs has them, this version of thpeval does not read them yet");
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
			 "not collected: the host has a PMU, this version of thpeval does not count dTLB/EPT walks yet");
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

/* --target-ci: another round while a main effect's interval is wider than asked */
static bool more_rounds(const struct run_config *cfg, const struct run_io *io, struct results *res,
			unsigned rounds_done, double elapsed_s)
{
	double worst = 0, per_round;
	size_t i;

	if (cfg->target_ci <= 0)
		return false;
	results_finish(res, cfg->min_coverage);
	for (i = 0; res->effects && i < res->effects->n; i++) {
		const struct effect *fx = &res->effects->e[i];
		double half;

		if (!fx->available || !strcmp(fx->side, "interaction"))
			continue;
		half = (fx->ci95_high_pct - fx->ci95_low_pct) / 2;
		if (half > worst)
			worst = half;
	}
	if (worst <= cfg->target_ci && worst > 0) {
		progress(io, "every main effect's 95%% CI half-width is at most %.2f points (target %.2f)", worst,
			 cfg->target_ci);
		return false;
	}
	if ((rounds_done + 1) * cfg->reps > cfg->max_reps) {
		progress(io, "widest CI half-width %.2f points > target %.2f, but --max-reps %u is reached", worst,
			 cfg->target_ci, cfg->max_reps);
		return false;
	}
	per_round = elapsed_s / rounds_done;
	if (cfg->budget_ms && (elapsed_s + per_round) * 1000 > (double)cfg->budget_ms) {
		progress(io, "widest CI half-width %.2f points > target %.2f, but another round would exceed --budget",
			 worst, cfg->target_ci);
		return false;
	}
	progress(io, "widest CI half-width %.2f points > target %.2f: another round", worst, cfg->target_ci);
	return true;
}

static void save_partial(struct results *res, const struct run_config *cfg, const char *path)
{
	struct err e = ERR_INIT;

	results_finish(res, cfg->min_coverage);
	if (results_write_json(res, path, &e))
		fprintf(stderr, "thpeval: warning: %s\n", e.msg);
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
	struct host_group groups[CLI_MAX_THP * PREFAULT__COUNT + PREFAULT__COUNT];
	size_t i, p, ngroups;
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
	res->settings.warmup = cfg->warmup;
	res->settings.vcpus = cfg->vcpus;
	res->settings.memory_bytes = cfg->memory;
	res->settings.size_bytes = cfg->size;
	res->settings.accesses = cfg->accesses;
	res->settings.seed = cfg->seed;
	res->settings.min_coverage_pct = cfg->min_coverage;
	snprintf(res->settings.uri, sizeof(res->settings.uri), "%s", cfg->uri);
	snprintf(res->settings.workloads, sizeof(res->settings.workloads), "%s", cfg->workloads);
	snprintf(res->settings.host_thp_list, sizeof(res->settings.host_thp_list), "never");
	for (i = 0; i < cfg->n_host_thp; i++)
		append(res->settings.host_thp_list, sizeof(res->settings.host_thp_list), ",%s", cfg->host_thp[i]);
	for (i = 0; i < cfg->n_prefault; i++)
		append(res->settings.prefault_list, sizeof(res->settings.prefault_list), "%s%s", i ? "," : "",
		       prefault_name(cfg->prefault[i]));
	res->settings.target_ci = cfg->target_ci;
	snprintf(res->settings.backing, sizeof(res->settings.backing), "%s", cfg->memfd ? "memfd" : "anonymous");
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

	memset(&sd, 0, sizeof(sd));
	if (kc) {
		/* the kernel source: a read-only disk for guests, its tree for the host */
		so.cache_dir = cfg->cache_dir;
		so.progress = image_progress;
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
		io_img.progress = image_progress;
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
	r = host_session_begin(&hs, cfg->sysfs_root, cfg->state_dir, &stale, e);
	if (r)
		goto out;
	session = true;
	if (stale)
		progress(io, "restored host THP settings left changed by a killed thpeval run");

	/* host groups (host THP x allocation mode), each round in a seeded random order */
	ngroups = 0;
	for (p = 0; p < cfg->n_prefault; p++)
		for (i = 0; i <= cfg->n_host_thp; i++) {
			groups[ngroups].host_thp = i == 0 ? "never" : cfg->host_thp[i - 1];
			groups[ngroups].prefault = cfg->prefault[p];
			ngroups++;
		}
	t_start = now_s();
	if (io->bar)
		progress_init(io->bar, io->progress,
			      (cfg->target_guest ? ngroups : 0) + (cfg->target_host ? cfg->n_host_thp + 1 : 0));
	for (round = 0; !*io->stop; round++) {
		shuffle_groups(groups, ngroups, cfg->seed * 1000003u + round);
		for (i = 0; cfg->target_guest && i < ngroups && !*io->stop; i++) {
			const struct host_group *hg = &groups[i];
			struct err ge = ERR_INIT;

			append(res->settings.group_order, sizeof(res->settings.group_order), "%s%u:%s/%s",
			       res->settings.group_order[0] ? " " : "", round, hg->host_thp, prefault_name(hg->prefault));
			r = host_session_set(&hs, "enabled", hg->host_thp, e);
			if (r)
				goto out;
			progress(io, "round %u, host THP enabled=%s, allocation %s (guest %zu of %zu this round)", round + 1,
				 hg->host_thp, prefault_name(hg->prefault), i + 1, ngroups);
			if (io->bar) {
				char name[96];

				snprintf(name, sizeof(name), "round %u: host %s/%s, guest cells", round + 1, hg->host_thp,
					 prefault_name(hg->prefault));
				progress_cell_start(io->bar, name);
			}
			r = run_guest(cfg, io, v, accel, &img, kc ? &sd : NULL, hg, idx++, round, res, &ge);
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
		for (i = 0; cfg->target_host && i <= cfg->n_host_thp && !*io->stop; i++) {
			/* every round: never first is fine here, nothing is cached between processes */
			if (io->bar) {
				char name[96];

				snprintf(name, sizeof(name), "round %u: bare host, host %s", round + 1,
					 i == 0 ? "never" : cfg->host_thp[i - 1]);
				progress_cell_start(io->bar, name);
			}
			r = run_host_target(cfg, io, &hs, kc ? &sd : NULL, i == 0 ? "never" : cfg->host_thp[i - 1], round,
					    res, e);
			if (r)
				goto out;
			if (io->bar)
				progress_cell_done(io->bar, true, NULL);
			save_partial(res, cfg, json_path);
		}
		res->settings.rounds = round + 1;
		if (!more_rounds(cfg, io, res, round + 1, now_s() - t_start))
			break;
		if (io->bar)	/* another round: the total grows */
			io->bar->total += (cfg->target_guest ? ngroups : 0) + (cfg->target_host ? cfg->n_host_thp + 1 : 0);
	}
	if (*io->stop)
		r = err_set(e, -EINTR, "interrupted: partial results kept");
out:
	if (io->bar && io->bar->total)
		progress_finish(io->bar);
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
