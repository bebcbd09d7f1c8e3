/* tests for host/thp.c on fake sysfs trees (and read-only on the real one) */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "host/thp.h"
#include "tests/host/fixtures/fakefs.h"

#define THP_REL(x) FAKE_THP "/" x

/* ---- read ------------------------------------------------------------------- */

struct read_case {
	const char *name;
	bool tree, modern;
	const char *edit_rel, *edit_content;	/* applied after building; NULL content deletes */
	int want_rc;
	const char *want_msg;
	size_t want_n;
	const char *expect[8][2];		/* key, value (NULL: must be absent) */
};

static struct read_case read_cases[] = {
	{ "read/bracketed_values", true, true, NULL, NULL, 0, NULL, 29,
	  { { "enabled", "madvise" }, { "defrag", "madvise" }, { "shmem_enabled", "never" },
	    { "use_zero_page", "1" }, { "khugepaged/max_ptes_none", "511" },
	    { "hugepages-2048kB/enabled", "inherit" }, { "hugepages-8kB/shmem_enabled", "never" } } },
	{ "read/unknown_and_readonly_files_ignored", true, true, NULL, NULL, 0, NULL, 29,
	  { { "anon_beside_full", NULL }, { "hpage_pmd_size", NULL }, { "khugepaged/full_scans", NULL },
	    { "hugepages-48kB/enabled", NULL }, { "hugepages-8kB/enabled", NULL } } },
	{ "read/old_kernel_missing_files_skipped", true, false, NULL, NULL, 0, NULL, 10,
	  { { "enabled", "madvise" }, { "shrink_underused", NULL }, { "use_zero_page", NULL },
	    { "hugepages-64kB/enabled", NULL } } },
	{ "read/one_knob_removed", true, true, THP_REL("khugepaged/max_ptes_swap"), NULL, 0, NULL, 28,
	  { { "khugepaged/max_ptes_swap", NULL }, { "khugepaged/max_ptes_shared", "256" } } },
	{ "read/no_thp_directory", false, false, NULL, NULL, 0, NULL, 0, { { "enabled", NULL } } },
	{ "read/bracket_first_word", true, true, THP_REL("enabled"), "[always] madvise never\n", 0, NULL, 29,
	  { { "enabled", "always" } } },
	{ "read/no_trailing_newline", true, true, THP_REL("defrag"), "always defer defer+madvise madvise [never]", 0,
	  NULL, 29, { { "defrag", "never" } } },
	{ "read/choice_without_bracket", true, true, THP_REL("enabled"), "always madvise never\n", -EINVAL,
	  "transparent_hugepage/enabled", 0, { { NULL, NULL } } },
	{ "read/choice_two_brackets", true, true, THP_REL("enabled"), "[always] [madvise] never\n", -EINVAL,
	  "expected choices", 0, { { NULL, NULL } } },
	{ "read/choice_unclosed_bracket", true, true, THP_REL("enabled"), "always [madvise never\n", -EINVAL,
	  "expected choices", 0, { { NULL, NULL } } },
	{ "read/number_garbage", true, true, THP_REL("use_zero_page"), "yes\n", -EINVAL, "expected a number", 0,
	  { { NULL, NULL } } },
	{ "read/number_empty", true, true, THP_REL("khugepaged/pages_to_scan"), "", -EINVAL,
	  "khugepaged/pages_to_scan", 0, { { NULL, NULL } } },
	{ "read/oversized_file", true, true, THP_REL("enabled"),
	  "always [madvise] never                                                                        "
	  "                                                                                              "
	  "                                                                                              "
	  "                                                                                              "
	  "                                                                                              "
	  "                                                                                              "
	  "                                                                                              "
	  "                                                                                              "
	  "                                                                                              "
	  "                                                                                              "
	  "                                                                                              "
	  "                                                                                              ",
	  -EFBIG, "longer than", 0, { { NULL, NULL } } },
};

static void test_read(void **state)
{
	struct fx *f = *state;
	const struct read_case *c = f->row;
	struct thp_settings s;
	struct err e = ERR_INIT;
	size_t i;
	int r;

	if (c->tree)
		assert_int_equal(fake_thp_tree(f->dir, c->modern), 0);
	if (c->edit_rel)
		assert_int_equal(fake_write(f->dir, c->edit_rel, c->edit_content), 0);
	r = thp_settings_read(f->dir, &s, &e);
	assert_int_equal(r, c->want_rc);
	if (c->want_rc) {
		assert_int_equal(e.code, c->want_rc);
		assert_non_null(strstr(e.msg, c->want_msg));
		return;
	}
	assert_int_equal(e.code, 0);
	assert_int_equal(s.n, c->want_n);
	for (i = 0; i < 8 && c->expect[i][0]; i++) {
		const char *v = thp_settings_get(&s, c->expect[i][0]);

		if (c->expect[i][1])
			assert_string_equal(v ? v : "(absent)", c->expect[i][1]);
		else
			assert_null(v);
	}
}

static void test_read_mthp_order(void **state)
{
	static const char *const want[] = {
		"hugepages-8kB/shmem_enabled",
		"hugepages-16kB/enabled", "hugepages-16kB/shmem_enabled",
		"hugepages-32kB/enabled", "hugepages-32kB/shmem_enabled",
		"hugepages-64kB/enabled", "hugepages-64kB/shmem_enabled",
		"hugepages-128kB/enabled", "hugepages-128kB/shmem_enabled",
		"hugepages-256kB/enabled", "hugepages-256kB/shmem_enabled",
		"hugepages-512kB/enabled", "hugepages-512kB/shmem_enabled",
		"hugepages-1024kB/enabled", "hugepages-1024kB/shmem_enabled",
		"hugepages-2048kB/enabled", "hugepages-2048kB/shmem_enabled",
	};
	struct fx *f = *state;
	struct thp_settings s;
	struct err e = ERR_INIT;
	size_t i, first = 0;

	assert_int_equal(fake_thp_tree(f->dir, true), 0);
	assert_int_equal(thp_settings_read(f->dir, &s, &e), 0);
	while (first < s.n && strncmp(s.s[first].key, "hugepages-", 10))
		first++;
	assert_int_equal(s.n - first, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_string_equal(s.s[first + i].key, want[i]);
	/* fixed keys come first, in the documented order */
	assert_string_equal(s.s[0].key, "enabled");
	assert_string_equal(s.s[1].key, "defrag");
}

static void test_sizes(void **state)
{
	static const unsigned want[] = { 8, 16, 32, 64, 128, 256, 512, 1024, 2048 };
	struct fx *f = *state;
	struct err e = ERR_INIT;
	unsigned sizes[16];
	size_t n = 99, i;

	assert_int_equal(thp_sizes(f->dir, sizes, 16, &n, &e), 0);
	assert_int_equal(n, 0);		/* no THP directory: nothing offered */
	assert_int_equal(fake_thp_tree(f->dir, true), 0);
	assert_int_equal(thp_sizes(f->dir, sizes, 16, &n, &e), 0);
	assert_int_equal(n, sizeof(want) / sizeof(want[0]));
	for (i = 0; i < n; i++)
		assert_int_equal(sizes[i], want[i]);
	assert_int_equal(thp_sizes(f->dir, sizes, 4, &n, &e), -ENOSPC);
	assert_non_null(strstr(e.msg, "more than 4"));
}

/* ---- key_known / validate ------------------------------------------------------ */

struct known_case {
	const char *name, *key;
	bool known;
	enum thp_kind kind;
};

static struct known_case known_cases[] = {
	{ "known/enabled", "enabled", true, THP_KIND_CHOICE },
	{ "known/khugepaged_defrag_is_number", "khugepaged/defrag", true, THP_KIND_U64 },
	{ "known/max_ptes_shared", "khugepaged/max_ptes_shared", true, THP_KIND_U64 },
	{ "known/mthp_64k", "hugepages-64kB/enabled", true, THP_KIND_CHOICE },
	{ "known/mthp_shmem_2m", "hugepages-2048kB/shmem_enabled", true, THP_KIND_CHOICE },
	{ "known/mthp_1g", "hugepages-1048576kB/enabled", true, THP_KIND_CHOICE },
	{ "unknown/mthp_not_power_of_two", "hugepages-48kB/enabled", false, 0 },
	{ "unknown/mthp_leading_zero", "hugepages-064kB/enabled", false, 0 },
	{ "unknown/mthp_too_small", "hugepages-4kB/enabled", false, 0 },
	{ "unknown/mthp_stats", "hugepages-64kB/stats/split", false, 0 },
	{ "unknown/mthp_no_knob", "hugepages-64kB", false, 0 },
	{ "unknown/mthp_overflow", "hugepages-8589934592kB/enabled", false, 0 },
	{ "unknown/counter", "khugepaged/full_scans", false, 0 },
	{ "unknown/readonly_size", "hpage_pmd_size", false, 0 },
	{ "unknown/traversal", "../enabled", false, 0 },
	{ "unknown/traversal_mthp", "hugepages-64kB/../enabled", false, 0 },
	{ "unknown/empty", "", false, 0 },
	{ "unknown/trailing_slash", "enabled/", false, 0 },
};

static void test_known(void **state)
{
	const struct known_case *c = ((struct fx *)*state)->row;
	enum thp_kind k = THP_KIND_U64 + 1;

	assert_int_equal(thp_key_known(c->key), c->known);
	assert_int_equal(thp_key_kind(c->key, &k), c->known ? 0 : -EINVAL);
	if (c->known)
		assert_int_equal(k, c->kind);
}

struct validate_case {
	const char *name, *key, *value;
	int want_rc;
	const char *want_msg;
};

static struct validate_case validate_cases[] = {
	{ "validate/enabled_always", "enabled", "always", 0, NULL },
	{ "validate/defrag_defer_madvise", "defrag", "defer+madvise", 0, NULL },
	{ "validate/shmem_force", "shmem_enabled", "force", 0, NULL },
	{ "validate/mthp_inherit", "hugepages-64kB/enabled", "inherit", 0, NULL },
	{ "validate/mthp_shmem_within_size", "hugepages-64kB/shmem_enabled", "within_size", 0, NULL },
	{ "validate/use_zero_page_0", "use_zero_page", "0", 0, NULL },
	{ "validate/pages_to_scan_uint_max", "khugepaged/pages_to_scan", "4294967295", 0, NULL },
	{ "validate/max_ptes_none_511", "khugepaged/max_ptes_none", "511", 0, NULL },
	{ "validate/scan_sleep_0", "khugepaged/scan_sleep_millisecs", "0", 0, NULL },
	{ "bad_key/unknown", "bogus", "1", -EINVAL, "unknown thp setting 'bogus'" },
	{ "bad_key/counter", "khugepaged/pages_collapsed", "0", -EINVAL, "unknown thp setting" },
	{ "bad_key/traversal", "../../../../etc/passwd", "x", -EINVAL, "unknown thp setting" },
	{ "unsupported/mthp_8k_anon", "hugepages-8kB/enabled", "always", -EOPNOTSUPP,
	  "'hugepages-8kB/enabled' is not supported by this kernel" },
	{ "unsupported/mthp_4m", "hugepages-4096kB/enabled", "always", -EOPNOTSUPP, "not supported" },
	{ "bad_value/enabled_sometimes", "enabled", "sometimes", -EINVAL,
	  "invalid value 'sometimes' for thp setting 'enabled': choose one of always, madvise, never" },
	{ "bad_value/enabled_bracketed", "enabled", "[madvise]", -EINVAL, "choose one of" },
	{ "bad_value/enabled_empty", "enabled", "", -EINVAL, "choose one of" },
	{ "bad_value/enabled_case", "enabled", "Always", -EINVAL, "choose one of" },
	{ "bad_value/enabled_newline", "enabled", "always\n", -EINVAL, "choose one of" },
	{ "bad_value/mthp_within_size_is_shmem_only", "hugepages-64kB/enabled", "within_size", -EINVAL,
	  "always, inherit, madvise, never" },
	{ "bad_value/null", "enabled", NULL, -EINVAL, "no value" },
	{ "range/use_zero_page_2", "use_zero_page", "2", -ERANGE, "from 0 to 1" },
	{ "range/shrink_underused_2", "shrink_underused", "2", -ERANGE, "from 0 to 1" },
	{ "range/khugepaged_defrag_2", "khugepaged/defrag", "2", -ERANGE, "from 0 to 1" },
	{ "range/max_ptes_none_512", "khugepaged/max_ptes_none", "512", -ERANGE, "from 0 to 511" },
	{ "range/max_ptes_swap_512", "khugepaged/max_ptes_swap", "512", -ERANGE, "from 0 to 511" },
	{ "range/pages_to_scan_0", "khugepaged/pages_to_scan", "0", -ERANGE, "from 1 to 4294967295" },
	{ "range/pages_to_scan_too_big", "khugepaged/pages_to_scan", "4294967296", -ERANGE, "from 1 to" },
	{ "range/u64_overflow", "khugepaged/alloc_sleep_millisecs", "99999999999999999999", -ERANGE,
	  "expected a number" },
	{ "number/negative", "khugepaged/scan_sleep_millisecs", "-1", -EINVAL, "expected a number" },
	{ "number/suffix", "khugepaged/scan_sleep_millisecs", "10ms", -EINVAL, "expected a number" },
	{ "number/space", "use_zero_page", " 1", -EINVAL, "expected a number" },
	{ "number/empty", "use_zero_page", "", -EINVAL, "expected a number" },
};

static void test_validate(void **state)
{
	struct fx *f = *state;
	const struct validate_case *c = f->row;
	struct err e = ERR_INIT;
	char *snap1, *snap2;

	assert_int_equal(fake_thp_tree(f->dir, true), 0);
	snap1 = fake_snapshot(f->dir, "sys");
	assert_int_equal(thp_validate(f->dir, c->key, c->value, &e), c->want_rc);
	assert_int_equal(e.code, c->want_rc);
	if (c->want_msg)
		assert_non_null(strstr(e.msg, c->want_msg));
	/* validation never writes */
	snap2 = fake_snapshot(f->dir, "sys");
	assert_string_equal(snap1, snap2);
	free(snap1);
	free(snap2);
}

static void test_validate_pmd_nr_from_tree(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;

	/* a 512 MiB PMD (arm64 with 64k pages would say so) widens max_ptes_none */
	assert_int_equal(fake_thp_tree(f->dir, false), 0);
	assert_int_equal(fake_write(f->dir, THP_REL("hpage_pmd_size"), "8388608\n"), 0);
	assert_int_equal(thp_validate(f->dir, "khugepaged/max_ptes_none", "2047", &e), 0);
	assert_int_equal(thp_validate(f->dir, "khugepaged/max_ptes_none", "2048", &e), -ERANGE);
	assert_non_null(strstr(e.msg, "from 0 to 2047"));
}

/* ---- write ------------------------------------------------------------------ */

struct write_case {
	const char *name, *key, *value;
	int want_rc;
	const char *rel, *want_content;	/* file content afterwards */
};

static struct write_case write_cases[] = {
	{ "write/enabled_always", "enabled", "always", 0, THP_REL("enabled"), "[always] madvise never\n" },
	{ "write/enabled_never", "enabled", "never", 0, THP_REL("enabled"), "always madvise [never]\n" },
	{ "write/defrag_defer", "defrag", "defer", 0, THP_REL("defrag"),
	  "always [defer] defer+madvise madvise never\n" },
	{ "write/mthp_64k_always", "hugepages-64kB/enabled", "always", 0, THP_REL("hugepages-64kB/enabled"),
	  "[always] inherit madvise never\n" },
	{ "write/number_canonical", "khugepaged/max_ptes_none", "0100", 0, THP_REL("khugepaged/max_ptes_none"),
	  "100\n" },
	{ "write/use_zero_page_0", "use_zero_page", "0", 0, THP_REL("use_zero_page"), "0\n" },
	{ "write/bad_value_untouched", "enabled", "sometimes", -EINVAL, THP_REL("enabled"),
	  "always [madvise] never\n" },
	{ "write/out_of_range_untouched", "khugepaged/max_ptes_none", "512", -ERANGE,
	  THP_REL("khugepaged/max_ptes_none"), "511\n" },
	{ "write/unsupported_not_created", "hugepages-8kB/enabled", "always", -EOPNOTSUPP,
	  THP_REL("hugepages-8kB/enabled"), NULL },
};

static void test_write(void **state)
{
	struct fx *f = *state;
	const struct write_case *c = f->row;
	struct err e = ERR_INIT;
	char buf[256], v[THP_VAL_MAX];
	const char *got;

	assert_int_equal(fake_thp_tree(f->dir, true), 0);
	assert_int_equal(thp_write(f->dir, c->key, c->value, &e), c->want_rc);
	got = fake_read(f->dir, c->rel, buf, sizeof(buf));
	if (c->want_content)
		assert_string_equal(got ? got : "(missing)", c->want_content);
	else
		assert_null(got);
	if (c->want_rc == 0) {
		assert_int_equal(thp_read_one(f->dir, c->key, v, sizeof(v), &e), 0);
		assert_true(thp_value_equal(c->key, v, c->value));
	}
}

static void test_read_one(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	char v[THP_VAL_MAX], tiny[3];

	assert_int_equal(fake_thp_tree(f->dir, true), 0);
	assert_int_equal(thp_read_one(f->dir, "defrag", v, sizeof(v), &e), 0);
	assert_string_equal(v, "madvise");
	assert_int_equal(thp_read_one(f->dir, "khugepaged/pages_to_scan", v, sizeof(v), &e), 0);
	assert_string_equal(v, "4096");
	assert_int_equal(thp_read_one(f->dir, "defrag", tiny, sizeof(tiny), &e), -ENAMETOOLONG);
	err_clear(&e);
	assert_int_equal(thp_read_one(f->dir, "hugepages-8kB/enabled", v, sizeof(v), &e), -EOPNOTSUPP);
	err_clear(&e);
	assert_int_equal(thp_read_one(f->dir, "nope", v, sizeof(v), &e), -EINVAL);
	/* the first error wins: its code and message are kept */
	assert_int_equal(thp_read_one(f->dir, "hugepages-8kB/enabled", v, sizeof(v), &e), -EINVAL);
	assert_non_null(strstr(e.msg, "unknown thp setting 'nope'"));
	/* a root with trailing slashes resolves to the same files */
	snprintf(v, sizeof(v), "x");
	{
		char root[PATH_MAX];

		assert_int_equal(fake_join(root, sizeof(root), f->dir, "//"), 0);
		err_clear(&e);
		assert_int_equal(thp_read_one(root, "enabled", v, sizeof(v), &e), 0);
		assert_string_equal(v, "madvise");
	}
}

static void test_value_equal(void **state)
{
	(void)state;
	assert_true(thp_value_equal("khugepaged/max_ptes_none", "010", "10"));
	assert_false(thp_value_equal("khugepaged/max_ptes_none", "11", "10"));
	assert_false(thp_value_equal("enabled", "always", "madvise"));
	assert_true(thp_value_equal("enabled", "never", "never"));
	assert_false(thp_value_equal("enabled", NULL, "never"));
}

/*
 * A kernel that ignores the write: enabled is a FIFO served by a child that
 * answers "always [madvise] never" to every read and swallows every write.
 */
static void test_write_readback_mismatch(void **state)
{
	struct fx *f = *state;
	struct err e = ERR_INIT;
	char path[PATH_MAX], base[PATH_MAX];
	int status, i;
	pid_t pid;

	assert_int_equal(fake_join(base, sizeof(base), f->dir, FAKE_THP), 0);
	assert_int_equal(fake_mkdir_p(base), 0);
	assert_int_equal(fake_join(path, sizeof(path), base, "enabled"), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		static const char show[] = "always [madvise] never\n";
		char sink[256];

		alarm(10);
		/* thp_write: read (validate), write, read (read back) */
		for (i = 0; i < 3; i++) {
			int fd = open(path, i == 1 ? O_RDONLY : O_WRONLY);

			if (fd < 0)
				_exit(1);
			if (i == 1) {
				while (read(fd, sink, sizeof(sink)) > 0)
					;
			} else if (write(fd, show, sizeof(show) - 1) != (ssize_t)sizeof(show) - 1) {
				_exit(2);
			}
			close(fd);
		}
		_exit(0);
	}
	alarm(10);
	assert_int_equal(thp_write(f->dir, "enabled", "always", &e), -EIO);
	alarm(0);
	assert_non_null(strstr(e.msg, "reads back 'madvise'"));
	assert_non_null(strstr(e.msg, "did not take the setting"));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void test_settings_put(void **state)
{
	struct thp_settings s = { 0 };
	struct err e = ERR_INIT;
	char key[THP_KEY_MAX];
	size_t i;

	(void)state;
	assert_int_equal(thp_settings_put(&s, "enabled", "always", &e), 0);
	assert_int_equal(thp_settings_put(&s, "enabled", "never", &e), 0);
	assert_int_equal(s.n, 1);
	assert_string_equal(thp_settings_get(&s, "enabled"), "never");
	for (i = 1; i < THP_MAX_SETTINGS; i++) {
		snprintf(key, sizeof(key), "k%zu", i);
		assert_int_equal(thp_settings_put(&s, key, "1", &e), 0);
	}
	assert_int_equal(thp_settings_put(&s, "one-too-many", "1", &e), -ENOSPC);
	assert_null(thp_settings_get(&s, "one-too-many"));
	assert_null(thp_settings_get(NULL, "enabled"));
}

/* read only: the real host's files must parse */
static void test_real_host_read_only(void **state)
{
	struct thp_settings s;
	struct err e = ERR_INIT;
	const char *v;

	(void)state;
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0) {
		print_message("skipped: no /sys/kernel/mm/transparent_hugepage/enabled here (a "
			      "kernel without THP)\n");
		skip();
	}
	assert_int_equal(thp_settings_read("/", &s, &e), 0);
	v = thp_settings_get(&s, "enabled");
	assert_non_null(v);
	assert_true(!strcmp(v, "always") || !strcmp(v, "madvise") || !strcmp(v, "never"));
	assert_true(s.n >= 2);
}

/* ---- host THP settings as the user names them -------------------------------- */

struct setting_case {
	const char *name;
	const char *s;
	int rc;
	unsigned kb;		/* when rc == 0 */
	enum thp_mode mode;
};

static struct setting_case setting_cases[] = {
	{ "setting/always", "always", 0, 0, THP_MODE_ALWAYS },
	{ "setting/madvise", "madvise", 0, 0, THP_MODE_MADVISE },
	{ "setting/never", "never", 0, 0, THP_MODE_NEVER },
	{ "setting/size_always", "64K:always", 0, 64, THP_MODE_ALWAYS },
	{ "setting/size_madvise", "2048K:madvise", 0, 2048, THP_MODE_MADVISE },
	{ "setting/smallest_size", "8K:always", 0, 8, THP_MODE_ALWAYS },
	{ "setting/largest_size_longest_text", "1073741824K:madvise", 0, 1u << 30, THP_MODE_MADVISE },
	{ "setting/bad/empty", "", -EINVAL, 0, 0 },
	{ "setting/bad/null", NULL, -EINVAL, 0, 0 },
	{ "setting/bad/inherit_top_level", "inherit", -EINVAL, 0, 0 },
	{ "setting/bad/upper_case", "Always", -EINVAL, 0, 0 },
	{ "setting/bad/trailing_blank", "always ", -EINVAL, 0, 0 },
	{ "setting/bad/leading_blank", " always", -EINVAL, 0, 0 },
	{ "setting/bad/a_list", "always,never", -EINVAL, 0, 0 },
	{ "setting/bad/defrag_value", "defer+madvise", -EINVAL, 0, 0 },
	{ "setting/bad/size_never", "64K:never", -EINVAL, 0, 0 },
	{ "setting/bad/size_inherit", "64K:inherit", -EINVAL, 0, 0 },
	{ "setting/bad/size_no_mode", "64K:", -EINVAL, 0, 0 },
	{ "setting/bad/size_no_number", "K:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_nothing", ":always", -EINVAL, 0, 0 },
	{ "setting/bad/size_below_8k", "4K:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_not_power_of_two", "48K:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_leading_zero", "064K:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_lower_case_k", "64k:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_in_m", "64M:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_without_unit", "64:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_kb_unit", "64kB:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_above_2^30", "2147483648K:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_overflows", "99999999999999999999K:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_signed", "+64K:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_negative", "-64K:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_two_units", "64KK:always", -EINVAL, 0, 0 },
	{ "setting/bad/size_two_colons", "64K:always:madvise", -EINVAL, 0, 0 },
	{ "setting/bad/size_mode_list", "64K:always,madvise", -EINVAL, 0, 0 },
};

/* parse, and where it parses, format back to the same text */
static void test_setting_parse(void **state)
{
	const struct setting_case *c = *state;
	struct thp_setting t = { 12345, THP_MODE__COUNT }, back;
	char buf[THP_NAME_LEN];
	int rc = thp_setting_parse(c->s, &t);

	if (rc != c->rc)
		fail_msg("'%s': rc %d, want %d", c->s ? c->s : "(null)", rc, c->rc);
	if (rc) {
		assert_int_equal(t.kb, 12345);	/* untouched */
		assert_int_equal(t.mode, THP_MODE__COUNT);
		return;
	}
	assert_int_equal(t.kb, c->kb);
	assert_int_equal(t.mode, c->mode);
	assert_int_equal(thp_setting_format(&t, buf, sizeof(buf)), 0);
	assert_string_equal(buf, c->s);
	assert_int_equal(thp_setting_parse(buf, &back), 0);
	assert_true(thp_setting_equal(&t, &back));
}

struct format_case {
	const char *name;
	struct thp_setting t;
	size_t len;
	int rc;
	const char *want;	/* when rc == 0 */
};

static struct format_case format_cases[] = {
	{ "setting/format/top_level", { 0, THP_MODE_MADVISE }, THP_NAME_LEN, 0, "madvise" },
	{ "setting/format/size", { 64, THP_MODE_ALWAYS }, THP_NAME_LEN, 0, "64K:always" },
	{ "setting/format/exact_fit", { 64, THP_MODE_ALWAYS }, 11, 0, "64K:always" },
	{ "setting/format/one_short", { 64, THP_MODE_ALWAYS }, 10, -ENOSPC, NULL },
	{ "setting/format/bad_top_level_inherit", { 0, THP_MODE_INHERIT }, THP_NAME_LEN, -EINVAL, NULL },
	{ "setting/format/bad_size_never", { 64, THP_MODE_NEVER }, THP_NAME_LEN, -EINVAL, NULL },
	{ "setting/format/bad_size", { 48, THP_MODE_ALWAYS }, THP_NAME_LEN, -EINVAL, NULL },
	{ "setting/format/bad_small_size", { 4, THP_MODE_ALWAYS }, THP_NAME_LEN, -EINVAL, NULL },
	{ "setting/format/bad_mode", { 0, THP_MODE__COUNT }, THP_NAME_LEN, -EINVAL, NULL },
};

static void test_setting_format(void **state)
{
	const struct format_case *c = *state;
	char buf[THP_NAME_LEN];
	int rc;

	assert_true(c->len <= sizeof(buf));
	rc = thp_setting_format(&c->t, buf, c->len);
	assert_int_equal(rc, c->rc);
	if (!rc)
		assert_string_equal(buf, c->want);
}

static void test_setting_equal(void **state)
{
	const struct thp_setting a = { 64, THP_MODE_ALWAYS }, b = { 64, THP_MODE_MADVISE }, c = { 128, THP_MODE_ALWAYS },
				 d = { 64, THP_MODE_ALWAYS };

	(void)state;
	assert_true(thp_setting_equal(&a, &d));
	assert_false(thp_setting_equal(&a, &b));
	assert_false(thp_setting_equal(&a, &c));
}

/* ---- main ------------------------------------------------------------------- */

#define ADD_PURE(table, fn)                                                            \
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)                             \
		tests[n++] = (struct CMUnitTest){ table[i].name, fn, NULL, NULL, &table[i] }

int main(void)
{
	struct CMUnitTest tests[192];
	size_t i, n = 0;

	ADD_TABLE(read_cases, test_read);
	ADD_ONE("read/mthp_sorted_by_size", test_read_mthp_order);
	ADD_ONE("read/real_host_read_only", test_real_host_read_only);
	ADD_ONE("read/read_one", test_read_one);
	ADD_ONE("sizes/ascending", test_sizes);
	ADD_TABLE(known_cases, test_known);
	ADD_TABLE(validate_cases, test_validate);
	ADD_ONE("validate/max_ptes_from_pmd_size", test_validate_pmd_nr_from_tree);
	ADD_TABLE(write_cases, test_write);
	ADD_ONE("write/readback_mismatch", test_write_readback_mismatch);
	ADD_ONE("settings/value_equal", test_value_equal);
	ADD_ONE("settings/put_get", test_settings_put);
	ADD_PURE(setting_cases, test_setting_parse);
	ADD_PURE(format_cases, test_setting_format);
	tests[n++] = (struct CMUnitTest){ "setting/equal", test_setting_equal, NULL, NULL, NULL };
	return _cmocka_run_group_tests("host/thp", tests, n, NULL, NULL);
}
