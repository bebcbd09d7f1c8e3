/*
 * results_json_effects: the analysis' results in results.json (the effects,
 * the variance components, the in-run A/B comparison) as field tables. They
 * are written and, read back, only checked for their types: the analysis
 * recomputes them. A part of results_json; never prints, never exits.
 */
#ifndef THPEVAL_ORCH_RESULTS_JSON_EFFECTS_H
#define THPEVAL_ORCH_RESULTS_JSON_EFFECTS_H

#include <json-c/json.h>

#include "orchestrator/model/jtable.h"

/* an element of "effects" and of "variance" */
extern const struct jt_table effect_jt;
extern const struct jt_table variance_jt;

/* an array of struct effects' elements (f->off, count at f->count); read: only checked */
json_object *w_effects(const void *base, const struct jt_field *f);
int l_effects(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f);
/* "ab": results->ab as an object, null without one; read: only checked */
json_object *w_ab(const void *base, const struct jt_field *f);
json_object *w_ksm_fx(const void *base, const struct jt_field *f);
int l_ab(const struct jt_ctx *c, json_object *v, const char *at, void *base, const struct jt_field *f);

#endif
