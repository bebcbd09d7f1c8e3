/*
 * ksmfx: the effect of KSM (--ksm=off,on): each primary metric of each guest
 * cell of host state "ksm" against the same cell of the fresh host (KSM
 * off), on the log scale with a 95% t interval over boots: paired by round
 * where 2 or more rounds ran both arms, else Welch over each arm's boot
 * means; Holm over the rows. Pure: reads the results model, writes only
 * results->ksm_fx; never prints.
 */
#ifndef THPEVAL_ORCH_ANALYSIS_KSMFX_H
#define THPEVAL_ORCH_ANALYSIS_KSMFX_H

#include "lib/err.h"
#include "orchestrator/model/results.h"

/* the cells' host state in the KSM arm */
#define KSM_HOST_STATE "ksm"

/* r->ksm_fx from r (allocated on first use, owned by r); freed when r has no cell of the on arm */
int ksmfx_attach(struct results *r, struct err *e);

#endif
