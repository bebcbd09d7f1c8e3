/*
 * note: what the files of the run loop print and build: a progress note (to
 * the run's progress stream, only warnings and errors above a terminal's
 * status line) and an append to a fixed buffer. Never exits.
 */
#include "orchestrator/run/note.h"

#include <stdarg.h>
#include <string.h>

#include "orchestrator/run/progress.h"

void run_note(const struct run_io *io, const char *fmt, ...)
{
	va_list ap;

	if (!io->progress)
		return;
	if (io->bar && io->bar->tty) {
		/* on a terminal the status line carries the progress: only warnings and
		 * errors are printed, above it */
		if (strncmp(fmt, "warning", 7) && strncmp(fmt, "error", 5))
			return;
		fputs("\r\033[K", io->progress);
		io->bar->drawn = 0;
	}
	fputs("thpeval: ", io->progress);
	va_start(ap, fmt);
	vfprintf(io->progress, fmt, ap);
	va_end(ap);
	fputc('\n', io->progress);
	fflush(io->progress);
}

void run_append(char *dst, size_t len, const char *fmt, ...)
{
	size_t n = strlen(dst);
	va_list ap;

	if (n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(dst + n, len - n, fmt, ap);
	va_end(ap);
}
