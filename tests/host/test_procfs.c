/* tests for host/procfs.c on fake /proc trees (and read-only on the real one) */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <inttypes.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include <cmocka.h>

#include "host/procfs.h"
#include "tests/host/fixtures/fakefs.h"

#define PID 4242
#define GiB_KB (1024u * 1024u)

/* ---- smaps ------------------------------------------------------------------- */

struct map_spec {
	const char *header;	/* NULL ends the list */
	uint64_t size_kb, rss_kb, ahp_kb, shmem_pmd_kb, hugetlb_kb, kps_kb;
	const char *vmflags;
};

/* one mapping with every field a 6.x kernel prints, in its order */
static size_t smaps_entry(char *buf, size_t len, const struct map_spec *m)
{
	int n = snprintf(buf, len,
			 "%s\n"
			 "Size:           %8" PRIu64 " kB\n"
			 "KernelPageSize: %8" PRIu64 " kB\n"
			 "MMUPageSize:    %8" PRIu64 " kB\n"
			 "Rss:            %8" PRIu64 " kB\n"
			 "Pss:            %8" PRIu64 " kB\n"
			 "Pss_Dirty:      %8" PRIu64 " kB\n"
			 "Shared_Clean:          0 kB\n"
			 "Shared_Dirty:          0 kB\n"
			 "Private_Clean:         0 kB\n"
			 "Private_Dirty:  %8" PRIu64 " kB\n"
			 "Referenced:     %8" PRIu64 " kB\n"
			 "Anonymous:      %8" PRIu64 " kB\n"
			 "KSM:                   0 kB\n"
			 "LazyFree:              0 kB\n"
			 "AnonHugePages:  %8" PRIu64 " kB\n"
			 "ShmemPmdMapped: %8" PRIu64 " kB\n"
			 "FilePmdMapped:         0 kB\n"
			 "Shared_Hugetlb:        0 kB\n"
			 "Private_Hugetlb:%8" PRIu64 " kB\n"
			 "Swap:                  0 kB\n"
			 "SwapPss:               0 kB\n"
			 "Locked:                0 kB\n"
			 "THPeligible:           1\n"
			 "ProtectionKey:         0\n"
			 "VmFlags: %s\n",
			 m->header, m->size_kb, m->kps_kb ? m->kps_kb : 4, m->kps_kb ? m->kps_kb : 4,
			 m->rss_kb, m->rss_kb, m->rss_kb, m->rss_kb, m->rss_kb, m->rss_kb, m->ahp_kb,
			 m->shmem_pmd_kb, m->hugetlb_kb, m->vmflags ? m->vmflags : "rd wr mr mw me ac sd ");

	return n < 0 || (size_t)n >= len ? 0 : (size_t)n;
}

#define QEMU_TEXT { "55d0a0000000-55d0a0400000 r-xp 00000000 fe:00 1234                       /usr/bin/qemu-system-x86_64", 4096, 4096, 0, 0, 0, 0, "rd ex mr mw me sd " }
#define HEAP_SMALL { "55d0a1000000-55d0a2000000 rw-p 00000000 00:00 0                          [heap]", 16384, 8000, 0, 0, 0, 0, NULL }
#define ANON_SMALL { "7f3000000000-7f3000200000 rw-p 00000000 00:00 0 ", 2048, 2048, 2048, 0, 0, 0, NULL }
#define STACK { "7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]", 132, 20, 0, 0, 0, 0, NULL }

struct smaps_case {
	const char *name;
	struct map_spec maps[8];
	uint64_t guest_bytes;
	int want_rc;
	const char *want_msg;
	struct smaps_cov want;
	double want_pct;
};

static struct smaps_case smaps_cases[] = {
	{ "smaps/anon_1g_mostly_huge",
	  { QEMU_TEXT, HEAP_SMALL,
	    { "7f2000000000-7f2040000000 rw-p 00000000 00:00 0 ", GiB_KB, GiB_KB, 1040384, 0, 0, 0,
	      "rd wr mr mw me ac sd hg dd " },
	    ANON_SMALL, STACK },
	  1ull << 30, 0, NULL, { GiB_KB, GiB_KB, 1040384, 0, 0, 1, 0 }, 1040384.0 / GiB_KB * 100 },
	{ "smaps/tcg_code_buffer_not_ram",
	  /* TCG's translation buffer: anonymous, rwx, as large as guest RAM, huge under THP always */
	  { QEMU_TEXT,
	    { "7f2000000000-7f2040000000 rw-p 00000000 00:00 0 ", GiB_KB, 524288, 0, 0, 0, 0, NULL },
	    { "7f1000000000-7f1040000000 rwxp 00000000 00:00 0 ", GiB_KB, 262144, 262144, 0, 0, 0, NULL } },
	  1ull << 30, 0, NULL, { GiB_KB, 524288, 0, 0, 0, 1, 0 }, 0.0 },
	{ "smaps/anon_half_touched_no_thp",
	  { QEMU_TEXT, { "7f2000000000-7f2040000000 rw-p 00000000 00:00 0", GiB_KB, 524288, 0, 0, 0, 0, NULL },
	    ANON_SMALL },
	  1ull << 30, 0, NULL, { GiB_KB, 524288, 0, 0, 0, 1, 0 }, 0.0 },
	{ "smaps/memfd_shmem_pmd",
	  { QEMU_TEXT,
	    { "7f2000000000-7f2040000000 rw-s 00000000 00:01 2049                       /memfd:pc.ram (deleted)",
	      GiB_KB, GiB_KB, 0, 786432, 0, 0, "rd wr sh mr mw me ms sd " } },
	  1ull << 30, 0, NULL, { GiB_KB, GiB_KB, 0, 786432, 0, 1, 0 }, 75.0 },
	{ "smaps/hugetlbfs_rss_zero",
	  { QEMU_TEXT,
	    { "7f2000000000-7f2040000000 rw-s 00000000 00:2f 31337                      /dev/hugepages/libvirt/qemu/1-guest/qemu_back_mem.pc.ram.Xa1 (deleted)",
	      GiB_KB, 0, 0, 0, GiB_KB, 2048, "rd wr sh mr mw me ms de ht sd " } },
	  1ull << 30, 0, NULL, { GiB_KB, 0, 0, 0, GiB_KB, 1, 2048 }, 100.0 },
	{ "smaps/hugetlbfs_1g_page_size",
	  { QEMU_TEXT,
	    { "7f0000000000-7f0040000000 rw-s 00000000 00:30 4242                       /dev/hugepages1G/libvirt/qemu/2-guest/qemu_back_mem.pc.ram.Zq9 (deleted)",
	      GiB_KB, 0, 0, 0, GiB_KB, GiB_KB, "rd wr sh mr mw me ms de ht sd " } },
	  1ull << 30, 0, NULL, { GiB_KB, 0, 0, 0, GiB_KB, 1, GiB_KB }, 100.0 },
	{ "smaps/page_size_of_anon_is_not_hugetlb",
	  { QEMU_TEXT,
	    { "7f2000000000-7f2040000000 rw-p 00000000 00:00 0 ", GiB_KB, GiB_KB, GiB_KB, 0, 0, 0, NULL } },
	  1ull << 30, 0, NULL, { GiB_KB, GiB_KB, GiB_KB, 0, 0, 1, 0 }, 100.0 },
	{ "smaps/named_anon_counts",
	  { { "7f2000000000-7f2040000000 rw-p 00000000 00:00 0                          [anon:guest-ram]",
	      GiB_KB, 1000, 512, 0, 0, 0, NULL } },
	  1ull << 30, 0, NULL, { GiB_KB, 1000, 512, 0, 0, 1, 0 }, 51.2 },
	{ "smaps/shared_anon_dev_zero",
	  { { "7f2000000000-7f2040000000 rw-s 00000000 00:01 7                          /dev/zero (deleted)",
	      GiB_KB, 2048, 0, 2048, 0, 0, NULL } },
	  1ull << 30, 0, NULL, { GiB_KB, 2048, 0, 2048, 0, 1, 0 }, 100.0 },
	{ "smaps/two_ram_blocks_summed",
	  { { "7f1000000000-7f1040000000 rw-p 00000000 00:00 0 ", GiB_KB, 100, 0, 0, 0, 0, NULL },
	    ANON_SMALL,
	    { "7f2000000000-7f2040000000 rw-p 00000000 00:00 0 ", GiB_KB, 300, 200, 0, 0, 0, NULL } },
	  1ull << 30, 0, NULL, { 2 * GiB_KB, 400, 200, 0, 0, 2, 0 }, 50.0 },
	{ "smaps/merged_vma_larger_than_ram",
	  { { "7f2000000000-7f2040200000 rw-p 00000000 00:00 0 ", GiB_KB + 2048, 4096, 2048, 0, 0, 0, NULL } },
	  1ull << 30, 0, NULL, { GiB_KB + 2048, 4096, 2048, 0, 0, 1, 0 }, 50.0 },
	{ "smaps/big_file_mapping_excluded",
	  { QEMU_TEXT,
	    { "7f2000000000-7f2080000000 r--s 00000000 fe:00 99                         /var/lib/libvirt/images/disk.img",
	      2 * GiB_KB, GiB_KB, 0, 0, 0, 0, NULL },
	    ANON_SMALL },
	  1ull << 30, -ESRCH, "no guest-RAM mapping of 1024 MiB in '", { 0 }, 0 },
	{ "smaps/heap_excluded",
	  { { "55d0a1000000-55d0e1000000 rw-p 00000000 00:00 0                          [heap]",
	      GiB_KB, GiB_KB, GiB_KB, 0, 0, 0, NULL } },
	  1ull << 30, -ESRCH, "is pid 4242 the QEMU of this guest?", { 0 }, 0 },
	{ "smaps/too_small", { QEMU_TEXT, ANON_SMALL, STACK }, 1ull << 30, -ESRCH, "no guest-RAM mapping", { 0 }, 0 },
	{ "smaps/empty_zombie", { { NULL } }, 1ull << 30, -ESRCH, "no guest-RAM mapping", { 0 }, 0 },
};

static int write_smaps(const char *dir, const struct map_spec *maps)
{
	char buf[65536], rel[64];
	size_t off = 0, n;

	buf[0] = '\0';
	for (; maps->header; maps++) {
		n = smaps_entry(buf + off, sizeof(buf) - off, maps);
		if (!n)
			return -1;
		off += n;
	}
	snprintf(rel, sizeof(rel), "%d/smaps", PID);
	return fake_write(dir, rel, buf);
}

static void test_smaps(void **state)
{
	struct fx *f = *state;
	const struct smaps_case *c = f->row;
	struct smaps_cov cov;
	struct err e = ERR_INIT;

	assert_int_equal(write_smaps(f->dir, c->maps), 0);
	assert_int_equal(smaps_guest_ram(f->dir, PID, c->guest_bytes, &cov, &e), c->want_rc);
	if (c->want_rc) {
		assert_non_null(strstr(e.msg, c->want_msg));
		return;
	}
	assert_int_equal(cov.mapping_kb, c->want.mapping_kb);
	assert_int_equal(cov.rss_kb, c->want.rss_kb);
	assert_int_equal(cov.anon_huge_kb, c->want.anon_huge_kb);
	assert_int_equal(cov.shmem_pmd_kb, c->want.shmem_pmd_kb);
	assert_int_equal(cov.hugetlb_kb, c->want.hugetlb_kb);
	assert_int_equal(cov.hugetlb_page_kb, c->want.hugetlb_page_kb);
	assert_int_equal(cov.mappings, c->want.mappings);
	assert_true(fabs(smaps_huge_pct(&cov) - c->want_pct) < 1e-9);
}

struct bad_smaps_case {
	const char *name, *text;
	unsigned line;
	const char *why;
};

#define HDR "7f2000000000-7f2040000000 rw-p 00000000 00:00 0 \n"

static struct bad_smaps_case bad_smaps_cases[] = {
	{ "malformed/field_before_mapping", "Size:    4 kB\n" HDR "Size: 1048576 kB\n", 1,
	  "field before any mapping" },
	{ "malformed/bad_header_address", "7f20zz000000-7f2040000000 rw-p 00000000 00:00 0\nSize: 4 kB\n", 1,
	  "bad mapping header" },
	{ "malformed/bad_header_perms", "7f2000000000-7f2040000000 rwxq 00000000 00:00 0\nSize: 4 kB\n", 1,
	  "bad mapping header" },
	{ "malformed/header_no_inode", "7f2000000000-7f2040000000 rw-p 00000000 00:00\nSize: 4 kB\n", 1,
	  "bad mapping header" },
	{ "malformed/size_missing", HDR "Rss:   4 kB\nPss:  4 kB\n", 1, "mapping without Size" },
	{ "malformed/size_missing_before_next", HDR "Rss:   4 kB\n" HDR "Size: 4 kB\n", 1, "mapping without Size" },
	{ "malformed/size_missing_at_eof", HDR, 1, "mapping without Size" },
	{ "malformed/size_twice", HDR "Size: 1048576 kB\nSize: 1048576 kB\n", 3, "Size given twice" },
	{ "malformed/rss_in_mb", HDR "Size: 1048576 kB\nRss: 12 MB\n", 3, "Rss is not 'N kB'" },
	{ "malformed/rss_negative", HDR "Size: 1048576 kB\nRss: -12 kB\n", 3, "Rss is not 'N kB'" },
	{ "malformed/ahp_overflow", HDR "Size: 1048576 kB\nAnonHugePages: 99999999999999999999999 kB\n", 3,
	  "AnonHugePages is not 'N kB'" },
	{ "malformed/hugetlb_garbage", HDR "Size: 1048576 kB\nPrivate_Hugetlb: lots\n", 3,
	  "Private_Hugetlb is not 'N kB'" },
	{ "malformed/no_colon", HDR "Size: 1048576 kB\nRss 12 kB\n", 3, "expected 'Name: value'" },
	{ "malformed/empty_line", HDR "Size: 1048576 kB\n\nRss: 1 kB\n", 3, "expected 'Name: value'" },
};

static void test_bad_smaps(void **state)
{
	struct fx *f = *state;
	const struct bad_smaps_case *c = f->row;
	struct smaps_cov cov;
	struct err e = ERR_INIT;
	char rel[64], want[PATH_MAX + 128];

	snprintf(rel, sizeof(rel), "%d/smaps", PID);
	assert_int_equal(fake_write(f->dir, rel, c->text), 0);
	assert_int_equal(smaps_guest_ram(f->dir, PID, 1ull << 30, &cov, &e), -EBADMSG);
	snprintf(want, sizeof(want), "malformed '%s/%d/smaps' line %u: %s", f->dir, PID, c->line, c->why);
	assert_string_equal(e.msg, want);
	assert_int_equal(cov.mappings, 0);
}

static void test_smaps_long_line(void **state)
{
	struct fx *f = *state;
	struct smaps_cov cov;
	struct err e = ERR_INIT;
	char rel[64], *text;
	size_t n = 3 * PATH_MAX, h;

	/* a path name three times PATH_MAX long: no kernel prints that */
	text = malloc(n + 256);
	assert_non_null(text);
	strcpy(text, "7f2000000000-7f2040000000 rw-p 00000000 fe:00 1 /");
	h = strlen(text);
	memset(text + h, 'a', n);
	text[h + n] = '\0';
	strcat(text, "\nSize: 1048576 kB\n");
	snprintf(rel, sizeof(rel), "%d/smaps", PID);
	assert_int_equal(fake_write(f->dir, rel, text), 0);
	free(text);
	assert_int_equal(smaps_guest_ram(f->dir, PID, 1ull << 30, &cov, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "line 1: line too long"));
}

static void test_smaps_args(void **state)
{
	struct fx *f = *state;
	struct smaps_cov cov;
	struct err e = ERR_INIT;

	assert_int_equal(smaps_guest_ram(f->dir, PID, 1ull << 30, &cov, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "process 4242 is gone"));
	err_clear(&e);
	assert_int_equal(smaps_guest_ram(f->dir, PID, 0, &cov, &e), -EINVAL);
	err_clear(&e);
	assert_int_equal(smaps_guest_ram(f->dir, -1, 1ull << 30, &cov, &e), -EINVAL);
}

static void test_huge_pct(void **state)
{
	struct smaps_cov c = { 0 };

	(void)state;
	assert_true(smaps_huge_pct(&c) == 0.0);
	assert_true(smaps_huge_pct(NULL) == 0.0);
	c.rss_kb = 1000;
	c.anon_huge_kb = 250;
	assert_true(fabs(smaps_huge_pct(&c) - 25.0) < 1e-9);
	/* rounding in smaps can put huge above rss: never over 100 */
	c.anon_huge_kb = 2000;
	assert_true(smaps_huge_pct(&c) == 100.0);
}

/* this process's own smaps: the real format parses, and a 64 MiB anonymous mapping is found */
static void test_smaps_real_self(void **state)
{
	struct smaps_cov cov;
	struct err e = ERR_INIT;
	size_t len = 64u << 20;
	void *p;

	(void)state;
	if (access("/proc/self/smaps", R_OK) != 0) {
		print_message("skipped: no /proc/self/smaps here\n");
		skip();
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	memset(p, 1, 4u << 20);
	assert_int_equal(smaps_guest_ram("/proc", (int)getpid(), len, &cov, &e), 0);
	assert_true(cov.mappings >= 1);
	assert_true(cov.mapping_kb >= len / 1024);
	assert_true(cov.rss_kb >= 4096);
	munmap(p, len);
}

/* ---- vmstat ------------------------------------------------------------------ */

static const char vmstat_text[] =
	"nr_free_pages 3817219\n"
	"nr_anon_pages 123456\n"
	"nr_anon_transparent_hugepages 17\n"
	"nr_foo_negative -3\n"
	"pgpgin 1234\n"
	"pgfault 99887766\n"
	"pgmajfault 1234\n"
	"compact_stall 5\n"
	"compact_fail 1\n"
	"compact_success 4\n"
	"thp_fault_alloc 42\n"
	"thp_fault_fallback 7\n"
	"thp_collapse_alloc 3\n"
	"thp_split_page 2\n"
	"thp_split_pmd 9\n"
	"thp_zero_page_alloc 1\n"
	"balloon_inflate 0\n";

struct vmstat_case {
	const char *name, *counter;
	int want_rc;
	uint64_t want;
};

static struct vmstat_case vmstat_cases[] = {
	{ "vmstat/thp_fault_alloc", "thp_fault_alloc", 0, 42 },
	{ "vmstat/thp_fault_fallback", "thp_fault_fallback", 0, 7 },
	{ "vmstat/thp_split_pmd", "thp_split_pmd", 0, 9 },
	{ "vmstat/compact_stall", "compact_stall", 0, 5 },
	{ "vmstat/pgfault", "pgfault", 0, 99887766 },
	{ "vmstat/pgmajfault", "pgmajfault", 0, 1234 },
	{ "vmstat/nr_anon_transparent_hugepages", "nr_anon_transparent_hugepages", 0, 17 },
	{ "vmstat/not_kept_pgpgin", "pgpgin", -ENOENT, 0 },
	{ "vmstat/not_kept_nr_anon_pages", "nr_anon_pages", -ENOENT, 0 },
	{ "vmstat/absent_counter", "thp_swpout", -ENOENT, 0 },
};

static void test_vmstat(void **state)
{
	struct fx *f = *state;
	const struct vmstat_case *c = f->row;
	struct vmstat v;
	struct err e = ERR_INIT;
	uint64_t got = 12345;

	assert_int_equal(fake_write(f->dir, "vmstat", vmstat_text), 0);
	assert_int_equal(vmstat_read(f->dir, &v, &e), 0);
	assert_int_equal(v.n, 12);
	assert_int_equal(vmstat_get(&v, c->counter, &got), c->want_rc);
	if (!c->want_rc)
		assert_int_equal(got, c->want);
	else
		assert_int_equal(got, 12345);
}

struct bad_vmstat_case {
	const char *name, *text, *want_msg;
};

static struct bad_vmstat_case bad_vmstat_cases[] = {
	{ "vmstat_bad/letters_in_value", "pgfault 1\nthp_fault_alloc abc\n", "line 2: bad number" },
	{ "vmstat_bad/negative_kept", "thp_fault_alloc -1\n", "line 1: bad number" },
	{ "vmstat_bad/no_value", "pgfault\n", "line 1: expected 'name value'" },
	{ "vmstat_bad/two_spaces", "pgfault  1\n", "line 1: bad number" },
	{ "vmstat_bad/uppercase_name", "PgFault 1\n", "line 1: expected 'name value'" },
	{ "vmstat_bad/trailing_junk", "pgfault 1 2\n", "line 1: bad number" },
	{ "vmstat_bad/name_too_long", "thp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa 1\n",
	  "counter name too long" },
};

static void test_bad_vmstat(void **state)
{
	struct fx *f = *state;
	const struct bad_vmstat_case *c = f->row;
	struct vmstat v;
	struct err e = ERR_INIT;

	assert_int_equal(fake_write(f->dir, "vmstat", c->text), 0);
	assert_int_equal(vmstat_read(f->dir, &v, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, c->want_msg));
	assert_non_null(strstr(e.msg, "/vmstat'"));
}

static void test_vmstat_real(void **state)
{
	struct vmstat v;
	struct err e = ERR_INIT;
	uint64_t x;

	(void)state;
	if (access("/proc/vmstat", R_OK) != 0) {
		print_message("skipped: no /proc/vmstat here\n");
		skip();
	}
	assert_int_equal(vmstat_read("/proc", &v, &e), 0);
	assert_int_equal(vmstat_get(&v, "pgfault", &x), 0);
	assert_true(x > 0);
}

/* ---- host info ------------------------------------------------------------------ */

/* ---- nested host: free page reporting to the outer hypervisor ----------------- */

#define BALLOON_REPORTING "01100101000000000000000000000000100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
#define BALLOON_NO_REPORT "01100001000000000000000000000000100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"

struct nested_case {
	const char *name;
	const char *device, *driver, *features;	/* virtio0; NULL device: no virtio bus */
	const char *order;			/* page_reporting_order; NULL: absent */
	int want_rc;
	bool want_nested, want_reporting, want_order;
	unsigned order_value;
};

static struct nested_case nested_cases[] = {
	{ "nested/no_virtio_bus", NULL, NULL, NULL, NULL, 0, true, false, false, 0 },
	{ "nested/balloon_reporting", "0x0005", "virtio_balloon", BALLOON_REPORTING, "9\n", 0, true, true, true, 9 },
	{ "nested/balloon_reporting_no_order_file", "0x0005", "virtio_balloon", BALLOON_REPORTING, NULL, 0, true,
	  true, false, 0 },
	{ "nested/balloon_without_reporting", "0x0005", "virtio_balloon", BALLOON_NO_REPORT, "9\n", 0, true, false,
	  false, 0 },
	{ "nested/balloon_unbound", "0x0005", NULL, BALLOON_REPORTING, "9\n", 0, true, false, false, 0 },
	{ "nested/other_device_bit5", "0x0002", "virtio_blk", BALLOON_REPORTING, "9\n", 0, true, false, false, 0 },
	{ "nested/features_garbage", "0x0005", "virtio_balloon", "01x", NULL, -EBADMSG, false, false, false, 0 },
	{ "nested/order_garbage", "0x0005", "virtio_balloon", BALLOON_REPORTING, "nine\n", -EBADMSG, true, true,
	  false, 0 },
};

static void test_nested(void **state)
{
	struct fx *f = *state;
	const struct nested_case *c = f->row;
	struct host_info hi;
	struct err e = ERR_INIT;
	char line[160], target[PATH_MAX + 64], link[PATH_MAX + 64];

	memset(&hi, 0, sizeof(hi));
	if (c->device) {
		snprintf(line, sizeof(line), "%s\n", c->device);
		assert_int_equal(fake_write(f->dir, "sys/bus/virtio/devices/virtio0/device", line), 0);
		snprintf(line, sizeof(line), "%s\n", c->features);
		assert_int_equal(fake_write(f->dir, "sys/bus/virtio/devices/virtio0/features", line), 0);
		if (c->driver) {
			snprintf(target, sizeof(target), "%s/sys/bus/virtio/drivers/%s", f->dir, c->driver);
			assert_int_equal(fake_mkdir_p(target), 0);
			snprintf(link, sizeof(link), "%s/sys/bus/virtio/devices/virtio0/driver", f->dir);
			assert_int_equal(symlink(target, link), 0);
		}
	}
	if (c->order)
		assert_int_equal(fake_write(f->dir, "sys/module/page_reporting/parameters/page_reporting_order",
					    c->order), 0);
	assert_int_equal(host_nested_read(f->dir, &hi, &e), c->want_rc);
	if (c->want_rc)
		assert_null(strchr(e.msg, '\n'));
	assert_int_equal(hi.have_nested, c->want_nested);
	assert_int_equal(hi.reporting, c->want_reporting);
	assert_int_equal(hi.have_order, c->want_order);
	if (c->want_order)
		assert_int_equal(hi.reporting_order, c->order_value);
}

static void test_host_info(void **state)
{
	struct fx *f = *state;
	struct host_info hi;
	struct err e = ERR_INIT;
	struct utsname u;
	char *cpuinfo, flags[6000];
	size_t i;

	/* a flags line longer than the line buffer must be skipped, not fatal */
	for (i = 0; i + 5 < sizeof(flags); i += 5)
		memcpy(flags + i, "avx5 ", 5);
	flags[i] = '\0';
	cpuinfo = malloc(20000);
	assert_non_null(cpuinfo);
	snprintf(cpuinfo, 20000,
		 "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 9654 96-Core Processor\nflags\t\t: %s\n\n"
		 "processor\t: 1\nvendor_id\t: AuthenticAMD\nmodel name\t: Other CPU\nflags\t\t: %s\n\n",
		 flags, flags);
	assert_int_equal(fake_write(f->dir, "cpuinfo", cpuinfo), 0);
	free(cpuinfo);
	assert_int_equal(fake_write(f->dir, "meminfo", "MemTotal:       16384256 kB\nMemFree:        1 kB\n"), 0);
	assert_int_equal(host_info_read(f->dir, &hi, &e), 0);
	assert_int_equal(uname(&u), 0);
	assert_string_equal(hi.kernel, u.release);
	assert_string_equal(hi.name, u.nodename);	/* the host's key in a shared history */
	assert_string_equal(hi.cpu_model, "AMD EPYC 9654 96-Core Processor");
	assert_int_equal(hi.cpus, 2);
	assert_int_equal(hi.mem_total_kb, 16384256);

	/* arm64 style: no model name */
	assert_int_equal(fake_write(f->dir, "cpuinfo", "processor\t: 0\nBogoMIPS\t: 50.00\n"), 0);
	assert_int_equal(host_info_read(f->dir, &hi, &e), 0);
	assert_string_equal(hi.cpu_model, "unknown");
	assert_int_equal(hi.cpus, 1);

	assert_int_equal(fake_write(f->dir, "meminfo", "MemFree:        1 kB\n"), 0);
	assert_int_equal(host_info_read(f->dir, &hi, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "no MemTotal"));
	err_clear(&e);
	assert_int_equal(fake_write(f->dir, "meminfo", "MemTotal:       lots\n"), 0);
	assert_int_equal(host_info_read(f->dir, &hi, &e), -EBADMSG);
	assert_non_null(strstr(e.msg, "malformed MemTotal"));
	err_clear(&e);
	assert_int_equal(fake_write(f->dir, "cpuinfo", NULL), 0);
	assert_int_equal(host_info_read(f->dir, &hi, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "/cpuinfo'"));
}

static void test_host_info_real(void **state)
{
	struct host_info hi;
	struct err e = ERR_INIT;

	(void)state;
	if (access("/proc/meminfo", R_OK) != 0) {
		print_message("skipped: no /proc/meminfo here\n");
		skip();
	}
	assert_int_equal(host_info_read("/proc", &hi, &e), 0);
	assert_true(hi.mem_total_kb > 0);
	assert_true(hi.cpus > 0);
	assert_true(hi.kernel[0] != '\0');
}

/* ---- minflt -------------------------------------------------------------------- */

struct stat_case {
	const char *name, *text;
	int want_rc;
	uint64_t want;
};

static struct stat_case stat_cases[] = {
	{ "minflt/qemu",
	  "4242 (qemu-system-x86) S 1 4242 4242 0 -1 4194560 123456 0 7 0 100 50 0 0 20 0 5 0 34320 3133440 382\n",
	  0, 123456 },
	{ "minflt/comm_with_spaces_and_parens", "4242 (a) b) (c d) R 1 2 3 4 -1 4194304 777 0 0 0 0 0 0 0 20 0\n", 0,
	  777 },
	{ "minflt/comm_only_paren", "4242 ()) S 1 2 3 4 -1 0 5 0\n", 0, 5 },
	{ "minflt/u64_max", "4242 (x) S 1 2 3 4 -1 0 18446744073709551615 0\n", 0, UINT64_MAX },
	{ "minflt/no_newline", "4242 (x) S 1 2 3 4 -1 0 9 0", 0, 9 },
	{ "minflt/no_paren", "4242 qemu S 1 2 3 4 -1 0 9 0\n", -EBADMSG, 0 },
	{ "minflt/too_short", "4242 (qemu) S 1 2 3 4 -1 0\n", -EBADMSG, 0 },
	{ "minflt/not_a_number", "4242 (qemu) S 1 2 3 4 -1 0 lots 0\n", -EBADMSG, 0 },
	{ "minflt/negative", "4242 (qemu) S 1 2 3 4 -1 0 -9 0\n", -EBADMSG, 0 },
	{ "minflt/no_space_after_comm", "4242 (qemu)S 1 2 3 4 -1 0 9 0\n", -EBADMSG, 0 },
	{ "minflt/empty", "", -EBADMSG, 0 },
};

static void test_minflt(void **state)
{
	struct fx *f = *state;
	const struct stat_case *c = f->row;
	struct err e = ERR_INIT;
	uint64_t v = 31337;
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/stat", PID);
	assert_int_equal(fake_write(f->dir, rel, c->text), 0);
	assert_int_equal(proc_minflt(f->dir, PID, &v, &e), c->want_rc);
	if (c->want_rc) {
		assert_non_null(strstr(e.msg, "malformed '"));
		return;
	}
	assert_int_equal(v, c->want);
}

static void test_minflt_gone_and_real(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	uint64_t v = 0;

	assert_int_equal(proc_minflt(f->dir, PID, &v, &e), -ENOENT);
	assert_non_null(strstr(e.msg, "process 4242 is gone"));
	err_clear(&e);
	assert_int_equal(proc_minflt(f->dir, 0, &v, &e), -EINVAL);
	err_clear(&e);
	if (access("/proc/self/stat", R_OK) != 0) {
		print_message("skipped: no /proc/self/stat here\n");
		skip();
	}
	assert_int_equal(proc_minflt("/proc", (int)getpid(), &v, &e), 0);
	assert_true(v > 0);
}

struct vmrss_case {
	const char *name, *text;
	int want_rc;
	uint64_t want;
};

static struct vmrss_case vmrss_cases[] = {
	{ "vmrss/qemu", "Name:\tqemu-system-x86\nVmPeak:\t 2000000 kB\nVmRSS:\t  812344 kB\nRssAnon:\t 800000 kB\n",
	  0, 812344 },
	{ "vmrss/zero", "VmRSS:\t       0 kB\n", 0, 0 },
	{ "vmrss/kernel_thread", "Name:\tkthreadd\nState:\tS (sleeping)\n", -ENODATA, 0 },
	{ "vmrss/no_unit", "VmRSS:\t 812344\n", -EBADMSG, 0 },
	{ "vmrss/not_a_number", "VmRSS:\t lots kB\n", -EBADMSG, 0 },
	{ "vmrss/too_big", "VmRSS:\t 99999999999999999999999 kB\n", -EBADMSG, 0 },
};

static void test_vmrss(void **state)
{
	struct fx *f = *state;
	const struct vmrss_case *c = f->row;
	struct err e = ERR_INIT;
	uint64_t v = 31337;
	char rel[64];

	snprintf(rel, sizeof(rel), "%d/status", PID);
	assert_int_equal(fake_write(f->dir, rel, c->text), 0);
	assert_int_equal(proc_vmrss(f->dir, PID, &v, &e), c->want_rc);
	if (!c->want_rc)
		assert_int_equal(v, c->want);
}

static void test_vmrss_gone_and_real(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	uint64_t v = 0;

	assert_int_equal(proc_vmrss(f->dir, PID, &v, &e), -ENOENT);
	err_clear(&e);
	if (access("/proc/self/status", R_OK) != 0) {
		print_message("skipped: no /proc/self/status here\n");
		skip();
	}
	assert_int_equal(proc_vmrss("/proc", (int)getpid(), &v, &e), 0);
	assert_true(v > 0);
}

int main(void)
{
	struct CMUnitTest tests[96];
	size_t i, n = 0;

	ADD_TABLE(smaps_cases, test_smaps);
	ADD_TABLE(bad_smaps_cases, test_bad_smaps);
	ADD_ONE("malformed/line_too_long", test_smaps_long_line);
	ADD_ONE("smaps/process_gone_and_bad_args", test_smaps_args);
	ADD_ONE("smaps/huge_pct", test_huge_pct);
	ADD_ONE("smaps/real_self_read_only", test_smaps_real_self);
	ADD_TABLE(vmstat_cases, test_vmstat);
	ADD_TABLE(bad_vmstat_cases, test_bad_vmstat);
	ADD_ONE("vmstat/real_read_only", test_vmstat_real);
	ADD_ONE("host_info/fake", test_host_info);
	ADD_TABLE(nested_cases, test_nested);
	ADD_ONE("host_info/real_read_only", test_host_info_real);
	ADD_TABLE(stat_cases, test_minflt);
	ADD_ONE("minflt/gone_and_real_self", test_minflt_gone_and_real);
	ADD_TABLE(vmrss_cases, test_vmrss);
	ADD_ONE("vmrss/gone_and_real_self", test_vmrss_gone_and_real);
	return _cmocka_run_group_tests("host/procfs", tests, n, NULL, NULL);
}
