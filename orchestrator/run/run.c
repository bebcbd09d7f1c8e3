#include "orchestrator/run/internal.h"
#include "orchestrator/analysis/stopping.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/clock.h"
#include "orchestrator/run/progress.h"

void run_note(const struct run_io *io, const char *fmt, ...)
{
	va_list ap;

	if (!io->progress)
		return;
	if (io->bar && io->bar->tty) {
		/* on a terminal the status line carries the progress: only warnings and
		 * errors are printed, above it */
		if (strncmp(fmt, "warning", 7) && strncmp(fmt, "error", 5))
			return;
		fputs("\r\033[K", io->progress);
		io->bar->drawn = 0;
	}
	fputs("thpeval: ", io->progress);
	va_start(ap, fmt);
	vfprintf(io->progress, fmt, ap);
	va_end(ap);
	fputc('\n', io->progress);
	fflush(io->progress);
}

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

int mkdir_p(const char *path, mode_t mode, struct err *e)
{
	char buf[PATH_MAX];
	char *p;

	if (strlen(path) >= sizeof(buf))
		return err_set(e, -ENAMETOOLONG, "path too long: '%s'", path);
	strcpy(buf, path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return err_set(e, -errno, "cannot create directory '%s': %s", buf, strerror(errno));
		*p = '/';
	}
	if (mkdir(buf, mode) < 0 && errno != EEXIST)
		return err_set(e, -errno, "cannot create directory '%s': %s", buf, strerror(errno));
	return 0;
}

static bool in_list(const char list[][THP_NAME_LEN], size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(list[i], s))
			return true;
	return false;
}

/* guest settings of this run: never + the treatments */
bool guest_thp_planned(const struct run_config *cfg, const char *s)
{
	return !strcmp(s, "never") || in_list(cfg->guest_thp, cfg->n_guest_thp, s);
}

bool workload_planned(const struct run_config *cfg, const char *w)
{
	size_t i;

	for (i = 0; i < cfg->n_wl; i++)
		if (!strcmp(w, cfg->wl[i]))
			return true;
	return false;
}

/* a planned workload reads a kernel source (kcompile): it needs the source disk */
bool kcompile_planned(const struct run_config *cfg)
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
 * The per-guest limit: --timeout for everything, plus --kcompile-timeout for
 * every kcompile run the guest makes (each round, each guest THP setting).
 */
uint64_t guest_timeout_ms(const struct run_config *cfg)
{
	uint64_t runs = (uint64_t)(cfg->warmup + cfg->reps) * (1 + cfg->n_guest_thp);

	return cfg->timeout_ms + (kcompile_planned(cfg) ? runs * cfg->kc_timeout_ms : 0);
}

void run_append(char *dst, size_t len, const char *fmt, ...)
{
	size_t n = strlen(dst);
	va_list ap;

	if (n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(dst + n, len - n, fmt, ap);
	va_end(ap);
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
static void gap_name(const struct results *res, const struct stop_gap *g, char *buf, size_t len)
{
	const struct effect *e = g->effect >= 0 ? &res->effects->e[g->effect] : NULL;

	if (e)
		snprintf(buf, len, "%s %s%s%s%s %s", e->side, e->component, e->at_guest[0] ? " (guest " : "",
			 e->at_guest, e->at_guest[0] ? ")" : "", e->metric);
	else
		snprintf(buf, len, "none");
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

	if (rounds_done >= cfg->boots && cfg->target_ci_host > 0) {
		struct err e = ERR_INIT;

		results_finish(res, cfg->min_coverage);
		if (effects_attach(res, &e))
			run_note(io, "warning: %s", e.msg);
	}
	v = stop_decide(res->effects, &sp, rounds_done, elapsed_s, &g);
	if (v != STOP_BOOTS && v != STOP_MORE && v != STOP_NO_EFFECT)
		snprintf(res->settings.stopped, sizeof(res->settings.stopped), "%s", stop_verdict_name(v));
	gap_name(res, &g, name, sizeof(name));
	switch (v) {
	case STOP_BOOTS:
		return true;
	case STOP_FIXED:
		return false;
	case STOP_NO_TARGETS:
		run_note(io, "no split effect in these workloads to narrow: %u rounds", rounds_done);
		return false;
	case STOP_TARGET_MET:
		run_note(io, "every split effect's 95%% CI is within its target (host-side %.1f, guest-side %.1f "
			 "points) after %u rounds; closest: %s, %.2f of %.1f", cfg->target_ci_host,
			 cfg->target_ci_guest, rounds_done, name, g.half, g.target);
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
	run_note(io, "%s: 95%% CI half-width %.2f points > target %.1f: another round", name, g.half, g.target);
	return true;
}

static void save_partial(struct results *res, const struct run_config *cfg, const char *path)
{
	struct err e = ERR_INIT;

	results_finish(res, cfg->min_coverage);
	if (effects_attach(res, &e) || results_write_json(res, path, &e))
		fprintf(stderr, "thpeval: warning: %s\n", e.msg);
}

int run_experiment(const struct run_config *cfg, const struct run_io *io, struct results *res,
		   char *json_path, size_t json_len, struct err *e)
{
	struct image_opts io_img = { 0 };
	struct srcdisk_opts so = { 0 };
	struct srcdisk sd;
	struct host_session hs;
	struct image img;
	struct virt *v = NULL;
	enum accel accel = ACCEL_TCG;
	bool session = false, stale = false, built = false, kc = kcompile_planned(cfg);
	char gdir[PATH_MAX];
	struct host_group groups[2 * (THP_LIST_MAX + 2) * PREFAULT__COUNT];
	char pool_orig[32] = "";
	char hthp[THP_LIST_MAX][THP_NAME_LEN];	/* host treatments: --host-thp + the sweep's sizes */
	size_t nh = 0;
	struct host_plan hp = { .before = &res->thp_before };
	size_t i, p, ngroups, st;
	unsigned idx = 0, round;
	double t_start;
	int r, reaped = 0;

	memset(&hs, 0, sizeof(hs));
	if (snprintf(json_path, json_len, "%s/results.json", cfg->out_dir) >= (int)json_len ||
	    snprintf(gdir, sizeof(gdir), "%s/guests", cfg->out_dir) >= (int)sizeof(gdir))
		return err_set(e, -ENAMETOOLONG, "--out path too long");
	r = mkdir_p(gdir, 0755, e);
	if (r)
		return r;

	/* settings echo */
	res->settings.reps = cfg->reps;
	res->settings.boots = cfg->boots;
	res->settings.warmup = cfg->warmup;
	res->settings.cold_reps = cfg->cold_reps;
	res->settings.vcpus = cfg->vcpus;
	res->settings.memory_bytes = cfg->memory;
	res->settings.size_bytes = cfg->size;
	res->settings.accesses = cfg->accesses;
	res->settings.seed = cfg->seed;
	res->settings.min_coverage_pct = cfg->min_coverage;
	snprintf(res->settings.uri, sizeof(res->settings.uri), "%s", cfg->uri);
	snprintf(res->settings.workloads, sizeof(res->settings.workloads), "%s", cfg->workloads);
	snprintf(res->settings.host_thp_list, sizeof(res->settings.host_thp_list), "never");

	for (i = 0; i < cfg->n_prefault; i++)
		run_append(res->settings.prefault_list, sizeof(res->settings.prefault_list), "%s%s", i ? "," : "",
		       prefault_name(cfg->prefault[i]));
	res->settings.target_ci_host = cfg->target_ci_host;
	res->settings.target_ci_guest = cfg->target_ci_guest;
	res->settings.budget_s = (double)cfg->budget_ms / 1000;
	res->settings.guests = cfg->guests ? cfg->guests : 1;
	{
		int pins[64];

		if (!cfg->pin)
			snprintf(res->settings.pin, sizeof(res->settings.pin), "none: the host scheduler places them");
		else if (guest_pins(cfg, 0, res->settings.guests, pins) && res->settings.guests * cfg->vcpus == 1)
			snprintf(res->settings.pin, sizeof(res->settings.pin), "auto: QEMU's other threads on CPU 0, "
				 "the vCPU on CPU 1");
		else if (guest_pins(cfg, 0, res->settings.guests, pins))
			snprintf(res->settings.pin, sizeof(res->settings.pin), "auto: QEMU's other threads on CPU 0, "
				 "the vCPUs on CPUs 1-%u", res->settings.guests * cfg->vcpus);
		else
			snprintf(res->settings.pin, sizeof(res->settings.pin), "auto: not pinned: %u guest(s) x %u "
				 "vCPU(s) + 1 is more than the host's %ld CPUs", res->settings.guests, cfg->vcpus,
				 sysconf(_SC_NPROCESSORS_ONLN));
	}
	res->settings.mthp_sweep = cfg->mthp_sweep;
	for (i = 0; i < cfg->n_host_state; i++)
		run_append(res->settings.host_state_list, sizeof(res->settings.host_state_list), "%s%s", i ? "," : "",
		       cfg->host_state[i]);
	snprintf(res->settings.backing, sizeof(res->settings.backing), "%s%s", cfg->memfd ? "memfd" : "anonymous",
		 cfg->hugetlbfs ? ",hugetlbfs" : "");
	if (cfg->hugetlbfs)
		run_append(res->settings.host_thp_list, sizeof(res->settings.host_thp_list), ",hugetlbfs");
	snprintf(res->settings.guest_thp_list, sizeof(res->settings.guest_thp_list), "never");
	for (i = 0; i < cfg->n_guest_thp; i++)
		run_append(res->settings.guest_thp_list, sizeof(res->settings.guest_thp_list), ",%s", cfg->guest_thp[i]);

	r = host_info_read("/proc", &res->host, e);
	if (r)
		return r;
	r = thp_settings_read(cfg->sysfs_root, &res->thp_before, e);
	if (r)
		return r;
	if (!thp_settings_get(&res->thp_before, "enabled"))
		return err_set(e, -EOPNOTSUPP, "this host kernel has no transparent hugepage support (%s%s missing)",
			       cfg->sysfs_root, THP_DIR);
	r = plan_host_thp(cfg, res, &hp, hthp, &nh, e);
	if (r)
		return r;
	for (i = 0; i < nh; i++)
		run_append(res->settings.host_thp_list, sizeof(res->settings.host_thp_list), ",%s", hthp[i]);
	if (cfg->target_guest) {
		char proc[PATH_MAX], note[200];

		run_proc_root(cfg, proc, sizeof(proc));
		r = guests_fit(proc, cfg->guests ? cfg->guests : 1, cfg->memory, note, sizeof(note), e);
		if (r)
			return r;
		if (cfg->guests > 1)
			run_note(io, "memory for %u guests: %s", cfg->guests, note);
	}

	memset(&sd, 0, sizeof(sd));
	if (kc) {
		/* the kernel source: a read-only disk for guests, its tree for the host */
		so.cache_dir = cfg->cache_dir;
		so.progress = image_line;
		so.opaque = io_progress_opaque(io);
		r = srcdisk_ensure(&so, &sd, &built, e);
		if (r)
			return r;
		run_note(io, "kernel source disk %s (%s, %s %s)", sd.id, built ? "built" : "cached",
			 SRCDISK_PACKAGE, sd.version);
		snprintf(res->settings.kcompile, sizeof(res->settings.kcompile), "%s:%s", cfg->kc_config,
			 cfg->kc_target);
		snprintf(res->settings.srcdisk_id, sizeof(res->settings.srcdisk_id), "%s", sd.id);
		built = false;
	}
	if (!cfg->target_guest) {
		snprintf(res->accel, sizeof(res->accel), "none");
		snprintf(res->accel_reason, sizeof(res->accel_reason), "bare host only (--target=host)");
	} else {
		r = virt_open(cfg->uri, &v, e);
		if (r)
			return r;
		virt_versions(v, res->libvirt_version, sizeof(res->libvirt_version), res->hypervisor_version,
			      sizeof(res->hypervisor_version), NULL);
		r = virt_accel_choose(v, cfg->accel, "/proc/cpuinfo", &accel, res->accel_reason,
				      sizeof(res->accel_reason), e);
		if (r)
			goto out;
		snprintf(res->accel, sizeof(res->accel), "%s", accel_name(accel));
		run_note(io, "accelerator: %s (%s)", res->accel, res->accel_reason);
		if (virt_reap_stale(v, &reaped, NULL) == 0 && reaped)
			run_note(io, "removed %d guest(s) left by a killed thpeval run", reaped);

		/* the image build can take a minute with no libvirt event loop running:
		 * the daemon's keepalive would drop the connection, so reconnect after it */
		virt_close(v);
		v = NULL;
		io_img.cache_dir = cfg->cache_dir;
		io_img.kernel = cfg->kernel[0] ? cfg->kernel : NULL;
		io_img.guest_bin = cfg->guest_bin;
		/* kcompile guests need the toolchain in the root: another image */
		io_img.extra_packages = kc ? srcdisk_toolchain_packages : NULL;
		io_img.progress = image_line;
		io_img.opaque = io_progress_opaque(io);
		r = image_ensure(&io_img, &img, &built, e);
		if (r)
			goto out;
		snprintf(res->image_id, sizeof(res->image_id), "%s", img.id);
		r = virt_open(cfg->uri, &v, e);
		if (r)
			goto out;
		run_note(io, "guest image %s (%s, kernel %s)", img.id, built ? "built" : "cached", img.kernel_version);
	}
	telemetry_notes(res, accel, cfg->target_guest);
	if (cfg->target_guest && cfg->hugetlbfs && (r = hugetlbfs_mounted(cfg, e)))
		goto out;
	r = host_session_begin(&hs, cfg->sysfs_root, cfg->state_dir, &stale, e);
	if (r)
		goto out;
	session = true;
	if (stale)
		run_note(io, "restored host THP settings left changed by a killed thpeval run");

	/* host groups (host THP x allocation mode), each round in a seeded random order */
	ngroups = 0;
	for (st = 0; st < cfg->n_host_state; st++)
		for (p = 0; p < cfg->n_prefault; p++) {
			for (i = 0; i <= nh; i++) {
				groups[ngroups].host_thp = i == 0 ? "never" : hthp[i - 1];
				groups[ngroups].prefault = cfg->prefault[p];
				groups[ngroups].host_state = cfg->host_state[st];
				groups[ngroups].hugetlbfs = false;
				ngroups++;
			}
			if (cfg->hugetlbfs) {
				groups[ngroups].host_thp = "hugetlbfs";
				groups[ngroups].prefault = cfg->prefault[p];
				groups[ngroups].host_state = cfg->host_state[st];
				groups[ngroups].hugetlbfs = true;
				ngroups++;
			}
		}
	t_start = mono_s();
	if (cfg->target_ci_host > 0)
		run_note(io, "%u rounds (a boot per host setting each), then more while a split effect's 95%% CI half-width "
			 "is over %.3g points (host-side) or %.3g (guest-side)%s", cfg->boots, cfg->target_ci_host,
			 cfg->target_ci_guest, cfg->budget_ms ? ", within the --budget" : "");
	if (io->bar)
		progress_init(io->bar, io->progress,
			      cfg->boots * ((cfg->target_guest ? ngroups : 0) + (cfg->target_host ? nh + 1 : 0)));
	for (round = 0; !*io->stop; round++) {
		/* ABBA: a seeded random order, then the same reversed, so a drift of the
		 * machine over the run falls on every host setting alike */
		if (round % 2 == 0)
			shuffle_groups(groups, ngroups, cfg->seed * 1000003u + round);
		else
			reverse_groups(groups, ngroups);
		for (i = 0; cfg->target_guest && i < ngroups && !*io->stop; i++) {
			const struct host_group *hg = &groups[i];
			struct err ge = ERR_INIT;

			struct frag_log *fl = NULL;
			struct frag fr;
			struct vmstat vm0;
			bool have_vm0 = false;

			memset(&fr, 0, sizeof(fr));
			run_append(res->settings.group_order, sizeof(res->settings.group_order), "%s%u:%s/%s%s",
			       res->settings.group_order[0] ? " " : "", round, hg->host_thp, prefault_name(hg->prefault),
			       strcmp(hg->host_state, "fresh") ? "/fragmented" : "");
			if (!strcmp(hg->host_state, "fragmented")) {
				fl = results_frag_add(res, e);
				if (!fl) {
					r = e->code;
					goto out;
				}
				/* fragmenting takes a while with no libvirt event loop running: the
				 * daemon's keepalive would drop the connection, so reconnect after it */
				virt_close(v);
				v = NULL;
				r = fragment_host(cfg, io, &hs, &hp, hg, round, &fr, fl, e);
				if (!r)
					r = virt_open(cfg->uri, &v, e);
				if (r) {
					frag_undo(io, &hs, &fr, fl);
					goto out;
				}
			}
			/* the hugetlbfs arm: THP off (guest RAM is hugetlb), the pool reserved */
			r = apply_host_thp(&hs, &hp, hg->hugetlbfs ? "never" : hg->host_thp, e);
			if (!r && hg->hugetlbfs)
				r = pool_reserve(&hs, cfg, pool_orig, sizeof(pool_orig), e);
			if (r) {
				frag_undo(io, &hs, &fr, fl);
				goto out;
			}
			have_vm0 = vmstat_read("/proc", &vm0, NULL) == 0;
			run_note(io, "round %u, host THP %s, allocation %s%s%s (group %zu of %zu this round)", round + 1,
				 hg->host_thp, prefault_name(hg->prefault), strcmp(hg->host_state, "fresh") ? ", host " : "",
				 strcmp(hg->host_state, "fresh") ? hg->host_state : "", i + 1, ngroups);
			if (io->bar) {
				char name[96];

				snprintf(name, sizeof(name), "round %u: host %s/%s, guest cells", round + 1, hg->host_thp,
					 prefault_name(hg->prefault));
				progress_cell_start(io->bar, name);
			}
			r = run_guests(cfg, io, v, accel, &img, kc ? &sd : NULL, hg, &idx, round, res, &ge);
			if (hg->hugetlbfs && pool_orig[0]) {
				struct err pe = ERR_INIT;	/* release the pool now; the journal has it too */

				if (host_session_set(&hs, POOL_KEY, pool_orig, &pe))
					run_note(io, "warning: %s", pe.msg);
				pool_orig[0] = '\0';
			}
			if (fl && have_vm0)
				frag_vmstat(fl, &vm0);
			if (fr.pid) {
				/* the undo (compact_memory) takes a while too */
				virt_close(v);
				v = NULL;
				frag_undo(io, &hs, &fr, fl);
				if (virt_open(cfg->uri, &v, e)) {
					r = e->code;
					goto out;
				}
			} else if (fl) {
				frag_undo(io, &hs, &fr, fl);	/* the holder died: the knob still goes back */
			}
			if (io->bar && r != -EINTR)
				progress_cell_done(io->bar, r == 0, r ? ge.msg : NULL);
			if (r == -EINTR || *io->stop) {
				r = err_set(e, -EINTR, "interrupted: partial results kept");
				save_partial(res, cfg, json_path);
				goto out;
			}
			if (r) {
				/* one guest failing does not stop the run: the cells say why */
				run_note(io, "error: %s", ge.msg);
				r = reconnect_if_lost(cfg, io, &v, idx - 1, e);
				if (r)
					goto out;
			}
			save_partial(res, cfg, json_path);
		}
		for (i = 0; cfg->target_host && i <= nh && !*io->stop; i++) {
			/* every round: never first is fine here, nothing is cached between processes */
			if (io->bar) {
				char name[96];

				snprintf(name, sizeof(name), "round %u: bare host, host %s", round + 1,
					 i == 0 ? "never" : hthp[i - 1]);
				progress_cell_start(io->bar, name);
			}
			r = run_host_target(cfg, io, &hs, &hp, kc ? &sd : NULL, i == 0 ? "never" : hthp[i - 1], round,
					    res, e);
			if (r)
				goto out;
			if (io->bar)
				progress_cell_done(io->bar, true, NULL);
			save_partial(res, cfg, json_path);
		}
		res->settings.rounds = round + 1;
		if (!more_rounds(cfg, io, res, round + 1, mono_s() - t_start))
			break;
		if (io->bar && round + 1 >= cfg->boots)	/* a round past --boots: the total grows */
			io->bar->total += (cfg->target_guest ? ngroups : 0) + (cfg->target_host ? nh + 1 : 0);
	}
	if (*io->stop)
		r = err_set(e, -EINTR, "interrupted: partial results kept");
out:
	if (io->bar && io->bar->total)
		progress_finish(io->bar);
	guest_mthp_note(cfg, io, res);
	if (session) {
		struct err re = ERR_INIT;

		if (host_session_end(&hs, &re)) {
			r = r ? r : re.code;
			err_set(e, re.code, "%s", re.msg);
		}
	}
	if (thp_settings_read(cfg->sysfs_root, &res->thp_after, NULL) == 0)
		res->have_thp_after = true;
	virt_close(v);
	return r;
}
