#include "redis.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "appsrv.h"
#include "harness.h"
#include "sysinfo.h"
#include "lib/fstree.h"
#include "lib/parse.h"

#define REDIS_MARGIN (96ull << 20)	/* memory left to the benchmark and the system */
#define REDIS_KEY_OVERHEAD 160u		/* bytes a key costs beyond its value (dict, robj, sds) */
#define REDIS_START_MS 120000u		/* the server's socket answers PING within this */
#define REDIS_BGSAVE_MS 600000u		/* a BGSAVE ends within this */
#define REDIS_BENCH_MS 1200000u		/* redis-benchmark ends within this */
#define REDIS_BATCH_BYTES (1u << 20)	/* pipelined SETs sent before their replies are read */
#define REDIS_KEYS_MAX 1000000000ull	/* redis-benchmark -r writes 12 digits; -r is an int */

_Static_assert(REDIS_CSV_MAX == APPSRV_OUT_MAX, "redis_proto reads all of the output appsrv keeps");

static const struct wl_param redis_params[] = {
	{ "dataset", WL_P_SIZE, offsetof(struct redis_opts, dataset), "64M", 1ull << 20, 1ull << 40,
	  "bytes of values loaded before the benchmark (dataset / value-size keys): larger than the "
	  "TLB reach" },
	{ "value-size", WL_P_SIZE, offsetof(struct redis_opts, value_size), "1K", 16, 1ull << 20,
	  "bytes of each value (redis-benchmark -d for SET)" },
	{ "requests", WL_P_U64, offsetof(struct redis_opts, requests), "20000", 100, 1000000000,
	  "redis-benchmark -n: requests per test (SET, then GET)" },
	{ "clients", WL_P_U64, offsetof(struct redis_opts, clients), "50", 1, 10000,
	  "redis-benchmark -c: parallel connections" },
	{ "bgsave", WL_P_BOOL, offsetof(struct redis_opts, bgsave), "1", 0, 1,
	  "1: time one BGSAVE after the benchmark (the fork of a server holding the dataset)" },
	{ "thp-disable", WL_P_BOOL, offsetof(struct redis_opts, thp_disable), "0", 0, 1,
	  "redis's disable-thp: 1 lets the server turn THP off for itself where THP is always "
	  "(its default), 0 keeps THP as the cell sets it" },
	{ "dir", WL_P_WORD, offsetof(struct redis_opts, dir), "/tmp", 0, WL_PATH_MAX,
	  "where the server's fresh directory (socket, log, BGSAVE's file) is made and removed" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

static const struct wl_metric redis_metrics[] = {
	{ "dataset_bytes", "bytes of values loaded" },
	{ "value_bytes", "bytes of each value" },
	{ "keys", "keys loaded (dataset / value size), checked with DBSIZE" },
	{ "requests", "redis-benchmark requests per test" },
	{ "clients", "redis-benchmark parallel connections" },
	{ "thp_disable", "1 if the server was let turn THP off for itself (disable-thp yes)" },
	{ "redis_version", "INFO server redis_version" },
	{ "load_s", "wall time of the pipelined SETs that load the dataset (the server's first touch)" },
	{ "used_memory_bytes", "INFO memory used_memory after the benchmark" },
	{ "set_req_per_s", "redis-benchmark SET requests per second" },
	{ "set_avg_ms", "redis-benchmark SET latency average" },
	{ "set_p50_ms", "redis-benchmark SET latency median" },
	{ "set_p99_ms", "redis-benchmark SET latency 99th percentile" },
	{ "get_req_per_s", "redis-benchmark GET requests per second" },
	{ "get_avg_ms", "redis-benchmark GET latency average (the split's access phase)" },
	{ "get_p50_ms", "redis-benchmark GET latency median" },
	{ "get_p99_ms", "redis-benchmark GET latency 99th percentile" },
	{ "bgsave_fork_us", "INFO stats latest_fork_usec of the BGSAVE: the fork() of the server" },
	{ "bgsave_s", "wall time from BGSAVE to INFO showing it done (20 ms polls)" },
	{ "bgsave_cow_bytes", "INFO persistence rdb_last_cow_size: memory copied on write during it" },
	{ "rss_bytes", "the server's Rss (smaps_rollup) before the BGSAVE" },
	{ "anon_bytes", "the server's Anonymous memory (smaps_rollup)" },
	{ "anon_huge_bytes", "the server's AnonHugePages (smaps_rollup)" },
	{ "huge_pct", "AnonHugePages / Anonymous * 100 of the server: the coverage evidence" },
	{ "cov_note", "why huge_pct is absent" },
	{ NULL, NULL },
};

/* ---- the run ------------------------------------------------------------------ */

struct redis_run {
	const struct redis_opts *a;
	const struct wl_env *env;
	char dir[WL_PATH_MAX + 64];
	char sock[WL_PATH_MAX + 80];
	char log[WL_PATH_MAX + 80];
	char bench_err[WL_PATH_MAX + 80];
	pid_t pid;
	struct rconn c;
	uint64_t keys;
};

static char rd_path[] = "PATH=/usr/bin:/bin", rd_lc[] = "LC_ALL=C", rd_home[] = "HOME=/tmp";
static char *const redis_envp[] = { rd_path, rd_lc, rd_home, NULL };

static int redis_check(const void *opts, const struct wl_env *env, struct err *e)
{
	const struct redis_opts *a = opts;
	char path[WL_PATH_MAX + 64], need[32], have[32];
	uint64_t keys = a->dataset / a->value_size, avail, want;

	if (a->dir[0] != '/' || strstr(a->dir, ".."))
		return err_set(e, -EINVAL, "bad --dir '%s': an absolute path without '..'", a->dir);
	if (keys > REDIS_KEYS_MAX)
		return err_set(e, -EINVAL, "--dataset / --value-size gives %" PRIu64 " keys, more than %llu "
			       "(redis-benchmark -r)", keys, REDIS_KEYS_MAX);
	snprintf(path, sizeof(path), "%s%s", env->root, REDIS_SERVER);
	if (access(path, X_OK))
		return err_set(e, -EOPNOTSUPP, "no '%s' here: the guest image needs redis-server (thpeval run "
			       "adds it for the redis workload; install it on the host)", path);
	snprintf(path, sizeof(path), "%s%s", env->root, REDIS_BENCHMARK);
	if (access(path, X_OK))
		return err_set(e, -EOPNOTSUPP, "no '%s' here: the guest image needs redis-tools (thpeval run "
			       "adds it for the redis workload; install it on the host)", path);
	/* the values, rounded up by the allocator, and what each key costs besides */
	want = keys * (a->value_size + a->value_size / 4 + REDIS_KEY_OVERHEAD) + REDIS_MARGIN;
	if (meminfo_get(env->root, "MemAvailable", &avail, e))
		return err_wrap(e, "cannot check the dataset against available memory");
	if (want > avail) {
		fmt_size(want, need, sizeof(need));
		fmt_size(avail, have, sizeof(have));
		return err_set(e, -ENOMEM, "a %" PRIu64 " MiB dataset needs about %s of memory (server "
			       "overhead and 96M kept free), %s available: a smaller --dataset or more guest "
			       "--memory", a->dataset >> 20, need, have);
	}
	return 0;
}

/* the server up: its socket answers PING with PONG */
static int redis_start(struct redis_run *rr, struct err *e)
{
	char a0[] = "redis-server", o_port[] = "--port", v_port[] = "0", o_sock[] = "--unixsocket",
	     o_perm[] = "--unixsocketperm", v_perm[] = "700", o_dir[] = "--dir", o_save[] = "--save", v_save[] = "",
	     o_aof[] = "--appendonly", v_no[] = "no", o_dbf[] = "--dbfilename", v_dbf[] = "dump.rdb",
	     o_dmn[] = "--daemonize", v_no2[] = "no", o_thp[] = "--disable-thp", v_yes[] = "yes", v_no3[] = "no",
	     path[WL_PATH_MAX + 32], tail[APPSRV_TAIL_MAX];
	char *argv[] = { a0, o_port, v_port, o_sock, rr->sock, o_perm, v_perm, o_dir, rr->dir, o_save, v_save,
			 o_aof, v_no, o_dbf, v_dbf, o_dmn, v_no2, o_thp, rr->a->thp_disable ? v_yes : v_no3,
			 NULL };
	uint64_t deadline = harness_now_ns() + (uint64_t)REDIS_START_MS * 1000000u;
	const char *const ping[] = { "PING" };
	struct resp_reply rep;
	int ret, st;

	snprintf(path, sizeof(path), "%s%s", rr->env->root, REDIS_SERVER);
	if ((ret = appsrv_start(path, argv, redis_envp, NULL, rr->log, &rr->pid, e)))
		return ret;
	/* wait for the socket, polled, bounded, as long as the server lives */
	for (;;) {
		if (appsrv_exited(rr->pid, &st)) {
			rr->pid = -1;
			appsrv_log_tail(rr->log, tail, sizeof(tail));
			return err_set(e, -EIO, "redis-server exited at start (status %#x): %s", st,
				       tail[0] ? tail : "no output");
		}
		ret = rc_connect(&rr->c, rr->sock, e);
		if (!ret)
			break;
		if (ret != -EAGAIN)
			return ret;
		if (harness_now_ns() > deadline)
			return err_set(e, -ETIMEDOUT, "redis-server's socket '%s' not there after %u s",
				       rr->sock, REDIS_START_MS / 1000);
		harness_sleep_ms(20);
	}
	if ((ret = rc_command(&rr->c, 1, ping, &rep, e)))
		return ret;
	if (rep.type != RESP_SIMPLE || rep.len != 4 || memcmp(rep.str, "PONG", 4))
		return err_set(e, -EBADMSG, "redis-server did not answer PING with PONG");
	return 0;
}

/* keys key:000000000000.. with value_size bytes each, pipelined; the server's first touch */
static int redis_load(struct redis_run *rr, double *load_s, struct err *e)
{
	size_t vlen = (size_t)rr->a->value_size, cap = REDIS_BATCH_BYTES + vlen + 128, len;
	char *buf = malloc(cap), *value = malloc(vlen), key[32];
	const char *argv[3] = { "SET", key, NULL };
	size_t lens[3] = { 3, 0, vlen };
	uint64_t k = 0, t0 = harness_now_ns(), i, n;
	struct resp_reply rep;
	int ret = 0;

	if (!buf || !value) {
		free(buf);
		free(value);
		return err_set(e, -ENOMEM, "out of memory for the dataset's commands");
	}
	memset(value, 'x', vlen);
	argv[2] = value;
	while (!ret && k < rr->keys) {
		/* a batch of about REDIS_BATCH_BYTES (cap holds one more command past the mark) */
		for (len = 0, n = 0; k + n < rr->keys && len < REDIS_BATCH_BYTES; n++) {
			lens[1] = (size_t)snprintf(key, sizeof(key), "key:%012" PRIu64, k + n);
			if (!resp_encode(buf, cap, &len, 3, argv, lens)) {
				ret = err_set(e, -E2BIG, "a SET command does not fit its buffer");
				break;
			}
		}
		if (ret || (ret = rc_send(&rr->c, buf, len, e)))
			break;
		for (i = 0; i < n && !ret; i++) {
			if ((ret = rc_reply(&rr->c, &rep, e)))
				break;
			if (rep.type != RESP_SIMPLE || rep.len != 2 || memcmp(rep.str, "OK", 2))
				ret = err_set(e, -EIO, "SET of key %" PRIu64 " answered '%.*s'", k + i,
					      (int)(rep.len > 80 ? 80 : rep.len), rep.str ? rep.str : "");
		}
		k += n;
	}
	*load_s = (double)(harness_now_ns() - t0) / 1e9;
	free(buf);
	free(value);
	return ret;
}

static int redis_bench(struct redis_run *rr, struct redis_bench_row *rows, size_t *nrows, struct err *e)
{
	char a0[] = "redis-benchmark", o_s[] = "-s", o_c[] = "-c", o_n[] = "-n", o_r[] = "-r", o_d[] = "-d",
	     o_t[] = "-t", v_t[] = "set,get", o_csv[] = "--csv", v_c[24], v_n[24], v_r[24], v_d[24],
	     path[WL_PATH_MAX + 32], tail[APPSRV_TAIL_MAX];
	char *argv[] = { a0, o_s, rr->sock, o_c, v_c, o_n, v_n, o_r, v_r, o_d, v_d, o_t, v_t, o_csv, NULL };
	const struct appsrv_run_opts o = { redis_envp, NULL, REDIS_BENCH_MS, 0, NULL, NULL, rr->bench_err };
	struct appsrv_out *out = malloc(sizeof(*out));
	uint64_t wall;
	int ret, st;

	if (!out)
		return err_set(e, -ENOMEM, "out of memory");
	snprintf(v_c, sizeof(v_c), "%" PRIu64, rr->a->clients);
	snprintf(v_n, sizeof(v_n), "%" PRIu64, rr->a->requests);
	snprintf(v_r, sizeof(v_r), "%" PRIu64, rr->keys);
	snprintf(v_d, sizeof(v_d), "%" PRIu64, rr->a->value_size);
	snprintf(path, sizeof(path), "%s%s", rr->env->root, REDIS_BENCHMARK);
	ret = appsrv_run(path, argv, &o, out, &st, &wall, e);
	if (!ret && (!WIFEXITED(st) || WEXITSTATUS(st))) {
		appsrv_log_tail(rr->bench_err, tail, sizeof(tail));
		ret = err_set(e, -EIO, "redis-benchmark %s %d: %s", WIFEXITED(st) ? "exited with status" :
			      "killed by signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st),
			      tail[0] ? tail : "no message");
	}
	if (!ret && out->truncated)
		ret = err_set(e, -EBADMSG, "redis-benchmark printed more than %d bytes", APPSRV_OUT_MAX);
	if (!ret)
		ret = redis_bench_csv_parse(out->buf, out->len, rows, REDIS_BENCH_ROWS, nrows, e);
	free(out);
	return ret;
}

/* BGSAVE and its end, polled on INFO persistence; the fork time from INFO stats */
static int redis_bgsave(struct redis_run *rr, struct record *res, struct err *e)
{
	const char *const bgsave[] = { "BGSAVE" };
	uint64_t saves0, saves, busy, fork_us, cow, t0, deadline;
	struct resp_reply rep;
	char status[32];
	int ret;

	if ((ret = rc_info(&rr->c, "persistence", &rep, e)) || (ret = rc_info_u64(&rep, "rdb_saves", &saves0, e)))
		return ret;
	t0 = harness_now_ns();
	deadline = t0 + (uint64_t)REDIS_BGSAVE_MS * 1000000u;
	if ((ret = rc_command(&rr->c, 1, bgsave, &rep, e)))
		return ret;
	if (rep.type != RESP_SIMPLE)
		return err_set(e, -EBADMSG, "BGSAVE: not a status reply");
	for (;;) {
		if ((ret = rc_info(&rr->c, "persistence", &rep, e)) ||
		    (ret = rc_info_u64(&rep, "rdb_bgsave_in_progress", &busy, e)) ||
		    (ret = rc_info_u64(&rep, "rdb_saves", &saves, e)))
			return ret;
		if (!busy && saves > saves0)
			break;
		if (harness_now_ns() > deadline)
			return err_set(e, -ETIMEDOUT, "BGSAVE still running after %u s", REDIS_BGSAVE_MS / 1000);
		harness_sleep_ms(20);
	}
	ret = redis_info_get(rep.str, rep.len, "rdb_last_bgsave_status", status, sizeof(status));
	if (ret || strcmp(status, "ok"))
		return err_set(e, -EIO, "BGSAVE failed: rdb_last_bgsave_status is '%s'", ret ? "absent" : status);
	if ((ret = rc_info_u64(&rep, "rdb_last_cow_size", &cow, e)))
		return ret;
	ret = rec_add_f64(res, "bgsave_s", (double)(harness_now_ns() - t0) / 1e9);
	ret |= rec_add_u64(res, "bgsave_cow_bytes", cow);
	if ((ret |= rc_info(&rr->c, "stats", &rep, e)))
		return ret;
	if ((ret = rc_info_u64(&rep, "latest_fork_usec", &fork_us, e)))
		return ret;
	if (fork_us == 0)
		return err_set(e, -EBADMSG, "INFO stats latest_fork_usec is 0 after a BGSAVE");
	return rec_add_u64(res, "bgsave_fork_us", fork_us) ? -EINVAL : 0;
}

/* the server's memory before the fork: the coverage evidence */
static int redis_evidence(struct redis_run *rr, struct record *res, struct err *e)
{
	struct proc_mem m;
	int ret = proc_mem_read(rr->env->root, rr->pid, &m, e);

	if (ret)
		return ret;
	ret = rec_add_u64(res, "rss_bytes", m.rss);
	ret |= rec_add_u64(res, "anon_bytes", m.anon);
	if (m.have_anon_huge) {
		ret |= rec_add_u64(res, "anon_huge_bytes", m.anon_huge);
		ret |= rec_add_f64(res, "huge_pct", m.anon ? 100.0 * (double)m.anon_huge / (double)m.anon : 0.0);
	} else {
		ret |= rec_add_str(res, "cov_note", "no AnonHugePages in smaps_rollup (a kernel without THP)");
	}
	return ret ? -EINVAL : 0;
}

static int redis_measure(struct redis_run *rr, struct record *res, struct err *e)
{
	const struct redis_opts *a = rr->a;
	const char *const dbsize[] = { "DBSIZE" };
	struct redis_bench_row rows[REDIS_BENCH_ROWS];
	const struct redis_bench_row *set, *get;
	struct resp_reply rep;
	char version[32];
	uint64_t used;
	size_t nrows;
	double load_s = 0;
	int ret;

	if ((ret = redis_start(rr, e)))
		return ret;
	if ((ret = rc_info(&rr->c, "server", &rep, e)))
		return ret;
	if (redis_info_get(rep.str, rep.len, "redis_version", version, sizeof(version)))
		snprintf(version, sizeof(version), "unknown");
	if ((ret = rc_info_u64(&rep, "process_id", &used, e)))
		return ret;
	if (used != (uint64_t)rr->pid)
		return err_set(e, -EIO, "the socket '%s' is served by pid %" PRIu64 ", not by the server started "
			       "(pid %d)", rr->sock, used, (int)rr->pid);
	if ((ret = redis_load(rr, &load_s, e)))
		return ret;
	if ((ret = rc_command(&rr->c, 1, dbsize, &rep, e)))
		return ret;
	if (rep.type != RESP_INT || rep.num != (int64_t)rr->keys)
		return err_set(e, -EIO, "DBSIZE is %" PRId64 " after loading %" PRIu64 " keys", rep.num, rr->keys);
	if ((ret = redis_bench(rr, rows, &nrows, e)))
		return ret;
	set = redis_bench_row_find(rows, nrows, "SET");
	get = redis_bench_row_find(rows, nrows, "GET");
	if (!set || !get)
		return err_set(e, -EBADMSG, "redis-benchmark --csv has no %s row", set ? "GET" : "SET");
	if ((ret = rc_info(&rr->c, "memory", &rep, e)) || (ret = rc_info_u64(&rep, "used_memory", &used, e)))
		return ret;
	ret = rec_add_u64(res, "dataset_bytes", a->dataset);
	ret |= rec_add_u64(res, "value_bytes", a->value_size);
	ret |= rec_add_u64(res, "keys", rr->keys);
	ret |= rec_add_u64(res, "requests", a->requests);
	ret |= rec_add_u64(res, "clients", a->clients);
	ret |= rec_add_u64(res, "thp_disable", a->thp_disable);
	ret |= rec_add_str(res, "redis_version", version);
	ret |= rec_add_f64(res, "load_s", load_s);
	ret |= rec_add_u64(res, "used_memory_bytes", used);
	ret |= rec_add_f64(res, "set_req_per_s", set->rps);
	ret |= rec_add_f64(res, "set_avg_ms", set->avg_ms);
	ret |= rec_add_f64(res, "set_p50_ms", set->p50_ms);
	ret |= rec_add_f64(res, "set_p99_ms", set->p99_ms);
	ret |= rec_add_f64(res, "get_req_per_s", get->rps);
	ret |= rec_add_f64(res, "get_avg_ms", get->avg_ms);
	ret |= rec_add_f64(res, "get_p50_ms", get->p50_ms);
	ret |= rec_add_f64(res, "get_p99_ms", get->p99_ms);
	if (ret)
		return err_set(e, -EINVAL, "cannot build the redis record");
	if ((ret = redis_evidence(rr, res, e)))
		return ret;
	return a->bgsave ? redis_bgsave(rr, res, e) : 0;
}

static int redis_run(const void *opts, const struct wl_env *env, struct record *res, struct err *e)
{
	const struct redis_opts *a = opts;
	struct redis_run rr = { .a = a, .env = env, .pid = -1, .c = { .fd = -1 } };
	int ret, st;

	rr.keys = a->dataset / a->value_size;
	snprintf(rr.dir, sizeof(rr.dir), "%s%s/thpeval-redis-XXXXXX", env->root, a->dir);
	if (!mkdtemp(rr.dir))
		return err_set(e, -errno, "cannot create a directory in '%s%s': %s", env->root, a->dir,
			       strerror(errno));
	snprintf(rr.sock, sizeof(rr.sock), "%s/redis.sock", rr.dir);
	snprintf(rr.log, sizeof(rr.log), "%s/redis.log", rr.dir);
	snprintf(rr.bench_err, sizeof(rr.bench_err), "%s/benchmark.err", rr.dir);
	ret = redis_measure(&rr, res, e);
	rc_close(&rr.c);
	/* killed by its pid whatever happened; a BGSAVE child dies with it (its parent-death signal) */
	if (rr.pid > 0)
		appsrv_stop(rr.pid, SIGKILL, 10000, &st);
	fstree_remove(rr.dir);
	return ret;
}

const struct workload wl_redis = {
	.name = "redis",
	.description = "Redis in the guest: redis-server on a unix socket with --dataset bytes of values "
		       "(pipelined SETs, timed), redis-benchmark SET and GET on random keys of it "
		       "(requests per second, latency average, p50, p99), then one BGSAVE (its fork time "
		       "and copy-on-write bytes); coverage from the server's smaps_rollup",
	.params = redis_params,
	.opts_size = sizeof(struct redis_opts),
	.metrics = redis_metrics,
	.check = redis_check,
	.run = redis_run,
};
