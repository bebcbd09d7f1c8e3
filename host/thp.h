/*
 * thp: typed model of /sys/kernel/mm/transparent_hugepage (global, khugepaged
 * and per-size mTHP knobs). Owns reading, validating and writing those files
 * under a caller-given root ("/" on a host, a temp dir in tests).
 * Missing knobs mean "unsupported", never an error. Never prints, never
 * exits; does not journal: callers that change the host go through journal.h.
 */
#ifndef THPEVAL_HOST_THP_H
#define THPEVAL_HOST_THP_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/enumstr.h"
#include "lib/err.h"

#define THP_DIR "/sys/kernel/mm/transparent_hugepage"
#define THP_KEY_MAX 64
#define THP_VAL_MAX 64
#define THP_MAX_SETTINGS 96

/* one knob's value; key is relative to THP_DIR: "enabled", "khugepaged/defrag", "hugepages-64kB/enabled" */
struct thp_knob {
	char key[THP_KEY_MAX];
	char value[THP_VAL_MAX];
};

struct thp_settings {
	size_t n;
	struct thp_knob s[THP_MAX_SETTINGS];
};

enum thp_kind {
	THP_KIND_CHOICE,	/* "always [madvise] never": the value is the bracketed word */
	THP_KIND_U64,		/* a plain decimal number */
};

/*
 * Every known key whose file exists, fixed keys first, then the per-size
 * hugepages-<N>kB/{enabled,shmem_enabled} ascending by size. No THP
 * directory at all gives n == 0 and success.
 */
int thp_settings_read(const char *root, struct thp_settings *out, struct err *e);
/* value of key, NULL if absent */
const char *thp_settings_get(const struct thp_settings *s, const char *key);
/* add key or replace its value; -ENOSPC when full, -ENAMETOOLONG when too long */
int thp_settings_put(struct thp_settings *s, const char *key, const char *value,
		     struct err *e);

/*
 * Fixed keys (enabled, defrag, use_zero_page, shmem_enabled, shrink_underused,
 * khugepaged/{defrag,pages_to_scan,scan_sleep_millisecs,alloc_sleep_millisecs,
 * max_ptes_none,max_ptes_swap,max_ptes_shared}) and hugepages-<N>kB/enabled,
 * hugepages-<N>kB/shmem_enabled with N a power of two >= 8; also the knobs
 * thpeval's arms set outside THP_DIR, journaled the same way:
 * hugetlb/hugepages-<N>kB/nr_hugepages (/sys/kernel/mm/hugepages) and
 * sysctl/vm/{compaction_proactiveness,percpu_pagelist_high_fraction}
 * (/proc/sys/vm) and ksm/{run,pages_to_scan,sleep_millisecs}
 * (/sys/kernel/mm/ksm).
 */
bool thp_key_known(const char *key);
/* 0, or -EINVAL for an unknown key */
int thp_key_kind(const char *key, enum thp_kind *kind);
/* same setting value? numbers compare by value ("010" == "10") */
bool thp_value_equal(const char *key, const char *a, const char *b);

/*
 * key known (-EINVAL), its file exists (-EOPNOTSUPP), value one of the
 * choices the file lists, or a number in the range the kernel accepts
 * (-EINVAL / -ERANGE).
 */
int thp_validate(const char *root, const char *key, const char *value, struct err *e);
/*
 * Validate, write (numbers in canonical decimal), read back and compare: a
 * mismatch is -EIO. On a plain file (a fake tree, not sysfs) a choice file
 * is rewritten in the kernel's format ("always [madvise] never\n") so
 * that fake trees behave like the kernel.
 */
int thp_write(const char *root, const char *key, const char *value, struct err *e);
/* current value of one known key; -EOPNOTSUPP when its file is missing */
int thp_read_one(const char *root, const char *key, char *value, size_t len, struct err *e);
/*
 * Sizes (kB) that have a hugepages-<N>kB directory, ascending; a size may
 * offer only some knobs (shmem_enabled without enabled): ask
 * thp_settings_get(). -ENOSPC when more than max.
 */
int thp_sizes(const char *root, unsigned *sizes_kb, size_t max, size_t *n, struct err *e);

/* the values of a THP 'enabled' knob: the top-level one offers always,
 * madvise and never, a hugepages-<N>kB/enabled one inherit (the top level's) too */
enum thp_mode {
	THP_MODE_ALWAYS,
	THP_MODE_MADVISE,
	THP_MODE_NEVER,
	THP_MODE_INHERIT,
	THP_MODE__COUNT
};
/* thp_mode_name(): "always", "madvise", "never", "inherit"; thp_mode_parse(): 0 or -EINVAL */
ENUM_DECL(thp_mode);

/*
 * A host THP setting as the user names it and a run applies it: the
 * top-level 'enabled' knob in a mode ("always", "madvise", "never"), or one
 * multi-size THP size alone ("64K:always": hugepages-64kB/enabled in that
 * mode, every other size and 'enabled' never; Linux 6.8+).
 */
struct thp_setting {
	unsigned kb;		/* 0: the top-level knob; else the size, a power of two from 8 to 2^30 */
	enum thp_mode mode;	/* always, madvise or never; a size: always or madvise */
};

/* the text of a setting: at most THP_NAME_LEN - 1 characters ("1073741824K:madvise");
 * at most THP_LIST_MAX settings in one run */
#define THP_NAME_LEN 20
#define THP_LIST_MAX 16

/*
 * "always", "madvise", "never", or SIZE:MODE: "<N>K:always" or
 * "<N>K:madvise" with N a power of two from 8 to 2^30 without a leading
 * zero. 0 with *out set, or -EINVAL (*out untouched).
 */
int thp_setting_parse(const char *s, struct thp_setting *out);
/* the text thp_setting_parse() reads back: 0, -EINVAL for a setting it
 * would not accept, -ENOSPC when it does not fit in len */
int thp_setting_format(const struct thp_setting *t, char *buf, size_t len);
/* the same setting? */
bool thp_setting_equal(const struct thp_setting *a, const struct thp_setting *b);

#endif
