/*
 * progress: run progress on a terminal or a log. On a terminal one line that
 * is redrawn ("cells 3/8  always/never/memset  elapsed 1m02s  ETA 2m30s");
 * otherwise one plain line per finished cell. Writes only to the FILE* it is
 * given (NULL = quiet); owns no global state; never exits.
 */
#ifndef THPEVAL_ORCH_PROGRESS_H
#define THPEVAL_ORCH_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct progress {
	FILE *out;			/* NULL: quiet */
	bool tty;			/* redraw one line instead of appending lines */
	size_t total, done;
	double t0, cell_t0;		/* seconds on the clock below */
	double last_draw;
	double (*now)(void);		/* clock: CLOCK_MONOTONIC seconds; tests replace it */
	char cell[96];
	int width;			/* terminal columns, 80 if unknown */
	size_t drawn;			/* characters on the terminal line now */
};

/* out NULL = quiet; total = number of cells to run */
void progress_init(struct progress *p, FILE *out, size_t total);
/* decide yourself instead of isatty(fileno(out)) (tests, --progress=plain) */
void progress_set_tty(struct progress *p, bool tty);
void progress_cell_start(struct progress *p, const char *name);
/* ok = the cell produced samples; the reason goes into the plain line on failure */
void progress_cell_done(struct progress *p, bool ok, const char *why);
/* redraw elapsed/ETA at most once a second while a cell runs (terminal only) */
void progress_tick(struct progress *p);
/* end the terminal line; prints the total time */
void progress_finish(struct progress *p);

/* "1h02m", "3m05s", "42s" */
void progress_fmt_duration(char *buf, size_t len, double seconds);

#endif
