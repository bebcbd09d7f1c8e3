#include "runner.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "appsrv.h"
#include "harness.h"
#include "kcompile.h"
#include "memset.h"
#include "lib/parse.h"
#include "lib/wltraits.h"
#include "plan.h"
#include "port.h"
#include "prng.h"
#include "probe.h"
#include "sysinfo.h"

#ifndef THPEVAL_VERSION
#define THPEVAL_VERSION "dev"
#endif

/* ---- the runner ------------------------------------------------------------ */

struct runner {
	bool pid1;
	bool set_thp;		/* write the THP knob (always as PID 1) */
	bool vport;		/* output is the virtio port: wait for "bye" */
	const char *root;
	const char *exe;
	const char *cmdline_path;
	const char *port_path;	/* test mode output */
	int console;		/* progress and diagnostics */
	uint64_t start_us;	/* CLOCK_MONOTONIC when the runner started: the guest kernel's age */
	struct emitter em;
	struct plan plan;
};

static void say(struct runner *rn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void say(struct runner *rn, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(rn->console, "thpeval: ", 9) < 0 || write(rn->console, line, (size_t)n) < 0)
		return;	/* nowhere else to say it */
}

static void mount_all(struct runner *rn)
{
	static const struct {
		const char *src, *dir, *type;
		unsigned long flags;
	} m[] = {
		{ "proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC },
		{ "sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC },
		{ "devtmpfs", "/dev", "devtmpfs", MS_NOSUID },
		{ "tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV },
		{ "debugfs", "/sys/kernel/debug", "debugfs", MS_NOSUID | MS_NODEV | MS_NOEXEC },
	};
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		if (mkdir(m[i].dir, 0755) && errno != EEXIST)
			say(rn, "cannot create '%s': %s", m[i].dir, strerror(errno));
		if (mount(m[i].src, m[i].dir, m[i].type, m[i].flags, NULL) && errno != EBUSY)
			say(rn, "cannot mount %s on '%s': %s", m[i].type, m[i].dir, strerror(errno));
	}
}

/*
 * As PID 1, when a planned workload reads a kernel source (kcompile): the
 * read-only source disk, if the guest has one, at KC_SRC_DEFAULT. Without it
 * the workload skips with its reason.
 */
static void mount_source(struct runner *rn)
{
	size_t i;
	bool want = false;

	for (i = 0; i < rn->plan.nworkloads; i++)
		want |= workload_param(rn->plan.workloads[i], "src") != NULL;
	if (!want || !rn->pid1)
		return;
	if (access(KC_SRC_DEVICE, F_OK)) {
		say(rn, "no %s: no kernel source disk attached", KC_SRC_DEVICE);
		return;
	}
	if ((mkdir("/mnt", 0755) && errno != EEXIST) ||
	    (mkdir(KC_SRC_DEFAULT, 0755) && errno != EEXIST)) {
		say(rn, "cannot create '%s': %s", KC_SRC_DEFAULT, strerror(errno));
		return;
	}
	if (mount(KC_SRC_DEVICE, KC_SRC_DEFAULT, "ext4", MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) &&
	    errno != EBUSY)
		say(rn, "cannot mount %s on '%s': %s", KC_SRC_DEVICE, KC_SRC_DEFAULT,
		    strerror(errno));
	else
		say(rn, "kernel source disk %s mounted read-only on %s", KC_SRC_DEVICE,
		    KC_SRC_DEFAULT);
}

/* Never returns as PID 1: the kernel panics if init exits. */
static int finish(struct runner *rn, int code)
{
	if (rn->em.fd > STDERR_FILENO)
		close(rn->em.fd);
	if (!rn->pid1)
		return code;
	say(rn, "powering off");
	sync();
	reboot(RB_POWER_OFF);
	say(rn, "reboot(RB_POWER_OFF) failed: %s", strerror(errno));
	for (;;)
		pause();
}

static void join_thp(const enum guest_thp *v, size_t n, char *buf, size_t len)
{
	size_t i, pos = 0;

	buf[0] = '\0';
	for (i = 0; i < n && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%s", i ? "," : "",
					guest_thp_name(v[i]));
}

/* the per-size mTHP directories of this kernel ("16,32,64" kB), "none" before Linux 6.8 */
static void mthp_sizes(const char *root, char *buf, size_t len)
{
	char path[512];
	unsigned kb[32], t;
	size_t n = 0, i, j, pos = 0;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/sys/kernel/mm/transparent_hugepage", root);
	dir = opendir(path);
	while (dir && (d = readdir(dir)) && n < 32)
		if (sscanf(d->d_name, "hugepages-%ukB", &kb[n]) == 1)
			n++;
	if (dir)
		closedir(dir);
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (kb[j] < kb[i])
				t = kb[i], kb[i] = kb[j], kb[j] = t;
	snprintf(buf, len, "none");
	for (i = 0; i < n && pos < len; i++)
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%u", i ? "," : "", kb[i]);
}

/*
 * The guest kernel's printk time (us) of "Run /init as init process": where
 * the kernel's own start ends and the initrd's begins. 0 when /dev/kmsg does
 * not have it (not PID 1, or the record has been overwritten).
 */
static uint64_t kmsg_init_us(void)
{
	static const char mark[] = "Run /init as init process";
	char rec[1024];
	uint64_t us = 0;
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return 0;
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		unsigned long long ts;
		char *msg;

		if (n < 0 && errno == EPIPE)
			continue;	/* records overwritten under us: go on with the next */
		if (n <= 0)
			break;
		rec[n] = '\0';
		msg = strchr(rec, ';');
		/* "prio,seq,ts_us,flags;message" */
		if (msg && strstr(msg, mark) && sscanf(rec, "%*u,%*u,%llu", &ts) == 1) {
			us = ts;
			break;
		}
	}
	close(fd);
	return us;
}

static int send_hello(struct runner *rn, bool plan_ok, struct err *e)
{
	const struct plan *p = &rn->plan;
	char v[THP_VALUE_MAX], list[160];
	struct utsname u;
	uint64_t mem = 0;
	struct record r;
	size_t i, pos = 0;
	char path[512];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	rec_init(&r, REC_HELLO, 0);
	rec_add_str(&r, "version", THPEVAL_VERSION);
	rec_add_str(&r, "kernel", uname(&u) ? "unknown" : u.release);
	if (!meminfo_get(rn->root, "MemTotal", &mem, NULL))
		rec_add_u64(&r, "mem_total_kb", mem / 1024);
	rec_add_u64(&r, "cpus", cpus > 0 ? (uint64_t)cpus : 0);
	rec_add_u64(&r, "thp_supported", thp_supported(rn->root));
	snprintf(path, sizeof(path), "%s/sys/kernel/mm/transparent_hugepage/khugepaged", rn->root);
	rec_add_u64(&r, "khugepaged", access(path, F_OK) == 0);
	thp_knob_get(rn->root, "enabled", v, sizeof(v), NULL);
	rec_add_str(&r, "thp_enabled", v);
	thp_knob_get(rn->root, "defrag", v, sizeof(v), NULL);
	rec_add_str(&r, "thp_defrag", v);
	mthp_sizes(rn->root, list, sizeof(list));
	rec_add_str(&r, "mthp_sizes_kb", list);
	rec_add_u64(&r, "pid1", rn->pid1);
	rec_add_u64(&r, "plan_ok", plan_ok);
	if (rn->pid1) {
		/* the boot's phases on the guest kernel's clock, which starts with it */
		uint64_t init_us = kmsg_init_us();

		if (init_us)
			rec_add_u64(&r, "boot_init_us", init_us);
		rec_add_u64(&r, "boot_runner_us", rn->start_us);
		rec_add_u64(&r, "boot_hello_us", harness_now_ns() / 1000);
	}
	if (plan_ok) {
		join_thp(p->guest_thp, p->nthp, list, sizeof(list));
		rec_add_str(&r, "guest_thp", list);
		list[0] = '\0';
		for (i = 0; i < p->nworkloads && pos < sizeof(list); i++)
			pos += (size_t)snprintf(list + pos, sizeof(list) - pos, "%s%s", i ? "," : "",
						p->workloads[i]->name);
		rec_add_str(&r, "workloads", list);
		rec_add_u64(&r, "reps", p->reps);
		rec_add_u64(&r, "warmup", p->warmup);
		rec_add_u64(&r, "size_bytes", p->size);
		rec_add_u64(&r, "accesses", p->accesses);
		rec_add_u64(&r, "seed", p->seed);
		rec_add_u64(&r, "timeout_ms", p->timeout_ms);
		rec_add_str(&r, "port", p->port);
	}
	return emitter_send(&rn->em, &r, e);
}

/* THP for one cell: 0 to run it, 1 when a skip or fail was sent, < 0 on output errors */
static int cell_thp(struct runner *rn, enum guest_thp t, const struct record *ctx, struct err *e)
{
	const char *want = guest_thp_name(t);
	struct err why = ERR_INIT;
	char now[THP_VALUE_MAX], reason[ERR_MSG_MAX + 64];	/* cut to a record value on send */
	enum rec_type type = REC_FAIL;
	int r;

	if (!thp_supported(rn->root)) {
		type = REC_SKIP;
		snprintf(reason, sizeof(reason), "transparent hugepages not supported by this kernel");
	} else if (rn->set_thp) {
		if (!thp_knob_set(rn->root, "enabled", want, &why))
			return 0;
		snprintf(reason, sizeof(reason), "cannot set guest THP: %s", why.msg);
	} else {
		if (thp_knob_get(rn->root, "enabled", now, sizeof(now), &why) == 0 &&
		    !strcmp(now, want))
			return 0;
		type = REC_SKIP;
		snprintf(reason, sizeof(reason),
			 "THP is '%s' here and test mode leaves it alone (--set-thp writes it)",
			 now);
	}
	say(rn, "%s guest_thp=%s: %s", type == REC_SKIP ? "skip" : "fail", want, reason);
	r = emitter_send_reason(&rn->em, type, ctx, reason, e);
	return r ? r : 1;
}

static void context_init(struct record *ctx, const char *workload, unsigned round, bool warm,
			 uint64_t seed, enum guest_thp t)
{
	rec_init(ctx, REC_FAIL, 0);
	rec_add_str(ctx, "workload", workload);
	rec_add_u64(ctx, "rep", round);
	rec_add_u64(ctx, "warmup", warm);
	rec_add_u64(ctx, "seed", seed);
	rec_add_str(ctx, "guest_thp", guest_thp_name(t));
}

/*
 * A workload's runner_variants change guest settings (use_zero_page): only
 * where the runner owns them, as PID 1 or with --set-thp on the real /sys.
 */
static size_t cell_variants(const struct runner *rn, const struct workload *w)
{
	size_t n = 0;

	if (!w->runner_variants || !(rn->pid1 || (rn->set_thp && !*rn->root)))
		return 0;
	while (w->runner_variants[n])
		n++;
	return n;
}

/* the user's value of w's parameter param for this run (--workload-opts), else NULL */
static const char *cell_opt(const struct plan *p, const struct workload *w, const char *param)
{
	size_t k;

	for (k = 0; k < p->nwlopts; k++)
		if (!strcmp(p->wlopts[k].workload, w->name) && !strcmp(p->wlopts[k].param, param))
			return p->wlopts[k].value;
	return NULL;
}

/*
 * One run's limit: a workload with a timeout parameter (its own limit, in
 * seconds: kcompile's build, exec's command) gets that, the user's value or
 * its default, plus the margin in which it reports the timeout itself; any
 * other gets the plan's per-run timeout.
 */
static uint64_t cell_timeout_ms(const struct plan *p, const struct workload *w)
{
	const struct wl_param *t = wl_param_find(w->params, "timeout");
	const char *v = t ? cell_opt(p, w, "timeout") : NULL;
	uint64_t s;

	if (!t || ((!v || parse_u64(v, &s) || s > 1000000000) && (parse_u64(t->def, &s) || s > 1000000000)))
		return p->timeout_ms;
	return s * 1000 + ARGV_EXEC_MARGIN_MS;
}

/* one word of a workload's argv: --PARAM=VALUE with the longest value a list carries */
typedef char cell_word[WLOPT_NAME_MAX + WLOPT_VALUE_MAX + 8];

/*
 * The argv of one run of w, from w's own parameter table: the runner's
 * words, then each parameter the run sets: the user's value (the plan's
 * wlopts), else for size, accesses and madvise (the plan's for every
 * workload that takes them) the plan's; the others keep w's defaults.
 * Returns the count of words in o[0..max).
 */
static int cell_argv(const struct runner *rn, const struct workload *w, unsigned round, enum guest_thp t,
		     cell_word *o, size_t max)
{
	const struct plan *p = &rn->plan;
	const struct wl_param *q;
	int n = 0;

	snprintf(o[n++], sizeof(o[0]), "%s", rn->exe);
	snprintf(o[n++], sizeof(o[0]), "workload");
	snprintf(o[n++], sizeof(o[0]), "%s", w->name);
	snprintf(o[n++], sizeof(o[0]), "--rep=%u", round);
	snprintf(o[n++], sizeof(o[0]), "--warmup=%d", round < p->warmup);
	snprintf(o[n++], sizeof(o[0]), "--seed=%" PRIu64, p->seed);
	snprintf(o[n++], sizeof(o[0]), "--label=guest_thp=%s", guest_thp_name(t));
	for (q = w->params; q->name && (size_t)n < max; q++) {
		const char *v = cell_opt(p, w, q->name);

		if (v)
			snprintf(o[n++], sizeof(o[0]), "--%s=%s", q->name, v);
		else if (!strcmp(q->name, "size"))
			snprintf(o[n++], sizeof(o[0]), "--size=%" PRIu64, p->size);
		else if (!strcmp(q->name, "accesses"))
			snprintf(o[n++], sizeof(o[0]), "--accesses=%" PRIu64, p->accesses);
		else if (!strcmp(q->name, "madvise"))
			/* under 'madvise' the workload opts in, as an application using THP would */
			snprintf(o[n++], sizeof(o[0]), "--madvise=%d", t == GUEST_THP_MADVISE);
	}
	return n;
}

/* the guest shmem axis: one run per shmem_enabled value, where the runner owns it; their count */
static size_t cell_shmem(const struct runner *rn, const struct workload *w, char (*shm)[48],
			 const char **vars)
{
	const struct plan *p = &rn->plan;
	size_t k;

	if (!p->nshmem || !workload_param(w, "shmem-thp") || !(rn->pid1 || (rn->set_thp && !*rn->root)))
		return 0;
	for (k = 0; k < p->nshmem; k++) {
		snprintf(shm[k], sizeof(shm[k]), "--shmem-thp=%s", p->shmem_thp[k]);
		vars[k] = shm[k];
	}
	vars[p->nshmem] = NULL;
	return p->nshmem;
}

static int run_cell(struct runner *rn, unsigned round, enum guest_thp t, struct err *e)
{
	const struct plan *p = &rn->plan;
	bool warm = round < p->warmup;
	size_t i;
	int r;

	for (i = 0; i < p->nworkloads; i++) {
		const struct workload *w = p->workloads[i];
		/* the runner's words and the workload's parameters; the variant apart */
		cell_word o[16 + WLOPTS_MAX];
		char *argv[18 + WLOPTS_MAX], xvar[64];
		uint64_t timeout_ms = cell_timeout_ms(p, w);
		char shm[PLAN_MAX_SHMEM][48];
		const char *shm_vars[PLAN_MAX_SHMEM + 1];
		const char *const *variants = w->runner_variants;
		struct fwd_stats st;
		struct record ctx;
		size_t k, v, nvar = cell_shmem(rn, w, shm, shm_vars);
		/* memset's keep phase ends early on the host's word (a migration settled) */
		const char *keep = cell_opt(p, w, "keep");
		const struct fwd_watch watch = { rn->vport && keep && strcmp(keep, "0") ? MEMSET_KEEP_STOP_FILE : NULL };
		uint64_t t0;
		int n;

		if (nvar)
			variants = shm_vars;
		else
			nvar = cell_variants(rn, w);
		context_init(&ctx, w->name, round, warm, p->seed, t);
		if (i == 0) {
			/* the THP setting is per cell; its failure is reported for each workload */
			r = cell_thp(rn, t, &ctx, e);
			if (r < 0)
				return r;
			if (r > 0) {
				for (k = 1; k < p->nworkloads; k++) {
					context_init(&ctx, p->workloads[k]->name, round, warm, p->seed, t);
					if ((r = emitter_send_reason(&rn->em, REC_SKIP, &ctx,
								     "THP setting of the cell failed", e)))
						return r;
				}
				return 0;
			}
		}
		n = cell_argv(rn, w, round, t, o, sizeof(o) / sizeof(o[0]));
		for (k = 0; k < (size_t)n; k++)
			argv[k] = o[k];
		/* each variant once (in turn reversed on odd rounds), or the workload once */
		for (v = 0; v < (nvar ? nvar : 1); v++) {
			const char *extra = nvar ? variants[round % 2 ? nvar - 1 - v : v] : NULL;

			say(rn, "round %u%s guest_thp=%s %s%s%s", round, warm ? " (warm-up)" : "",
			    guest_thp_name(t), w->name, extra ? " " : "", extra ? extra : "");
			if (extra)
				snprintf(xvar, sizeof(xvar), "%s", extra);
			argv[n] = extra ? xvar : NULL;
			argv[n + 1] = NULL;
			t0 = harness_now_ns();
			r = runner_exec_watch(argv, &rn->em, &ctx, timeout_ms, &watch, &st, e);
			if (r)
				return r;
			if (st.by_type[REC_RESULT] == 0)
				say(rn, "round %u guest_thp=%s %s: no result (see the fail record)",
				    round, guest_thp_name(t), w->name);
			/* the run's wall time on the console: what a workload costs a guest */
			say(rn, "round %u guest_thp=%s %s%s%s: %.1f s", round, guest_thp_name(t), w->name,
			    extra ? " " : "", extra ? extra : "", (double)(harness_now_ns() - t0) / 1e9);
		}
	}
	return 0;
}

/* guest THP settings in a seeded random order */
static void thp_order(const struct plan *p, uint64_t salt, enum guest_thp *order)
{
	uint64_t st = prng_mix(p->seed ^ salt);
	size_t i;

	memcpy(order, p->guest_thp, sizeof(p->guest_thp));
	for (i = p->nthp; i > 1; i--) {
		size_t j = (size_t)prng_below(&st, i);
		enum guest_thp t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
}

#define COLD_MARGIN (96ull << 20)	/* left to the guest's kernel and runner */
#define COLD_MIN (16ull << 20)		/* smaller buffers time too few faults */
#define COLD_MAX_HELD (100 * GUEST_THP__COUNT)

/* the size of each host-cold buffer: all of them are held at once */
static uint64_t cold_size(struct runner *rn, uint64_t count)
{
	const struct plan *p = &rn->plan;
	uint64_t avail = 0, per;

	if (meminfo_get(rn->root, "MemAvailable", &avail, NULL) || avail <= COLD_MARGIN)
		return 0;
	per = (avail - COLD_MARGIN) / count;
	per -= per % (2ull << 20);
	return per < p->size ? per : p->size;
}

/*
 * The host-cold series, before any other workload touches guest memory: for
 * each of plan.cold rounds and each guest THP setting, the workload whose
 * traits have a host-cold series (lib/wltraits.h: memset) faults a fresh
 * buffer and keeps it (--hold=1), so every buffer lands on guest memory no
 * earlier run touched: its faults are the host's first touch too (with
 * allocation ondemand). Records carry the traits' cold variant (cold); the
 * buffers are released before the warm rounds.
 */
static int run_cold(struct runner *rn, struct err *e)
{
	const struct plan *p = &rn->plan;
	pid_t held[COLD_MAX_HELD];
	uint64_t k, size, count = p->cold * p->nthp;
	size_t nh = 0, i, j, n;
	const struct wl_split *sp = NULL;
	const char *name;
	struct record info;
	int r = 0;

	for (i = 0; i < p->nworkloads; i++)
		if ((sp = wltraits_split(p->workloads[i]->name)) && sp->cold_variant)
			break;
	if (!p->cold || i == p->nworkloads)
		return 0;
	name = p->workloads[i]->name;
	size = count <= COLD_MAX_HELD ? cold_size(rn, count) : 0;
	rec_init(&info, REC_INFO, 0);
	rec_add_str(&info, "event", "cold");
	rec_add_u64(&info, "buffers", count);
	rec_add_u64(&info, "size_bytes", size);
	if (size < COLD_MIN) {
		rec_add_str(&info, "skipped", "guest memory too small for the host-cold series");
		say(rn, "host-cold series skipped: %" PRIu64 " buffers do not fit the guest's memory", count);
		return emitter_send(&rn->em, &info, e);
	}
	if ((r = emitter_send(&rn->em, &info, e)))
		return r;
	for (k = 0; k < p->cold && !r; k++) {
		enum guest_thp order[GUEST_THP__COUNT];

		thp_order(p, 0x9e3779b97f4a7c15ull * (k + 101), order);
		for (i = 0; i < p->nthp && !r; i++) {
			enum guest_thp t = order[i];
			char o[12][72], *argv[13];
			struct fwd_stats st;
			struct record ctx;

			context_init(&ctx, name, (unsigned)k, false, p->seed, t);
			rec_add_str(&ctx, "variant", sp->cold_variant);
			r = cell_thp(rn, t, &ctx, e);
			if (r) {
				r = r < 0 ? r : 0;
				continue;
			}
			n = 0;
			snprintf(o[n++], sizeof(o[0]), "%s", rn->exe);
			snprintf(o[n++], sizeof(o[0]), "workload");
			snprintf(o[n++], sizeof(o[0]), "%s", name);
			snprintf(o[n++], sizeof(o[0]), "--rep=%" PRIu64, k);
			snprintf(o[n++], sizeof(o[0]), "--warmup=0");
			snprintf(o[n++], sizeof(o[0]), "--seed=%" PRIu64, p->seed);
			snprintf(o[n++], sizeof(o[0]), "--label=guest_thp=%s", guest_thp_name(t));
			snprintf(o[n++], sizeof(o[0]), "--label=variant=%s", sp->cold_variant);
			snprintf(o[n++], sizeof(o[0]), "--size=%" PRIu64, size);
			snprintf(o[n++], sizeof(o[0]), "--madvise=%d", t == GUEST_THP_MADVISE);
			snprintf(o[n++], sizeof(o[0]), "--hold=1");
			for (j = 0; j < n; j++)
				argv[j] = o[j];
			argv[n] = NULL;
			say(rn, "host-cold %" PRIu64 " guest_thp=%s %s %" PRIu64 "M (held)", k,
			    guest_thp_name(t), name, size >> 20);
			r = runner_exec_hold(argv, &rn->em, &ctx, p->timeout_ms, &st, &held[nh], e);
			if (held[nh] > 0)
				nh++;
		}
	}
	runner_release(held, nh);
	return r;
}

static int run_plan(struct runner *rn, struct err *e)
{
	const struct plan *p = &rn->plan;
	uint64_t rounds = p->warmup + p->reps, round;
	int r;

	if ((r = run_cold(rn, e)))
		return r;

	for (round = 0; round < rounds; round++) {
		enum guest_thp order[GUEST_THP__COUNT];
		char list[64];
		struct record info;
		size_t i;

		thp_order(p, 0x5851f42d4c957f2dull * (round + 1), order);
		join_thp(order, p->nthp, list, sizeof(list));
		rec_init(&info, REC_INFO, 0);
		rec_add_str(&info, "event", "round");
		rec_add_u64(&info, "round", round);
		rec_add_u64(&info, "warmup", round < p->warmup);
		rec_add_str(&info, "order", list);
		if ((r = emitter_send(&rn->em, &info, e)))
			return r;
		say(rn, "round %" PRIu64 " of 0..%" PRIu64 "%s: guest_thp order %s", round,
		    rounds - 1, round < p->warmup ? " (warm-up)" : "", list);
		for (i = 0; i < p->nthp; i++)
			if ((r = run_cell(rn, (unsigned)round, order[i], e)))
				return r;
		if (rn->pid1)
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;	/* orphans reparented to init */
	}
	return 0;
}

/* a host recovery arm's access passes after the series (guest/probe.c) */
static int run_probe(struct runner *rn, struct err *e)
{
	const struct probe_env env = { rn->root, rn->set_thp, rn->vport ? rn->em.fd : -1 };

	return probe_run(&env, &rn->plan, &rn->em, e);
}

static int parse_opts(struct runner *rn, int argc, char *const argv[], struct err *e)
{
	static const struct {
		const char *name;
		size_t off;
	} opts[] = {
		{ "--cmdline=", offsetof(struct runner, cmdline_path) },
		{ "--port=", offsetof(struct runner, port_path) },
		{ "--exe=", offsetof(struct runner, exe) },
		{ "--root=", offsetof(struct runner, root) },
	};
	int i;
	size_t k;

	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--set-thp")) {
			rn->set_thp = true;
			continue;
		}
		for (k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
			size_t n = strlen(opts[k].name);

			if (!strncmp(argv[i], opts[k].name, n) && argv[i][n]) {
				*(const char **)((char *)rn + opts[k].off) = argv[i] + n;
				break;
			}
		}
		if (k == sizeof(opts) / sizeof(opts[0]))
			return err_set(e, -EINVAL, "unknown runner option '%s': runner " RUNNER_USAGE,
				       argv[i]);
	}
	return 0;
}

static int open_output(struct runner *rn, struct err *e)
{
	int fd;

	if (rn->port_path && !strcmp(rn->port_path, "-"))
		return STDOUT_FILENO;
	if (rn->port_path) {
		fd = open(rn->port_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);
		if (fd < 0)
			return err_set(e, -errno, "cannot open '%s': %s", rn->port_path,
				       strerror(errno));
		return fd;
	}
	fd = port_open(rn->root, rn->plan.port, rn->pid1, RUNNER_PORT_WAIT_MS, e);
	if (fd >= 0)
		rn->vport = true;
	return fd;
}

int runner_main(int argc, char *const argv[], bool pid1)
{
	char cmdline[PLAN_CMDLINE_MAX + 2];
	size_t cmdline_len;
	struct runner rn = {
		.pid1 = pid1, .set_thp = pid1, .root = "", .exe = "/proc/self/exe",
		.cmdline_path = "/proc/cmdline", .console = STDERR_FILENO,
	};
	struct err e = ERR_INIT;
	char why[ERR_MSG_MAX], ports[256];
	bool plan_ok;
	int fd, r;

	rn.start_us = harness_now_ns() / 1000;
	rn.em.fd = -1;
	if (!pid1 && parse_opts(&rn, argc, argv, &e)) {
		say(&rn, "%s", e.msg);
		return 2;
	}
	if (pid1) {
		mount_all(&rn);
		fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
		if (fd >= 0)
			rn.console = fd;
	}
	signal(SIGPIPE, SIG_IGN);	/* a closed output is an error return, not a death */
	say(&rn, "runner %s starting%s", THPEVAL_VERSION, pid1 ? " as PID 1" : " (test mode)");

	why[0] = '\0';
	if (appsrv_read_file(rn.cmdline_path, cmdline, sizeof(cmdline), &cmdline_len, &e)) {
		snprintf(why, sizeof(why), "%s", e.msg);
		err_clear(&e);
		plan_defaults(&rn.plan);
	} else {
		plan_parse(cmdline, &rn.plan, why, sizeof(why));
	}
	plan_ok = !why[0];
	if (!plan_ok)
		say(&rn, "bad plan: %s", why);
	else
		mount_source(&rn);

	fd = open_output(&rn, &e);
	if (fd < 0) {
		port_list(rn.root, ports, sizeof(ports));
		say(&rn, "no output for records: %s; virtio ports seen: %s", e.msg, ports);
		return finish(&rn, 2);
	}
	emitter_init(&rn.em, fd, RUNNER_WRITE_MS);
	say(&rn, "records go to %s", rn.vport ? rn.plan.port : rn.port_path);

	if ((r = send_hello(&rn, plan_ok, &e)))
		goto fatal;
	if (!plan_ok) {
		char reason[ERR_MSG_MAX + 16];	/* cut to a record value on send */

		snprintf(reason, sizeof(reason), "bad plan: %s", why);
		if ((r = emitter_send_reason(&rn.em, REC_FAIL, NULL, reason, &e)))
			goto fatal;
	} else if ((r = run_plan(&rn, &e)) || (r = run_probe(&rn, &e))) {
		goto fatal;
	}
	{
		struct record end;

		rec_init(&end, REC_END, 0);
		rec_add_u64(&end, "results", rn.em.sent[REC_RESULT]);
		rec_add_u64(&end, "failed", rn.em.sent[REC_FAIL]);
		rec_add_u64(&end, "skipped", rn.em.sent[REC_SKIP]);
		if ((r = emitter_send(&rn.em, &end, &e)))
			goto fatal;
		say(&rn, "done: %u results, %u failed, %u skipped", rn.em.sent[REC_RESULT],
		    rn.em.sent[REC_FAIL], rn.em.sent[REC_SKIP]);
	}
	if (rn.vport && port_wait_bye(rn.em.fd, RUNNER_BYE_MS, &e))
		say(&rn, "%s", e.msg);
	return finish(&rn, rn.em.sent[REC_FAIL] ? 1 : 0);

fatal:
	say(&rn, "fatal: %s", e.msg);
	return finish(&rn, 1);
}
