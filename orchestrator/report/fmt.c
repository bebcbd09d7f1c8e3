#include "orchestrator/report/fmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "orchestrator/analysis/compare.h"

void fmt_double_exact(char *buf, size_t len, double v)
{
	int prec;

	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

void report_fmt_time(char *buf, size_t len, time_t t)
{
	struct tm tm;

	if (t <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "-");
}

/* metric i of a cell with the coverage series appended: n = nmetrics + 2 */
const struct metric *report_metric_at(const struct cell *c, size_t i)
{
	if (i < c->nmetrics)
		return &c->metrics[i];
	return i == c->nmetrics ? &c->host_cov : &c->guest_cov;
}

void report_summary_ci(char *buf, size_t len, const struct summary *s)
{
	char a[20], b[20];

	if (!s || s->n == 0) {
		snprintf(buf, len, "n/a");
		return;
	}
	fmt_value(a, sizeof(a), s->mean);
	if (!isfinite(s->ci95_high)) {
		snprintf(buf, len, "%s", a);
		return;
	}
	if (s->geo) {	/* geometric: the log-scale half-width, as a ratio */
		snprintf(buf, len, "%s ±%.1f%%", a, (s->ci95_high / s->mean - 1) * 100);
		return;
	}
	fmt_value(b, sizeof(b), s->ci95_high - s->mean);
	snprintf(buf, len, "%s ±%s", a, b);
}

void report_mean_ci(char *buf, size_t len, const struct metric *m)
{
	report_summary_ci(buf, len, m ? &m->s : NULL);
}
