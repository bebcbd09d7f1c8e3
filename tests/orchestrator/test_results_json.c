/*
 * tests for orchestrator/model/results_json.c (results.json from field
 * tables) with results_load.c: a model with every field set, written, is
 * byte for byte the stored golden file (fixtures/results-full.json); that
 * file loaded and written again is the same bytes; walking the tables, every
 * entry is written, read back to the same value (derived ones: checked when
 * read), and a wrong type in any of them is refused with the key named;
 * unknown keys are ignored; a handful of damaged files give today's messages.
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

#include "orchestrator/model/balloon.h"
#include "orchestrator/model/jtable.h"
#include "orchestrator/model/results.h"
#include "orchestrator/model/results_json.h"
#include "orchestrator/model/results_load.h"
#include "tests/orchestrator/fixture.h"

#define GOLDEN "tests/orchestrator/fixtures/results-full.json"

#define SET(dst, s) snprintf((dst), sizeof(dst), "%s", (s))

/* one cell: key, a guest, metrics over two boots, coverage, failures */
static void full_cell(struct results *r, const char *target, const char *host, const char *prefault,
		      const char *guest, const char *workload, const char *variant, const char *state, double cov,
		      double base)
{
	struct cell_key k = { target, host, prefault, guest, workload, variant, state, NULL };
	struct cell *c = results_cell_key(r, &k, NULL);
	unsigned i;

	assert_non_null(c);
	SET(c->guest, "thpeval-full-g0");
	if (!strcmp(host, "always"))
		SET(c->host_cov_source, "mthp_stats");
	for (i = 0; i < 6; i++) {
		metric_add_boot(cell_metric(c, "fault_ns_per_4k", NULL), base + i * 1.25 + 0.1, i / 3);
		metric_add_boot(cell_metric(c, "access_ns", NULL), base / 3 + (i % 3) * 0.5, i / 3);
		metric_add_boot(&c->host_cov, fabs(cov - i % 2), i / 3);	/* a coverage: 0 to 100 */
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
	SET(g->host_state, idx == 2 ? "collapse-madvise" : idx ? "fragmented" : "fresh");
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
	if (!idx) {	/* the phases of a boot; an older guest program's boot has none */
		g->boot_create_s = 0.25;
		g->boot_firmware_s = 0.125;
		g->boot_kernel_s = 2.0;
		g->boot_initrd_s = 0.5;
		g->boot_runner_s = 0.375;
	}
	g->teardown_s = idx ? NAN : 0.5;
	g->total_s = 61.0625;
	g->records = 40 + idx;
	g->rejected = idx;
	SET(g->guest_kernel, "6.1.0-guest");
	SET(g->emulator, idx ? "/opt/qemu-b/qemu-system-x86_64" : "/usr/bin/qemu-system-x86_64");
	SET(g->arm, idx ? "B" : "A");
	SET(g->balloon, idx == 1 ? "reporting" : "none");
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

static void full_collapse(struct results *r, bool ok)
{
	struct collapse_log *c = results_collapse_add(r, NULL);
	size_t i;

	assert_non_null(c);
	SET(c->host_thp, ok ? "always" : "never");
	SET(c->prefault, "ondemand");
	SET(c->method, "madvise");
	c->round = ok ? 1 : 0;
	c->boot = ok ? 1 : 0;
	c->mapping_kb = 526336;
	c->ranges = 1;
	c->cov_before_pct = 0.4;
	c->cov_after_pct = ok ? 97.5 : 0.4;
	c->resident_kb_after = 440320;
	c->resident_huge_pct_after = ok ? 99.5 : 0.5;
	c->call_s = 1.25;
	SET(c->call_result, ok ? "ok" : "EINVAL");
	c->blocks = 257;
	c->collapsed = ok ? 250 : 0;
	c->refused = 7;
	c->busy = 2;
	c->nomem = 3;
	c->t50_s = ok ? 0.75 : NAN;
	c->t90_s = ok ? 1.5 : NAN;
	c->n = 3;
	for (i = 0; i < c->n; i++)
		c->series[i] = (struct cov_point){ (double)i, ok ? 0.4 + 48.5 * (double)i : 0.4 };
	if (!ok)
		SET(c->error, "process 4242 is gone: cannot collapse its memory");
}

static void full_migration(struct results *r, bool ok)
{
	struct migration_log *m = results_migration_add(r, NULL);
	struct mig_summary *s = results_migsum_add(r, NULL);
	size_t i;

	assert_non_null(m);
	assert_non_null(s);
	SET(m->arm, ok ? "postcopy" : "precopy");
	SET(m->host_thp, "always");
	m->round = ok ? 1 : 0;
	m->boot = ok ? 2 : 1;
	m->src_cov_pct = 99.2;
	m->dst_cov_first_pct = ok ? 12.5 : NAN;
	m->dst_cov_last_pct = ok ? 60.25 : NAN;
	m->t90_s = ok ? 5.5 : NAN;
	if (!ok)
		SET(m->t90_why, "settled at 60.2% (no change over 5 s)");
	m->settled_s = ok ? 7 : NAN;
	m->migrate_s = 14.5;
	m->postcopy_switched = ok;
	m->have_stats = ok;
	m->total_ms = ok ? 14151 : NAN;
	m->downtime_ms = ok ? 116 : NAN;
	m->setup_ms = ok ? 16 : NAN;
	m->data_bytes = 91820000;
	m->memory_bytes = 91820000;
	m->memory_total_bytes = 537403392;
	m->bandwidth_bps = 11283000;
	m->dirty_rate_pps = 12;
	m->postcopy_requests = ok ? 731 : 0;
	m->iterations = 4;
	m->access_before_ns = 700.5;
	m->access_after_ns = ok ? 1500.25 : NAN;
	m->access_settled_ns = ok ? 800 : NAN;
	m->write_before_ns = 30.5;
	m->write_after_ns = ok ? 900 : NAN;
	m->write_settled_ns = ok ? 35 : NAN;
	m->n = ok ? 3 : 0;
	for (i = 0; i < m->n; i++)
		m->series[i] = (struct cov_point){ (double)i, 12.5 + 10 * (double)i };
	m->npass = 2;
	for (i = 0; i < m->npass; i++)
		m->pass[i] = (struct mig_pass){ (double)i - 1.5, 30.5, 700.5 };
	if (!ok)
		SET(m->error, "cannot migrate guest 'thpeval-1-1' (precopy): no route");
	SET(s->arm, ok ? "postcopy" : "none");
	SET(s->host_thp, "always");
	SET(s->metric, "access_ns");
	SET(s->phase, ok ? "right_after" : "before");
	s->boots = ok ? 4 : 1;
	s->mean = 1500.25;
	s->ci_lo = ok ? 1400 : NAN;
	s->ci_hi = ok ? 1600.5 : NAN;
	s->effect_pct = ok ? 114.25 : NAN;
	s->effect_lo_pct = ok ? 90.5 : NAN;
	s->effect_hi_pct = ok ? 140 : NAN;
}

/* a collapse-khugepaged entry: khugepaged's settings and deltas, the guest's access passes */
static void full_khugepaged(struct results *r)
{
	struct collapse_log *c = results_collapse_add(r, NULL);
	size_t i;

	assert_non_null(c);
	SET(c->host_thp, "always");
	SET(c->prefault, "ondemand");
	SET(c->method, "khugepaged");
	c->boot = 2;
	c->mapping_kb = 1050624;
	c->ranges = 1;
	c->cov_before_pct = 0;
	c->cov_after_pct = 91.5;
	c->resident_kb_after = 1000000;
	c->resident_huge_pct_after = 96.1;
	c->t50_s = 4.5;
	c->t90_s = 8.25;
	SET(c->stopped, "90% reached");
	c->interval_s = 9;
	c->n = 4;
	for (i = 0; i < c->n; i++)
		c->series[i] = (struct cov_point){ 3.0 * (double)i, 30.5 * (double)i };
	c->has_khp = true;
	c->khp = (struct khp_log){ true, 4096, 100, 60000, 1, 511, 64, 256, 3, 230000, 77, 2.5 };
	c->has_reg = true;
	c->reg = (struct khp_reg){ "guest_touch", 0.25, 3.5, 2.75, 268435456, 40.5 };
	c->has_probe = true;
	SET(c->probe.guest_thp, "always");
	c->probe.period_s = 1;
	c->probe.buffer_mib = 256;
	c->probe.accesses = 200000;
	c->probe.n = 3;
	c->probe.series[0] = (struct access_point){ -1.5, 800.25 };
	c->probe.series[1] = (struct access_point){ 4, 700.5 };
	c->probe.series[2] = (struct access_point){ 10, 600.75 };
	c->probe.before_ns = 800.25;
	c->probe.during_ns = 700.5;
	c->probe.after_ns = 600.75;
	c->probe.n_before = c->probe.n_during = c->probe.n_after = 1;
}

/* a free page reporting window: the drop seen, or one that failed */
static void full_balloon(struct results *r, bool ok)
{
	struct balloon_log *b = results_balloon_add(r, NULL);
	size_t i;

	assert_non_null(b);
	SET(b->balloon, ok ? "reporting" : "none");
	SET(b->host_thp, "always");
	SET(b->prefault, "ondemand");
	SET(b->guest_thp, "never");
	SET(b->host_state, ok ? "fresh" : "fragmented");
	b->round = 1;
	b->boot = 1;
	b->rep = 2;
	b->freed_kb = 262144;
	b->rss_before_kb = 812344;
	b->rss_after_free_kb = ok ? 550200 : 812344;
	b->rss_after_retouch_kb = 812400;
	b->rss_drop_kb = (double)b->rss_before_kb - (double)b->rss_after_free_kb;
	b->drop_pct_of_freed = b->rss_drop_kb / (double)b->freed_kb * 100;
	b->half_drop_s = ok ? 2.25 : NAN;
	b->window_s = 10.125;
	b->cov_before_pct = 80.5;
	b->cov_after_free_pct = ok ? 55.25 : 80.5;
	b->cov_after_retouch_pct = 79.75;
	b->refault_ns_per_4k = ok ? 2400.5 : 900.25;
	b->n = 3;
	for (i = 0; i < b->n; i++)
		b->series[i] = (struct rss_point){ 0.25 * (double)i, b->rss_before_kb - (ok ? 100000 * i : 0) };
	if (!ok)
		SET(b->error, "process 4242 is gone (no '/proc/4242/status')");
}

static void full_ksm(struct results *r, bool on)
{
	struct ksm_log *k = results_ksm_add(r, NULL);
	size_t i;

	assert_non_null(k);
	SET(k->ksm, on ? "on" : "off");
	SET(k->host_thp, "always");
	SET(k->prefault, "ondemand");
	k->round = 1;
	k->guests = 2;
	k->first_boot = on ? 2 : 0;
	k->pages_to_scan = on ? 10000 : 0;
	k->sleep_millisecs = on ? 10 : 0;
	k->thp_split_pmd = on ? 412 : 0;
	k->pages_shared_max = on ? 1250 : 0;
	k->pages_sharing_max = on ? 98304 : 0;
	k->full_scans = on ? 3 : 0;
	k->t_sharing_s = on ? 12.5 : NAN;
	k->waited_s = on ? 4.25 : NAN;
	k->access_before_ns = on ? 96.5 : NAN;
	k->access_after_ns = on ? 120.25 : NAN;
	k->n_before = on ? 2 : 0;
	k->n_after = on ? 4 : 0;
	k->n = 3;
	for (i = 0; i < k->n; i++)
		k->series[i] = (struct ksm_point){ (double)i, on ? 10 * i : 0, on ? 1000 * i : 0, on ? i : 0 };
	k->ncov = 2;
	k->cov[0] = (struct ksm_cov_point){ 0.5, 0, 99.5 };
	k->cov[1] = (struct ksm_cov_point){ 0.5, 1, on ? 40.25 : 99 };
	if (!on)
		SET(k->error, "cannot read /sys/kernel/mm/ksm/pages_sharing: No such file or directory");
}

static void full_ksm_fx(struct results *r)
{
	struct abtest *fx = calloc(1, sizeof(*fx));
	struct ab_row *w;

	assert_non_null(fx);
	SET(fx->axis, "ksm");
	SET(fx->a, "off");
	SET(fx->b, "on");
	w = &fx->rows[fx->n++];
	SET(w->what, "metric");
	SET(w->label, "always/always/memset host=ksm");
	SET(w->metric, "access_ns");
	w->boots_a = w->boots_b = 2;
	SET(w->method, "welch");
	w->a = 100;
	w->b = 125;
	w->log_ratio = 0.25;
	w->log_se = 0.0625;
	w->df = 2;
	w->ratio = 1.25;
	w->ratio_lo = 1.125;
	w->ratio_hi = 1.5;
	w->p = 0.0078125;
	w->p_holm = 0.0078125;
	w->tested = w->differs = true;
	fx->metrics_tested = fx->metrics_differ = 1;
	r->ksm_fx = fx;
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
	SET(e->round_estimator, "paired by round");
	SET(e->round_note, "4 rounds as blocks");
	e->rounds = 4;
	e->round_corr = 0.5;
	e->round_var = 0.0625;
	e->log_se_unpaired = 0.046875;
	e->df_unpaired = 6.25;
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

/* the in-run A/B comparison: a tested metric row and an untested effect row */
static void full_ab(struct results *r)
{
	struct abtest *ab = calloc(1, sizeof(*ab));
	struct ab_row *w;

	assert_non_null(ab);
	SET(ab->axis, "emulator");
	SET(ab->a, "/usr/bin/qemu-system-x86_64");
	SET(ab->b, "/opt/qemu-b/qemu-system-x86_64");
	w = &ab->rows[ab->n++];
	SET(w->what, "metric");
	SET(w->label, "never/never/memset");
	SET(w->metric, "access_ns");
	w->pairs = 3;
	w->boots_a = w->boots_b = 3;
	SET(w->method, "paired");
	w->a = 100;
	w->b = 125;
	w->log_ratio = 0.25;
	w->log_se = 0.0625;
	w->df = 2;
	w->ratio = 1.25;
	w->ratio_lo = 1.125;
	w->ratio_hi = 1.5;
	w->p = 0.0078125;
	w->p_holm = 0.015625;
	w->tested = w->differs = true;
	w = &ab->rows[ab->n++];
	SET(w->what, "effect");
	SET(w->label, "host tlb memset, host always guest never (at guest never)");
	SET(w->metric, "access_ns");
	w->a = 12.5;
	w->b = w->log_ratio = w->log_se = w->df = w->ratio = w->ratio_lo = w->ratio_hi = NAN;
	w->p = w->p_holm = NAN;
	SET(w->note, "fewer than 2 boots of an arm");
	ab->metrics_tested = ab->metrics_differ = 1;
	r->ab = ab;
}

/* a third boot whose host coverage contradicts host never: validity leaves it out */
static void left_out_boot(struct cell *c)
{
	metric_add_boot(cell_metric(c, "fault_ns_per_4k", NULL), 250.5, 2);
	metric_add_boot(cell_metric(c, "access_ns", NULL), 75.25, 2);
	metric_add_boot(&c->host_cov, 40, 2);
	metric_add_boot(&c->guest_cov, 0.5, 2);
	c->reps_ok++;
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
	SET(r->host.name, "lab-host-1");
	SET(r->host.kernel, "6.1.0-host");
	SET(r->host.cpu_model, "Some CPU @ 2.0GHz");
	r->host.cpus = 16;
	r->host.mem_total_kb = 131072000;
	r->host.have_virt = r->host.virtualized = true;
	r->host.have_nested = r->host.reporting = true;
	r->host.have_order = true;
	r->host.reporting_order = 9;
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
	SET(s->stopped, "reachable targets met");
	s->stopped_at_minimum = true;
	s->nnot_chased = 1;
	SET(s->not_chased[0].effect, "host prefault (guest always) fault_ns_per_4k");
	s->not_chased[0].target_pct = 15;
	s->not_chased[0].boots_needed = 160;
	s->not_chased[0].boots_allowed = 30;
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
	SET(s->balloon_list, "none,reporting");
	s->mthp_sweep = true;
	SET(s->guest_mthp, "64,2048");
	SET(s->uri, "qemu:///system");
	SET(s->kcompile, "tinyconfig:vmlinux");
	SET(s->srcdisk_id, "fedcba9876543210");
	SET(s->emulator, "/usr/bin/qemu-system-x86_64,/opt/qemu-b/qemu-system-x86_64");
	SET(s->ksm, "off,on");
	r->started = 1795989451;
	r->finished = 1795990000;
	SET(r->status, "interrupted");
	SET(r->error, "interrupted by signal 2");
	full_cell(r, "guest", "never", NULL, "never", "memset", NULL, NULL, 0.5, 300);
	left_out_boot(&r->cells[0]);
	full_cell(r, "guest", "always", "immediate", "always", "memset", NULL, "fragmented", 60, 200);
	full_cell(r, "host", "always", NULL, "none", "hzp", "zp1", NULL, 99, 1000);
	full_guest(r, 0, "never");
	full_guest(r, 1, "always");
	full_guest(r, 2, "always");
	full_frag(r, true);
	full_frag(r, false);
	full_khugepaged(r);
	full_collapse(r, true);
	full_collapse(r, false);
	full_migration(r, true);
	full_migration(r, false);
	full_balloon(r, true);
	full_balloon(r, false);
	/* the free page reporting arm's cell beside the split's */
	full_cell(r, "guest", "always", NULL, "never", "memset", NULL, NULL, 1, 250);
	SET(r->cells[r->ncells - 1].balloon, "reporting");
	full_ksm(r, false);
	full_ksm(r, true);
	results_finish(r, 90);
	full_effects(r);
	full_ab(r);
	full_ksm_fx(r);
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
	fixture_path(golden, sizeof(golden), GOLDEN);
	if (results_write_json(r, path, &e))
		fail_msg("%s", e.msg);
	w = fixture_slurp(path, &wl);
	assert_non_null(w);
	if (getenv("THPEVAL_WRITE_GOLDEN")) {
		FILE *f = fopen(golden, "w");

		assert_non_null(f);
		fwrite(w, 1, wl, f);
		fclose(f);
	}
	g = fixture_slurp(golden, &gl);
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
	fixture_path(golden, sizeof(golden), GOLDEN);
	if (results_load(golden, r, &e))
		fail_msg("%s", e.msg);
	assert_null(r->effects);
	r->effects = full->effects;
	full->effects = NULL;
	assert_null(r->ab);
	r->ab = full->ab;
	full->ab = NULL;
	assert_null(r->ksm_fx);
	r->ksm_fx = full->ksm_fx;
	full->ksm_fx = NULL;
	if (results_to_json_text(r, &w, &wl, &e))
		fail_msg("%s", e.msg);
	g = fixture_slurp(golden, &gl);
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

/* ---- walking the tables ------------------------------------------------------ */

/* the struct an array field's elements are in, and how many */
static const char *arr_elems(const struct jt_field *f, const char *base, size_t *n)
{
	memcpy(n, base + f->count, sizeof(*n));
	if (f->flags & JT_INLINE)
		return base + f->off;
	return *(char *const *)(base + f->off);
}

/* a field that holds something other than its zero value (so a round trip can tell it was read) */
static bool field_set(const struct jt_field *f, const char *base)
{
	const char *p = base + f->off;
	size_t i;

	switch (f->kind) {
	case JT_STR:
		return *p;
	case JT_DOUBLE: {
		double d;

		memcpy(&d, p, sizeof(d));
		return isfinite(d) && d != 0;
	}
	default:
		for (i = 0; i < f->size; i++)
			if (p[i])
				return true;
		return false;
	}
}

#define MAX_FIELDS 512
struct seen {
	const struct jt_field *f[MAX_FIELDS];
	bool set[MAX_FIELDS];
	size_t n;
	size_t compared;
};

static void seen_mark(struct seen *s, const struct jt_field *f, bool set)
{
	size_t i;

	for (i = 0; i < s->n && s->f[i] != f; i++)
		;
	if (i == s->n) {
		assert_true(s->n < MAX_FIELDS);
		s->f[s->n++] = f;
	}
	s->set[i] |= set;
}

static void sub_path(char *buf, size_t len, const char *at, size_t i)
{
	if (snprintf(buf, len, "%s[%zu]", at, i) >= (int)len)
		fail_msg("path '%s' too long", at);
}

static void walk_equal(struct seen *s, const struct jt_table *t, json_object *o, const char *a, const char *b,
		       const char *at);

/* one field: written (its key is in o), and, unless derived, loaded back to the value written */
static void field_equal(struct seen *s, const struct jt_field *f, json_object *o, const char *a, const char *b,
			const char *at)
{
	char k[JT_PATH_MAX], sub[JT_PATH_MAX];
	json_object *v, *wa, *wb;
	size_t na, nb, i;
	const char *ea, *eb;

	jt_path(k, sizeof(k), at, f->key);
	if (!json_object_object_get_ex(o, f->key, &v))
		fail_msg("'%s' is in the tables but was not written", k);
	if (f->flags & JT_DERIVED)
		return;	/* recomputed when read: test_wrong_types shows each is read */
	if ((f->flags & (JT_IF | JT_UNLESS)) && memcmp(a + f->cond, b + f->cond, sizeof(bool)))
		fail_msg("'%s': the flag that decides whether it is written is not read back", k);
	s->compared++;
	switch (f->kind) {
	case JT_CONST:
		return;
	case JT_OBJ:
		if (!v && (f->flags & JT_IF))
			return;	/* an object only where its flag is set: null here, its fields seen elsewhere */
		walk_equal(s, f->sub, v, a + f->off, b + f->off, k);
		return;
	case JT_ARR:
		ea = arr_elems(f, a, &na);
		eb = arr_elems(f, b, &nb);
		if (na != nb)
			fail_msg("'%s': %zu written, %zu read back", k, na, nb);
		seen_mark(s, f, na > 0);
		for (i = 0; i < na; i++) {
			sub_path(sub, sizeof(sub), k, i);
			walk_equal(s, f->sub, json_object_array_get_idx(v, i), ea + i * f->sub->size,
				   eb + i * f->sub->size, sub);
		}
		return;
	case JT_CUSTOM:
		if (f->sub) {	/* the metrics map */
			const struct cell *ca = (const void *)a, *cb = (const void *)b;

			if (ca->nmetrics != cb->nmetrics)
				fail_msg("'%s': %zu metrics written, %zu read back", k, ca->nmetrics, cb->nmetrics);
			seen_mark(s, f, ca->nmetrics > 0);
			for (i = 0; i < ca->nmetrics; i++) {
				json_object *mo;

				assert_string_equal(ca->metrics[i].name, cb->metrics[i].name);
				assert_true(json_object_object_get_ex(v, ca->metrics[i].name, &mo));
				jt_path(sub, sizeof(sub), k, ca->metrics[i].name);
				walk_equal(s, f->sub, mo, (const char *)&ca->metrics[i], (const char *)&cb->metrics[i],
					   sub);
			}
			return;
		}
		/* as the model says it: what each writes */
		wa = f->write(a, f);
		wb = f->write(b, f);
		if (strcmp(json_object_to_json_string(wa), json_object_to_json_string(wb)))
			fail_msg("'%s': written %s, read back as %s", k, json_object_to_json_string(wa),
				 json_object_to_json_string(wb));
		seen_mark(s, f, wa && strcmp(json_object_to_json_string(wa), "[ ]") &&
			  strcmp(json_object_to_json_string(wa), "{ }"));
		json_object_put(wa);
		json_object_put(wb);
		return;
	case JT_STR:
		if (strcmp(a + f->off, b + f->off))
			fail_msg("'%s': written '%s', read back as '%s'", k, a + f->off, b + f->off);
		break;
	default:
		if (memcmp(a + f->off, b + f->off, f->size))
			fail_msg("'%s': read back as another value", k);
		break;
	}
	seen_mark(s, f, field_set(f, a));
}

static void walk_equal(struct seen *s, const struct jt_table *t, json_object *o, const char *a, const char *b,
		       const char *at)
{
	size_t i;

	assert_true(json_object_is_type(o, json_type_object));
	for (i = 0; i < t->n; i++)
		field_equal(s, &t->f[i], o, a, b, at);
}

/*
 * load(write(x)) == x, field by field through the tables, for the full
 * model: every entry is written, and each that is not derived is read back
 * to the value written; each holds a non-zero value somewhere in the model,
 * so reading it is what makes it equal.
 */
static void test_tables_round_trip(void **state)
{
	struct results *full = full_model(), *back = malloc(sizeof(*back));
	struct seen *s = calloc(1, sizeof(*s));
	struct err e = ERR_INIT;
	json_object *o;
	char *text;
	size_t len, i;

	(void)state;
	assert_non_null(back);
	assert_non_null(s);
	if (results_to_json_text(full, &text, &len, &e) || results_load_text(text, len, "full", back, &e))
		fail_msg("%s", e.msg);
	o = json_tokener_parse(text);
	assert_non_null(o);
	walk_equal(s, &results_jt, o, (const char *)full, (const char *)back, "");
	for (i = 0; i < s->n; i++)
		if (!s->set[i])
			fail_msg("'%s' is never set in the full model: the round trip cannot show it is read",
				 s->f[i]->key);
	print_message("  %zu fields compared, %zu table entries\n", s->compared, s->n);
	assert_true(s->n > 100);
	json_object_put(o);
	free(text);
	free(s);
	results_release(back);
	results_release(full);
	free(back);
	free(full);
}

/* ---- every entry read: a wrong type in it is refused, naming it -------------------- */

struct wt_ctx {
	json_object *root;
	size_t tried;
};

static void wrong_types(struct wt_ctx *w, const struct jt_table *t, json_object *o, const char *at);

static void try_wrong(struct wt_ctx *w, json_object *o, const char *key, const char *path)
{
	json_object *old, *bad;
	struct results *r = malloc(sizeof(*r));
	struct err e = ERR_INIT;
	const char *txt;
	char want[JT_PATH_MAX + 4];

	assert_non_null(r);
	assert_true(json_object_object_get_ex(o, key, &old));
	bad = json_object_is_type(old, json_type_array) ? json_object_new_object() : json_object_new_array();
	json_object_get(old);
	json_object_object_add(o, key, bad);
	txt = json_object_to_json_string(w->root);
	if (!results_load_text(txt, strlen(txt), "wrong.json", r, &e))
		fail_msg("'%s' as %s was read without a word", path, json_object_is_type(bad, json_type_array) ?
			 "an array" : "an object");
	snprintf(want, sizeof(want), "'%s' ", path);
	if (!strstr(e.msg, want) || strchr(e.msg, '\n') || !strstr(e.msg, "'wrong.json'"))
		fail_msg("'%s' of the wrong type: message '%s' does not name it on one line", path, e.msg);
	json_object_object_add(o, key, old);
	w->tried++;
	free(r);
}

static void wrong_types(struct wt_ctx *w, const struct jt_table *t, json_object *o, const char *at)
{
	char k[JT_PATH_MAX], sub[JT_PATH_MAX];
	json_object *v;
	size_t i;

	for (i = 0; i < t->n; i++) {
		const struct jt_field *f = &t->f[i];

		jt_path(k, sizeof(k), at, f->key);
		assert_true(json_object_object_get_ex(o, f->key, &v));
		try_wrong(w, o, f->key, k);
		if (f->kind == JT_OBJ)
			wrong_types(w, f->sub, v, k);
		else if (f->sub && f->kind != JT_OBJ && json_object_is_type(v, json_type_array)) {
			sub_path(sub, sizeof(sub), k, 0);
			assert_true(json_object_array_length(v) > 0);
			wrong_types(w, f->sub, json_object_array_get_idx(v, 0), sub);
		} else if (f->kind == JT_CUSTOM && f->sub) {	/* a map: its first value */
			json_object_object_foreach(v, name, mo) {
				jt_path(sub, sizeof(sub), k, name);
				wrong_types(w, f->sub, mo, sub);
				break;
			}
		}
	}
}

/* each table entry is read (derived ones too: checked): a value of the wrong type is an error naming its key */
static void test_wrong_types(void **state)
{
	char golden[4096];
	struct wt_ctx w = { NULL, 0 };
	size_t len;
	char *text;

	(void)state;
	fixture_path(golden, sizeof(golden), GOLDEN);
	text = fixture_slurp(golden, &len);
	assert_non_null(text);
	w.root = json_tokener_parse(text);
	assert_non_null(w.root);
	wrong_types(&w, &results_jt, w.root, "");
	print_message("  %zu keys of the wrong type, each refused\n", w.tried);
	json_object_put(w.root);
	free(text);
}

/* ---- unknown keys are ignored ------------------------------------------------------- */

static void add_unknown(const struct jt_table *t, json_object *o)
{
	json_object *v;
	size_t i;

	json_object_object_add(o, "zz_unknown", json_object_new_string("ignored"));
	for (i = 0; i < t->n; i++) {
		const struct jt_field *f = &t->f[i];

		if (!json_object_object_get_ex(o, f->key, &v) || !v)
			continue;
		if (f->kind == JT_OBJ)
			add_unknown(f->sub, v);
		else if (f->sub && json_object_is_type(v, json_type_array) && json_object_array_length(v))
			add_unknown(f->sub, json_object_array_get_idx(v, 0));
	}
}

/* a key the tables do not know, in every kind of object, is ignored: the model read is the same */
static void test_unknown_keys(void **state)
{
	char golden[4096];
	struct results *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct err e = ERR_INIT;
	char *text, *ta, *tb;
	size_t len, la, lb;
	json_object *root;
	const char *edited;

	(void)state;
	fixture_path(golden, sizeof(golden), GOLDEN);
	text = fixture_slurp(golden, &len);
	assert_non_null(text);
	root = json_tokener_parse(text);
	add_unknown(&results_jt, root);
	edited = json_object_to_json_string(root);
	assert_non_null(strstr(edited, "zz_unknown"));
	if (results_load_text(text, len, "golden", a, &e) ||
	    results_load_text(edited, strlen(edited), "edited", b, &e) ||
	    results_to_json_text(a, &ta, &la, &e) || results_to_json_text(b, &tb, &lb, &e))
		fail_msg("%s", e.msg);
	assert_int_equal(la, lb);
	assert_memory_equal(ta, tb, la);
	json_object_put(root);
	free(ta);
	free(tb);
	free(text);
	results_release(a);
	results_release(b);
	free(a);
	free(b);
}

/* ---- damaged files: the messages of today ------------------------------------------- */

struct msg_case {
	const char *name;
	const char *from, *to;		/* first occurrence in the golden file */
	const char *msg;		/* after "'F': " */
};

/* the keys between guest_thp and host_state of the full model's cells */
#define CELL_MID "\n      \"workload\":\"memset\",\n      \"variant\":null,\n      \"guest\":\"thpeval-full-g0\",\n      "

static const struct msg_case msg_cases[] = {
	{ "string as number", "\"accel\":\"kvm\"", "\"accel\":12",
	  "'accel' must be a string, not an integer: the file was edited or damaged" },
	{ "missing key", "\"image_id\":", "\"image_idx\":", "missing key 'image_id': the file was edited or damaged" },
	{ "nullable as bool", "\"finished_unix\":1795990000", "\"finished_unix\":true",
	  "'finished_unix' must be an integer or null, not a boolean: the file was edited or damaged" },
	{ "u32 out of range", "\"cpus\":16", "\"cpus\":4294967296", "'host.cpus' is out of range (0 to 4294967295)" },
	{ "too long", "\"image_id\":\"0123456789abcdef\"", "\"image_id\":\"0123456789abcdef0123\"",
	  "'image_id' is longer than 19 bytes or holds a NUL" },
	{ "thp value", "\"enabled\":\"madvise\"", "\"enabled\":7",
	  "'host.thp_before.enabled' must be a string, not an integer: the file was edited or damaged" },
	{ "optional setting", "\"boots\":4", "\"boots\":\"4\"",
	  "'settings.boots' must be an integer, not a string: the file was edited or damaged" },
	{ "optional setting null", "\"guests\":2", "\"guests\":null",
	  "'settings.guests' must be an integer, not null: the file was edited or damaged" },
	{ "ci target", "\"budget_s\":540.0", "\"budget_s\":\"540\"",
	  "'settings.budget_s' must be a number or null, not a string: the file was edited or damaged" },
	{ "sample", "300.10000000000002", "\"x\"",
	  "'cells[0].metrics.fault_ns_per_4k.samples[0]' must be a number, not a string: the file was edited or "
	  "damaged" },
	{ "boot id", "\"boot\":[\n            0,", "\"boot\":[\n            70000,",
	  "'cells[0].metrics.fault_ns_per_4k.boot[0]' is not a boot id (0 to 65535)" },
	{ "n", "\"n\":7", "\"n\":8", "'cells[0].metrics.fault_ns_per_4k.n' is 8 but there are 7 samples" },
	{ "failure", "\"rep 7: guest timed out", "7, \"",
	  "'cells[0].failures[0]' must be a string, not an integer: the file was edited or damaged" },
	{ "coverage", "\"host_huge_pct_samples\":{", "\"host_huge_pct_samples\":7,\"x\":{",
	  "'cells[0].coverage.host_huge_pct_samples' must be an object, not an integer: the file was edited or "
	  "damaged" },
	{ "guest mean", "\"host_huge_pct\":99.5", "\"host_huge_pct\":\"99.5\"",
	  "'guests[0].cells[0].host_huge_pct' must be a number or null, not a string: the file was edited or damaged" },
	{ "buddyinfo", "\"buddyinfo_before\":[\n        1000", "\"buddyinfo_before\":[\n        -1",
	  "'fragmentation[0].buddyinfo_before[0]' must be a non-negative integer" },
	{ "proactiveness", "\"compaction_proactiveness_before\":20", "\"compaction_proactiveness_before\":101",
	  "'fragmentation[0].compaction_proactiveness_before' is out of range (0 to 100)" },
	{ "later frag key", "\"pgsteal_direct\":824", "\"pgsteal_direct\":\"824\"",
	  "'fragmentation[0].pgsteal_direct' must be an integer, not a string: the file was edited or damaged" },
	{ "effect", "\"effects\":[\n    {", "\"effects\":[\n    7, {",
	  "'effects[0]' must be an object, not an integer" },
	{ "duplicate cell", "\"host_thp\":\"always\",\n      \"host_prefault\":\"immediate\",\n      \"guest_thp\":\"always\","
	  CELL_MID "\"host_state\":\"fragmented\",\n      \"balloon\":\"none\"",
	  "\"host_thp\":\"never\",\n      \"host_prefault\":\"ondemand\",\n      \"guest_thp\":\"never\","
	  CELL_MID "\"host_state\":\"fresh\",\n      \"balloon\":\"none\"",
	  "'cells[1]' repeats the cell never/never/memset" },
};

static void test_messages(void **state)
{
	char golden[4096], want[1024];
	struct results *r = malloc(sizeof(*r));
	size_t len, i;
	char *text;

	(void)state;
	fixture_path(golden, sizeof(golden), GOLDEN);
	text = fixture_slurp(golden, &len);
	assert_non_null(text);
	for (i = 0; i < sizeof(msg_cases) / sizeof(msg_cases[0]); i++) {
		const struct msg_case *c = &msg_cases[i];
		const char *at = strstr(text, c->from);
		struct err e = ERR_INIT;
		char *edited;

		if (!at)
			fail_msg("case '%s': '%s' not in the golden file", c->name, c->from);
		assert_true(asprintf(&edited, "%.*s%s%s", (int)(at - text), text, c->to, at + strlen(c->from)) > 0);
		if (!results_load_text(edited, strlen(edited), "F", r, &e))
			fail_msg("case '%s': loaded", c->name);
		snprintf(want, sizeof(want), "'F': %s", c->msg);
		if (strcmp(e.msg, want))
			fail_msg("case '%s': message '%s', not '%s'", c->name, e.msg, want);
		assert_int_equal(r->ncells, 0);
		free(edited);
	}
	free(r);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write_golden),
		cmocka_unit_test(test_load_golden),
		cmocka_unit_test(test_tables_round_trip),
		cmocka_unit_test(test_wrong_types),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_messages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
