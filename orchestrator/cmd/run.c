/*
 * thpeval run: the experiment (run/run.h) under the signal flag, with the
 * options of cmd/run_opts.c, and after a complete run the regression gate,
 * the reports and the history.
 */

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "orchestrator/analysis/abtest.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/analysis/effects.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/cmd/run_alias.h"
#include "orchestrator/cmd/histgate.h"
#include "orchestrator/history/gatedb.h"
#include "orchestrator/model/results_load.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/history/history.h"
#include "orchestrator/report/gatetext.h"
#include "orchestrator/report/report.h"
#include "orchestrator/report/text.h"
#include "orchestrator/run/config.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/run/run.h"

/* ---- the run ----------------------------------------------------------------- */

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

/*
 * A history database error while gating: one that is down (refused connection)
 * is kept and said once, where the run is not recorded; any other fails the run.
 */
static int db_failure(struct err *e, bool *db_down, struct err *db_err)
{
	*db_down = e->code == -ECONNREFUSED;
	if (!*db_down)
		return cmd_fail(e, CMD_ERROR);
	*db_err = *e;
	return CMD_OK;
}

/*
 * After a complete run: the regression gate (--baseline), the reports
 * (--format) and the history (--db). Returns the exit code: 1 on a
 * regression or when any of these fails (the results file is already safe).
 */
static int finish_run(const struct run_config *cfg, struct results *res)
{
	struct results *base = NULL;
	struct comparison cmp;
	struct report_input in = { .res = res };
	struct err e = ERR_INIT;
	char base_name[PATH_MAX + 64] = "";
	struct err db_err = ERR_INIT;
	struct gate_result hist;
	bool gated = false, hist_gated = false, passed = true, db_down = false;
	int rc = CMD_OK;

	memset(&cmp, 0, sizeof(cmp));
	memset(&hist, 0, sizeof(hist));
	if (!strcmp(cfg->baseline, "history")) {
		struct gate_opts go = { cfg->threshold, GATE_DEFAULT_K, cfg->fail_on_suspect ? GATE_FAIL_ON_SUSPECT :
					GATE_FAIL_ON_REGRESSION, false };
		struct compare_opts co = { cfg->threshold, cfg->gate_all ? GATE_ALL : GATE_PRIMARY };

		/* --db=none with a baseline from the database was refused before the run */
		if (histgate_run(cfg->db, res, &go, &co, &hist, stdout, &e)) {
			rc = db_failure(&e, &db_down, &db_err);
		} else {
			hist_gated = true;
			passed = !gate_failed(&hist);
			in.gate = &hist;
		}
	} else if (cfg->baseline[0]) {
		base = calloc(1, sizeof(*base));
		if (!base) {
			cmd_error("out of memory");
			return CMD_ERROR;
		}
		if (!strcmp(cfg->baseline, "last")) {
			struct history_run_ref ref;

			if (history_baseline_last(cfg->db, res, HISTORY_SAME_SETUP, &ref, base, &e) == -ENOENT) {
				char shown[PATH_MAX];

				histdb_redact(cfg->db, shown, sizeof(shown));
				fprintf(stderr, "thpeval: no earlier complete run of this setup in '%s': this run becomes the baseline\n",
					shown);
				err_clear(&e);
			} else if (err_isset(&e)) {
				rc = db_failure(&e, &db_down, &db_err);
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
		if (db_down || history_append_gated(cfg->db, res, passed, hist_gated ? &hist : NULL, &e)) {
			/* results.json is written: the run can be recorded later */
			cmd_error("%s (the run is kept in %s/results.json: 'thpeval history --import' records it later)",
				  db_down ? db_err.msg : e.msg, cfg->out_dir);
			rc = CMD_ERROR;
		}
	}
	if (gated && !passed) {
		fprintf(stderr, "thpeval: regression gate failed: %zu regression(s), %zu gated metric(s) failing "
			"in all, against %s\n", cmp.nregressions, cmp.nfailed, base_name);
		rc = CMD_ERROR;
	}
	if (hist_gated && !passed) {
		char sum[200];

		gate_summary(&hist, sum, sizeof(sum));
		fprintf(stderr, "thpeval: history gate failed: %s\n", sum);
		rc = CMD_ERROR;
	}
	gate_result_release(&hist);
	comparison_release(&cmp);
	if (base) {
		results_release(base);
		free(base);
	}
	return rc;
}

/* the directories of --out/guests that a run creates, to remove when it measured nothing */
#define OUT_DIRS_MAX 16
struct out_dirs {
	char path[PATH_MAX + 16];	/* out_dir/guests */
	size_t n;			/* its components missing before the run, innermost last */
	size_t len[OUT_DIRS_MAX];
};

static void out_dirs_note(struct out_dirs *d, const char *out_dir)
{
	char *p = d->path;
	size_t i, n;
	struct stat st;

	d->n = 0;
	if (snprintf(p, sizeof(d->path), "%s/guests", out_dir) >= (int)sizeof(d->path))
		return;
	n = strlen(p);
	for (i = 1; i <= n && d->n < OUT_DIRS_MAX; i++) {
		if (p[i] != '/' && p[i] != '\0')
			continue;
		p[i] = '\0';
		if (stat(p, &st) < 0 && errno == ENOENT)
			d->len[d->n++] = i;
		if (i < n)
			p[i] = '/';
	}
}

/* rmdir what out_dirs_note() found missing, innermost first, while each is empty */
static void out_dirs_undo(struct out_dirs *d)
{
	while (d->n > 0) {
		d->path[d->len[--d->n]] = '\0';
		if (rmdir(d->path) < 0)
			break;
	}
}

/* the guest program's workloads, those selected, and the options about them agreeing */
static int run_select(struct run_config *cfg, uint64_t given)
{
	struct err we = ERR_INIT;

	if (workloads_list(cfg->guest_bin, cfg->wl_info, 16, &cfg->n_wl_info, &we) ||
	    workloads_select(cfg->workloads, cfg->wl_info, cfg->n_wl_info, cfg->wl, 16, &cfg->n_wl, &we) ||
	    exec_select(cfg, &we))
		return cmd_fail(&we, CMD_USAGE);
	if (cfg->n_guest_shmem && !shmem_axis_planned(cfg)) {
		cmd_error("--guest-shmem-thp sets the guest's shared memory for workloads that take "
			  "--shmem-thp (pgbench): add one to --workloads");
		return CMD_USAGE;
	}
	/* the options first: --kcompile without kcompile is said as such */
	if (run_opts_check(cfg, given, &we) ||
	    (cfg->wl_opts[0] && workload_opts_check(cfg->wl_opts, cfg->wl, cfg->n_wl, cfg->wl_info,
						    cfg->n_wl_info, &we)))
		return cmd_fail(&we, CMD_USAGE);
	return CMD_OK;
}

/*
 * The options and their checks, the workloads, the seed and --out decided
 * late: CMD_OK, or the exit code; *done: nothing more to do (an error, or
 * --help printed).
 */
static int run_prepare(struct run_config *cfg, int argc, char **argv, bool *done)
{
	struct err e = ERR_INIT;
	uint64_t given;
	bool help;
	int first, rc;

	*done = true;
	run_config_defaults(cfg);
	if (cli_parse(&run_cmd, argc, argv, run_config_opt, cfg, &first, &help, &given, &e))
		return cmd_fail(&e, CMD_USAGE);
	if (help) {
		cli_help(&run_cmd, stdout);
		return CMD_OK;
	}
	if (first < argc) {
		cmd_error("run: unexpected argument '%s'; see 'thpeval run --help'", argv[first]);
		return CMD_USAGE;
	}
	if (run_config_check(cfg, &e))
		return cmd_fail(&e, CMD_USAGE);
	if (!cfg->guest_bin[0]) {
		if (cmd_default_guest_bin(cfg->guest_bin, sizeof(cfg->guest_bin), &e))
			return cmd_fail(&e, CMD_ERROR);
	} else if (cmd_guest_bin_check(cfg->guest_bin, &e)) {
		return cmd_fail(&e, CMD_ERROR);
	}
	rc = run_select(cfg, given);
	if (rc)
		return rc;
	if (cmd_is_host_root(cfg->sysfs_root) && (rc = cmd_need_root("thpeval run")))
		return rc;
	if (run_paths_check(cfg, &e))	/* as the user that runs it: after the root check */
		return cmd_fail(&e, CMD_USAGE);
	if (cfg->seed == 0)
		cfg->seed = ((unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 16)) % 0xfffffffeull + 1;
	if (!cfg->out_dir[0]) {
		char stamp[32];
		time_t t = time(NULL);
		struct tm tm;

		strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", localtime_r(&t, &tm));
		snprintf(cfg->out_dir, sizeof(cfg->out_dir), "thpeval-results/%s", stamp);
	}
	*done = false;
	return CMD_OK;
}

int cmd_run(int argc, char **argv)
{
	struct run_config *cfg = malloc(sizeof(*cfg));
	struct results *res = malloc(sizeof(*res));
	struct err e = ERR_INIT;
	struct run_io io;
	struct progress bar;
	char json_path[PATH_MAX];
	char why[ERR_MSG_MAX];
	bool done, json_failed = false;
	struct out_dirs made;
	int r, rc = CMD_OK;

	if (!cfg || !res) {
		cmd_error("out of memory");
		free(cfg);
		free(res);
		return CMD_ERROR;
	}
	rc = run_prepare(cfg, argc, argv, &done);
	if (done)
		goto done_cfg;
	out_dirs_note(&made, cfg->out_dir);
	results_init(res);
	run_alias_echo(cfg, res);
	install_signals();
	io.stop = &stop_flag;
	io.progress = cfg->quiet ? NULL : stderr;
	memset(&bar, 0, sizeof(bar));
	io.bar = cfg->quiet ? NULL : &bar;
	r = run_experiment(cfg, &io, res, json_path, sizeof(json_path), &e);
	res->finished = time(NULL);
	if (!r && !stop_flag && !results_any_rep_ok(res, why, sizeof(why)))
		r = err_set(&e, -EIO, "no repetition succeeded in any cell (%s): nothing was measured", why);
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

		if (effects_attach(res, &fe) || abtest_attach(res, &fe))
			fprintf(stderr, "thpeval: warning: %s\n", fe.msg);
	}
	if (res->ncells)
		results_print_table(res, stdout);
	if (r && !res->ncells && !res->nguests)
		out_dirs_undo(&made);	/* failed before measuring: leave no empty --out behind */
	if (res->ncells || res->nguests) {
		struct err we = ERR_INIT;

		if (results_write_json(res, json_path, &we)) {
			cmd_error("%s", we.msg);
			json_failed = true;
		} else {
			fprintf(stderr, "thpeval: results in %s\n", json_path);
		}
	}
	if (res->have_thp_after && thp_settings_get(&res->thp_before, "enabled") &&
	    thp_settings_get(&res->thp_after, "enabled") &&
	    strcmp(thp_settings_get(&res->thp_before, "enabled"), thp_settings_get(&res->thp_after, "enabled")))
		cmd_error("host THP 'enabled' is '%s', was '%s': run 'thpeval host restore'",
			  thp_settings_get(&res->thp_after, "enabled"), thp_settings_get(&res->thp_before, "enabled"));
	if (!r && !stop_flag)
		rc = finish_run(cfg, res);
	if (json_failed && rc == CMD_OK)
		rc = CMD_ERROR;	/* the results are not on disk: the run did not do its job */
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
