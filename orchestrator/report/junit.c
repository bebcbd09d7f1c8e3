#include "orchestrator/report/render.h"

#include <errno.h>
#include <libxml/xmlwriter.h>
#include <stdlib.h>
#include <string.h>

#include "lib/textesc.h"
#include "orchestrator/analysis/compare.h"
#include "orchestrator/analysis/gate.h"

/* ---- junit (libxml2 xmlTextWriter) ------------------------------------------------ */

#define X(s) ((const xmlChar *)(s))

struct junit_case {
	char classname[CELL_LABEL_MAX + 16];
	char name[REC_KEY_MAX + 8];
	const char *fail_type;		/* NULL: passed */
	char message[600];
	char detail[600];
	const char *skipped;		/* reason, NULL if not skipped */
};

static void junit_metric_case(const struct report_input *in, size_t ci, const struct metric *m,
			      struct junit_case *jc)
{
	const struct cell *c = &in->res->cells[ci];
	const struct cmp_row *row = comparison_find(in->cmp, ci, m->name);
	char v[64], b[64];

	memset(jc, 0, sizeof(*jc));
	cell_label(c, jc->classname, sizeof(jc->classname));
	snprintf(jc->name, sizeof(jc->name), "%s", m->name);
	report_mean_ci(v, sizeof(v), m);
	snprintf(jc->detail, sizeof(jc->detail), "current %s (n=%zu)", v, m->n);
	if (!c->valid && (!row || !row->fails)) {
		jc->fail_type = "invalid";
		snprintf(jc->message, sizeof(jc->message), "cell invalid: %s", c->invalid_reason);
		return;
	}
	if (!row)
		return;
	if (row->verdict == CMP_REGRESSION) {
		report_summary_ci(b, sizeof(b), &row->base);
		jc->fail_type = "regression";
		snprintf(jc->message, sizeof(jc->message),
			 "%s regressed %+.1f%% [%+.1f, %+.1f] (baseline %s, current %s; Holm-adjusted p=%.3g over "
			 "%zu gated metrics; threshold %g%%, %s)", m->name, row->change_pct, row->change_lo_pct,
			 row->change_hi_pct, b, v, row->p_holm, in->cmp->ngated, in->cmp->threshold_pct,
			 metric_dir_name(row->dir));
	} else if (row->fails) {
		jc->fail_type = row->verdict == CMP_INVALID ? "invalid" : "gate";
		snprintf(jc->message, sizeof(jc->message), "%s: %s", m->name, row->why);
	} else if (row->verdict == CMP_INCONCLUSIVE) {
		snprintf(jc->message, sizeof(jc->message), "inconclusive: %+.1f%% [%+.1f, %+.1f] can neither "
			 "exclude nor confirm the %g%% threshold (more boots would decide it)", row->change_pct,
			 row->change_lo_pct, row->change_hi_pct, in->cmp->threshold_pct);
		jc->skipped = jc->message;
	} else if (row->verdict == CMP_UNTESTED && row->gated) {
		jc->skipped = row->why[0] ? row->why :
			      "fewer than 2 samples on a side: the regression gate could not test this metric";
	}
}

/*
 * Every string reaches the writer through these: XML 1.0 cannot carry most
 * control characters, escaped or not, nor bytes that are not UTF-8, and the
 * names and reasons come from results.json files and guests. They become
 * \xNN; \n and \t pass (the writer escapes them in attributes).
 */
static char *jw_esc(const char *s)
{
	size_t len = 4 * strlen(s) + 1;
	char *out = malloc(len);

	if (out)
		textesc(out, len, s, TEXTESC_KEEP_LINES);
	return out;
}

static int jw_attr(xmlTextWriterPtr w, const char *name, const char *value)
{
	char *v = jw_esc(value);
	int r = v ? xmlTextWriterWriteAttribute(w, X(name), X(v)) : -1;

	free(v);
	return r;
}

static int jw_string(xmlTextWriterPtr w, const char *text)
{
	char *v = jw_esc(text);
	int r = v ? xmlTextWriterWriteString(w, X(v)) : -1;

	free(v);
	return r;
}

static int jw_element(xmlTextWriterPtr w, const char *name, const char *text)
{
	char *v = jw_esc(text);
	int r = v ? xmlTextWriterWriteElement(w, X(name), X(v)) : -1;

	free(v);
	return r;
}

/*
 * The history gate, one case per metric kind: regression a failure of type
 * "regression"; suspect a skipped case with its reason (the run passes), a
 * failure of type "suspect" under --fail-on=suspect; no-history skipped.
 */
static void junit_gate_case(const struct gate_result *g, const struct gate_kind *k, struct junit_case *jc)
{
	memset(jc, 0, sizeof(*jc));
	snprintf(jc->classname, sizeof(jc->classname), "thpeval.history_gate");
	snprintf(jc->name, sizeof(jc->name), "%.*s", (int)sizeof(jc->name) - 1, k->cur.kind);
	snprintf(jc->detail, sizeof(jc->detail), "%zu earlier run(s), %u cell(s), %u boot(s)", k->nhist,
		 k->cur.ncells, k->cur.boots);
	switch (k->verdict) {
	case GATE_V_REGRESSION:
		jc->fail_type = "regression";
		snprintf(jc->message, sizeof(jc->message), "regression: the newest %d runs %+.1f%% against the %zu "
			 "before them (Holm-adjusted p=%.3g, threshold %g%%, between-run SD %.1f%%)", GATE_NEWEST,
			 k->change3_pct, k->nk_reg, k->holm_regression, g->threshold_pct, k->tau * 100.0);
		break;
	case GATE_V_SUSPECT:
		snprintf(jc->message, sizeof(jc->message), "suspect: this run %+.1f%% [%+.1f, %+.1f] against the last %zu "
			 "runs (Holm-adjusted p=%.3g, threshold %g%%); a regression if the next runs agree",
			 k->change_pct, k->lo_pct, k->hi_pct, k->nk, k->holm_suspect, g->threshold_pct);
		if (g->fail_on == GATE_FAIL_ON_SUSPECT)
			jc->fail_type = "suspect";
		else
			jc->skipped = jc->message;
		break;
	case GATE_V_NO_HISTORY:
		snprintf(jc->message, sizeof(jc->message), "no-history: %zu earlier run(s) of this host and setup, the "
			 "gate needs %d", k->nhist, GATE_MIN_K);
		jc->skipped = jc->message;
		break;
	case GATE_V_OK:
	case GATE_V__COUNT:
		break;
	}
}

static int jw_case(xmlTextWriterPtr w, const struct junit_case *jc)
{
	int r = 0;

	r |= xmlTextWriterStartElement(w, X("testcase")) < 0;
	r |= jw_attr(w, "classname", jc->classname) < 0;
	r |= jw_attr(w, "name", jc->name) < 0;
	r |= xmlTextWriterWriteAttribute(w, X("time"), X("0")) < 0;
	if (jc->fail_type) {
		r |= xmlTextWriterStartElement(w, X("failure")) < 0;
		r |= xmlTextWriterWriteAttribute(w, X("type"), X(jc->fail_type)) < 0;
		r |= jw_attr(w, "message", jc->message) < 0;
		r |= jw_string(w, jc->message) < 0;
		r |= xmlTextWriterEndElement(w) < 0;
	} else if (jc->skipped) {
		r |= xmlTextWriterStartElement(w, X("skipped")) < 0;
		r |= jw_attr(w, "message", jc->skipped) < 0;
		r |= xmlTextWriterEndElement(w) < 0;
	}
	if (jc->detail[0])
		r |= jw_element(w, "system-out", jc->detail) < 0;
	r |= xmlTextWriterEndElement(w) < 0;
	return r ? -EIO : 0;
}

static int jw_property(xmlTextWriterPtr w, const char *name, const char *value)
{
	int r = 0;

	r |= xmlTextWriterStartElement(w, X("property")) < 0;
	r |= jw_attr(w, "name", name) < 0;
	r |= jw_attr(w, "value", value) < 0;
	r |= xmlTextWriterEndElement(w) < 0;
	return r ? -EIO : 0;
}

/* the cases, in order: the run itself, then per cell "valid" and each metric */
static int junit_cases(const struct report_input *in, struct junit_case **out, size_t *n)
{
	const struct results *r = in->res;
	struct junit_case *jc;
	size_t i, j, cap = 1, k = 0;

	for (i = 0; i < r->ncells; i++)
		cap += 1 + r->cells[i].nmetrics + 2;
	cap += in->gate ? in->gate->n : 0;
	jc = calloc(cap, sizeof(*jc));
	if (!jc)
		return -ENOMEM;
	snprintf(jc[k].classname, sizeof(jc[k].classname), "thpeval");
	snprintf(jc[k].name, sizeof(jc[k].name), "run");
	snprintf(jc[k].detail, sizeof(jc[k].detail), "status %s", r->status);
	if (strcmp(r->status, "complete")) {
		jc[k].fail_type = "run";
		snprintf(jc[k].message, sizeof(jc[k].message), "run %s%s%s", r->status, r->error[0] ? ": " : "",
			 r->error);
	}
	k++;
	for (i = 0; in->gate && i < in->gate->n; i++)
		junit_gate_case(in->gate, &in->gate->kinds[i], &jc[k++]);
	for (i = 0; i < r->ncells; i++) {
		const struct cell *c = &r->cells[i];

		cell_label(c, jc[k].classname, sizeof(jc[k].classname));
		snprintf(jc[k].name, sizeof(jc[k].name), "valid");
		snprintf(jc[k].detail, sizeof(jc[k].detail), "host huge %.1f%%, guest huge %.1f%%, %u reps ok, %u failed",
			 c->host_cov.n ? c->host_cov.s.mean : 0.0, c->guest_cov.n ? c->guest_cov.s.mean : 0.0,
			 c->reps_ok, c->reps_failed);
		if (!c->valid) {
			jc[k].fail_type = "invalid";
			snprintf(jc[k].message, sizeof(jc[k].message), "%s", c->invalid_reason);
		}
		k++;
		for (j = 0; j < c->nmetrics + 2; j++) {
			const struct metric *m = report_metric_at(c, j);

			if (m->n == 0)
				continue;
			junit_metric_case(in, i, m, &jc[k++]);
		}
	}
	*out = jc;
	*n = k;
	return 0;
}

int report_junit(const struct report_input *in, FILE *out, struct err *e)
{
	const struct results *r = in->res;
	struct junit_case *jc = NULL;
	xmlBufferPtr buf = NULL;
	xmlTextWriterPtr w = NULL;
	char tests[24], fails[24], skips[24], when[32];
	size_t n = 0, i, nf = 0, ns = 0;
	int bad = 0, rc = 0;

	if (junit_cases(in, &jc, &n))
		return err_set(e, -ENOMEM, "out of memory rendering junit");
	for (i = 0; i < n; i++) {
		nf += jc[i].fail_type != NULL;
		ns += !jc[i].fail_type && jc[i].skipped;
	}
	snprintf(tests, sizeof(tests), "%zu", n);
	snprintf(fails, sizeof(fails), "%zu", nf);
	snprintf(skips, sizeof(skips), "%zu", ns);
	report_fmt_time(when, sizeof(when), r->started);
	buf = xmlBufferCreate();
	if (buf)
		w = xmlNewTextWriterMemory(buf, 0);
	if (!w) {
		rc = err_set(e, -ENOMEM, "cannot create the junit xml writer");
		goto out;
	}
	bad |= xmlTextWriterSetIndent(w, 1) < 0;
	bad |= xmlTextWriterStartDocument(w, NULL, "UTF-8", NULL) < 0;
	bad |= xmlTextWriterStartElement(w, X("testsuites")) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("name"), X("thpeval")) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("tests"), X(tests)) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("failures"), X(fails)) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("errors"), X("0")) < 0;
	bad |= xmlTextWriterStartElement(w, X("testsuite")) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("name"), X("thpeval")) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("tests"), X(tests)) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("failures"), X(fails)) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("errors"), X("0")) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("skipped"), X(skips)) < 0;
	bad |= xmlTextWriterWriteAttribute(w, X("timestamp"), X(when)) < 0;
	bad |= xmlTextWriterStartElement(w, X("properties")) < 0;
	bad |= jw_property(w, "thpeval_version", r->thpeval_version) < 0;
	bad |= jw_property(w, "status", r->status) < 0;
	bad |= jw_property(w, "accel", r->accel) < 0;
	bad |= jw_property(w, "host_kernel", r->host.kernel) < 0;
	bad |= jw_property(w, "cpu_model", r->host.cpu_model) < 0;
	bad |= jw_property(w, "hypervisor_version", r->hypervisor_version) < 0;
	bad |= jw_property(w, "libvirt_version", r->libvirt_version) < 0;
	bad |= jw_property(w, "image_id", r->image_id) < 0;
	if (in->cmp)
		bad |= jw_property(w, "baseline", in->base_name ? in->base_name : "") < 0;
	bad |= xmlTextWriterEndElement(w) < 0;
	for (i = 0; i < n && !bad; i++)
		bad |= jw_case(w, &jc[i]) < 0;
	bad |= xmlTextWriterEndDocument(w) < 0;
	xmlFreeTextWriter(w);
	w = NULL;
	if (bad) {
		rc = err_set(e, -EIO, "cannot render junit xml (a string that is not UTF-8?)");
		goto out;
	}
	fwrite(xmlBufferContent(buf), 1, (size_t)xmlBufferLength(buf), out);
out:
	if (w)
		xmlFreeTextWriter(w);
	if (buf)
		xmlBufferFree(buf);
	free(jc);
	return rc;
}
