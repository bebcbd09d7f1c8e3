#include "lib/smaps.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lib/array.h"

/* the kB fields kept, by enum smaps_key */
static const char *const kept[] = {
	[SMAPS_SIZE] = "Size",
	[SMAPS_RSS] = "Rss",
	[SMAPS_ANON] = "Anonymous",
	[SMAPS_ANON_HUGE] = "AnonHugePages",
	[SMAPS_SHMEM_PMD] = "ShmemPmdMapped",
	[SMAPS_PAGE_KB] = "KernelPageSize",
	[SMAPS_PRIVATE_HUGETLB] = "Private_Hugetlb",
	[SMAPS_SHARED_HUGETLB] = "Shared_Hugetlb",
};
_Static_assert(ARRAY_SIZE(kept) == SMAPS__COUNT, "kept out of sync with enum smaps_key");

/* the other fields the kernel prints in kB: checked, not kept */
static const char *const checked[] = {
	"MMUPageSize", "Pss", "Pss_Dirty", "Pss_Anon", "Pss_File", "Pss_Shmem", "Shared_Clean",
	"Shared_Dirty", "Private_Clean", "Private_Dirty", "Referenced", "KSM", "LazyFree",
	"FilePmdMapped", "Swap", "SwapPss", "Locked",
};

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* 1..maxd lower-case hex digits at *p into v: true and *p past them */
static bool hex(const char **p, size_t maxd, uint64_t *v)
{
	size_t n = 0;

	*v = 0;
	while (is_hex((*p)[n])) {
		if (n == maxd)
			return false;
		*v = *v << 4 | (uint64_t)((*p)[n] <= '9' ? (*p)[n] - '0' : (*p)[n] - 'a' + 10);
		n++;
	}
	*p += n;
	return n > 0;
}

/* "start-end perms offset major:minor inode [name]", NUL-terminated */
static bool header(const char *p, struct smaps_map *m)
{
	static const char *const perm_chars[] = { "r-", "w-", "x-", "ps" };
	uint64_t v;
	size_t i, d;

	if (!hex(&p, 16, &m->start) || *p++ != '-' || !hex(&p, 16, &m->end) || *p++ != ' ')
		return false;
	if (m->end <= m->start)
		return false;
	for (i = 0; i < 4; i++) {
		if (!p[i] || !strchr(perm_chars[i], p[i]))
			return false;
		m->perms[i] = p[i];
	}
	m->perms[4] = '\0';
	p += 4;
	if (*p++ != ' ' || !hex(&p, 16, &v) || *p++ != ' ')
		return false;
	if (!hex(&p, 8, &v) || *p++ != ':' || !hex(&p, 8, &v) || *p++ != ' ')
		return false;
	for (d = 0; p[d] >= '0' && p[d] <= '9'; d++)
		;
	if (d == 0 || d > 20)
		return false;
	p += d;
	if (*p && *p != ' ')
		return false;
	while (*p == ' ')
		p++;
	snprintf(m->name, sizeof(m->name), "%s", p);
	return true;
}

/* "   1234 kB", at most UINT64_MAX / 1024 */
static bool kb_value(const char *p, uint64_t *v)
{
	size_t n = 0;

	while (*p == ' ')
		p++;
	*v = 0;
	for (; p[n] >= '0' && p[n] <= '9'; n++) {
		if (n == 18)
			return false;	/* 10^18 kB is far past any memory: refused before overflow */
		*v = *v * 10 + (uint64_t)(p[n] - '0');
	}
	return n > 0 && !strcmp(p + n, " kB") && *v <= UINT64_MAX / 1024;
}

/* p->why = "[key ]what"; -EBADMSG */
static int refuse(struct smaps_parser *p, const char *key, const char *what)
{
	snprintf(p->why, sizeof(p->why), "%.40s%s%s", key ? key : "", key ? " " : "", what);
	return -EBADMSG;
}

/* "Name: value" of the open mapping, NUL-terminated (s is a copy the caller owns) */
static int field(struct smaps_parser *p, char *s)
{
	struct smaps_map *m = &p->cur;
	char *colon = s;
	const char *val;
	uint64_t v;
	size_t i;

	while ((*colon >= 'A' && *colon <= 'Z') || (*colon >= 'a' && *colon <= 'z') ||
	       (*colon >= '0' && *colon <= '9') || *colon == '_')
		colon++;
	if (colon == s || *colon != ':')
		return refuse(p, NULL, "expected 'Name: value'");
	if (!p->open)
		return refuse(p, NULL, "field before any mapping");
	*colon = '\0';
	val = colon + 1;
	if (!strcmp(s, "VmFlags")) {
		for (i = 0; val[i]; i++)
			if (val[i] == 'h' && val[i + 1] == 't' && (i == 0 || val[i - 1] == ' ') &&
			    (val[i + 2] == ' ' || !val[i + 2]))
				m->vm_hugetlb = true;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(kept); i++) {
		if (strcmp(s, kept[i]))
			continue;
		if (m->have[i])
			return refuse(p, s, "given twice");
		if (!kb_value(val, &m->kb[i]))
			return refuse(p, s, "is not 'N kB'");
		m->have[i] = true;
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(checked); i++)
		if (!strcmp(s, checked[i]))
			return kb_value(val, &v) ? 0 : refuse(p, s, "is not 'N kB'");
	return 0;	/* THPeligible, ProtectionKey and the like: not read */
}

void smaps_init(struct smaps_parser *p)
{
	memset(p, 0, sizeof(*p));
}

int smaps_feed(struct smaps_parser *p, const char *line, size_t len, struct smaps_map *done)
{
	char buf[SMAPS_NAME_MAX + 128];	/* a header's fields before the name take < 128 */
	struct smaps_map next;
	size_t cut = len;

	p->line++;
	p->why[0] = '\0';
	if (memchr(line, '\0', len))
		return refuse(p, NULL, "a NUL byte");
	if (!len || !is_hex(line[0])) {
		/* a field line: longer than any field is malformed */
		if (len >= sizeof(buf))
			return refuse(p, NULL, "expected 'Name: value'");
		memcpy(buf, line, len);
		buf[len] = '\0';
		return field(p, buf);
	}
	/* a header: the name is cut to fit, the rest must parse */
	if (cut >= sizeof(buf))
		cut = sizeof(buf) - 1;
	memcpy(buf, line, cut);
	buf[cut] = '\0';
	memset(&next, 0, sizeof(next));
	if (!header(buf, &next))
		return refuse(p, NULL, "bad mapping header");
	next.line = p->line;
	if (!p->open) {
		p->cur = next;
		p->open = true;
		return 0;
	}
	*done = p->cur;
	p->cur = next;
	return 1;
}

int smaps_finish(struct smaps_parser *p, struct smaps_map *done)
{
	if (!p->open)
		return 0;
	*done = p->cur;
	p->open = false;
	return 1;
}

int smaps_parse_text(const char *text, size_t n, unsigned max_lines, size_t line_max, smaps_fn fn,
		     void *ctx, struct err *e)
{
	struct smaps_parser p;
	struct smaps_map m;
	size_t pos = 0, len;
	int r;

	smaps_init(&p);
	while (pos < n) {
		const char *l = text + pos, *nl = memchr(l, '\n', n - pos);

		len = nl ? (size_t)(nl - l) : n - pos;
		pos += len + (nl ? 1 : 0);
		if (p.line >= max_lines || len > line_max)
			return err_set(e, -EBADMSG, "smaps: more than %u lines or a line over %zu bytes",
				       max_lines, line_max);
		r = smaps_feed(&p, l, len, &m);
		if (r < 0)
			return err_set(e, r, "smaps line %u: %s: '%.*s'", p.line, p.why, (int)(len < 60 ? len : 60), l);
		if (r > 0 && (r = fn(&m, ctx, e)))
			return r;
	}
	if (smaps_finish(&p, &m) && (r = fn(&m, ctx, e)))
		return r;
	return 0;
}
