/*
 * tests for results.json as a whole (orchestrator/model/results.c writes it,
 * results_load.c reads it): a model with every field set, written, is
 * byte for byte the stored golden file (fixtures/results-full.json), and
 * that file loaded and written again is the same bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orchestrator/model/results.h"
#include "orchestrator/model/results_load.h"

#define GOLDEN "tests/orchestrator/fixtures/results-full.json"

static void src_path(char *buf, size_t len, const char *rel)
{
	const char *src = getenv("THPEVAL_SRCDIR");

	snprintf(buf, len, "%s%s%s", src ? src : "", src ? "/" : "", rel);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		*len = (size_t)n;
	}
	return buf;
}

#define SET(dst, s) snprintf((dst), sizeof(dst), "%s", (s))

/* one cell: key, a guest, metrics over two boots, coverage, failures */
static void full_cell(struct results *r, const char *target, const char *host, const char *prefault,
		      const char *guest, const char *workload, const char *variant, const char *state, double cov,
		      double base)
{
	struct cell_key k = { target, host, prefault, guest, workload, variant, state };
	struct cell *c = results_cell_key(r, &k, NULL);
	unsigned i;

	assert_non_null(c);
	SET(c->guest, "thpeval-full-g0");
	if (!strcmp(host, "always"))
		SET(c->host_cov_source, "mthp_stats");
	for (i = 0; i < 6; i++) {
		metric_add_boot(cell_metric(c, "fault_ns_per_4k", NULL), base + i * 1.25 + 0.1, i / 3);
		metric_add_boot(cell_metric(c, "access_ns", NULL), base / 3 + (i % 3) * 0.5, i / 3);
		metric_add_boot(&c->host_cov, cov - i % 2, i / 3);
		metric_add_boot(&c->guest_cov, cov * 0.975, i / 3);
		c->reps_ok++;
	}
	metric_add_boot(cell_metric(c, "only_one", NULL), 1.0 / 3, 0);
	c->warmups = 2;
	cell_add_failure(c, "rep 7: guest timed out \"quoted\" / slashed");
	cell_add_failure(c, "rep 8: record rejected");
	if (variant)
		SET(c->treatment_note, "the workload's own note, with unicode \xc2\xb5s");
}

static void full_guest(struct results *r, unsigned idx, const char *host)
{
	struct guest_log *g = results_guest_add(r, NULL);
	struct guest_cellstat *cs;

	assert_non_null(g);
	snprintf(g->name, sizeof(g->name), "thpeval-full-g%u", idx);
	SET(g->host_state, idx ? "fragmented" : "fresh");
	g->index = idx;
	g->concurrency = 2;
	SET(g->mthp_sizes_kb, idx ? "none" : "64,2048");
	SET(g->host_thp, host);
	SET(g->prefault, idx ? "immediate" : "ondemand");
	g->round = idx + 1;
	snprintf(g->xml_path, sizeof(g->xml_path), "/run/out/guest-%u.xml", idx);
	snprintf(g->console_path, sizeof(g->console_path), "/run/out/console-%u.log", idx);
	SET(g->status, idx ? "timeout" : "ok");
	if (idx)
		SET(g->error, "no record within 600 s");
	g->create_to_first_record_s = 3.25 + idx;
	g->teardown_s = idx ? NAN : 0.5;
	g->total_s = 61.0625;
	g->records = 40 + idx;
	g->rejected = idx;
	SET(g->guest_kernel, "6.1.0-guest");
	cs = guest_cellstat(g, "always", "memset");
	assert_non_null(cs);
	cs->reps = 3;
	cs->ncov = 2;
	cs->cov_sum = 199.0;
	cs->nfault = 3;
	cs->fault_sum = 300.75;
	cs->naccess = 1;
	cs->access_sum = 12.5;
	cs = guest_cellstat(g, "never", "memset");
	assert_non_null(cs);
	cs->reps = 3;	/* no means: null */
}

static void full_frag(struct results *r, bool undone)
{
	struct frag_log *f = results_frag_add(r, NULL);
	unsigned i;

	assert_non_null(f);
	SET(f->host_thp, undone ? "always" : "madvise");
	SET(f->prefault, undone ? "ondemand" : "immediate");
	f->round = undone ? 0 : 1;
	f->bytes = 21504ull << 20;
	f->huge_kb = 1024000;
	f->held_kb = 2048000;
	f->free2m_before_kb = 4000ull * 4096;
	f->free2m_after_kb = 8192;
	f->avail_before_kb = 30000000;
	f->orders = 11;
	for (i = 0; i < f->orders; i++) {
		f->buddy_before[i] = 1000 + i;
		f->buddy_after[i] = i < 8 ? 5000 - i : 0;
	}
	f->restored = true;
	f->compacted = undone;
	f->pcp_low = true;
	f->pcp_drained = undone;
	f->compact_scanned = 77;
	SET(f->stopped, undone ? "floor" : "cap");
	f->frag_compact_scanned = 7;
	f->seconds = undone ? 12.5 : NAN;
	f->compact_stall = 64;
	f->compact_success = 5;
	f->compact_fail = 59;
	f->thp_fault_alloc = 1234;
	f->thp_fault_fallback = 56;
	f->compact_scanned_guests = 680;
	f->pgmigrate_success = 3;
	f->pgsteal_direct = 824;
	if (undone) {
		f->have_undone = true;
		f->free2m_undone_kb = 3900ull * 4096;
		f->avail_undone_kb = 29000000;
		for (i = 0; i < f->orders; i++)
			f->buddy_undone[i] = 900 + i;
		SET(f->proactiveness, "20");
	} else {
		SET(f->error, "cannot fragment: out of memory");
	}
}

static void full_effects(struct results *r)
{
	struct effects *x = calloc(1, sizeof(*x));
	struct effect *e;
	struct effect_var *v;

	assert_non_null(x);
	x->tcg = false;
	e = &x->e[x->n++];
	SET(e->workload, "memset");
	SET(e->side, "host");
	SET(e->component, "prefault");
	SET(e->metric, "fault_ns_per_4k");
	SET(e->host_thp, "always");
	SET(e->guest_thp, "never");
	SET(e->at_guest, "never");
	SET(e->host_state, "fragmented");
	e->available = true;
	SET(e->note, "derived over boots");
	SET(e->method, "boots");
	e->log_est = 0.125;
	e->log_se = 0.03125;
	e->estimate_pct = 11.75;
	e->ci95_low_pct = 5.5;
	e->ci95_high_pct = 17.25;
	e->df = 3.5;
	e->boots_min = 2;
	e->significant = true;
	e->share_pct = 42.0;
	e = &x->e[x->n++];
	SET(e->workload, "memset");
	SET(e->side, "guest");
	SET(e->component, "tlb");
	SET(e->metric, "access_ns");
	SET(e->host_thp, "never");
	SET(e->guest_thp, "always");
	e->available = false;
	e->significant = true;	/* written false: not available */
	SET(e->note, "one boot per arm");
	SET(e->method, "one-boot");
	e->log_est = e->log_se = e->estimate_pct = NAN;
	e->ci95_low_pct = e->ci95_high_pct = e->df = e->share_pct = NAN;
	v = &x->var[x->nvar++];
	SET(v->workload, "memset");
	SET(v->label, "host always/ondemand guest never");
	SET(v->metric, "fault_ns_per_4k");
	v->vc.boots = 2;
	v->vc.samples = 6;
	v->vc.within_cv_pct = 1.5;
	v->vc.between_cv_pct = NAN;
	r->effects = x;
}

/* every field of the model set, each optional part both present and absent where it can be */
static struct results *full_model(void)
{
	struct results *r = malloc(sizeof(*r));
	struct run_settings *s;

	assert_non_null(r);
	results_init(r);
	SET(r->thpeval_version, "9.8.7-full");
	SET(r->accel, "kvm");
	SET(r->accel_reason, "/dev/kvm is usable");
	SET(r->libvirt_version, "9.0.0");
	SET(r->hypervisor_version, "7.2.0");
	SET(r->image_id, "0123456789abcdef");
	SET(r->kvm_stats_note, "pages_4k/2m/1g per repetition");
	SET(r->pmu_note, "not available: no PMU in this VM");
	SET(r->host.kernel, "6.1.0-host");
	SET(r->host.cpu_model, "Some CPU @ 2.0GHz");
	r->host.cpus = 16;
	r->host.mem_total_kb = 131072000;
	assert_int_equal(thp_settings_put(&r->thp_before, "enabled", "madvise", NULL), 0);
	assert_int_equal(thp_settings_put(&r->thp_before, "defrag", "madvise", NULL), 0);
	assert_int_equal(thp_settings_put(&r->thp_before, "khugepaged/pages_to_scan", "4096", NULL), 0);
	assert_int_equal(thp_settings_put(&r->thp_after, "enabled", "always", NULL), 0);
	r->have_thp_after = true;
	s = &r->settings;
	s->reps = 3;
	s->warmup = 1;
	s->vcpus = 2;
	s->rounds = 2;
	s->boots = 4;
	SET(s->pin, "vcpus 2-3, emulator 1");
	s->cold_reps = 1;
	SET(s->prefault_list, "ondemand,immediate");
	SET(s->backing, "memfd");
	SET(s->group_order, "0:never/ondemand 0:always/ondemand");
	s->target_ci_host = 2.5;
	s->target_ci_guest = 5;
	s->budget_s = 540;
	SET(s->stopped, "target met");
	s->memory_bytes = 2ull << 30;
	s->size_bytes = 1ull << 30;
	s->accesses = 1000000;
	s->seed = 2120196044ull;
	s->min_coverage_pct = 90;
	SET(s->host_thp_list, "never,always");
	SET(s->guest_thp_list, "never,always");
	SET(s->workloads, "memset,hzp");
	s->guests = 2;
	SET(s->host_state_list, "fresh,fragmented");
	s->mthp_sweep = true;
	SET(s->guest_mthp, "64,2048");
	SET(s->uri, "qemu:///system");
	SET(s->kcompile, "tinyconfig:vmlinux");
	SET(s->srcdisk_id, "fedcba9876543210");
	r->started = 1795989451;
	r->finished = 1795990000;
	SET(r->status, "interrupted");
	SET(r->error, "interrupted by signal 2");
	full_cell(r, "guest", "never", NULL, "never", "memset", NULL, NULL, 0.5, 300);
	full_cell(r, "guest", "always", "immediate", "always", "memset", NULL, "fragmented", 60, 200);
	full_cell(r, "host", "always", NULL, "none", "hzp", "zp1", NULL, 99, 1000);
	full_guest(r, 0, "never");
	full_guest(r, 1, "always");
	full_frag(r, true);
	full_frag(r, false);
	results_finish(r, 90);
	full_effects(r);
	return r;
}

/* the model written is the stored golden file, byte for byte */
static void test_write_golden(void **state)
{
	char golden[4096], dir[] = "/tmp/thpeval-test-json-XXXXXX", path[64];
	struct results *r = full_model();
	struct err e = ERR_INIT;
	size_t gl, wl;
	char *g, *w;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/results.json", dir);
	src_path(golden, sizeof(golden), GOLDEN);
	if (results_write_json(r, path, &e))
		fail_msg("%s", e.msg);
	w = slurp(path, &wl);
	assert_non_null(w);
	if (getenv("THPEVAL_WRITE_GOLDEN")) {
		FILE *f = fopen(golden, "w");

		assert_non_null(f);
		fwrite(w, 1, wl, f);
		fclose(f);
	}
	g = slurp(golden, &gl);
	if (!g)
		fail_msg("golden %s missing (run from the repository root)", golden);
	assert_int_equal(wl, gl);
	assert_memory_equal(w, g, gl);
	free(g);
	free(w);
	unlink(path);
	rmdir(dir);
	results_release(r);
	free(r);
}

/*
 * The golden file loaded and written again is the same bytes: every field the
 * writer writes is read back (the effects are the analysis', recomputed rather
 * than loaded, so the model's own are put back before writing).
 */
static void test_load_golden(void **state)
{
	char golden[4096];
	struct results *full = full_model(), *r = malloc(sizeof(*r));
	struct err e = ERR_INIT;
	char *g, *w;
	size_t gl, wl;

	(void)state;
	assert_non_null(r);
	src_path(golden, sizeof(golden), GOLDEN);
	if (results_load(golden, r, &e))
		fail_msg("%s", e.msg);
	assert_null(r->effects);
	r->effects = full->effects;
	full->effects = NULL;
	if (results_to_json_text(r, &w, &wl, &e))
		fail_msg("%s", e.msg);
	g = slurp(golden, &gl);
	assert_non_null(g);
	assert_int_equal(wl, gl);
	assert_memory_equal(w, g, gl);
	free(g);
	free(w);
	results_release(r);
	results_release(full);
	free(r);
	free(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_golden),
		cmocka_unit_test(test_load_golden),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
