#include "orchestrator/report/ksm_text.h"

#include <math.h>
#include <string.h>

static void fmt_ns(double v, char *buf, size_t len)
{
	if (isfinite(v))
		snprintf(buf, len, "%.0f ns", v);
	else
		snprintf(buf, len, "n/a");
}

/* each guest's coverage at the first and the last sample */
static void print_coverage(const struct ksm_log *k, FILE *out)
{
	unsigned g;
	size_t i;

	for (g = 0; g < k->guests; g++) {
		const struct ksm_cov_point *first = NULL, *last = NULL;

		for (i = 0; i < k->ncov; i++)
			if (k->cov[i].guest == g) {
				if (!first)
					first = &k->cov[i];
				last = &k->cov[i];
			}
		if (first)
			fprintf(out, "    guest %u: host%% %.1f at %.0f s -> %.1f at %.0f s (%s)\n", k->first_boot + g,
				first->huge_pct, first->t_s, last->huge_pct, last->t_s,
				"QEMU smaps AnonHugePages/Rss of guest RAM");
	}
}

static void print_effects(const struct abtest *fx, FILE *out)
{
	size_t i;

	if (!fx || !fx->n)
		return;
	fprintf(out, "\n  KSM on against off, per primary metric: on/off as a ratio of geometric means over boots, 95%% CI"
		     " on the log scale (paired by round where 2 or more rounds ran both, else Welch over boots);"
		     " DIFFERS = Holm-adjusted p < 0.05\n");
	fprintf(out, "    %-56s %-18s %12s %12s  %-24s %s\n", "cell (KSM on)", "metric", "off", "on", "on/off [95% CI]",
		"verdict");
	for (i = 0; i < fx->n; i++) {
		const struct ab_row *r = &fx->rows[i];
		char a[24], b[24], ratio[48];

		snprintf(a, sizeof(a), isfinite(r->a) ? "%.4g" : "n/a", r->a);
		snprintf(b, sizeof(b), isfinite(r->b) ? "%.4g" : "n/a", r->b);
		if (r->tested)
			snprintf(ratio, sizeof(ratio), "%.3f [%.3f, %.3f]", r->ratio, r->ratio_lo, r->ratio_hi);
		else
			snprintf(ratio, sizeof(ratio), "-");
		fprintf(out, "    %-56.56s %-18s %12s %12s  %-24s ", r->label, r->metric, a, b, ratio);
		if (r->tested)
			fprintf(out, "%s (%s, %u %s)\n", r->differs ? "DIFFERS" : "same", r->method,
				!strcmp(r->method, "paired") ? r->pairs : (r->boots_a < r->boots_b ? r->boots_a : r->boots_b),
				!strcmp(r->method, "paired") ? "rounds" : "boots");
		else
			fprintf(out, "untested: %s\n", r->note);
	}
}

void ksm_print(const struct results *r, FILE *out)
{
	size_t i;

	if (!r->settings.ksm[0])
		return;
	fprintf(out, "\nKSM (--ksm=%s): the on arm's guests ran together with KSM merging their RAM (started after"
		     " every guest's first measured repetition), the off arm's with <nosharepages/> and KSM stopped;"
		     "\nthe on arm's cells are of host state ksm\n", r->settings.ksm);
	for (i = 0; i < r->nksms; i++) {
		const struct ksm_log *k = &r->ksms[i];
		char before[24], after[24];

		fprintf(out, "  %s, host %s/%s, round %u, %u guests: ", k->ksm, k->host_thp, k->prefault, k->round + 1,
			k->guests);
		if (k->error[0])
			fprintf(out, "error: %s; ", k->error);
		fprintf(out, "pages_sharing up to %llu, pages_shared up to %llu, %llu full scan(s)", k->pages_sharing_max,
			k->pages_shared_max, k->full_scans);
		if (isfinite(k->t_sharing_s))
			fprintf(out, ", sharing from %.0f s", k->t_sharing_s);
		fprintf(out, "; host thp_split_pmd +%llu\n", k->thp_split_pmd);
		if (!strcmp(k->ksm, "on")) {
			fmt_ns(k->access_before_ns, before, sizeof(before));
			fmt_ns(k->access_after_ns, after, sizeof(after));
			fprintf(out, "    memset access_ns at guest never: before merging %s (%u reps), after %s (%u reps)", before,
				k->n_before, after, k->n_after);
			if (isfinite(k->waited_s))
				fprintf(out, "; waited %.0f s after the series for merging", k->waited_s);
			fprintf(out, "; scan %llu pages every %llu ms\n", k->pages_to_scan, k->sleep_millisecs);
		}
		print_coverage(k, out);
	}
	print_effects(r->ksm_fx, out);
}
