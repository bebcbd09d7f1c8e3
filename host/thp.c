#include "host/thp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/array.h"
#include "lib/parse.h"

#ifndef SYSFS_MAGIC
#define SYSFS_MAGIC 0x62656572
#endif

#define THP_FILE_MAX 1024	/* sysfs THP files are one short line */
#define THP_MAX_CHOICES 16

enum range_max {
	RANGE_FIXED,		/* max as given */
	RANGE_PMD_NR,		/* HPAGE_PMD_NR - 1, from hpage_pmd_size */
};

struct key_def {
	const char *key;
	enum thp_kind kind;
	uint64_t min, max;
	enum range_max max_from;
};

/* ranges follow the kernel's store functions (mm/huge_memory.c, mm/khugepaged.c) */
static const struct key_def fixed_keys[] = {
	{ "enabled", THP_KIND_CHOICE, 0, 0, RANGE_FIXED },
	{ "defrag", THP_KIND_CHOICE, 0, 0, RANGE_FIXED },
	{ "use_zero_page", THP_KIND_U64, 0, 1, RANGE_FIXED },
	{ "shmem_enabled", THP_KIND_CHOICE, 0, 0, RANGE_FIXED },
	{ "shrink_underused", THP_KIND_U64, 0, 1, RANGE_FIXED },
	{ "khugepaged/defrag", THP_KIND_U64, 0, 1, RANGE_FIXED },
	{ "khugepaged/pages_to_scan", THP_KIND_U64, 1, UINT_MAX, RANGE_FIXED },
	{ "khugepaged/scan_sleep_millisecs", THP_KIND_U64, 0, UINT_MAX, RANGE_FIXED },
	{ "khugepaged/alloc_sleep_millisecs", THP_KIND_U64, 0, UINT_MAX, RANGE_FIXED },
	{ "khugepaged/max_ptes_none", THP_KIND_U64, 0, 0, RANGE_PMD_NR },
	{ "khugepaged/max_ptes_swap", THP_KIND_U64, 0, 0, RANGE_PMD_NR },
	{ "khugepaged/max_ptes_shared", THP_KIND_U64, 0, 0, RANGE_PMD_NR },
};

/* per-size knobs, in the order they are listed for one size */
static const char *const size_knobs[] = { "enabled", "shmem_enabled" };

static const struct key_def size_def = { NULL, THP_KIND_CHOICE, 0, 0, RANGE_FIXED };

/*
 * The hugetlb pool of one page size, for the hugetlbfs reference arm:
 * "hugetlb/hugepages-<N>kB/nr_hugepages" is /sys/kernel/mm/hugepages/... (not
 * under THP_DIR; not part of thp_settings_read(): only journaled when set).
 */
#define HUGETLB_PFX "hugetlb/"
#define HUGETLB_DIR "/sys/kernel/mm/hugepages"
static const struct key_def pool_def = { NULL, THP_KIND_U64, 0, UINT_MAX, RANGE_FIXED };

/*
 * The sysctls thpeval changes, journaled like a knob: "sysctl/vm/X" is
 * /proc/sys/vm/X. The fragmented-host arm sets compaction_proactiveness
 * (Linux 5.9+, 0..100) to 0 so that kcompactd does not compact the
 * fragmentation away, and its undo raises percpu_pagelist_high_fraction (0 or
 * 8..INT_MAX: the kernel refuses 1..7) for a few seconds to empty the per-CPU
 * free lists into the buddy allocator.
 */
#define SYSCTL_PFX "sysctl/"
#define SYSCTL_DIR "/proc/sys"
static const struct key_def sysctl_keys[] = {
	{ "sysctl/vm/compaction_proactiveness", THP_KIND_U64, 0, 100, RANGE_FIXED },
	{ "sysctl/vm/percpu_pagelist_high_fraction", THP_KIND_U64, 0, INT_MAX, RANGE_FIXED },
};

/*
 * KSM's knobs, for the KSM arm: "ksm/X" is /sys/kernel/mm/ksm/X (not under
 * THP_DIR; not part of thp_settings_read(): only journaled when set). run:
 * 0 stop, 1 run, 2 stop and unmerge (mm/ksm.c run_store); the scan rate is
 * pages_to_scan pages every sleep_millisecs.
 */
#define KSM_PFX "ksm/"
#define KSM_DIR "/sys/kernel/mm/ksm"
static const struct key_def ksm_keys[] = {
	{ "ksm/run", THP_KIND_U64, 0, 2, RANGE_FIXED },
	{ "ksm/pages_to_scan", THP_KIND_U64, 0, UINT_MAX, RANGE_FIXED },
	{ "ksm/sleep_millisecs", THP_KIND_U64, 0, UINT_MAX, RANGE_FIXED },
};

/* "hugepages-<N>kB" with N a power of two >= 8, no leading zero; rest points past "kB" */
static bool parse_size_dir(const char *s, unsigned *kb, const char **rest)
{
	static const char pfx[] = "hugepages-";
	uint64_t v = 0;
	const char *p;

	if (strncmp(s, pfx, sizeof(pfx) - 1))
		return false;
	p = s + sizeof(pfx) - 1;
	if (*p < '1' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT_MAX)
			return false;
	}
	if (p[0] != 'k' || p[1] != 'B')
		return false;
	if (v < 8 || (v & (v - 1)))
		return false;
	*kb = (unsigned)v;
	*rest = p + 2;
	return true;
}

static const struct key_def *key_lookup(const char *key)
{
	const char *rest;
	unsigned kb;
	size_t i;

	if (!key)
		return NULL;
	for (i = 0; i < ARRAY_SIZE(fixed_keys); i++)
		if (!strcmp(key, fixed_keys[i].key))
			return &fixed_keys[i];
	for (i = 0; i < ARRAY_SIZE(sysctl_keys); i++)
		if (!strcmp(key, sysctl_keys[i].key))
			return &sysctl_keys[i];
	for (i = 0; i < ARRAY_SIZE(ksm_keys); i++)
		if (!strcmp(key, ksm_keys[i].key))
			return &ksm_keys[i];
	if (!strncmp(key, HUGETLB_PFX, sizeof(HUGETLB_PFX) - 1))
		return parse_size_dir(key + sizeof(HUGETLB_PFX) - 1, &kb, &rest) &&
			       !strcmp(rest, "/nr_hugepages") ? &pool_def : NULL;
	if (!parse_size_dir(key, &kb, &rest) || *rest != '/')
		return NULL;
	for (i = 0; i < ARRAY_SIZE(size_knobs); i++)
		if (!strcmp(rest + 1, size_knobs[i]))
			return &size_def;
	return NULL;
}

bool thp_key_known(const char *key)
{
	return key_lookup(key) != NULL;
}

int thp_key_kind(const char *key, enum thp_kind *kind)
{
	const struct key_def *d = key_lookup(key);

	if (!d)
		return -EINVAL;
	*kind = d->kind;
	return 0;
}

bool thp_value_equal(const char *key, const char *a, const char *b)
{
	const struct key_def *d = key_lookup(key);
	uint64_t x, y;

	if (!a || !b)
		return false;
	if (d && d->kind == THP_KIND_U64 && !parse_u64(a, &x) && !parse_u64(b, &y))
		return x == y;
	return !strcmp(a, b);
}

static int thp_path(const char *root, const char *rel, char *buf, size_t len, struct err *e)
{
	size_t rl;
	int n;

	if (!root || !*root)
		return err_set(e, -EINVAL, "empty filesystem root for the thp settings");
	rl = strlen(root);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (rl == 1 && root[0] == '/')
		rl = 0;
	if (!strncmp(rel, HUGETLB_PFX, sizeof(HUGETLB_PFX) - 1))
		n = snprintf(buf, len, "%.*s%s/%s", (int)rl, root, HUGETLB_DIR, rel + sizeof(HUGETLB_PFX) - 1);
	else if (!strncmp(rel, SYSCTL_PFX, sizeof(SYSCTL_PFX) - 1))
		n = snprintf(buf, len, "%.*s%s/%s", (int)rl, root, SYSCTL_DIR, rel + sizeof(SYSCTL_PFX) - 1);
	else if (!strncmp(rel, KSM_PFX, sizeof(KSM_PFX) - 1))
		n = snprintf(buf, len, "%.*s%s/%s", (int)rl, root, KSM_DIR, rel + sizeof(KSM_PFX) - 1);
	else
		n = snprintf(buf, len, "%.*s%s%s%s", (int)rl, root, THP_DIR, *rel ? "/" : "", rel);
	if (n < 0 || (size_t)n >= len)
		return err_set(e, -ENAMETOOLONG, "path of thp setting '%s' under '%s' is too long",
			       rel, root);
	return 0;
}

/* whole small file into buf; -ENOENT is returned without touching e */
static int read_small(const char *path, char *buf, size_t len, struct err *e)
{
	size_t off = 0;
	ssize_t r;
	int fd, saved;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT || saved == ENOTDIR)
			return -ENOENT;
		return err_set(e, -saved, "cannot open '%s': %s", path, strerror(saved));
	}
	for (;;) {
		if (off + 1 >= len) {
			close(fd);
			return err_set(e, -EFBIG, "'%s' is longer than %zu bytes: not a thp setting file",
				       path, len - 1);
		}
		r = read(fd, buf + off, len - 1 - off);
		if (r < 0) {
			saved = errno;
			if (saved == EINTR)
				continue;
			close(fd);
			return err_set(e, -saved, "cannot read '%s': %s", path, strerror(saved));
		}
		if (r == 0)
			break;
		off += (size_t)r;
	}
	close(fd);
	buf[off] = '\0';
	return 0;
}

static bool word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '+' || c == '-';
}

struct choices {
	size_t n;
	int current;		/* index of the bracketed word */
	char w[THP_MAX_CHOICES][THP_VAL_MAX];
};

/* "always [madvise] never\n": words of [a-z0-9_+-], exactly one bracketed */
static int parse_choices(const char *path, const char *text, struct choices *c, struct err *e)
{
	const char *p = text;

	c->n = 0;
	c->current = -1;
	for (;;) {
		bool br = false;
		size_t l = 0;

		while (*p == ' ')
			p++;
		if (*p == '\n' && p[1] == '\0')
			break;
		if (*p == '\0')
			break;
		if (*p == '[') {
			br = true;
			p++;
		}
		while (word_char(p[l]))
			l++;
		if (l == 0 || l >= THP_VAL_MAX)
			goto bad;
		if (br && p[l] != ']')
			goto bad;
		if (c->n >= THP_MAX_CHOICES)
			goto bad;
		memcpy(c->w[c->n], p, l);
		c->w[c->n][l] = '\0';
		if (br) {
			if (c->current >= 0)
				goto bad;
			c->current = (int)c->n;
			l++;
		}
		c->n++;
		p += l;
		if (*p != ' ' && *p != '\n' && *p != '\0')
			goto bad;
	}
	if (c->current < 0)
		goto bad;
	return 0;
bad:
	return err_set(e, -EINVAL, "unexpected content in '%s': expected choices like 'always [madvise] never'",
		       path);
}

/* "123\n" */
static int parse_number_file(const char *path, char *text, uint64_t *v, struct err *e)
{
	size_t l = strlen(text);

	if (l && text[l - 1] == '\n')
		text[--l] = '\0';
	if (parse_u64(text, v))
		return err_set(e, -EINVAL, "unexpected content in '%s': expected a number", path);
	return 0;
}

/* HPAGE_PMD_NR - 1 from hpage_pmd_size (bytes) and the page size */
static int pmd_nr_max(const char *root, uint64_t *max, struct err *e)
{
	char path[PATH_MAX], buf[64];
	long page = sysconf(_SC_PAGESIZE);
	uint64_t pmd = 2u << 20;
	int r;

	if (page <= 0)
		page = 4096;
	r = thp_path(root, "hpage_pmd_size", path, sizeof(path), e);
	if (r)
		return r;
	r = read_small(path, buf, sizeof(buf), e);
	if (r && r != -ENOENT)
		return r;
	if (!r) {
		r = parse_number_file(path, buf, &pmd, e);
		if (r)
			return r;
	}
	if (pmd < (uint64_t)page * 2)
		return err_set(e, -EINVAL, "'%s' says %" PRIu64 " bytes, less than two pages", path, pmd);
	*max = pmd / (uint64_t)page - 1;
	return 0;
}

/* value (without the file's decoration) of a known key; -ENOENT silently when missing */
static int read_key(const char *root, const struct key_def *d, const char *key,
		    char *value, size_t len, struct choices *cs, struct err *e)
{
	char path[PATH_MAX], buf[THP_FILE_MAX];
	struct choices local;
	const char *v;
	char num[32];
	uint64_t n;
	int r;

	r = thp_path(root, key, path, sizeof(path), e);
	if (r)
		return r;
	r = read_small(path, buf, sizeof(buf), e);
	if (r)
		return r;
	if (d->kind == THP_KIND_CHOICE) {
		if (!cs)
			cs = &local;
		r = parse_choices(path, buf, cs, e);
		if (r)
			return r;
		v = cs->w[cs->current];
	} else {
		r = parse_number_file(path, buf, &n, e);
		if (r)
			return r;
		snprintf(num, sizeof(num), "%" PRIu64, n);
		v = num;
	}
	if (strlen(v) >= len)
		return err_set(e, -ENAMETOOLONG, "value of '%s' does not fit in %zu bytes", path, len);
	strcpy(value, v);
	return 0;
}

const char *thp_settings_get(const struct thp_settings *s, const char *key)
{
	size_t i;

	if (!s || !key)
		return NULL;
	for (i = 0; i < s->n && i < THP_MAX_SETTINGS; i++)
		if (!strcmp(s->s[i].key, key))
			return s->s[i].value;
	return NULL;
}

int thp_settings_put(struct thp_settings *s, const char *key, const char *value, struct err *e)
{
	struct thp_knob *t = NULL;
	size_t i;

	if (strlen(key) >= THP_KEY_MAX || strlen(value) >= THP_VAL_MAX)
		return err_set(e, -ENAMETOOLONG, "thp setting '%s' or its value is too long", key);
	for (i = 0; i < s->n; i++)
		if (!strcmp(s->s[i].key, key))
			t = &s->s[i];
	if (!t) {
		if (s->n >= THP_MAX_SETTINGS)
			return err_set(e, -ENOSPC, "more than %d thp settings", THP_MAX_SETTINGS);
		t = &s->s[s->n++];
		strcpy(t->key, key);
	}
	strcpy(t->value, value);
	return 0;
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return (x > y) - (x < y);
}

int thp_sizes(const char *root, unsigned *sizes_kb, size_t max, size_t *n, struct err *e)
{
	char path[PATH_MAX];
	struct dirent *de;
	const char *rest;
	unsigned kb;
	DIR *d;
	int r, saved;

	*n = 0;
	r = thp_path(root, "", path, sizeof(path), e);
	if (r)
		return r;
	d = opendir(path);
	if (!d) {
		saved = errno;
		if (saved == ENOENT || saved == ENOTDIR)
			return 0;
		return err_set(e, -saved, "cannot list '%s': %s", path, strerror(saved));
	}
	errno = 0;
	while ((de = readdir(d))) {
		if (!parse_size_dir(de->d_name, &kb, &rest) || *rest)
			continue;
		if (*n >= max) {
			closedir(d);
			return err_set(e, -ENOSPC, "'%s' offers more than %zu huge page sizes", path, max);
		}
		sizes_kb[(*n)++] = kb;
		errno = 0;
	}
	saved = errno;
	closedir(d);
	if (saved)
		return err_set(e, -saved, "cannot list '%s': %s", path, strerror(saved));
	qsort(sizes_kb, *n, sizeof(*sizes_kb), cmp_unsigned);
	return 0;
}

static int add_if_present(const char *root, const struct key_def *d, const char *key,
			  struct thp_settings *out, struct err *e)
{
	char v[THP_VAL_MAX];
	int r;

	r = read_key(root, d, key, v, sizeof(v), NULL, e);
	if (r == -ENOENT)
		return 0;	/* unsupported by this kernel */
	if (r)
		return r;
	return thp_settings_put(out, key, v, e);
}

int thp_settings_read(const char *root, struct thp_settings *out, struct err *e)
{
	unsigned sizes[64];
	char key[THP_KEY_MAX];
	size_t i, j, ns;
	int r;

	out->n = 0;
	for (i = 0; i < ARRAY_SIZE(fixed_keys); i++) {
		r = add_if_present(root, &fixed_keys[i], fixed_keys[i].key, out, e);
		if (r)
			return r;
	}
	r = thp_sizes(root, sizes, ARRAY_SIZE(sizes), &ns, e);
	if (r)
		return r;
	for (i = 0; i < ns; i++) {
		for (j = 0; j < ARRAY_SIZE(size_knobs); j++) {
			snprintf(key, sizeof(key), "hugepages-%ukB/%s", sizes[i], size_knobs[j]);
			r = add_if_present(root, &size_def, key, out, e);
			if (r)
				return r;
		}
	}
	return 0;
}

static int unsupported(const char *root, const char *key, struct err *e)
{
	char path[PATH_MAX];
	int r = thp_path(root, key, path, sizeof(path), e);

	if (r)
		return r;
	return err_set(e, -EOPNOTSUPP, "'%s' is not supported by this kernel (no '%s')", key, path);
}

int thp_read_one(const char *root, const char *key, char *value, size_t len, struct err *e)
{
	const struct key_def *d = key_lookup(key);
	int r;

	if (!d)
		return err_set(e, -EINVAL, "unknown thp setting '%s'", key ? key : "(null)");
	r = read_key(root, d, key, value, len, NULL, e);
	if (r == -ENOENT)
		return unsupported(root, key, e);
	return r;
}

static void join_choices(const struct choices *c, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < c->n && off < len; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? ", " : "", c->w[i]);

		if (n < 0)
			break;
		off += (size_t)n;
	}
}

/* validate and produce the canonical value; cs gets the choices for choice keys */
static int validate(const char *root, const char *key, const char *value,
		    char *canon, size_t canon_len, struct choices *cs, struct err *e)
{
	const struct key_def *d = key_lookup(key);
	char cur[THP_VAL_MAX], list[512];
	uint64_t v, max;
	size_t i;
	int r;

	if (!d)
		return err_set(e, -EINVAL,
			       "unknown thp setting '%s': known are enabled, defrag, use_zero_page, shmem_enabled, shrink_underused, khugepaged/<knob>, hugepages-<N>kB/enabled and hugepages-<N>kB/shmem_enabled",
			       key ? key : "(null)");
	if (!value)
		return err_set(e, -EINVAL, "no value given for thp setting '%s'", key);
	r = read_key(root, d, key, cur, sizeof(cur), cs, e);
	if (r == -ENOENT)
		return unsupported(root, key, e);
	if (r)
		return r;
	if (d->kind == THP_KIND_CHOICE) {
		for (i = 0; i < cs->n; i++) {
			if (!strcmp(value, cs->w[i])) {
				snprintf(canon, canon_len, "%s", value);
				return 0;
			}
		}
		join_choices(cs, list, sizeof(list));
		return err_set(e, -EINVAL, "invalid value '%s' for thp setting '%s': choose one of %s",
			       value, key, list);
	}
	max = d->max;
	if (d->max_from == RANGE_PMD_NR) {
		r = pmd_nr_max(root, &max, e);
		if (r)
			return r;
	}
	r = parse_u64_range(value, d->min, max, &v);
	if (r)
		return err_set(e, r, "invalid value '%s' for thp setting '%s': expected a number from %" PRIu64 " to %" PRIu64,
			       value, key, d->min, max);
	snprintf(canon, canon_len, "%" PRIu64, v);
	return 0;
}

int thp_validate(const char *root, const char *key, const char *value, struct err *e)
{
	char canon[THP_VAL_MAX];
	struct choices cs;

	return validate(root, key, value, canon, sizeof(canon), &cs, e);
}

static int write_all(int fd, const char *buf, size_t len)
{
	size_t off = 0;
	ssize_t r;

	while (off < len) {
		r = write(fd, buf + off, len - off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		off += (size_t)r;
	}
	return 0;
}

int thp_write(const char *root, const char *key, const char *value, struct err *e)
{
	char path[PATH_MAX], canon[THP_VAL_MAX], back[THP_VAL_MAX], buf[THP_FILE_MAX];
	const struct key_def *d;
	struct choices cs;
	struct statfs sf;
	size_t i, off;
	int fd, r, saved;

	r = validate(root, key, value, canon, sizeof(canon), &cs, e);
	if (r)
		return r;
	d = key_lookup(key);
	r = thp_path(root, key, path, sizeof(path), e);
	if (r)
		return r;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		saved = errno;
		return err_set(e, -saved, "cannot open '%s' for writing: %s%s", path, strerror(saved),
			       saved == EACCES || saved == EPERM ? ": run as root" : "");
	}
	if (fstatfs(fd, &sf) < 0) {
		saved = errno;
		close(fd);
		return err_set(e, -saved, "cannot statfs '%s': %s", path, strerror(saved));
	}
	if (d && d->kind == THP_KIND_CHOICE && sf.f_type != SYSFS_MAGIC) {
		/* a fake tree: render the file as the kernel would show it */
		off = 0;
		buf[0] = '\0';
		for (i = 0; i < cs.n; i++) {
			bool cur = !strcmp(cs.w[i], canon);
			int n = snprintf(buf + off, sizeof(buf) - off, "%s%s%s%s", i ? " " : "",
					 cur ? "[" : "", cs.w[i], cur ? "]" : "");

			if (n < 0 || (size_t)n >= sizeof(buf) - off)
				break;
			off += (size_t)n;
		}
		snprintf(buf + off, sizeof(buf) - off, "\n");
	} else {
		snprintf(buf, sizeof(buf), "%s\n", canon);
	}
	r = write_all(fd, buf, strlen(buf));
	if (r) {
		close(fd);
		return err_set(e, r, "cannot write '%s' to '%s': %s", canon, path, strerror(-r));
	}
	if (close(fd) < 0) {
		saved = errno;
		return err_set(e, -saved, "cannot write '%s' to '%s': %s", canon, path, strerror(saved));
	}
	r = thp_read_one(root, key, back, sizeof(back), e);
	if (r)
		return r;
	if (!thp_value_equal(key, back, canon))
		return err_set(e, -EIO, "wrote '%s' to '%s' but it reads back '%s': the kernel did not take the setting",
			       canon, path, back);
	return 0;
}

ENUM_IMPL(thp_mode, THP_MODE__COUNT, "always", "madvise", "never", "inherit");

/* the modes a setting may name: 'enabled' always, madvise or never; one size alone always or madvise */
static bool setting_valid(const struct thp_setting *t)
{
	if (t->kb == 0)
		return t->mode == THP_MODE_ALWAYS || t->mode == THP_MODE_MADVISE || t->mode == THP_MODE_NEVER;
	return t->kb >= 8 && t->kb <= (1u << 30) && !(t->kb & (t->kb - 1)) &&
	       (t->mode == THP_MODE_ALWAYS || t->mode == THP_MODE_MADVISE);
}

int thp_setting_parse(const char *s, struct thp_setting *out)
{
	struct thp_setting t = { 0, THP_MODE_NEVER };
	const char *colon, *mode = s;
	char num[16];
	uint64_t v;
	size_t n;

	if (!s)
		return -EINVAL;
	colon = strchr(s, ':');
	if (colon) {
		/* "<N>K": digits without a leading zero, then K */
		n = (size_t)(colon - s);
		if (n < 2 || n - 1 >= sizeof(num) || colon[-1] != 'K' || s[0] == '0')
			return -EINVAL;
		memcpy(num, s, n - 1);
		num[n - 1] = '\0';
		if (parse_u64_range(num, 8, 1u << 30, &v))
			return -EINVAL;
		t.kb = (unsigned)v;
		mode = colon + 1;
	}
	if (thp_mode_parse(mode, &t.mode) || !setting_valid(&t))
		return -EINVAL;
	*out = t;
	return 0;
}

int thp_setting_format(const struct thp_setting *t, char *buf, size_t len)
{
	int n;

	if (!setting_valid(t))
		return -EINVAL;
	if (t->kb)
		n = snprintf(buf, len, "%uK:%s", t->kb, thp_mode_name(t->mode));
	else
		n = snprintf(buf, len, "%s", thp_mode_name(t->mode));
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

bool thp_setting_equal(const struct thp_setting *a, const struct thp_setting *b)
{
	return a->kb == b->kb && a->mode == b->mode;
}
