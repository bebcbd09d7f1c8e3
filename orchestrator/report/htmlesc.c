#include "orchestrator/report/htmlesc.h"

#include <stdarg.h>
#include <stdio.h>

/* every piece of data goes through html_esc(): & < > " ' */
void html_esc(FILE *o, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", o); break;
		case '<': fputs("&lt;", o); break;
		case '>': fputs("&gt;", o); break;
		case '"': fputs("&quot;", o); break;
		case '\'': fputs("&#39;", o); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				fputs("&#xFFFD;", o);	/* control characters are not XML */
			else
				fputc(*s, o);
		}
	}
}

void html_escf(FILE *o, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	html_esc(o, buf);
}
