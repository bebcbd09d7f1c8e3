/*
 * abrow: one row of an on-against-off comparison (struct ab_row: the A/B
 * emulator axis in abtest.c, KSM on against off in ksmfx.c): its empty
 * state, its interval and p from a log difference, Holm over a family.
 */
#include "orchestrator/analysis/abrow.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "lib/stats.h"
#include "orchestrator/analysis/compare.h"

void ab_row_init(struct ab_row *row, const char *what)
{
	memset(row, 0, sizeof(*row));
	snprintf(row->what, sizeof(row->what), "%s", what);
	row->a = row->b = row->log_ratio = row->log_se = row->df = NAN;
	row->ratio = row->ratio_lo = row->ratio_hi = row->p = row->p_holm = NAN;
}

/* the interval and the two-sided p of a log difference d with its SE and df */
void ab_row_finish(struct ab_row *row, double d, double se, double df)
{
	double half;

	if (!isfinite(d) || !(se >= 0) || !(df > 0)) {
		if (!row->note[0])
			snprintf(row->note, sizeof(row->note), "no interval");
		return;
	}
	half = t975(df) * se;
	row->log_ratio = d;
	row->log_se = se;
	row->df = df;
	row->ratio = exp(d);
	row->ratio_lo = exp(d - half);
	row->ratio_hi = exp(d + half);
	row->p = se > 0 ? student_t_p2(d / se, df) : (d == 0 ? 1 : 0);
	row->tested = true;
}

/* Holm's step-down over the tested rows of one family: differs where the adjusted p < 0.05 */
size_t ab_holm(struct abtest *out, const char *what, size_t *tested)
{
	size_t idx[AB_MAX_ROWS], m = 0, i, j, ndiff = 0;
	double run = 0;

	for (i = 0; i < out->n; i++)
		if (!strcmp(out->rows[i].what, what) && out->rows[i].tested && isfinite(out->rows[i].p))
			idx[m++] = i;
	for (i = 1; i < m; i++)
		for (j = i; j > 0 && out->rows[idx[j]].p < out->rows[idx[j - 1]].p; j--) {
			size_t t = idx[j];

			idx[j] = idx[j - 1];
			idx[j - 1] = t;
		}
	for (i = 0; i < m; i++) {
		struct ab_row *row = &out->rows[idx[i]];

		run = fmax(run, fmin(1.0, (double)(m - i) * row->p));
		row->p_holm = run;
		row->differs = run < 0.05;
		ndiff += row->differs;
	}
	*tested = m;
	return ndiff;
}
