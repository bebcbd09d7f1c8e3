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
#include "orchestrator/run/migrate.h"
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

/* what finish_run() learns on its way: the gates' results and the database's state */
struct run_end {
	struct report_input in;
	struct results *base;		/* --baseline's run, loaded */
	struct comparison cmp;
	struct gate_result hist;
	char base_name[PATH_MAX + 64];
	struct err db_err;		/* the history database's error, when it is down */
	bool gated, hist_gated, passed, db_down;
};

/* --baseline=history: the history gate */
static int end_gate_history(const struct run_config *cfg, struct results *res, struct run_end *end)
{
	struct gate_opts go = { cfg->threshold, GATE_DEFAULT_K, cfg->fail_on_suspect ? GATE_FAIL_ON_SUSPECT :
				GATE_FAIL_ON_REGRESSION, false };
	struct compare_opts co = { cfg->threshold, cfg->gate_all ? GATE_ALL : GATE_PRIMARY };
	struct err e = ERR_INIT;

	/* --db=none with a baseline from the database was refused before the run */
	if (histgate_run(cfg->db, res, &go, &co, &end->hist, stdout, &e))
		return db_failure(&e, &end->db_down, &end->db_err);
	end->hist_gated = true;
	end->passed = !gate_failed(&end->hist);
	end->in.gate = &end->hist;
	return CMD_OK;
}

/* --baseline=last or FILE|DIR: the run to compare with, into end->base (end->gated when there is one) */
static int end_load_baseline(const struct run_config *cfg, struct results *res, struct run_end *end,
			     struct err *e)
{
	if (!strcmp(cfg->baseline, "last")) {
		struct history_run_ref ref;

		if (history_baseline_last(cfg->db, res, HISTORY_SAME_SETUP, &ref, end->base, e) == -ENOENT) {
			char shown[PATH_MAX];

			histdb_redact(cfg->db, shown, sizeof(shown));
			fprintf(stderr, "thpeval: no earlier complete run of this setup in '%s': this run becomes the baseline\n",
				shown);
			err_clear(e);
		} else if (err_isset(e)) {
			return db_failure(e, &end->db_down, &end->db_err);
		} else {
			end->gated = true;
			snprintf(end->base_name, sizeof(end->base_name), "%s", ref.desc);
		}
	} else {
		char path[PATH_MAX + 32];
		struct stat st;

		snprintf(path, sizeof(path), "%s%s", cfg->baseline,
			 stat(cfg->baseline, &st) == 0 && S_ISDIR(st.st_mode) ? "/results.json" : "");
		if (results_load(path, end->base, e))
			return cmd_fail(e, CMD_ERROR);
		end->gated = true;
		snprintf(end->base_name, sizeof(end->base_name), "%s", path);
	}
	return CMD_OK;
}

/* the regression gate against end->base, printed */
static int end_compare(const struct run_config *cfg, struct results *res, struct run_end *end, struct err *e)
{
	struct compare_opts co = { cfg->threshold, cfg->gate_all ? GATE_ALL : GATE_PRIMARY };
	struct results *base = end->base;

	results_finish(base, base->settings.min_coverage_pct > 0 ? base->settings.min_coverage_pct : 90.0);
	if (effects_attach(base, e))
		fprintf(stderr, "thpeval: warning: %s\n", e->msg);
	if (compare_results(base, res, &co, &end->cmp, e)) {
		end->gated = false;
		return cmd_fail(e, CMD_ERROR);
	}
	printf("\nregression gate against %s (threshold %.1f%%):\n", end->base_name, cfg->threshold);
	compare_print(&end->cmp, base, res, stdout);
	end->passed = !comparison_failed(&end->cmp);
	end->in.base = base;
	end->in.cmp = &end->cmp;
	end->in.base_name = end->base_name;
	return CMD_OK;
}

/* --baseline=last or FILE|DIR: load it into end->base (allocated) and gate */
static int end_gate_baseline(const struct run_config *cfg, struct results *res, struct run_end *end)
{
	struct err e = ERR_INIT;
	int rc;

	rc = end_load_baseline(cfg, res, end, &e);
	if (end->gated)
		rc = end_compare(cfg, res, end, &e);
	return rc;
}

/* the formats beyond results.json, and the run appended to the history (--db) */
static int end_record(const struct run_config *cfg, struct results *res, struct run_end *end)
{
	struct err e = ERR_INIT;
	int rc = CMD_OK;

	if (cfg->formats & ~REPORT_BIT(REPORT_JSON)) {
		if (report_write_dir(&end->in, cfg->formats & ~REPORT_BIT(REPORT_JSON), cfg->out_dir, &e))
			rc = cmd_fail(&e, CMD_ERROR);
	}
	if (cfg->db[0]) {
		err_clear(&e);
		if (end->db_down || history_append_gated(cfg->db, res, end->passed,
							 end->hist_gated ? &end->hist : NULL, &e)) {
			/* results.json is written: the run can be recorded later */
			cmd_error("%s (the run is kept in %s/results.json: 'thpeval history --import' records it later)",
				  end->db_down ? end->db_err.msg : e.msg, cfg->out_dir);
			rc = CMD_ERROR;
		}
	}
	return rc;
}

/* a failed gate said on stderr: CMD_ERROR, else CMD_OK */
static int end_verdict(const struct run_end *end)
{
	int rc = CMD_OK;

	if (end->gated && !end->passed) {
		fprintf(stderr, "thpeval: regression gate failed: %zu regression(s), %zu gated metric(s) failing "
			"in all, against %s\n", end->cmp.nregressions, end->cmp.nfailed, end->base_name);
		rc = CMD_ERROR;
	}
	if (end->hist_gated && !end->passed) {
		char sum[200];

		gate_summary(&end->hist, sum, sizeof(sum));
		fprintf(stderr, "thpeval: history gate failed: %s\n", sum);
		rc = CMD_ERROR;
	}
	return rc;
}

/*
 * After a complete run: the regression gate (--baseline), the reports
 * (--format) and the history (--db). Returns the exit code: 1 on a
 * regression or when any of these fails (the results file is already safe).
 */
static int finish_run(const struct run_config *cfg, struct results *res)
{
	struct run_end end;
	int rc = CMD_OK, r;

	memset(&end, 0, sizeof(end));
	end.in.res = res;
	end.passed = true;
	if (!strcmp(cfg->baseline, "history")) {
		rc = end_gate_history(cfg, res, &end);
	} else if (cfg->baseline[0]) {
		end.base = calloc(1, sizeof(*end.base));
		if (!end.base) {
			cmd_error("out of memory");
			return CMD_ERROR;
		}
		rc = end_gate_baseline(cfg, res, &end);
	}
	if ((r = end_record(cfg, res, &end)) != CMD_OK)
		rc = r;
	if ((r = end_verdict(&end)) != CMD_OK)
		rc = r;
	gate_result_release(&end.hist);
	comparison_release(&end.cmp);
	if (end.base) {
		results_release(end.base);
		free(end.base);
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

/*
 * cmd_run's phases, the kvmtool way: init (the options, the workloads, the
 * host), work (the experiment), finish (results.json, the gate, the reports,
 * the exit code). An init phase returns CMD_OK to go on, else the exit code.
 */

/* the options parsed and checked on their own; *done after --help */
static int run_init_options(struct run_config *cfg, int argc, char **argv, uint64_t *given, bool *done)
{
	struct err e = ERR_INIT;
	bool help;
	int first;

	if (run_config_init(cfg, &e))
		return cmd_fail(&e, CMD_ERROR);
	if (cli_parse(&run_cmd, argc, argv, run_config_opt, cfg, &first, &help, given, &e))
		return cmd_fail(&e, CMD_USAGE);
	if (help) {
		cli_help(&run_cmd, stdout);
		*done = true;
		return CMD_OK;
	}
	if (first < argc) {
		cmd_error("run: unexpected argument '%s'; see 'thpeval run --help'", argv[first]);
		return CMD_USAGE;
	}
	if (run_config_check(cfg, &e))
		return cmd_fail(&e, CMD_USAGE);
	return CMD_OK;
}

/* the guest program and its workloads, and the options checked against what it offers */
static int run_init_workloads(struct run_config *cfg, uint64_t given)
{
	struct err e = ERR_INIT, we = ERR_INIT;

	if (!cfg->guest_bin[0]) {
		if (cmd_default_guest_bin(cfg->guest_bin, sizeof(cfg->guest_bin), &e))
			return cmd_fail(&e, CMD_ERROR);
	} else if (cmd_guest_bin_check(cfg->guest_bin, &e)) {
		return cmd_fail(&e, CMD_ERROR);
	}
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
	/* --migrate: the keep phase it asks of memset, checked before any boot */
	if (migrate_config_check(cfg, &we))
		return cmd_fail(&we, CMD_USAGE);
	return CMD_OK;
}

/* root where the host is touched, the paths usable, and the seed and --out decided */
static int run_init_host(struct run_config *cfg)
{
	struct err e = ERR_INIT;
	int rc;

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
	return CMD_OK;
}

/*
 * The experiment under the signal flag; res finished (status, effects) and
 * its table printed. Returns run_experiment()'s code, its error in e.
 */
static int run_work(const struct run_config *cfg, struct results *res, char *json_path, size_t len, struct err *e)
{
	struct out_dirs made;
	struct run_io io;
	struct progress bar;
	char why[ERR_MSG_MAX];
	int r;

	out_dirs_note(&made, cfg->out_dir);
	results_init(res);
	run_alias_echo(cfg, res);
	install_signals();
	io.stop = &stop_flag;
	io.progress = cfg->quiet ? NULL : stderr;
	memset(&bar, 0, sizeof(bar));
	io.bar = cfg->quiet ? NULL : &bar;
	r = run_experiment(cfg, &io, res, json_path, len, e);
	res->finished = time(NULL);
	if (!r && !stop_flag && !results_any_rep_ok(res, why, sizeof(why)))
		r = err_set(e, -EIO, "no repetition succeeded in any cell (%s): nothing was measured", why);
	if (r == -EINTR || stop_flag)
		snprintf(res->status, sizeof(res->status), "interrupted");
	else if (r)
		snprintf(res->status, sizeof(res->status), "failed");
	else
		snprintf(res->status, sizeof(res->status), "complete");
	if (r)
		snprintf(res->error, sizeof(res->error), "%s", e->msg);
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
	return r;
}

/* results.json written, the host's THP checked, and after a complete run finish_run(); the exit code */
static int run_finish(const struct run_config *cfg, struct results *res, const char *json_path, int r,
		      const struct err *e)
{
	bool json_failed = false;
	int rc = CMD_OK;

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
		rc = cmd_fail(e, CMD_ERROR);
	}
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct run_config *cfg = malloc(sizeof(*cfg));
	struct results *res = malloc(sizeof(*res));
	struct err e = ERR_INIT;
	char json_path[PATH_MAX];
	uint64_t given = 0;
	bool done = false;
	int r, rc;

	if (!cfg || !res) {
		cmd_error("out of memory");
		free(cfg);
		free(res);
		return CMD_ERROR;
	}
	rc = run_init_options(cfg, argc, argv, &given, &done);
	if (rc == CMD_OK && !done)
		rc = run_init_workloads(cfg, given);
	if (rc == CMD_OK && !done)
		rc = run_init_host(cfg);
	if (rc == CMD_OK && !done) {
		r = run_work(cfg, res, json_path, sizeof(json_path), &e);
		rc = run_finish(cfg, res, json_path, r, &e);
		results_release(res);
	}
	free(res);
	free(cfg);
	return rc;
}
