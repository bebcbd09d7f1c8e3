#include "orchestrator/analysis/balloon.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/stats.h"
#include "orchestrator/analysis/boots.h"
#include "orchestrator/model/balloon.h"

#define METRIC "refault_ns_per_4k"

static const char *const arm_names[2] = { "none", "reporting" };

static const char *or_def(const char *s, const char *def)
{
	return s[0] ? s : def;
}

static int arm_of(const char *balloon)
{
	return !strcmp(or_def(balloon, "none"), "reporting") ? 1 : !strcmp(or_def(balloon, "none"), "none") ? 0 : -1;
}

static struct balloon_row *row_for(struct balloon_row *out, size_t *n, size_t max, const char *host,
				   const char *pf, const char *guest, const char *hs)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp(out[i].host_thp, host) && !strcmp(out[i].prefault, pf) && !strcmp(out[i].guest_thp, guest) &&
		    !strcmp(out[i].host_state, hs))
			return &out[i];
	if (*n >= max)
		return NULL;
	memset(&out[*n], 0, sizeof(out[*n]));
	snprintf(out[*n].host_thp, sizeof(out[*n].host_thp), "%s", host);
	snprintf(out[*n].prefault, sizeof(out[*n].prefault), "%s", pf);
	snprintf(out[*n].guest_thp, sizeof(out[*n].guest_thp), "%s", guest);
	snprintf(out[*n].host_state, sizeof(out[*n].host_state), "%s", hs);
	return &out[(*n)++];
}

/* per-boot mean logs of the cell's re-fault time: their mean, the variance of that mean, df */
static bool arm_logs(const struct metric *m, double *mean, double *var, size_t *nb)
{
	struct boot_mean bm[BOOTS_MAX];
	double s = 0, ss = 0;
	size_t i;

	if (boots_group(m, bm, BOOTS_MAX, nb) || *nb == 0)
		return false;
	for (i = 0; i < *nb; i++)
		s += bm[i].mean_log;
	*mean = s / (double)*nb;
	for (i = 0; i < *nb; i++)
		ss += (bm[i].mean_log - *mean) * (bm[i].mean_log - *mean);
	*var = *nb > 1 ? ss / (double)(*nb - 1) / (double)*nb : NAN;
	return true;
}

static void add_cell(const struct cell *c, struct balloon_row *row, int a, double *lm, double *lv)
{
	const struct metric *m = cell_metric_find(c, METRIC);
	struct balloon_arm_sum *s = &row->arm[a];
	size_t nb = 0;
	double h;

	if (!m || m->n == 0 || !arm_logs(m, &lm[a], &lv[a], &nb))
		return;
	s->have = true;
	s->boots = (unsigned)nb;
	s->refault_gm = exp(lm[a]);
	h = nb > 1 ? t975((double)(nb - 1)) * sqrt(lv[a]) : NAN;
	s->refault_lo = exp(lm[a] - h);
	s->refault_hi = exp(lm[a] + h);
}

/* the host's windows of this row and arm: means of what it saw */
static void add_windows(const struct results *r, struct balloon_row *row, int a)
{
	struct balloon_arm_sum *s = &row->arm[a];
	double sum[9] = { 0 };
	unsigned ncov[3] = { 0 };
	size_t i;

	for (i = 0; i < r->nballoons; i++) {
		const struct balloon_log *b = &r->balloons[i];

		if (arm_of(b->balloon) != a || strcmp(b->host_thp, row->host_thp) || strcmp(b->prefault, row->prefault) ||
		    strcmp(b->guest_thp, row->guest_thp) || strcmp(or_def(b->host_state, "fresh"), row->host_state) ||
		    b->error[0] || !isfinite(b->rss_drop_kb))
			continue;
		s->windows++;
		s->half_drops += 2 * b->rss_drop_kb >= (double)b->freed_kb;
		sum[0] += (double)b->freed_kb / 1024;
		sum[1] += (double)b->rss_before_kb / 1024;
		sum[2] += (double)b->rss_after_free_kb / 1024;
		sum[3] += (double)b->rss_after_retouch_kb / 1024;
		sum[4] += b->rss_drop_kb / 1024;
		sum[5] += b->drop_pct_of_freed;
		if (isfinite(b->cov_before_pct))
			sum[6] += b->cov_before_pct, ncov[0]++;
		if (isfinite(b->cov_after_free_pct))
			sum[7] += b->cov_after_free_pct, ncov[1]++;
		if (isfinite(b->cov_after_retouch_pct))
			sum[8] += b->cov_after_retouch_pct, ncov[2]++;
	}
	if (!s->windows) {
		s->freed_mib = s->rss_before_mib = s->rss_after_free_mib = s->rss_after_retouch_mib = NAN;
		s->drop_mib = s->drop_pct = NAN;
	} else {
		s->freed_mib = sum[0] / s->windows;
		s->rss_before_mib = sum[1] / s->windows;
		s->rss_after_free_mib = sum[2] / s->windows;
		s->rss_after_retouch_mib = sum[3] / s->windows;
		s->drop_mib = sum[4] / s->windows;
		s->drop_pct = sum[5] / s->windows;
	}
	s->cov_before_pct = ncov[0] ? sum[6] / ncov[0] : NAN;
	s->cov_after_free_pct = ncov[1] ? sum[7] / ncov[1] : NAN;
	s->cov_after_retouch_pct = ncov[2] ? sum[8] / ncov[2] : NAN;
}

static void effect(struct balloon_row *row, const double *lm, const double *lv)
{
	double d, v, df, h;

	if (!row->arm[0].have || !row->arm[1].have) {
		snprintf(row->note, sizeof(row->note), "no %s arm with the re-fault step",
			 row->arm[0].have ? arm_names[1] : arm_names[0]);
		return;
	}
	if (row->arm[0].boots < 2 || row->arm[1].boots < 2) {
		snprintf(row->note, sizeof(row->note), "an arm ran %u boot: the effect replicates over boots and "
			 "needs 2 or more per arm (--boots)", row->arm[0].boots < 2 ? row->arm[0].boots :
			 row->arm[1].boots);
		return;
	}
	d = lm[1] - lm[0];
	v = lv[0] + lv[1];
	df = v * v / (lv[0] * lv[0] / (row->arm[0].boots - 1) + lv[1] * lv[1] / (row->arm[1].boots - 1));
	if (!isfinite(df))
		df = (double)(row->arm[0].boots + row->arm[1].boots - 2);
	h = t975(df) * sqrt(v);
	row->have_effect = true;
	row->df = df;
	row->ratio = exp(d);
	row->ratio_lo = exp(d - h);
	row->ratio_hi = exp(d + h);
}

size_t balloon_rows(const struct results *r, struct balloon_row *out, size_t max)
{
	double lm[BALLOON_ROWS_MAX][2], lv[BALLOON_ROWS_MAX][2];
	size_t n = 0, i;

	if (!strstr(r->settings.balloon_list, "reporting") && !r->nballoons)	/* no reporting arm, no window */
		return 0;
	if (max > BALLOON_ROWS_MAX)
		max = BALLOON_ROWS_MAX;
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		struct balloon_row *row;
		int a = arm_of(c->balloon);

		if (strcmp(c->target, "guest") || c->variant[0] || a < 0 || !cell_metric_find(c, METRIC))
			continue;
		row = row_for(out, &n, max, c->host_thp, or_def(c->prefault, "ondemand"), c->guest_thp,
			      or_def(c->host_state, "fresh"));
		if (row)
			add_cell(c, row, a, lm[row - out], lv[row - out]);
	}
	for (i = 0; i < n; i++) {
		add_windows(r, &out[i], 0);
		add_windows(r, &out[i], 1);
		effect(&out[i], lm[i], lv[i]);
	}
	return n;
}
