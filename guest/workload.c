#include "workload.h"

#include <stddef.h>
#include <string.h>

const struct wl_param wl_common_params[] = {
	{ "rep", WL_P_U64, offsetof(struct wl_common, rep), "0", 0, 1000000,
	  "repetition index, recorded" },
	{ "warmup", WL_P_BOOL, offsetof(struct wl_common, warmup), "0", 0, 1,
	  "1 if this repetition is a warm-up, recorded" },
	{ "seed", WL_P_U64, offsetof(struct wl_common, seed), "1", 0, UINT64_MAX,
	  "seed of the workload's pseudo-random choices" },
	{ NULL, WL_P_U64, 0, NULL, 0, 0, NULL },
};

const struct wl_metric wl_common_fields[] = {
	{ "workload", "workload name" },
	{ "rep", "repetition index" },
	{ "warmup", "1 for a warm-up repetition" },
	{ "seed", "seed of the pseudo-random choices" },
	{ "thp_enabled", "THP 'enabled' setting when the workload ran, or unsupported" },
	{ "thp_defrag", "THP 'defrag' setting when the workload ran, or unsupported" },
	{ NULL, NULL },
};

const struct wl_param *wl_param_find(const struct wl_param *t, const char *name)
{
	for (; t && t->name; t++)
		if (!strcmp(t->name, name))
			return t;
	return NULL;
}

const struct wl_param *workload_param(const struct workload *w, const char *name)
{
	const struct wl_param *p = wl_param_find(w->params, name);

	return p ? p : wl_param_find(wl_common_params, name);
}

bool workload_has_field(const struct workload *w, const char *key)
{
	const struct wl_metric *m;

	for (m = wl_common_fields; m->key; m++)
		if (!strcmp(m->key, key))
			return true;
	for (m = w->metrics; m && m->key; m++)
		if (!strcmp(m->key, key))
			return true;
	return false;
}
