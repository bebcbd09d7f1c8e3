#include "orchestrator/model/balloon.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void balloon_init(void *elem)
{
	struct balloon_log *b = elem;

	b->rss_drop_kb = b->drop_pct_of_freed = b->half_drop_s = b->window_s = NAN;
	b->cov_before_pct = b->cov_after_free_pct = b->cov_after_retouch_pct = NAN;
	b->refault_ns_per_4k = NAN;
}

struct balloon_log *results_balloon_add(struct results *r, struct err *e)
{
	struct balloon_log *b;

	if (r->nballoons == r->cap_balloons) {
		size_t ncap = r->cap_balloons ? r->cap_balloons * 2 : 8;

		b = realloc(r->balloons, ncap * sizeof(*b));
		if (!b) {
			err_set(e, -ENOMEM, "out of memory for results");
			return NULL;
		}
		r->balloons = b;
		r->cap_balloons = ncap;
	}
	b = &r->balloons[r->nballoons++];
	memset(b, 0, sizeof(*b));
	balloon_init(b);
	return b;
}

static int balloon_put(const struct jt_ctx *c, void *parent, void *elem, const char *at)
{
	struct balloon_log *b = results_balloon_add(parent, c->e);

	(void)at;
	if (!b)
		return -ENOMEM;
	*b = *(struct balloon_log *)elem;
	return 0;
}

#define RP(k, kind, m, ...) JT_F(k, kind, struct rss_point, m, __VA_ARGS__)
static const struct jt_field rss_point_fields[] = {
	{ RP("t_s", JT_DOUBLE, t_s, 0) },
	{ RP("rss_kb", JT_INT, rss_kb, 0) },
};
static const struct jt_table rss_point_jt = JT_TABLE(struct rss_point, rss_point_fields);

#define BL(k, kind, m, ...) JT_F(k, kind, struct balloon_log, m, __VA_ARGS__)
static const struct jt_field balloon_fields[] = {
	{ BL("balloon", JT_STR, balloon, 0) },
	{ BL("host_thp", JT_STR, host_thp, 0) },
	{ BL("host_prefault", JT_STR, prefault, 0) },
	{ BL("guest_thp", JT_STR, guest_thp, 0) },
	{ BL("host_state", JT_STR, host_state, JT_NULL | JT_WDEF, .def = "fresh") },
	{ BL("round", JT_INT, round, 0) },
	{ BL("boot", JT_INT, boot, 0) },
	{ BL("rep", JT_INT, rep, 0) },
	{ BL("freed_kb", JT_INT, freed_kb, 0) },
	{ BL("qemu_rss_before_free_kb", JT_INT, rss_before_kb, 0) },
	{ BL("qemu_rss_after_free_kb", JT_INT, rss_after_free_kb, 0) },
	{ BL("qemu_rss_after_retouch_kb", JT_INT, rss_after_retouch_kb, 0) },
	{ BL("rss_drop_kb", JT_DOUBLE, rss_drop_kb, 0) },
	{ BL("rss_drop_pct_of_freed", JT_DOUBLE, drop_pct_of_freed, 0) },
	{ BL("time_to_half_drop_s", JT_DOUBLE, half_drop_s, 0) },
	{ BL("window_s", JT_DOUBLE, window_s, 0) },
	{ BL("huge_pct_before_free", JT_DOUBLE, cov_before_pct, 0) },
	{ BL("huge_pct_after_free", JT_DOUBLE, cov_after_free_pct, 0) },
	{ BL("huge_pct_after_retouch", JT_DOUBLE, cov_after_retouch_pct, 0) },
	{ BL("refault_ns_per_4k", JT_DOUBLE, refault_ns_per_4k, 0) },
	{ BL("series", JT_ARR, series, JT_INLINE, .count = offsetof(struct balloon_log, n),
	     .cap = BALLOON_SERIES_MAX, .sub = &rss_point_jt) },
	{ BL("error", JT_STR, error, JT_NULL | JT_WNULL) },
};

const struct jt_table balloon_log_jt = { sizeof(struct balloon_log), balloon_init, balloon_put,
					 sizeof(balloon_fields) / sizeof(balloon_fields[0]), balloon_fields };
