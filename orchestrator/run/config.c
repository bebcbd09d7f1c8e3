#include "orchestrator/run/config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "host/procfs.h"
#include "lib/parse.h"
#include "orchestrator/analysis/stopping.h"

ENUM_IMPL(host_state, HOST_STATE__COUNT, "fresh", "fragmented", "collapse-madvise",
	   "collapse-khugepaged");
ENUM_IMPL(balloon_arm, BALLOON__COUNT, "none", "reporting");
ENUM_IMPL(host_backing, HOST_BACKING__COUNT, "anonymous", "memfd", "hugetlbfs", "hugetlbfs-1g");
ENUM_IMPL(run_target, RUN_TARGET__COUNT, "guest", "host", "both");

void run_config_defaults(struct run_config *c)
{
	memset(c, 0, sizeof(*c));
	/* the KSM arm's own scan rate and wait (not options; journaled and recorded) */
	c->ksm_pages_to_scan = 2000;
	c->ksm_sleep_ms = 20;
	c->ksm_wait_ms = 60000;
}

int guests_fit(const char *proc_root, unsigned n, uint64_t memory, char *note, size_t len, struct err *e)
{
	uint64_t avail_kb, need, want;
	int r;

	r = meminfo_available_kb(proc_root, &avail_kb, e);
	if (r)
		return r;
	need = (uint64_t)n * (memory + GUEST_HOST_OVERHEAD);
	want = need + need / 10 + (512ull << 20);	/* 10% and 512M for the host itself */
	if (note)
		snprintf(note, len, "%u x (%llu MiB guest RAM + %llu MiB QEMU overhead) = %llu MiB, %llu MiB available",
			 n, (unsigned long long)(memory >> 20), (unsigned long long)(GUEST_HOST_OVERHEAD >> 20),
			 (unsigned long long)(need >> 20), (unsigned long long)(avail_kb >> 10));
	if (want > avail_kb * 1024)
		return err_set(e, -ENOMEM,
			       "%u guests need %llu MiB (%u x (%llu MiB RAM + %llu MiB QEMU overhead) + 10%% + 512 MiB for the host) but the host has %llu MiB available (MemAvailable): lower --guests or --memory, or free host memory",
			       n, (unsigned long long)(want >> 20), n, (unsigned long long)(memory >> 20),
			       (unsigned long long)(GUEST_HOST_OVERHEAD >> 20), (unsigned long long)(avail_kb >> 10));
	return 0;
}

int thp_list_parse(const char *s, bool sized, struct thp_setting *out, size_t max, size_t *n,
		   const char *what, struct err *e)
{
	char buf[256], *tok, *save = NULL;
	bool never = false;
	size_t k;

	*n = 0;
	if (strlen(s) >= sizeof(buf))
		return err_set(e, -EINVAL, "%s list too long (at most %zu bytes): %s", what, sizeof(buf) - 1, err_q(s));
	if (parse_list_check(s))
		return err_set(e, -EINVAL, "empty item in %s list: separate settings with "
			       "single commas (e.g. always,never): %s", what, err_q(s));
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		struct thp_setting t;
		bool dup = false;

		if (sized && thp_setting_parse(tok, &t))
			return err_set(e, -EINVAL,
				       "not a %s setting: use always, madvise, never or SIZE:MODE (e.g. 64K:always, a power of two >= 8K): %s", what, err_q(tok));
		if (!sized && (thp_setting_parse(tok, &t) || t.kb))
			return err_set(e, -EINVAL, "not a %s setting: use always, madvise or never: %s", what, err_q(tok));
		if (!t.kb && t.mode == THP_MODE_NEVER) {
			never = true;
			continue;
		}
		for (k = 0; k < *n; k++)
			dup |= thp_setting_equal(&out[k], &t);
		if (dup)
			continue;
		if (*n >= max)
			return err_set(e, -E2BIG, "too many %s settings", what);
		out[(*n)++] = t;
	}
	if (*n == 0 && !never)
		return err_set(e, -EINVAL, "empty %s list", what);
	return 0;
}

bool hugetlb_arm_kb(const char *name, uint64_t *kb)
{
	enum host_backing b;

	if (host_backing_parse(name, &b) || (b != BACKING_HUGETLBFS && b != BACKING_HUGETLBFS_1G))
		return false;
	*kb = b == BACKING_HUGETLBFS ? HUGETLB_2M_KB : HUGETLB_1G_KB;
	return true;
}

const char *hugetlb_arm_name(uint64_t kb)
{
	return kb == HUGETLB_2M_KB ? host_backing_name(BACKING_HUGETLBFS) :
	       kb == HUGETLB_1G_KB ? host_backing_name(BACKING_HUGETLBFS_1G) : NULL;
}

bool run_has_host_state(const struct run_config *c, enum host_state s)
{
	size_t i;

	for (i = 0; i < c->n_host_state; i++)
		if (c->host_state[i] == s)
			return true;
	return false;
}

/* --ksm with the rest: its arms boot N >= 2 guests of one image on a fresh host */
static int ksm_config_check(const struct run_config *c, struct err *e)
{
	if (!c->target_guest)
		return err_set(e, -EINVAL, "--ksm merges guest RAM: drop it with --target=host");
	if ((c->ksm & RUN_KSM_ON) && c->guests < 2)
		return err_set(e, -EINVAL, "--ksm=on merges the RAM of guests running together: give --guests=2 or more");
	if (c->n_emulator == 2 && c->ksm == (RUN_KSM_OFF | RUN_KSM_ON))
		return err_set(e, -EINVAL, "--ksm=off,on and --emulator=A,B are both A/B axes: run them apart");
	if (c->n_host_state != 1 || c->host_state[0] != HOST_FRESH)
		return err_set(e, -EINVAL, "--ksm runs on a fresh host: drop --host-state (or give --host-state=fresh)");
	if (c->n_hugetlb)
		return err_set(e, -EINVAL, "--ksm does not merge hugetlbfs guest RAM: drop hugetlbfs from --host-backing");
	return 0;
}

int ksm_list_parse(struct run_config *c, const char *arg, struct err *e)
{
	char buf[16], *tok, *save = NULL;
	unsigned bits = 0, b;

	if (strlen(arg) >= sizeof(buf) || parse_list_check(arg))
		return err_set(e, -EINVAL, "give off, on or off,on: %s", err_q(arg));
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "off"))
			b = RUN_KSM_OFF;
		else if (!strcmp(tok, "on"))
			b = RUN_KSM_ON;
		else
			return err_set(e, -EINVAL, "not a KSM arm: use off, on or off,on: %s", err_q(tok));
		if (bits & b)
			return err_set(e, -EINVAL, "'%s' given twice in --ksm: %s", tok, err_q(arg));
		bits |= b;
	}
	c->ksm = bits;
	return 0;
}

int run_config_check(struct run_config *c, struct err *e)
{
	uint64_t margin = 192ull << 20;	/* guest kernel, runner, page tables */
	unsigned i;

	for (i = 0; i < c->n_hugetlb; i++)
		if (c->memory % (c->hugetlb_kb[i] << 10))
			return err_set(e, -EINVAL, "--host-backing=%s backs guest RAM with %llu MiB pages: give "
				       "--memory in whole multiples of that (e.g. --memory=%lluM)",
				       hugetlb_arm_name(c->hugetlb_kb[i]), (unsigned long long)(c->hugetlb_kb[i] >> 10),
				       (unsigned long long)((c->memory + (c->hugetlb_kb[i] << 10) - 1) /
							    (c->hugetlb_kb[i] << 10) * (c->hugetlb_kb[i] >> 10)));

	if (c->ksm) {
		int r = ksm_config_check(c, e);

		if (r)
			return r;
	}
	if (c->n_emulator && !c->target_guest)
		return err_set(e, -EINVAL, "--emulator runs guests: drop it with --target=host");
	if ((c->khugepaged.set[KHP_PAGES_TO_SCAN] || c->khugepaged.set[KHP_SCAN_SLEEP_MS]) &&
	    !run_has_host_state(c, HOST_COLLAPSE_KHUGEPAGED))
		return err_set(e, -EINVAL, "--khugepaged sets khugepaged for the collapse-khugepaged arm: "
			       "add --host-state=collapse-khugepaged or drop --khugepaged");
	if ((c->n_balloon > 1 || c->balloon[0] != BALLOON_NONE) && !c->target_guest)
		return err_set(e, -EINVAL, "--balloon gives guests a balloon: drop it with --target=host");
	if (c->size + margin > c->memory)
		return err_set(e, -EINVAL,
			       "buffer of %llu MiB does not fit a guest of %llu MiB: raise --memory to at least %llu MiB or lower --size",
			       (unsigned long long)(c->size >> 20), (unsigned long long)(c->memory >> 20),
			       (unsigned long long)((c->size + margin) >> 20));
	if (!c->boots_set && !c->target_ci_set) {	/* the default: narrow the split within the budget */
		c->target_ci_host = RUN_TARGET_CI_HOST;
		c->target_ci_guest = RUN_TARGET_CI_GUEST;
		if (!c->budget_ms)
			c->budget_ms = RUN_BUDGET_MS;
	}
	if (c->target_ci_host == 0 && (c->budget_ms || c->max_reps_set))
		return err_set(e, -EINVAL, "--budget and --max-reps only apply with a CI target: "
			       "add --target-ci, or drop --boots for the default one");
	if (!c->max_reps_set)
		c->max_reps = c->reps * 50;	/* --boots's most: the budget or the target decides */
	if (c->target_ci_host > 0) {
		unsigned min_boots = c->boots > STOP_MIN_BOOTS ? c->boots : STOP_MIN_BOOTS;

		if (c->max_reps < c->reps * min_boots)
			return err_set(e, -EINVAL, "--max-reps %u is below --reps %u x %u boots (a CI target runs at "
				       "least %u): raise --max-reps to %u, or run exactly --boots with --target-ci=none",
				       c->max_reps, c->reps, min_boots, STOP_MIN_BOOTS, c->reps * min_boots);
	}
	return 0;
}
