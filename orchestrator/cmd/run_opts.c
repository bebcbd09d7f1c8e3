/*
 * thpeval run's options: the option table and the parsers that fill a struct
 * run_config (run/config.h); the options that spell a workload's own
 * parameters go to cmd/run_alias. cmd/run.c runs what they describe.
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
#include "orchestrator/cmd/run_alias.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/model/results_load.h"
#include "orchestrator/report/report.h"
#include "orchestrator/run/abaxis.h"
#include "orchestrator/run/balloon.h"
#include "orchestrator/run/config.h"
#include "orchestrator/run/migrate.h"
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
	RO_KHUGEPAGED, RO_RECOVERY_TIMEOUT, RO_BALLOON, RO_KSM,
	RO_MIGRATE,
};

/* the target of a typed row in struct run_config */
#define RC(field) OPT_AT(struct run_config, field)

static const char *const pin_vals[] = { "none", "auto", NULL };	/* index 1: pin */
static const char *const fail_on_vals[] = { "regression", "suspect", NULL };	/* 1: suspect fails */
static const char *const gate_vals[] = { "primary", "all", NULL };	/* 1: every metric gates */

/*
 * One row per option: OPT_CALL rows are parsed by run_config_opt() (the
 * compound ones); typed rows by cli_parse() itself. .def is both the help's
 * default and the value cli_defaults() gives the field (run_config_init()).
 * The kcompile and exec rows are of the older kind: run_config_opt() parses
 * them and run_config_defaults() sets their defaults.
 */
static const struct opt run_opts[] = {
	{ .name = "host-thp", .arg = "LIST", .def = "always", .id = RO_HOST_THP, .type = OPT_CALL,
	  .help = "host THP settings to evaluate against the host 'never' baseline: always, madvise (QEMU madvises guest RAM, so madvise acts like always), or one multi-size THP size alone as SIZE:MODE, e.g. 64K:always (hugepages-64kB/enabled=always, every other size and 'enabled' never; Linux 6.8+)" },
	{ .name = "mthp-sweep", .id = RO_MTHP_SWEEP, .type = OPT_FLAG, RC(mthp_sweep),
	  .help = "add SIZE:always to --host-thp for every hugepages-<N>kB size the host kernel offers, and report per size the fault-phase and access-phase effect and coverage (guest-side sizes are probed and reported)" },
	{ .name = "guests", .arg = "N", .def = "1", .id = RO_GUESTS, .type = OPT_UINT, RC(guests),
	  .what = "a guest count", .min = RUN_GUESTS_MIN, .max = RUN_GUESTS_MAX,
	  .help = "guests that run the same cells at the same time (1-8), each with its own records, coverage and telemetry; refused when N guests will not fit in the host's available memory" },
	{ .name = "host-state", .arg = "LIST", .def = "fresh", .id = RO_HOST_STATE, .type = OPT_CALL,
	  .help = "host memory before the guests start: fresh, fragmented (a child holds one 4K page of every 2M block it can get, as virtualization QA suites do; proactive compaction off for the arm, per-CPU free lists short while fragmenting and on undo, both journaled; /proc/buddyinfo recorded before, after and once undone), collapse-madvise, collapse-khugepaged (recovery: guests run on never, then the setting goes in and MADV_COLLAPSE or khugepaged acts), or a list" },
	{ .name = "khugepaged", .arg = "KNOB=N[,KNOB=N]", .def_note = "the host's", .id = RO_KHUGEPAGED, .type = OPT_CALL,
	  .help = "with --host-state=collapse-khugepaged: khugepaged's pages_to_scan (1 to 2^32-1) and/or scan_sleep_millisecs (0 to 2^32-1) for the run, journaled like the THP knobs and put back after (also by 'thpeval host restore' after a crash)" },
	{ .name = "recovery-timeout", .arg = "DURATION", .def = "3m", .id = RO_RECOVERY_TIMEOUT, .type = OPT_DURATION,
	  RC(recovery_timeout_ms), .what = "a duration", .min = 5000, .max = 3600 * 1000,
	  .help = "with --host-state=collapse-khugepaged: how long coverage may take to reach 90% of guest RAM before the interval stops (the report says what stopped it)" },
	{ .name = "balloon", .arg = "LIST", .def = "none", .id = RO_BALLOON, .type = OPT_CALL,
	  .help = "the guests' balloon: none, or reporting (a virtio balloon with free page reporting: the guest reports its free 2M blocks and QEMU discards them, libvirt 6.9+ and QEMU 5.1+), or none,reporting as an axis; with the axis every guest runs memset's re-fault step (the buffer freed, left to the host for 10 s while QEMU's RSS and guest RAM's huge-page coverage are sampled, then a fresh buffer touched and timed: refault_ns_per_4k); the reporting arm leaves out hugetlbfs and collapse arms" },
	{ .name = "ksm", .arg = "off|on|off,on", .def_note = "KSM as the host has it", .id = RO_KSM, .type = OPT_CALL,
	  .help = "the KSM arm (kernel samepage merging, /sys/kernel/mm/ksm): on boots --guests=N (2 or more) guests of the same image together with KSM running at a fast scan rate and their domains without <nosharepages/> (cells of host state 'ksm'); off keeps <nosharepages/> with KSM stopped; KSM's knobs are journaled like the THP knobs. Recorded each second: pages_shared, pages_sharing, full_scans and each guest's host huge-page coverage, with the host's thp_split_pmd over the arm and the access time before and after merging; off,on adds the effect of KSM on every primary metric with its interval over boots. A host without KSM is refused" },
	{ .name = "guest-thp", .arg = "LIST", .def = "always", .id = RO_GUEST_THP, .type = OPT_CALL,
	  .help = "guest THP settings to evaluate against guest 'never'" },
	{ .name = "guest-shmem-thp", .arg = "LIST", .id = RO_GUEST_SHMEM, .type = OPT_CALL,
	  .help = "guest shmem_enabled values (always, within_size, advise, never, deny, force), each run in turn by the workloads whose memory is shared memory (pgbench's shared_buffers), as cell variants shmem-VALUE; not given: the guest's own (recorded)" },
	{ .name = "workloads", .arg = "LIST", .def = "memset", .id = RO_WORKLOADS, .type = OPT_CALL,
	  .help = "workloads to run, comma-separated, or all ('thpeval workloads' lists them)" },
	{ .name = "workload-opts", .arg = "LIST", .id = RO_WL_OPTS, .type = OPT_CALL,
	  .help = "parameters of the selected workloads beyond the run's own, WORKLOAD:PARAM=VALUE,... (e.g. redis:dataset=4G,pgbench:scale=400 for a lab host; 'thpeval workloads' lists each one's parameters and defaults); the workload checks the value" },
	{ .name = "target", .arg = "guest|host|both", .def = "guest", .id = RO_TARGET, .type = OPT_CALL,
	  .help = "where the workloads run: in guests, directly on the host (the bare-metal rows, same host THP settings), or both" },
	{ .name = "host-prefault", .arg = "LIST", .def = "ondemand", .id = RO_PREFAULT, .type = OPT_CALL,
	  .help = "host allocation of guest RAM: ondemand (QEMU faults it as the guest touches it), immediate (preallocated at start); both separate host prefault from host TLB" },
	{ .name = "boots", .arg = "N", .def = "6", .def_note = "then by --target-ci", .id = RO_BOOTS,
	  .type = OPT_UINT, RC(boots), OPT_SET(struct run_config, boots_set), .what = "a boot count",
	  .min = RUN_BOOTS_MIN, .max = RUN_BOOTS_MAX,
	  .help = "guest boots per host setting (1-50), in an interleaved order (each pair of rounds runs the host settings in a random order, then reversed: ABBA), so drift falls on every setting alike; host-side effects replicate over boots (a host setting is applied per boot), so they need 2 or more. Given alone, exactly N; with --target-ci, at least N and at least 6" },
	{ .name = "reps", .arg = "N", .def = "2", .id = RO_REPS, .type = OPT_UINT, RC(reps),
	  .what = "a repetition count", .min = RUN_REPS_MIN, .max = RUN_REPS_MAX,
	  .help = "measured repetitions per cell in each boot (1-100)" },
	{ .name = "pin", .arg = "auto|none", .def = "auto", .id = RO_PIN, .type = OPT_ENUM, RC(pin),
	  .what = "a pinning", .vals = pin_vals,
	  .help = "auto: each vCPU on a host CPU of its own and QEMU's other threads on CPU 0 (libvirt <cputune>), where the host has a CPU for each (guests x vCPUs + 1), else none; none: the host scheduler places them" },
	/* 3: after one only, the first measured access repetition runs slow under TCG */
	{ .name = "warmup", .arg = "N", .def = "3", .id = RO_WARMUP, .type = OPT_UINT, RC(warmup),
	  .what = "a warm-up count", .min = 0, .max = RUN_WARMUP_MAX,
	  .help = "unmeasured warm-up repetitions per cell (0-10)" },
	{ .name = "cold-reps", .arg = "N", .def = "3", .id = RO_COLD_REPS, .type = OPT_UINT, RC(cold_reps),
	  .what = "a host-cold repetition count", .min = 0, .max = RUN_COLD_REPS_MAX,
	  .help = "memset host-cold repetitions per guest THP setting in every fresh guest (0-20; 0 = none): fresh buffers held together, so each first touch is the host's first touch too (cells with variant 'cold'); the host prefault effect is measured on them" },
	{ .name = "memory", .arg = "SIZE", .def = "1G", .id = RO_MEMORY, .type = OPT_SIZE, RC(memory),
	  .what = "a guest memory size", .min = RUN_MEMORY_MIN, .max = RUN_MEMORY_MAX,
	  .help = "guest RAM (suffixes K, M, G)" },
	{ .name = "vcpus", .arg = "N", .def = "1", .id = RO_VCPUS, .type = OPT_UINT, RC(vcpus),
	  .what = "a vCPU count", .min = RUN_VCPUS_MIN, .max = RUN_VCPUS_MAX,
	  .help = "guest vCPUs (1-64)" },
	{ .name = "size", .arg = "SIZE", .def = "256M", .id = RO_SIZE, .type = OPT_SIZE, RC(size),
	  .what = "a buffer size", .max = UINT64_MAX, .step = RUN_SIZE_ALIGN,
	  .help = "memset buffer size, a multiple of 2M" },
	{ .name = "accesses", .arg = "N", .def = "1000000", .id = RO_ACCESSES, .type = OPT_U64, RC(accesses),
	  .what = "an access count", .min = RUN_ACCESSES_MIN, .max = RUN_ACCESSES_MAX,
	  .help = "dependent random accesses in the access phase" },
	{ .name = "host-backing", .arg = "LIST", .def = "anonymous", .id = RO_BACKING, .type = OPT_CALL,
	  .help = "guest RAM on the host: anonymous memory (governed by THP 'enabled') or memfd (shmem, governed by 'shmem_enabled': host 'enabled' alone then has no effect, and the evidence shows it); add hugetlbfs and/or hugetlbfs-1g for the reference arms (host_thp 'hugetlbfs' or 'hugetlbfs-1g': guest RAM on 2M or 1G hugetlbfs pages, the pool reserved for the run and released after; 1G needs --memory in whole GiB and a host that offers 1G pages)" },
	/* the default target is run_config_check()'s (RUN_TARGET_CI_HOST, _GUEST) */
	{ .name = "target-ci", .arg = "HOST[,GUEST]|none", .def_note = "15,5 unless --boots", .id = RO_TARGET_CI,
	  .type = OPT_CALL,
	  .help = "after --boots, keep adding rounds (one more boot per host setting each) until every split effect's 95% CI half-width is at most HOST points for host-side effects and interactions and GUEST points (HOST when not given) for guest-side ones, judged on the log scale (ln(1 + HOST/100)); an effect whose projected boots exceed what --budget and --max-reps allow is not chased, and the results say so; none: exactly --boots rounds" },
	{ .name = "max-reps", .arg = "N", .def_note = "50 x --reps", .id = RO_MAX_REPS, .type = OPT_UINT,
	  RC(max_reps), OPT_SET(struct run_config, max_reps_set), .what = "a repetition limit", .min = 2,
	  .max = 1000, .help = "with a CI target: repetitions per cell at most, over all boots" },
	{ .name = "budget", .arg = "DURATION", .def_note = "4m45s with the default target", .id = RO_BUDGET,
	  .type = OPT_DURATION, RC(budget_ms), .what = "a duration", .min = 1000, .max = UINT64_MAX,
	  .help = "with a CI target: stop adding rounds when another would end past this much time from the start" },
	{ .name = "seed", .arg = "N", .def_note = "time-based", .id = RO_SEED, .type = OPT_U64, RC(seed),
	  .what = "a seed", .min = RUN_SEED_MIN, .max = RUN_SEED_MAX,
	  .help = "seed for access order and cell order (recorded)" },
	{ .name = "timeout", .arg = "DURATION", .def = "15m", .id = RO_TIMEOUT, .type = OPT_DURATION,
	  RC(timeout_ms), .what = "a duration", .min = 10000, .max = 48ull * 3600 * 1000,
	  .help = "per-guest limit from boot to power-off (s, m, h suffixes); kcompile runs add their own limit on top" },
	OPT_ROW("kcompile", "CONFIG:TARGET", "tinyconfig:mm/", "the kcompile workload's build: make CONFIG (untimed), then make -j<vcpus> TARGET timed (defconfig:vmlinux for labs)", RO_KCOMPILE),
	OPT_ROW("kcompile-timeout", "DURATION", "20m", "limit of one kcompile run (a kernel build under TCG takes minutes)", RO_KCOMPILE_TIMEOUT),
	OPT_ROW("exec", "COMMAND", NULL, "the exec workload's command, run in the guests by fork/execve without a shell: words split at spaces, '...' and \"...\" quote, a backslash escapes; no expansion or globbing ($ ; | * are bytes of the words; sh -c '...' is yours to write); at most 4096 characters, 64 words, no control characters, and what the guest kernel command line carries", RO_EXEC),
	OPT_ROW("exec-metric", "REGEX", NULL, "a POSIX extended regex with one capture group: the number it captures on the last matching line of the command's output (its last MiB) is recorded as metric_higher or metric_lower; a run where none matches is a fail record", RO_EXEC_METRIC),
	OPT_ROW("exec-direction", "higher|lower", NULL, "with --exec-metric: which way its number is better (what the gate tests)", RO_EXEC_DIRECTION),
	OPT_ROW("exec-timeout", "DURATION", "10m", "limit of one exec run: then its process group is killed and the run is a fail record ('timed out after N s'); added to the guest's --timeout for each exec run", RO_EXEC_TIMEOUT),
	{ .name = "image-packages", .arg = "PKG,...", .id = RO_IMAGE_PACKAGES, .type = OPT_CALL,
	  .help = "Debian packages added to the guest image (with their dependencies), copied from the host where they must be installed ('apt-get install -y --no-install-recommends PKG'); the list joins the image's content address" },
	{ .name = "min-coverage", .arg = "PCT", .def = "90", .id = RO_MIN_COV, .type = OPT_DOUBLE, RC(min_coverage),
	  .what = "a percentage", .dmin = 0, .dmax = RUN_MIN_COV_MAX,
	  .help = "huge-page share an 'on' cell must show to be valid" },
	{ .name = "accel", .arg = "auto|kvm|tcg", .def = "auto", .id = RO_ACCEL, .type = OPT_CALL,
	  .help = "auto uses KVM only where it can boot a stock guest, else TCG" },
	{ .name = "connect", .arg = "URI", .def = "qemu:///system", .id = RO_CONNECT, .type = OPT_CALL,
	  .help = "libvirt connection URI" },
	{ .name = "out", .arg = "DIR", .def_note = "thpeval-results/<time>", .id = RO_OUT, .type = OPT_STRING,
	  RC(out_dir), .what = "output", .help = "results.json, domain XML and console log of every guest" },
	{ .name = "kernel", .arg = "PATH", .def_note = "thpeval's own, from linux-source-6.1", .id = RO_KERNEL, .type = OPT_STRING,
	  RC(kernel), .what = "kernel", .help = "guest kernel for the image: a Debian vmlinuz-<version> from /boot, booted with a slim initrd of its modules; without it thpeval's own: tinyconfig plus what the guest uses, drivers built in, no modules or initrd, built once (minutes on a fresh host) and cached in /var/cache/thpeval/kernels" },
	{ .name = "emulator", .arg = "PATH[,PATH]", .def_note = "libvirt's", .id = RO_EMULATOR, .type = OPT_CALL,
	  .help = "the QEMU binary of every guest (libvirt <emulator>); with two, an A/B axis of the run: every host setting of every round boots once with each, in the rounds' interleaved order, and each gated metric and split effect is compared B against A over the run's boots ('emulator B vs A' in results.txt, \"ab\" in results.json); the same path twice is an A/A check. Each must be an executable file" },
	{ .name = "migrate", .arg = "LIST", .def = "none", .id = RO_MIGRATE, .type = OPT_CALL,
	  .help = "live-migration arms: precopy, postcopy or both (none, the arm without, is implied); each round's guests take one arm in turn: after its warm series memset keeps looping passes over its buffer while the guest is migrated to a second libvirt daemon that thpeval starts on this machine (its own mount namespace, sockets and host UUID) and its series goes on there; reports the destination's huge-page coverage right after and every second until it settles (time to 90%), the access and write times before, right after and after settling against the none arm, and libvirt's job statistics ('migration' in results.json). Needs --workloads=memset" },
	{ .name = "guest-bin", .arg = "PATH", .def_note = "thpeval-guest beside thpeval, else ../libexec/thpeval/",
	  .id = RO_GUEST_BIN, .type = OPT_STRING, RC(guest_bin), .what = "guest program",
	  .help = "static guest program" },
	{ .name = "cache-dir", .arg = "DIR", .def = "/var/cache/thpeval/images", .id = RO_CACHE_DIR,
	  .type = OPT_STRING, RC(cache_dir), .what = "cache", .help = "guest image cache" },
	{ .name = "state-dir", .arg = "DIR", .def = "/var/lib/thpeval", .id = RO_STATE_DIR, .type = OPT_STRING,
	  RC(state_dir), .what = "state", .help = "host settings journal and lock" },
	{ .name = "sysfs-root", .arg = "DIR", .def = "/", .id = RO_SYSFS_ROOT, .type = OPT_STRING, RC(sysfs_root),
	  .what = "sysfs root", .help = "root under which /sys and /proc are read and written (tests)" },
	{ .name = "format", .arg = "LIST", .def = "text,json", .id = RO_FORMAT, .type = OPT_CALL,
	  .help = "reports written under --out: " REPORT_FORMATS_HELP " (results.json is always written)" },
	{ .name = "baseline", .arg = "FILE|DIR|last|history", .id = RO_BASELINE, .type = OPT_STRING, RC(baseline),
	  .what = "baseline",
	  .help = "regression gate at the end: history judges the run against the last 10 complete runs of this host and setup in --db with their run-to-run drift (per metric kind: ok, suspect, regression, no-history; doc/gate.md); last compares with the newest complete run of this setup, passing or not; FILE|DIR with a stored run; exit 1 on a regression" },
	{ .name = "fail-on", .arg = "regression|suspect", .def = "regression", .id = RO_FAIL_ON, .type = OPT_ENUM,
	  RC(fail_on_suspect), .what = "a verdict to fail on", .vals = fail_on_vals,
	  .help = "with --baseline=history: the verdict that makes the run exit 1 (suspect: one run beyond the threshold; regression: the newest 3)" },
	{ .name = "threshold", .arg = "PCT", .def = "5", .id = RO_THRESHOLD, .type = OPT_DOUBLE, RC(threshold),
	  .what = "a threshold in percent", .dmin = 0, .dmax = 1000,
	  .help = "with --baseline: smallest change that counts as a regression" },
	{ .name = "gate", .arg = "primary|all", .def = "primary", .id = RO_GATE, .type = OPT_ENUM, RC(gate_all),
	  .what = "a gate", .vals = gate_vals,
	  .help = "with --baseline: metrics that gate, each workload's primary ones or every metric with a direction ('thpeval help compare'); Holm-corrected over all of them" },
	{ .name = "db", .arg = "PATH|URI", .def = "/var/lib/thpeval/history.db", .id = RO_DB, .type = OPT_CALL,
	  .help = "history database every finished run is appended to: an SQLite file, or PostgreSQL as postgresql://[USER@]HOST[:PORT]/DBNAME; 'none' for no history" },
	{ .name = "quiet", .id = RO_QUIET, .type = OPT_FLAG, RC(quiet), .help = "no progress on stderr" },
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

/* --workloads: names of a-z, 0-9 and _, comma-separated, resolved later */
static int workloads_parse(const char *arg, struct run_config *c, struct err *e)
{
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

/* --target: guest, host or both */
static int target_parse(const char *arg, struct run_config *c, struct err *e)
{
	enum run_target t;

	if (run_target_parse(arg, &t))
		return err_set(e, -EINVAL, "not a target: use guest, host or both: %s", err_q(arg));
	c->target_guest = t != TARGET_HOST;
	c->target_host = t != TARGET_GUEST;
	return 0;
}

/* --host-prefault: distinct host allocation modes, in order */
static int prefault_list_parse(const char *arg, struct run_config *c, struct err *e)
{
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

/* --host-state: distinct host states, in order */
static int host_state_list_parse(const char *arg, struct run_config *c, struct err *e)
{
	char buf[64], *tok, *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return err_set(e, -EINVAL, "too long: %s", err_q(arg));
	if (parse_list_check(arg))
		return err_set(e, -EINVAL, "empty item in host state list: "
			       "use fresh, fragmented, collapse-madvise, collapse-khugepaged or a list of them: %s", err_q(arg));
	strcpy(buf, arg);
	c->n_host_state = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum host_state s;
		size_t i;
		bool dup = false;

		if (host_state_parse(tok, &s))
			return err_set(e, -EINVAL, "not a host state: use fresh, fragmented, collapse-madvise or collapse-khugepaged: %s",
				       err_q(tok));
		for (i = 0; i < c->n_host_state; i++)
			dup |= c->host_state[i] == s;
		if (!dup)
			c->host_state[c->n_host_state++] = s;
	}
	if (c->n_host_state == 0)
		return err_set(e, -EINVAL, "empty host state list");
	return 0;
}

/* --db: a history database, or none */
static int db_parse(const char *arg, struct run_config *c, struct err *e)
{
	if (!strcmp(arg, "none")) {
		c->db[0] = '\0';
		return 0;
	}
	if (histdb_target_parse(arg, &(struct histdb_target){ 0 }, e))
		return e->code;
	return set_path(c->db, sizeof(c->db), arg, "database", e);
}

int run_config_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct run_config *c = ctx;

	switch ((enum run_opt)id) {
	case RO_HOST_THP:
		return thp_list_parse(arg, true, c->host_thp, THP_LIST_MAX, &c->n_host_thp, "host THP", e);
	case RO_GUEST_THP:
		return thp_list_parse(arg, false, c->guest_thp, THP_LIST_MAX, &c->n_guest_thp, "guest THP", e);
	case RO_GUEST_SHMEM:
		return shmem_list_parse(arg, c, e);
	case RO_WL_OPTS:
		return run_wlopts_add(c, arg, e);
	case RO_WORKLOADS:
		return workloads_parse(arg, c, e);
	case RO_TARGET:
		return target_parse(arg, c, e);
	case RO_ACCEL:
		if (accel_parse(arg, &c->accel))
			return err_set(e, -EINVAL, "not an accelerator: use auto, kvm or tcg: %s", err_q(arg));
		return 0;
	case RO_CONNECT:
		/* a remote host would be measured with this host's knobs and counters */
		if (virt_uri_check_local(arg, e))
			return e->code;
		return set_path(c->uri, sizeof(c->uri), arg, "connection URI", e);
	case RO_EMULATOR:
		return ab_emulator_parse(c, arg, e);
	case RO_PREFAULT:
		return prefault_list_parse(arg, c, e);
	case RO_BALLOON:
		return balloon_parse(c, arg, e);
	case RO_MIGRATE:
		return migrate_opt_parse(c, arg, e);
	case RO_KHUGEPAGED:
		if (khp_opts_parse(arg, &c->khugepaged, e))
			return err_wrap(e, "--khugepaged");
		return 0;
	case RO_KSM:
		return ksm_list_parse(c, arg, e);
	case RO_FORMAT:
		return report_formats_parse(arg, &c->formats, e);
	case RO_DB:
		return db_parse(arg, c, e);
	case RO_BACKING:
		return backing_parse(arg, c, e);
	case RO_TARGET_CI:
		return target_ci_parse(arg, c, e);
	case RO_HOST_STATE:
		return host_state_list_parse(arg, c, e);
	case RO_EXEC:
	case RO_EXEC_METRIC:
	case RO_EXEC_DIRECTION:
	case RO_EXEC_TIMEOUT:
	case RO_KCOMPILE:
	case RO_KCOMPILE_TIMEOUT:
		/* other spellings of --workload-opts items */
		return run_opt_alias(c, cli_opt_name(&run_cmd, id), arg, e);
	case RO_IMAGE_PACKAGES:
		return image_packages_parse(arg, c->image_pkgs, IMAGE_PKGS_MAX, &c->n_image_pkgs, e);
	default:
		break;
	}
	return err_set(e, -EINVAL, "internal: unhandled option %d", id);
}

int run_config_init(struct run_config *c, struct err *e)
{
	run_config_defaults(c);
	return cli_defaults(&run_cmd, run_config_opt, c, e);
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
