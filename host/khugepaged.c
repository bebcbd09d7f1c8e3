#include "host/khugepaged.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/thp.h"
#include "lib/parse.h"

#define PF_KTHREAD_FLAG 0x00200000u	/* include/linux/sched.h: PF_KTHREAD */

static const struct {
	const char *name, *key;
	uint64_t min, max;	/* mm/khugepaged.c's store functions: kstrtouint, pages_to_scan != 0 */
} knobs[] = {
	[KHP_PAGES_TO_SCAN] = { "pages_to_scan", "khugepaged/pages_to_scan", 1, UINT_MAX },
	[KHP_SCAN_SLEEP_MS] = { "scan_sleep_millisecs", "khugepaged/scan_sleep_millisecs", 0, UINT_MAX },
};
_Static_assert(sizeof(knobs) / sizeof(knobs[0]) == KHP__COUNT, "one row per khugepaged knob");

const char *khp_knob_name(enum khp_knob k)
{
	return (unsigned)k < KHP__COUNT ? knobs[k].name : "?";
}

const char *khp_knob_key(enum khp_knob k)
{
	return (unsigned)k < KHP__COUNT ? knobs[k].key : "?";
}

int khp_opts_parse(const char *s, struct khp_opts *out, struct err *e)
{
	struct khp_opts o;
	char buf[256], *tok, *save = NULL;
	size_t k;

	memset(&o, 0, sizeof(o));
	if (!s || !*s || strlen(s) >= sizeof(buf) || parse_list_check(s))
		return err_set(e, -EINVAL, "expected pages_to_scan=N,scan_sleep_millisecs=M (either or both): '%s'",
			       s ? s : "");
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq)
			return err_set(e, -EINVAL, "'%s' is not KNOB=N: use pages_to_scan=N or scan_sleep_millisecs=M",
				       tok);
		*eq = '\0';
		for (k = 0; k < KHP__COUNT; k++)
			if (!strcmp(tok, knobs[k].name))
				break;
		if (k == KHP__COUNT)
			return err_set(e, -EINVAL, "unknown khugepaged knob '%s': use pages_to_scan or scan_sleep_millisecs",
				       tok);
		if (o.set[k])
			return err_set(e, -EINVAL, "'%s' given twice", tok);
		if (parse_u64_range(eq + 1, knobs[k].min, knobs[k].max, &o.v[k]))
			return err_set(e, -ERANGE, "%s=%s: the kernel takes a number from %llu to %llu", tok, eq + 1,
				       (unsigned long long)knobs[k].min, (unsigned long long)knobs[k].max);
		o.set[k] = true;
	}
	*out = o;
	return 0;
}

/* one number file under the khugepaged directory; -1 when missing */
static int read_num(const char *dir, const char *name, int64_t *v, struct err *e)
{
	char path[PATH_MAX], buf[64];
	uint64_t n;
	ssize_t len;
	int fd, saved;

	*v = -1;
	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return err_set(e, -ENAMETOOLONG, "path under '%s' is too long", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		return saved == ENOENT ? 0 : err_set(e, -saved, "cannot open '%s': %s", path, strerror(saved));
	}
	len = read(fd, buf, sizeof(buf) - 1);
	saved = errno;
	close(fd);
	if (len < 0)
		return err_set(e, -saved, "cannot read '%s': %s", path, strerror(saved));
	buf[len] = '\0';
	if (len && buf[len - 1] == '\n')
		buf[len - 1] = '\0';
	if (parse_u64(buf, &n) || n > INT64_MAX)
		return err_set(e, -EBADMSG, "unexpected content in '%s': expected a number", path);
	*v = (int64_t)n;
	return 0;
}

int khp_state_read(const char *root, struct khp_state *out, struct err *e)
{
	static const struct {
		const char *name;
		size_t off;
	} files[] = {
		{ "pages_to_scan", offsetof(struct khp_state, pages_to_scan) },
		{ "scan_sleep_millisecs", offsetof(struct khp_state, scan_sleep_ms) },
		{ "alloc_sleep_millisecs", offsetof(struct khp_state, alloc_sleep_ms) },
		{ "defrag", offsetof(struct khp_state, defrag) },
		{ "max_ptes_none", offsetof(struct khp_state, max_ptes_none) },
		{ "max_ptes_swap", offsetof(struct khp_state, max_ptes_swap) },
		{ "max_ptes_shared", offsetof(struct khp_state, max_ptes_shared) },
		{ "full_scans", offsetof(struct khp_state, full_scans) },
		{ "pages_collapsed", offsetof(struct khp_state, pages_collapsed) },
	};
	char dir[PATH_MAX];
	struct stat st;
	size_t i, rl = strlen(root);
	int r;

	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (rl == 1 && root[0] == '/')
		rl = 0;
	if (snprintf(dir, sizeof(dir), "%.*s%s/khugepaged", (int)rl, root, THP_DIR) >= (int)sizeof(dir))
		return err_set(e, -ENAMETOOLONG, "khugepaged directory under '%s' is too long", root);
	if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
		return err_set(e, -EOPNOTSUPP, "this host has no '%s' (a kernel without THP or khugepaged)", dir);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if ((r = read_num(dir, files[i].name, (int64_t *)((char *)out + files[i].off), e)))
			return r;
	return 0;
}

/*
 * /proc/<pid>/stat: "pid (comm) state ppid ...": comm may hold spaces and
 * parentheses, so the fields after it start past the last ')'. Field 9 is
 * flags, 14 and 15 utime and stime.
 */
static int stat_fields(const char *proc_root, int pid, char *comm, size_t clen, unsigned long long *flags,
		       unsigned long long *ticks, struct err *e)
{
	char path[PATH_MAX], buf[1024], *open_p, *close_p, *p, *end;
	unsigned long long f[16];
	ssize_t len;
	int fd, saved, i;

	snprintf(path, sizeof(path), "%s/%d/stat", proc_root, pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		return err_set(e, saved == ENOENT ? -ENOENT : -saved, "cannot open '%s': %s", path, strerror(saved));
	}
	len = read(fd, buf, sizeof(buf) - 1);
	saved = errno;
	close(fd);
	if (len < 0)
		return err_set(e, -saved, "cannot read '%s': %s", path, strerror(saved));
	buf[len] = '\0';
	open_p = strchr(buf, '(');
	close_p = strrchr(buf, ')');
	if (!open_p || !close_p || close_p < open_p)
		return err_set(e, -EBADMSG, "malformed '%s'", path);
	snprintf(comm, clen, "%.*s", (int)(close_p - open_p - 1), open_p + 1);
	/* after ") ": state (field 3), then numbers from field 4 */
	p = close_p + 1;
	while (*p == ' ')
		p++;
	if (!*p)
		return err_set(e, -EBADMSG, "malformed '%s'", path);
	p++;
	for (i = 4; i <= 15; i++) {
		errno = 0;
		f[i - 4] = strtoull(p, &end, 10);
		if (end == p || errno)
			return err_set(e, -EBADMSG, "malformed '%s': field %d", path, i);
		p = end;
	}
	*flags = f[9 - 4];
	*ticks = f[14 - 4] + f[15 - 4];
	return 0;
}

int khp_find_thread(const char *proc_root, int *pid, struct err *e)
{
	struct dirent *de;
	DIR *d = opendir(proc_root);
	int saved;

	if (!d) {
		saved = errno;
		return err_set(e, -saved, "cannot list '%s': %s", proc_root, strerror(saved));
	}
	while ((de = readdir(d))) {
		unsigned long long flags, ticks;
		struct err se = ERR_INIT;
		char comm[64];
		uint64_t n;

		if (parse_u64(de->d_name, &n) || n == 0 || n > INT_MAX)
			continue;
		if (stat_fields(proc_root, (int)n, comm, sizeof(comm), &flags, &ticks, &se))
			continue;	/* gone since the listing, or not ours to read */
		if (!strcmp(comm, "khugepaged") && (flags & PF_KTHREAD_FLAG)) {
			closedir(d);
			*pid = (int)n;
			return 0;
		}
	}
	closedir(d);
	return err_set(e, -ESRCH, "no khugepaged kernel thread in '%s' (comm khugepaged with PF_KTHREAD)", proc_root);
}

int khp_cpu_s(const char *proc_root, int pid, double *cpu_s, struct err *e)
{
	unsigned long long flags, ticks;
	long hz = sysconf(_SC_CLK_TCK);
	char comm[64];
	int r = stat_fields(proc_root, pid, comm, sizeof(comm), &flags, &ticks, e);

	if (r)
		return r;
	*cpu_s = (double)ticks / (double)(hz > 0 ? hz : 100);
	return 0;
}
