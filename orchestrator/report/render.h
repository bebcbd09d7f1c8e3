/*
 * render: internal to report/ (no other module includes it): the prototypes
 * of the renderers the registry (REPORT_FORMATS) names, which formats.c
 * dispatches to; the helpers more than one format needs are fmt.h. A renderer
 * writes only to the FILE* it is given and reports a failure in e; it never
 * prints otherwise and never exits.
 */
#ifndef THPEVAL_ORCH_REPORT_RENDER_H
#define THPEVAL_ORCH_REPORT_RENDER_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include "lib/array.h"
#include "lib/err.h"
#include "orchestrator/model/results.h"
#include "orchestrator/report/fmt.h"
#include "orchestrator/report/report.h"

/*
 * each format's renderer, named in REPORT_FORMATS (report.h) and defined in
 * the format's own file: int report_<format>(in, out, e)
 */
#define REPORT_DECLARE_(id, name, file, fn, desc) int fn(const struct report_input *in, FILE *out, struct err *e);
REPORT_FORMATS(REPORT_DECLARE_, )

#endif
