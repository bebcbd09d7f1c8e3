#include "orchestrator/report/render.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* ---- csv (RFC 4180) ---------------------------------------------------------------- */

/*
 * One field. A text field that starts with = + - @, a tab or a carriage
 * return would be a formula to a spreadsheet: it gets a leading ' (OWASP's
 * advice), which the spreadsheet shows as text. Numbers (text false) are
 * written as they are, a negative one included.
 */
static void csv_field(FILE *out, const char *s, bool text, bool last)
{
	size_t n = strlen(s);
	bool formula = text && n && strchr("=+-@\t\r", s[0]);
	bool quote = strpbrk(s, ",\"\r\n") || (n && (s[0] == ' ' || s[n - 1] == ' '));

	if (quote)
		fputc('"', out);
	if (formula)
		fputc('\'', out);
	for (; *s; s++) {
		if (quote && *s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	if (quote)
		fputc('"', out);
	fputs(last ? "\r\n" : ",", out);
}

int report_csv(const struct report_input *in, FILE *out, struct err *e)
{
	const struct results *r = in->res;
	size_t i, j, k;

	fputs(REPORT_CSV_HEADER "\r\n", out);
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];

		for (j = 0; j < c->nmetrics + 2; j++) {
			const struct metric *m = report_metric_at(c, j);

			for (k = 0; k < m->n; k++) {
				char rep[24], val[40];

				snprintf(rep, sizeof(rep), "%zu", k + 1);
				fmt_double_exact(val, sizeof(val), m->samples[k]);
				csv_field(out, c->host_thp, true, false);
				csv_field(out, c->guest_thp, true, false);
				csv_field(out, c->workload, true, false);
				csv_field(out, c->target, true, false);
				csv_field(out, m->name, true, false);
				csv_field(out, rep, false, false);
				csv_field(out, val, false, false);
				csv_field(out, c->prefault[0] ? c->prefault : "ondemand", true, false);
				csv_field(out, c->variant, true, true);
			}
		}
	}
	return 0;
}
