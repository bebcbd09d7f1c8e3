/*
 * thppolicy: what the guest tests expect of THP on the machine they run on,
 * worked out at run time from a sysfs root ("" on a real system): the
 * effective PMD-size policy for anonymous memory and for shmem/memfd (the
 * per-size hugepages-<PMD>kB knob unless it says 'inherit', then the
 * top-level one; shmem's top-level 'deny' and 'force' override both), larger
 * mTHP sizes that are in effect, whether this process may have THP at all,
 * and /proc/vmstat counters. Header-only, static functions; never fails a
 * test itself: a knob that is absent reads as "".
 */
#ifndef THPEVAL_TESTS_GUEST_THPPOLICY_H
#define THPEVAL_TESTS_GUEST_THPPOLICY_H

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TP_FN static __attribute__((unused))
#define TP_DIR "/sys/kernel/mm/transparent_hugepage"

/* An effective policy: its value and, for messages, the knobs it came from. */
struct tp_policy {
	char value[32];		/* always, madvise/advise, within_size, never, deny, force; "" if no THP */
	char why[160];		/* "hugepages-2048kB/enabled 'inherit' -> enabled 'madvise'" */
};

/* The [selected] word of <root>TP_DIR/<rel> into out; "" when absent or not one choice. */
TP_FN const char *tp_knob(const char *root, const char *rel, char *out, size_t len)
{
	char path[512], text[256];
	const char *open, *close;
	size_t n = 0;
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s" TP_DIR "/%s", root, rel);
	f = fopen(path, "re");
	if (!f)
		return out;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	open = strchr(text, '[');
	close = open ? strchr(open, ']') : NULL;
	if (open && close && (size_t)(close - open - 1) < len) {
		memcpy(out, open + 1, (size_t)(close - open - 1));
		out[close - open - 1] = '\0';
	}
	return out;
}

/* hpage_pmd_size in kB (2048 on x86), 0 when the kernel does not say */
TP_FN unsigned long tp_pmd_kb(const char *root)
{
	char path[512];
	unsigned long long b = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s" TP_DIR "/hpage_pmd_size", root);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &b) != 1)
		b = 0;
	fclose(f);
	return (unsigned long)(b / 1024);
}

/*
 * One size's policy: hugepages-<kb>kB/<knob> unless absent or 'inherit',
 * else the top-level knob (anon: "enabled", shmem: "shmem_enabled").
 */
TP_FN void tp_size_policy(const char *root, unsigned long kb, const char *knob, struct tp_policy *p)
{
	char rel[96], per[32], top[32];

	snprintf(rel, sizeof(rel), "hugepages-%lukB/%s", kb, knob);
	tp_knob(root, rel, per, sizeof(per));
	tp_knob(root, knob, top, sizeof(top));
	if (per[0] && strcmp(per, "inherit")) {
		snprintf(p->value, sizeof(p->value), "%s", per);
		snprintf(p->why, sizeof(p->why), "%s '%s'", rel, per);
	} else if (per[0]) {
		snprintf(p->value, sizeof(p->value), "%s", top);
		snprintf(p->why, sizeof(p->why), "%s 'inherit' -> %s '%s'", rel, knob, top);
	} else {
		snprintf(p->value, sizeof(p->value), "%s", top);
		snprintf(p->why, sizeof(p->why), "%s '%s'", knob, top);
	}
}

/* the effective PMD-size policy for anonymous memory */
TP_FN void tp_anon_pmd(const char *root, struct tp_policy *p)
{
	tp_size_policy(root, tp_pmd_kb(root) ? tp_pmd_kb(root) : 2048, "enabled", p);
}

/*
 * The effective PMD-size policy for shmem (memfd, MAP_SHARED|MAP_ANONYMOUS):
 * top-level 'deny' and 'force' decide alone; else the per-size knob unless
 * 'inherit', then the top-level one.
 */
TP_FN void tp_shmem_pmd(const char *root, struct tp_policy *p)
{
	char top[32];

	tp_knob(root, "shmem_enabled", top, sizeof(top));
	if (!strcmp(top, "deny") || !strcmp(top, "force")) {
		snprintf(p->value, sizeof(p->value), "%s", top);
		snprintf(p->why, sizeof(p->why), "shmem_enabled '%s'", top);
		return;
	}
	tp_size_policy(root, tp_pmd_kb(root) ? tp_pmd_kb(root) : 2048, "shmem_enabled", p);
}

/*
 * Whether the policy lets a fault allocate a huge page in a mapping that was
 * (madvised) or was not given MADV_HUGEPAGE. within_size counts as allowed:
 * the tests' buffers are whole multiples of the size.
 */
TP_FN bool tp_allows(const struct tp_policy *p, bool madvised)
{
	const char *v = p->value;

	if (!strcmp(v, "always") || !strcmp(v, "within_size") || !strcmp(v, "force"))
		return true;
	return madvised && (!strcmp(v, "madvise") || !strcmp(v, "advise"));
}

/*
 * An anonymous mTHP size from min_kb up to (not including) the PMD size that
 * a madvised mapping may get here; its policy in p. false when none is.
 */
TP_FN bool tp_anon_mthp_from(const char *root, unsigned long min_kb, unsigned long *kb,
			     struct tp_policy *p)
{
	unsigned long pmd = tp_pmd_kb(root), k, best = 0;
	char path[512];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "%s" TP_DIR, root);
	dir = opendir(path);
	if (!dir)
		return false;
	while ((d = readdir(dir))) {
		char tail[8];

		if (sscanf(d->d_name, "hugepages-%lukB%7s", &k, tail) != 1 || k < min_kb ||
		    (pmd && k >= pmd))
			continue;
		tp_size_policy(root, k, "enabled", p);
		if (tp_allows(p, true) && (!best || k < best))
			best = k;
	}
	closedir(dir);
	if (best) {
		tp_size_policy(root, best, "enabled", p);
		*kb = best;
	}
	return best != 0;
}

/* "THP_enabled: 0" in /proc/self/status: prctl(PR_SET_THP_DISABLE) is on for this process */
TP_FN bool tp_self_thp_disabled(void)
{
	char line[128];
	int v = 1;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "THP_enabled: %d", &v) == 1)
			break;
	fclose(f);
	return v == 0;
}

/* a /proc/vmstat counter, or -1 when the kernel has none by that name */
TP_FN long long tp_vmstat(const char *name)
{
	char line[160], key[128];
	long long v, found = -1;
	FILE *f = fopen("/proc/vmstat", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%127s %lld", key, &v) == 2 && !strcmp(key, name)) {
			found = v;
			break;
		}
	fclose(f);
	return found;
}

#endif
