#include "plan.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "lib/err.h"
#include "lib/parse.h"
#include "registry.h"
#include "sysinfo.h"

#define HUGE_2M (2ull << 20)

static const char *const guest_thp_names[] = {
	[GUEST_THP_ALWAYS] = "always",
	[GUEST_THP_MADVISE] = "madvise",
	[GUEST_THP_NEVER] = "never",
};
_Static_assert(sizeof(guest_thp_names) / sizeof(guest_thp_names[0]) == GUEST_THP__COUNT,
	       "guest_thp_names out of sync with enum guest_thp");

const char *guest_thp_name(enum guest_thp t)
{
	return (unsigned)t < GUEST_THP__COUNT ? guest_thp_names[t] : "?";
}

int guest_thp_parse(const char *s, enum guest_thp *out)
{
	unsigned i;

	for (i = 0; i < GUEST_THP__COUNT; i++) {
		if (!strcmp(s, guest_thp_names[i])) {
			*out = (enum guest_thp)i;
			return 0;
		}
	}
	return -EINVAL;
}

void plan_defaults(struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->nthp = 2;
	p->guest_thp[0] = GUEST_THP_NEVER;
	p->guest_thp[1] = GUEST_THP_ALWAYS;
	p->nworkloads = 1;
	p->workloads[0] = workload_find("memset");
	p->reps = 3;
	p->warmup = 1;
	/* size and accesses default to the memset workload's own defaults */
	if (parse_size(workload_param(p->workloads[0], "size")->def, &p->size))
		p->size = 256ull << 20;
	if (parse_u64(workload_param(p->workloads[0], "accesses")->def, &p->accesses))
		p->accesses = 1000000;
	p->seed = 1;
	p->probe_period_ms = 1000;
	p->timeout_ms = 600000;
	snprintf(p->port, sizeof(p->port), "%s", "org.thpeval.records");
}

/* Split a comma list into items of at most itemlen - 1 bytes; calls fn per item. */
typedef int (*item_fn)(const char *item, struct plan *p, const char *key, char *why, size_t len);

static int each_item(const char *v, struct plan *p, const char *key, item_fn fn, char *why,
		     size_t len)
{
	char item[PLAN_VALUE_MAX + 1];
	const char *s = v;
	int r;

	for (;;) {
		const char *c = strchr(s, ',');
		size_t n = c ? (size_t)(c - s) : strlen(s);

		if (n == 0)
			return err_why(why, len, PLAN_PREFIX "%s: empty item in '%s'", key, v);
		memcpy(item, s, n);
		item[n] = '\0';
		if ((r = fn(item, p, key, why, len)))
			return r;
		if (!c)
			return 0;
		s = c + 1;
	}
}

static int thp_item(const char *item, struct plan *p, const char *key, char *why, size_t len)
{
	enum guest_thp t;
	size_t i;

	if (guest_thp_parse(item, &t))
		return err_why(why, len, PLAN_PREFIX "%s: '%s' is not always, madvise or never", key,
			       item);
	for (i = 0; i < p->nthp; i++)
		if (p->guest_thp[i] == t)
			return err_why(why, len, PLAN_PREFIX "%s: '%s' listed twice", key, item);
	p->guest_thp[p->nthp++] = t;
	return 0;
}

static int workload_item(const char *item, struct plan *p, const char *key, char *why, size_t len)
{
	const struct workload *w = workload_find(item);
	size_t i;

	if (!w)
		return err_why(why, len, PLAN_PREFIX "%s: unknown workload '%s'", key, item);
	for (i = 0; i < p->nworkloads; i++)
		if (p->workloads[i] == w)
			return err_why(why, len, PLAN_PREFIX "%s: '%s' listed twice", key, item);
	if (p->nworkloads >= PLAN_MAX_WORKLOADS)
		return err_why(why, len, PLAN_PREFIX "%s: more than %d workloads", key,
			       PLAN_MAX_WORKLOADS);
	p->workloads[p->nworkloads++] = w;
	return 0;
}

static int set_guest_thp(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	p->nthp = 0;
	return each_item(v, p, key, thp_item, why, len);
}

static int shmem_item(const char *item, struct plan *p, const char *key, char *why, size_t len)
{
	size_t i;

	if (strlen(item) >= PLAN_SHMEM_LEN || !shmem_value_valid(item))
		return err_why(why, len, PLAN_PREFIX "%s: '%s' is not a shmem_enabled value (always, "
			       "within_size, advise, never, deny, force)", key, item);
	for (i = 0; i < p->nshmem; i++)
		if (!strcmp(p->shmem_thp[i], item))
			return err_why(why, len, PLAN_PREFIX "%s: '%s' listed twice", key, item);
	memcpy(p->shmem_thp[p->nshmem++], item, strlen(item) + 1);	/* a value of the list: short */
	return 0;
}

static int set_guest_shmem_thp(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	p->nshmem = 0;
	return each_item(v, p, key, shmem_item, why, len);
}

/* the syntax in lib/wlopts; here: a workload of this program that takes PARAM (its value is its check) */
static int set_wlopts(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	char reason[160];
	size_t i;

	if (wlopts_parse(v, p->wlopts, WLOPTS_MAX, &p->nwlopts, reason, sizeof(reason)))
		return err_why(why, len, PLAN_PREFIX "%s: %s", key, reason);
	for (i = 0; i < p->nwlopts; i++) {
		const struct workload *w = workload_find(p->wlopts[i].workload);

		if (!w)
			return err_why(why, len, PLAN_PREFIX "%s: no workload '%s'", key, p->wlopts[i].workload);
		if (!wl_param_find(w->params, p->wlopts[i].param))
			return err_why(why, len, PLAN_PREFIX "%s: workload %s has no --%s", key, w->name,
				       p->wlopts[i].param);
	}
	return 0;
}

static int set_workloads(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	p->nworkloads = 0;
	return each_item(v, p, key, workload_item, why, len);
}

static int set_u64(const char *v, uint64_t min, uint64_t max, uint64_t *out, const char *key,
		   char *why, size_t len)
{
	int r = parse_u64(v, out);

	if (r)
		return err_why(why, len, PLAN_PREFIX "%s: '%s' is not an integer", key, v);
	if (*out < min || *out > max)
		return err_why(why, len, PLAN_PREFIX "%s: %s is out of range (%llu to %llu)", key, v,
			       (unsigned long long)min, (unsigned long long)max);
	return 0;
}

static int set_reps(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	return set_u64(v, 1, 10000, &p->reps, key, why, len);
}

static int set_warmup(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	return set_u64(v, 0, 100, &p->warmup, key, why, len);
}

static int set_cold(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	return set_u64(v, 0, 100, &p->cold, key, why, len);
}

static int set_probe(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	return set_u64(v, 0, 3600, &p->probe, key, why, len);
}

static int set_probe_period(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	return set_u64(v, 100, 60000, &p->probe_period_ms, key, why, len);
}

static int set_accesses(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	return set_u64(v, 1, 1000000000000ull, &p->accesses, key, why, len);
}

static int set_seed(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	return set_u64(v, 0, UINT64_MAX, &p->seed, key, why, len);
}

static int set_size(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	if (parse_size(v, &p->size))
		return err_why(why, len, PLAN_PREFIX "%s: '%s' is not a size such as 256M", key, v);
	if (p->size == 0 || p->size % HUGE_2M)
		return err_why(why, len, PLAN_PREFIX "%s: %s is not a multiple of 2M", key, v);
	return 0;
}

/* a duration of 1s to 24h into *out; example is shown when v is not a duration */
static int set_duration(const char *v, const char *example, uint64_t *out, const char *key,
			char *why, size_t len)
{
	if (parse_duration_ms(v, out))
		return err_why(why, len, PLAN_PREFIX "%s: '%s' is not a duration such as %s", key, v,
			       example);
	if (*out < 1000 || *out > 24ull * 3600 * 1000)
		return err_why(why, len, PLAN_PREFIX "%s: %s is out of range (1s to 24h)", key, v);
	return 0;
}

static int set_timeout(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	return set_duration(v, "600 or 10m", &p->timeout_ms, key, why, len);
}

static int set_port(const char *v, struct plan *p, const char *key, char *why, size_t len)
{
	size_t n = strlen(v), i;

	if (n >= sizeof(p->port))
		return err_why(why, len, PLAN_PREFIX "%s: longer than %zu bytes", key,
			       sizeof(p->port) - 1);
	for (i = 0; i < n; i++) {
		char c = v[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '.' || c == '_' || c == '-'))
			return err_why(why, len, PLAN_PREFIX "%s: bad character in '%s'", key, v);
	}
	memcpy(p->port, v, n + 1);
	return 0;
}

static const struct plan_key {
	const char *name;
	int (*set)(const char *v, struct plan *p, const char *key, char *why, size_t len);
	size_t max;		/* longest value, bytes; 0: PLAN_VALUE_MAX */
} plan_keys[] = {
	{ "guest_thp", set_guest_thp, 0 },
	{ "workloads", set_workloads, 0 },
	{ "reps", set_reps, 0 },
	{ "warmup", set_warmup, 0 },
	{ "cold", set_cold, 0 },
	{ "size", set_size, 0 },
	{ "accesses", set_accesses, 0 },
	{ "seed", set_seed, 0 },
	{ "timeout", set_timeout, 0 },
	{ "port", set_port, 0 },
	{ "guest_shmem_thp", set_guest_shmem_thp, 0 },
	{ "wlopts", set_wlopts, WLOPTS_SPEC_MAX },
	{ "probe", set_probe, 0 },
	{ "probe_period", set_probe_period, 0 },
};
#define NKEYS (sizeof(plan_keys) / sizeof(plan_keys[0]))
_Static_assert(NKEYS <= 32, "plan keys must fit the seen mask");

/* one thpeval.KEY=VALUE word [w, w + n) */
static int plan_word(const char *w, size_t n, struct plan *p, uint32_t *seen, char *why, size_t len)
{
	const size_t plen = sizeof(PLAN_PREFIX) - 1;
	const char *eq = memchr(w, '=', n);
	char key[32], val[WLOPTS_SPEC_MAX + 1];
	size_t klen, vlen, i, max;

	klen = (size_t)((eq ? eq : w + n) - w) - plen;
	if (klen == 0 || klen >= sizeof(key))
		return err_why(why, len, "unknown key '%.*s'", (int)(n > 64 ? 64 : n), w);
	memcpy(key, w + plen, klen);
	key[klen] = '\0';
	for (i = 0; i < NKEYS; i++)
		if (!strcmp(plan_keys[i].name, key))
			break;
	if (i == NKEYS)
		return err_why(why, len, "unknown key '" PLAN_PREFIX "%s'", key);
	if (*seen & (1u << i))
		return err_why(why, len, PLAN_PREFIX "%s given twice", key);
	*seen |= 1u << i;
	if (!eq)
		return err_why(why, len, PLAN_PREFIX "%s needs a value", key);
	vlen = n - (size_t)(eq + 1 - w);
	max = plan_keys[i].max ? plan_keys[i].max : PLAN_VALUE_MAX;
	if (vlen == 0)
		return err_why(why, len, PLAN_PREFIX "%s: empty value", key);
	if (vlen > max)
		return err_why(why, len, PLAN_PREFIX "%s: value longer than %zu bytes", key, max);
	memcpy(val, eq + 1, vlen);
	val[vlen] = '\0';
	if (strchr(val, '"'))
		return err_why(why, len, PLAN_PREFIX "%s: quotes are not allowed", key);
	return plan_keys[i].set(val, p, key, why, len);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n';
}

int plan_parse(const char *cmdline, struct plan *out, char *why, size_t len)
{
	const size_t plen = sizeof(PLAN_PREFIX) - 1;
	const char *s = cmdline;
	uint32_t seen = 0;
	struct plan p;
	int r;

	plan_defaults(&p);
	*out = p;
	if (!cmdline)
		return err_why(why, len, "no command line");
	if (strnlen(cmdline, PLAN_CMDLINE_MAX + 1) > PLAN_CMDLINE_MAX)
		return err_why(why, len, "command line longer than %d bytes", PLAN_CMDLINE_MAX);
	for (;;) {
		const char *w;
		bool quoted = false;

		while (is_space(*s))
			s++;
		if (!*s)
			break;
		/* a word, as the kernel splits them: spaces inside "..." do not end it */
		w = s;
		while (*s && (quoted || !is_space(*s))) {
			if (*s == '"')
				quoted = !quoted;
			s++;
		}
		if ((size_t)(s - w) >= plen && !strncmp(w, PLAN_PREFIX, plen)) {
			r = plan_word(w, (size_t)(s - w), &p, &seen, why, len);
			if (r) {
				*out = p;	/* what was read before the error (the port name) */
				return r;
			}
		}
	}
	*out = p;
	if (!p.nworkloads || !p.workloads[0])
		return err_why(why, len, "no workloads");
	return 0;
}
