/*
 * wltest: what the workload tests share (header-only, static functions).
 * Run `workload NAME ...` in this process through registry_workload_main()
 * into a memfd and parse every line with rec_parse (each must be a valid
 * record, numbered 0, 1, ...); check fields; build fake /proc and /sys trees
 * (proc may be a link to the real /proc, so smaps and meminfo stay real),
 * and trees with the CPU of a fixture machine (tests/guest/fixtures).
 */
#ifndef THPEVAL_TESTS_GUEST_WLTEST_H
#define THPEVAL_TESTS_GUEST_WLTEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "guest/harness.h"
#include "guest/registry.h"
#include "lib/record.h"

#define WLT_N(a) (sizeof(a) / sizeof((a)[0]))
#define WLT_MAXREC 64
#define WLT_FN static __attribute__((unused))

struct wlt_out {
	int rc;
	size_t n;
	struct record *rec;	/* WLT_MAXREC, calloc'd */
	char msg[ERR_MSG_MAX];
};

WLT_FN void wlt_free(struct wlt_out *o)
{
	free(o->rec);
	o->rec = NULL;
}

/* argv up to a NULL (or max entries) */
WLT_FN int wlt_argc(const char *const *argv, size_t max)
{
	int n = 0;

	while ((size_t)n < max && argv[n])
		n++;
	return n;
}

/*
 * Run `argv` in this process; parse what it wrote into rec[max] (every line must parse,
 * numbered 0, 1, ...), their count in *n; returns the exit code, the error in e.
 */
WLT_FN int wlt_run_records(const char *root, const char *const *argv, int argc,
			   struct record *rec, size_t max, size_t *n, struct err *e)
{
	struct wl_env env = { .root = root };
	char *text, *line, *save = NULL, why[128];
	int fd = memfd_create("records", 0), rc;
	off_t len;

	assert_true(fd >= 0);
	rc = registry_workload_main(argc, (char *const *)(uintptr_t)argv, &env, fd, e);
	len = lseek(fd, 0, SEEK_CUR);
	text = calloc(1, (size_t)len + 1);
	assert_non_null(text);
	assert_int_equal(pread(fd, text, (size_t)len, 0), len);
	close(fd);
	*n = 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		assert_true(*n < max);
		if (rec_parse(line, strlen(line), &rec[*n], why, sizeof(why)))
			fail_msg("invalid record '%s': %s", line, why);
		assert_int_equal(rec[*n].seq, *n);
		(*n)++;
	}
	free(text);
	return rc;
}

WLT_FN void wlt_run(const char *root, const char *const *argv, int argc, struct wlt_out *o)
{
	struct err e = ERR_INIT;

	o->rec = calloc(WLT_MAXREC, sizeof(*o->rec));
	assert_non_null(o->rec);
	o->rc = wlt_run_records(root, argv, argc, o->rec, WLT_MAXREC, &o->n, &e);
	snprintf(o->msg, sizeof(o->msg), "%s", e.msg);
}

/* exactly one record, of type t, whose reason holds sub; rc as given */
WLT_FN void wlt_expect_one(const struct wlt_out *o, int rc, enum rec_type t, const char *sub)
{
	const char *why;

	if (o->rc != rc)
		fail_msg("exit %d, %d expected (%s)", o->rc, rc, o->msg);
	assert_int_equal(o->n, 1);
	assert_int_equal(o->rec[0].type, t);
	why = rec_get(&o->rec[0], "reason");
	assert_non_null(why);
	if (!strstr(why, sub))
		fail_msg("reason '%s' lacks '%s'", why, sub);
}

/* `argv` (up to a NULL or max entries) in root gives exactly one record, of type t, whose
 * reason holds sub, and exit rc; the record names workload unless that is NULL */
WLT_FN void wlt_expect_bad(const char *root, const char *const *argv, size_t max, int rc,
			   enum rec_type t, const char *sub, const char *workload)
{
	struct wlt_out o;

	wlt_run(root, argv, wlt_argc(argv, max), &o);
	wlt_expect_one(&o, rc, t, sub);
	if (workload)
		assert_string_equal(rec_get(&o.rec[0], "workload"), workload);
	wlt_free(&o);
}

/* a table row for wlt_expect_bad(), named for its cmocka case */
struct wlt_bad {
	const char *name;
	const char *root;
	const char *argv[4];
	int rc;
	enum rec_type type;
	const char *reason;
};

WLT_FN const struct record *wlt_variant(const struct wlt_out *o, const char *variant)
{
	size_t i;

	for (i = 0; i < o->n; i++) {
		const char *v = rec_get(&o->rec[i], "variant");

		if (v && !strcmp(v, variant))
			return &o->rec[i];
	}
	fail_msg("no record with variant=%s", variant);
	return &o->rec[0];	/* not reached: fail_msg() ends the test */
}

/* keys (NULL-terminated) are numbers > 0 and finite */
WLT_FN void wlt_positive(const struct record *r, const char *const *keys)
{
	double d;

	for (; *keys; keys++) {
		if (rec_get_f64(r, *keys, &d))
			fail_msg("field '%s' missing or not a number", *keys);
		if (!(isfinite(d) && d > 0))
			fail_msg("%s = %g is not a positive number", *keys, d);
	}
}

/* every field is one the workload declares (or a --label); numbers are finite */
WLT_FN void wlt_declared(const char *workload, const struct record *r, const char *label)
{
	const struct workload *w = workload_find(workload);
	double d;
	size_t i;

	assert_non_null(w);
	assert_string_equal(rec_get(r, "workload"), workload);
	for (i = 0; i < r->nfields; i++) {
		const char *k = r->f[i].key;

		if (!workload_has_field(w, k) && strcmp(k, "reason") && (!label || strcmp(k, label)))
			fail_msg("field '%s' of the %s record is not declared", k, workload);
		if (!rec_get_f64(r, k, &d) && !isfinite(d))
			fail_msg("field '%s' is not finite", k);
	}
}

/* <root><rel> with text, directories made as needed */
WLT_FN void wlt_put(const char *root, const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

WLT_FN char *wlt_read(const char *root, const char *rel, char *buf, size_t len)
{
	char path[512];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* A fresh tree: /proc a link to the real one (smaps, meminfo) or a meminfo of avail_kb. */
WLT_FN char *wlt_tree(char *tmpl, bool real_proc, unsigned long avail_kb)
{
	char path[512], text[128];

	if (!mkdtemp(tmpl))
		return NULL;
	if (real_proc) {
		snprintf(path, sizeof(path), "%s/proc", tmpl);
		if (symlink("/proc", path))
			return NULL;
	} else {
		snprintf(text, sizeof(text), "MemTotal: %lu kB\nMemAvailable: %lu kB\n",
			 avail_kb + 100000, avail_kb);
		wlt_put(tmpl, "/proc/meminfo", text);
	}
	return tmpl;
}

/*
 * A fresh tree with the CPU of fixture (a directory under tests/guest/fixtures,
 * relative to the repository root the tests run in): its
 * sys/devices/system/cpu and proc/cpuinfo copied, the rest of /proc this
 * process reads (self, meminfo, vmstat) and the THP knobs (sys/kernel) links
 * to the real ones, read only. NULL when it cannot be built.
 */
WLT_FN char *wlt_cpu_tree(char *tmpl, const char *fixture)
{
	char cmd[2048];

	if (!mkdtemp(tmpl))
		return NULL;
	snprintf(cmd, sizeof(cmd),
		 "set -e; f='tests/guest/fixtures/%s'; r='%s'; mkdir -p \"$r/sys/devices/system\" \"$r/proc\"; "
		 "cp -R \"$f/sys/devices/system/cpu\" \"$r/sys/devices/system/\"; "
		 "cp \"$f/proc/cpuinfo\" \"$r/proc/\"; ln -s /sys/kernel \"$r/sys/kernel\"; "
		 "for p in self meminfo vmstat; do ln -s /proc/$p \"$r/proc/$p\"; done",
		 fixture, tmpl);
	return system(cmd) ? NULL : tmpl;
}

WLT_FN void wlt_tree_free(const char *root)
{
	char cmd[600];

	if (!root || strncmp(root, "/tmp/thpeval-", 13))
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd))
		print_message("cannot remove '%s'\n", root);
}

#endif
