/*
 * tests for orchestrator/run/workloads.c: what the guest program offers, read
 * from `thpeval-guest workloads --format=json` (strict, bounded: each bad
 * document refused with its one-line reason), through fake guest programs
 * (shell scripts) and the real bin/thpeval-guest when it is built; and the
 * --workloads= selection against that list.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/argv.h"
#include "orchestrator/run/workloads.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* a parameter, a workload of the document, the document around workloads */
#define P(name, type) "{\"name\": \"" name "\", \"type\": \"" type "\", \"default\": \"1\", \"help\": \"h\"}"
#define WL(name, params) \
	"{\"name\": \"" name "\", \"description\": \"d \\\"q\\\" \\\\ \\n\", \"params\": [" params "], " \
	"\"metrics\": [{\"key\": \"k\", \"help\": \"h\"}], \"evidence\": []}"
#define DOC(wls) "{\"schema_version\": 1, \"workloads\": [" wls "]}"
#define MEMSET WL("memset", P("size", "size") "," P("accesses", "u64") "," P("madvise", "bool") "," \
			    P("populate-read", "bool") "," P("seed", "u64"))
#define KCOMPILE WL("kcompile", P("src", "word") "," P("config", "word"))
#define HZP WL("hzp", P("zero-page", "keep01") "," P("madvise", "bool"))

struct parse_case {
	const char *name;
	const char *doc;
	size_t max;		/* 0: WORKLOADS_MAX */
	const char *why;	/* NULL: accepted; else in the message */
	size_t n;		/* when accepted */
};

static const struct parse_case parse_cases[] = {
	{ "three workloads", DOC(MEMSET "," KCOMPILE "," HZP), 0, NULL, 3 },
	{ "white space around", "\n  " DOC(MEMSET) " \n\n", 0, NULL, 1 },
	{ "extra members ignored", "{\"schema_version\": 1, \"later\": {\"x\": [1]}, \"workloads\": ["
	  "{\"name\": \"w\", \"description\": \"\", \"params\": [], \"metrics\": [], \"new\": 1}]}", 0, NULL, 1 },
	{ "a workload without parameters", DOC(WL("w", "")), 0, NULL, 1 },
	{ "name of 31 characters", DOC(WL("abcdefghijklmnopqrstuvwxyz01234", "")), 0, NULL, 1 },
	{ "as many as max", DOC(MEMSET "," HZP), 2, NULL, 2 },

	{ "empty", "", 0, "printed nothing", 0 },
	{ "white space only", " \n\t\n", 0, "printed nothing", 0 },
	{ "the text listing", "memset\n    fault phase\n  parameters:\n    --size=256M\n", 0,
	  "did not print a JSON object: is it a thpeval-guest of this version?", 0 },
	{ "truncated", "{\"schema_version\": 1, \"workloads\": [" MEMSET, 0, "printed invalid JSON: ", 0 },
	{ "trailing comma", DOC(MEMSET ","), 0, "printed invalid JSON: ", 0 },
	{ "single-quoted name", "{'schema_version': 1, \"workloads\": [" MEMSET "]}", 0,
	  "printed invalid JSON: a single quote (byte 1)", 0 },
	{ "single-quoted value", DOC(WL("w", "{\"name\": 'size'}")), 0, "printed invalid JSON: a single quote", 0 },
	{ "NaN", "{\"schema_version\": NaN, \"workloads\": []}", 0,
	  "printed invalid JSON: an unexpected character (byte 19)", 0 },
	{ "Infinity", "{\"schema_version\": 1, \"x\": -Infinity, \"workloads\": [" MEMSET "]}", 0,
	  "printed invalid JSON: an unexpected character", 0 },
	{ "nan", "{\"schema_version\": 1, \"x\": nan, \"workloads\": [" MEMSET "]}", 0,
	  "printed invalid JSON: a word that is not true, false or null", 0 },
	{ "unquoted name", "{schema_version: 1}", 0, "printed invalid JSON: a word that is not true, false or null", 0 },
	{ "a number", "1", 0, "did not print a JSON object: is it", 0 },
	{ "1.", "{\"schema_version\": 1., \"workloads\": [" MEMSET "]}", 0,
	  "printed invalid JSON: a number without digits after its '.' (byte 20)", 0 },
	{ "raw newline in a string", DOC(WL("w\nx", "")), 0, "printed invalid JSON: a control character in a string", 0 },
	{ "raw tab in a string", "{\"schema_version\": 1, \"x\": \"a\tb\", \"workloads\": [" MEMSET "]}", 0,
	  "printed invalid JSON: a control character in a string (byte 29)", 0 },
	{ "comment", "{\"schema_version\": 1, /* c */ \"workloads\": [" MEMSET "]}", 0,
	  "printed invalid JSON: an unexpected character", 0 },
	{ "invalid UTF-8 in a string", "{\"schema_version\": 1, \"x\": \"\xff\", \"workloads\": [" MEMSET "]}", 0,
	  "printed invalid JSON: invalid utf-8 string", 0 },
	{ "repeated key", "{\"schema_version\": 1, \"workloads\": [], \"workloads\": [" MEMSET "]}", 0,
	  "printed invalid JSON: an object repeats the key 'workloads' (byte 39)", 0 },
	{ "repeated key in a workload", DOC(WL("w", "{\"name\": \"a\", \"name\": \"b\"}")), 0,
	  "printed invalid JSON: an object repeats the key 'name'", 0 },
	{ "lone surrogate", "{\"schema_version\": 1, \"x\": \"\\udc00\", \"workloads\": [" MEMSET "]}", 0,
	  "printed invalid JSON: a lone UTF-16 surrogate in a string", 0 },
	{ "surrogate pair", "{\"schema_version\": 1, \"x\": \"\\ud83d\\ude00\", \"workloads\": [" MEMSET "]}", 0,
	  NULL, 1 },
	{ "true, false, null, numbers", "{\"schema_version\": 1, \"x\": [true, false, null, -1.5e3, 0, 2E-2], "
	  "\"workloads\": [" MEMSET "]}", 0, NULL, 1 },
	{ "two documents", DOC(MEMSET) DOC(MEMSET), 0, "printed ", 0 },
	{ "text after the document", DOC(MEMSET) "\nmemset\n", 0, "printed ", 0 },
	{ "nested too deep", "{\"schema_version\": 1, \"workloads\": [[[[[[[[[[[[1]]]]]]]]]]]]}", 0,
	  "printed invalid JSON: nesting too deep", 0 },
	{ "not an object", "[" MEMSET "]", 0, "did not print a JSON object: is it", 0 },
	{ "no schema_version", "{\"workloads\": [" MEMSET "]}", 0,
	  "the document has no \"schema_version\" int", 0 },
	{ "schema_version 2", "{\"schema_version\": 2, \"workloads\": [" MEMSET "]}", 0,
	  "schema_version 2, this thpeval reads 1: use the guest program built with it", 0 },
	{ "schema_version as text", "{\"schema_version\": \"1\", \"workloads\": [" MEMSET "]}", 0,
	  "has no \"schema_version\" int", 0 },
	{ "no workloads", "{\"schema_version\": 1}", 0, "the document has no \"workloads\" array", 0 },
	{ "workloads an object", "{\"schema_version\": 1, \"workloads\": {}}", 0,
	  "has no \"workloads\" array", 0 },
	{ "no workload", DOC(""), 0, "listed no workload", 0 },
	{ "more than max", DOC(MEMSET "," KCOMPILE "," HZP), 2, "offers more than 2 workloads", 0 },
	{ "workload a string", DOC("\"memset\""), 0, "workload 1 is not an object", 0 },
	{ "workload without a name", DOC("{\"description\": \"d\", \"params\": [], \"metrics\": []}"), 0,
	  "workload 1 has no \"name\" string", 0 },
	{ "workload name a number", DOC("{\"name\": 7, \"description\": \"d\", \"params\": [], \"metrics\": []}"),
	  0, "workload 1 has no \"name\" string", 0 },
	{ "empty workload name", DOC(MEMSET "," WL("", "")), 0, "workload 2 has an empty name", 0 },
	{ "workload name of 32 characters", DOC(WL("abcdefghijklmnopqrstuvwxyz012345", "")), 0,
	  "workload 1 has a name longer than 31 characters: 'abcdefghijklmnopqrstuvwxyz012345'", 0 },
	{ "long workload name, shortened", DOC(WL("abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz", "")), 0,
	  "characters: 'abcdefghijklmnopqrstuvwxyzabcdefghijklmn...'", 0 },
	{ "upper case workload name", DOC(WL("Memset", "")), 0,
	  "workload 1 has a bad name 'Memset': expected [a-z0-9_]", 0 },
	{ "dash in a workload name", DOC(WL("mem-set", "")), 0, "bad name 'mem-set': expected [a-z0-9_]", 0 },
	{ "control characters in a name", DOC(WL("a\\nb\\u0001c", "")), 0, "bad name 'a?b?c'", 0 },
	{ "NUL escaped in a name", DOC(WL("ab\\u0000cd", "")), 0, "workload 1 has a bad name 'ab'", 0 },
	{ "workload listed twice", DOC(MEMSET "," HZP "," MEMSET), 0, "workload 'memset' is listed twice", 0 },
	{ "no description", DOC("{\"name\": \"w\", \"params\": [], \"metrics\": []}"), 0,
	  "workload 'w' has no \"description\" string", 0 },
	{ "no metrics", DOC("{\"name\": \"w\", \"description\": \"\", \"params\": []}"), 0,
	  "workload 'w' has no \"metrics\" array", 0 },
	{ "no params", DOC("{\"name\": \"w\", \"description\": \"\", \"metrics\": []}"), 0,
	  "workload 'w' has no \"params\" array", 0 },
	{ "params an object", DOC("{\"name\": \"w\", \"description\": \"\", \"metrics\": [], \"params\": {}}"),
	  0, "workload 'w' has no \"params\" array", 0 },
	{ "parameter a string", DOC(WL("w", P("size", "size") ", \"--accesses=1\"")), 0,
	  "parameter 2 of workload 'w' is not an object", 0 },
	{ "parameter without a name", DOC(WL("w", "{\"type\": \"u64\", \"default\": \"1\"}")), 0,
	  "parameter 1 of workload 'w' has no \"name\" string", 0 },
	{ "parameter name with '='", DOC(WL("w", P("size=1", "size"))), 0,
	  "parameter 1 of workload 'w' has a bad name 'size=1': expected [a-z0-9_-]", 0 },
	{ "parameter name of 32 characters", DOC(WL("w", P("abcdefghijklmnopqrstuvwxyz-12345", "u64"))), 0,
	  "parameter 1 of workload 'w' has a name longer than 31 characters", 0 },
	{ "parameter listed twice", DOC(WL("w", P("size", "size") "," P("size", "u64"))), 0,
	  "parameter 'size' of workload 'w' is listed twice", 0 },
	{ "parameter of an unknown type", DOC(WL("w", P("size", "float"))), 0,
	  "parameter 'size' of workload 'w' has an unknown type 'float'", 0 },
	{ "parameter type missing", DOC(WL("w", "{\"name\": \"size\", \"default\": \"1\"}")), 0,
	  "parameter 'size' of workload 'w' has no \"type\" string", 0 },
	{ "parameter default a number", DOC(WL("w", "{\"name\": \"size\", \"type\": \"u64\", \"default\": 1}")),
	  0, "parameter 'size' of workload 'w' has no \"default\" string", 0 },
	{ "parameter default of 64 characters",
	  DOC(WL("w", "{\"name\": \"dir\", \"type\": \"word\", \"default\": "
		 "\"/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}")),
	  0, "parameter 'dir' of workload 'w' has a default longer than 63 characters", 0 },
};

static void check_refused(const char *name, int r, const struct err *e, const char *prog, const char *why)
{
	char head[128];

	if (r == 0)
		fail_msg("%s: accepted, expected '%s'", name, why);
	assert_int_equal(e->code, r);
	if (!strstr(e->msg, why))
		fail_msg("%s: message '%s' lacks '%s'", name, e->msg, why);
	snprintf(head, sizeof(head), "'%s", prog);
	if (!strstr(e->msg, head))
		fail_msg("%s: message '%s' does not name '%s'", name, e->msg, prog);
	if (strchr(e->msg, '\n'))
		fail_msg("%s: message has a newline: '%s'", name, e->msg);
}

static void test_parse(void **state)
{
	const struct parse_case *c = *state;
	struct workload_info wl[WORKLOADS_MAX];
	struct err e = ERR_INIT;
	size_t n = 99;
	int r;

	r = workloads_parse_json("fake-guest", c->doc, strlen(c->doc), wl, c->max ? c->max : WORKLOADS_MAX, &n, &e);
	if (c->why) {
		check_refused(c->name, r, &e, "fake-guest", c->why);
		assert_int_equal(n, 0);
		return;
	}
	if (r)
		fail_msg("%s: refused: %s", c->name, e.msg);
	assert_int_equal(n, c->n);
}

/* has_* from the parameter list, the list in its order */
static void test_flags(void **state)
{
	const char *doc = DOC(MEMSET "," KCOMPILE "," HZP "," WL("color", P("loads", "u64")));
	struct workload_info wl[WORKLOADS_MAX];
	struct err e = ERR_INIT;
	static const struct {
		const char *name;
		bool size, accesses, madvise, src;
		size_t nparams;
		const char *first, *last;
	} want[] = {
		{ "memset", true, true, true, false, 5, "size", "seed" },
		{ "kcompile", false, false, false, true, 2, "src", "config" },
		{ "hzp", false, false, true, false, 2, "zero-page", "madvise" },
		{ "color", false, false, false, false, 1, "loads", "loads" },
	};
	size_t n, i;

	(void)state;
	assert_int_equal(workloads_parse_json("g", doc, strlen(doc), wl, WORKLOADS_MAX, &n, &e), 0);
	assert_int_equal(n, N(want));
	for (i = 0; i < n; i++) {
		assert_string_equal(wl[i].name, want[i].name);
		assert_int_equal(wl[i].has_size, want[i].size);
		assert_int_equal(wl[i].has_accesses, want[i].accesses);
		assert_int_equal(wl[i].has_madvise, want[i].madvise);
		assert_int_equal(wl[i].has_src, want[i].src);
		assert_int_equal(wl[i].nparams, want[i].nparams);
		assert_string_equal(wl[i].params[0], want[i].first);
		assert_string_equal(wl[i].params[wl[i].nparams - 1], want[i].last);
		assert_true(workload_has_param(&wl[i], want[i].first));
	}
	assert_true(workload_has_param(&wl[0], "populate-read"));
	assert_false(workload_has_param(&wl[0], "populate"));
	assert_false(workload_has_param(&wl[0], "zero-page"));
	assert_ptr_equal(workload_find(wl, n, "hzp"), &wl[2]);
	assert_null(workload_find(wl, n, "tlb"));
}

/* documents built to a size: more than WORKLOADS_MAX workloads, more parameters, too many bytes */
static void test_limits(void **state)
{
	struct workload_info wl[WORKLOADS_MAX];
	struct err e = ERR_INIT;
	size_t cap = WORKLOADS_JSON_MAX + 4096, n, i;
	char *doc = malloc(cap), *p;
	int r;

	(void)state;
	if (!doc) {
		fail_msg("out of memory");
		return;	/* for the compiler: fail_msg() does not return */
	}
	/* WORKLOADS_MAX workloads: accepted; one more: refused */
	for (i = 0; i <= 1; i++) {
		size_t k, count = WORKLOADS_MAX + i;

		p = doc + sprintf(doc, "{\"schema_version\": 1, \"workloads\": [");
		for (k = 0; k < count; k++)
			p += sprintf(p, "%s{\"name\": \"w%zu\", \"description\": \"\", \"params\": [], "
				     "\"metrics\": []}", k ? "," : "", k);
		strcpy(p, "]}");
		err_clear(&e);
		r = workloads_parse_json("g", doc, strlen(doc), wl, WORKLOADS_MAX, &n, &e);
		if (i == 0) {
			assert_int_equal(r, 0);
			assert_int_equal(n, WORKLOADS_MAX);
			assert_string_equal(wl[WORKLOADS_MAX - 1].name, "w15");
		} else {
			check_refused("17 workloads", r, &e, "g", "'g' offers more than 16 workloads");
		}
	}
	/* WORKLOAD_PARAMS_MAX parameters: accepted; one more: refused */
	for (i = 0; i <= 1; i++) {
		size_t k, count = WORKLOAD_PARAMS_MAX + i;

		p = doc + sprintf(doc, "{\"schema_version\": 1, \"workloads\": [{\"name\": \"w\", "
				  "\"description\": \"\", \"metrics\": [], \"params\": [");
		for (k = 0; k < count; k++)
			p += sprintf(p, "%s{\"name\": \"p%zu\", \"type\": \"u64\", \"default\": \"0\"}",
				     k ? "," : "", k);
		strcpy(p, "]}]}");
		err_clear(&e);
		r = workloads_parse_json("g", doc, strlen(doc), wl, WORKLOADS_MAX, &n, &e);
		if (i == 0) {
			assert_int_equal(r, 0);
			assert_int_equal(wl[0].nparams, WORKLOAD_PARAMS_MAX);
		} else {
			check_refused("33 parameters", r, &e, "g", "workload 'w' has more than 32 parameters");
		}
	}
	/* a valid document of WORKLOADS_JSON_MAX bytes: accepted; one byte more: refused */
	for (i = 0; i <= 1; i++) {
		const char *head = "{\"schema_version\": 1, \"workloads\": [" MEMSET "], \"pad\": \"";
		size_t len = WORKLOADS_JSON_MAX + i, pad = len - strlen(head) - 2;

		strcpy(doc, head);
		memset(doc + strlen(head), 'x', pad);
		strcpy(doc + strlen(head) + pad, "\"}");
		assert_int_equal(strlen(doc), len);
		err_clear(&e);
		r = workloads_parse_json("g", doc, len, wl, WORKLOADS_MAX, &n, &e);
		if (i == 0)
			assert_int_equal(r, 0);
		else
			check_refused("oversized", r, &e, "g",
				      "'g workloads --format=json' printed more than 262144 bytes: not a workload list");
	}
	/* a NUL byte inside the text */
	strcpy(doc, DOC(MEMSET));
	n = strlen(doc);
	doc[10] = '\0';
	err_clear(&e);
	r = workloads_parse_json("g", doc, n, wl, WORKLOADS_MAX, &n, &e);
	check_refused("NUL byte", r, &e, "g", "printed a NUL byte (byte 10)");
	free(doc);
}

/* ---- fake guest programs ---------------------------------------------------------- */

static char fake_dir[] = "/tmp/thpeval-test-workloads-XXXXXX";

struct fake_case {
	const char *name;
	const char *script;	/* body after "#!/bin/sh"; $1 $2 checked to be the JSON listing */
	const char *why;	/* NULL: accepted */
	size_t n;
};

static const struct fake_case fake_cases[] = {
	{ "fake guest: good document", "cat <<'EOF'\n" DOC(MEMSET "," KCOMPILE) "\nEOF\n", NULL, 2 },
	{ "fake guest: malformed document", "echo '{\"schema_version\": 1, \"workloads\": [}'\n",
	  "workloads --format=json' printed invalid JSON: ", 0 },
	{ "fake guest: the text listing", "printf 'memset\\n    buffer\\n  parameters:\\n    --size=256M\\n'\n",
	  "workloads --format=json' did not print a JSON object: is it a thpeval-guest of this version?", 0 },
	{ "fake guest: oversized document",
	  "printf '{\"schema_version\": 1, \"workloads\": [], \"pad\": \"'; "
	  "head -c 300000 /dev/zero | tr '\\0' x; printf '\"}'\n",
	  "workloads --format=json' printed more than 262144 bytes: not a workload list", 0 },
	{ "fake guest: name too long", "cat <<'EOF'\n" DOC(WL("abcdefghijklmnopqrstuvwxyz_memset", "")) "\nEOF\n",
	  "workload 1 has a name longer than 31 characters: 'abcdefghijklmnopqrstuvwxyz_memset'", 0 },
	{ "fake guest: exits 3", "echo 'thpeval-guest: out of cheese' >&2; exit 3\n",
	  "' failed with exit status 3: thpeval-guest: out of cheese", 0 },
	{ "fake guest: prints nothing", "exit 0\n", "workloads --format=json' printed nothing", 0 },
	{ "fake guest: prints a NUL byte", "printf '{\"schema_version\": 1}\\000\\n'\n",
	  "workloads --format=json' printed a NUL byte (byte 21)", 0 },
	{ "fake guest: killed", "kill -9 $$\n", "' was killed by signal 9", 0 },
};

static int fake_setup(void **state)
{
	(void)state;
	return mkdtemp(fake_dir) ? 0 : -1;
}

static int fake_teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fake_dir);
	return system(cmd) ? -1 : 0;
}

static void write_fake(const char *path, const char *body)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fprintf(f, "#!/bin/sh\n[ \"$#\" = 2 ] && [ \"$1\" = workloads ] && [ \"$2\" = --format=json ] || "
		"{ echo \"fake guest: called with '$*'\" >&2; exit 99; }\n%s", body);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(path, 0755), 0);
}

static void test_fake(void **state)
{
	const struct fake_case *c = *state;
	struct workload_info wl[WORKLOADS_MAX];
	struct err e = ERR_INIT;
	char path[128];
	size_t n = 99;
	int r;

	snprintf(path, sizeof(path), "%s/guest-%zu", fake_dir, (size_t)(c - fake_cases));
	write_fake(path, c->script);
	r = workloads_list(path, wl, WORKLOADS_MAX, &n, &e);
	if (c->why) {
		check_refused(c->name, r, &e, path, c->why);
		assert_int_equal(n, 0);
		return;
	}
	if (r)
		fail_msg("%s: refused: %s", c->name, e.msg);
	assert_int_equal(n, c->n);
}

static void test_fake_missing(void **state)
{
	struct workload_info wl[WORKLOADS_MAX];
	struct err e = ERR_INIT;
	char path[128];
	size_t n;

	(void)state;
	snprintf(path, sizeof(path), "%s/no-such-guest", fake_dir);
	check_refused("missing program", workloads_list(path, wl, WORKLOADS_MAX, &n, &e), &e, path,
		      "cannot list workloads of '");
}

/* ---- the real guest program ------------------------------------------------------- */

/*
 * bin/thpeval-guest's JSON (through json-c, strictly) names the workloads of
 * its text listing (the unindented lines), in order, each with the options
 * of its "--name=default" lines; memset, tlb, hzp and kcompile get the flags
 * thpeval run relies on.
 */
static void test_real_guest(void **state)
{
	const char *bin = getenv("THPEVAL_GUEST_BIN") ? getenv("THPEVAL_GUEST_BIN") : "bin/thpeval-guest";
	struct workload_info wl[WORKLOADS_MAX];
	const struct workload_info *w;
	char v[WLOPT_VALUE_MAX];
	struct err e = ERR_INIT;
	char *text = malloc(1 << 16), *line, *save = NULL, opt[WORKLOAD_PARAM_NAME_MAX + 1];
	size_t n, k = 0, np = 0;

	(void)state;
	assert_non_null(text);
	if (access(bin, X_OK)) {
		free(text);
		print_message("skipped: '%s' is not built (make bin/thpeval-guest)\n", bin);
		skip();
	}
	if (workloads_list(bin, wl, WORKLOADS_MAX, &n, &e))
		fail_msg("%s", e.msg);
	assert_true(n >= 1);
	assert_int_equal(workloads_describe(bin, text, 1 << 16, &e), 0);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *p = line + strspn(line, " ");
		size_t l;

		if (line[0] != ' ') {
			if (k)
				assert_int_equal(wl[k - 1].nparams, np);
			if (k >= n)
				fail_msg("the text lists '%s', the JSON %zu workloads", line, n);
			assert_string_equal(wl[k].name, line);
			k++;
			np = 0;
			continue;
		}
		if (strncmp(p, "--", 2) || !strchr(p, '=') || !strncmp(p, "--label=", 8))
			continue;
		l = strcspn(p + 2, "=");
		assert_true(l < sizeof(opt));
		memcpy(opt, p + 2, l);
		opt[l] = '\0';
		if (!workload_has_param(&wl[k - 1], opt))
			fail_msg("'%s' lists --%s in the text, not in the JSON", wl[k - 1].name, opt);
		np++;
	}
	assert_int_equal(k, n);
	assert_int_equal(wl[k - 1].nparams, np);
	free(text);

	w = workload_find(wl, n, "memset");
	assert_non_null(w);
	assert_true(w->has_size && w->has_accesses && w->has_madvise && !w->has_src);
	w = workload_find(wl, n, "kcompile");
	assert_non_null(w);
	assert_true(!w->has_size && !w->has_accesses && !w->has_madvise && w->has_src);
	/* its own parameters: the defaults from the listing, a --workload-opts value over them */
	assert_string_equal(workload_opt_value("", w, "config", v, sizeof(v)), "tinyconfig");
	assert_string_equal(workload_opt_value("exec:timeout=5,kcompile:config=defconfig", w, "config", v,
					       sizeof(v)), "defconfig");
	assert_null(workload_opt_value("", w, "argv", v, sizeof(v)));
	assert_int_equal(workload_run_limit_ms("", w), 1200 * 1000 + ARGV_EXEC_MARGIN_MS);
	assert_int_equal(workload_run_limit_ms("kcompile:timeout=60", w), 60 * 1000 + ARGV_EXEC_MARGIN_MS);
	w = workload_find(wl, n, "exec");
	assert_non_null(w);
	assert_true(!w->has_size && !w->has_madvise && !w->has_src && workload_has_param(w, "argv"));
	assert_int_equal(workload_run_limit_ms("kcompile:timeout=60", w), 600 * 1000 + ARGV_EXEC_MARGIN_MS);
	assert_int_equal(workload_run_limit_ms("", workload_find(wl, n, "memset")), 0);
	w = workload_find(wl, n, "hzp");
	assert_non_null(w);
	assert_true(!w->has_size && w->has_madvise);
	assert_true(workload_has_param(w, "zero-page"));
}

/* ---- --workloads= against the list -------------------------------------------------- */

struct select_case {
	const char *name;
	const char *spec;
	const char *why;	/* NULL: accepted */
	const char *got;	/* the names selected, comma-separated */
};

static const struct select_case select_cases[] = {
	{ "select: all", "all", NULL, "memset,kcompile,hzp" },
	{ "select: two, in the given order", "hzp,memset", NULL, "hzp,memset" },
	{ "select: a duplicate once", "memset,memset", NULL, "memset" },
	{ "select: unknown", "bogus",
	  "unknown workload 'bogus': available: memset, kcompile, hzp, or all", NULL },
	{ "select: empty item", "memset,,hzp", "empty item in workload list 'memset,,hzp': separate "
	  "workloads with single commas (e.g. memset,tlb)", NULL },
	{ "select: empty", "", "empty item in workload list '': separate workloads with single commas "
	  "(e.g. memset,tlb)", NULL },
};

static void test_select(void **state)
{
	const struct select_case *c = *state;
	const char *doc = DOC(MEMSET "," KCOMPILE "," HZP);
	struct workload_info wl[WORKLOADS_MAX];
	char out[WORKLOADS_MAX][WORKLOAD_NAME_MAX], got[256] = "";
	struct err e = ERR_INIT;
	size_t n, nsel, i;
	int r;

	assert_int_equal(workloads_parse_json("g", doc, strlen(doc), wl, WORKLOADS_MAX, &n, &e), 0);
	r = workloads_select(c->spec, wl, n, out, WORKLOADS_MAX, &nsel, &e);
	if (c->why) {
		assert_int_not_equal(r, 0);
		assert_string_equal(e.msg, c->why);
		return;
	}
	assert_int_equal(r, 0);
	for (i = 0; i < nsel; i++) {
		strcat(got, i ? "," : "");
		strcat(got, out[i]);
	}
	assert_string_equal(got, c->got);
}

struct opts_case {
	const char *name;
	const char *spec;
	const char *why;	/* NULL: accepted */
};

static const struct opts_case opts_cases[] = {
	{ "opts: a parameter of a selected workload", "hzp:zero-page=1", NULL },
	{ "opts: two workloads", "hzp:zero-page=1,memset:populate-read=1", NULL },
	{ "opts: a workload not selected", "kcompile:jobs=4",
	  "--workload-opts: 'kcompile' is not a workload of this run (--workloads)" },
	{ "opts: a workload the program lacks", "redis:dataset=4G",
	  "--workload-opts: 'redis' is not a workload of this run (--workloads)" },
	{ "opts: a parameter the workload lacks", "hzp:dataset=4G",
	  "--workload-opts: workload hzp has no parameter 'dataset' ('thpeval workloads' lists them)" },
	{ "opts: a reserved parameter", "memset:size=4G", "--workload-opts: 'memset:size=4G': --size is set by "
	  "thpeval itself (its own run option)" },
	{ "opts: bad syntax", "memset", "--workload-opts: 'memset' is not WORKLOAD:PARAM=VALUE (e.g. redis:dataset=4G)" },
};

static void test_opts(void **state)
{
	const struct opts_case *c = *state;
	const char *doc = DOC(MEMSET "," KCOMPILE "," HZP);
	const char sel[2][WORKLOAD_NAME_MAX] = { "memset", "hzp" };
	struct workload_info wl[WORKLOADS_MAX];
	struct err e = ERR_INIT;
	size_t n;
	int r;

	assert_int_equal(workloads_parse_json("g", doc, strlen(doc), wl, WORKLOADS_MAX, &n, &e), 0);
	r = workload_opts_check(c->spec, sel, 2, wl, n, &e);
	if (c->why) {
		assert_int_equal(r, -EINVAL);
		assert_string_equal(e.msg, c->why);
	} else {
		assert_int_equal(r, 0);
	}
}

/* the bare host's arguments: the items of one workload, as --PARAM=VALUE */
static void test_opts_args(void **state)
{
	char out[WLOPTS_MAX][WLOPT_NAME_MAX + WLOPT_VALUE_MAX + 8];

	(void)state;
	assert_int_equal(workload_opts_args("redis:dataset=4G,pgbench:scale=9,redis:clients=8", "redis", out,
					    WLOPTS_MAX), 2);
	assert_string_equal(out[0], "--dataset=4G");
	assert_string_equal(out[1], "--clients=8");
	assert_int_equal(workload_opts_args("redis:dataset=4G", "pgbench", out, WLOPTS_MAX), 0);
	assert_int_equal(workload_opts_args("", "redis", out, WLOPTS_MAX), 0);
	assert_int_equal(workload_opts_args("redis:dataset=4G,redis:clients=8", "redis", out, 1), 1);
}

int main(void)
{
	struct CMUnitTest tests[N(parse_cases) + N(fake_cases) + N(select_cases) + N(opts_cases) + 6];
	size_t i, n = 0;

	for (i = 0; i < N(parse_cases); i++)
		tests[n++] = (struct CMUnitTest){ parse_cases[i].name, test_parse, NULL, NULL,
						  (void *)(uintptr_t)&parse_cases[i] };
	tests[n++] = (struct CMUnitTest){ "flags from the parameter list", test_flags, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "limits: workloads, parameters, bytes, NUL", test_limits, NULL,
					  NULL, NULL };
	for (i = 0; i < N(fake_cases); i++)
		tests[n++] = (struct CMUnitTest){ fake_cases[i].name, test_fake, NULL, NULL,
						  (void *)(uintptr_t)&fake_cases[i] };
	tests[n++] = (struct CMUnitTest){ "fake guest: missing", test_fake_missing, NULL, NULL, NULL };
	tests[n++] = (struct CMUnitTest){ "bin/thpeval-guest: the JSON mirrors the text listing",
					  test_real_guest, NULL, NULL, NULL };
	for (i = 0; i < N(select_cases); i++)
		tests[n++] = (struct CMUnitTest){ select_cases[i].name, test_select, NULL, NULL,
						  (void *)(uintptr_t)&select_cases[i] };
	for (i = 0; i < N(opts_cases); i++)
		tests[n++] = (struct CMUnitTest){ opts_cases[i].name, test_opts, NULL, NULL,
						  (void *)(uintptr_t)&opts_cases[i] };
	tests[n++] = (struct CMUnitTest){ "opts: the bare host's arguments", test_opts_args, NULL, NULL, NULL };
	return _cmocka_run_group_tests("workloads", tests, n, fake_setup, fake_teardown);
}
