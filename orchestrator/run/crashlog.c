#include "orchestrator/run/crashlog.h"

#include <stdio.h>
#include <string.h>

#define TAIL_MAX (64 * 1024)	/* a panic is in the log's last lines */
#define LINE_MAX_KEEP 160

/* line [s, e) without its "[    1.234567] " stamp, printable ASCII only, into buf */
static void keep_line(const char *s, const char *e, char *buf, size_t len)
{
	size_t n = 0;

	if (s < e && *s == '[') {
		const char *close = memchr(s, ']', (size_t)(e - s));

		if (close)
			s = close + 1;
	}
	while (s < e && *s == ' ')
		s++;
	while (e > s && e[-1] == '\r')	/* a serial console's line ends */
		e--;
	for (; s < e && n + 1 < len && n < LINE_MAX_KEEP; s++)
		buf[n++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
	buf[n] = '\0';
}

int crashlog_panic(const char *path, char *out, size_t len)
{
	static char text[TAIL_MAX + 1];
	char bug[LINE_MAX_KEEP + 1] = "", panic[LINE_MAX_KEEP + 1] = "";
	const char *p, *nl;
	size_t n;
	long size;
	FILE *f;

	if (len)
		out[0] = '\0';
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > TAIL_MAX)
		fseek(f, size - TAIL_MAX, SEEK_SET);
	else
		fseek(f, 0, SEEK_SET);
	n = fread(text, 1, TAIL_MAX, f);
	fclose(f);
	text[n] = '\0';
	for (p = text; p < text + n; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(text + n - p));
		if (!nl)
			nl = text + n;
		if (memmem(p, (size_t)(nl - p), "Kernel panic", 12))
			keep_line(p, nl, panic, sizeof(panic));
		else if (!panic[0] && (memmem(p, (size_t)(nl - p), "BUG: ", 5) || memmem(p, (size_t)(nl - p), "Oops", 4)))
			keep_line(p, nl, bug, sizeof(bug));
	}
	if (!panic[0])
		return -1;
	snprintf(out, len, "%s%s%s", bug, bug[0] ? "; " : "", panic);
	return 0;
}
