#include "orchestrator/report/text.h"
#include "orchestrator/report/migreport.h"
#include "orchestrator/report/abtest_text.h"
#include "orchestrator/report/ksm_text.h"
#include "orchestrator/report/render.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/textesc.h"
#include "lib/wltraits.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/analysis/sizing.h"
#include "orchestrator/report/balloon.h"
#include "orchestrator/report/sizing.h"

/* ---- text table ------------------------------------------------------------- */

static void fmt_ci(char *buf, size_t len, const struct metric *m, int prec)
{
	if (!m || m->s.n == 0) {
		snprintf(buf, len, "n/a");
		return;
	}
	if (isfinite(m->s.ci95_high) && m->s.geo)	/* the log-scale half-width, as a ratio */
		snprintf(buf, len, "%.*f ±%.1f%%", prec, m->s.mean, (m->s.ci95_high / m->s.mean - 1) * 100);
	else if (isfinite(m->s.ci95_high))
		snprintf(buf, len, "%.*f ±%.*f", prec, m->s.mean, prec, m->s.ci95_high - m->s.mean);
	else
		snprintf(buf, len, "%.*f", prec, m->s.mean);
}

/*
 * The phase columns are headed in ns; an application's split metric is in
 * other units (redis get_avg_ms): its value says its unit, from the name.
 */
static void add_unit(char *buf, size_t len, const char *metric)
{
	static const char *const units[] = { "_ms", "_us", "_s" };
	size_t i, n = metric ? strlen(metric) : 0, u;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		u = strlen(units[i]);
		if (n > u && !strcmp(metric + n - u, units[i]) && strcmp(buf, "n/a")) {
			snprintf(buf + strlen(buf), len - strlen(buf), " %s", units[i] + 1);
			return;
		}
	}
}

static void fmt_pct(char *buf, size_t len, const struct metric *m)
{
	if (m->s.n == 0)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%.1f", m->s.mean);
}

/* the recovery arms: per guest, the coverage series after the setting went in, and the access passes */
static void print_recovery_access(const struct results *r, const struct collapse_log *c, FILE *out)
{
	const struct probe_log *p = &c->probe;
	double ref = results_recovery_ref_ns(r, c);
	char refs[96];

	if (!c->has_probe) {
		fprintf(out, "    access: no passes from the guest (an older guest program?)\n");
		return;
	}
	if (isfinite(ref))
		snprintf(refs, sizeof(refs), "a fresh %s boot: %.1f", c->host_thp, ref);
	else
		snprintf(refs, sizeof(refs), "no fresh %s boot in this run (add fresh to --host-state)", c->host_thp);
	fprintf(out, "    access ns (guest %s, %llu MiB, one pass a %.0f s): before %.1f (%u passes), during %.1f (%u), "
		     "after %.1f (%u); %s\n",
		p->guest_thp, p->buffer_mib, p->period_s, p->before_ns, p->n_before, p->during_ns, p->n_during,
		p->after_ns, p->n_after, refs);
}

/* collapse-khugepaged: the guest's fresh-memory touch that put QEMU on khugepaged's list */
static void text_khp_reg(FILE *out, const struct khp_reg *g)
{
	if (isfinite(g->done_s))
		fprintf(out, "    khugepaged's list: the guest touched %llu MiB of fresh memory (%.1f s), done %.1f s after"
			     " the setting went in; host%% %.1f after it (its own huge page faults)\n", g->bytes >> 20,
			g->touch_s, g->done_s, g->huge_pct_after_touch);
	else
		fprintf(out, "    khugepaged's list: the guest was asked to touch fresh memory; no report came back\n");
}

static void print_recovery(const struct results *r, FILE *out)
{
	size_t i, k;

	if (!r->ncollapses)
		return;
	fprintf(out, "\nrecovery: guests booted and ran on host THP never, then the setting was applied and guest RAM"
		     " collapsed\n(madvise: process_madvise MADV_COLLAPSE; khugepaged: left to khugepaged); the cells of"
		     " host state collapse-* are\nthe access times before it; host%% = huge pages / guest-RAM mapping size;"
		     " t from the setting going in\n");
	for (i = 0; i < r->ncollapses; i++) {
		const struct collapse_log *c = &r->collapses[i];
		char t50[24], t90[24];

		fprintf(out, "  guest %u, host %s/%s, round %u%s: ", c->boot, c->host_thp, c->prefault, c->round + 1,
			c->has_khp ? " (khugepaged)" : "");
		if (c->error[0]) {
			fprintf(out, "failed: %s\n", c->error);
			continue;
		}
		if (isfinite(c->t50_s))
			snprintf(t50, sizeof(t50), "%.2f s", c->t50_s);
		else
			snprintf(t50, sizeof(t50), "not reached");
		if (isfinite(c->t90_s))
			snprintf(t90, sizeof(t90), "%.2f s", c->t90_s);
		else
			snprintf(t90, sizeof(t90), "not reached");
		fprintf(out, "%llu MiB in %u range%s, host%% %.1f -> %.1f; 50%% at %s, 90%% at %s",
			c->mapping_kb / 1024, c->ranges, c->ranges == 1 ? "" : "s", c->cov_before_pct, c->cov_after_pct,
			t50, t90);
		if (c->has_khp)
			fprintf(out, "\n");
		else
			fprintf(out, "; collapse %.2f s\n", c->call_s);
		fprintf(out, "    resident (ever touched) %llu MiB, %.1f%% of it on huge pages at the end\n",
			c->resident_kb_after / 1024, c->resident_huge_pct_after);
		if (c->stopped[0])
			fprintf(out, "    stopped by: %s, %.1f s after the setting went in\n", c->stopped, c->interval_s);
		if (c->has_khp)
			fprintf(out, "    khugepaged%s: pages_to_scan %llu, scan_sleep_millisecs %llu, alloc_sleep_millisecs %llu, "
				     "defrag %llu, max_ptes_none %llu; over the interval %llu full scans, %llu pages collapsed, "
				     "CPU %.2f s\n",
				c->khp.knobs_set ? " (set by --khugepaged)" : " (the host's)", c->khp.pages_to_scan,
				c->khp.scan_sleep_ms, c->khp.alloc_sleep_ms, c->khp.defrag, c->khp.max_ptes_none,
				c->khp.full_scans, c->khp.pages_collapsed, c->khp.cpu_s);
		if (c->has_reg)
			text_khp_reg(out, &c->reg);
		else
			fprintf(out, "    2M blocks: %llu collapsed of %llu; refused %llu (EINVAL: never touched by the guest, or not"
				     " eligible), busy %llu (EAGAIN), no free huge page %llu (ENOMEM)\n",
				c->collapsed, c->blocks, c->refused, c->busy, c->nomem);
		print_recovery_access(r, c, out);
		fprintf(out, "    series (s host%%):");
		for (k = 0; k < c->n && k < 16; k++)
			fprintf(out, " %.1f %.1f%s", c->series[k].t_s, c->series[k].huge_pct, k + 1 < c->n ? "," : "");
		fprintf(out, "%s\n", c->n > 16 ? " ..." : "");
	}
}

/* that the host-cold repetitions were host-cold: the QEMU process faulted during them */
static void print_cold_evidence(const struct results *r, FILE *out)
{
	bool head = false;
	size_t i;

	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		const struct metric *m = cell_metric_find(c, "host_qemu_minflt");
		const struct metric *sz = cell_metric_find(c, "rss_bytes");

		if (!wltraits_cold(c->workload, c->variant) || !m || !m->s.n || !sz || !sz->s.n)
			continue;
		if (!head)
			fprintf(out, "\nhost-cold evidence (QEMU minor faults during each host-cold repetition;"
				     " a host-cold buffer of N 4K pages needs N on host 4K pages, N/512 on host 2M):\n");
		head = true;
		fprintf(out, "  host %s/%s, guest %s: %.0f faults per repetition for %.0f pages\n", c->host_thp,
			c->prefault, c->guest_thp, m->s.mean, sz->s.mean / 4096.0);
	}
}

static void print_table(const struct results *r, FILE *out)
{
	size_t i;
	bool any_invalid = false, any_left = false;

	fprintf(out, "thpeval %s  accel=%s  host kernel %s  %s\n", r->thpeval_version, r->accel,
		r->host.kernel, r->host.cpu_model);
	fprintf(out, "reps=%u per boot (+%u warm-up)  boots=%u per host setting", r->settings.reps,
		r->settings.warmup, r->settings.rounds);
	if (r->settings.target_ci_host > 0)
		fprintf(out, " (CI target host-side %.3g, guest-side %.3g points: %s)", r->settings.target_ci_host,
			r->settings.target_ci_guest, r->settings.stopped[0] ? r->settings.stopped : "not judged");
	if (r->settings.stopped_at_minimum)
		fprintf(out, ", at the minimum");
	for (i = 0; i < r->settings.nnot_chased; i++) {
		const struct not_chased *nc = &r->settings.not_chased[i];

		fprintf(out, "\nnot chased: %s: about %u boots for +/-%.3g points, the budget allows %u",
			nc->effect, nc->boots_needed, nc->target_pct, nc->boots_allowed);
	}
	fprintf(out, "\nmemory=%llu MiB  buffer=%llu MiB  values: geometric mean ±95%% CI on the log scale, in %% "
		     "(over boot means where a cell ran in 2 or more boots, else over repetitions)\n\n",
		r->settings.memory_bytes >> 20, r->settings.size_bytes >> 20);
	fprintf(out, "%-9s %-9s %-9s %-16s %-20s %-18s %7s %7s %3s  %s\n", "host_thp", "alloc", "guest_thp",
		"workload", "fault ns/4K", "access ns", "host%", "guest%", "n", "valid");
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		/* the phase columns: the split's metrics (lib/wltraits.h), n/a for other workloads */
		const struct wl_split *sp = wltraits_split(c->workload);
		const char *fm = sp ? sp->fault_metric : NULL, *am = sp ? sp->access_metric : NULL;
		bool cold = wltraits_cold(c->workload, c->variant), split = sp && !strcmp(c->variant, sp->variant);
		char f[40], a[40], hp[16], gp[16], w[64];

		if (c->variant[0] && !cold && !split)
			continue;	/* sub-measurements are in results.json */
		snprintf(w, sizeof(w), "%s%s%s%s", c->target[0] == 'h' ? "host:" : "", c->workload,
			 cold ? ":host-cold" : "", !strcmp(c->host_state, "ksm") ? "@ksm" : "");
		fmt_ci(f, sizeof(f), fm ? cell_metric_find(c, fm) : NULL, 1);
		fmt_ci(a, sizeof(a), am ? cell_metric_find(c, am) : NULL, 1);
		add_unit(f, sizeof(f), fm);
		add_unit(a, sizeof(a), am);
		fmt_pct(hp, sizeof(hp), &c->host_cov);
		fmt_pct(gp, sizeof(gp), &c->guest_cov);
		fprintf(out, "%-9s %-9s %-9s %-16s %-20s %-18s %7s %7s %3u  %s\n", c->host_thp, c->prefault,
			c->guest_thp, w, f, a, hp, gp, c->reps_ok, c->valid ? "yes" : "NO");
		if (!c->valid)
			any_invalid = true;
		any_left |= c->valid && c->nleft;
	}
	if (any_left) {
		fprintf(out, "\nboots left out of valid cells (their treatment evidence failed):\n");
		for (i = 0; i < r->ncells; i++) {
			const struct cell *c = &r->cells[i];
			size_t k;

			for (k = 0; c->valid && k < c->nleft; k++)
				fprintf(out, "  host %s/%s, guest %s, %s%s%s: boot %u of %u: %s\n", c->host_thp, c->prefault,
					c->guest_thp, c->workload, c->variant[0] ? ":" : "", c->variant, c->left[k].boot,
					c->boots_run, c->left[k].reason);
		}
	}
	if (any_invalid) {
		fprintf(out, "\ninvalid cells:\n");
		for (i = 0; i < r->ncells; i++)
			if (!r->cells[i].valid)
				fprintf(out, "  host %s/%s, guest %s, %s: %s\n", r->cells[i].host_thp,
					r->cells[i].prefault, r->cells[i].guest_thp, r->cells[i].workload,
					r->cells[i].invalid_reason);
	}
	print_cold_evidence(r, out);
	print_recovery(r, out);
	migreport_text(r, out);
	balloon_print(r, out);
	if (r->effects)
		effects_print(r->effects, out);
	abtest_print(r->ab, out);
	ksm_print(r, out);
	if (sizing_applies(r))
		sizing_print(r, out);
	fprintf(out, "\nhost%% = share of guest RAM on host huge pages (QEMU smaps AnonHugePages/Rss);"
		     " guest%% = share of the workload buffer on guest huge pages;\n"
		     "memset:host-cold = first touch of guest memory the host never backed;"
		     " tlb access = ns per load at the largest working set (2M-asking region)\n");
}

/* the names and reasons in it come from a results.json or a guest: escaped as a whole */
void results_print_table(const struct results *r, FILE *out)
{
	struct textesc_sink s;
	FILE *m = textesc_open(&s, out, TEXTESC_KEEP_LINES);

	if (m)
		print_table(r, m);
	textesc_close(&s);
}

static void print_var(const struct effects *fx, const char *w, FILE *out)
{
	size_t i;
	bool head = false;

	for (i = 0; i < fx->nvar; i++) {
		const struct effect_var *v = &fx->var[i];
		char within[16] = "n/a", between[16] = "n/a";

		if (strcmp(v->workload, w))
			continue;
		if (!head) {
			fprintf(out, "\nvariance components: %s (CV of each cell's samples within a boot and of its "
				     "boot means beyond that)\n", w);
			head = true;
		}
		if (isfinite(v->vc.within_cv_pct))
			snprintf(within, sizeof(within), "%.1f%%", v->vc.within_cv_pct);
		if (isfinite(v->vc.between_cv_pct))
			snprintf(between, sizeof(between), "%.1f%%", v->vc.between_cv_pct);
		fprintf(out, "  %-44s %-16s %2zu boots %3zu samples  within %-7s between %s\n", v->label,
			v->metric, v->vc.boots, v->vc.samples, within, between);
	}
}

void effects_print(const struct effects *fx, FILE *out)
{
	size_t i;

	for (i = 0; i < fx->n; i++) {
		const struct effect *e = &fx->e[i];
		const struct effect *p = i ? &fx->e[i - 1] : NULL;
		char head[80], what[40];

		if (!p && fx->tcg)
			fprintf(out, "\nnote: %s\n", EFFECTS_TCG_NOTE);
		if (!p && fx->nested)
			fprintf(out, "%snote: %s\n", fx->tcg ? "" : "\n", EFFECTS_NESTED_NOTE);
		if (!p || strcmp(p->workload, e->workload))
			print_var(fx, e->workload, out);
		if (!p || strcmp(p->workload, e->workload) || strcmp(p->host_thp, e->host_thp) ||
		    strcmp(p->guest_thp, e->guest_thp) || strcmp(p->host_state, e->host_state)) {
			fprintf(out, "\nsplit: %s, host THP %s / guest THP %s against never%s%s (%% of time "
				     "saved with THP, 95%% CI on the log scale; host-side over boots)\n",
				e->workload, e->host_thp, e->guest_thp, strcmp(e->host_state, "fresh") ? ", host " : "",
				strcmp(e->host_state, "fresh") ? e->host_state : "");
			fprintf(out, "  %-12s %-24s %-18s %-30s %s\n", "side", "component", "metric", "effect",
				"share of total");
		}
		if (e->at_guest[0])
			snprintf(what, sizeof(what), "%s (guest %s)", e->component, e->at_guest);
		else
			snprintf(what, sizeof(what), "%s", e->component);
		snprintf(head, sizeof(head), "  %-12s %-24s %-18s", e->side, what, e->metric);
		if (!e->available) {
			fprintf(out, "%s not available: %s\n", head, e->note);
		} else {
			char eff[80], share[32] = "";

			snprintf(eff, sizeof(eff), "%+.1f%% [%+.1f, %+.1f]%s", e->estimate_pct, e->ci95_low_pct,
				 e->ci95_high_pct, e->significant ? "" : " n.s.");
			if (isfinite(e->share_pct))
				snprintf(share, sizeof(share), "%.0f%%", e->share_pct);
			char rounds[48] = "";

			/* host-side: rounds as blocks or not, and the round correlation that chose it */
			if (e->round_estimator[0] && isfinite(e->round_corr))
				snprintf(rounds, sizeof(rounds), "%s(%s, round r %.2f)", share[0] ? " " : "",
					 strcmp(e->round_estimator, "unpaired") ? "rounds as blocks" : "unpaired",
					 e->round_corr);
			fprintf(out, "%s %-30s %s%s%s\n", head, eff, share,
				 strcmp(e->method, "one-boot") ? "" : (share[0] ? " (one boot)" : "(one boot)"),
				 rounds);
		}
	}
}

/* ---- text ---------------------------------------------------------------------------- */

int report_text(const struct report_input *in, FILE *out, struct err *e)
{
	struct textesc_sink s;
	FILE *m = textesc_open(&s, out, TEXTESC_KEEP_LINES);

	if (!m)
		return err_set(e, -ENOMEM, "out of memory rendering text");
	print_table(in->res, m);
	if (in->cmp) {
		fprintf(m, "\nagainst the baseline %s:\n", in->base_name ? in->base_name : "");
		compare_print(in->cmp, in->base, in->res, m);
	}
	if (textesc_close(&s))
		return err_set(e, -EIO, "cannot write the text report");
	return 0;
}
