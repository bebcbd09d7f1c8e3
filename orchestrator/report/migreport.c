#include "orchestrator/report/migreport.h"

#include <math.h>
#include <string.h>

#include "orchestrator/report/htmlesc.h"

/* what the section says of every run with the axis: the two things it cannot vary */
static const char migreport_caveat[] =
	"Both ends run on this one machine: the destination shares the host's THP setting (the cell's "
	"host_thp) and its khugepaged. Under TCG guest RAM is host memory as under KVM, but there are no "
	"KVM dirty-logging splits of huge pages (KVM's own page tables): a precopy's dirty tracking costs "
	"nothing here that it would cost under KVM.";

bool migreport_present(const struct results *r)
{
	return r && r->nmigrations > 0;
}

/* v with prec decimals, sign when signed, pct adds "%"; "-" when not finite */
static void numf(char *buf, size_t len, double v, int prec, bool sign, bool pct)
{
	if (!isfinite(v))
		snprintf(buf, len, "-");
	else if (sign)
		snprintf(buf, len, "%+.*f%s", prec, v, pct ? "%" : "");
	else
		snprintf(buf, len, "%.*f%s", prec, v, pct ? "%" : "");
}

static void ci(char *buf, size_t len, double lo, double hi)
{
	if (isfinite(lo) && isfinite(hi))
		snprintf(buf, len, "[%.1f, %.1f]", lo, hi);
	else
		snprintf(buf, len, "-");
}

void migreport_text(const struct results *r, FILE *out)
{
	size_t i, k;

	if (!migreport_present(r))
		return;
	fprintf(out, "\nmigration: after the warm series memset kept looping passes (a store to every 4K page, then the"
		     " access chase)\nwhile the guest was live-migrated to a second libvirt daemon on this machine (arm"
		     " none: not migrated).\n%s\n", migreport_caveat);
	if (r->nmigsum) {
		fprintf(out, "  %-8s %-9s %-16s %-12s %5s %10s %20s %10s %22s\n", "arm", "host", "metric", "phase", "boots",
			"mean", "95% CI", "vs none", "95% CI of the effect");
		for (i = 0; i < r->nmigsum; i++) {
			const struct mig_summary *s = &r->migsum[i];
			char m[24], c[48], ef[24], ec[48];

			numf(m, sizeof(m), s->mean, 2, false, false);
			ci(c, sizeof(c), s->ci_lo, s->ci_hi);
			numf(ef, sizeof(ef), s->effect_pct, 1, true, true);
			ci(ec, sizeof(ec), s->effect_lo_pct, s->effect_hi_pct);
			fprintf(out, "  %-8s %-9s %-16s %-12s %5u %10s %20s %10s %22s\n", s->arm, s->host_thp, s->metric,
				s->phase, s->boots, m, c, ef, ec);
		}
	}
	for (i = 0; i < r->nmigrations; i++) {
		const struct migration_log *l = &r->migrations[i];
		char a[24], b[24], t90[128];

		fprintf(out, "  guest %u, host %s, round %u, %s: ", l->boot, l->host_thp, l->round + 1, l->arm);
		if (l->error[0]) {
			fprintf(out, "failed: %s\n", l->error);
			continue;
		}
		if (isfinite(l->t90_s))
			snprintf(t90, sizeof(t90), "90%% at %.1f s", l->t90_s);
		else
			snprintf(t90, sizeof(t90), "never 90%%: %s", l->t90_why[0] ? l->t90_why : "no series");
		numf(a, sizeof(a), l->dst_cov_first_pct, 1, false, true);
		numf(b, sizeof(b), l->dst_cov_last_pct, 1, false, true);
		fprintf(out, "source %.1f%% before; %s %s right after, %s at the end; %s\n", l->src_cov_pct,
			strcmp(l->arm, "none") ? "destination" : "(same QEMU)", a, b, t90);
		if (l->have_stats)
			fprintf(out, "    job: total %.0f ms, downtime %.0f ms, setup %.0f ms, %.1f MiB sent of %.1f MiB, "
				     "%.1f MiB/s, dirty rate %llu pages/s, %llu iterations, %llu postcopy requests\n",
				l->total_ms, l->downtime_ms, l->setup_ms, (double)l->data_bytes / 1048576.0,
				(double)l->memory_total_bytes / 1048576.0, (double)l->bandwidth_bps / 1048576.0,
				l->dirty_rate_pps, l->iterations, l->postcopy_requests);
		else if (strcmp(l->arm, "none"))
			fprintf(out, "    job: libvirt gave no completed-job statistics\n");
		fprintf(out, "    access ns before %.1f, right after %.1f, settled %.1f; write ns/4K before %.1f, right after "
			     "%.1f, settled %.1f\n", l->access_before_ns, l->access_after_ns, l->access_settled_ns,
			l->write_before_ns, l->write_after_ns, l->write_settled_ns);
		fprintf(out, "    coverage (s after the migration, %%):");
		for (k = 0; k < l->n && k < 20; k++)
			fprintf(out, " %.0f %.1f%s", l->series[k].t_s, l->series[k].huge_pct, k + 1 < l->n ? "," : "");
		fprintf(out, "%s\n", l->n > 20 ? " ..." : "");
	}
}

void migreport_html(const struct results *r, FILE *o)
{
	size_t i, k;

	if (!migreport_present(r))
		return;
	fputs("<p>", o);
	html_esc(o, migreport_caveat);
	fputs("</p>\n<table><tr><th>arm</th><th>host</th><th>metric</th><th>phase</th><th>boots</th><th>mean</th>"
	      "<th>95% CI</th><th>vs none</th><th>95% CI of the effect</th></tr>\n", o);
	for (i = 0; i < r->nmigsum; i++) {
		const struct mig_summary *s = &r->migsum[i];
		char m[24], c[48], ef[24], ec[48];

		numf(m, sizeof(m), s->mean, 2, false, false);
		ci(c, sizeof(c), s->ci_lo, s->ci_hi);
		numf(ef, sizeof(ef), s->effect_pct, 1, true, true);
		ci(ec, sizeof(ec), s->effect_lo_pct, s->effect_hi_pct);
		fputs("<tr><td>", o);
		html_escf(o, "%s</td><td>%s</td><td>%s</td><td>%s</td><td>%u</td><td>%s</td><td>%s</td><td>%s</td><td>%s",
			  s->arm, s->host_thp, s->metric, s->phase, s->boots, m, c, ef, ec);
		fputs("</td></tr>\n", o);
	}
	fputs("</table>\n<table><tr><th>guest</th><th>host</th><th>arm</th><th>source before</th><th>destination right "
	      "after</th><th>at the end</th><th>time to 90%</th><th>downtime ms</th><th>total ms</th><th>MiB sent</th>"
	      "<th>postcopy requests</th><th>coverage series (s, %)</th></tr>\n", o);
	for (i = 0; i < r->nmigrations; i++) {
		const struct migration_log *l = &r->migrations[i];
		char a[24], b[24], c[24], t90[ERR_MSG_MAX + 16], dt[24], tt[24], mb[24];

		numf(a, sizeof(a), l->src_cov_pct, 1, false, true);
		numf(b, sizeof(b), l->dst_cov_first_pct, 1, false, true);
		numf(c, sizeof(c), l->dst_cov_last_pct, 1, false, true);
		if (isfinite(l->t90_s))
			snprintf(t90, sizeof(t90), "%.1f s", l->t90_s);
		else
			snprintf(t90, sizeof(t90), "never: %s", l->error[0] ? l->error : l->t90_why);
		numf(dt, sizeof(dt), l->have_stats ? l->downtime_ms : NAN, 0, false, false);
		numf(tt, sizeof(tt), l->have_stats ? l->total_ms : NAN, 0, false, false);
		numf(mb, sizeof(mb), l->have_stats ? (double)l->data_bytes / 1048576.0 : NAN, 1, false, false);
		fputs("<tr><td>", o);
		html_escf(o, "%u</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s"
			  "</td><td>%s</td><td>%llu</td><td>", l->boot, l->host_thp, l->arm, a, b, c, t90, dt, tt, mb,
			  l->postcopy_requests);
		for (k = 0; k < l->n; k++)
			html_escf(o, "%s%.0f:%.1f", k ? " " : "", l->series[k].t_s, l->series[k].huge_pct);
		fputs("</td></tr>\n", o);
	}
	fputs("</table>\n", o);
}
