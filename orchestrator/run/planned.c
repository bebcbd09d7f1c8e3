/*
 * planned: pure questions about the run configuration that the files of the
 * run loop ask: which guest settings and workloads this run plans, and the
 * per-guest time limit that follows. No I/O.
 */
#include "orchestrator/run/planned.h"

#include <string.h>

#include "orchestrator/run/balloon.h"

/* guest settings of this run: never + the treatments (s as a guest's record names it) */
bool guest_thp_planned(const struct run_config *cfg, const char *s)
{
	struct thp_setting t;
	size_t i;

	if (thp_setting_parse(s, &t))
		return false;
	if (!t.kb && t.mode == THP_MODE_NEVER)
		return true;
	for (i = 0; i < cfg->n_guest_thp; i++)
		if (thp_setting_equal(&cfg->guest_thp[i], &t))
			return true;
	return false;
}

bool workload_planned(const struct run_config *cfg, const char *w)
{
	size_t i;

	for (i = 0; i < cfg->n_wl; i++)
		if (!strcmp(w, cfg->wl[i]))
			return true;
	return false;
}

/* a planned workload takes --src: it reads the kernel source disk */
bool srcdisk_planned(const struct run_config *cfg)
{
	size_t w;

	for (w = 0; w < cfg->n_wl; w++) {
		const struct workload_info *wi = workload_find(cfg->wl_info, cfg->n_wl_info, cfg->wl[w]);

		if (wi && wi->has_src)
			return true;
	}
	return false;
}

/*
 * The per-guest limit: --timeout for everything, plus, for each planned
 * workload with a run limit of its own (a timeout parameter: kcompile's
 * build, exec's command), that limit for every run the guest makes of it
 * (each round, each guest THP setting).
 */
uint64_t guest_timeout_ms(const struct run_config *cfg)
{
	uint64_t runs = (uint64_t)(cfg->warmup + cfg->reps) * (1 + cfg->n_guest_thp), ms = cfg->timeout_ms;
	size_t w;

	for (w = 0; w < cfg->n_wl; w++) {
		const struct workload_info *wi = workload_find(cfg->wl_info, cfg->n_wl_info, cfg->wl[w]);

		if (wi)
			ms += runs * workload_run_limit_ms(cfg->wl_opts, wi);
	}
	return ms + (balloon_planned(cfg) ? runs * BALLOON_WAIT_MS : 0);	/* memset's re-fault waits */
}
