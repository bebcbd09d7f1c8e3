#include "orchestrator/report/report.h"
#include "orchestrator/report/render.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lib/fstree.h"
#include "lib/parse.h"
#include "orchestrator/model/results_load.h"

/* the registry: one entry per line of REPORT_FORMATS (report.h) */
#define REPORT_ENTRY_(id, name, file, fn, desc) [REPORT_##id] = { name, file, desc, fn },
static const struct report_format_def {
	const char *name, *file, *desc;
	int (*render)(const struct report_input *in, FILE *out, struct err *e);
} formats[] = {
	REPORT_FORMATS(REPORT_ENTRY_, )
};
_Static_assert(ARRAY_SIZE(formats) == REPORT__COUNT, "formats table");

const char *report_format_name(enum report_format f)
{
	return (unsigned)f < REPORT__COUNT ? formats[f].name : "?";
}

const char *report_format_file(enum report_format f)
{
	return (unsigned)f < REPORT__COUNT ? formats[f].file : "?";
}

const char *report_format_description(enum report_format f)
{
	return (unsigned)f < REPORT__COUNT ? formats[f].desc : "?";
}

int report_formats_parse(const char *list, unsigned *mask, struct err *e)
{
	const char *p = list;

	*mask = 0;
	if (parse_list_check(list))
		return err_set(e, -EINVAL, "empty item in format list '%s': use %s", list,
			       REPORT_FORMATS_HELP);
	while (*p) {
		size_t n = strcspn(p, ","), i;
		bool found = false;

		for (i = 0; i < REPORT__COUNT; i++) {
			if (strlen(formats[i].name) == n && !strncmp(p, formats[i].name, n)) {
				*mask |= REPORT_BIT(i);
				found = true;
			}
		}
		if (!found)
			return err_set(e, -EINVAL, "'%.*s' is not a report format: use %s", (int)n, p,
				       REPORT_FORMATS_HELP);
		p += n;
		if (*p == ',')
			p++;
	}
	if (!*mask)
		return err_set(e, -EINVAL, "empty format list: use %s", REPORT_FORMATS_HELP);
	return 0;
}

void fmt_double_exact(char *buf, size_t len, double v)
{
	int prec;

	for (prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

/* ---- helpers the formats share (render.h) ------------------------------------------- */

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

/* ---- json ---------------------------------------------------------------------------- */

int report_json(const struct report_input *in, FILE *out, struct err *e)
{
	char *text;
	size_t len;

	if (results_to_json_text(in->res, &text, &len, e))
		return e->code;
	fwrite(text, 1, len, out);
	free(text);
	return 0;
}

/* ---- dispatch ------------------------------------------------------------------------- */

int report_render(const struct report_input *in, enum report_format f, FILE *out, struct err *e)
{
	int r;

	if ((unsigned)f >= REPORT__COUNT)
		return err_set(e, -EINVAL, "internal: unknown report format %d", (int)f);
	r = formats[f].render(in, out, e);
	if (!r && ferror(out))
		r = err_set(e, -EIO, "cannot write the %s report", formats[f].name);
	return r;
}

int report_write_dir(const struct report_input *in, unsigned mask, const char *dir, struct err *e)
{
	char path[PATH_MAX];
	unsigned f;

	if (mkdir_p(dir, 0755, e))
		return e->code;
	for (f = 0; f < REPORT__COUNT; f++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *mem;
		int r;

		if (!(mask & REPORT_BIT(f)))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, formats[f].file) >= (int)sizeof(path))
			return err_set(e, -ENAMETOOLONG, "output path too long: '%s'", dir);
		if (f == REPORT_JSON) {
			if (results_write_json(in->res, path, e))
				return e->code;
			continue;
		}
		mem = open_memstream(&buf, &len);
		if (!mem)
			return err_set(e, -ENOMEM, "out of memory rendering %s", formats[f].name);
		r = report_render(in, (enum report_format)f, mem, e);
		if (fclose(mem) && !r)
			r = err_set(e, -ENOMEM, "out of memory rendering %s", formats[f].name);
		if (!r)
			r = write_file_atomic(path, buf, len, 0644, e);
		free(buf);
		if (r)
			return r;
	}
	return 0;
}
