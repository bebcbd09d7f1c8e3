/*
 * The hugetlbfs reference arms on fixture roots: the names and page sizes of
 * --host-backing, the check that the host has the pool and libvirt a mount of
 * that page size (hugetlb_arm_check), and the journal key of each pool.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib/fstree.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/run/config.h"
#include "orchestrator/run/arms.h"

static void test_arm_names(void **state)
{
	uint64_t kb = 0;

	(void)state;
	assert_true(hugetlb_arm_kb("hugetlbfs", &kb));
	assert_int_equal(kb, 2048);
	assert_true(hugetlb_arm_kb("hugetlbfs-1g", &kb));
	assert_int_equal(kb, 1048576);
	assert_false(hugetlb_arm_kb("hugetlbfs-2m", &kb));
	assert_false(hugetlb_arm_kb("hugetlbfs-1G", &kb));
	assert_false(hugetlb_arm_kb("", &kb));
	assert_string_equal(hugetlb_arm_name(2048), "hugetlbfs");
	assert_string_equal(hugetlb_arm_name(1048576), "hugetlbfs-1g");
	assert_null(hugetlb_arm_name(4));
}

static void test_pool_key(void **state)
{
	char key[64];

	(void)state;
	pool_key(key, sizeof(key), 2048);
	assert_string_equal(key, "hugetlb/hugepages-2048kB/nr_hugepages");
	pool_key(key, sizeof(key), 1048576);
	assert_string_equal(key, "hugetlb/hugepages-1048576kB/nr_hugepages");
}

struct check_case {
	const char *name;
	const char *pools;	/* comma-separated hugepages-<N>kB dirs to create */
	const char *mounts;	/* the fixture's /proc/mounts */
	uint64_t kb;
	int want;
	const char *want_msg;	/* in the error */
};

static const struct check_case check_cases[] = {
	{ "2m_default_mount", "2048", "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n", 2048, 0,
	  NULL },
	{ "2m_mount_without_pagesize", "2048", "hugetlbfs /dev/hugepages hugetlbfs rw,relatime 0 0\n", 2048, 0,
	  NULL },
	{ "1g_pool_and_mount", "2048,1048576",
	  "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n"
	  "hugetlbfs /dev/hugepages1G hugetlbfs rw,relatime,pagesize=1024M 0 0\n", 1048576, 0, NULL },
	{ "1g_pool_only_2m_mount", "2048,1048576",
	  "hugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0\n", 1048576, -ENOENT,
	  "no hugetlbfs of 1G pages is mounted" },
	{ "1g_no_pool", "2048", "hugetlbfs /dev/hugepages1G hugetlbfs rw,relatime,pagesize=1024M 0 0\n", 1048576,
	  -ENOENT, "this host offers no 1G hugetlb pages" },
	{ "2m_no_mount", "2048", "proc /proc proc rw 0 0\n", 2048, -ENOENT, "no hugetlbfs of 2M pages is mounted" },
	{ "1g_mount_as_1G", "1048576", "none /mnt/h hugetlbfs rw,pagesize=1G 0 0\n", 1048576, 0, NULL },
	{ "tmpfs_is_not_hugetlbfs", "1048576", "tmpfs /dev/hugepages1G tmpfs rw,pagesize=1024M 0 0\n", 1048576,
	  -ENOENT, "no hugetlbfs of 1G pages is mounted" },
};

static void test_arm_check(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(check_cases) / sizeof(check_cases[0]); i++) {
		const struct check_case *c = &check_cases[i];
		char root[] = "/tmp/thpeval-arms-XXXXXX", path[PATH_MAX], pools[64], *tok, *save = NULL;
		struct run_config cfg;
		struct err e = ERR_INIT;
		int r;

		print_message("case %s\n", c->name);
		assert_non_null(mkdtemp(root));
		strcpy(pools, c->pools);
		for (tok = strtok_r(pools, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			snprintf(path, sizeof(path), "%s/sys/kernel/mm/hugepages/hugepages-%skB/nr_hugepages", root,
				 tok);
			assert_int_equal(mkdir_parents(path, 0755, &e), 0);
			assert_int_equal(write_file_atomic(path, "0\n", 2, 0644, &e), 0);
		}
		snprintf(path, sizeof(path), "%s/proc/mounts", root);
		assert_int_equal(mkdir_parents(path, 0755, &e), 0);
		assert_int_equal(write_file_atomic(path, c->mounts, strlen(c->mounts), 0644, &e), 0);
		assert_int_equal(run_config_init(&cfg, &e), 0);
		snprintf(cfg.sysfs_root, sizeof(cfg.sysfs_root), "%s", root);
		r = hugetlb_arm_check(&cfg, c->kb, &e);
		if (r != c->want)
			fail_msg("%s: rc %d (%s), want %d", c->name, r, e.msg, c->want);
		if (c->want_msg && !strstr(e.msg, c->want_msg))
			fail_msg("%s: error '%s' lacks '%s'", c->name, e.msg, c->want_msg);
		if (c->want_msg && strchr(e.msg, '\n'))
			fail_msg("%s: error is not one line", c->name);
		fstree_remove(root);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arm_names),
		cmocka_unit_test(test_pool_key),
		cmocka_unit_test(test_arm_check),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
