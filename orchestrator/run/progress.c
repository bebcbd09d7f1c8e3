#include "orchestrator/run/progress.h"

#include <math.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "lib/clock.h"

void progress_fmt_duration(char *buf, size_t len, double s)
{
	long t;

	if (!isfinite(s) || s < 0) {
		snprintf(buf, len, "?");
		return;
	}
	t = lround(s);
	if (t >= 3600)
		snprintf(buf, len, "%ldh%02ldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		snprintf(buf, len, "%ldm%02lds", t / 60, t % 60);
	else
		snprintf(buf, len, "%lds", t);
}

static int term_width(FILE *out)
{
	struct winsize ws;

	if (ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20)
		return ws.ws_col;
	return 80;
}

void progress_init(struct progress *p, FILE *out, size_t total)
{
	memset(p, 0, sizeof(*p));
	p->out = out;
	p->total = total;
	p->now = mono_s;
	p->tty = out && isatty(fileno(out));
	p->width = p->tty ? term_width(out) : 80;
	p->t0 = p->cell_t0 = p->now();
	p->last_draw = -1;
}

void progress_set_tty(struct progress *p, bool tty)
{
	p->tty = tty;
}

/* remaining time from the mean duration of the cells done so far */
static double eta(const struct progress *p, double now)
{
	double per, left;

	if (p->done == 0)
		return NAN;
	per = (p->cell_t0 - p->t0) / (double)p->done;
	if (p->done >= p->total)
		return 0;
	left = per * (double)(p->total - p->done) - (now - p->cell_t0);
	return left > 0 ? left : 0;
}

static void draw(struct progress *p)
{
	double now = p->now();
	char el[16], et[16], line[256];
	int n;

	progress_fmt_duration(el, sizeof(el), now - p->t0);
	progress_fmt_duration(et, sizeof(et), eta(p, now));
	n = snprintf(line, sizeof(line), "thpeval: cells %zu/%zu  %s%s  elapsed %s  ETA %s", p->done, p->total,
		     p->cell[0] ? "running " : "", p->cell, el, p->done ? et : "estimating");
	if (n < 0)
		return;
	if (n >= p->width)	/* a wrapped line cannot be redrawn with \r */
		n = p->width - 1;
	if ((size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	fprintf(p->out, "\r\033[K%.*s", n, line);
	fflush(p->out);
	p->drawn = (size_t)n;
	p->last_draw = now;
}

void progress_cell_start(struct progress *p, const char *name)
{
	if (snprintf(p->cell, sizeof(p->cell), "%s", name ? name : "") >= (int)sizeof(p->cell))
		p->cell[sizeof(p->cell) - 1] = '\0';
	p->cell_t0 = p->now();
	if (p->out && p->tty)
		draw(p);
}

void progress_cell_done(struct progress *p, bool ok, const char *why)
{
	double now = p->now(), took = now - p->cell_t0;
	char el[16], et[16], tk[16];

	if (p->done < p->total)
		p->done++;
	p->cell_t0 = now;
	if (!p->out)
		return;
	if (p->tty) {
		if (!ok) {	/* keep failures visible above the progress line */
			fprintf(p->out, "\r\033[Kthpeval: cell %s failed: %s\n", p->cell, why ? why : "no samples");
			p->drawn = 0;
		}
		draw(p);
		return;
	}
	progress_fmt_duration(el, sizeof(el), now - p->t0);
	progress_fmt_duration(et, sizeof(et), eta(p, now));
	progress_fmt_duration(tk, sizeof(tk), took);
	if (ok)
		fprintf(p->out, "thpeval: cell %zu/%zu %s done in %s (elapsed %s, ETA %s)\n", p->done, p->total,
			p->cell, tk, el, et);
	else
		fprintf(p->out, "thpeval: cell %zu/%zu %s failed after %s: %s (elapsed %s, ETA %s)\n", p->done,
			p->total, p->cell, tk, why ? why : "no samples", el, et);
	fflush(p->out);
}

void progress_tick(struct progress *p)
{
	if (!p->out || !p->tty)
		return;
	if (p->last_draw >= 0 && p->now() - p->last_draw < 1.0)
		return;
	draw(p);
}

void progress_finish(struct progress *p)
{
	char el[16];

	if (!p->out)
		return;
	progress_fmt_duration(el, sizeof(el), p->now() - p->t0);
	fprintf(p->out, "%sthpeval: %zu/%zu cells in %s\n", p->tty ? "\r\033[K" : "", p->done, p->total, el);
	fflush(p->out);
	p->drawn = 0;
}
