#include "orchestrator/cmd/histgate.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/history/gatedb.h"
#include "orchestrator/history/histdb.h"
#include "orchestrator/history/history.h"
#include "orchestrator/report/gatetext.h"

/* the per-cell A/B against the newest earlier run, labelled as what it is */
static int print_ab(const char *db, const struct results *cur, const struct compare_opts *co, bool nohistory,
		    FILE *out, struct err *e)
{
	struct results *base = malloc(sizeof(*base));
	struct history_run_ref ref;
	struct comparison cmp;
	int rc;

	if (!base)
		return err_set(e, -ENOMEM, "out of memory");
	rc = history_baseline_last(db, cur, HISTORY_SAME_SETUP, &ref, base, e);
	if (rc == -ENOENT) {
		err_clear(e);
		fprintf(out, "no earlier complete run of this host and setup: this run starts the history\n");
		free(base);
		return 0;
	}
	if (rc) {
		free(base);
		return rc;
	}
	results_finish(base, base->settings.min_coverage_pct > 0 ? base->settings.min_coverage_pct : 90.0);
	if (compare_results(base, cur, co, &cmp, e)) {
		/* no cell in common: nothing to show, and nothing the history gate needs */
		fprintf(out, "A/B against the newest run %s: %s\n", ref.desc, e->msg);
		err_clear(e);
	} else {
		fprintf(out, "\n%s against the newest earlier run, %s, per cell:\n", nohistory ?
			"no history yet, so the A/B comparison (not the history gate; it does not fail the run)" :
			"diagnostics (the history gate above decides): the A/B comparison", ref.desc);
		compare_print(&cmp, base, cur, out);
		comparison_release(&cmp);
	}
	results_release(base);
	free(base);
	return 0;
}

int histgate_run(const char *db, const struct results *cur, const struct gate_opts *go,
		 const struct compare_opts *co, struct gate_result *g, FILE *out, struct err *e)
{
	char shown[PATH_MAX], where[PATH_MAX + 96];

	if (history_gate(db, cur, NULL, go, g, NULL, e))
		return e->code;
	histdb_redact(db, shown, sizeof(shown));
	snprintf(where, sizeof(where), "'%s', host %s", shown, cur->host.name[0] ? cur->host.name : "(unnamed)");
	fputc('\n', out);
	if (g->n && g->nnohistory == g->n)
		fprintf(out, "history gate: no-history: fewer than %d earlier complete runs of this host and setup "
			"in %s for any metric kind\n", GATE_MIN_K, where);
	gate_print(g, where, out);
	return print_ab(db, cur, co, g->nnohistory == g->n, out, e);
}
