#include "orchestrator/run/balloon.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "images/spawn.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "orchestrator/model/balloon.h"
#include "orchestrator/run/abaxis.h"
#include "orchestrator/run/internal.h"
#include "orchestrator/run/note.h"

#define SAMPLE_S 0.25			/* QEMU's VmRSS while the buffer is left to the host */
#define REFAULT_OPT "memset:refault-wait="
#define LIBVIRT_FPR_VERSION 6009000ul	/* freePageReporting='on': libvirt 6.9.0 */

int balloon_parse(struct run_config *c, const char *arg, struct err *e)
{
	char buf[64], *tok, *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return err_set(e, -EINVAL, "too long: %s", err_q(arg));
	if (parse_list_check(arg))
		return err_set(e, -EINVAL, "empty item in the balloon list: use none, reporting or none,reporting: %s",
			       err_q(arg));
	strcpy(buf, arg);
	c->n_balloon = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum balloon_arm b;
		size_t i;
		bool dup = false;

		if (balloon_arm_parse(tok, &b))
			return err_set(e, -EINVAL, "not a balloon arm: use none or reporting: %s", err_q(tok));
		for (i = 0; i < c->n_balloon; i++)
			dup |= c->balloon[i] == b;
		if (!dup)
			c->balloon[c->n_balloon++] = b;
	}
	if (c->n_balloon == 0)
		return err_set(e, -EINVAL, "empty balloon list");
	return 0;
}

bool balloon_planned(const struct run_config *c)
{
	return c->n_balloon > 1 || (c->n_balloon == 1 && c->balloon[0] != BALLOON_NONE);
}

void balloon_echo(const struct run_config *cfg, struct results *res)
{
	size_t i;

	for (i = 0; i < cfg->n_balloon; i++)
		run_append(res->settings.balloon_list, sizeof(res->settings.balloon_list), "%s%s", i ? "," : "",
			   balloon_arm_name(cfg->balloon[i]));
}

const char *balloon_wlopts(const struct run_config *cfg, char *buf, size_t len)
{
	if (!balloon_planned(cfg) || strstr(cfg->wl_opts, REFAULT_OPT))
		return cfg->wl_opts;
	snprintf(buf, len, "%s%s" REFAULT_OPT "%u", cfg->wl_opts, cfg->wl_opts[0] ? "," : "", BALLOON_WAIT_MS);
	return buf;
}

/* "6.9.0" as libvirt's number, 0 when it is not one */
static unsigned long version_num(const char *s)
{
	unsigned long a = 0, b = 0, c = 0;

	if (sscanf(s, "%lu.%lu.%lu", &a, &b, &c) < 2)
		return 0;
	return a * 1000000 + b * 1000 + c;
}

/* the QEMU binary offers the balloon's free-page-reporting property */
static int qemu_has_reporting(const char *qemu, struct err *e)
{
	const char *const argv[] = { qemu, "-nodefaults", "-machine", "none", "-device", "virtio-balloon-pci,help",
				     NULL };
	struct err se = ERR_INIT;
	char *out = malloc(64 * 1024);
	int r;

	if (!out)
		return err_set(e, -ENOMEM, "out of memory");
	r = spawn_run(argv, NULL, out, 64 * 1024, &se);
	if (r)
		r = err_set(e, r, "--balloon=reporting: cannot ask '%s' for the virtio balloon's properties: %s", qemu,
			    se.msg);
	else if (!strstr(out, "free-page-reporting"))
		r = err_set(e, -EOPNOTSUPP, "--balloon=reporting: '%s' has no free page reporting (its virtio-balloon-pci lacks the "
			    "free-page-reporting property, QEMU 5.1+): use a newer QEMU (--emulator) or drop the "
			    "reporting arm", qemu);
	free(out);
	return r;
}

int balloon_check(const struct run_config *cfg, struct virt *v, const char *libvirt_version, struct err *e)
{
	char qemu[256], extra[WLOPTS_SPEC_MAX + 64];
	unsigned a;
	bool memset_run = false;
	size_t i;
	int r;

	if (!balloon_planned(cfg))
		return 0;
	for (i = 0; i < cfg->n_wl; i++)
		memset_run |= !strcmp(cfg->wl[i], "memset");
	if (!memset_run)
		return err_set(e, -EINVAL, "--balloon measures memset's re-fault step: add memset to --workloads");
	if (strlen(balloon_wlopts(cfg, extra, sizeof(extra))) > WLOPTS_SPEC_MAX)
		return err_set(e, -E2BIG, "--balloon adds %s%u to --workload-opts, which leaves no room for it: "
			       "shorten --workload-opts", REFAULT_OPT, BALLOON_WAIT_MS);
	for (i = 0; i < cfg->n_balloon; i++)
		if (cfg->balloon[i] == BALLOON_REPORTING)
			break;
	if (i == cfg->n_balloon)
		return 0;
	if (version_num(libvirt_version) < LIBVIRT_FPR_VERSION)
		return err_set(e, -EOPNOTSUPP, "--balloon=reporting: libvirt %s has no free page reporting "
			       "(<memballoon freePageReporting='on'/>, libvirt 6.9.0+): upgrade libvirt or drop the "
			       "reporting arm", libvirt_version);
	for (a = 0; a < ab_arms(cfg); a++) {
		const char *emu = ab_emulator(cfg, a);

		if (!emu) {
			if ((r = virt_default_emulator(v, qemu, sizeof(qemu), e)))
				return r;
			emu = qemu;
		}
		if ((r = qemu_has_reporting(emu, e)))
			return r;
	}
	return 0;
}

/* ---- the watch of one guest ---------------------------------------------------- */

static int qemu_pid(struct guest_ctx *gc)
{
	if (gc->qemu_pid <= 0)
		gc->qemu_pid = guest_qemu_pid(gc->g);
	return gc->qemu_pid;
}

static int rss_now(struct guest_ctx *gc, unsigned long long *kb, struct err *e)
{
	uint64_t v;
	int r = proc_vmrss(gc->proc_root, qemu_pid(gc), &v, e);

	if (!r)
		*kb = (unsigned long long)v;
	return r;
}

/* huge pages over the guest-RAM mapping's size, % */
static double cov_now(struct guest_ctx *gc)
{
	struct smaps_cov cov;
	double pct;

	if (smaps_guest_ram(gc->proc_root, qemu_pid(gc), gc->cfg->memory, &cov, NULL) || !cov.mapping_kb)
		return NAN;
	pct = ((double)cov.anon_huge_kb + (double)cov.shmem_pmd_kb) / (double)cov.mapping_kb * 100.0;
	return pct > 100.0 ? 100.0 : pct;
}

static struct balloon_log *cur(struct guest_ctx *gc)
{
	return gc->bw.open && gc->bw.idx < gc->res->nballoons ? &gc->res->balloons[gc->bw.idx] : NULL;
}

static void add_point(struct guest_ctx *gc, struct balloon_log *b, unsigned long long kb)
{
	double t = mono_s() - gc->bw.t_free;

	if (b->n < BALLOON_SERIES_MAX)
		b->series[b->n++] = (struct rss_point){ t, kb };
	if (kb < b->rss_after_free_kb)
		b->rss_after_free_kb = kb;
	if (isnan(b->half_drop_s) && kb < b->rss_before_kb && 2 * (b->rss_before_kb - kb) >= b->freed_kb)
		b->half_drop_s = t;
}

static void fail_window(struct guest_ctx *gc, struct balloon_log *b, const char *why)
{
	if (b && !b->error[0])
		snprintf(b->error, sizeof(b->error), "%s", why);
	if (b)
		run_note(gc->io, "warning: %s (balloon %s, rep %u): %s", gc->log->name, b->balloon, b->rep, why);
	gc->bw.open = false;
}

/* the free mark opens a window: QEMU's resident memory and coverage before the reporting */
static void on_free(struct guest_ctx *gc, const struct record *rec)
{
	struct err e = ERR_INIT;
	struct balloon_log *b;
	uint64_t freed = 0, rep = 0;

	if (gc->bw.open)
		fail_window(gc, cur(gc), "the guest freed again before its re-touch result");
	b = results_balloon_add(gc->res, &e);
	if (!b) {
		run_note(gc->io, "warning: %s", e.msg);
		return;
	}
	gc->bw.idx = (size_t)(b - gc->res->balloons);
	gc->bw.open = true;
	gc->bw.retouched = false;
	gc->bw.t_free = mono_s();
	gc->bw.next = SAMPLE_S;
	snprintf(b->balloon, sizeof(b->balloon), "%s", gc->balloon);
	snprintf(b->host_thp, sizeof(b->host_thp), "%s", gc->host_thp);
	snprintf(b->prefault, sizeof(b->prefault), "%s", gc->prefault);
	snprintf(b->host_state, sizeof(b->host_state), "%s", gc->host_state);
	snprintf(b->guest_thp, sizeof(b->guest_thp), "%s", rec_get(rec, "guest_thp") ? rec_get(rec, "guest_thp") : "");
	b->round = gc->log->round;
	b->boot = gc->boot;
	if (!rec_get_u64(rec, "rep", &rep) && rep <= UINT32_MAX)
		b->rep = (unsigned)rep;
	if (rec_get_u64(rec, "freed_bytes", &freed) || freed == 0) {
		fail_window(gc, b, "a free mark without its freed_bytes");
		return;
	}
	b->freed_kb = freed / 1024;
	b->cov_before_pct = cov_now(gc);
	if (rss_now(gc, &b->rss_before_kb, &e)) {
		fail_window(gc, b, e.msg);
		return;
	}
	b->rss_after_free_kb = b->rss_before_kb;
	add_point(gc, b, b->rss_before_kb);
}

/* the retouch mark: the window's last sample and coverage, before the guest touches again */
static void on_retouch(struct guest_ctx *gc)
{
	struct balloon_log *b = cur(gc);
	unsigned long long kb;
	struct err e = ERR_INIT;

	if (!b || gc->bw.retouched)
		return;
	gc->bw.retouched = true;
	b->window_s = mono_s() - gc->bw.t_free;
	if (rss_now(gc, &kb, &e)) {
		fail_window(gc, b, e.msg);
		return;
	}
	add_point(gc, b, kb);
	b->cov_after_free_pct = cov_now(gc);
	b->rss_drop_kb = (double)b->rss_before_kb - (double)b->rss_after_free_kb;
	b->drop_pct_of_freed = b->rss_drop_kb / (double)b->freed_kb * 100.0;
}

int balloon_on_info(struct guest_ctx *gc, const struct record *rec)
{
	const char *ev = rec_get(rec, "balloon_event");

	if (!ev || !gc->bw.on)
		return 0;
	if (!strcmp(ev, "free"))
		on_free(gc, rec);
	else if (!strcmp(ev, "retouch"))
		on_retouch(gc);
	return 0;
}

void balloon_on_result(struct guest_ctx *gc, const struct record *rec)
{
	struct balloon_log *b = cur(gc);
	struct err e = ERR_INIT;
	double v;

	if (!b || rec_get_f64(rec, "refault_ns_per_4k", &v))
		return;
	if (!gc->bw.retouched) {
		fail_window(gc, b, "a re-touch result without its retouch mark");
		return;
	}
	b->refault_ns_per_4k = v;
	if (rss_now(gc, &b->rss_after_retouch_kb, &e)) {
		fail_window(gc, b, e.msg);
		return;
	}
	b->cov_after_retouch_pct = cov_now(gc);
	gc->bw.open = false;
	run_note(gc->io, "  balloon %s: QEMU RSS %llu -> %llu MiB after the free (%.0f%% of the %llu MiB freed), "
		 "%llu MiB after the re-touch; re-fault %.0f ns/4K", b->balloon, b->rss_before_kb / 1024,
		 b->rss_after_free_kb / 1024, b->drop_pct_of_freed, b->freed_kb / 1024, b->rss_after_retouch_kb / 1024,
		 v);
}

void balloon_tick(struct guest_ctx *gc)
{
	struct balloon_log *b = cur(gc);
	unsigned long long kb;
	struct err e = ERR_INIT;

	if (!b || gc->bw.retouched || mono_s() - gc->bw.t_free < gc->bw.next)
		return;
	gc->bw.next += SAMPLE_S;
	if (rss_now(gc, &kb, &e))
		fail_window(gc, b, e.msg);
	else
		add_point(gc, b, kb);
}
