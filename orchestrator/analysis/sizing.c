#include "orchestrator/analysis/sizing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "host/procfs.h"
#include "host/thp.h"
#include "lib/wltraits.h"
#include "orchestrator/analysis/effects.h"

static const char *state_of(const char *s)
{
	return s && s[0] ? s : "fresh";
}

/*
 * The workload whose split the summary reads, its cells' variant and phase
 * metrics: wltraits_sizing() (lib/wltraits.h). sized_cell: a guest cell of
 * that workload's split, in host state hs.
 */
static bool sized_cell(const struct cell *c, const char *hs)
{
	const struct wl_traits *t = wltraits_sizing();

	return !strcmp(c->target, "guest") && !strcmp(c->workload, t->name) &&
	       !strcmp(c->variant, t->split->variant) && !strcmp(state_of(c->host_state), hs);
}

/* the size of a cell's host THP setting when it is one size alone ("64K:always"), else 0 */
static unsigned host_size_kb(const struct cell *c)
{
	struct thp_setting t;

	return thp_setting_parse(c->host_thp, &t) ? 0 : t.kb;
}

static bool state_present(const struct results *r, const char *hs)
{
	size_t i;

	for (i = 0; i < r->ncells; i++)
		if (!strcmp(r->cells[i].target, "guest") && !strcmp(state_of(r->cells[i].host_state), hs))
			return true;
	return false;
}

bool sizing_applies(const struct results *r)
{
	size_t i;

	if (r->settings.guests > 1 || state_present(r, "fragmented") || r->nfrags)
		return true;
	for (i = 0; i < r->ncells; i++)
		if (host_size_kb(&r->cells[i]))
			return true;
	return false;
}

/* the arm the effects use: ondemand when it was run */
static const char *arm(const struct results *r, const char *hs)
{
	const struct wl_traits *t = wltraits_sizing();

	return effects_find(r, hs, t->name, t->split->variant, "never", "ondemand", "never") ? "ondemand" : "immediate";
}

/* the split's total on this metric (all never against x/y), over boots like every host-side effect */
static void total(const struct results *r, const char *hs, const char *metric, const char *x, const char *y,
		  struct sz_effect *out)
{
	/* against all never: x/y is the total, x/never the host effect, never/y the guest one */
	bool host_off = !strcmp(x, "never"), guest_off = !strcmp(y, "never");
	const char *side = host_off ? "guest" : guest_off ? "host" : "total";
	size_t i;

	out->available = false;
	out->est = out->lo = out->hi = NAN;
	for (i = 0; metric && r->effects && i < r->effects->n; i++) {
		const struct effect *e = &r->effects->e[i];

		if (strcmp(e->side, side) || (!strcmp(e->component, "prefault") && guest_off) ||
		    strcmp(e->workload, wltraits_sizing()->name) || strcmp(e->metric, metric) ||
		    (!host_off && strcmp(e->host_thp, x)) || (!guest_off && strcmp(e->guest_thp, y)) ||
		    strcmp(e->host_state, hs) || !e->available)
			continue;
		out->est = e->estimate_pct;
		out->lo = e->ci95_low_pct;
		out->hi = e->ci95_high_pct;
		out->available = true;
		return;
	}
}

static void per_guest(const struct results *r, const char *hs, const char *x, const char *pf, const char *y,
		      char *buf, size_t len)
{
	size_t i, k, pos = 0;

	buf[0] = '\0';
	for (i = 0; i < r->nguests; i++) {
		const struct guest_log *g = &r->guests[i];

		if (strcmp(state_of(g->host_state), hs) || strcmp(g->host_thp, x) || strcmp(g->prefault, pf))
			continue;
		for (k = 0; k < g->ncs; k++) {
			const struct guest_cellstat *cs = &g->cs[k];

			if (strcmp(cs->guest_thp, y) || strcmp(cs->workload, wltraits_sizing()->name) || !cs->ncov)
				continue;
			if (pos < len)
				pos += (size_t)snprintf(buf + pos, len - pos, "%sg%u %.1f%%", pos ? ", " : "", g->index,
							cs->cov_sum / cs->ncov);
		}
	}
}

static void add_rows(const struct results *r, const char *hs, struct sizing *out)
{
	const struct wl_split *sp = wltraits_sizing()->split;
	const char *pf = arm(r, hs);
	size_t i;

	for (i = 0; i < r->ncells && out->nrows < SZ_MAX_ROWS; i++) {
		const struct cell *c = &r->cells[i];
		struct sz_row *row;

		if (!sized_cell(c, hs) || strcmp(c->prefault, pf) ||
		    (!strcmp(c->host_thp, "never") && !strcmp(c->guest_thp, "never")))
			continue;
		row = &out->rows[out->nrows++];
		memset(row, 0, sizeof(*row));
		snprintf(row->host_state, sizeof(row->host_state), "%s", hs);
		snprintf(row->host_thp, sizeof(row->host_thp), "%s", c->host_thp);
		snprintf(row->guest_thp, sizeof(row->guest_thp), "%s", c->guest_thp);
		snprintf(row->cov_source, sizeof(row->cov_source), "%s", c->host_cov_source[0] ? c->host_cov_source : "smaps");
		row->guests = r->settings.guests ? r->settings.guests : 1;
		row->cov_pct = c->host_cov.n ? c->host_cov.s.mean : NAN;
		per_guest(r, hs, c->host_thp, pf, c->guest_thp, row->per_guest, sizeof(row->per_guest));
		total(r, hs, sp->fault_metric, c->host_thp, c->guest_thp, &row->fault);
		total(r, hs, sp->access_metric, c->host_thp, c->guest_thp, &row->access);
		row->fault_retained_pct = row->access_retained_pct = NAN;
	}
}

static void retained(struct sizing *out)
{
	size_t i, k;

	for (i = 0; i < out->nrows; i++) {
		struct sz_row *row = &out->rows[i];

		for (k = 0; k < out->nrows; k++) {
			const struct sz_row *f = &out->rows[k];

			if (strcmp(f->host_state, "fresh") || strcmp(f->host_thp, row->host_thp) ||
			    strcmp(f->guest_thp, row->guest_thp))
				continue;
			if (row->fault.available && f->fault.available && fabs(f->fault.est) > 1e-9)
				row->fault_retained_pct = row->fault.est / f->fault.est * 100;
			if (row->access.available && f->access.available && fabs(f->access.est) > 1e-9)
				row->access_retained_pct = row->access.est / f->access.est * 100;
		}
	}
}

static void add_sizes(const struct results *r, struct sizing *out)
{
	const struct wl_split *sp = wltraits_sizing()->split;
	const char *pf = arm(r, "fresh");
	double best = 0;
	size_t i, j;

	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];
		unsigned kb = host_size_kb(c);
		struct sz_size *sz;

		if (!sized_cell(c, "fresh") || strcmp(c->prefault, pf) || strcmp(c->guest_thp, "never") || !kb ||
		    out->nsizes >= SZ_MAX_SIZES)
			continue;
		/* ascending by size */
		for (j = out->nsizes; j > 0 && out->sizes[j - 1].kb > kb; j--)
			out->sizes[j] = out->sizes[j - 1];
		sz = &out->sizes[j];
		out->nsizes++;
		memset(sz, 0, sizeof(*sz));
		sz->kb = kb;
		snprintf(sz->host_thp, sizeof(sz->host_thp), "%s", c->host_thp);
		snprintf(sz->cov_source, sizeof(sz->cov_source), "%s", c->host_cov_source[0] ? c->host_cov_source : "smaps");
		sz->cov_pct = c->host_cov.n ? c->host_cov.s.mean : NAN;
		total(r, "fresh", sp->fault_metric, c->host_thp, "never", &sz->fault);
		total(r, "fresh", sp->access_metric, c->host_thp, "never", &sz->access);
	}
	/* only sizes whose fault-phase effect is above 0 with 95% confidence take part:
	 * on noisy data no saturation point is claimed */
	for (i = 0; i < out->nsizes; i++)
		if (out->sizes[i].fault.available && out->sizes[i].fault.lo > 0 && out->sizes[i].fault.est > best)
			best = out->sizes[i].fault.est;
	for (i = 0; i < out->nsizes && best > 0; i++)
		if (out->sizes[i].fault.available && out->sizes[i].fault.lo > 0 && out->sizes[i].fault.est >= 0.9 * best) {
			out->saturate_kb = out->sizes[i].kb;
			break;
		}
	for (i = 0; i < out->nsizes; i++)
		if (out->sizes[i].access.available && out->sizes[i].access.lo > 0) {
			out->tlb_start_kb = out->sizes[i].kb;
			break;
		}
}

void sizing_compute(const struct results *r, struct sizing *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->workload, sizeof(out->workload), "%s", wltraits_sizing()->name);
	add_rows(r, "fresh", out);
	add_rows(r, "fragmented", out);
	retained(out);
	add_sizes(r, out);
}

