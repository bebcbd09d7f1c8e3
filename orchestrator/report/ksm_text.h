/*
 * ksm_text: the KSM arm's section of results.txt (--ksm): each group's
 * merging (pages_sharing, full scans, the host's huge-page splits), its
 * guests' host coverage from first to last sample, the access time before
 * and after merging, and KSM on against off per primary metric with its
 * interval. Writes only to the FILE* it is given.
 */
#ifndef THPEVAL_ORCH_REPORT_KSM_TEXT_H
#define THPEVAL_ORCH_REPORT_KSM_TEXT_H

#include <stdio.h>

#include "orchestrator/model/results.h"

void ksm_print(const struct results *r, FILE *out);

#endif
