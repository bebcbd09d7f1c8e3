/*
 * tests for guest/sysinfo.c: smaps, meminfo and THP knob parsing on fixtures;
 * cache geometry and cpuinfo flags of the fixture machines' CPUs
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "guest/sysinfo.h"
#include "wltest.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char smaps_fixture[] =
	"55d0c0a00000-55d0c0a21000 r-xp 00000000 fe:01 1234   /usr/bin/thpeval guest\n"
	"Size:                132 kB\n"
	"Rss:                 120 kB\n"
	"Pss:                 120 kB\n"
	"VmFlags: rd ex mr mw me dw\n"
	"7f2a00000000-7f2a10000000 rw-p 00000000 00:00 0 \n"
	"Size:             262144 kB\n"
	"KernelPageSize:        4 kB\n"
	"Rss:              262144 kB\n"
	"Pss:              262144 kB\n"
	"Anonymous:        262144 kB\n"
	"AnonHugePages:    204800 kB\n"
	"ShmemPmdMapped:        0 kB\n"
	"THPeligible:    1\n"
	"VmFlags: rd wr mr mw me ac sd hg\n"
	"7ffd1c000000-7ffd1c021000 rw-p 00000000 00:00 0                          [stack]\n"
	"Size:                132 kB\n"
	"Rss:                  16 kB\n"
	"AnonHugePages:         0 kB\n";

struct smaps_case {
	const char *name;
	const char *text;	/* NULL: the fixture */
	uint64_t addr;
	int ret;
	uint64_t start, rss_kb, huge_kb;
	int have_huge;
	uint64_t shmem_pmd_kb;
	int have_shmem_pmd;
};

static struct smaps_case smaps_cases[] = {
	{ "buffer mapping: coverage from AnonHugePages / Rss", NULL, 0x7f2a00000000ull + 4096, 0,
	  0x7f2a00000000ull, 262144, 204800, 1, 0, 1 },
	{ "last byte of the mapping", NULL, 0x7f2a10000000ull - 1, 0, 0x7f2a00000000ull, 262144,
	  204800, 1, 0, 1 },
	{ "memfd mapping: ShmemPmdMapped",
	  "7f0000000000-7f0000400000 rw-s 0 00:01 7 /memfd:thpeval-tlb (deleted)\nRss: 4096 kB\n"
	  "AnonHugePages: 0 kB\nShmemPmdMapped: 4096 kB\n",
	  0x7f0000000000ull, 0, 0x7f0000000000ull, 4096, 0, 1, 4096, 1 },
	{ "ShmemPmdMapped above Rss",
	  "7f0000000000-7f0000400000 rw-s 0 00:01 7 /memfd:x\nRss: 4 kB\nShmemPmdMapped: 2048 kB\n",
	  0x7f0000000000ull, -EINVAL, 0, 0, 0, 0, 0, 0 },
	{ "repeated ShmemPmdMapped",
	  "7f0000000000-7f0000400000 rw-s 0 00:01 7 /memfd:x\nRss: 4 kB\nShmemPmdMapped: 0 kB\n"
	  "ShmemPmdMapped: 0 kB\n",
	  0x7f0000000000ull, -EBADMSG, 0, 0, 0, 0, 0, 0 },
	{ "file mapping without AnonHugePages", NULL, 0x55d0c0a00010ull, 0, 0x55d0c0a00000ull,
	  120, 0, 0, 0, 0 },
	{ "last mapping at end of text", NULL, 0x7ffd1c000000ull, 0, 0x7ffd1c000000ull, 16, 0, 1, 0, 0 },
	{ "address in no mapping", NULL, 0x7f2a10000000ull, -ENOENT, 0, 0, 0, 0, 0, 0 },
	{ "bad Rss value", "7f0000000000-7f0000200000 rw-p 0 00:00 0\nRss:  12x kB\n",
	  0x7f0000000000ull, -EBADMSG, 0, 0, 0, 0, 0, 0 },
	{ "Rss without unit", "7f0000000000-7f0000200000 rw-p 0 00:00 0\nRss:  12\n",
	  0x7f0000000000ull, -EBADMSG, 0, 0, 0, 0, 0, 0 },
	{ "repeated Rss", "7f0000000000-7f0000200000 rw-p 0 00:00 0\nRss: 4 kB\nRss: 4 kB\n",
	  0x7f0000000000ull, -EBADMSG, 0, 0, 0, 0, 0, 0 },
	{ "no Rss line", "7f0000000000-7f0000200000 rw-p 0 00:00 0\nAnonHugePages: 0 kB\n",
	  0x7f0000000000ull, -EINVAL, 0, 0, 0, 0, 0, 0 },
	{ "AnonHugePages above Rss",
	  "7f0000000000-7f0000200000 rw-p 0 00:00 0\nRss: 4 kB\nAnonHugePages: 2048 kB\n",
	  0x7f0000000000ull, -EINVAL, 0, 0, 0, 0, 0, 0 },
	{ "overlong line", NULL /* built in main */, 0x7f0000000000ull, -E2BIG, 0, 0, 0, 0, 0, 0 },
};

static char overlong[SYSINFO_LINE_MAX + 200];

static void test_smaps(void **state)
{
	const struct smaps_case *c = *state;
	const char *text = c->text ? c->text : smaps_fixture;
	struct err e = ERR_INIT;
	struct smaps_vma v;
	FILE *f;
	int r;

	f = fmemopen((void *)(uintptr_t)text, strlen(text), "r");
	assert_non_null(f);
	r = smaps_find(f, c->addr, &v, &e);
	fclose(f);
	assert_int_equal(r, c->ret);
	if (r) {
		assert_true(err_isset(&e));
		return;
	}
	assert_int_equal(v.start, c->start);
	assert_true(v.end > v.start);
	assert_int_equal(v.rss_bytes, c->rss_kb * 1024);
	assert_int_equal(v.anon_huge_bytes, c->huge_kb * 1024);
	assert_int_equal(v.have_anon_huge, c->have_huge);
	assert_int_equal(v.shmem_pmd_bytes, c->shmem_pmd_kb * 1024);
	assert_int_equal(v.have_shmem_pmd, c->have_shmem_pmd);
}

struct knob_case {
	const char *name;
	const char *text;
	int ret;
	const char *value;
};

static struct knob_case knob_cases[] = {
	{ "enabled madvise", "always [madvise] never\n", 0, "madvise" },
	{ "enabled always", "[always] madvise never\n", 0, "always" },
	{ "defrag defer+madvise", "always defer [defer+madvise] madvise never\n", 0,
	  "defer+madvise" },
	{ "mTHP inherit", "always [inherit] madvise never\n", 0, "inherit" },
	{ "no selection", "always madvise never\n", -EINVAL, NULL },
	{ "two selections", "[always] [madvise] never\n", -EINVAL, NULL },
	{ "empty selection", "always [] never\n", -EINVAL, NULL },
	{ "unclosed bracket", "always [madvise never\n", -EINVAL, NULL },
	{ "odd characters", "[al ways]\n", -EINVAL, NULL },
};

static void test_knob(void **state)
{
	const struct knob_case *c = *state;
	char out[THP_VALUE_MAX];

	assert_int_equal(thp_knob_parse(c->text, out, sizeof(out)), c->ret);
	if (!c->ret)
		assert_string_equal(out, c->value);
}

struct size_case {
	uint64_t bytes;
	const char *text;
};

static void test_fmt_size(void **state)
{
	static const struct size_case cases[] = {
		{ 256ull << 20, "256M" }, { 1ull << 30, "1G" }, { 64ull << 30, "64G" },
		{ 2ull << 40, "2T" }, { (900ull << 20) + 12345, "900M" }, { 3072, "3K" },
		{ 100, "100" }, { 0, "0" },
	};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < N(cases); i++) {
		fmt_size(cases[i].bytes, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].text);
	}
}

/* ---- fake /proc and /sys trees ----------------------------------------- */

static int tree_setup(void **state)
{
	static char root[] = "/tmp/thpeval-sysinfo-XXXXXX";

	if (!mkdtemp(root))
		return -1;
	*state = root;
	return 0;
}

static int tree_teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
	return system(cmd) ? -1 : 0;
}

static void test_meminfo(void **state)
{
	const char *root = *state;
	struct err e = ERR_INIT;
	uint64_t v = 0;

	wlt_put(root, "/proc/meminfo",
	    "MemTotal:        1014500 kB\nMemFree:          500000 kB\nMemAvailable:     921600 kB\n"
	    "Bogus:           abc kB\n");
	assert_int_equal(meminfo_get(root, "MemAvailable", &v, &e), 0);
	assert_int_equal(v, 921600ull * 1024);
	assert_int_equal(meminfo_get(root, "MemTotal", &v, &e), 0);
	assert_int_equal(v, 1014500ull * 1024);
	assert_int_equal(meminfo_get(root, "Mem", &v, &e), -ENOENT);	/* prefix is not a key */
	err_clear(&e);
	assert_int_equal(meminfo_get(root, "Bogus", &v, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "bad 'Bogus' line"));
}

static void test_knob_files(void **state)
{
	const char *root = *state;
	char v[THP_VALUE_MAX];
	struct err e = ERR_INIT;

	/* no THP directory: unsupported, not an error */
	assert_false(thp_supported(root));
	assert_int_equal(thp_knob_get(root, "enabled", v, sizeof(v), &e), -ENOENT);
	assert_string_equal(v, THP_UNSUPPORTED);
	assert_false(err_isset(&e));

	wlt_put(root, "/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n");
	assert_true(thp_supported(root));
	assert_int_equal(thp_knob_get(root, "enabled", v, sizeof(v), &e), 0);
	assert_string_equal(v, "madvise");
	assert_int_equal(thp_knob_get(root, "../enabled", v, sizeof(v), &e), -EINVAL);
	err_clear(&e);

	/* a plain file does not switch the selection like the kernel: the read-back catches it */
	assert_int_equal(thp_knob_set(root, "enabled", "always", &e), -EIO);
	assert_non_null(strstr(e.msg, "reads back 'madvise'"));
}

/* numeric knobs (use_zero_page): read, write with read-back, missing, garbage */
static void test_knob_u64(void **state)
{
	const char *root = *state;
	struct err e = ERR_INIT;
	uint64_t v = 9;

	assert_int_equal(thp_knob_get_u64(root, "use_zero_page", &v, &e), -ENOENT);
	assert_false(err_isset(&e));
	wlt_put(root, "/sys/kernel/mm/transparent_hugepage/use_zero_page", "1\n");
	assert_int_equal(thp_knob_get_u64(root, "use_zero_page", &v, &e), 0);
	assert_int_equal(v, 1);
	assert_int_equal(thp_knob_set_u64(root, "use_zero_page", 0, &e), 0);
	assert_int_equal(thp_knob_get_u64(root, "use_zero_page", &v, &e), 0);
	assert_int_equal(v, 0);
	wlt_put(root, "/sys/kernel/mm/transparent_hugepage/use_zero_page", "[1]\n");
	assert_int_equal(thp_knob_get_u64(root, "use_zero_page", &v, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "not a number"));
	err_clear(&e);
	assert_int_equal(thp_knob_set_u64(root, "../use_zero_page", 1, &e), -EINVAL);
	err_clear(&e);
	assert_int_equal(thp_knob_set_u64(root, "no_such_knob/x", 1, &e), -EINVAL);
}

static void test_cpuinfo_flag(void **state)
{
	const char *root = *state;

	assert_false(cpuinfo_has_flag(root, "rdtscp"));	/* no cpuinfo */
	wlt_put(root, "/proc/cpuinfo",
	    "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu vme rdtscp lm\n\n"
	    "processor\t: 1\nflags\t\t: fpu vme lm avx512f\n");
	assert_true(cpuinfo_has_flag(root, "rdtscp"));
	assert_true(cpuinfo_has_flag(root, "fpu"));
	assert_true(cpuinfo_has_flag(root, "lm"));
	assert_false(cpuinfo_has_flag(root, "rdtsc"));	/* a prefix is not a flag */
	assert_false(cpuinfo_has_flag(root, "avx512f"));	/* the first CPU's flags only */
	assert_false(cpuinfo_has_flag(root, ""));
}

static void test_cache_geom(void **state)
{
	const char *root = *state;
	const char *d = "/sys/devices/system/cpu/cpu0/cache/index";
	struct err e = ERR_INIT;
	struct cache_geom g;
	char rel[128];

	assert_int_equal(cache_geom_get(root, 1, "Data", &g, &e), -ENOENT);
	err_clear(&e);
#define PUT(i, f, t) (snprintf(rel, sizeof(rel), "%s%d/%s", d, i, f), wlt_put(root, rel, t))
	PUT(0, "level", "1\n");
	PUT(0, "type", "Instruction\n");
	PUT(0, "ways_of_associativity", "8\n");
	PUT(0, "number_of_sets", "64\n");
	PUT(0, "coherency_line_size", "64\n");
	PUT(1, "level", "1\n");
	PUT(1, "type", "Data\n");
	PUT(1, "ways_of_associativity", "12\n");
	PUT(1, "number_of_sets", "64\n");
	PUT(1, "coherency_line_size", "64\n");
	PUT(1, "size", "48K\n");
	PUT(2, "level", "2\n");
	PUT(2, "type", "Unified\n");
	PUT(2, "ways_of_associativity", "16\n");
	PUT(2, "number_of_sets", "2048\n");
	PUT(2, "coherency_line_size", "64\n");	/* no size file: computed */
	PUT(3, "level", "3\n");
	PUT(3, "type", "Unified\n");
	PUT(3, "ways_of_associativity", "0\n");
	PUT(3, "number_of_sets", "x\n");
	PUT(3, "coherency_line_size", "64\n");
#undef PUT
	assert_int_equal(cache_geom_get(root, 1, "Data", &g, &e), 0);
	assert_int_equal(g.ways, 12);
	assert_int_equal(g.sets, 64);
	assert_int_equal(g.line_bytes, 64);
	assert_int_equal(g.size_bytes, 48 * 1024);
	assert_int_equal(cache_geom_get(root, 2, "Unified", &g, &e), 0);
	assert_int_equal(g.size_bytes, 16 * 2048 * 64);
	assert_int_equal(cache_geom_get(root, 2, "Data", &g, &e), -ENOENT);
	err_clear(&e);
	assert_int_equal(cache_geom_get(root, 3, "Unified", &g, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "not a number"));
}

/* ---- the CPUs of the fixture machines (tests/guest/fixtures) ------------------ */

struct cpu_geom_case {
	const char *name, *fixture;
	unsigned level;
	const char *type;
	struct cache_geom want;	/* level, ways, sets, line_bytes, size_bytes */
};

static const struct cpu_geom_case cpu_geom_cases[] = {
	{ "AMD EPYC: L1d 32K 8-way", "cpu-amd-epyc-512k", 1, "Data", { 1, 8, 64, 64, 32 << 10 } },
	{ "AMD EPYC: L1i 32K 8-way", "cpu-amd-epyc-512k", 1, "Instruction",
	  { 1, 8, 64, 64, 32 << 10 } },
	{ "AMD EPYC: L2 512K 8-way", "cpu-amd-epyc-512k", 2, "Unified",
	  { 2, 8, 1024, 64, 512 << 10 } },
	{ "AMD EPYC: L3 32M slice 16-way", "cpu-amd-epyc-512k", 3, "Unified",
	  { 3, 16, 32768, 64, 32ull << 20 } },
	{ "Intel Xeon: L1d 48K 12-way", "cpu-intel-xeon-2m", 1, "Data", { 1, 12, 64, 64, 48 << 10 } },
	{ "Intel Xeon: L1i 64K 16-way", "cpu-intel-xeon-2m", 1, "Instruction",
	  { 1, 16, 64, 64, 64 << 10 } },
	{ "Intel Xeon: L2 2M 16-way", "cpu-intel-xeon-2m", 2, "Unified",
	  { 2, 16, 2048, 64, 2 << 20 } },
	{ "Intel Xeon: L3 480M 16-way", "cpu-intel-xeon-2m", 3, "Unified",
	  { 3, 16, 491520, 64, 480ull << 20 } },
};

/* cpu0's caches as the fixture machine's sysfs describes them */
static void test_cpu_geom(void **state)
{
	const struct cpu_geom_case *c = *state;
	char root[] = "/tmp/thpeval-sysinfo-cpu-XXXXXX";
	struct err e = ERR_INIT;
	struct cache_geom g;

	assert_non_null(wlt_cpu_tree(root, c->fixture));
	if (cache_geom_get(root, c->level, c->type, &g, &e))
		fail_msg("%s: %s", c->fixture, e.msg);
	assert_int_equal(g.level, c->want.level);
	assert_int_equal(g.ways, c->want.ways);
	assert_int_equal(g.sets, c->want.sets);
	assert_int_equal(g.line_bytes, c->want.line_bytes);
	assert_int_equal(g.size_bytes, c->want.size_bytes);
	/* the fixtures' size files agree with their geometry */
	assert_int_equal(g.size_bytes, g.ways * g.sets * g.line_bytes);
	wlt_tree_free(root);
}

struct cpu_flag_case {
	const char *name, *fixture, *flag;
	bool want;
};

static const struct cpu_flag_case cpu_flag_cases[] = {
	{ "AMD EPYC: rdtscp", "cpu-amd-epyc-512k", "rdtscp", true },
	{ "AMD EPYC: pdpe1gb", "cpu-amd-epyc-512k", "pdpe1gb", true },
	{ "AMD EPYC: no avx512f", "cpu-amd-epyc-512k", "avx512f", false },
	{ "AMD EPYC: svm not passed to the VM", "cpu-amd-epyc-512k", "svm", false },
	{ "Intel Xeon: rdtscp", "cpu-intel-xeon-2m", "rdtscp", true },
	{ "Intel Xeon: pdpe1gb", "cpu-intel-xeon-2m", "pdpe1gb", true },
	{ "Intel Xeon: avx512f", "cpu-intel-xeon-2m", "avx512f", true },
	{ "Intel Xeon: vmx not passed to the VM", "cpu-intel-xeon-2m", "vmx", false },
};

static void test_cpu_flag(void **state)
{
	const struct cpu_flag_case *c = *state;
	char root[] = "/tmp/thpeval-sysinfo-cpu-XXXXXX";

	assert_non_null(wlt_cpu_tree(root, c->fixture));
	assert_int_equal(cpuinfo_has_flag(root, c->flag), c->want);
	wlt_tree_free(root);
}

int main(void)
{
	struct CMUnitTest tests[N(smaps_cases) + N(knob_cases) + N(cpu_geom_cases) +
				N(cpu_flag_cases) + 3];
	const struct CMUnitTest tree[] = {
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_knob_files),
		cmocka_unit_test(test_knob_u64),
		cmocka_unit_test(test_cpuinfo_flag),
		cmocka_unit_test(test_cache_geom),
	};
	static const char head[] = "7f0000000000-7f0000200000 rw-p 0 00:00 0 /";
	size_t i, n = 0;
	int fails;

	memcpy(overlong, head, sizeof(head) - 1);
	memset(overlong + sizeof(head) - 1, 'a', sizeof(overlong) - sizeof(head) - 1);
	overlong[sizeof(overlong) - 2] = '\n';
	smaps_cases[N(smaps_cases) - 1].text = overlong;
	for (i = 0; i < N(smaps_cases); i++)
		tests[n++] = (struct CMUnitTest){ smaps_cases[i].name, test_smaps, NULL, NULL,
						  &smaps_cases[i] };
	for (i = 0; i < N(knob_cases); i++)
		tests[n++] = (struct CMUnitTest){ knob_cases[i].name, test_knob, NULL, NULL,
						  &knob_cases[i] };
	tests[n++] = (struct CMUnitTest){ "fmt_size", test_fmt_size, NULL, NULL, NULL };
	for (i = 0; i < N(cpu_geom_cases); i++)
		tests[n++] = (struct CMUnitTest){ cpu_geom_cases[i].name, test_cpu_geom, NULL, NULL,
						  (void *)(uintptr_t)&cpu_geom_cases[i] };
	for (i = 0; i < N(cpu_flag_cases); i++)
		tests[n++] = (struct CMUnitTest){ cpu_flag_cases[i].name, test_cpu_flag, NULL, NULL,
						  (void *)(uintptr_t)&cpu_flag_cases[i] };
	fails = _cmocka_run_group_tests("sysinfo", tests, n, NULL, NULL);
	return fails + cmocka_run_group_tests_name("sysinfo fake tree", tree, tree_setup,
						   tree_teardown);
}
