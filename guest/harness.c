#include "harness.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "emit.h"
#include "lib/parse.h"
#include "sysinfo.h"

uint64_t harness_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t harness_now_ms(void)
{
	return (int64_t)(harness_now_ns() / 1000000u);
}

void harness_sleep_ms(unsigned ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static const char *const tsc_names[] = {
	[HARNESS_TSC_NONE] = "none",
	[HARNESS_TSC_RDTSC] = "rdtsc",
	[HARNESS_TSC_RDTSCP] = "rdtscp",
};
_Static_assert(sizeof(tsc_names) / sizeof(tsc_names[0]) == HARNESS_TSC__COUNT,
	       "tsc_names out of sync with enum harness_tsc");

/* What a workload's records go through while it runs (wl_env.out). */
struct harness_out {
	struct emitter *em;
	const struct record *base;
	unsigned results;	/* result records sent through harness_emit() */
	unsigned skips;		/* skip records sent through harness_emit() */
	bool hold;		/* harness_hold_after_result() was called */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double harness_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double harness_cv_pct(const double *v, size_t n)
{
	double mean = 0, var = 0;
	size_t i;

	if (n < 2)
		return 0;
	for (i = 0; i < n; i++)
		mean += v[i];
	mean /= (double)n;
	for (i = 0; i < n; i++)
		var += (v[i] - mean) * (v[i] - mean);
	var /= (double)(n - 1);
	return mean > 0 ? 100.0 * sqrt(var) / mean : 0;
}

enum harness_tsc harness_tsc_probe(const char *root)
{
#if defined(__x86_64__) || defined(__i386__)
	return cpuinfo_has_flag(root, "rdtscp") ? HARNESS_TSC_RDTSCP : HARNESS_TSC_RDTSC;
#else
	(void)root;
	return HARNESS_TSC_NONE;
#endif
}

const char *harness_tsc_name(enum harness_tsc t)
{
	return (unsigned)t < HARNESS_TSC__COUNT ? tsc_names[t] : "?";
}

void harness_record_init(const struct wl_env *env, enum rec_type t, struct record *r)
{
	if (env->out)
		*r = *env->out->base;
	else
		rec_init(r, t, 0);
	r->type = t;
}

int harness_emit(const struct wl_env *env, struct record *r, struct err *e)
{
	int ret;

	if (!env->out)
		return err_set(e, -ENOTCONN, "no record output outside a harness run");
	if (r->type != REC_RESULT && r->type != REC_SKIP && r->type != REC_INFO)
		return err_set(e, -EINVAL, "a workload sends result, skip or info records, not '%s'",
			       rec_type_name(r->type));
	ret = emitter_send(env->out->em, r, e);
	if (!ret && r->type == REC_RESULT)
		env->out->results++;
	if (!ret && r->type == REC_SKIP)
		env->out->skips++;
	return ret;
}

void harness_hold_after_result(const struct wl_env *env)
{
	if (env->out)
		env->out->hold = true;
}

static uint64_t tv_us(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000u + (uint64_t)tv->tv_usec;
}

void harness_usage_now(struct harness_usage *u)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	u->minflt = (uint64_t)ru.ru_minflt;
	u->majflt = (uint64_t)ru.ru_majflt;
	u->user_us = tv_us(&ru.ru_utime);
	u->sys_us = tv_us(&ru.ru_stime);
}

/* [A-Za-z0-9_./:+-], not empty, shorter than the array (p->max) */
static int set_word(const struct wl_param *p, const char *val, void *base, struct err *e)
{
	size_t n = strlen(val), i;

	if (n == 0)
		return err_set(e, -EINVAL, "empty value for --%s", p->name);
	if (n >= p->max)
		return err_set(e, -E2BIG, "--%s value longer than %" PRIu64 " characters", p->name,
			       p->max - 1);
	for (i = 0; i < n; i++) {
		char c = val[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("_./:+-", c)))
			return err_set(e, -EINVAL,
				       "bad character '%c' in --%s: use letters, digits and _./:+-",
				       c > 0x20 && c < 0x7f ? c : '?', p->name);
	}
	memcpy((char *)base + p->off, val, n + 1);
	return 0;
}

/* val into the field of base that p describes (base: the struct p's table points into) */
static int set_param(const struct wl_param *p, const char *val, void *base, struct err *e)
{
	char lo[32], hi[32];
	uint64_t v;
	int r;

	switch (p->type) {
	case WL_P_BOOL:
		if (strcmp(val, "0") && strcmp(val, "1"))
			return err_set(e, -EINVAL, "bad value '%s' for --%s: expected 0 or 1", val,
				       p->name);
		*(bool *)((char *)base + p->off) = val[0] == '1';
		return 0;
	case WL_P_KEEP01:
		if (strcmp(val, "keep") && strcmp(val, "0") && strcmp(val, "1"))
			return err_set(e, -EINVAL, "bad value '%s' for --%s: expected keep, 0 or 1",
				       val, p->name);
		*(int *)((char *)base + p->off) = val[0] == 'k' ? -1 : val[0] - '0';
		return 0;
	case WL_P_WORD:
		return set_word(p, val, base, e);
	case WL_P_SIZE:
		r = parse_size(val, &v);
		if (r)
			return err_set(e, r, "bad value '%s' for --%s: expected a size such as 256M",
				       val, p->name);
		if (v < p->min || v > p->max) {
			fmt_size(p->min, lo, sizeof(lo));
			fmt_size(p->max, hi, sizeof(hi));
			return err_set(e, -ERANGE, "--%s=%s is out of range (%s to %s)", p->name, val,
				       lo, hi);
		}
		break;
	case WL_P_U64:
		r = parse_u64(val, &v);
		if (r)
			return err_set(e, r, "bad value '%s' for --%s: expected an integer", val,
				       p->name);
		if (v < p->min || v > p->max)
			return err_set(e, -ERANGE,
				       "--%s=%s is out of range (%" PRIu64 " to %" PRIu64 ")", p->name,
				       val, p->min, p->max);
		break;
	default:
		return err_set(e, -EINVAL, "parameter --%s has a bad type", p->name);
	}
	*(uint64_t *)((char *)base + p->off) = v;
	return 0;
}

static bool key_valid(const char *k)
{
	size_t n;

	for (n = 0; k[n]; n++)
		if (!((k[n] >= 'a' && k[n] <= 'z') || (k[n] >= '0' && k[n] <= '9') || k[n] == '_'))
			return false;
	return n > 0 && n < REC_KEY_MAX;
}

static int add_label(const struct workload *w, const char *kv, struct wl_common *c, struct err *e)
{
	const char *eq = strchr(kv, '=');
	struct wl_label *l;
	size_t klen, i;

	if (!eq)
		return err_set(e, -EINVAL, "bad --label '%s': expected key=value", kv);
	if (c->nlabels >= WL_MAX_LABELS)
		return err_set(e, -E2BIG, "more than %d --label options", WL_MAX_LABELS);
	l = &c->labels[c->nlabels];
	klen = (size_t)(eq - kv);
	if (klen >= sizeof(l->key))
		return err_set(e, -EINVAL, "bad --label key in '%s': longer than %d", kv,
			       REC_KEY_MAX - 1);
	memcpy(l->key, kv, klen);
	l->key[klen] = '\0';
	if (!key_valid(l->key))
		return err_set(e, -EINVAL, "bad --label key '%s': use [a-z0-9_]", l->key);
	if (workload_has_field(w, l->key) || !strcmp(l->key, "reason"))
		return err_set(e, -EINVAL, "--label key '%s' is a field of the %s record", l->key,
			       w->name);
	for (i = 0; i < c->nlabels; i++)
		if (!strcmp(c->labels[i].key, l->key))
			return err_set(e, -EINVAL, "--label '%s' given twice", l->key);
	if (strlen(eq + 1) >= sizeof(l->val))
		return err_set(e, -E2BIG, "--label '%s' value longer than %d", l->key,
			       REC_VAL_MAX - 1);
	strcpy(l->val, eq + 1);
	c->nlabels++;
	return 0;
}

static int set_defaults(const struct wl_param *p, void *base, struct err *e)
{
	int r;

	for (; p && p->name; p++)
		if ((r = set_param(p, p->def, base, e)))
			return err_wrap(e, "default of --%s", p->name);
	return 0;
}

int harness_parse_args(const struct workload *w, int argc, char *const argv[],
		       struct wl_common *c, void *opts, struct err *e)
{
	const char *seen[64];
	size_t nseen = 0, k;
	int i, r;

	memset(c, 0, sizeof(*c));
	memset(opts, 0, w->opts_size);
	if ((r = set_defaults(wl_common_params, c, e)) || (r = set_defaults(w->params, opts, e)))
		return r;
	for (i = 0; i < argc; i++) {
		const char *arg = argv[i], *eq;
		const struct wl_param *p;
		void *base = opts;
		char name[32];
		size_t n;

		if (strncmp(arg, "--", 2) || !(eq = strchr(arg + 2, '=')))
			return err_set(e, -EINVAL, "bad argument '%s': expected --name=value", arg);
		n = (size_t)(eq - arg - 2);
		if (n == 0 || n >= sizeof(name))
			return err_set(e, -EINVAL, "unknown option '%s'", arg);
		memcpy(name, arg + 2, n);
		name[n] = '\0';
		if (!strcmp(name, "label")) {
			if ((r = add_label(w, eq + 1, c, e)))
				return r;
			continue;
		}
		p = wl_param_find(w->params, name);
		if (!p && (p = wl_param_find(wl_common_params, name)))
			base = c;
		if (!p)
			return err_set(e, -EINVAL, "unknown option '--%s' for workload %s", name,
				       w->name);
		for (k = 0; k < nseen; k++)
			if (!strcmp(seen[k], p->name))
				return err_set(e, -EINVAL, "--%s given twice", p->name);
		if (nseen >= sizeof(seen) / sizeof(seen[0]))
			return err_set(e, -E2BIG, "too many options");
		seen[nseen++] = p->name;
		if ((r = set_param(p, eq + 1, base, e)))
			return r;
	}
	return 0;
}

/* workload, rep, warmup, seed, THP knobs, labels: the fields every record carries */
static void base_fields(const struct workload *w, const struct wl_common *c,
			const struct wl_env *env, struct record *r)
{
	char v[THP_VALUE_MAX];
	size_t i;

	rec_add_str(r, "workload", w->name);
	rec_add_u64(r, "rep", c->rep);
	rec_add_u64(r, "warmup", c->warmup);
	rec_add_u64(r, "seed", c->seed);
	thp_knob_get(env->root, "enabled", v, sizeof(v), NULL);
	rec_add_str(r, "thp_enabled", v);
	thp_knob_get(env->root, "defrag", v, sizeof(v), NULL);
	rec_add_str(r, "thp_defrag", v);
	for (i = 0; i < c->nlabels; i++)
		rec_add_str(r, c->labels[i].key, c->labels[i].val);
}

static int report(struct emitter *em, enum rec_type t, const struct record *base, const char *why,
		  int code, struct err *e)
{
	struct err werr = ERR_INIT;

	if (emitter_send_reason(em, t, base, why, &werr))
		err_set(e, werr.code, "%s (and the fail record: %s)", why, werr.msg);
	else
		err_set(e, -EINVAL, "%s", why);
	return code;
}

static int fail(struct emitter *em, const struct record *base, const char *why, int code,
		struct err *e)
{
	return report(em, REC_FAIL, base, why, code, e);
}

/* -EOPNOTSUPP from check or run: the workload cannot run here (skip), else fail */
static int not_run(struct emitter *em, const struct record *base, int r, const char *why,
		   int code, struct err *e)
{
	if (r == -EOPNOTSUPP)
		return report(em, REC_SKIP, base, why, HARNESS_SKIPPED, e);
	return fail(em, base, why, code, e);
}

/*
 * harness_hold_after_result() (memset --hold=1): the result is out; close the
 * output (the runner sees end of file) and keep this process, and the memory
 * the workload left mapped, until the runner kills it.
 */
static __attribute__((noreturn)) void harness_hold(int out_fd)
{
	close(out_fd);
	for (;;)
		pause();
}

/* w with argv[0..argc) (its parameters); opts: w->opts_size bytes of room */
static int workload_run(const struct workload *w, int argc, char *const argv[],
			const struct wl_env *env, struct emitter *em, void *opts, struct err *e)
{
	struct err why = ERR_INIT;
	struct wl_common c;
	struct record base, res;
	struct harness_out out;
	struct wl_env run_env;
	int r;

	rec_init(&base, REC_FAIL, 0);
	if (harness_parse_args(w, argc, argv, &c, opts, &why)) {
		rec_add_str(&base, "workload", w->name);
		return fail(em, &base, why.msg, HARNESS_USAGE, e);
	}
	base_fields(w, &c, env, &base);
	run_env = *env;
	out = (struct harness_out){ em, &base, 0, 0, false };
	run_env.out = &out;
	run_env.common = &c;
	if (w->check && (r = w->check(opts, &run_env, &why)))
		return not_run(em, &base, r, why.msg, HARNESS_USAGE, e);

	res = base;
	res.type = REC_RESULT;
	if ((r = w->run(opts, &run_env, &res, &why)))
		return not_run(em, &base, r, why.msg, HARNESS_FAILED, e);
	if (res.nfields == base.nfields && out.results)
		return HARNESS_OK;	/* every result went through harness_emit() */
	if (res.nfields == base.nfields && out.skips)
		return HARNESS_SKIPPED;	/* every variant was skipped, each with its reason */
	if (res.nfields == base.nfields)
		return fail(em, &base, "the workload measured nothing (no result fields)",
			    HARNESS_FAILED, e);
	if (emitter_send(em, &res, e))
		return HARNESS_FAILED;
	if (out.hold)
		harness_hold(em->fd);
	return HARNESS_OK;
}

int harness_run(const struct workload *w, int argc, char *const argv[], const struct wl_env *env,
		int out_fd, struct err *e)
{
	struct err why = ERR_INIT;
	struct emitter em;
	struct record base;
	void *opts;
	char name[64];
	int r;

	emitter_init(&em, out_fd, -1);
	rec_init(&base, REC_FAIL, 0);
	if (argc < 1) {
		return fail(&em, &base, "no workload named: see 'thpeval-guest workloads'",
			    HARNESS_USAGE, e);
	}
	if (!w) {
		snprintf(name, sizeof(name), "%s", argv[0]);
		rec_add_str(&base, "workload", name);
		err_set(&why, -EINVAL, "unknown workload '%s': see 'thpeval-guest workloads'", name);
		return fail(&em, &base, why.msg, HARNESS_USAGE, e);
	}
	opts = calloc(1, w->opts_size ? w->opts_size : 1);
	if (!opts) {
		rec_add_str(&base, "workload", w->name);
		return fail(&em, &base, "cannot allocate the workload's options", HARNESS_FAILED, e);
	}
	r = workload_run(w, argc - 1, argv + 1, env, &em, opts, e);
	free(opts);
	return r;
}
