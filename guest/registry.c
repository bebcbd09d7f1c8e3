#include "registry.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "clearorder.h"
#include "color.h"
#include "dd.h"
#include "execwl.h"
#include "forkwl.h"
#include "harness.h"
#include "hzp.h"
#include "kcompile.h"
#include "lib/wltraits.h"
#include "memset.h"
#include "pgbench.h"
#include "redis.h"
#include "tlb.h"

static const struct workload *const workloads[] = {
	&wl_memset,
	&wl_tlb,
	&wl_hzp,
	&wl_clearorder,
	&wl_color,
	&wl_dd,
	&wl_kcompile,
	&wl_fork,
	&wl_exec,
	&wl_redis,
	&wl_pgbench,
};

const struct workload *workload_at(size_t i)
{
	return i < sizeof(workloads) / sizeof(workloads[0]) ? workloads[i] : NULL;
}

const struct workload *workload_find(const char *name)
{
	const struct workload *w;
	size_t i;

	for (i = 0; (w = workload_at(i)); i++)
		if (!strcmp(w->name, name))
			return w;
	return NULL;
}

static const char *const ptype_names[] = {
	[WL_P_SIZE] = "size",
	[WL_P_U64] = "integer",
	[WL_P_BOOL] = "0|1",
	[WL_P_KEEP01] = "keep|0|1",
	[WL_P_WORD] = "text",
};
_Static_assert(sizeof(ptype_names) / sizeof(ptype_names[0]) == WL_P__COUNT,
	       "ptype_names out of sync with enum wl_ptype");

/* the "type" of a parameter in `workloads --format=json` */
static const char *const ptype_json[] = {
	[WL_P_SIZE] = "size",
	[WL_P_U64] = "u64",
	[WL_P_BOOL] = "bool",
	[WL_P_KEEP01] = "keep01",
	[WL_P_WORD] = "word",
};
_Static_assert(sizeof(ptype_json) / sizeof(ptype_json[0]) == WL_P__COUNT,
	       "ptype_json out of sync with enum wl_ptype");

int registry_workload_main(int argc, char *const argv[], const struct wl_env *env, int out_fd,
			   struct err *e)
{
	return harness_run(argc >= 1 ? workload_find(argv[0]) : NULL, argc, argv, env, out_fd, e);
}

/* what makes a cell of this workload valid (lib/wltraits.c, the orchestrator's rule too) */
static void list_evidence(FILE *f, const char *name)
{
	const struct wl_traits *t = wltraits_find(name);
	const struct wl_rule *r;
	char text[256];

	if (!t)
		return;
	fprintf(f, "  validity evidence (first matching variant):\n");
	for (r = t->rules; r->variant; r++) {
		wltraits_describe(r, text, sizeof(text));
		fprintf(f, "    %-24s %s\n", r->variant, text);
	}
	if (t->primary && t->primary[0]) {
		size_t i;

		fprintf(f, "  gated by default (thpeval compare):");
		for (i = 0; t->primary[i]; i++)
			fprintf(f, "%s %s", i ? "," : "", t->primary[i]);
		fputc('\n', f);
	}
}

void registry_list(FILE *f)
{
	const struct workload *w;
	const struct wl_param *tabs[2], *p;
	const struct wl_metric *m;
	char opt[64];
	size_t i, t;

	for (i = 0; (w = workload_at(i)); i++) {
		fprintf(f, "%s\n    %s\n  parameters:\n", w->name, w->description);
		tabs[0] = w->params;
		tabs[1] = wl_common_params;
		for (t = 0; t < 2; t++) {
			for (p = tabs[t]; p && p->name; p++) {
				snprintf(opt, sizeof(opt), "--%s=%s", p->name, p->def);
				fprintf(f, "    %-20s %-8s %s\n", opt, ptype_names[p->type], p->help);
			}
		}
		fprintf(f, "    %-20s %-8s copied into every record (up to %d)\n",
			"--label=KEY=VALUE", "text", WL_MAX_LABELS);
		fprintf(f, "  result fields:\n");
		for (m = wl_common_fields; m->key; m++)
			fprintf(f, "    %-24s %s\n", m->key, m->help);
		for (m = w->metrics; m && m->key; m++)
			fprintf(f, "    %-24s %s\n", m->key, m->help);
		list_evidence(f, w->name);
	}
}

/* length of the well-formed UTF-8 sequence at s (1-4), or 0 */
static size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t c;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;	/* overlong, out of range or a surrogate */
	return n;
}

void registry_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t n;

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		default:
			if (*p < 0x20) {
				fprintf(f, "\\u%04x", *p);
			} else if (*p < 0x80) {
				fputc(*p, f);
			} else if ((n = utf8_len(p))) {
				fwrite(p, 1, n, f);
				p += n - 1;
			} else {
				fputs("\\ufffd", f);	/* not UTF-8: the replacement character */
			}
		}
	}
	fputc('"', f);
}

static void json_param(FILE *f, const struct wl_param *p, bool common, bool last)
{
	fputs("        {\"name\": ", f);
	registry_json_str(f, p->name);
	fprintf(f, ", \"type\": \"%s\", \"default\": ", ptype_json[p->type]);
	registry_json_str(f, p->def);
	if (p->type == WL_P_SIZE || p->type == WL_P_U64)
		fprintf(f, ", \"min\": %" PRIu64 ", \"max\": %" PRIu64, p->min, p->max);
	if (p->type == WL_P_WORD)
		fprintf(f, ", \"max_length\": %" PRIu64, p->max - 1);
	fputs(", \"help\": ", f);
	registry_json_str(f, p->help);
	fprintf(f, ", \"common\": %s}%s\n", common ? "true" : "false", last ? "" : ",");
}

static void json_metric(FILE *f, const struct wl_metric *m, bool common, bool last)
{
	fputs("        {\"key\": ", f);
	registry_json_str(f, m->key);
	fputs(", \"help\": ", f);
	registry_json_str(f, m->help);
	fprintf(f, ", \"common\": %s}%s\n", common ? "true" : "false", last ? "" : ",");
}

static void json_evidence(FILE *f, const char *name)
{
	const struct wl_traits *t = wltraits_find(name);
	const struct wl_rule *r;
	char text[256];

	size_t i;

	fputs("      \"primary\": [", f);
	for (i = 0; t && t->primary && t->primary[i]; i++) {
		fputs(i ? ", " : "", f);
		registry_json_str(f, t->primary[i]);
	}
	fputs("],\n", f);
	if (!t || !t->rules->variant) {
		fputs("      \"evidence\": []\n", f);
		return;
	}
	fputs("      \"evidence\": [\n", f);
	for (r = t->rules; r->variant; r++) {
		wltraits_describe(r, text, sizeof(text));
		fputs("        {\"variant\": ", f);
		registry_json_str(f, r->variant);
		fputs(", \"rule\": ", f);
		registry_json_str(f, text);
		fprintf(f, "}%s\n", r[1].variant ? "," : "");
	}
	fputs("      ]\n", f);
}

void registry_list_json(FILE *f)
{
	const struct workload *w;
	const struct wl_param *p;
	const struct wl_metric *m;
	size_t i;

	fprintf(f, "{\n  \"schema_version\": %d,\n  \"workloads\": [\n", REGISTRY_LIST_SCHEMA);
	for (i = 0; (w = workload_at(i)); i++) {
		fputs("    {\n      \"name\": ", f);
		registry_json_str(f, w->name);
		fputs(",\n      \"description\": ", f);
		registry_json_str(f, w->description);
		fputs(",\n      \"params\": [\n", f);
		for (p = w->params; p && p->name; p++)
			json_param(f, p, false, false);
		for (p = wl_common_params; p->name; p++)
			json_param(f, p, true, !p[1].name);
		fprintf(f, "      ],\n      \"labels\": {\"max\": %d, \"help\": ", WL_MAX_LABELS);
		registry_json_str(f, "copied into every record");
		fputs("},\n      \"metrics\": [\n", f);
		for (m = wl_common_fields; m->key; m++)
			json_metric(f, m, true, !m[1].key && !(w->metrics && w->metrics->key));
		for (m = w->metrics; m && m->key; m++)
			json_metric(f, m, false, !m[1].key);
		fputs("      ],\n", f);
		json_evidence(f, w->name);
		fprintf(f, "    }%s\n", workload_at(i + 1) ? "," : "");
	}
	fputs("  ]\n}\n", f);
}
