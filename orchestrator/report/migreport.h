/*
 * migreport: the migration arms (--migrate) in the text and HTML reports:
 * per arm the summary over boots (access and write times before, right
 * after and after settling, with 95% intervals and the effect against the
 * none arm), then per boot the coverage on the source before and on the
 * destination over time, the time to 90% or why never, and libvirt's job
 * statistics. Writes only to the FILE* it is given; HTML through htmlesc.
 */
#ifndef THPEVAL_ORCH_REPORT_MIGREPORT_H
#define THPEVAL_ORCH_REPORT_MIGREPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "orchestrator/model/results.h"

bool migreport_present(const struct results *r);
void migreport_text(const struct results *r, FILE *out);
void migreport_html(const struct results *r, FILE *o);

#endif
