/*
 * thpeval: command dispatch, signals, and the only place that prints
 * errors and picks exit codes. Everything below returns errors.
 */
#include <errno.h>
#include <limits.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/journal.h"
#include "host/procfs.h"
#include "host/thp.h"
#include "images/image.h"
#include "images/srcdisk.h"
#include "lib/err.h"
#include "orchestrator/cmd/cli.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/model/results.h"
#include "orchestrator/report/text.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/report/history.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/report/report.h"
#include "orchestrator/model/results_load.h"
#include "orchestrator/run/run.h"
#include "orchestrator/run/workloads.h"

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* root names the real filesystem root ("/", "//", "/.", a link to "/") */
static bool is_host_root(const char *root)
{
	char buf[PATH_MAX];

	return !strcmp(root, "/") || (realpath(root, buf) && !strcmp(buf, "/"));
}

static int need_root(const char *what)
{
	if (geteuid() == 0)
		return 0;
	cmd_error("%s needs root (it changes host THP settings under /sys): run it as root", what);
	return CMD_ERROR;
}

/* default guest program: thpeval-guest beside this executable */
static void default_guest_bin(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		snprintf(buf, len, "thpeval-guest");
		return;
	}
	exe[n] = '\0';
	snprintf(buf, len, "%s/thpeval-guest", dirname(exe));
}

/* ---- run --------------------------------------------------------------------- */

/*
 * After a complete run: the regression gate (--baseline), the reports
 * (--format) and the history (--db). Returns the exit code: 1 on a
 * regression or when any of these fails (the results file is already safe).
 */
static int finish_run(const struct run_config *cfg, struct results *res)
{
	struct results *base = NULL;
	struct comparison cmp;
	struct report_input in = { res, NULL, NULL, NULL };
	struct err e = ERR_INIT;
	char base_name[PATH_MAX + 64] = "";
	bool gated = false, passed = true;
	int rc = CMD_OK;

	memset(&cmp, 0, sizeof(cmp));
	if (cfg->baseline[0]) {
		base = calloc(1, sizeof(*base));
		if (!base) {
			cmd_error("out of memory");
			return CMD_ERROR;
		}
		if (!strcmp(cfg->baseline, "last")) {
			struct history_run_ref ref;

			if (!cfg->db[0]) {
				cmd_error("--baseline=last needs a history database: drop --db=none");
				rc = CMD_ERROR;
			} else if (history_baseline_last(cfg->db, res, HISTORY_SAME_SETUP, &ref, base, &e) == -ENOENT) {
				fprintf(stderr, "thpeval: no earlier run of this setup passed its gate in '%s': this run becomes the baseline\n",
					cfg->db);
				err_clear(&e);
			} else if (err_isset(&e)) {
				rc = cmd_fail(&e, CMD_ERROR);
			} else {
				gated = true;
				snprintf(base_name, sizeof(base_name), "%s", ref.desc);
			}
		} else {
			char path[PATH_MAX + 32];
			struct stat st;

			snprintf(path, sizeof(path), "%s%s", cfg->baseline,
				 stat(cfg->baseline, &st) == 0 && S_ISDIR(st.st_mode) ? "/results.json" : "");
			if (results_load(path, base, &e)) {
				rc = cmd_fail(&e, CMD_ERROR);
			} else {
				gated = true;
				snprintf(base_name, sizeof(base_name), "%s", path);
			}
		}
		if (gated) {
			results_finish(base, base->settings.min_coverage_pct > 0 ? base->settings.min_coverage_pct : 90.0);
			if (effects_attach(base, &e))
				fprintf(stderr, "thpeval: warning: %s\n", e.msg);
			struct compare_opts co = { cfg->threshold, cfg->gate_all ? GATE_ALL : GATE_PRIMARY };

			if (compare_results(base, res, &co, &cmp, &e)) {
				rc = cmd_fail(&e, CMD_ERROR);
				gated = false;
			} else {
				printf("\nregression gate against %s (threshold %.1f%%):\n", base_name, cfg->threshold);
				compare_print(&cmp, base, res, stdout);
				passed = !comparison_failed(&cmp);
				in.base = base;
				in.cmp = &cmp;
				in.base_name = base_name;
			}
		}
	}
	/* results.json is written already; the other formats now */
	if (cfg->formats & ~REPORT_BIT(REPORT_JSON)) {
		err_clear(&e);
		if (report_write_dir(&in, cfg->formats & ~REPORT_BIT(REPORT_JSON), cfg->out_dir, &e))
			rc = cmd_fail(&e, CMD_ERROR);
	}
	if (cfg->db[0]) {
		err_clear(&e);
		if (history_append(cfg->db, res, passed, &e))
			rc = cmd_fail(&e, CMD_ERROR);
	}
	if (gated && !passed) {
		fprintf(stderr, "thpeval: regression gate failed: %zu regression(s), %zu gated metric(s) failing "
			"in all, against %s\n", cmp.nregressions, cmp.nfailed, base_name);
		rc = CMD_ERROR;
	}
	comparison_release(&cmp);
	if (base) {
		results_release(base);
		free(base);
	}
	return rc;
}

static int cmd_run(int argc, char **argv)
{
	struct run_config *cfg = malloc(sizeof(*cfg));
	struct results *res = malloc(sizeof(*res));
	struct err e = ERR_INIT;
	struct run_io io;
	struct progress bar;
	char json_path[PATH_MAX];
	bool help;
	int first, r, rc = CMD_OK;

	if (!cfg || !res) {
		cmd_error("out of memory");
		free(cfg);
		free(res);
		return CMD_ERROR;
	}
	run_config_defaults(cfg);
	r = cli_parse(&cli_run_cmd, argc, argv, run_config_opt, cfg, &first, &help, &e);
	if (r) {
		rc = cmd_fail(&e, CMD_USAGE);
		goto done_cfg;
	}
	if (help) {
		cli_help(&cli_run_cmd, stdout);
		goto done_cfg;
	}
	if (first < argc) {
		cmd_error("run: unexpected argument '%s'; see 'thpeval run --help'", argv[first]);
		rc = CMD_USAGE;
		goto done_cfg;
	}
	if (run_config_check(cfg, &e)) {
		rc = cmd_fail(&e, CMD_USAGE);
		goto done_cfg;
	}
	if (!cfg->guest_bin[0])
		default_guest_bin(cfg->guest_bin, sizeof(cfg->guest_bin));
	if (access(cfg->guest_bin, X_OK) != 0) {
		cmd_error("guest program '%s' not found: build it with 'make' or pass --guest-bin",
			  cfg->guest_bin);
		rc = CMD_ERROR;
		goto done_cfg;
	}
	{
		struct err we = ERR_INIT;

		if (workloads_list(cfg->guest_bin, cfg->wl_info, 16, &cfg->n_wl_info, &we) ||
		    workloads_select(cfg->workloads, cfg->wl_info, cfg->n_wl_info, cfg->wl, 16, &cfg->n_wl, &we)) {
			rc = cmd_fail(&we, CMD_USAGE);
			goto done_cfg;
		}
	}
	if (is_host_root(cfg->sysfs_root) && (rc = need_root("thpeval run")))
		goto done_cfg;
	if (cfg->seed == 0)
		cfg->seed = ((unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 16)) % 0xfffffffeull + 1;
	if (!cfg->out_dir[0]) {
		char stamp[32];
		time_t t = time(NULL);
		struct tm tm;

		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime_r(&t, &tm));
		snprintf(cfg->out_dir, sizeof(cfg->out_dir), "thpeval-results/%s", stamp);
	}

	results_init(res);
	install_signals();
	io.stop = &stop_flag;
	io.progress = cfg->quiet ? NULL : stderr;
	memset(&bar, 0, sizeof(bar));
	io.bar = cfg->quiet ? NULL : &bar;
	r = run_experiment(cfg, &io, res, json_path, sizeof(json_path), &e);
	res->finished = time(NULL);
	if (r == -EINTR || stop_flag)
		snprintf(res->status, sizeof(res->status), "interrupted");
	else if (r)
		snprintf(res->status, sizeof(res->status), "failed");
	else
		snprintf(res->status, sizeof(res->status), "complete");
	if (r)
		snprintf(res->error, sizeof(res->error), "%s", e.msg);
	results_finish(res, cfg->min_coverage);
	{
		struct err fe = ERR_INIT;

		if (effects_attach(res, &fe))
			fprintf(stderr, "thpeval: warning: %s\n", fe.msg);
	}
	if (res->ncells)
		results_print_table(res, stdout);
	if (res->ncells || res->nguests) {
		struct err we = ERR_INIT;

		if (results_write_json(res, json_path, &we))
			cmd_error("%s", we.msg);
		else
			fprintf(stderr, "thpeval: results in %s\n", json_path);
	}
	if (res->have_thp_after && thp_settings_get(&res->thp_before, "enabled") &&
	    thp_settings_get(&res->thp_after, "enabled") &&
	    strcmp(thp_settings_get(&res->thp_before, "enabled"), thp_settings_get(&res->thp_after, "enabled")))
		cmd_error("host THP 'enabled' is '%s', was '%s': run 'thpeval host restore'",
			  thp_settings_get(&res->thp_after, "enabled"), thp_settings_get(&res->thp_before, "enabled"));
	if (!r && !stop_flag)
		rc = finish_run(cfg, res);
	if (r == -EINTR || stop_flag) {
		fprintf(stderr, "thpeval: interrupted: guests destroyed, host THP settings restored, partial results kept\n");
		rc = CMD_INTERRUPTED;
	} else if (r) {
		rc = cmd_fail(&e, CMD_ERROR);
	}
	results_release(res);
done_cfg:
	free(res);
	free(cfg);
	return rc;
}

/* ---- host -------------------------------------------------------------------- */

enum host_opt { HO_SYSFS_ROOT, HO_STATE_DIR };

static const struct opt host_opts[] = {
	{ "sysfs-root", "DIR", "/", "root under which /sys is read and written (tests)", HO_SYSFS_ROOT },
	{ "state-dir", "DIR", "/var/lib/thpeval", "host settings journal and lock", HO_STATE_DIR },
};

static const struct command host_cmd = {
	.name = "host",
	.args = "show | set KEY=VALUE... | restore",
	.summary = "Show, change or restore the host's transparent hugepage settings.",
	.details = "show     every THP knob this kernel offers, with its current value\n"
		   "set      validate all KEY=VALUE pairs, then write them (keys are relative to\n"
		   "         /sys/kernel/mm/transparent_hugepage, e.g. enabled, defrag,\n"
		   "         khugepaged/defrag, hugepages-64kB/enabled)\n"
		   "restore  put back the settings a killed 'thpeval run' left changed (journal)",
	.opts = host_opts,
	.nopts = sizeof(host_opts) / sizeof(host_opts[0]),
};

struct host_args {
	char root[PATH_MAX];
	char state_dir[PATH_MAX];
};

static int host_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct host_args *a = ctx;
	char *dst = id == HO_SYSFS_ROOT ? a->root : a->state_dir;

	if (strlen(arg) >= PATH_MAX)
		return err_set(e, -ENAMETOOLONG, "path too long");
	strcpy(dst, arg);
	return 0;
}

static int host_show(const struct host_args *a)
{
	struct thp_settings s;
	struct err e = ERR_INIT;
	size_t i;

	if (thp_settings_read(a->root, &s, &e))
		return cmd_fail(&e, CMD_ERROR);
	if (s.n == 0) {
		cmd_error("no transparent hugepage support under '%s%s'", a->root, THP_DIR);
		return CMD_ERROR;
	}
	for (i = 0; i < s.n; i++)
		printf("%-36s %s\n", s.s[i].key, s.s[i].value);
	return CMD_OK;
}

static int host_set(const struct host_args *a, int argc, char **argv)
{
	struct host_lock lock = HOST_LOCK_INIT;
	char lockdir[PATH_MAX];
	struct err e = ERR_INIT;
	char key[THP_KEY_MAX], old[THP_VAL_MAX];
	int i;

	if (argc == 0) {
		cmd_error("host set: give at least one KEY=VALUE, e.g. 'thpeval host set enabled=always'");
		return CMD_USAGE;
	}
	/* validate everything before changing anything */
	for (i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t kl = eq ? (size_t)(eq - argv[i]) : 0;

		if (!eq || kl == 0 || kl >= sizeof(key) || !eq[1]) {
			cmd_error("host set: '%s' is not KEY=VALUE", argv[i]);
			return CMD_USAGE;
		}
		memcpy(key, argv[i], kl);
		key[kl] = '\0';
		if (thp_validate(a->root, key, eq + 1, &e))
			return cmd_fail(&e, CMD_USAGE);
	}
	if (is_host_root(a->root) && need_root("thpeval host set"))
		return CMD_ERROR;
	/* never under a running thpeval: its journal would restore over this */
	if (host_lock_dir(a->root, lockdir, sizeof(lockdir), &e) || host_lock_take(&lock, lockdir, NULL, &e))
		return cmd_fail(&e, CMD_ERROR);
	for (i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t kl = (size_t)(eq - argv[i]);

		memcpy(key, argv[i], kl);
		key[kl] = '\0';
		if (thp_read_one(a->root, key, old, sizeof(old), &e) || thp_write(a->root, key, eq + 1, &e)) {
			host_lock_release(&lock);
			return cmd_fail(&e, CMD_ERROR);
		}
		printf("%s: %s -> %s\n", key, old, eq + 1);
	}
	host_lock_release(&lock);
	return CMD_OK;
}

static int host_restore(const struct host_args *a)
{
	struct err e = ERR_INIT;
	char holder[256] = "";
	bool restored = false;

	if (is_host_root(a->root) && need_root("thpeval host restore"))
		return CMD_ERROR;
	if (host_restore_journal(a->root, a->state_dir, &restored, holder, sizeof(holder), &e))
		return cmd_fail(&e, CMD_ERROR);
	printf("%s\n", restored ? "host THP settings restored from the journal"
				: "nothing to restore: no journal of a killed run");
	return CMD_OK;
}

/* run fn with the options moved before the positionals ('host restore --state-dir=D') */
static int options_first(const struct command *cmd, int (*fn)(int argc, char **argv), int argc,
			 char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int rc;

	if (!args) {
		cmd_error("out of memory");
		return CMD_ERROR;
	}
	rc = fn(cmd_args_permute(cmd, argc, argv, args), args);
	free(args);
	return rc;
}

static int host_main(int argc, char **argv)
{
	struct host_args a = { "/", "/var/lib/thpeval" };
	struct err e = ERR_INIT;
	bool help;
	int first;

	if (cli_parse(&host_cmd, argc, argv, host_opt, &a, &first, &help, &e))
		return cmd_fail(&e, CMD_USAGE);
	if (help) {
		cli_help(&host_cmd, stdout);
		return CMD_OK;
	}
	if (first >= argc) {
		cmd_error("host: missing subcommand: show, set or restore");
		return CMD_USAGE;
	}
	if (!strcmp(argv[first], "show") && first + 1 == argc)
		return host_show(&a);
	if (!strcmp(argv[first], "set"))
		return host_set(&a, argc - first - 1, argv + first + 1);
	if (!strcmp(argv[first], "restore") && first + 1 == argc)
		return host_restore(&a);
	cmd_error("host: unknown subcommand or extra arguments at '%s': use show, set KEY=VALUE... or restore",
		  argv[first]);
	return CMD_USAGE;
}

static int cmd_host(int argc, char **argv)
{
	return options_first(&host_cmd, host_main, argc, argv);
}

/* ---- image ------------------------------------------------------------------- */

enum image_opt { IO_KERNEL, IO_CACHE_DIR, IO_GUEST_BIN, IO_FORCE, IO_KCOMPILE };

static const struct opt image_opts[] = {
	{ "kernel", "PATH", "newest /boot/vmlinuz-*", "guest kernel", IO_KERNEL },
	{ "cache-dir", "DIR", "/var/cache/thpeval/images", "image cache", IO_CACHE_DIR },
	{ "guest-bin", "PATH", "thpeval-guest beside thpeval", "static guest program", IO_GUEST_BIN },
	{ "force", NULL, NULL, "rebuild even if a cached image matches", IO_FORCE },
	{ "kcompile", NULL, NULL, "the image kcompile guests use (the root adds the toolchain) and the kernel source disk (" SRCDISK_PACKAGE ", extracted, ext4, attached read-only)", IO_KCOMPILE },
};

static const struct command image_cmd = {
	.name = "image",
	.args = "build | show",
	.summary = "Build (or show) the guest image: a Debian kernel and a root made from host packages\n"
		   "with the guest program as /init, cached by content.",
	.opts = image_opts,
	.nopts = sizeof(image_opts) / sizeof(image_opts[0]),
};

struct image_args {
	char kernel[PATH_MAX], cache_dir[PATH_MAX], guest_bin[PATH_MAX];
	bool force, kcompile;
};

static int image_opt(void *ctx, int id, const char *arg, struct err *e)
{
	struct image_args *a = ctx;
	char *dst = NULL;

	switch ((enum image_opt)id) {
	case IO_KERNEL: dst = a->kernel; break;
	case IO_CACHE_DIR: dst = a->cache_dir; break;
	case IO_GUEST_BIN: dst = a->guest_bin; break;
	case IO_FORCE: a->force = true; return 0;
	case IO_KCOMPILE: a->kcompile = true; return 0;
	}
	if (!dst || strlen(arg) >= PATH_MAX)
		return err_set(e, -ENAMETOOLONG, "path too long");
	strcpy(dst, arg);
	return 0;
}

static void print_progress(void *opaque, const char *msg)
{
	(void)opaque;
	fprintf(stderr, "thpeval: %s\n", msg);
}

static int image_main(int argc, char **argv)
{
	struct image_args a = { "", "/var/cache/thpeval/images", "", false, false };
	struct image_opts o = { 0 };
	struct srcdisk_opts so = { 0 };
	struct srcdisk sd;
	struct err e = ERR_INIT;
	struct image img;
	bool help, built = false, sd_built = false;
	int first, r;

	if (cli_parse(&image_cmd, argc, argv, image_opt, &a, &first, &help, &e))
		return cmd_fail(&e, CMD_USAGE);
	if (help) {
		cli_help(&image_cmd, stdout);
		return CMD_OK;
	}
	if (first + 1 != argc || (strcmp(argv[first], "build") && strcmp(argv[first], "show"))) {
		cmd_error("image: give one subcommand: build or show");
		return CMD_USAGE;
	}
	if (!a.guest_bin[0])
		default_guest_bin(a.guest_bin, sizeof(a.guest_bin));
	o.cache_dir = a.cache_dir;
	o.kernel = a.kernel[0] ? a.kernel : NULL;
	o.guest_bin = a.guest_bin;
	o.force = a.force;
	o.progress = print_progress;
	o.extra_packages = a.kcompile ? srcdisk_toolchain_packages : NULL;
	if (a.kcompile) {
		so.cache_dir = a.cache_dir;
		so.force = a.force;
		so.progress = print_progress;
		r = srcdisk_ensure(&so, &sd, &sd_built, &e);
		if (r)
			return cmd_fail(&e, CMD_ERROR);
	}
	r = image_ensure(&o, &img, &built, &e);
	if (!r && !strcmp(argv[first], "show"))
		r = image_verify(&img, &e);
	if (r)
		return cmd_fail(&e, CMD_ERROR);
	printf("image %s (%s%s)\n  kernel  %s (%s)\n  initrd  %s\n  root    %s\n  cmdline %s\n", img.id,
	       built ? "built" : "cached", a.kcompile ? ", kcompile: with the toolchain" : "", img.kernel,
	       img.kernel_version, img.initrd, img.root, img.cmdline);
	if (a.kcompile)
		printf("source %s (%s)\n  package %s %s\n  disk    %s (%llu MiB, read-only vdb, mounted on /mnt/linux-src)\n"
		       "  tree    %s (bare-host builds)\n",
		       sd.id, sd_built ? "built" : "cached", SRCDISK_PACKAGE, sd.version, sd.disk, sd.disk_bytes >> 20,
		       sd.tree);
	return CMD_OK;
}

static int cmd_image(int argc, char **argv)
{
	return options_first(&image_cmd, image_main, argc, argv);
}

/* ---- dispatch ---------------------------------------------------------------- */

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static int cmd_workloads(int argc, char **argv)
{
	char bin[PATH_MAX], *buf;
	struct err e = ERR_INIT;
	int rc = CMD_OK;

	if (argc > 1) {
		cmd_error("workloads: takes no arguments; it lists every workload with its parameters and defaults");
		return CMD_USAGE;
	}
	default_guest_bin(bin, sizeof(bin));
	buf = malloc(1 << 16);
	if (!buf || workloads_describe(bin, buf, 1 << 16, &e))
		rc = buf ? cmd_fail(&e, CMD_ERROR) : CMD_ERROR;
	else
		fputs(buf, stdout);
	free(buf);
	return rc;
}

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const struct command *cmd;
	const char *summary;
} commands[] = {
	{ "run", cmd_run, &cli_run_cmd, "boot guests with host THP set and measure the 2x2 (host x guest THP)" },
	{ "host", cmd_host, &host_cmd, "show, set or restore host THP settings" },
	{ "image", cmd_image, &image_cmd, "build or show the cached guest image" },
	{ "report", cmd_report, &report_cmd, "render a stored run again: text, json, csv, html, junit" },
	{ "compare", cmd_compare, &compare_cmd, "regression gate between two runs (exit 1 on a regression)" },
	{ "history", cmd_history, &history_cmd, "trend of the headline metrics over recorded runs" },
	{ "workloads", cmd_workloads, NULL, "list the workloads with their parameters and defaults" },
	{ "help", cmd_help, NULL, "show help for a command" },
	{ "version", cmd_version, NULL, "print the version" },
};

static void usage(FILE *out)
{
	size_t i;

	fprintf(out, "usage: thpeval COMMAND [options]\n\n"
		     "Measure what transparent hugepages buy QEMU/KVM guests: host vs guest THP,\n"
		     "page-fault (prefault) vs TLB effects, with the evidence that THP took effect.\n\n"
		     "commands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'thpeval help COMMAND' or 'thpeval COMMAND --help' for a command's options.\n");
}

static int cmd_help(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stdout);
		return CMD_OK;
	}
	if (argc > 2) {
		cmd_error("help: give one command, not '%s'", argv[2]);
		return CMD_USAGE;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		if (commands[i].cmd)
			cli_help(commands[i].cmd, stdout);
		else
			printf("thpeval %s: %s\n", commands[i].name, commands[i].summary);
		return CMD_OK;
	}
	cmd_error("no such command '%s'; see 'thpeval help'", argv[1]);
	return CMD_USAGE;
}

static int cmd_version(int argc, char **argv)
{
	if (argc > 1) {
		cmd_error("version: takes no arguments, not '%s'", argv[1]);
		return CMD_USAGE;
	}
	printf("thpeval %s\n", THPEVAL_VERSION);
	return CMD_OK;
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return CMD_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return CMD_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(0, NULL);
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		/* commands without options still answer --help, as 'thpeval help NAME' does */
		if (!commands[i].cmd && argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
			printf("thpeval %s: %s\n", commands[i].name, commands[i].summary);
			return CMD_OK;
		}
		return commands[i].fn(argc - 1, argv + 1);
	}
	cmd_error("unknown command '%s'; see 'thpeval help'", argv[1]);
	return CMD_USAGE;
}
