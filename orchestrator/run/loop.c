#include "orchestrator/run/internal.h"
#include "orchestrator/analysis/abtest.h"
#include "orchestrator/analysis/stopping.h"

#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "lib/fstree.h"
#include "orchestrator/model/results_json.h"
#include "lib/wltraits.h"
#include "orchestrator/run/abaxis.h"
#include "orchestrator/run/migrate.h"
#include "orchestrator/run/balloon.h"
#include "orchestrator/run/progress.h"
#include "orchestrator/run/arms.h"
#include "orchestrator/run/bare.h"
#include "orchestrator/run/guests.h"
#include "orchestrator/run/hostplan.h"
#include "orchestrator/run/ksm.h"
#include "orchestrator/run/note.h"
#include "orchestrator/run/planned.h"
#include "orchestrator/run/records.h"
#include "orchestrator/run/recovery.h"
#include "orchestrator/run/telemetry.h"

static void image_line(void *opaque, const char *msg)
{
	FILE *out = opaque;

	if (out) {
		fprintf(out, "thpeval: %s\n", msg);
		fflush(out);
	}
}

static void *io_progress_opaque(const struct run_io *io)
{
	return io->progress;
}

/* Fisher-Yates with splitmix64: the order is reproducible from the recorded seed */
static void shuffle_groups(struct host_group *g, size_t n, uint64_t seed)
{
	size_t i;

	for (i = n; i > 1; i--) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
		struct host_group t;
		size_t j;

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		j = (size_t)(z % i);
		t = g[i - 1];
		g[i - 1] = g[j];
		g[j] = t;
	}
}

static void reverse_groups(struct host_group *g, size_t n)
{
	size_t i;

	for (i = 0; i < n / 2; i++) {
		struct host_group t = g[i];

		g[i] = g[n - 1 - i];
		g[n - 1 - i] = t;
	}
}

/* "host tlb (guest never) access_ns": which effect a stopping message is about */
static void effect_name(const struct results *res, int idx, char *buf, size_t len)
{
	const struct effect *e = idx >= 0 ? &res->effects->e[idx] : NULL;

	if (e)
		snprintf(buf, len, "%s %s%s%s%s %s", e->side, e->component, e->at_guest[0] ? " (guest " : "",
			 e->at_guest, e->at_guest[0] ? ")" : "", e->metric);
	else
		snprintf(buf, len, "none");
}

static bool was_not_chased(const struct run_settings *s, const char *name)
{
	size_t i;

	for (i = 0; i < s->nnot_chased; i++)
		if (!strcmp(s->not_chased[i].effect, name))
			return true;
	return false;
}

/* the effects out of reach into results.json; each one said once, when it is first given up */
static void note_far(const struct run_io *io, struct results *res, const struct stop_gap *g)
{
	struct run_settings *s = &res->settings;
	size_t i;

	for (i = 0; i < g->nfar; i++) {
		const struct stop_far *f = &g->far[i];
		struct not_chased *nc;
		char name[160];

		effect_name(res, f->effect, name, sizeof(name));
		if (was_not_chased(s, name) || s->nnot_chased >= RES_NOT_CHASED_MAX)
			continue;
		nc = &s->not_chased[s->nnot_chased++];
		snprintf(nc->effect, sizeof(nc->effect), "%s", name);
		nc->target_pct = f->target;
		nc->boots_needed = f->need;
		nc->boots_allowed = g->allowed;
		run_note(io, "%s: %s%u boots for +/-%.3g points, the budget allows %u: not chased", name,
			 f->need > STOP_BOOTS_CAP ? "more than " : "about ",
			 f->need > STOP_BOOTS_CAP ? STOP_BOOTS_CAP : f->need, f->target, g->allowed);
	}
}

/* --boots, then the CI target: another round while a split effect's interval is wider than asked */
static bool more_rounds(const struct run_config *cfg, const struct run_io *io, struct results *res,
			unsigned rounds_done, double elapsed_s)
{
	const struct stop_params sp = { cfg->boots, cfg->reps, cfg->target_ci_host, cfg->target_ci_guest,
					cfg->max_reps, cfg->budget_ms };
	struct stop_gap g;
	enum stop_verdict v;
	char name[160];

	if (rounds_done >= stop_min_rounds(&sp) && cfg->target_ci_host > 0) {
		struct err e = ERR_INIT;

		results_finish(res, cfg->min_coverage);
		if (effects_attach(res, &e))
			run_note(io, "warning: %s", e.msg);
	}
	v = stop_decide(res->effects, &sp, rounds_done, elapsed_s, &g);
	if (v != STOP_BOOTS && v != STOP_MORE && v != STOP_NO_EFFECT)
		snprintf(res->settings.stopped, sizeof(res->settings.stopped), "%s", stop_verdict_name(v));
	res->settings.stopped_at_minimum = g.at_minimum;
	note_far(io, res, &g);
	effect_name(res, g.effect, name, sizeof(name));
	switch (v) {
	case STOP_BOOTS:
		return true;
	case STOP_FIXED:
		return false;
	case STOP_NO_TARGETS:
		run_note(io, "no split effect in these workloads to narrow: %u rounds", rounds_done);
		return false;
	case STOP_TARGET_MET:
	case STOP_REACHABLE_MET:
		run_note(io, "every %ssplit effect's 95%% CI is within its target (host-side %.1f, guest-side %.1f "
			 "points) after %u rounds%s; closest: %s, %.2f of %.1f", v == STOP_REACHABLE_MET ?
			 "chased " : "", cfg->target_ci_host, cfg->target_ci_guest, rounds_done,
			 g.at_minimum ? " (the minimum)" : "", name, g.half, g.target);
		if (g.unavailable)
			run_note(io, "%zu targeted effect(s) not available, so not judged: the split says why",
				 g.unavailable);
		return false;
	case STOP_MAX_REPS:
		run_note(io, "%s: 95%% CI half-width %.2f points > target %.1f, but --max-reps %u is reached; "
			 "the results say so", name, g.half, g.target, cfg->max_reps);
		return false;
	case STOP_BUDGET:
		run_note(io, "%s: 95%% CI half-width %.2f points > target %.1f, but another round would end past "
			 "the %llu s budget; the results say so", name, g.half, g.target,
			 (unsigned long long)(cfg->budget_ms / 1000));
		return false;
	case STOP_NO_EFFECT:
		run_note(io, "no split effect is available yet: another round");
		return true;
	case STOP_MORE:
		break;
	}
	run_note(io, "%s: 95%% CI half-width %.2f points > target %.1f (about %u boots): another round", name,
		 g.half, g.target, g.need);
	return true;
}

static void save_partial(struct results *res, const struct run_config *cfg, const char *path)
{
	struct err e = ERR_INIT;

	results_finish(res, cfg->min_coverage);
	if (effects_attach(res, &e) || abtest_attach(res, &e) || results_write_json(res, path, &e))
		fprintf(stderr, "thpeval: warning: %s\n", e.msg);
}

/* the host baseline every treatment is compared with */
static const struct thp_setting host_never = { 0, THP_MODE_NEVER };

/* what one run's steps share, from the settings echo to the host restored */
struct run_state {
	const struct run_config *cfg;
	const struct run_io *io;
	struct results *res;
	const char *json_path;
	struct host_session hs;
	bool session;
	struct host_plan hp;
	struct thp_setting hthp[THP_LIST_MAX];	/* host treatments: --host-thp + the sweep's sizes */
	size_t nh;
	/* host state x balloon x A/B arm x host setting x allocation */
	struct host_group groups[HOST_STATE__COUNT * BALLOON__COUNT * 2 * (THP_LIST_MAX + 1 + HUGETLB_ARMS) *
				 PREFAULT__COUNT];
	size_t ngroups;
	bool kc;			/* a workload reads the kernel source disk (kcompile) */
	struct srcdisk sd;
	struct image img;
	struct virt *v;
	enum accel accel;
	char pool_orig[32];		/* the pool before a hugetlbfs arm reserved it */
	uint64_t pool_kb;		/* that pool's page size */
	unsigned idx;			/* guests booted so far */
};

/* the configuration as results.json echoes it */
static void echo_settings(const struct run_config *cfg, struct results *res)
{
	struct run_settings *s = &res->settings;
	int pins[64];
	size_t i;

	s->reps = cfg->reps;
	s->boots = cfg->boots;
	s->warmup = cfg->warmup;
	s->cold_reps = cfg->cold_reps;
	s->vcpus = cfg->vcpus;
	s->memory_bytes = cfg->memory;
	s->size_bytes = cfg->size;
	s->accesses = cfg->accesses;
	s->seed = cfg->seed;
	s->min_coverage_pct = cfg->min_coverage;
	snprintf(s->uri, sizeof(s->uri), "%s", cfg->uri);
	snprintf(s->workloads, sizeof(s->workloads), "%s", cfg->workloads);
	snprintf(s->host_thp_list, sizeof(s->host_thp_list), "never");
	for (i = 0; i < cfg->n_prefault; i++)
		run_append(s->prefault_list, sizeof(s->prefault_list), "%s%s", i ? "," : "",
			   prefault_name(cfg->prefault[i]));
	s->target_ci_host = cfg->target_ci_host;
	s->target_ci_guest = cfg->target_ci_guest;
	s->budget_s = (double)cfg->budget_ms / 1000;
	s->guests = cfg->guests ? cfg->guests : 1;
	if (!cfg->pin)
		snprintf(s->pin, sizeof(s->pin), "none: the host scheduler places them");
	else if (guest_pins(cfg, 0, s->guests, pins) && s->guests * cfg->vcpus == 1)
		snprintf(s->pin, sizeof(s->pin), "auto: QEMU's other threads on CPU 0, the vCPU on CPU 1");
	else if (guest_pins(cfg, 0, s->guests, pins))
		snprintf(s->pin, sizeof(s->pin), "auto: QEMU's other threads on CPU 0, the vCPUs on CPUs 1-%u",
			 s->guests * cfg->vcpus);
	else
		snprintf(s->pin, sizeof(s->pin), "auto: not pinned: %u guest(s) x %u vCPU(s) + 1 is more than the "
			 "host's %ld CPUs", s->guests, cfg->vcpus, sysconf(_SC_NPROCESSORS_ONLN));
	s->mthp_sweep = cfg->mthp_sweep;
	for (i = 0; i < cfg->n_host_state; i++)
		run_append(s->host_state_list, sizeof(s->host_state_list), "%s%s", i ? "," : "",
			   host_state_name(cfg->host_state[i]));
	snprintf(s->backing, sizeof(s->backing), "%s", cfg->memfd ? "memfd" : "anonymous");
	for (i = 0; i < cfg->n_hugetlb; i++) {
		run_append(s->backing, sizeof(s->backing), ",%s", hugetlb_arm_name(cfg->hugetlb_kb[i]));
		run_append(s->host_thp_list, sizeof(s->host_thp_list), ",%s", hugetlb_arm_name(cfg->hugetlb_kb[i]));
	}
	snprintf(s->guest_thp_list, sizeof(s->guest_thp_list), "never");
	for (i = 0; i < cfg->n_guest_thp; i++)
		run_append(s->guest_thp_list, sizeof(s->guest_thp_list), ",%s", thp_mode_name(cfg->guest_thp[i].mode));
	ab_echo(cfg, res);
	balloon_echo(cfg, res);
}

/* the host as found: its THP support, the settings to evaluate, room for the guests */
static int check_host(struct run_state *st, struct err *e)
{
	const struct run_config *cfg = st->cfg;
	struct results *res = st->res;
	size_t i;
	int r;

	r = host_info_read("/proc", &res->host, e);
	if (!r)
		r = ksm_prepare(cfg, res, e);
	if (r)
		return r;
	{
		struct err ne = ERR_INIT;

		if (host_nested_read(cfg->sysfs_root, &res->host, &ne))
			run_note(st->io, "warning: %s: not knowing whether this host reports free memory to a "
				 "hypervisor", ne.msg);
	}
	r = thp_settings_read(cfg->sysfs_root, &res->thp_before, e);
	if (r)
		return r;
	if (!thp_settings_get(&res->thp_before, "enabled"))
		return err_set(e, -EOPNOTSUPP, "this host kernel has no transparent hugepage support (%s%s missing)",
			       cfg->sysfs_root, THP_DIR);
	r = plan_host_thp(cfg, res, &st->hp, st->hthp, &st->nh, e);
	if (r)
		return r;
	for (i = 0; i < st->nh; i++) {
		char name[THP_NAME_LEN] = "";

		thp_setting_format(&st->hthp[i], name, sizeof(name));
		run_append(res->settings.host_thp_list, sizeof(res->settings.host_thp_list), ",%s", name);
	}
	if (cfg->target_guest) {
		char proc[PATH_MAX], note[200];

		run_proc_root(cfg, proc, sizeof(proc));
		r = guests_fit(proc, cfg->guests ? cfg->guests : 1, cfg->memory, note, sizeof(note), e);
		if (r)
			return r;
		if (cfg->guests > 1)
			run_note(st->io, "memory for %u guests: %s", cfg->guests, note);
		for (i = 0; i < cfg->n_hugetlb; i++)
			if ((r = hugetlb_arm_check(cfg, cfg->hugetlb_kb[i], e)))
				return r;
		if ((r = recovery_check_host(cfg, e)))
			return r;
	}
	return 0;
}

/* kcompile's kernel source: a read-only disk for guests, its tree for the host */
static int prepare_source(struct run_state *st, struct err *e)
{
	struct srcdisk_opts so = { 0 };
	bool built = false;
	int r;

	so.cache_dir = st->cfg->cache_dir;
	so.progress = image_line;
	so.opaque = io_progress_opaque(st->io);
	r = srcdisk_ensure(&so, &st->sd, &built, e);
	if (r)
		return r;
	run_note(st->io, "kernel source disk %s (%s, %s %s)", st->sd.id, built ? "built" : "cached", SRCDISK_PACKAGE,
		 st->sd.version);
	snprintf(st->res->settings.srcdisk_id, sizeof(st->res->settings.srcdisk_id), "%s", st->sd.id);
	return 0;
}

/*
 * The packages the guest image adds, NULL-terminated in out (max entries):
 * kcompile's toolchain, and each planned workload's (lib/wltraits: redis,
 * PostgreSQL); the image build drops duplicates
 */
static void image_packages(const struct run_state *st, const char **out, size_t max)
{
	const char *const *p;
	size_t n = 0, w;

	for (p = st->kc ? srcdisk_toolchain_packages : NULL; p && *p && n + 1 < max; p++)
		out[n++] = *p;
	for (w = 0; w < st->cfg->n_wl; w++)
		for (p = wltraits_packages(st->cfg->wl[w]); p && *p && n + 1 < max; p++)
			out[n++] = *p;
	out[n] = NULL;
}

/*
 * Remove the guests of killed thpeval runs: at the start, and again at the end.
 * The run after a SIGKILL (integration/run.sh, under ASan) found the killed
 * run's guest still running after its own end when it looked only at its
 * start; why libvirtd lists that guest so late is not known.
 */
static void reap_dead_runs(struct run_state *st)
{
	struct err e = ERR_INIT;
	int reaped = 0;

	if (!st->v)
		return;
	if (virt_reap_stale(st->v, &reaped, &e))
		run_note(st->io, "warning: guests left by killed thpeval runs: %s", e.msg);
	if (reaped)
		run_note(st->io, "removed %d guest(s) left by a killed thpeval run", reaped);
}

/* libvirt, the accelerator and the guest image (or "none" for a bare-host run) */
static int prepare_guests(struct run_state *st, struct err *e)
{
	const struct run_config *cfg = st->cfg;
	struct results *res = st->res;
	struct image_opts io_img = { 0 };
	const char *user_pkgs[IMAGE_PKGS_MAX + 1];
	const char *pkgs[64];
	bool built = false;
	size_t i;
	int r;

	if (!cfg->target_guest) {
		snprintf(res->accel, sizeof(res->accel), "none");
		snprintf(res->accel_reason, sizeof(res->accel_reason), "bare host only (--target=host)");
		return 0;
	}
	r = virt_open(cfg->uri, &st->v, e);
	if (r)
		return r;
	virt_versions(st->v, res->libvirt_version, sizeof(res->libvirt_version), res->hypervisor_version,
		      sizeof(res->hypervisor_version), NULL);
	r = virt_accel_choose(st->v, cfg->accel, "/proc/cpuinfo", &st->accel, res->accel_reason,
			      sizeof(res->accel_reason), e);
	if (r)
		return r;
	snprintf(res->accel, sizeof(res->accel), "%s", accel_name(st->accel));
	run_note(st->io, "accelerator: %s (%s)", res->accel, res->accel_reason);
	r = balloon_check(cfg, st->v, res->libvirt_version, e);
	if (r)
		return r;
	reap_dead_runs(st);

	/* the image build can take a minute with no libvirt event loop running:
	 * the daemon's keepalive would drop the connection, so reconnect after it */
	virt_close(st->v);
	st->v = NULL;
	io_img.cache_dir = cfg->cache_dir;
	io_img.kernel = cfg->kernel[0] ? cfg->kernel : NULL;
	io_img.guest_bin = cfg->guest_bin;
	/* kcompile guests need the toolchain in the root, applications their packages, and the
	 * user's own packages: another image */
	image_packages(st, pkgs, sizeof(pkgs) / sizeof(pkgs[0]));
	io_img.extra_packages = pkgs[0] ? pkgs : NULL;
	for (i = 0; i < cfg->n_image_pkgs; i++)
		user_pkgs[i] = cfg->image_pkgs[i];
	user_pkgs[cfg->n_image_pkgs] = NULL;
	io_img.user_packages = cfg->n_image_pkgs ? user_pkgs : NULL;
	io_img.progress = image_line;
	io_img.opaque = io_progress_opaque(st->io);
	r = image_ensure(&io_img, &st->img, &built, e);
	if (r)
		return r;
	snprintf(res->image_id, sizeof(res->image_id), "%s", st->img.id);
	r = virt_open(cfg->uri, &st->v, e);
	if (r)
		return r;
	run_note(st->io, "guest image %s (%s, kernel %s)", st->img.id, built ? "built" : "cached",
		 st->img.kernel_version);
	return 0;
}

/*
 * host groups: host state x balloon x A/B arm x allocation mode x (never, each
 * treatment, the hugetlbfs arms)
 */
static void build_groups(struct run_state *st)
{
	const struct run_config *cfg = st->cfg;
	size_t i, p, s, b;
	unsigned a;

	st->ngroups = 0;
	for (s = 0; s < cfg->n_host_state; s++)
		for (b = 0; b < cfg->n_balloon; b++)
		for (a = 0; a < ab_arms(cfg); a++)
		for (p = 0; p < cfg->n_prefault; p++)
			for (i = 0; i <= st->nh + cfg->n_hugetlb; i++) {
				struct host_group *g;

				/* hugetlbfs guest RAM has nothing to collapse */
				if (i > st->nh && (cfg->host_state[s] == HOST_COLLAPSE_MADVISE ||
						   cfg->host_state[s] == HOST_COLLAPSE_KHUGEPAGED))
					continue;
				/* the reporting arm: anonymous or memfd guest RAM on a fresh or fragmented host */
				if (cfg->balloon[b] == BALLOON_REPORTING &&
				    (i > st->nh || (cfg->host_state[s] != HOST_FRESH && cfg->host_state[s] != HOST_FRAGMENTED)))
					continue;
				g = &st->groups[st->ngroups++];
				g->arm = a;
				g->hugetlb_kb = i > st->nh ? cfg->hugetlb_kb[i - st->nh - 1] : 0;
				/* a hugetlbfs arm: THP off (guest RAM is hugetlb) */
				g->thp = i == 0 || g->hugetlb_kb ? host_never : st->hthp[i - 1];
				if (g->hugetlb_kb)
					snprintf(g->host_thp, sizeof(g->host_thp), "%s", hugetlb_arm_name(g->hugetlb_kb));
				else
					thp_setting_format(&g->thp, g->host_thp, sizeof(g->host_thp));
				g->prefault = cfg->prefault[p];
				g->host_state = cfg->host_state[s];
				g->balloon = cfg->balloon[b];
			}
}

/* put a group's host in place: fragmented first where asked, then its THP setting or pool */
static int group_enter(struct run_state *st, const struct host_group *hg, unsigned round, struct frag *fr,
		       struct frag_log **fl, struct err *e)
{
	int r;

	if (hg->host_state == HOST_FRAGMENTED) {
		*fl = results_frag_add(st->res, e);
		if (!*fl)
			return e->code;
		/* fragmenting takes a while with no libvirt event loop running: the
		 * daemon's keepalive would drop the connection, so reconnect after it */
		virt_close(st->v);
		st->v = NULL;
		r = fragment_host(st->cfg, st->io, &st->hs, &st->hp, hg, round, fr, *fl, e);
		if (!r)
			r = virt_open(st->cfg->uri, &st->v, e);
		if (r)
			return r;
	}
	/* a hugetlbfs arm: THP off (its thp is never), the pool reserved; a recovery
	 * arm boots on never, its setting goes in after the series (recovery.c) */
	r = apply_host_thp(&st->hs, &st->hp, hg->host_state == HOST_COLLAPSE_MADVISE ||
			   hg->host_state == HOST_COLLAPSE_KHUGEPAGED ? &host_never : &hg->thp, e);
	if (!r)
		r = ksm_group_enter(&st->hs, st->cfg, hg, e);
	if (!r && hg->hugetlb_kb) {
		st->pool_kb = hg->hugetlb_kb;
		r = pool_reserve(&st->hs, st->cfg, hg->hugetlb_kb, st->pool_orig, sizeof(st->pool_orig), e);
	}
	return r;
}

/* after a group: the pool released and the fragmenter undone, each as soon as it can be */
static int group_leave(struct run_state *st, struct frag *fr, struct frag_log *fl, const struct vmstat *vm0,
		       struct err *e)
{
	if (st->pool_orig[0]) {
		struct err pe = ERR_INIT;	/* release the pool now; the journal has it too */

		char key[64];

		pool_key(key, sizeof(key), st->pool_kb);
		if (host_session_set(&st->hs, key, st->pool_orig, &pe))
			run_note(st->io, "warning: %s", pe.msg);
		st->pool_orig[0] = '\0';
	}
	if (fl && vm0)
		frag_vmstat(fl, vm0);
	if (fr->pid) {
		/* the undo (compact_memory) takes a while too */
		virt_close(st->v);
		st->v = NULL;
		frag_undo(st->io, &st->hs, fr, fl);
		if (virt_open(st->cfg->uri, &st->v, e))
			return e->code;
	} else if (fl) {
		frag_undo(st->io, &st->hs, fr, fl);	/* the holder died: the knob still goes back */
	}
	return 0;
}

/* one host group of one round: its host in place, its guests booted and run, its host undone */
static int run_group(struct run_state *st, size_t i, unsigned round, struct err *e)
{
	const struct host_group *hg = &st->groups[i];
	const struct run_io *io = st->io;
	struct results *res = st->res;
	struct err ge = ERR_INIT;
	struct frag_log *fl = NULL;
	struct recovery rc;
	struct frag fr;
	struct vmstat vm0;
	bool have_vm0;
	int r;

	memset(&fr, 0, sizeof(fr));
	run_append(res->settings.group_order, sizeof(res->settings.group_order), "%s%u:%s/%s%s%s%s%s%s%s",
		   res->settings.group_order[0] ? " " : "", round, hg->host_thp, prefault_name(hg->prefault),
		   hg->host_state != HOST_FRESH ? "/" : "", hg->host_state != HOST_FRESH ? host_state_name(hg->host_state) : "",
		   hg->balloon != BALLOON_NONE ? "+" : "", hg->balloon != BALLOON_NONE ? balloon_arm_name(hg->balloon) : "",
		   ab_arms(st->cfg) > 1 ? "@" : "", ab_arm_name(st->cfg, hg->arm));
	if (hg->ksm)
		run_append(res->settings.group_order, sizeof(res->settings.group_order), "/ksm-%s",
			   hg->ksm == RUN_KSM_ON ? "on" : "off");
	r = group_enter(st, hg, round, &fr, &fl, e);
	if (r) {
		frag_undo(io, &st->hs, &fr, fl);
		return r;
	}
	have_vm0 = vmstat_read("/proc", &vm0, NULL) == 0;
	run_note(io, "round %u, host THP %s, allocation %s%s%s%s%s%s%s (group %zu of %zu this round)", round + 1,
		 hg->host_thp, prefault_name(hg->prefault), hg->host_state != HOST_FRESH ? ", host " : "",
		 hg->host_state != HOST_FRESH ? host_state_name(hg->host_state) : "",
		 balloon_planned(st->cfg) ? ", balloon " : "", balloon_planned(st->cfg) ? balloon_arm_name(hg->balloon) : "",
		 ab_arms(st->cfg) > 1 ? ", emulator " : "", ab_arm_name(st->cfg, hg->arm), i + 1, st->ngroups);
	if (io->bar) {
		char name[96];

		snprintf(name, sizeof(name), "round %u: host %s/%s, guest cells", round + 1, hg->host_thp,
			 prefault_name(hg->prefault));
		progress_cell_start(io->bar, name);
	}
	rc = (struct recovery){ &st->hs, &st->hp, hg, round, false, on_record };
	r = run_guests(st->cfg, io, st->v, st->accel, &st->img, st->kc ? &st->sd : NULL, hg,
		       recovery_group(hg) ? &rc : NULL, &st->idx, round, res, &ge);
	if (group_leave(st, &fr, fl, have_vm0 ? &vm0 : NULL, e))
		return e->code;
	if (io->bar && r != -EINTR)
		progress_cell_done(io->bar, r == 0, r ? ge.msg : NULL);
	if (r == -EINTR || *io->stop) {
		r = err_set(e, -EINTR, "interrupted: partial results kept");
		save_partial(res, st->cfg, st->json_path);
		return r;
	}
	if (r) {
		/* one guest failing does not stop the run: the cells say why */
		run_note(io, "error: %s", ge.msg);
		r = reconnect_if_lost(st->cfg, io, &st->v, st->idx - 1, e);
		if (r)
			return r;
	}
	save_partial(res, st->cfg, st->json_path);
	return 0;
}

/* the bare-host rows of one round: never first is fine, nothing is cached between processes */
static int run_host_rows(struct run_state *st, unsigned round, struct err *e)
{
	size_t i;
	int r;

	for (i = 0; st->cfg->target_host && i <= st->nh && !*st->io->stop; i++) {
		const struct thp_setting *thp = i == 0 ? &host_never : &st->hthp[i - 1];

		if (st->io->bar) {
			char name[96], thp_name[THP_NAME_LEN] = "";

			thp_setting_format(thp, thp_name, sizeof(thp_name));
			snprintf(name, sizeof(name), "round %u: bare host, host %s", round + 1, thp_name);
			progress_cell_start(st->io->bar, name);
		}
		r = run_host_target(st->cfg, st->io, &st->hs, &st->hp, st->kc ? &st->sd : NULL, thp, round, st->res, e);
		if (r)
			return r;
		if (st->io->bar)
			progress_cell_done(st->io->bar, true, NULL);
		save_partial(st->res, st->cfg, st->json_path);
	}
	return 0;
}

/* rounds until more_rounds says stop: ABBA over the host groups, then the bare-host rows */
static int run_rounds(struct run_state *st, struct err *e)
{
	const struct run_config *cfg = st->cfg;
	const struct run_io *io = st->io;
	size_t per_round = (cfg->target_guest ? st->ngroups : 0) + (cfg->target_host ? st->nh + 1 : 0), i;
	double t_start = mono_s();
	const struct stop_params sp = { cfg->boots, cfg->reps, cfg->target_ci_host, cfg->target_ci_guest,
					cfg->max_reps, cfg->budget_ms };
	unsigned round, min_rounds = stop_min_rounds(&sp);
	int r;

	if (cfg->target_ci_host > 0)
		run_note(io, "%u rounds (a boot per host setting each), then more while a split effect's 95%% CI "
			 "half-width is over %.3g points (host-side) or %.3g (guest-side)%s", min_rounds,
			 cfg->target_ci_host, cfg->target_ci_guest, cfg->budget_ms ? ", within the --budget" : "");
	if (io->bar)
		progress_init(io->bar, io->progress, min_rounds * per_round);
	for (round = 0; !*io->stop; round++) {
		/* ABBA: a seeded random order, then the same reversed, so a drift of the
		 * machine over the run falls on every host setting alike */
		if (round % 2 == 0)
			shuffle_groups(st->groups, st->ngroups, cfg->seed * 1000003u + round);
		else
			reverse_groups(st->groups, st->ngroups);
		for (i = 0; cfg->target_guest && i < st->ngroups && !*io->stop; i++) {
			r = run_group(st, i, round, e);
			if (r)
				return r;
		}
		r = run_host_rows(st, round, e);
		if (r)
			return r;
		st->res->settings.rounds = round + 1;
		if (!more_rounds(cfg, io, st->res, round + 1, mono_s() - t_start))
			break;
		if (io->bar && round + 1 >= min_rounds)	/* a round past the minimum: the total grows */
			io->bar->total += per_round;
	}
	return *io->stop ? err_set(e, -EINTR, "interrupted: partial results kept") : 0;
}

/* every way out: the host settings restored (the journal's), the host THP state after, libvirt closed */
static int end_run(struct run_state *st, int r, struct err *e)
{
	if (st->session) {
		struct err re = ERR_INIT;

		if (host_session_end(&st->hs, &re)) {
			r = r ? r : re.code;
			err_set(e, re.code, "%s", re.msg);
		}
	}
	if (thp_settings_read(st->cfg->sysfs_root, &st->res->thp_after, NULL) == 0)
		st->res->have_thp_after = true;
	reap_dead_runs(st);
	virt_close(st->v);
	return r;
}

/* what the migration arms call back (run/migrate.h) */
static const struct migrate_cb mig_cb = { run_note, on_record };

int run_experiment(const struct run_config *cfg, const struct run_io *io, struct results *res,
		   char *json_path, size_t json_len, struct err *e)
{
	struct run_state *st;
	char gdir[PATH_MAX];
	bool stale = false;
	struct run_io mio = *io;	/* with the migration arms' daemon (run/migrate.h) */
	int r;

	if (snprintf(json_path, json_len, "%s/results.json", cfg->out_dir) >= (int)json_len ||
	    snprintf(gdir, sizeof(gdir), "%s/guests", cfg->out_dir) >= (int)sizeof(gdir))
		return err_set(e, -ENAMETOOLONG, "--out path too long");
	r = mkdir_p(gdir, 0755, e);
	if (r)
		return r;
	st = calloc(1, sizeof(*st));
	if (!st)
		return err_set(e, -ENOMEM, "out of memory");
	st->cfg = cfg;
	mio.migd = NULL;
	st->io = &mio;
	st->res = res;
	st->json_path = json_path;
	st->hp.before = &res->thp_before;
	st->accel = ACCEL_TCG;
	st->kc = srcdisk_planned(cfg);
	echo_settings(cfg, res);
	r = check_host(st, e);
	if (!r && st->kc)
		r = prepare_source(st, e);
	if (r) {
		free(st);
		return r;
	}
	r = prepare_guests(st, e);
	if (!r && cfg->target_guest)
		r = migrate_axis_start(cfg, &mio, &mig_cb, e);
	if (r)
		goto out;
	telemetry_notes(res, st->accel, cfg->target_guest);
	r = host_session_begin(&st->hs, cfg->sysfs_root, cfg->state_dir, &stale, e);
	if (r)
		goto out;
	st->session = true;
	if (stale)
		run_note(io, "restored host THP settings left changed by a killed thpeval run");
	build_groups(st);
	r = ksm_groups(cfg, &st->hs, st->groups, &st->ngroups, sizeof(st->groups) / sizeof(st->groups[0]), e);
	if (!r)
		r = run_rounds(st, e);
out:
	if (io->bar && io->bar->total)
		progress_finish(io->bar);
	guest_mthp_note(cfg, io, res);
	migrate_axis_stop(&mio, res, &mig_cb);
	r = end_run(st, r, e);
	free(st);
	return r;
}
