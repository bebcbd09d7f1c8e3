#include "orchestrator/report/sizing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/report/htmlesc.h"

static void fmt_eff(char *buf, size_t len, const struct sz_effect *e)
{
	if (!e->available)
		snprintf(buf, len, "n/a");
	else
		snprintf(buf, len, "%+.1f%% [%+.1f, %+.1f]", e->est, e->lo, e->hi);
}

static void fmt_pct(char *buf, size_t len, double v)
{
	if (isfinite(v))
		snprintf(buf, len, "%.0f%%", v);
	else
		snprintf(buf, len, "n/a");
}

static void fmt_kb(char *buf, size_t len, unsigned kb)
{
	if (kb >= 1024 && kb % 1024 == 0)
		snprintf(buf, len, "%uM", kb / 1024);
	else
		snprintf(buf, len, "%uK", kb);
}

static void frag_lines(const struct results *r, FILE *out)
{
	size_t i;

	for (i = 0; i < r->nfrags; i++) {
		const struct frag_log *f = &r->frags[i];

		if (f->error[0]) {
			fprintf(out, "  fragmented arm (host %s, round %u): failed: %s\n", f->host_thp, f->round + 1, f->error);
			continue;
		}
		fprintf(out,
			"  fragmented arm (host %s/%s, round %u): %llu MiB fragmented in %.1f s; free memory in >= 2M blocks"
			" %llu MiB before, %llu MiB after fragmenting, %s once undone (%s%s)\n",
			f->host_thp, f->prefault, f->round + 1, f->bytes >> 20, f->seconds, f->free2m_before_kb >> 10,
			f->free2m_after_kb >> 10, f->have_undone ? "see below" : "not recorded",
			f->restored ? "restored" : "NOT restored", f->compacted ? ", compact_memory needed" : "");
		fprintf(out, "    unusable free space index for 2M (share of free memory in smaller blocks): %.1f%% before,"
			" %.1f%% after fragmenting\n",
			buddy_unusable_pct(f->buddy_before, f->orders, 9), buddy_unusable_pct(f->buddy_after, f->orders, 9));
		if (f->proactiveness[0])
			fprintf(out, "    proactive compaction off for the arm (vm.compaction_proactiveness %s -> 0, put back"
				" after the undo); compaction scanned %llu pages while fragmenting%s\n",
				f->proactiveness, f->frag_compact_scanned,
				f->pcp_low ? "; per-CPU free lists kept short while fragmenting" : "");
		else
			fprintf(out, "    compaction scanned %llu pages while fragmenting (no vm.compaction_proactiveness"
				" on this kernel)\n", f->frag_compact_scanned);
		if (f->have_undone)
			fprintf(out,
				"    undone: %llu MiB in >= 2M blocks, unusable index %.1f%%; MemAvailable %llu MiB before,"
				" %llu MiB once undone\n",
				f->free2m_undone_kb >> 10, buddy_unusable_pct(f->buddy_undone, f->orders, 9),
				f->avail_before_kb >> 10, f->avail_undone_kb >> 10);
		if (f->have_undone && f->pcp_drained)
			fprintf(out, "    the per-CPU free lists were emptied on undo (vm.percpu_pagelist_high_fraction raised,"
				" then put back): freed pages wait there before they merge into 2M blocks\n");
		if (f->have_undone && f->compacted)
			fprintf(out, "    compact_memory ran on undo: its migrate scanner looked at %llu pages\n",
				f->compact_scanned);
		if (f->have_undone && !f->restored)
			fprintf(out, "    not all 2M blocks came back: the holder is gone and its memory free, but pages"
				" that landed in the holes while the guests ran (page cache, kernel objects that"
				" compaction cannot move) keep those blocks split; the kernel merges them as they are"
				" freed\n");
		fprintf(out,
			"    while the guests ran: compact_stall %llu, compact_success %llu, compact_fail %llu,"
			" compact_migrate_scanned %llu, pgmigrate_success %llu, pgsteal_direct %llu, thp_fault_alloc %llu,"
			" thp_fault_fallback %llu (host-wide)\n",
			f->compact_stall, f->compact_success, f->compact_fail, f->compact_scanned_guests, f->pgmigrate_success,
			f->pgsteal_direct, f->thp_fault_alloc, f->thp_fault_fallback);
	}
}

/* why the fragmented host may back as much guest memory with huge pages as the fresh one */
static void frag_why(const struct results *r, const struct sizing *s, FILE *out)
{
	unsigned long long succ = 0, stall = 0, after = 0, migrated = 0, reclaimed = 0;
	size_t i, k;
	bool less = false, same = false, cap = false;

	for (i = 0; i < r->nfrags; i++) {
		cap |= !strcmp(r->frags[i].stopped, "cap");
		succ += r->frags[i].compact_success;
		stall += r->frags[i].compact_stall;
		migrated += r->frags[i].pgmigrate_success;
		reclaimed += r->frags[i].pgsteal_direct;
		if (r->frags[i].free2m_after_kb > after)
			after = r->frags[i].free2m_after_kb;
	}
	for (i = 0; i < s->nrows; i++) {
		if (strcmp(s->rows[i].host_state, "fragmented") || !isfinite(s->rows[i].cov_pct) ||
		    !strcmp(s->rows[i].host_thp, "never"))
			continue;
		for (k = 0; k < s->nrows; k++)
			if (!strcmp(s->rows[k].host_state, "fresh") && !strcmp(s->rows[k].host_thp, s->rows[i].host_thp) &&
			    !strcmp(s->rows[k].guest_thp, s->rows[i].guest_thp) && isfinite(s->rows[k].cov_pct)) {
				if (s->rows[i].cov_pct < s->rows[k].cov_pct - 1)
					less = true;
				else
					same = true;
			}
	}
	if (less)
		fprintf(out, "  the fragmented host backs less guest RAM with huge pages than the fresh one\n");
	if (same)
		fprintf(out,
			"  where the fragmented host backed as much guest RAM with huge pages: up to %llu MiB of free memory was"
			" still in 2M blocks after fragmenting; the kernel rebuilt more on demand: while the guests ran (all"
			" fragmented arms, host-wide) the guests' huge-page faults stalled %llu times in direct compaction"
			" (%llu succeeded), %llu pages were migrated and direct reclaim freed %llu; a fault that reclaims also"
			" empties the per-CPU free lists, where freed pages wait before they merge into 2M blocks\n",
			after >> 10, stall, succ, migrated, reclaimed);
	if (same && cap)
		fprintf(out,
			"  the fragmenter reached its cap (MemTotal) while chunks still got huge pages: this host kept bringing"
			" free 2M blocks into the buddy allocator as memory was demanded (e.g. lazily initialised memory)\n");
}

void sizing_print(const struct results *r, FILE *out)
{
	struct sizing *s = malloc(sizeof(*s));
	size_t i;

	if (!s)
		return;
	sizing_compute(r, s);
	fprintf(out, "\nsizing: %s, %u guest%s at once, host memory %s (%% faster than host never / guest never"
		     " on the same host, 95%% CI; retained = of the fresh host's effect)\n",
		s->workload, r->settings.guests ? r->settings.guests : 1, r->settings.guests > 1 ? "s" : "",
		r->settings.host_state_list[0] ? r->settings.host_state_list : "fresh");
	fprintf(out, "  %-10s %-6s %-13s %-6s %-7s %-22s %-26s %-26s %-9s %s\n", "host mem", "guests", "host THP",
		"guest", "host%", "per guest", "fault phase", "access phase", "retained", "");
	for (i = 0; i < s->nrows; i++) {
		const struct sz_row *w = &s->rows[i];
		char cov[16], fe[48], ae[48], rf[16], ra[16], ret[40];

		fmt_pct(cov, sizeof(cov), w->cov_pct);
		fmt_eff(fe, sizeof(fe), &w->fault);
		fmt_eff(ae, sizeof(ae), &w->access);
		fmt_pct(rf, sizeof(rf), w->fault_retained_pct);
		fmt_pct(ra, sizeof(ra), w->access_retained_pct);
		snprintf(ret, sizeof(ret), "%s/%s", rf, ra);
		fprintf(out, "  %-10s %-6u %-13s %-6s %-7s %-22s %-26s %-26s %-9s%s\n", w->host_state, w->guests, w->host_thp,
			w->guest_thp, cov, w->per_guest[0] ? w->per_guest : "-", fe, ae,
			strcmp(w->host_state, "fresh") ? ret : "-",
			strcmp(w->cov_source, "smaps") ? " (host% from host-wide mTHP stats)" : "");
	}
	frag_lines(r, out);
	frag_why(r, s, out);
	if (s->nsizes) {
		char a[16];

		fprintf(out, "\nmTHP sweep: host THP one size at a time (every other size and 'enabled' never), guest THP"
			     " never, against host never (%% faster, 95%% CI)\n");
		fprintf(out, "  %-7s %-14s %-8s %-26s %-26s %s\n", "size", "host THP", "host%", "fault phase (prefault)",
			"access phase (TLB)", "coverage from");
		for (i = 0; i < s->nsizes; i++) {
			const struct sz_size *z = &s->sizes[i];
			char cov[16], fe[48], ae[48];

			fmt_kb(a, sizeof(a), z->kb);
			fmt_pct(cov, sizeof(cov), z->cov_pct);
			fmt_eff(fe, sizeof(fe), &z->fault);
			fmt_eff(ae, sizeof(ae), &z->access);
			fprintf(out, "  %-7s %-14s %-8s %-26s %-26s %s\n", a, z->host_thp, cov, fe, ae,
				strcmp(z->cov_source, "smaps") ? "hugepages-<N>kB/stats (host-wide)" : "smaps AnonHugePages");
		}
		if (s->saturate_kb) {
			fmt_kb(a, sizeof(a), s->saturate_kb);
			fprintf(out, "  prefault benefit saturates at %s (first size with >= 90%% of the largest fault-phase effect, among sizes whose effect is above 0 with 95%% confidence)\n", a);
		} else {
			fprintf(out, "  prefault benefit: no size shows a fault-phase effect above 0 with 95%% confidence: no saturation point at this precision (more --reps)\n");
		}
		if (s->tlb_start_kb) {
			fmt_kb(a, sizeof(a), s->tlb_start_kb);
			fprintf(out, "  TLB benefit starts at %s (first size whose access-phase effect is above 0 with 95%% confidence)\n", a);
		} else {
			fprintf(out, "  TLB benefit: no size shows an access-phase effect above 0 with 95%% confidence\n");
		}
	}
	if (r->settings.mthp_sweep)
		fprintf(out, "  guest-side sweep: %s\n", r->settings.guest_mthp[0] ? r->settings.guest_mthp : "guest kernel not probed");
	free(s);
}

static void td(FILE *o, const char *s)
{
	fputs("<td>", o);
	html_esc(o, s);
	fputs("</td>", o);
}

/* the rows: host memory x guests x host THP x guest THP, coverage, effects and what is retained */
static void sizing_html_rows(const struct sizing *s, FILE *o)
{
	char buf[256];
	size_t i;

	fputs("<table>\n<tr><th>host memory</th><th>guests</th><th>host THP</th><th>guest THP</th><th>host huge %</th>"
	      "<th>per guest</th><th>fault phase</th><th>access phase</th><th>retained (fault/access)</th></tr>\n", o);
	for (i = 0; i < s->nrows; i++) {
		const struct sz_row *w = &s->rows[i];
		char a[48], b[48];

		fputs("<tr>", o);
		td(o, w->host_state);
		snprintf(buf, sizeof(buf), "%u", w->guests);
		td(o, buf);
		td(o, w->host_thp);
		td(o, w->guest_thp);
		fmt_pct(buf, sizeof(buf), w->cov_pct);
		if (strcmp(w->cov_source, "smaps"))
			strcat(buf, " (mTHP stats)");
		td(o, buf);
		td(o, w->per_guest[0] ? w->per_guest : "-");
		fmt_eff(buf, sizeof(buf), &w->fault);
		td(o, buf);
		fmt_eff(buf, sizeof(buf), &w->access);
		td(o, buf);
		fmt_pct(a, sizeof(a), w->fault_retained_pct);
		fmt_pct(b, sizeof(b), w->access_retained_pct);
		snprintf(buf, sizeof(buf), "%s / %s", a, b);
		td(o, strcmp(w->host_state, "fresh") ? buf : "-");
		fputs("</tr>\n", o);
	}
	fputs("</table>\n", o);
}

/* the fragmented arms: how much was fragmented, free 2M before, after and undone, compaction */
static void sizing_html_frags(const struct results *r, FILE *o)
{
	char buf[256];
	size_t i;

	fputs("<table>\n<tr><th>fragmented arm</th><th>fragmented</th><th>free in 2M blocks: before</th><th>after</th>"
	      "<th>undone</th><th>compaction while guests ran</th></tr>\n", o);
	for (i = 0; i < r->nfrags; i++) {
		const struct frag_log *f = &r->frags[i];

		fputs("<tr>", o);
		snprintf(buf, sizeof(buf), "host %s/%s, round %u", f->host_thp, f->prefault, f->round + 1);
		td(o, buf);
		if (f->error[0]) {
			td(o, f->error);
			fputs("<td></td><td></td><td></td><td></td></tr>\n", o);
			continue;
		}
		snprintf(buf, sizeof(buf), "%llu MiB in %.1f s%s%s%s", f->bytes >> 20, f->seconds,
			 f->proactiveness[0] ? " (proactive compaction " : "", f->proactiveness[0] ? f->proactiveness : "",
			 f->proactiveness[0] ? " -> 0)" : "");
		td(o, buf);
		snprintf(buf, sizeof(buf), "%llu MiB (unusable %.1f%%)", f->free2m_before_kb >> 10,
			 buddy_unusable_pct(f->buddy_before, f->orders, 9));
		td(o, buf);
		snprintf(buf, sizeof(buf), "%llu MiB (unusable %.1f%%)", f->free2m_after_kb >> 10,
			 buddy_unusable_pct(f->buddy_after, f->orders, 9));
		td(o, buf);
		snprintf(buf, sizeof(buf), "%llu MiB (unusable %.1f%%, %s%s%s)", f->free2m_undone_kb >> 10,
			 buddy_unusable_pct(f->buddy_undone, f->orders, 9), f->restored ? "restored" : "NOT restored",
			 f->pcp_drained ? ", per-CPU lists emptied" : "", f->compacted ? ", compacted" : "");
		td(o, f->have_undone ? buf : "not recorded");
		snprintf(buf, sizeof(buf),
			 "stall %llu, success %llu, fail %llu; migrated %llu, direct reclaim %llu; thp_fault_alloc %llu,"
			 " fallback %llu",
			 f->compact_stall, f->compact_success, f->compact_fail, f->pgmigrate_success, f->pgsteal_direct,
			 f->thp_fault_alloc, f->thp_fault_fallback);
		td(o, buf);
		fputs("</tr>\n", o);
	}
	fputs("</table>\n", o);
}

/* the per-size mTHP split and where each benefit saturates or starts */
static void sizing_html_sizes(const struct sizing *s, FILE *o)
{
	char buf[256];
	size_t i;

	fputs("<h3>Per-size mTHP split</h3>\n<table>\n<tr><th>size</th><th>host THP</th><th>host huge %</th>"
	      "<th>fault phase (prefault)</th><th>access phase (TLB)</th><th>coverage from</th></tr>\n", o);
	for (i = 0; i < s->nsizes; i++) {
		const struct sz_size *z = &s->sizes[i];

		fputs("<tr>", o);
		fmt_kb(buf, sizeof(buf), z->kb);
		td(o, buf);
		td(o, z->host_thp);
		fmt_pct(buf, sizeof(buf), z->cov_pct);
		td(o, buf);
		fmt_eff(buf, sizeof(buf), &z->fault);
		td(o, buf);
		fmt_eff(buf, sizeof(buf), &z->access);
		td(o, buf);
		td(o, strcmp(z->cov_source, "smaps") ? "hugepages-<N>kB/stats (host-wide)" : "smaps AnonHugePages");
		fputs("</tr>\n", o);
	}
	fputs("</table>\n<p class=\"sub\">", o);
	if (s->saturate_kb) {
		fmt_kb(buf, sizeof(buf), s->saturate_kb);
		fprintf(o, "Prefault benefit saturates at %s. ", buf);
	} else {
		fputs("No size shows a fault-phase effect above 0 with 95% confidence: no saturation point at this precision. ", o);
	}
	if (s->tlb_start_kb) {
		fmt_kb(buf, sizeof(buf), s->tlb_start_kb);
		fprintf(o, "TLB benefit starts at %s.", buf);
	} else {
		fputs("No size shows an access-phase effect above 0 with 95% confidence.", o);
	}
	fputs("</p>\n", o);
}

void sizing_html(const struct results *r, FILE *o)
{
	struct sizing *s = malloc(sizeof(*s));

	if (!s)
		return;
	sizing_compute(r, s);
	fprintf(o, "<p class=\"sub\">%u guest%s at once; host memory %s. Effects are %% faster than host never /"
		   " guest never on the same host (95%% CI); retained is the share of the fresh host's effect.</p>\n",
		r->settings.guests ? r->settings.guests : 1, r->settings.guests > 1 ? "s" : "",
		r->settings.host_state_list[0] ? r->settings.host_state_list : "fresh");
	sizing_html_rows(s, o);
	if (r->nfrags)
		sizing_html_frags(r, o);
	if (s->nsizes)
		sizing_html_sizes(s, o);
	if (r->settings.mthp_sweep) {
		fputs("<p class=\"sub\">Guest-side sweep: ", o);
		html_esc(o, r->settings.guest_mthp[0] ? r->settings.guest_mthp : "guest kernel not probed");
		fputs("</p>\n", o);
	}
	free(s);
}
