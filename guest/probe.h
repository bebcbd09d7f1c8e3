/*
 * probe: the guest's side of a host recovery arm. After the series, one
 * buffer is faulted and held, and the memset pointer chase over it is timed
 * at a fixed period (plan probe=N, probe_period=MS): one info record per pass
 * (event=probe), until N passes or until the host writes "stop" to the
 * port, so the host can align the access time with its coverage series.
 * A "touch" from the host in between faults and frees one fresh buffer of
 * most of the guest's free memory (event=probe_touch: bytes, touch_ms).
 * Never prints; records only through the emitter.
 */
#ifndef THPEVAL_GUEST_PROBE_H
#define THPEVAL_GUEST_PROBE_H

#include <stdbool.h>

#include "emit.h"
#include "lib/err.h"
#include "plan.h"

#define PROBE_ACCESSES_MAX 200000ull	/* per pass: a fraction of a second under TCG */

struct probe_env {
	const char *root;	/* "" on the guest */
	bool set_thp;		/* the runner owns the guest THP knob */
	int stop_fd;		/* the port, read for "stop"; -1: run all N passes */
};

/* the guest THP setting the passes run under: the plan's first other than never */
enum guest_thp probe_guest_thp(const struct plan *p);
/*
 * Run the passes when p->probe > 0: an info record event=probe_start (with
 * the buffer's guest_huge_pct where smaps has it), one
 * event=probe per pass (pass, t_ms since the start, access_ns per access),
 * then event=probe_end. 0, or a negative errno (e set) when a record could
 * not be sent; a buffer that cannot be had is said in probe_end (skipped).
 */
int probe_run(const struct probe_env *env, const struct plan *p, struct emitter *em, struct err *e);

#endif
