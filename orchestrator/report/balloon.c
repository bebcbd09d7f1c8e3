#include "orchestrator/report/balloon.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/analysis/balloon.h"
#include "orchestrator/report/htmlesc.h"

static const char *const arm_names[2] = { "none", "reporting" };

bool balloon_applies(const struct results *r)
{
	struct balloon_row rows[1];

	return balloon_rows(r, rows, 1) > 0;
}

static void fmt_num(char *buf, size_t len, double v, const char *unit)
{
	if (isfinite(v))
		snprintf(buf, len, "%.0f%s", v, unit);
	else
		snprintf(buf, len, "n/a");
}

/* "812 ns/4K [95% CI 790-830, 3 boots]" */
static void fmt_refault(char *buf, size_t len, const struct balloon_arm_sum *s)
{
	if (!s->have)
		snprintf(buf, len, "not run");
	else if (isfinite(s->refault_lo))
		snprintf(buf, len, "%.0f ns/4K [95%% CI %.0f-%.0f, %u boots]", s->refault_gm, s->refault_lo,
			 s->refault_hi, s->boots);
	else
		snprintf(buf, len, "%.0f ns/4K [%u boot: no interval]", s->refault_gm, s->boots);
}

static void fmt_effect(char *buf, size_t len, const struct balloon_row *row)
{
	if (row->have_effect)
		snprintf(buf, len, "x%.2f [95%% CI x%.2f-x%.2f, df %.1f]%s", row->ratio, row->ratio_lo, row->ratio_hi,
			 row->df, row->ratio_lo > 1 ? ": reporting slower" : row->ratio_hi < 1 ? ": reporting faster" :
			 ": no difference shown");
	else
		snprintf(buf, len, "n/a: %.150s", row->note);
}

static void fmt_cov(char *buf, size_t len, const struct balloon_arm_sum *s)
{
	char a[16], b[16], c[16];

	fmt_num(a, sizeof(a), s->cov_before_pct, "%");
	fmt_num(b, sizeof(b), s->cov_after_free_pct, "%");
	fmt_num(c, sizeof(c), s->cov_after_retouch_pct, "%");
	snprintf(buf, len, "%s -> %s -> %s", a, b, c);
}

void balloon_print(const struct results *r, FILE *out)
{
	struct balloon_row rows[BALLOON_ROWS_MAX];
	size_t n = balloon_rows(r, rows, BALLOON_ROWS_MAX), i;
	int a;

	if (!n)
		return;
	fprintf(out, "\nballoon: free page reporting (a virtio balloon: the guest reports its free 2M blocks, QEMU "
		     "discards them) against guests\nwithout one; memset freed its buffer, left it to the host, then "
		     "touched a fresh one (re-fault, geometric mean over boots);\nQEMU RSS at the free, the least "
		     "while left, after the re-touch; host%% = huge pages / guest-RAM mapping, at the same three\n");
	for (i = 0; i < n; i++) {
		const struct balloon_row *row = &rows[i];
		char buf[200], cov[64];

		fprintf(out, "  host %s/%s, guest %s%s%s:\n", row->host_thp, row->prefault, row->guest_thp,
			strcmp(row->host_state, "fresh") ? ", host " : "",
			strcmp(row->host_state, "fresh") ? row->host_state : "");
		for (a = 0; a < 2; a++) {
			const struct balloon_arm_sum *s = &row->arm[a];

			fmt_refault(buf, sizeof(buf), s);
			fprintf(out, "    %-10s re-fault %s\n", arm_names[a], buf);
			if (!s->windows)
				continue;
			fmt_cov(cov, sizeof(cov), s);
			fprintf(out, "               QEMU RSS %.0f -> %.0f -> %.0f MiB, drop %.0f MiB = %.0f%% of the "
				     "%.0f MiB freed (%u of %u windows half or more); host%% %s\n",
				s->rss_before_mib, s->rss_after_free_mib, s->rss_after_retouch_mib, s->drop_mib, s->drop_pct,
				s->freed_mib, s->half_drops, s->windows, cov);
		}
		fmt_effect(buf, sizeof(buf), row);
		fprintf(out, "    reporting vs none, re-fault time: %s\n", buf);
	}
}

void balloon_html(const struct results *r, FILE *o)
{
	struct balloon_row rows[BALLOON_ROWS_MAX];
	size_t n = balloon_rows(r, rows, BALLOON_ROWS_MAX), i;
	int a;

	fputs("<p>A virtio balloon with free page reporting: the guest reports its free 2M blocks and QEMU discards "
	      "them. memset freed its buffer, left it to the host, then touched a fresh one; the re-fault time is the "
	      "geometric mean over boots. QEMU's RSS at the free, the least while the buffer was left, and after the "
	      "re-touch; host% is guest RAM on host huge pages at the same three points.</p>\n<table>\n<tr><th>host"
	      "</th><th>guest</th><th>balloon</th><th>re-fault</th><th>QEMU RSS, MiB</th><th>drop of the freed"
	      "</th><th>host%</th><th>reporting vs none</th></tr>\n", o);
	for (i = 0; i < n; i++) {
		const struct balloon_row *row = &rows[i];
		char buf[200], cov[64];

		for (a = 0; a < 2; a++) {
			const struct balloon_arm_sum *s = &row->arm[a];

			fputs("<tr><td>", o);
			html_escf(o, "%s/%s%s%s", row->host_thp, row->prefault, strcmp(row->host_state, "fresh") ? " " : "",
				  strcmp(row->host_state, "fresh") ? row->host_state : "");
			fputs("</td><td>", o);
			html_esc(o, row->guest_thp);
			fputs("</td><td>", o);
			html_esc(o, arm_names[a]);
			fputs("</td><td>", o);
			fmt_refault(buf, sizeof(buf), s);
			html_esc(o, buf);
			fputs("</td><td>", o);
			if (s->windows)
				html_escf(o, "%.0f → %.0f → %.0f", s->rss_before_mib, s->rss_after_free_mib,
					  s->rss_after_retouch_mib);
			fputs("</td><td>", o);
			if (s->windows)
				html_escf(o, "%.0f MiB, %.0f%% (%u of %u windows half or more)", s->drop_mib, s->drop_pct,
					  s->half_drops, s->windows);
			fputs("</td><td>", o);
			if (s->windows) {
				fmt_cov(cov, sizeof(cov), s);
				html_esc(o, cov);
			}
			fputs("</td><td>", o);
			if (a == 1) {
				fmt_effect(buf, sizeof(buf), row);
				html_esc(o, buf);
			}
			fputs("</td></tr>\n", o);
		}
	}
	fputs("</table>\n", o);
}
