/*
 * results_json_cell: the cell's object in results.json (its metrics with
 * their samples and summaries, coverage, failures, left-out boots) as field
 * tables, and the check that a loaded cell's samples are in range. A part of
 * results_json; never prints, never exits.
 */
#ifndef THPEVAL_ORCH_RESULTS_JSON_CELL_H
#define THPEVAL_ORCH_RESULTS_JSON_CELL_H

#include <json-c/json.h>

#include "orchestrator/model/jtable.h"

/* a cell of "cells": loaded cells go into the results (results_cell_key) */
extern const struct jt_table cell_jt;

#endif
