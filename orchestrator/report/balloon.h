/*
 * balloon: the free page reporting axis (analysis/balloon.c) rendered as
 * text and as an HTML section: per host setting each arm's re-fault time,
 * QEMU's RSS and guest RAM's coverage around the free, and the effect
 * reporting vs none. Writes only to the FILE* it is given.
 */
#ifndef THPEVAL_ORCH_REPORT_BALLOON_H
#define THPEVAL_ORCH_REPORT_BALLOON_H

#include <stdbool.h>
#include <stdio.h>

#include "orchestrator/model/results.h"

/* the run had the balloon axis: there is something to show */
bool balloon_applies(const struct results *r);
void balloon_print(const struct results *r, FILE *out);
void balloon_html(const struct results *r, FILE *o);

#endif
