/*
 * hostplan: host THP planning: which sizes the host offers, which knobs each group sets
 * (a plain value, or one SIZE:MODE alone), and the guest-side mTHP note.
 */
#include "orchestrator/run/hostplan.h"

#include <errno.h>
#include <string.h>

#include "lib/wlopts.h"
#include "orchestrator/run/note.h"


/*
 * Put the host THP setting of a group in place. A plain value sets 'enabled'
 * (and, in a run that also sets sizes, every size back to its value before the
 * run; 'never' turns every size off too). SIZE:MODE sets that size to MODE and
 * every other size and 'enabled' to never, so that the size is alone.
 */
int apply_host_thp(struct host_session *hs, const struct host_plan *hp, const struct thp_setting *t, struct err *e)
{
	char key[THP_KEY_MAX];
	size_t i;
	int r;

	if (t->kb) {
		for (i = 0; i < hp->nsizes; i++) {
			snprintf(key, sizeof(key), "hugepages-%ukB/enabled", hp->sizes[i]);
			r = host_session_set(hs, key, hp->sizes[i] == t->kb ? thp_mode_name(t->mode) : "never", e);
			if (r)
				return r;
		}
		return host_session_set(hs, "enabled", "never", e);
	}
	for (i = 0; hp->sized && i < hp->nsizes; i++) {
		const char *orig;

		snprintf(key, sizeof(key), "hugepages-%ukB/enabled", hp->sizes[i]);
		orig = thp_settings_get(hp->before, key);
		if (t->mode == THP_MODE_NEVER)
			orig = "never";
		if (orig && (r = host_session_set(hs, key, orig, e)))
			return r;
	}
	return host_session_set(hs, "enabled", thp_mode_name(t->mode), e);
}

/*
 * The workload options that are host knobs; "keep" leaves the knob alone.
 * (pgbench's shmem-thp is not one: --workload-opts cannot give it.)
 */
static const struct {
	const char *workload, *param, *knob;
} knob_opts[] = {
	{ "hzp", "zero-page", "use_zero_page" },
};

static const char *knob_of(const char *workload, const char *param)
{
	size_t i;

	for (i = 0; i < sizeof(knob_opts) / sizeof(knob_opts[0]); i++)
		if (!strcmp(knob_opts[i].workload, workload) && !strcmp(knob_opts[i].param, param))
			return knob_opts[i].knob;
	return NULL;
}

bool host_knob_opt(const char *workload, const char *arg)
{
	size_t i, n;

	for (i = 0; i < sizeof(knob_opts) / sizeof(knob_opts[0]); i++) {
		n = strlen(knob_opts[i].param);
		if (!strcmp(knob_opts[i].workload, workload) && !strncmp(arg, "--", 2) &&
		    !strncmp(arg + 2, knob_opts[i].param, n) && arg[2 + n] == '=')
			return true;
	}
	return false;
}

int host_knob_opts_set(struct host_session *hs, const char *spec, const char *workload, struct thp_settings *prev,
		       struct err *e)
{
	struct wlopt o[WLOPTS_MAX];
	char cur[THP_VAL_MAX], why[256];
	size_t n, i;
	int r;

	prev->n = 0;
	if (!spec || !spec[0])
		return 0;
	if (wlopts_parse(spec, o, WLOPTS_MAX, &n, why, sizeof(why)))
		return err_set(e, -EINVAL, "--workload-opts: %s", why);
	for (i = 0; i < n; i++) {
		const char *knob = strcmp(o[i].workload, workload) ? NULL : knob_of(workload, o[i].param);

		if (!knob || !strcmp(o[i].value, "keep"))
			continue;
		if ((r = thp_read_one(hs->root, knob, cur, sizeof(cur), e)) ||
		    (r = thp_settings_put(prev, knob, cur, e)) || (r = host_session_set(hs, knob, o[i].value, e)))
			return err_wrap(e, "%s:%s=%s on the bare host", workload, o[i].param, o[i].value);
	}
	return 0;
}

int host_knob_opts_restore(struct host_session *hs, const struct thp_settings *prev, struct err *e)
{
	size_t i;
	int r = 0;

	for (i = 0; i < prev->n; i++) {
		int ri = host_session_set(hs, prev->s[i].key, prev->s[i].value, e);

		r = r ? r : ri;
	}
	return r;
}

/* /proc for the memory checks: <sysfs-root>/proc when a test tree has one, else the host's */
void run_proc_root(const struct run_config *cfg, char *buf, size_t len)
{
	char p[PATH_MAX];

	snprintf(buf, len, "/proc");
	if (strcmp(cfg->sysfs_root, "/") && snprintf(p, sizeof(p), "%s/proc/meminfo", cfg->sysfs_root) < (int)sizeof(p) &&
	    access(p, R_OK) == 0 && strlen(p) - strlen("/meminfo") < len) {
		p[strlen(p) - strlen("/meminfo")] = '\0';
		strcpy(buf, p);
	}
}

/*
 * The host treatments: --host-thp, plus SIZE:always for every size the host
 * offers with --mthp-sweep. SIZE:MODE values must name a size this kernel
 * offers. Records what a guest-side sweep would need in the settings.
 */
int plan_host_thp(const struct run_config *cfg, struct results *res, struct host_plan *hp,
			 struct thp_setting *list, size_t *n, struct err *e)
{
	unsigned sizes[32];
	size_t ns = 0, i, k;
	char key[THP_KEY_MAX], offered[200] = "";
	int r;

	*n = 0;
	r = thp_sizes(cfg->sysfs_root, sizes, 32, &ns, e);
	if (r)
		return r;
	hp->nsizes = 0;
	for (i = 0; i < ns && hp->nsizes < 16; i++) {
		snprintf(key, sizeof(key), "hugepages-%ukB/enabled", sizes[i]);
		if (!thp_settings_get(&res->thp_before, key))
			continue;	/* shmem only */
		hp->sizes[hp->nsizes++] = sizes[i];
		run_append(offered, sizeof(offered), "%s%uK", offered[0] ? "," : "", sizes[i]);
	}
	for (i = 0; i < cfg->n_host_thp; i++) {
		const struct thp_setting *t = &cfg->host_thp[i];

		if (t->kb) {
			char name[THP_NAME_LEN] = "";
			bool have = false;

			for (k = 0; k < hp->nsizes; k++)
				have |= hp->sizes[k] == t->kb;
			if (!have) {
				thp_setting_format(t, name, sizeof(name));
				return err_set(e, -EOPNOTSUPP,
					       "host THP '%s': this host kernel offers no hugepages-%ukB/enabled (%s): use one of them",
					       name, t->kb, hp->nsizes ? offered : "no per-size mTHP before Linux 6.8");
			}
			hp->sized = true;
		}
		list[(*n)++] = *t;
	}
	if (!cfg->mthp_sweep)
		return 0;
	if (!hp->nsizes)
		return err_set(e, -EOPNOTSUPP,
			       "--mthp-sweep: this host kernel offers no per-size mTHP (no %s/hugepages-<N>kB/enabled; Linux 6.8+): drop --mthp-sweep",
			       THP_DIR);
	hp->sized = true;
	for (k = 0; k < hp->nsizes; k++) {
		const struct thp_setting v = { hp->sizes[k], THP_MODE_ALWAYS };
		bool dup = false;

		for (i = 0; i < *n; i++)
			dup |= thp_setting_equal(&list[i], &v);
		if (dup)
			continue;
		if (*n >= THP_LIST_MAX)
			return err_set(e, -E2BIG, "--mthp-sweep: %zu host settings plus %zu sizes are more than %d: shorten --host-thp",
				       cfg->n_host_thp, hp->nsizes, THP_LIST_MAX);
		list[(*n)++] = v;
	}
	return 0;
}

/* a guest-side mTHP sweep needs per-size knobs in the guest kernel: say what it offers */
void guest_mthp_note(const struct run_config *cfg, const struct run_io *io, struct results *res)
{
	size_t i;

	if (!cfg->mthp_sweep)
		return;
	for (i = 0; i < res->nguests; i++) {
		const struct guest_log *g = &res->guests[i];

		if (!g->mthp_sizes_kb[0])
			continue;
		if (!strcmp(g->mthp_sizes_kb, "none"))
			snprintf(res->settings.guest_mthp, sizeof(res->settings.guest_mthp),
				 "not offered by the guest kernel %s (no hugepages-<N>kB in its sysfs; Linux 6.8+): the sweep is host-side only",
				 g->guest_kernel);
		else
			snprintf(res->settings.guest_mthp, sizeof(res->settings.guest_mthp),
				 "the guest kernel %s offers %s kB; this version sweeps the host sizes only", g->guest_kernel,
				 g->mthp_sizes_kb);
		run_note(io, "guest-side mTHP sweep: %s", res->settings.guest_mthp);
		return;
	}
}
