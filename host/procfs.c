#include "host/procfs.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "lib/parse.h"
#include "lib/smaps.h"

#define SMAPS_LINE_MAX (PATH_MAX + 256)
#define PROC_LINE_MAX 4096
#define STAT_MAX 4096

/*
 * Next line of f into buf, '\n' removed. 1: a line, 0: end of file, -EOVERFLOW:
 * longer than len - 1 (the rest of it is left in f), else -errno.
 */
static int next_line(FILE *f, char *buf, size_t len)
{
	size_t l;

	errno = 0;
	if (!fgets(buf, (int)len, f)) {
		if (ferror(f))
			return errno ? -errno : -EIO;
		return 0;
	}
	l = strlen(buf);
	if (l && buf[l - 1] == '\n') {
		buf[l - 1] = '\0';
		return 1;
	}
	if (l + 1 < len || feof(f))
		return 1;	/* last line without '\n' */
	return -EOVERFLOW;
}

/* drop the rest of an overlong line */
static int skip_rest(FILE *f)
{
	int c;

	while ((c = getc(f)) != EOF)
		if (c == '\n')
			return 0;
	return ferror(f) ? -EIO : 0;
}

static int proc_path(char *buf, size_t len, const char *proc_root, int pid, const char *name,
		     struct err *e)
{
	int n;

	if (!proc_root || !*proc_root)
		return err_set(e, -EINVAL, "empty proc root");
	if (pid > 0)
		n = snprintf(buf, len, "%s/%d/%s", proc_root, pid, name);
	else
		n = snprintf(buf, len, "%s/%s", proc_root, name);
	if (n < 0 || (size_t)n >= len)
		return err_set(e, -ENAMETOOLONG, "proc root '%s' is too long", proc_root);
	return 0;
}

/*
 * <proc_root>[/<pid>]/name opened for reading into *f; path keeps its name for
 * messages. A process file of a process that is gone is -ENOENT.
 */
static int proc_fopen(char *path, size_t len, const char *proc_root, int pid, const char *name, FILE **f,
		      struct err *e)
{
	int r, saved;

	r = proc_path(path, len, proc_root, pid, name, e);
	if (r)
		return r;
	*f = fopen(path, "re");
	if (*f)
		return 0;
	saved = errno;
	if (pid > 0 && (saved == ENOENT || saved == ESRCH))
		return err_set(e, -ENOENT, "process %d is gone (no '%s')", pid, path);
	return err_set(e, -saved, "cannot open '%s': %s", path, strerror(saved));
}

/* ---- smaps ------------------------------------------------------------------ */

/* which mappings can hold guest RAM */
enum map_kind {
	MAP_ANON,		/* no name, [anon:...], [anon_shmem:...], /dev/zero (deleted) */
	MAP_MEMFD,		/* /memfd:... */
	MAP_FILE,		/* counts only when hugetlbfs (VmFlags ht) */
	MAP_SPECIAL,		/* [heap], [stack], [vdso], ...: never */
};

static enum map_kind map_kind(const char *name)
{
	if (!*name || !strncmp(name, "[anon:", 6) || !strncmp(name, "[anon_shmem:", 12) ||
	    !strcmp(name, "/dev/zero (deleted)"))
		return MAP_ANON;
	if (!strncmp(name, "/memfd:", 7))
		return MAP_MEMFD;
	if (name[0] == '[')
		return MAP_SPECIAL;
	return MAP_FILE;
}

/* "   1234 kB" */
static bool parse_kb(const char *p, uint64_t *v)
{
	char num[24];
	size_t n = 0;

	while (*p == ' ')
		p++;
	while (p[n] >= '0' && p[n] <= '9')
		n++;
	if (n == 0 || n >= sizeof(num) || strcmp(p + n, " kB"))
		return false;
	memcpy(num, p, n);
	num[n] = '\0';
	return !parse_u64(num, v);
}

static void map_add(const struct smaps_map *m, uint64_t want_kb, struct smaps_cov *out)
{
	enum map_kind kind = map_kind(m->name);
	uint64_t page_kb = m->kb[SMAPS_PAGE_KB];
	bool counts;

	/* guest RAM is never executable on the host; TCG's code buffer (rwx, often as
	 * large as guest RAM) is not guest RAM */
	counts = m->perms[2] != 'x' &&
		 (kind == MAP_ANON || kind == MAP_MEMFD || (kind == MAP_FILE && m->vm_hugetlb));
	if (!counts || m->kb[SMAPS_SIZE] < want_kb)
		return;
	out->mapping_kb += m->kb[SMAPS_SIZE];
	out->rss_kb += m->kb[SMAPS_RSS];
	out->anon_huge_kb += m->kb[SMAPS_ANON_HUGE];
	out->shmem_pmd_kb += m->kb[SMAPS_SHMEM_PMD];
	out->hugetlb_kb += m->kb[SMAPS_PRIVATE_HUGETLB] + m->kb[SMAPS_SHARED_HUGETLB];
	/* the smallest hugetlb page size among the counted mappings: the 1G arm's evidence */
	if (m->vm_hugetlb && page_kb && (!out->hugetlb_page_kb || page_kb < out->hugetlb_page_kb))
		out->hugetlb_page_kb = page_kb;
	out->mappings++;
}

int smaps_guest_ram(const char *proc_root, int pid, uint64_t guest_ram_bytes,
		    struct smaps_cov *out, struct err *e)
{
	char path[PATH_MAX], line[SMAPS_LINE_MAX];
	uint64_t want_kb = (guest_ram_bytes + 1023) / 1024;
	struct smaps_parser p;
	struct smaps_map m;
	const char *why = NULL;
	unsigned no = 0;
	FILE *f;
	int r;

	memset(out, 0, sizeof(*out));
	if (pid <= 0 || guest_ram_bytes == 0)
		return err_set(e, -EINVAL, "bad smaps query: pid %d, guest RAM %" PRIu64 " bytes", pid,
			       guest_ram_bytes);
	r = proc_fopen(path, sizeof(path), proc_root, pid, "smaps", &f, e);
	if (r)
		return r;
	smaps_init(&p);
	/* each mapping when the next header (or the end) completes it; every one has a Size */
	while (!why && (r = next_line(f, line, sizeof(line))) > 0) {
		int got = smaps_feed(&p, line, strlen(line), &m);

		no = p.line;
		if (got < 0)
			why = p.why;
		else if (got && !m.have[SMAPS_SIZE])
			why = "mapping without Size", no = m.line;
		else if (got)
			map_add(&m, want_kb, out);
	}
	fclose(f);
	if (r == -EOVERFLOW)
		why = "line too long", no++;
	else if (r == -ESRCH)
		return err_set(e, -ENOENT, "process %d exited while '%s' was read", pid, path);
	else if (r < 0)
		return err_set(e, r, "cannot read '%s': %s", path, strerror(-r));
	if (!why && smaps_finish(&p, &m)) {
		if (!m.have[SMAPS_SIZE])
			why = "mapping without Size", no = m.line;
		else
			map_add(&m, want_kb, out);
	}
	if (why) {
		memset(out, 0, sizeof(*out));
		return err_set(e, -EBADMSG, "malformed '%s' line %u: %s", path, no, why);
	}
	if (!out->mappings)
		return err_set(e, -ESRCH, "no guest-RAM mapping of %" PRIu64 " MiB in '%s': is pid %d the QEMU of this guest?",
			       guest_ram_bytes >> 20, path, pid);
	return 0;
}

double smaps_huge_pct(const struct smaps_cov *c)
{
	double denom, pct;

	if (!c)
		return 0;
	denom = (double)c->rss_kb + (double)c->hugetlb_kb;
	if (denom <= 0)
		return 0;
	pct = ((double)c->anon_huge_kb + (double)c->shmem_pmd_kb + (double)c->hugetlb_kb) /
	      denom * 100.0;
	return pct > 100.0 ? 100.0 : pct;
}

/* ---- vmstat ------------------------------------------------------------------ */

static bool vmstat_wanted(const char *name)
{
	return !strncmp(name, "thp_", 4) || !strncmp(name, "compact_", 8) ||
	       !strcmp(name, "pgfault") || !strcmp(name, "pgmajfault") ||
	       !strcmp(name, "nr_anon_transparent_hugepages") || !strcmp(name, "pgmigrate_success") ||
	       !strcmp(name, "pgsteal_direct");
}

int vmstat_read(const char *proc_root, struct vmstat *out, struct err *e)
{
	char path[PATH_MAX], line[PROC_LINE_MAX];
	const char *why = NULL;
	unsigned no = 0;
	uint64_t v;
	char *sp;
	FILE *f;
	int r;

	out->n = 0;
	r = proc_fopen(path, sizeof(path), proc_root, 0, "vmstat", &f, e);
	if (r)
		return r;
	while ((r = next_line(f, line, sizeof(line))) > 0) {
		no++;
		sp = strchr(line, ' ');
		if (!sp || sp == line || strspn(line, "abcdefghijklmnopqrstuvwxyz0123456789_") !=
					       (size_t)(sp - line)) {
			why = "expected 'name value'";
			break;
		}
		*sp = '\0';
		if (!vmstat_wanted(line)) {
			if (parse_u64(sp[1] == '-' ? sp + 2 : sp + 1, &v)) {
				why = "bad number";
				break;
			}
			continue;
		}
		if (parse_u64(sp + 1, &v)) {
			why = "bad number";
			break;
		}
		if (strlen(line) >= VMSTAT_NAME_MAX) {
			why = "counter name too long";
			break;
		}
		if (out->n >= VMSTAT_MAX) {
			why = "too many thp counters";
			break;
		}
		strcpy(out->e[out->n].name, line);
		out->e[out->n].v = v;
		out->n++;
	}
	fclose(f);
	if (r == -EOVERFLOW)
		return err_set(e, -EBADMSG, "malformed '%s' line %u: line too long", path, no + 1);
	if (r < 0)
		return err_set(e, r, "cannot read '%s': %s", path, strerror(-r));
	if (why)
		return err_set(e, -EBADMSG, "malformed '%s' line %u: %s", path, no, why);
	return 0;
}

int vmstat_get(const struct vmstat *v, const char *name, uint64_t *out)
{
	size_t i;

	for (i = 0; v && name && i < v->n && i < VMSTAT_MAX; i++) {
		if (!strcmp(v->e[i].name, name)) {
			*out = v->e[i].v;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- host info --------------------------------------------------------------- */

/* "key<tabs/spaces>: value" -> value, or NULL when line's key is not key */
static const char *kv_value(const char *line, const char *key)
{
	size_t kl = strlen(key);
	const char *p;

	if (strncmp(line, key, kl))
		return NULL;
	p = line + kl;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != ':')
		return NULL;
	p++;
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static int read_cpuinfo(const char *proc_root, struct host_info *out, struct err *e)
{
	char path[PATH_MAX], line[PROC_LINE_MAX];
	const char *v;
	bool model = false;
	FILE *f;
	int r;

	r = proc_fopen(path, sizeof(path), proc_root, 0, "cpuinfo", &f, e);
	if (r)
		return r;
	while ((r = next_line(f, line, sizeof(line))) != 0) {
		if (r == -EOVERFLOW) {
			/* flags lines grow with every CPU generation: not ours */
			r = skip_rest(f);
			if (r)
				break;
			continue;
		}
		if (r < 0)
			break;
		if (kv_value(line, "processor")) {
			out->cpus++;
		} else if (!model && (v = kv_value(line, "model name"))) {
			snprintf(out->cpu_model, sizeof(out->cpu_model), "%s", v);
			model = true;
		}
	}
	fclose(f);
	if (r < 0)
		return err_set(e, r, "cannot read '%s': %s", path, strerror(-r));
	if (!model)
		snprintf(out->cpu_model, sizeof(out->cpu_model), "unknown");
	return 0;
}

/* one "Key: N kB" value of <proc_root>/meminfo; hint ends the "not there" message */
static int meminfo_kb(const char *proc_root, const char *key, const char *hint, uint64_t *kb, struct err *e)
{
	char path[PATH_MAX], line[PROC_LINE_MAX];
	const char *v;
	bool found = false;
	FILE *f;
	int r;

	r = proc_fopen(path, sizeof(path), proc_root, 0, "meminfo", &f, e);
	if (r)
		return r;
	while (!found && (r = next_line(f, line, sizeof(line))) > 0) {
		if (!(v = kv_value(line, key)))
			continue;
		if (!parse_kb(v, kb)) {
			fclose(f);
			return err_set(e, -EBADMSG, "malformed %s in '%s'", key, path);
		}
		found = true;
	}
	fclose(f);
	if (r < 0)
		return err_set(e, r == -EOVERFLOW ? -EBADMSG : r, "cannot read '%s': %s", path, strerror(-r));
	if (!found)
		return err_set(e, -EBADMSG, "no %s in '%s'%s", key, path, hint);
	return 0;
}

int host_info_read(const char *proc_root, struct host_info *out, struct err *e)
{
	struct utsname u;
	int r, saved;

	memset(out, 0, sizeof(*out));
	if (uname(&u) < 0) {
		saved = errno;
		return err_set(e, -saved, "uname failed: %s", strerror(saved));
	}
	snprintf(out->name, sizeof(out->name), "%s", u.nodename);
	snprintf(out->kernel, sizeof(out->kernel), "%s", u.release);
	r = read_cpuinfo(proc_root, out, e);
	if (r)
		return r;
	return meminfo_kb(proc_root, "MemTotal", "", &out->mem_total_kb, e);
}

#define VIRTIO_DEVICES "/sys/bus/virtio/devices"
#define REPORTING_ORDER "/sys/module/page_reporting/parameters/page_reporting_order"
#define VIRTIO_BALLOON_F_REPORTING 5

/* the first line of a small sysfs file; 1 read, 0 absent, <0 error */
static int sysfs_line(const char *path, char *buf, size_t len, struct err *e)
{
	FILE *f = fopen(path, "re");
	int ok;

	if (!f)
		return errno == ENOENT ? 0 : err_set(e, -errno, "cannot open '%s': %s", path, strerror(errno));
	ok = fgets(buf, (int)len, f) != NULL;
	fclose(f);
	if (!ok)
		return err_set(e, -EBADMSG, "'%s' is empty", path);
	buf[strcspn(buf, "\n")] = '\0';
	return 1;
}

/* one virtio device: a balloon with free page reporting negotiated? */
static int balloon_reports(const char *dir, bool *yes, struct err *e)
{
	char path[PATH_MAX], buf[160], link[PATH_MAX];
	const char *drv;
	ssize_t n;
	int r;

	*yes = false;
	if (snprintf(path, sizeof(path), "%s/device", dir) >= (int)sizeof(path))
		return 0;
	if ((r = sysfs_line(path, buf, sizeof(buf), e)) <= 0 || strcmp(buf, "0x0005"))
		return r < 0 ? r : 0;
	if (snprintf(path, sizeof(path), "%s/driver", dir) >= (int)sizeof(path))
		return 0;
	n = readlink(path, link, sizeof(link) - 1);
	if (n < 0)
		return 0;	/* no driver bound: nothing reported */
	link[n] = '\0';
	drv = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	if (strcmp(drv, "virtio_balloon"))
		return 0;
	if (snprintf(path, sizeof(path), "%s/features", dir) >= (int)sizeof(path))
		return 0;
	if ((r = sysfs_line(path, buf, sizeof(buf), e)) <= 0)
		return r;
	if (strlen(buf) <= VIRTIO_BALLOON_F_REPORTING || strspn(buf, "01") != strlen(buf))
		return err_set(e, -EBADMSG, "unexpected content in '%s': '%.40s'", path, buf);
	*yes = buf[VIRTIO_BALLOON_F_REPORTING] == '1';
	return 0;
}

int host_nested_read(const char *sysfs_root, struct host_info *out, struct err *e)
{
	const char *root = sysfs_root && strcmp(sysfs_root, "/") ? sysfs_root : "";
	char path[PATH_MAX], buf[32];
	struct dirent *d;
	uint64_t v;
	DIR *dir;
	int r = 0;

#if defined(__x86_64__) || defined(__i386__)
	{
		unsigned a, b, c, dx;

		__cpuid(1, a, b, c, dx);
		(void)a, (void)b, (void)dx;
		out->have_virt = true;
		out->virtualized = (c >> 31) & 1;	/* CPUID.1:ECX: running under a hypervisor */
	}
#endif
	out->have_nested = out->reporting = out->have_order = false;
	if (snprintf(path, sizeof(path), "%s%s", root, VIRTIO_DEVICES) >= (int)sizeof(path))
		return err_set(e, -ENAMETOOLONG, "sysfs root '%s' is too long", root);
	out->have_nested = true;	/* no virtio bus: nothing reported */
	dir = opendir(path);
	while (dir && !r && !out->reporting && (d = readdir(dir))) {
		char dev[PATH_MAX];

		if (d->d_name[0] == '.' || snprintf(dev, sizeof(dev), "%s/%s", path, d->d_name) >= (int)sizeof(dev))
			continue;
		r = balloon_reports(dev, &out->reporting, e);
	}
	if (dir)
		closedir(dir);
	if (r)
		out->have_nested = out->reporting = false;	/* not measured */
	if (r || !out->reporting)
		return r;
	snprintf(path, sizeof(path), "%s%s", root, REPORTING_ORDER);
	if ((r = sysfs_line(path, buf, sizeof(buf), e)) <= 0)
		return r;
	if (parse_u64(buf, &v) || v > 64)
		return err_set(e, -EBADMSG, "unexpected content in '%s': '%.31s'", path, buf);
	out->have_order = true;
	out->reporting_order = (unsigned)v;
	return 0;
}

/* ---- stat -------------------------------------------------------------------- */

int proc_minflt(const char *proc_root, int pid, uint64_t *minflt, struct err *e)
{
	char path[PATH_MAX], buf[STAT_MAX], *p, *tok, *save = NULL;
	size_t off = 0;
	ssize_t n;
	int fd, r, saved, i;

	if (pid <= 0)
		return err_set(e, -EINVAL, "bad pid %d", pid);
	r = proc_path(path, sizeof(path), proc_root, pid, "stat", e);
	if (r)
		return r;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		if (saved == ENOENT || saved == ESRCH)
			return err_set(e, -ENOENT, "process %d is gone (no '%s')", pid, path);
		return err_set(e, -saved, "cannot open '%s': %s", path, strerror(saved));
	}
	for (;;) {
		if (off + 1 >= sizeof(buf)) {
			close(fd);
			return err_set(e, -EBADMSG, "malformed '%s': longer than %zu bytes", path,
				       sizeof(buf) - 1);
		}
		n = read(fd, buf + off, sizeof(buf) - 1 - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			saved = errno;
			close(fd);
			if (saved == ESRCH)
				return err_set(e, -ENOENT, "process %d exited while '%s' was read", pid, path);
			return err_set(e, -saved, "cannot read '%s': %s", path, strerror(saved));
		}
		if (n == 0)
			break;
		off += (size_t)n;
	}
	close(fd);
	buf[off] = '\0';
	if (off && buf[off - 1] == '\n')
		buf[--off] = '\0';
	/* comm may hold spaces and ')': the fields start after the last ')' */
	p = strrchr(buf, ')');
	if (!p || !strchr(buf, '(') || strchr(buf, '(') > p || p[1] != ' ')
		return err_set(e, -EBADMSG, "malformed '%s': no '(comm) ' field", path);
	p += 2;
	/* state ppid pgrp session tty_nr tpgid flags minflt: minflt is the 8th after comm */
	for (i = 0, tok = strtok_r(p, " ", &save); tok && i < 7; i++)
		tok = strtok_r(NULL, " ", &save);
	if (!tok || parse_u64(tok, minflt))
		return err_set(e, -EBADMSG, "malformed '%s': no minflt (field 10)", path);
	return 0;
}

/* ---- meminfo: available memory -------------------------------------------- */

int meminfo_available_kb(const char *proc_root, uint64_t *kb, struct err *e)
{
	return meminfo_kb(proc_root, "MemAvailable", " (kernel older than 3.14?)", kb, e);
}

/* ---- buddyinfo ------------------------------------------------------------- */

/* "Node 0, zone   Normal   2675   3425 ..." */
static int buddy_line(char *line, struct buddyinfo *b)
{
	char *tok, *save = NULL;
	unsigned field = 0, order = 0;
	uint64_t v;

	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save), field++) {
		if (field == 0 && strcmp(tok, "Node"))
			return -EBADMSG;
		if (field == 2 && strcmp(tok, "zone"))
			return -EBADMSG;
		if (field < 4)
			continue;
		if (order >= BUDDY_MAX_ORDERS || parse_u64(tok, &v))
			return -EBADMSG;
		b->free[order++] += v;
	}
	if (field < 5)
		return -EBADMSG;
	if (order > b->orders)
		b->orders = order;
	return 0;
}

int buddyinfo_read(const char *proc_root, struct buddyinfo *out, struct err *e)
{
	char path[PATH_MAX], line[PROC_LINE_MAX];
	FILE *f;
	int r;
	unsigned zones = 0;

	memset(out, 0, sizeof(*out));
	r = proc_fopen(path, sizeof(path), proc_root, 0, "buddyinfo", &f, e);
	if (r)
		return r;
	while ((r = next_line(f, line, sizeof(line))) > 0) {
		if (!line[0])
			continue;
		if (buddy_line(line, out)) {
			fclose(f);
			return err_set(e, -EBADMSG, "malformed line %u of '%s'", zones + 1, path);
		}
		zones++;
	}
	fclose(f);
	if (r < 0)
		return err_set(e, r == -EOVERFLOW ? -EBADMSG : r, "cannot read '%s': %s", path, strerror(-r));
	if (!zones)
		return err_set(e, -EBADMSG, "no zones in '%s'", path);
	return 0;
}

double buddy_unusable_pct(const unsigned long long *free, unsigned orders, unsigned order)
{
	unsigned long long total = 0, usable = 0;
	unsigned o;

	for (o = 0; o < orders && o < BUDDY_MAX_ORDERS; o++) {
		total += free[o] << o;
		if (o >= order)
			usable += free[o] << o;
	}
	if (!total)
		return NAN;
	return 100.0 * (double)(total - usable) / (double)total;
}

uint64_t buddy_free_kb(const struct buddyinfo *b, unsigned min_order)
{
	uint64_t kb = 0;
	unsigned o;

	for (o = min_order; o < b->orders; o++)
		kb += b->free[o] * (4ull << o);
	return kb;
}

int proc_vmrss(const char *proc_root, int pid, uint64_t *kb, struct err *e)
{
	char path[PATH_MAX], line[256], num[32], *p, *end;
	size_t len;
	FILE *f;
	int r, saved;

	if (pid <= 0)
		return err_set(e, -EINVAL, "bad pid %d", pid);
	r = proc_path(path, sizeof(path), proc_root, pid, "status", e);
	if (r)
		return r;
	f = fopen(path, "re");
	if (!f) {
		saved = errno;
		if (saved == ENOENT || saved == ESRCH)
			return err_set(e, -ENOENT, "process %d is gone (no '%s')", pid, path);
		return err_set(e, -saved, "cannot open '%s': %s", path, strerror(saved));
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "VmRSS:", 6))
			continue;
		fclose(f);
		/* "VmRSS:\t  123456 kB\n" */
		p = line + 6 + strspn(line + 6, " \t");
		len = strspn(p, "0123456789");
		end = p + len;
		if (len == 0 || len >= sizeof(num) || strcmp(end, " kB\n"))
			return err_set(e, -EBADMSG, "malformed '%s': a VmRSS line that is not 'N kB'", path);
		memcpy(num, p, len);
		num[len] = '\0';
		if (parse_u64(num, kb))
			return err_set(e, -EBADMSG, "malformed '%s': VmRSS out of range", path);
		return 0;
	}
	fclose(f);
	return err_set(e, -ENODATA, "no VmRSS in '%s' (a kernel thread, or a process exiting)", path);
}
