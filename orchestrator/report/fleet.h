/*
 * fleet: one self-contained HTML page of every host in the run history
 * (history.h): per host its identity, its latest run's split of the THP
 * effects (recomputed by analysis/effects from the stored results.json) and
 * an inline SVG trend of its headline effects over its last runs. No
 * network, no script; data only through html_esc(). Never prints except to
 * the FILE* it is given, never exits.
 */
#ifndef THPEVAL_ORCH_REPORT_FLEET_H
#define THPEVAL_ORCH_REPORT_FLEET_H

#include <stdio.h>

#include "lib/err.h"

#define FLEET_FILE "fleet.html"

struct fleet_opts {
	const char *const *hosts;	/* only these hosts, in this order (NULL: every host) */
	size_t nhosts;
	unsigned last;			/* runs per host in the trend; 0: HISTORY_DEFAULT_LAST */
};

/* the page for history db to out */
int fleet_html(const char *db, const struct fleet_opts *o, FILE *out, struct err *e);
/* the same to dir/fleet.html (dir created), which appears only when complete */
int fleet_write(const char *db, const struct fleet_opts *o, const char *dir, struct err *e);

#endif
