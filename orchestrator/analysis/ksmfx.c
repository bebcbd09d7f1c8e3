#include "orchestrator/analysis/ksmfx.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/stats.h"
#include "orchestrator/analysis/abrow.h"
#include "orchestrator/analysis/boots.h"
#include "orchestrator/analysis/compare.h"

#define KSM_ROUNDS_MAX 256

static bool is_ksm(const struct cell *c)
{
	return !strcmp(c->host_state, KSM_HOST_STATE);
}

/* the off arm's cell of c: the same key on the fresh host */
static const struct cell *off_cell(const struct results *r, const struct cell *c)
{
	size_t i;

	for (i = 0; i < r->ncells; i++) {
		const struct cell *o = &r->cells[i];

		if (!strcmp(o->target, c->target) && !strcmp(o->workload, c->workload) &&
		    !strcmp(o->variant, c->variant) && !strcmp(o->host_thp, c->host_thp) &&
		    !strcmp(o->prefault, c->prefault) && !strcmp(o->guest_thp, c->guest_thp) &&
		    (!o->host_state[0] || !strcmp(o->host_state, "fresh")))
			return o;
	}
	return NULL;
}

/* one arm's boot means of metric name in cell c: the log means, their rounds */
struct arm_means {
	size_t n;
	double m[BOOTS_MAX];
	unsigned round[BOOTS_MAX];
};

static int arm_means(const struct results *r, const struct cell *c, const char *name, struct arm_means *out)
{
	const struct metric *m = cell_metric_find(c, name);
	struct boot_mean bm[BOOTS_MAX];
	size_t nb, k;

	out->n = 0;
	if (!m || m->n == 0)
		return -ENODATA;
	if (boots_group(m, bm, BOOTS_MAX, &nb))
		return -EDOM;
	for (k = 0; k < nb; k++) {
		out->m[out->n] = bm[k].mean_log;
		out->round[out->n++] = bm[k].boot < r->nguests ? r->guests[bm[k].boot].round : KSM_ROUNDS_MAX;
	}
	return 0;
}

static void mean_var(const struct arm_means *a, double *mean, double *var)
{
	double s = 0, ss = 0;
	size_t i;

	for (i = 0; i < a->n; i++)
		s += a->m[i];
	*mean = s / (double)a->n;
	for (i = 0; i < a->n; i++)
		ss += (a->m[i] - *mean) * (a->m[i] - *mean);
	*var = a->n > 1 ? ss / (double)(a->n - 1) : NAN;
}

/* the mean of an arm's boots in round rd; false when it has none there */
static bool round_mean(const struct arm_means *a, unsigned rd, double *out)
{
	double s = 0;
	size_t i, n = 0;

	for (i = 0; i < a->n; i++)
		if (a->round[i] == rd) {
			s += a->m[i];
			n++;
		}
	if (n)
		*out = s / (double)n;
	return n > 0;
}

/* on against off: paired by round where 2 or more rounds ran both, else Welch over boots */
static void compare_arms(const struct arm_means *off, const struct arm_means *on, struct ab_row *row)
{
	double mo, vo, mn, vn, dsum = 0, dss = 0, d, se, df;
	unsigned rd, np = 0;

	mean_var(off, &mo, &vo);
	mean_var(on, &mn, &vn);
	row->boots_a = (unsigned)off->n;
	row->boots_b = (unsigned)on->n;
	row->a = exp(mo);
	row->b = exp(mn);
	for (rd = 0; rd < KSM_ROUNDS_MAX; rd++) {
		double x, y;

		if (round_mean(off, rd, &x) && round_mean(on, rd, &y)) {
			np++;
			dsum += y - x;
			dss += (y - x) * (y - x);
		}
	}
	row->pairs = np;
	if (np >= 2) {
		double mean = dsum / np, var = (dss - np * mean * mean) / (np - 1);

		snprintf(row->method, sizeof(row->method), "paired");
		ab_row_finish(row, mean, sqrt(fmax(var, 0) / np), np - 1);
		return;
	}
	if (off->n < 2 || on->n < 2) {
		snprintf(row->note, sizeof(row->note), "fewer than 2 boots of an arm (--guests=2 or more, or --boots)");
		return;
	}
	vo /= (double)off->n;
	vn /= (double)on->n;
	d = mn - mo;
	se = sqrt(vo + vn);
	df = vo + vn > 0 ? (vo + vn) * (vo + vn) / (vo * vo / (double)(off->n - 1) + vn * vn / (double)(on->n - 1))
			 : 1e9;
	snprintf(row->method, sizeof(row->method), "welch");
	ab_row_finish(row, d, se, df);
}

static void ksmfx_compute(const struct results *r, struct abtest *out)
{
	size_t i, j;

	memset(out, 0, sizeof(*out));
	snprintf(out->axis, sizeof(out->axis), "ksm");
	snprintf(out->a, sizeof(out->a), "off");
	snprintf(out->b, sizeof(out->b), "on");
	for (i = 0; i < r->ncells && out->n < AB_MAX_ROWS; i++) {
		const struct cell *c = &r->cells[i], *o;

		if (strcmp(c->target, "guest") || !is_ksm(c))
			continue;
		o = off_cell(r, c);
		for (j = 0; j < c->nmetrics && out->n < AB_MAX_ROWS; j++) {
			const char *name = c->metrics[j].name;
			struct arm_means *mo, *mn;
			struct ab_row *row;

			if (!metric_is_primary(c->workload, name) || metric_direction(name, c) == DIR_INFO)
				continue;
			row = &out->rows[out->n++];
			ab_row_init(row, "metric");
			cell_label(c, row->label, sizeof(row->label));
			snprintf(row->metric, sizeof(row->metric), "%s", name);
			if (!o) {
				snprintf(row->note, sizeof(row->note), "the off arm's cell was not run (--ksm=off,on)");
				continue;
			}
			if (!c->valid || !o->valid) {
				snprintf(row->note, sizeof(row->note), "cell invalid: %.140s",
					 c->valid ? o->invalid_reason : c->invalid_reason);
				continue;
			}
			mo = malloc(sizeof(*mo));
			mn = malloc(sizeof(*mn));
			if (!mo || !mn || arm_means(r, o, name, mo) || arm_means(r, c, name, mn))
				snprintf(row->note, sizeof(row->note), "no positive sample of an arm");
			else
				compare_arms(mo, mn, row);
			free(mo);
			free(mn);
		}
	}
	out->metrics_differ = ab_holm(out, "metric", &out->metrics_tested);
}

int ksmfx_attach(struct results *r, struct err *e)
{
	bool any = false;
	size_t i;

	for (i = 0; i < r->ncells; i++)
		any |= !strcmp(r->cells[i].target, "guest") && is_ksm(&r->cells[i]);
	if (!any) {
		free(r->ksm_fx);
		r->ksm_fx = NULL;
		return 0;
	}
	if (!r->ksm_fx)
		r->ksm_fx = malloc(sizeof(*r->ksm_fx));
	if (!r->ksm_fx)
		return err_set(e, -ENOMEM, "out of memory comparing KSM on with off");
	ksmfx_compute(r, r->ksm_fx);
	return 0;
}
