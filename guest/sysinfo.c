#include "sysinfo.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/parse.h"
#include "lib/smaps.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"

static int path_join(char *buf, size_t len, const char *root, const char *path, struct err *e)
{
	int n = snprintf(buf, len, "%s%s", root ? root : "", path);

	if (n < 0 || (size_t)n >= len)
		return err_set(e, -ENAMETOOLONG, "path '%s%s' too long", root ? root : "", path);
	return 0;
}

/* One line without its '\n': 1, 0 at end of file, -E2BIG if longer than len - 1. */
static int read_line(FILE *f, char *buf, size_t len)
{
	size_t n;

	if (!fgets(buf, (int)len, f))
		return ferror(f) ? -EIO : 0;
	n = strlen(buf);
	if (n && buf[n - 1] == '\n') {
		buf[n - 1] = '\0';
		return 1;
	}
	if (n + 1 >= len)
		return -E2BIG;
	return 1;	/* last line without newline */
}

/* "  <digits> kB" -> bytes */
static int parse_kb(const char *s, uint64_t *bytes)
{
	char num[24];
	size_t n = 0;
	uint64_t kb;

	while (*s == ' ' || *s == '\t')
		s++;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	if (n == 0 || n >= sizeof(num) || strcmp(s + n, " kB"))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	if (parse_u64(num, &kb) || kb > UINT64_MAX / 1024)
		return -ERANGE;
	*bytes = kb * 1024;
	return 0;
}

int meminfo_get(const char *root, const char *key, uint64_t *bytes, struct err *e)
{
	char path[512], line[256];
	size_t klen = strlen(key);
	unsigned nlines = 0;
	FILE *f;
	int r, ret = -ENOENT;

	if ((r = path_join(path, sizeof(path), root, "/proc/meminfo", e)))
		return r;
	f = fopen(path, "re");
	if (!f)
		return err_set(e, -errno, "cannot open '%s': %s", path, strerror(errno));
	while ((r = read_line(f, line, sizeof(line))) == 1 && ++nlines < 10000) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		if (parse_kb(line + klen + 1, bytes)) {
			ret = err_set(e, -EINVAL, "bad '%s' line in '%s': '%s'", key, path, line);
			goto cleanup;
		}
		ret = 0;
		goto cleanup;
	}
	if (r < 0)
		ret = err_set(e, r, "cannot read '%s': line too long or read error", path);
	else
		ret = err_set(e, -ENOENT, "no '%s' in '%s'", key, path);
cleanup:
	fclose(f);
	return ret;
}

int thp_knob_parse(const char *text, char *out, size_t len)
{
	const char *open = strchr(text, '['), *close;
	size_t n;

	if (!open || strchr(open + 1, '['))
		return -EINVAL;
	close = strchr(open, ']');
	if (!close || strchr(close + 1, ']'))
		return -EINVAL;
	n = (size_t)(close - open - 1);
	if (n == 0 || n >= len)
		return -EINVAL;
	memcpy(out, open + 1, n);
	out[n] = '\0';
	for (; *out; out++)
		if (!((*out >= 'a' && *out <= 'z') || *out == '+'))
			return -EINVAL;
	return 0;
}

static int knob_path(char *buf, size_t len, const char *root, const char *knob, struct err *e)
{
	char rel[128];

	if (!*knob || strchr(knob, '/') || strstr(knob, ".."))
		return err_set(e, -EINVAL, "bad THP knob name '%s'", knob);
	snprintf(rel, sizeof(rel), THP_DIR "/%s", knob);
	return path_join(buf, len, root, rel, e);
}

static int knob_read_raw(const char *path, char *buf, size_t len, struct err *e)
{
	ssize_t n;
	int fd, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, -errno, "cannot open '%s': %s", path, strerror(errno));
	n = read(fd, buf, len - 1);
	saved = errno;
	close(fd);
	if (n < 0)
		return err_set(e, -saved, "cannot read '%s': %s", path, strerror(saved));
	buf[n] = '\0';
	if ((size_t)n == len - 1)
		return err_set(e, -E2BIG, "'%s' is longer than expected", path);
	return 0;
}

int thp_knob_get(const char *root, const char *knob, char *out, size_t len, struct err *e)
{
	char path[512], text[256];
	int r;

	snprintf(out, len, "%s", THP_UNSUPPORTED);
	if ((r = knob_path(path, sizeof(path), root, knob, e)))
		return r;
	if (access(path, F_OK) && errno == ENOENT)
		return -ENOENT;
	if ((r = knob_read_raw(path, text, sizeof(text), e))) {
		snprintf(out, len, "%s", "unreadable");
		return r;
	}
	if (thp_knob_parse(text, out, len)) {
		snprintf(out, len, "%s", "invalid");
		return err_set(e, -EINVAL, "'%s' has no single [selected] value", path);
	}
	return 0;
}

int thp_knob_set(const char *root, const char *knob, const char *value, struct err *e)
{
	char path[512], now[THP_VALUE_MAX];
	size_t n = strlen(value);
	ssize_t w;
	int fd, r, saved;

	if ((r = knob_path(path, sizeof(path), root, knob, e)))
		return r;
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, -errno, "cannot open '%s' for writing: %s", path, strerror(errno));
	do
		w = write(fd, value, n);
	while (w < 0 && errno == EINTR);
	saved = errno;
	close(fd);
	if (w < 0)
		return err_set(e, -saved, "cannot write '%s' to '%s': %s", value, path,
			       strerror(saved));
	if ((size_t)w != n)
		return err_set(e, -EIO, "short write of '%s' to '%s'", value, path);
	if ((r = thp_knob_get(root, knob, now, sizeof(now), e)))
		return r == -ENOENT ? err_set(e, r, "'%s' vanished", path) : r;
	if (strcmp(now, value))
		return err_set(e, -EIO, "wrote '%s' to '%s' but it reads back '%s'", value, path,
			       now);
	return 0;
}

/* the whole of a small file as one trimmed word */
static int read_word(const char *path, char *buf, size_t len, struct err *e)
{
	size_t n;
	int r;

	if ((r = knob_read_raw(path, buf, len, e)))
		return r;
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

int thp_knob_get_u64(const char *root, const char *knob, uint64_t *v, struct err *e)
{
	char path[512], text[64];
	int r;

	if ((r = knob_path(path, sizeof(path), root, knob, e)))
		return r;
	if (access(path, F_OK) && errno == ENOENT)
		return -ENOENT;
	if ((r = read_word(path, text, sizeof(text), e)))
		return r;
	if (parse_u64(text, v))
		return err_set(e, -EINVAL, "'%s' holds '%s', not a number", path, text);
	return 0;
}

int thp_knob_set_u64(const char *root, const char *knob, uint64_t v, struct err *e)
{
	char path[512], text[24];
	uint64_t now;
	ssize_t w;
	size_t n;
	int fd, r, saved;

	if ((r = knob_path(path, sizeof(path), root, knob, e)))
		return r;
	n = (size_t)snprintf(text, sizeof(text), "%" PRIu64, v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(e, -errno, "cannot open '%s' for writing: %s", path, strerror(errno));
	do
		w = write(fd, text, n);
	while (w < 0 && errno == EINTR);
	saved = errno;
	close(fd);
	if (w < 0)
		return err_set(e, -saved, "cannot write '%s' to '%s': %s", text, path,
			       strerror(saved));
	if ((size_t)w != n)
		return err_set(e, -EIO, "short write of '%s' to '%s'", text, path);
	if ((r = thp_knob_get_u64(root, knob, &now, e)))
		return r == -ENOENT ? err_set(e, r, "'%s' vanished", path) : r;
	if (now != v)
		return err_set(e, -EIO, "wrote '%s' to '%s' but it reads back %" PRIu64, text, path,
			       now);
	return 0;
}

bool thp_supported(const char *root)
{
	char path[512];

	if (knob_path(path, sizeof(path), root, "enabled", NULL))
		return false;
	return access(path, F_OK) == 0;
}

bool thp_value_valid(const char *v)
{
	return !strcmp(v, "always") || !strcmp(v, "madvise") || !strcmp(v, "never");
}

bool shmem_value_valid(const char *v)
{
	static const char *const values[] = { "always", "within_size", "advise", "never", "deny", "force" };
	size_t i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		if (!strcmp(v, values[i]))
			return true;
	return false;
}

int smaps_find(FILE *f, uint64_t addr, struct smaps_vma *out, struct err *e)
{
	char line[SYSINFO_LINE_MAX];
	struct smaps_parser p;
	struct smaps_map m;
	bool found = false;
	int r = 0, got;

	memset(out, 0, sizeof(*out));
	smaps_init(&p);
	/* each mapping is complete when the next header comes, the last at the end */
	while (!found && (r = read_line(f, line, sizeof(line))) == 1) {
		if (p.line >= SYSINFO_MAX_LINES)
			return err_set(e, -E2BIG, "smaps has more than %u lines", SYSINFO_MAX_LINES);
		got = smaps_feed(&p, line, strlen(line), &m);
		if (got < 0)
			return err_set(e, got, "smaps line %u: %s: '%.80s'", p.line, p.why, line);
		found = got && addr >= m.start && addr < m.end;
	}
	if (r < 0)
		return err_set(e, r, "smaps line %u longer than %d bytes or unreadable", p.line + 1,
			       SYSINFO_LINE_MAX - 1);
	if (!found)
		found = smaps_finish(&p, &m) && addr >= m.start && addr < m.end;
	if (!found)
		return err_set(e, -ENOENT, "no mapping contains address 0x%" PRIx64 " in smaps", addr);
	out->start = m.start;
	out->end = m.end;
	out->rss_bytes = m.kb[SMAPS_RSS] * 1024;
	out->anon_huge_bytes = m.kb[SMAPS_ANON_HUGE] * 1024;
	out->have_anon_huge = m.have[SMAPS_ANON_HUGE];
	out->shmem_pmd_bytes = m.kb[SMAPS_SHMEM_PMD] * 1024;
	out->have_shmem_pmd = m.have[SMAPS_SHMEM_PMD];
	if (!m.have[SMAPS_RSS])
		return err_set(e, -EINVAL, "mapping 0x%" PRIx64 "-0x%" PRIx64 " has no Rss line",
			       out->start, out->end);
	if (out->anon_huge_bytes > out->rss_bytes)
		return err_set(e, -EINVAL, "AnonHugePages larger than Rss in smaps");
	if (out->shmem_pmd_bytes > out->rss_bytes)
		return err_set(e, -EINVAL, "ShmemPmdMapped larger than Rss in smaps");
	return 0;
}

int smaps_self(const char *root, uint64_t addr, struct smaps_vma *out, struct err *e)
{
	char path[512];
	FILE *f;
	int r;

	if ((r = path_join(path, sizeof(path), root, "/proc/self/smaps", e)))
		return r;
	f = fopen(path, "re");
	if (!f)
		return err_set(e, -errno, "cannot open '%s': %s", path, strerror(errno));
	r = smaps_find(f, addr, out, e);
	fclose(f);
	return r;
}

bool cpuinfo_has_flag(const char *root, const char *flag)
{
	char path[512], line[SYSINFO_LINE_MAX];
	size_t flen = strlen(flag);
	unsigned nlines = 0;
	bool found = false;
	const char *p;
	FILE *f;

	if (!flen || path_join(path, sizeof(path), root, "/proc/cpuinfo", NULL))
		return false;
	f = fopen(path, "re");
	if (!f)
		return false;
	while (read_line(f, line, sizeof(line)) == 1 && ++nlines < 10000) {
		if (strncmp(line, "flags", 5) || !(p = strchr(line, ':')))
			continue;
		for (p++; *p;) {
			size_t n;

			while (*p == ' ' || *p == '\t')
				p++;
			n = strcspn(p, " \t");
			if (n == flen && !strncmp(p, flag, n))
				found = true;
			p += n;
		}
		break;	/* the first CPU's flags */
	}
	fclose(f);
	return found;
}

static int cache_u64(const char *dir, const char *name, uint64_t *v, struct err *e)
{
	char path[600], text[64], *end;
	size_t n;
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((r = read_word(path, text, sizeof(text), e)))
		return r;
	n = strlen(text);
	end = text + n;
	if (!strcmp(name, "size") && n && end[-1] == 'K')
		*--end = '\0';	/* "32K" */
	if (parse_u64(text, v))
		return err_set(e, -EINVAL, "'%s' holds '%s', not a number", path, text);
	if (!strcmp(name, "size"))
		*v *= 1024;
	return 0;
}

int cache_geom_get(const char *root, unsigned level, const char *type, struct cache_geom *g,
		   struct err *e)
{
	char dir[512], rel[96], path[600], text[32];
	uint64_t lv;
	unsigned i;
	int r;

	for (i = 0; i < 16; i++) {
		snprintf(rel, sizeof(rel), "/sys/devices/system/cpu/cpu0/cache/index%u", i);
		if ((r = path_join(dir, sizeof(dir), root, rel, e)))
			return r;
		if (access(dir, F_OK))
			break;
		if (cache_u64(dir, "level", &lv, NULL) || lv != level)
			continue;
		snprintf(path, sizeof(path), "%s/type", dir);
		if (read_word(path, text, sizeof(text), NULL) || strcmp(text, type))
			continue;
		memset(g, 0, sizeof(*g));
		g->level = level;
		if ((r = cache_u64(dir, "ways_of_associativity", &g->ways, e)) ||
		    (r = cache_u64(dir, "number_of_sets", &g->sets, e)) ||
		    (r = cache_u64(dir, "coherency_line_size", &g->line_bytes, e)))
			return r;
		if (cache_u64(dir, "size", &g->size_bytes, NULL))
			g->size_bytes = g->ways * g->sets * g->line_bytes;
		if (!g->ways || !g->sets || !g->line_bytes)
			return err_set(e, -EINVAL, "'%s' describes a cache with no ways, sets or lines",
				       dir);
		return 0;
	}
	return err_set(e, -ENOENT, "no level %u %s cache under '%s%s'", level, type, root,
		       "/sys/devices/system/cpu/cpu0/cache");
}

void fmt_size(uint64_t bytes, char *buf, size_t len)
{
	static const struct { uint64_t unit; char sfx; } u[] = {
		{ 1ull << 40, 'T' }, { 1ull << 30, 'G' }, { 1ull << 20, 'M' },
	};
	size_t i;

	for (i = 0; i < sizeof(u) / sizeof(u[0]); i++) {
		if (bytes && bytes % u[i].unit == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", bytes / u[i].unit, u[i].sfx);
			return;
		}
	}
	if (bytes >= (1u << 20))
		snprintf(buf, len, "%" PRIu64 "M", bytes >> 20);
	else if (bytes && bytes % 1024 == 0)
		snprintf(buf, len, "%" PRIu64 "K", bytes >> 10);
	else
		snprintf(buf, len, "%" PRIu64, bytes);
}

/* ---- /proc/vmstat ------------------------------------------------------------ */

static const char *const gvm_names[GVM__COUNT] = {
	[GVM_PGFAULT] = "pgfault",
	[GVM_THP_FAULT_ALLOC] = "thp_fault_alloc",
	[GVM_THP_FAULT_FALLBACK] = "thp_fault_fallback",
	[GVM_THP_COLLAPSE_ALLOC] = "thp_collapse_alloc",
};

const char *guest_vm_name(enum guest_vm k)
{
	return (unsigned)k < GVM__COUNT ? gvm_names[k] : "?";
}

void guest_vmstat_read(const char *root, struct guest_vmstat *vm)
{
	char path[4096 + 32], line[128];
	FILE *f;
	size_t i;

	memset(vm, 0, sizeof(*vm));
	if (snprintf(path, sizeof(path), "%s/proc/vmstat", root) >= (int)sizeof(path))
		return;
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' '), *end;
		unsigned long long v;

		if (!sp)
			continue;
		*sp = '\0';
		errno = 0;
		v = strtoull(sp + 1, &end, 10);
		if (errno || end == sp + 1 || (*end != '\n' && *end != '\0'))
			continue;
		for (i = 0; i < GVM__COUNT; i++)
			if (!strcmp(line, gvm_names[i])) {
				vm->have[i] = true;
				vm->v[i] = v;
			}
	}
	fclose(f);
}

int guest_vmstat_one(const char *root, const char *key, uint64_t *v)
{
	char path[4096 + 32], line[128];
	size_t klen = strlen(key);
	int ret = -ENOENT;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/proc/vmstat", root) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	f = fopen(path, "re");
	if (!f)
		return -ENOENT;
	while (fgets(line, sizeof(line), f)) {
		char *end;
		unsigned long long x;

		if (strncmp(line, key, klen) || line[klen] != ' ')
			continue;
		errno = 0;
		x = strtoull(line + klen + 1, &end, 10);
		if (!errno && end != line + klen + 1 && (*end == '\n' || *end == '\0')) {
			*v = x;
			ret = 0;
		}
		break;
	}
	fclose(f);
	return ret;
}

int guest_vmstat_add(struct record *r, const char *prefix, const struct guest_vmstat *before,
		     const struct guest_vmstat *after)
{
	int ret = 0;
	size_t i;

	for (i = 0; i < GVM__COUNT; i++) {
		char key[REC_KEY_MAX];

		if (!before->have[i] || !after->have[i] || after->v[i] < before->v[i])
			continue;
		if (snprintf(key, sizeof(key), "%s%s", prefix, gvm_names[i]) >= (int)sizeof(key))
			return -EINVAL;
		ret |= rec_add_u64(r, key, after->v[i] - before->v[i]);
	}
	return ret ? -EINVAL : 0;
}
