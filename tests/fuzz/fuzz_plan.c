/*
 * libFuzzer harness for guest/plan.c: plan_parse() reads the kernel command
 * line, which the host builds but a test or a hand-edited domain can make
 * anything. The input is the command line (a NUL ends it early).
 *
 *  - rejections give a reason, also into a tiny buffer; the same input
 *    always gives the same answer;
 *  - an accepted plan keeps every documented bound;
 *  - an accepted plan written back as thpeval.KEY=VALUE words parses to the
 *    same plan.
 * A broken property calls abort() so that the fuzzer reports it.
 *
 * The fuzz rule links lib/ only, so guest/plan.c is compiled in here and the
 * workload-table lookups it makes are answered by a small table of the same
 * shape (the real table pulls in every workload and changes with them), and
 * the shmem_enabled values by the same list as guest/sysinfo.c's.
 * The plan parser only names workloads and reads two defaults.
 */
#include "guest/plan.c"

#include <stdlib.h>

static const struct wl_param fz_memset_params[] = {
	{ .name = "size", .type = WL_P_SIZE, .def = "256M" },
	{ .name = "accesses", .type = WL_P_U64, .def = "1000000" },
	{ .name = NULL },
};
static const struct wl_param fz_common_params[] = {
	{ .name = "rep", .type = WL_P_U64, .def = "0" },
	{ .name = "seed", .type = WL_P_U64, .def = "1" },
	{ .name = NULL },
};
static const struct workload fz_workloads[] = {
	{ .name = "memset", .params = fz_memset_params },
	{ .name = "tlb", .params = fz_memset_params },
	{ .name = "hzp" },
	{ .name = "clearorder" },
	{ .name = "color" },
	{ .name = "dd" },
	{ .name = "w7" },
	{ .name = "w8" },
	{ .name = "w9" },
};
#define FZ_NWORKLOADS (sizeof(fz_workloads) / sizeof(fz_workloads[0]))

const struct workload *workload_find(const char *name)
{
	size_t i;

	for (i = 0; i < FZ_NWORKLOADS; i++)
		if (!strcmp(fz_workloads[i].name, name))
			return &fz_workloads[i];
	return NULL;
}

const struct wl_param *workload_param(const struct workload *w, const char *name)
{
	const struct wl_param *t;

	for (t = w->params; t && t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	for (t = fz_common_params; t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

/* guest/workload.c's lookup in one parameter table (--workload-opts names a parameter) */
const struct wl_param *wl_param_find(const struct wl_param *t, const char *name)
{
	for (; t && t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

/* guest/sysinfo.c's list of shmem_enabled values (guest_shmem_thp=) */
bool shmem_value_valid(const char *v)
{
	static const char *const values[] = { "always", "within_size", "advise", "never", "deny", "force" };
	size_t i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (!strcmp(v, values[i]))
			return true;
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "fuzz_plan: property failed at %s:%d: %s\n",       \
				__FILE__, __LINE__, #cond);                                 \
			abort();                                                            \
		}                                                                           \
	} while (0)

static bool same_plan(const struct plan *a, const struct plan *b)
{
	size_t i;

	if (a->nthp != b->nthp || a->nworkloads != b->nworkloads || a->reps != b->reps ||
	    a->warmup != b->warmup || a->size != b->size || a->accesses != b->accesses ||
	    a->seed != b->seed || a->timeout_ms != b->timeout_ms || strcmp(a->port, b->port))
		return false;
	for (i = 0; i < a->nthp; i++)
		if (a->guest_thp[i] != b->guest_thp[i])
			return false;
	for (i = 0; i < a->nworkloads; i++)
		if (a->workloads[i] != b->workloads[i])
			return false;
	return true;
}

static void check_bounds(const struct plan *p)
{
	size_t i, k;

	CHECK(p->nthp >= 1 && p->nthp <= GUEST_THP__COUNT);
	for (i = 0; i < p->nthp; i++) {
		CHECK((unsigned)p->guest_thp[i] < GUEST_THP__COUNT);
		for (k = 0; k < i; k++)
			CHECK(p->guest_thp[k] != p->guest_thp[i]);
	}
	CHECK(p->nworkloads >= 1 && p->nworkloads <= PLAN_MAX_WORKLOADS);
	for (i = 0; i < p->nworkloads; i++) {
		CHECK(p->workloads[i] && workload_find(p->workloads[i]->name) == p->workloads[i]);
		for (k = 0; k < i; k++)
			CHECK(p->workloads[k] != p->workloads[i]);
	}
	CHECK(p->reps >= 1 && p->reps <= 10000);
	CHECK(p->warmup <= 100);
	CHECK(p->size && p->size % HUGE_2M == 0);
	CHECK(p->accesses >= 1 && p->accesses <= 1000000000000ull);
	CHECK(p->timeout_ms >= 1000 && p->timeout_ms <= 24ull * 3600 * 1000);
	/* each workload's own parameters (exec's command in lib/argv's encoding): nothing a shell,
	 * a kernel word or --name=value would split on */
	CHECK(p->nwlopts <= WLOPTS_MAX);
	for (i = 0; i < p->nwlopts; i++) {
		const char *v = p->wlopts[i].value;

		CHECK(memchr(v, '\0', sizeof(p->wlopts[i].value)) && v[0]);
		CHECK(strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:+-") == strlen(v));
	}
	CHECK(memchr(p->port, '\0', sizeof(p->port)));
	for (i = 0; p->port[i]; i++) {
		char c = p->port[i];

		CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-');
	}
}

/* the plan as a command line, every key spelled out */
static void plan_write(const struct plan *p, char *buf, size_t len)
{
	size_t off, i;

	off = (size_t)snprintf(buf, len, "console=ttyS0 " PLAN_PREFIX "guest_thp=");
	for (i = 0; i < p->nthp; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "",
					guest_thp_name(p->guest_thp[i]));
	off += (size_t)snprintf(buf + off, len - off, " " PLAN_PREFIX "workloads=");
	for (i = 0; i < p->nworkloads; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? "," : "",
					p->workloads[i]->name);
	off += (size_t)snprintf(buf + off, len - off,
				" " PLAN_PREFIX "reps=%llu " PLAN_PREFIX "warmup=%llu " PLAN_PREFIX
				"size=%llu " PLAN_PREFIX "accesses=%llu " PLAN_PREFIX "seed=%llu "
				PLAN_PREFIX "timeout=%llums " PLAN_PREFIX "port=%s quiet",
				(unsigned long long)p->reps, (unsigned long long)p->warmup,
				(unsigned long long)p->size, (unsigned long long)p->accesses,
				(unsigned long long)p->seed, (unsigned long long)p->timeout_ms,
				p->port);
	CHECK(off < len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct plan p, again, back;
	char why[256], tiny[8], line[2048];
	char *cmdline = malloc(size + 1);
	size_t tlen = 1 + size % sizeof(tiny);
	int r, r2;

	CHECK(cmdline);
	memcpy(cmdline, data, size);
	cmdline[size] = '\0';

	why[0] = '\0';
	r = plan_parse(cmdline, &p, why, sizeof(why));
	CHECK(r == 0 || r == -EINVAL);
	if (r)
		CHECK(why[0] && memchr(why, '\0', sizeof(why)));

	/* same answer again, and with a reason buffer too small for it */
	memset(tiny, 'x', sizeof(tiny));
	r2 = plan_parse(cmdline, &again, tiny, tlen);
	CHECK(r2 == r);
	if (r)
		CHECK(memchr(tiny, '\0', tlen));
	if (!r) {
		CHECK(same_plan(&p, &again));
		check_bounds(&p);
		plan_write(&p, line, sizeof(line));
		CHECK(plan_parse(line, &back, why, sizeof(why)) == 0);
		CHECK(same_plan(&p, &back));
	}
	free(cmdline);
	return 0;
}
