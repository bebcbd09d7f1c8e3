/*
 * note: what the files of the run loop print and build: a progress note and
 * an append to a fixed buffer. Below every other file of the loop; never
 * exits.
 */
#ifndef THPEVAL_ORCH_RUN_NOTE_H
#define THPEVAL_ORCH_RUN_NOTE_H

#include <stddef.h>

#include "orchestrator/run/run.h"

void run_note(const struct run_io *io, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void run_append(char *dst, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
