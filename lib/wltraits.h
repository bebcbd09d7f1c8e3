/*
 * wltraits: what a workload's records mean, so that no layer matches
 * workload names by string: the evidence that a cell's treatment took
 * effect, the metrics a nightly gate tests and the phase metrics the split
 * decomposes. Compiled into the guest program and the orchestrator; libc
 * only, never prints, never exits.
 */
#ifndef THPEVAL_LIB_WLTRAITS_H
#define THPEVAL_LIB_WLTRAITS_H

#include <stdbool.h>
#include <stddef.h>

/*
 * What a workload's records mean, so that no layer matches
 * workload names by string. Per workload: what proves that a cell's
 * treatment took effect (for each variant, the record field that carries the
 * coverage of the memory its measurement depends on, what that coverage must
 * be, and the fields that make a cell invalid on their own), the metrics a
 * nightly gate tests, and, for the workloads the split decomposes, their
 * phase metrics (struct wl_split). Compiled into the guest program (which
 * lists the rules and runs the host-cold series) and the orchestrator
 * (cell_validate, the gate, the split, the sizing summary, the text table).
 * libc only; never prints, never exits.
 */

/* What a cell's coverage must be, given the THP setting of the layer that holds the memory. */
enum wl_want {
	WL_WANT_NONE,		/* no coverage rule: the effect field is the evidence */
	WL_WANT_SETTING,	/* huge pages unless the setting is never (the workload opts in
				 * with MADV_HUGEPAGE under madvise) */
	WL_WANT_ALWAYS,		/* huge pages only where the setting is always (the workload does
				 * not madvise); none under madvise and never */
	WL_WANT_HUGE,		/* huge pages whatever the setting: the arm asks with MADV_HUGEPAGE */
	WL_WANT_BASE,		/* base pages whatever the setting: the arm asks with MADV_NOHUGEPAGE */
	WL_WANT_FIELD,		/* the record's want_field says: 1 huge pages, 0 none */
	WL_WANT_UNMEASURED,	/* the coverage cannot be measured: never valid; reason_field says why */
	WL_WANT__COUNT
};

const char *wl_want_name(enum wl_want w);

/* One rule: the first whose variant pattern matches a cell's variant applies. */
struct wl_rule {
	const char *variant;	/* fnmatch() pattern; "*" also matches no variant */
	const char *cov_field;	/* percent field (0..100): the coverage evidence; NULL none */
	enum wl_want want;
	const char *want_field;	/* WL_WANT_FIELD: a 0/1 field of the records */
	const char *effect_field;	/* 0/1 field; 0: the treatment did not take effect; NULL none */
	const char *effect_what;	/* what effect_field proves ("huge zero page") */
	const char *reason_field;	/* text field: why effect_field is 0, or why unmeasured */
	const char *what;	/* the memory the coverage is of, for messages ("the buffer") */
	/*
	 * 0, or the coverage a "huge" cell needs where that is less than
	 * --min-coverage: memory an application's allocator keeps partly on base
	 * pages whatever the setting (the shares measured: doc/workloads.md)
	 */
	double need_pct;
};

/*
 * The phase metrics of a workload whose THP effect the split decomposes into
 * host-side, guest-side and interaction parts (orchestrator/analysis/effects.c).
 * Each names fields the workload's records carry (tests/guest/test_workload.c
 * checks that against the guest program's metric tables).
 */
struct wl_split {
	const char *variant;		/* the cells whose metrics the split reads: "" the plain
					 * cells, else that variant's (tlb: "summary") */
	const char *fault_metric;	/* fault phase: time of the first touch of fresh memory;
					 * NULL: the workload times none */
	const char *access_metric;	/* access phase: time of loads from memory already mapped */
	const char *cold_variant;	/* the variant of the workload's host-cold series ("cold"):
					 * cells whose first touch is the host's first touch too,
					 * which the host prefault effect is measured on; NULL: none.
					 * The guest runner runs the series with this workload,
					 * which must take --size, --madvise and --hold */
	bool sizing;			/* the workload the sizing summary reads (exactly one) */
};

struct wl_traits {
	const char *name;
	const struct wl_rule *rules;	/* ends with a NULL variant */
	/*
	 * the metrics a nightly gate tests by default; NULL-terminated. Their
	 * unit and direction are in their names (orchestrator/analysis/compare.c:
	 * _per_s higher is better; _ms, _us, _s lower)
	 */
	const char *const *primary;
	const struct wl_split *split;	/* NULL: the split does not decompose this workload */
	/*
	 * NULL, or the Debian packages the guest image needs for this workload
	 * (an application: redis-server), NULL-terminated; thpeval run adds them
	 * to the image, copied from the host where they must be installed
	 */
	const char *const *packages;
};

/* The traits of a workload; NULL if it has none (not one of the guest program's). */
const struct wl_traits *wltraits_find(const char *workload);
/* The Debian packages a workload needs in the guest image (NULL-terminated), or NULL. */
const char *const *wltraits_packages(const char *workload);
/* Whether metric is one of the workload's primary (gated by default) metrics. */
bool wltraits_primary(const char *workload, const char *metric);
/* The traits at index i (0, 1, ...); NULL past the end. */
const struct wl_traits *wltraits_at(size_t i);
/* The i-th (0, 1, ...) traits with a split, in the order of wltraits_at; NULL past the end. */
const struct wl_traits *wltraits_split_at(size_t i);
/* The split of a workload; NULL if it has none (or no traits). */
const struct wl_split *wltraits_split(const char *workload);
/* The traits of the workload the sizing summary reads (split->sizing); never NULL. */
const struct wl_traits *wltraits_sizing(void);
/* Whether a cell of workload/variant is of the workload's host-cold series. */
bool wltraits_cold(const char *workload, const char *variant);
/*
 * The rule for a cell of workload/variant (variant NULL or "" for none):
 * its traits' first match, or the default for a workload without traits
 * (guest_huge_pct, WL_WANT_SETTING). Never NULL.
 */
const struct wl_rule *wltraits_rule(const char *workload, const char *variant);
/* "guest_huge_pct: huge pages unless THP is never" etc., for listings */
void wltraits_describe(const struct wl_rule *r, char *buf, size_t len);

/* What a cell's records showed, summarized over its repetitions (n = 0: absent). */
struct wl_evidence {
	const char *layer;	/* "host" or "guest": the layer that holds the memory */
	const char *setting;	/* that layer's THP setting in the cell: always, madvise, never... */
	size_t ncov;
	double cov_min, cov_max;	/* cov_field */
	size_t nwant;
	double want_min, want_max;	/* want_field */
	size_t neffect;
	double effect_min;	/* effect_field */
	const char *note;	/* reason_field of the records ("" or NULL: none) */
	double min_cov;		/* percent a "huge" cell must reach */
	double off_max;		/* percent a "none" cell may have */
};

/* true if the evidence meets the rule; else false and why (lower case, no full stop). */
bool wltraits_judge(const struct wl_rule *r, const struct wl_evidence *ev, char *why, size_t len);

#endif
