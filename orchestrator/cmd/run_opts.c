/*
 * thpeval run's options: the option table and the parsers that fill a struct
 * run_config (run/config.h), and the checks of the exec workload's options
 * against the selected workloads (exec_select); cmd/run.c runs what they
 * describe.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/parse.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/model/results_load.h"
#include "orchestrator/report/report.h"
#include "orchestrator/run/abaxis.h"
#include "orchestrator/run/config.h"
#include "orchestrator/run/run.h"
#include "orchestrator/virt/virt.h"

/* ---- options ----------------------------------------------------------------- */

enum run_opt {
	RO_HOST_THP, RO_GUEST_THP, RO_WORKLOADS, RO_REPS, RO_WARMUP, RO_MEMORY, RO_VCPUS, RO_SIZE,
	RO_ACCESSES, RO_SEED, RO_TIMEOUT, RO_MIN_COV, RO_ACCEL, RO_CONNECT, RO_OUT, RO_KERNEL,
	RO_GUEST_BIN, RO_CACHE_DIR, RO_STATE_DIR, RO_SYSFS_ROOT, RO_QUIET, RO_PREFAULT, RO_TARGET_CI,
	RO_MAX_REPS, RO_BUDGET, RO_TARGET, RO_BACKING, RO_FORMAT, RO_DB, RO_BASELINE, RO_THRESHOLD,
	RO_COLD_REPS, RO_GUESTS, RO_HOST_STATE, RO_MTHP_SWEEP, RO_KCOMPILE, RO_KCOMPILE_TIMEOUT,
	RO_BOOTS, RO_GATE, RO_PIN, RO_EXEC, RO_EXEC_METRIC, RO_EXEC_DIRECTION, RO_EXEC_TIMEOUT,
	RO_IMAGE_PACKAGES, RO_GUEST_SHMEM, RO_WL_OPTS, RO_FAIL_ON, RO_EMULATOR,
	RO_KSM,
};

static const struct opt run_opts[] = {
	{ "host-thp", "LIST", "always", "host THP settings to evaluate against the host 'never' baseline: always, madvise (QEMU madvises guest RAM, so madvise acts like always), or one multi-size THP size alone as SIZE:MODE, e.g. 64K:always (hugepages-64kB/enabled=always, every other size and 'enabled' never; Linux 6.8+)", RO_HOST_THP },
	{ "mthp-sweep", NULL, NULL, "add SIZE:always to --host-thp for every hugepages-<N>kB size the host kernel offers, and report per size the fault-phase and access-phase effect and coverage (guest-side sizes are probed and reported)", RO_MTHP_SWEEP },
	{ "guests", "N", "1", "guests that run the same cells at the same time (1-8), each with its own records, coverage and telemetry; refused when N guests will not fit in the host's available memory", RO_GUESTS },
	{ "host-state", "LIST", "fresh", "host memory before the guests start: fresh, fragmented (a child holds one 4K page of every 2M block it can get, as virtualization QA suites do; proactive compaction off for the arm, per-CPU free lists short while fragmenting and on undo, both journaled; /proc/buddyinfo recorded before, after and once undone), collapse-madvise (guests run on host THP never, then the setting is applied and guest RAM collapsed by process_madvise MADV_COLLAPSE, Linux 6.1+; coverage each second), or a list", RO_HOST_STATE },
	{ "guest-thp", "LIST", "always", "guest THP settings to evaluate against guest 'never'", RO_GUEST_THP },
	{ "guest-shmem-thp", "LIST", NULL, "guest shmem_enabled values (always, within_size, advise, never, deny, force), each run in turn by the workloads whose memory is shared memory (pgbench's shared_buffers), as cell variants shmem-VALUE; not given: the guest's own (recorded)", RO_GUEST_SHMEM },
	{ "workloads", "LIST", "memset", "workloads to run, comma-separated, or all ('thpeval workloads' lists them)", RO_WORKLOADS },
	{ "workload-opts", "LIST", NULL, "parameters of the selected workloads beyond the run's own, WORKLOAD:PARAM=VALUE,... (e.g. redis:dataset=4G,pgbench:scale=400 for a lab host; 'thpeval workloads' lists each one's parameters and defaults); the workload checks the value", RO_WL_OPTS },
	{ "target", "guest|host|both", "guest", "where the workloads run: in guests, directly on the host (the bare-metal rows, same host THP settings), or both", RO_TARGET },
	{ "host-prefault", "LIST", "ondemand", "host allocation of guest RAM: ondemand (QEMU faults it as the guest touches it), immediate (preallocated at start); both separate host prefault from host TLB", RO_PREFAULT },
	{ "boots", "N", "4, then by --target-ci", "guest boots per host setting (1-50), in an interleaved order (each pair of rounds runs the host settings in a random order, then reversed: ABBA), so drift falls on every setting alike; host-side effects replicate over boots (a host setting is applied per boot), so they need 2 or more. Given alone, exactly N; with --target-ci, at least N and at least 6", RO_BOOTS },
	{ "reps", "N", "3", "measured repetitions per cell in each boot (1-100)", RO_REPS },
	{ "pin", "auto|none", "auto", "auto: each vCPU on a host CPU of its own and QEMU's other threads on CPU 0 (libvirt <cputune>), where the host has a CPU for each (guests x vCPUs + 1), else none; none: the host scheduler places them", RO_PIN },
	{ "warmup", "N", "3", "unmeasured warm-up repetitions per cell (0-10)", RO_WARMUP },
	{ "cold-reps", "N", "3", "memset host-cold repetitions per guest THP setting in every fresh guest (0-20; 0 = none): fresh buffers held together, so each first touch is the host's first touch too (cells with variant 'cold'); the host prefault effect is measured on them", RO_COLD_REPS },
	{ "memory", "SIZE", "1G", "guest RAM (suffixes K, M, G)", RO_MEMORY },
	{ "vcpus", "N", "1", "guest vCPUs (1-64)", RO_VCPUS },
	{ "size", "SIZE", "256M", "memset buffer size, a multiple of 2M", RO_SIZE },
	{ "accesses", "N", "1000000", "dependent random accesses in the access phase", RO_ACCESSES },
	{ "host-backing", "LIST", "anonymous", "guest RAM on the host: anonymous memory (governed by THP 'enabled') or memfd (shmem, governed by 'shmem_enabled': host 'enabled' alone then has no effect, and the evidence shows it); add hugetlbfs and/or hugetlbfs-1g for the reference arms (host_thp 'hugetlbfs' or 'hugetlbfs-1g': guest RAM on 2M or 1G hugetlbfs pages, the pool reserved for the run and released after; 1G needs --memory in whole GiB and a host that offers 1G pages)", RO_BACKING },
	{ "target-ci", "HOST[,GUEST]|none", "15,5 unless --boots", "after --boots, keep adding rounds (one more boot per host setting each) until every split effect's 95% CI half-width is at most HOST points for host-side effects and interactions and GUEST points (HOST when not given) for guest-side ones, judged on the log scale (ln(1 + HOST/100)); an effect whose projected boots exceed what --budget and --max-reps allow is not chased, and the results say so; none: exactly --boots rounds", RO_TARGET_CI },
	{ "max-reps", "N", "50 x --reps", "with a CI target: repetitions per cell at most, over all boots", RO_MAX_REPS },
	{ "budget", "DURATION", "9m with the default target", "with a CI target: stop adding rounds when another would end past this much time from the start", RO_BUDGET },
	{ "seed", "N", "time-based", "seed for access order and cell order (recorded)", RO_SEED },
	{ "timeout", "DURATION", "15m", "per-guest limit from boot to power-off (s, m, h suffixes); kcompile runs add their own limit on top", RO_TIMEOUT },
	{ "kcompile", "CONFIG:TARGET", "tinyconfig:mm/", "the kcompile workload's build: make CONFIG (untimed), then make -j<vcpus> TARGET timed (defconfig:vmlinux for labs)", RO_KCOMPILE },
	{ "kcompile-timeout", "DURATION", "20m", "limit of one kcompile run (a kernel build under TCG takes minutes)", RO_KCOMPILE_TIMEOUT },
	{ "exec", "COMMAND", NULL, "the exec workload's command, run in the guests by fork/execve without a shell: words split at spaces, '...' and \"...\" quote, a backslash escapes; no expansion or globbing ($ ; | * are bytes of the words; sh -c '...' is yours to write); at most 4096 characters, 64 words, no control characters, and what the guest kernel command line carries", RO_EXEC },
	{ "exec-metric", "REGEX", NULL, "a POSIX extended regex with one capture group: the number it captures on the last matching line of the command's output (its last MiB) is recorded as metric_higher or metric_lower; a run where none matches is a fail record", RO_EXEC_METRIC },
	{ "exec-direction", "higher|lower", NULL, "with --exec-metric: which way its number is better (what the gate tests)", RO_EXEC_DIRECTION },
	{ "exec-timeout", "DURATION", "10m", "limit of one exec run: then its process group is killed and the run is a fail record ('timed out after N s'); added to the guest's --timeout for each exec run", RO_EXEC_TIMEOUT },
	{ "image-packages", "PKG,...", NULL, "Debian packages added to the guest image (with their dependencies), copied from the host where they must be installed ('apt-get install -y --no-install-recommends PKG'); the list joins the image's content address", RO_IMAGE_PACKAGES },
	{ "min-coverage", "PCT", "90", "huge-page share an 'on' cell must show to be valid", RO_MIN_COV },
	{ "accel", "auto|kvm|tcg", "auto", "auto uses KVM only where it can boot a stock guest, else TCG", RO_ACCEL },
	{ "connect", "URI", "qemu:///system", "libvirt connection URI", RO_CONNECT },
	{ "out", "DIR", "thpeval-results/<time>", "results.json, domain XML and console log of every guest", RO_OUT },
	{ "kernel", "PATH", "newest /boot/vmlinuz-*", "guest kernel for the image", RO_KERNEL },
	{ "emulator", "PATH[,PATH]", "libvirt's", "the QEMU binary of every guest (libvirt <emulator>); with two, an A/B axis of the run: every host setting of every round boots once with each, in the rounds' interleaved order, and each gated metric and split effect is compared B against A over the run's boots ('emulator B vs A' in results.txt, \"ab\" in results.json); the same path twice is an A/A check. Each must be an executable file", RO_EMULATOR },
	{ "ksm", "off|on|off,on", NULL, "the KSM arm (kernel samepage merging, /sys/kernel/mm/ksm): on boots --guests=N (2 or more) guests of the same image together with KSM running at a fast scan rate and their domains without <nosharepages/> (cells of host state 'ksm'); off keeps <nosharepages/> with KSM stopped; KSM's knobs are journaled like the THP knobs. Recorded each second: pages_shared, pages_sharing, full_scans and each guest's host huge-page coverage, with the host's thp_split_pmd over the arm and the access time before and after merging; off,on adds the effect of KSM on every primary metric with its interval over boots. A host without KSM is refused", RO_KSM },
	{ "guest-bin", "PATH", "thpeval-guest beside thpeval, else ../libexec/thpeval/", "static guest program", RO_GUEST_BIN },
	{ "cache-dir", "DIR", "/var/cache/thpeval/images", "guest image cache", RO_CACHE_DIR },
	{ "state-dir", "DIR", "/var/lib/thpeval", "host settings journal and lock", RO_STATE_DIR },
	{ "sysfs-root", "DIR", "/", "root under which /sys and /proc are read and written (tests)", RO_SYSFS_ROOT },
	{ "format", "LIST", "text,json", "reports written under --out: " REPORT_FORMATS_HELP " (results.json is always written)", RO_FORMAT },
	{ "baseline", "FILE|DIR|last|history", NULL, "regression gate at the end: history judges the run against the last 10 complete runs of this host and setup in --db with their run-to-run drift (per metric kind: ok, suspect, regression, no-history; doc/gate.md); last compares with the newest complete run of this setup, passing or not; FILE|DIR with a stored run; exit 1 on a regression", RO_BASELINE },
	{ "fail-on", "regression|suspect", "regression", "with --baseline=history: the verdict that makes the run exit 1 (suspect: one run beyond the threshold; regression: the newest 3)", RO_FAIL_ON },
	{ "threshold", "PCT", "5", "with --baseline: smallest change that counts as a regression", RO_THRESHOLD },
	{ "gate", "primary|all", "primary", "with --baseline: metrics that gate, each workload's primary ones or every metric with a direction ('thpeval help compare'); Holm-corrected over all of them", RO_GATE },
	{ "db", "PATH|URI", "/var/lib/thpeval/history.db", "history database every finished run is appended to: an SQLite file, or PostgreSQL as postgresql://[USER@]HOST[:PORT]/DBNAME; 'none' for no history", RO_DB },
	{ "quiet", NULL, NULL, "no progress on stderr", RO_QUIET },
};

/* what run's options ask of each other (values aside: run_opts_check) */
static const struct opt_rule run_rules[] = {
	{ OPT_NEEDS, RO_THRESHOLD, RO_BASELINE, "the threshold is the regression gate's, which --baseline turns on" },
	{ OPT_NEEDS, RO_GATE, RO_BASELINE, "it chooses what the regression gate tests, which --baseline turns on" },
	{ OPT_NEEDS, RO_FAIL_ON, RO_BASELINE, "it chooses the history gate's verdict that fails the run, which --baseline=history turns on" },
};

const struct command run_cmd = {
	.name = "run",
	.args = NULL,
	.summary = "Boot guests over libvirt with host THP set to 'never' and to each setting under\n"
		   "evaluation, run the workloads inside with guest THP 'never' and each guest setting,\n"
		   "and report every cell with its repetitions, 95% confidence intervals and the\n"
		   "evidence (host and guest huge-page coverage) that the intended THP state held.",
	.details = "Host THP settings are journaled before they are changed and restored on exit,\n"
		   "on error and on SIGINT/SIGTERM; after a crash run 'thpeval host restore'.\n"
		   "Example: thpeval run --host-thp=always --guest-thp=always --reps=5 --out=results",
	CLI_OPTS(run_opts),
	CLI_RULES(run_rules),
};

/* --guest-shmem-thp: distinct values of the guest's shmem_enabled */
static int shmem_list_parse(const char *arg, struct run_config *c, struct err *e)
{
	static const char *const values[] = { "always", "within_size", "advise", "never", "deny", "force" };
	char buf[128], *tok, *save = NULL;
	size_t i;

	if (strlen(arg) >= sizeof(buf) || !*arg || parse_list_check(arg))
		return err_set(e, -EINVAL, "not a shmem_enabled list: give values such as never,always: %s", err_q(arg));
	strcpy(buf, arg);
	c->n_guest_shmem = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool known = false, dup = false;

		for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
			known |= !strcmp(tok, values[i]);
		if (!known)
			return err_set(e, -EINVAL, "not a shmem_enabled value: use always, within_size, "
				       "advise, never, deny or force: %s", err_q(tok));
		for (i = 0; i < c->n_guest_shmem; i++)
			dup |= !strcmp(c->guest_shmem[i], tok);
		if (!dup)
			strcpy(c->guest_shmem[c->n_guest_shmem++], tok);
	}
	return 0;
}

/* a selected workload takes --shmem-thp (the guest shmem axis applies to it) */
bool shmem_axis_planned(const struct run_config *c)
{
	size_t i;

	for (i = 0; i < c->n_wl; i++) {
		const struct workload_info *wi = workload_find(c->wl_info, c->n_wl_info, c->wl[i]);

		if (wi && workload_has_param(wi, "shmem-thp"))
			return true;
	}
	return false;
}

/* anonymous|memfd for the THP arms, plus optionally the hugetlbfs reference arms */
static int backing_parse(const char *arg, struct run_config *c, struct err *e)
{
	char buf[64], *tok, *save = NULL;
	bool thp_set = false;
	uint64_t kb;
	unsigned i;

	if (strlen(arg) >= sizeof(buf) || !*arg)
		return err_set(e, -EINVAL, "not a host backing list: use anonymous or memfd, "
			       "optionally with hugetlbfs or hugetlbfs-1g (e.g. anonymous,hugetlbfs): %s", err_q(arg));
	if (parse_list_check(arg))
		return err_set(e, -EINVAL, "empty item in host backing list '%.64s': separate items "
			       "with single commas (e.g. anonymous,hugetlbfs)", arg);
	strcpy(buf, arg);
	c->memfd = false;
	c->n_hugetlb = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum host_backing b;

		if (host_backing_parse(tok, &b))
			return err_set(e, -EINVAL, "not a host backing: use anonymous, memfd, hugetlbfs "
				       "or hugetlbfs-1g: %s", err_q(tok));
		if (hugetlb_arm_kb(tok, &kb)) {
			for (i = 0; i < c->n_hugetlb; i++)
				if (c->hugetlb_kb[i] == kb)
					return err_set(e, -EINVAL, "'%s' is given twice in the host backing list", tok);
			c->hugetlb_kb[c->n_hugetlb++] = kb;
			continue;
		}
		if (thp_set)
			return err_set(e, -EINVAL, "give one of anonymous and memfd (the THP arms' "
				       "backing), optionally with hugetlbfs or hugetlbfs-1g");
		thp_set = true;
		c->memfd = b == BACKING_MEMFD;
	}
	if (!thp_set && !c->n_hugetlb)
		return err_set(e, -EINVAL, "empty list");
	return 0;
}

static int set_path(char *dst, size_t len, const char *arg, const char *what, struct err *e)
{
	if (strlen(arg) >= len)
		return err_set(e, -ENAMETOOLONG, "%s path too long", what);
	strcpy(dst, arg);
	return 0;
}

static int bad_value(struct err *e, int rc, const char *arg, const char *expect)
{
	return err_set(e, rc == -ERANGE ? -ERANGE : -EINVAL, "not %s: %s", expect, err_q(arg));
}

/* "not a repetition count from 1 to 100: '0'": the range the loader checks too (results.h) */
static int bad_range(struct err *e, int rc, const char *arg, const char *what, long long min, long long max)
{
	return err_set(e, rc == -ERANGE ? -ERANGE : -EINVAL, "not %s from %lld to %lld: %s", what, min, max,
		       err_q(arg));
}

/*
 * --kcompile=CONFIG:TARGET: the syntax only (it goes on the guest's kernel
 * command line); the guest workload checks CONFIG against its list and says so
 * in a fail record.
 */
static int kcompile_parse(const char *arg, struct run_config *c, struct err *e)
{
	const char *colon = strchr(arg, ':'), *t;
	size_t n, i;

	if (!colon || colon == arg || !colon[1] || strchr(colon + 1, ':'))
		return err_set(e, -EINVAL, "not CONFIG:TARGET (e.g. tinyconfig:mm/ or defconfig:vmlinux): %s", err_q(arg));
	n = (size_t)(colon - arg);
	if (n >= sizeof(c->kc_config))
		return err_set(e, -EINVAL, "--kcompile config '%.64s' is too long", arg);
	for (i = 0; i < n; i++)
		if (!((arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= '0' && arg[i] <= '9') || arg[i] == '_'))
			return err_set(e, -EINVAL, "--kcompile config in '%.64s': use a config target such as tinyconfig or defconfig",
				       arg);
	t = colon + 1;
	if (strlen(t) >= sizeof(c->kc_target))
		return err_set(e, -EINVAL, "--kcompile target '%.64s' is too long", t);
	if (t[0] == '-' || t[0] == '/' || t[0] == '.' || strstr(t, ".."))
		return err_set(e, -EINVAL, "--kcompile target '%.64s': a directory such as mm/ or a target such as vmlinux",
			       t);
	for (i = 0; t[i]; i++)
		if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9') ||
		      t[i] == '_' || t[i] == '.' || t[i] == '/' || t[i] == '-'))
			return err_set(e, -EINVAL, "--kcompile target '%.64s': use letters, digits and _./- only", t);
	memcpy(c->kc_config, arg, n);
	c->kc_config[n] = '\0';
	strcpy(c->kc_target, t);
	return 0;
}

/* --target-ci=HOST[,GUEST] or none */
static int target_ci_parse(const char *arg, struct run_config *c, struct err *e)
{
	char buf[32], *comma;
	double h, g = 0;

	c->target_ci_set = true;
	if (!strcmp(arg, "none")) {
		c->target_ci_host = c->target_ci_guest = 0;
		return 0;
	}
	if (strlen(arg) >= sizeof(buf))
		return err_set(e, -EINVAL, "'%.20s...' is too long for --target-ci: use HOST[,GUEST], e.g. 15,5", arg);
	strcpy(buf, arg);
	comma = strchr(buf, ',');
	if (comma)
		*comma++ = '\0';
	if (parse_double(buf, &h) || h <= 0 || h > 100 ||
	    (comma && (parse_double(comma, &g) || g <= 0 || g > 100)))
		return err_set(e, -EINVAL, "not a CI target: use HOST[,GUEST] half-widths in percentage points "
			       "(0-100], e.g. 15,5, or none: %s", err_q(arg));
	c->target_ci_host = h;
	c->target_ci_guest = comma ? g : h;
	return 0;
}

int run_config_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct run_config *c = ctx;
	uint64_t v;
	double d;
	int r;

	switch ((enum run_opt)id) {
	case RO_HOST_THP:
		return thp_list_parse(arg, true, c->host_thp, THP_LIST_MAX, &c->n_host_thp, "host THP", e);
	case RO_GUEST_THP:
		return thp_list_parse(arg, false, c->guest_thp, THP_LIST_MAX, &c->n_guest_thp, "guest THP", e);
	case RO_GUEST_SHMEM:
		return shmem_list_parse(arg, c, e);
	case RO_WL_OPTS: {
		struct wlopt o[WLOPTS_MAX];
		char why[ERR_MSG_MAX];
		size_t n;

		if (wlopts_parse(arg, o, WLOPTS_MAX, &n, why, sizeof(why)))
			return err_set(e, -EINVAL, "%s", why);
		strcpy(c->wl_opts, arg);	/* wlopts_parse bounds it */
		return 0;
	}
	case RO_WORKLOADS: {
		size_t i, n = strlen(arg);

		for (i = 0; i < n; i++)
			if (!((arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= '0' && arg[i] <= '9') || arg[i] == '_' ||
			      arg[i] == ','))
				break;
		if (i != n || n >= sizeof(c->workloads))
			return err_set(e, -EINVAL, "not a workload list: give names like memset,tlb or all: %s", err_q(arg));
		strcpy(c->workloads, arg);
		return 0;
	}
	case RO_TARGET: {
		enum run_target t;

		if (run_target_parse(arg, &t))
			return err_set(e, -EINVAL, "not a target: use guest, host or both: %s", err_q(arg));
		c->target_guest = t != TARGET_HOST;
		c->target_host = t != TARGET_GUEST;
		return 0;
	}
	case RO_PIN:
		if (strcmp(arg, "auto") && strcmp(arg, "none"))
			return err_set(e, -EINVAL, "not a pinning: use auto or none: %s", err_q(arg));
		c->pin = !strcmp(arg, "auto");
		return 0;
	case RO_FAIL_ON:
		if (strcmp(arg, "regression") && strcmp(arg, "suspect"))
			return err_set(e, -EINVAL, "not a verdict to fail on: use regression or suspect: %s", err_q(arg));
		c->fail_on_suspect = !strcmp(arg, "suspect");
		return 0;
	case RO_GATE:
		if (strcmp(arg, "primary") && strcmp(arg, "all"))
			return err_set(e, -EINVAL, "not a gate: use primary or all: %s", err_q(arg));
		c->gate_all = !strcmp(arg, "all");
		return 0;
	case RO_BOOTS:
		r = parse_u64_range(arg, RUN_BOOTS_MIN, RUN_BOOTS_MAX, &v);
		if (r)
			return bad_range(e, r, arg, "a boot count", RUN_BOOTS_MIN, RUN_BOOTS_MAX);
		c->boots = (unsigned)v;
		c->boots_set = true;
		return 0;
	case RO_REPS:
		r = parse_u64_range(arg, RUN_REPS_MIN, RUN_REPS_MAX, &v);
		if (r)
			return bad_range(e, r, arg, "a repetition count", RUN_REPS_MIN, RUN_REPS_MAX);
		c->reps = (unsigned)v;
		return 0;
	case RO_WARMUP:
		r = parse_u64_range(arg, 0, RUN_WARMUP_MAX, &v);
		if (r)
			return bad_range(e, r, arg, "a warm-up count", 0, RUN_WARMUP_MAX);
		c->warmup = (unsigned)v;
		return 0;
	case RO_COLD_REPS:
		r = parse_u64_range(arg, 0, RUN_COLD_REPS_MAX, &v);
		if (r)
			return bad_range(e, r, arg, "a host-cold repetition count", 0, RUN_COLD_REPS_MAX);
		c->cold_reps = (unsigned)v;
		return 0;
	case RO_MEMORY:
		r = parse_size(arg, &v);
		if (r || v < (uint64_t)RUN_MEMORY_MIN || v > (uint64_t)RUN_MEMORY_MAX)
			return bad_value(e, r ? r : -ERANGE, arg, "a guest memory size from 256M to 1T (e.g. 1G)");
		c->memory = v;
		return 0;
	case RO_VCPUS:
		r = parse_u64_range(arg, RUN_VCPUS_MIN, RUN_VCPUS_MAX, &v);
		if (r)
			return bad_range(e, r, arg, "a vCPU count", RUN_VCPUS_MIN, RUN_VCPUS_MAX);
		c->vcpus = (unsigned)v;
		return 0;
	case RO_SIZE:
		r = parse_size(arg, &v);
		if (r || v == 0 || v % RUN_SIZE_ALIGN)
			return bad_value(e, r ? r : -EINVAL, arg, "a buffer size that is a non-zero multiple of 2M");
		c->size = v;
		return 0;
	case RO_ACCESSES:
		r = parse_u64_range(arg, RUN_ACCESSES_MIN, RUN_ACCESSES_MAX, &v);
		if (r)
			return bad_range(e, r, arg, "an access count", RUN_ACCESSES_MIN, RUN_ACCESSES_MAX);
		c->accesses = v;
		return 0;
	case RO_SEED:
		r = parse_u64_range(arg, RUN_SEED_MIN, RUN_SEED_MAX, &v);
		if (r)
			return bad_range(e, r, arg, "a seed", RUN_SEED_MIN, RUN_SEED_MAX);
		c->seed = v;
		return 0;
	case RO_TIMEOUT:
		r = parse_duration_ms(arg, &v);
		if (r || v < 10000 || v > 48ull * 3600 * 1000)
			return bad_value(e, r ? r : -ERANGE, arg, "a duration from 10s to 48h (e.g. 900, 15m)");
		c->timeout_ms = v;
		return 0;
	case RO_MIN_COV:
		r = parse_double(arg, &d);
		if (r || d < 0 || d > RUN_MIN_COV_MAX)
			return bad_value(e, r ? r : -ERANGE, arg, "a percentage from 0 to 100");
		c->min_coverage = d;
		return 0;
	case RO_ACCEL:
		if (accel_parse(arg, &c->accel))
			return err_set(e, -EINVAL, "not an accelerator: use auto, kvm or tcg: %s", err_q(arg));
		return 0;
	case RO_CONNECT:
		/* a remote host would be measured with this host's knobs and counters */
		if (virt_uri_check_local(arg, e))
			return e->code;
		return set_path(c->uri, sizeof(c->uri), arg, "connection URI", e);
	case RO_OUT:
		return set_path(c->out_dir, sizeof(c->out_dir), arg, "output", e);
	case RO_EMULATOR:
		return ab_emulator_parse(c, arg, e);
	case RO_KSM:
		return ksm_list_parse(c, arg, e);
	case RO_KERNEL:
		return set_path(c->kernel, sizeof(c->kernel), arg, "kernel", e);
	case RO_GUEST_BIN:
		return set_path(c->guest_bin, sizeof(c->guest_bin), arg, "guest program", e);
	case RO_CACHE_DIR:
		return set_path(c->cache_dir, sizeof(c->cache_dir), arg, "cache", e);
	case RO_STATE_DIR:
		return set_path(c->state_dir, sizeof(c->state_dir), arg, "state", e);
	case RO_SYSFS_ROOT:
		return set_path(c->sysfs_root, sizeof(c->sysfs_root), arg, "sysfs root", e);
	case RO_QUIET:
		c->quiet = true;
		return 0;
	case RO_PREFAULT: {
		char buf[64], *tok, *save = NULL;

		if (strlen(arg) >= sizeof(buf))
			return err_set(e, -EINVAL, "too long: %s", err_q(arg));
		if (parse_list_check(arg))
			return err_set(e, -EINVAL, "empty item in host allocation list: "
				       "use ondemand, immediate or ondemand,immediate: %s", err_q(arg));
		strcpy(buf, arg);
		c->n_prefault = 0;
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			enum prefault p;
			size_t i;
			bool dup = false;

			if (prefault_parse(tok, &p))
				return err_set(e, -EINVAL, "not a host allocation mode: use ondemand or immediate: %s", err_q(tok));
			for (i = 0; i < c->n_prefault; i++)
				dup |= c->prefault[i] == p;
			if (!dup)
				c->prefault[c->n_prefault++] = p;
		}
		if (c->n_prefault == 0)
			return err_set(e, -EINVAL, "empty host allocation list");
		return 0;
	}
	case RO_FORMAT:
		return report_formats_parse(arg, &c->formats, e);
	case RO_DB:
		if (!strcmp(arg, "none")) {
			c->db[0] = '\0';
			return 0;
		}
		if (histdb_target_parse(arg, &(struct histdb_target){ 0 }, e))
			return e->code;
		return set_path(c->db, sizeof(c->db), arg, "database", e);
	case RO_BASELINE:
		return set_path(c->baseline, sizeof(c->baseline), arg, "baseline", e);
	case RO_THRESHOLD:
		r = parse_double(arg, &d);
		if (r || d < 0 || d > 1000)
			return bad_value(e, r ? r : -ERANGE, arg, "a threshold in percent from 0 to 1000");
		c->threshold = d;
		return 0;
	case RO_BACKING:
		return backing_parse(arg, c, e);
	case RO_TARGET_CI:
		return target_ci_parse(arg, c, e);
	case RO_MAX_REPS:
		r = parse_u64_range(arg, 2, 1000, &v);
		if (r)
			return bad_value(e, r, arg, "a repetition limit from 2 to 1000");
		c->max_reps = (unsigned)v;
		c->max_reps_set = true;
		return 0;
	case RO_GUESTS:
		r = parse_u64_range(arg, RUN_GUESTS_MIN, RUN_GUESTS_MAX, &v);
		if (r)
			return bad_range(e, r, arg, "a guest count", RUN_GUESTS_MIN, RUN_GUESTS_MAX);
		c->guests = (unsigned)v;
		return 0;
	case RO_MTHP_SWEEP:
		c->mthp_sweep = true;
		return 0;
	case RO_HOST_STATE: {
		char buf[64], *tok, *save = NULL;

		if (strlen(arg) >= sizeof(buf))
			return err_set(e, -EINVAL, "too long: %s", err_q(arg));
		if (parse_list_check(arg))
			return err_set(e, -EINVAL, "empty item in host state list: "
				       "use fresh, fragmented, collapse-madvise or a list of them: %s", err_q(arg));
		strcpy(buf, arg);
		c->n_host_state = 0;
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			enum host_state s;
			size_t i;
			bool dup = false;

			if (host_state_parse(tok, &s))
				return err_set(e, -EINVAL, "not a host state: use fresh, fragmented or collapse-madvise: %s", err_q(tok));
			for (i = 0; i < c->n_host_state; i++)
				dup |= c->host_state[i] == s;
			if (!dup)
				c->host_state[c->n_host_state++] = s;
		}
		if (c->n_host_state == 0)
			return err_set(e, -EINVAL, "empty host state list");
		return 0;
	}
	case RO_BUDGET:
		r = parse_duration_ms(arg, &v);
		if (r || v < 1000)
			return bad_value(e, r ? r : -ERANGE, arg, "a duration of at least 1s (e.g. 30m, 2h)");
		c->budget_ms = v;
		return 0;
	case RO_EXEC:
		return exec_opts_command(&c->exec, arg, e);
	case RO_EXEC_METRIC:
		return exec_opts_metric(&c->exec, arg, e);
	case RO_EXEC_DIRECTION:
		return exec_opts_direction(&c->exec, arg, e);
	case RO_EXEC_TIMEOUT:
		return exec_opts_timeout(&c->exec, arg, e);
	case RO_IMAGE_PACKAGES:
		return image_packages_parse(arg, c->image_pkgs, IMAGE_PKGS_MAX, &c->n_image_pkgs, e);
	case RO_KCOMPILE:
		return kcompile_parse(arg, c, e);
	case RO_KCOMPILE_TIMEOUT:
		r = parse_duration_ms(arg, &v);
		if (r || v < 10000 || v > 24ull * 3600 * 1000)
			return bad_value(e, r ? r : -ERANGE, arg, "a duration from 10s to 24h (e.g. 20m, 2h)");
		c->kc_timeout_ms = v;
		return 0;
	}
	return err_set(e, -EINVAL, "internal: unhandled option %d", id);
}

/* whether the workload reads a kernel source (kcompile: it takes --src) */
static bool reads_source(const struct run_config *c, const char *name)
{
	const struct workload_info *wi = workload_find(c->wl_info, c->n_wl_info, name);

	return wi && wi->has_src;
}

/* a --baseline that names a run of the history database (--db), not a file */
static bool baseline_from_db(const char *baseline)
{
	return !strcmp(baseline, "last") || !strcmp(baseline, "history");
}

/* options that set up guests: nothing to do in a run that boots none */
static const int guest_only_opts[] = { RO_GUESTS, RO_KERNEL, RO_PIN, RO_ACCEL, RO_KSM };

int run_opts_check(const struct run_config *c, uint64_t given, struct err *e)
{
	size_t i;
	bool kc = false;

	if (!c->target_guest)
		for (i = 0; i < sizeof(guest_only_opts) / sizeof(guest_only_opts[0]); i++)
			if (given & CLI_BIT(guest_only_opts[i]))
				return err_set(e, -EINVAL, "--%s and --target=host do not go together: a bare-host "
					       "run boots no guest", cli_opt_name(&run_cmd, guest_only_opts[i]));
	for (i = 0; i < c->n_wl; i++)
		kc |= reads_source(c, c->wl[i]);
	for (i = 0; !kc && i < 2; i++) {
		int id = i ? RO_KCOMPILE_TIMEOUT : RO_KCOMPILE;

		if (given & CLI_BIT(id))
			return err_set(e, -EINVAL, "--%s is for the kcompile workload, not in --workloads=%s: "
				       "add kcompile to --workloads or drop --%s", cli_opt_name(&run_cmd, id),
				       c->workloads, cli_opt_name(&run_cmd, id));
	}
	if (c->baseline[0] && baseline_from_db(c->baseline) && !c->db[0])
		return err_set(e, -EINVAL, "--baseline=%s and --db=none do not go together: that baseline comes "
			       "from the history database", c->baseline);
	return 0;
}

/* a path option's file: there and of the type asked, before anything starts */
static int path_is(const char *opt, const char *path, mode_t type, const char *advice, struct err *e)
{
	struct stat st;

	if (stat(path, &st) < 0) {
		int saved = errno;

		return err_set(e, -saved, "--%s: cannot use %s: %s: %s", opt, err_q(path), strerror(saved), advice);
	}
	if ((st.st_mode & S_IFMT) != type)
		return err_set(e, type == S_IFDIR ? -ENOTDIR : S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL,
			       "--%s: %s is %s, not %s: %s", opt, err_q(path),
			       S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" :
			       S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" :
			       S_ISSOCK(st.st_mode) ? "a socket" : "not a regular file",
			       type == S_IFDIR ? "a directory" : "a regular file", advice);
	return 0;
}

/*
 * --state-dir: a directory we own and only we can write, or one we can create
 * (its nearest existing parent a directory we can write); what
 * state_dir_prepare() then makes or refuses, said before anything starts.
 */
static int state_dir_check(const char *dir, struct err *e)
{
	char buf[PATH_MAX];
	struct stat st;
	char *slash;

	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return err_set(e, -ENOTDIR, "--state-dir: %s is not a directory: remove it or choose another",
				       err_q(dir));
		if (st.st_uid != geteuid())
			return err_set(e, -EPERM, "--state-dir: %s belongs to uid %u, not to us: choose another",
				       err_q(dir), (unsigned)st.st_uid);
		if (st.st_mode & (S_IWGRP | S_IWOTH))
			return err_set(e, -EPERM, "--state-dir: %s is writable by others: chmod 700 it",
				       err_q(dir));
		if (access(dir, W_OK | X_OK) != 0)
			return err_set(e, -EACCES, "--state-dir: %s is not writable: chmod u+rwx it", err_q(dir));
		return 0;
	}
	if (errno != ENOENT)
		return err_set(e, -errno, "--state-dir: cannot use %s: %s", err_q(dir), strerror(errno));
	snprintf(buf, sizeof(buf), "%s", dir);
	for (;;) {
		slash = strrchr(buf, '/');
		if (!slash) {
			snprintf(buf, sizeof(buf), ".");
		} else if (slash == buf) {
			buf[1] = '\0';
		} else {
			*slash = '\0';
			if (stat(buf, &st) < 0 && errno == ENOENT)
				continue;
		}
		break;
	}
	if (stat(buf, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(e, -ENOTDIR, "--state-dir: cannot create %s: %s is not a directory", err_q(dir),
			       err_q(buf));
	if (access(buf, W_OK | X_OK) != 0)
		return err_set(e, -EACCES, "--state-dir: cannot create %s: %s is not writable", err_q(dir),
			       err_q(buf));
	return 0;
}

int run_paths_check(const struct run_config *c, struct err *e)
{
	int r;

	if (c->kernel[0] && (r = path_is("kernel", c->kernel, S_IFREG, "pass an existing vmlinuz", e)))
		return r;
	if (c->kernel[0] && access(c->kernel, R_OK) != 0)
		return err_set(e, -EACCES, "--kernel: %s is not readable: pass a vmlinuz you can read",
			       err_q(c->kernel));
	r = state_dir_check(c->state_dir, e);
	if (r)
		return r;
	if (c->baseline[0] && !baseline_from_db(c->baseline)) {
		char file[PATH_MAX];
		struct results *base;
		struct stat st;

		/* the gate at the end: load it now, so that a bad one costs no run */
		if (stat(c->baseline, &st) == 0 && S_ISDIR(st.st_mode)) {
			if (results_path_resolve(c->baseline, file, sizeof(file), e))
				return err_wrap(e, "--baseline");
		} else {
			snprintf(file, sizeof(file), "%s", c->baseline);
		}
		r = path_is("baseline", file, S_IFREG, "give a results.json or a run directory, or last", e);
		if (r)
			return r;
		base = malloc(sizeof(*base));
		if (!base)
			return err_set(e, -ENOMEM, "out of memory");
		r = results_load(file, base, e);
		if (!r)
			results_release(base);
		free(base);
		if (r)
			return err_wrap(e, "--baseline");
	}
	return 0;
}

/* whether the workload runs a user's command (exec: it takes --argv) */
static bool runs_command(const struct run_config *c, const char *name)
{
	const struct workload_info *wi = workload_find(c->wl_info, c->n_wl_info, name);

	return wi && wi->has_argv;
}

/*
 * The exec workload needs its command: 'all' without --exec leaves it out (with
 * a note); named without one, or --exec without it, or on the host, is refused.
 */
int exec_select(struct run_config *c, struct err *e)
{
	size_t i, k;
	bool planned = false;

	for (i = 0; i < c->n_wl; i++)
		planned |= runs_command(c, c->wl[i]);
	if (planned && !c->exec.set && !strcmp(c->workloads, "all")) {
		for (i = k = 0; i < c->n_wl; i++) {
			if (!runs_command(c, c->wl[i]))
				memmove(c->wl[k++], c->wl[i], sizeof(c->wl[0]));
			else if (!c->quiet)
				fprintf(stderr, "thpeval: --workloads=all leaves out %s: it runs the command given "
					"with --exec\n", c->wl[i]);
		}
		c->n_wl = k;
		planned = false;
	}
	if (c->n_image_pkgs && !c->target_guest)
		return err_set(e, -EINVAL, "--image-packages adds packages to the guest image: --target=host "
			       "boots no guest");
	return exec_opts_check(&c->exec, planned, c->target_host, e);
}
