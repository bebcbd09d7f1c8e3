/*
 * tests for lib/jsonscan.c: containers and commas counted, strings (with
 * escaped quotes and brackets inside) skipped, the objects of the top-level
 * key's array counted and nothing nested deeper or under another key, and
 * malformed text counted as far as it goes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "lib/jsonscan.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct scan_case {
	const char *name;
	const char *text;
	const char *key;
	uint64_t values, key_objects;
};

static const struct scan_case cases[] = {
	{ "empty text", "", "cells", 0, 0 },
	{ "scalar", "42", "cells", 0, 0 },
	{ "empty object", "{}", "cells", 1, 0 },
	{ "three cells", "{\"cells\": [{}, {\"a\": 1}, {}]}", "cells", 7, 3 },
	{ "whitespace before the colon", "{\"cells\" \n:\t[{},{}]}", "cells", 5, 2 },
	{ "cells after another key", "{\"x\": [1, 2], \"cells\": [{}]}", "cells", 6, 1 },
	{ "nested cells key not counted", "{\"guests\": [{\"cells\": [{}, {}]}]}", "cells", 7, 0 },
	{ "a string value named cells", "{\"k\": \"cells\", \"v\": [{}]}", "cells", 4, 0 },
	{ "brackets and quotes inside strings", "{\"cells\": [{\"s\": \"[{,}]\\\"{\"}]}", "cells", 3, 1 },
	{ "objects inside a cell not counted", "{\"cells\": [{\"m\": {\"a\": {}}}]}", "cells", 5, 1 },
	{ "no key asked", "{\"cells\": [{}]}", "", 3, 0 },
	{ "key prefix does not match", "{\"cellsx\": [{}], \"cell\": [{}]}", "cells", 6, 0 },
	{ "truncated text", "{\"cells\": [{}, {\"a\": \"unterminated", "cells", 5, 2 },
	{ "unbalanced closers", "]]}}{\"cells\": [{}]}", "cells", 3, 1 },
};

static void test_scan(void **state)
{
	const struct scan_case *c = *state;
	struct json_counts n;

	json_scan(c->text, strlen(c->text), c->key, &n);
	if (n.values != c->values || n.key_objects != c->key_objects)
		fail_msg("values %llu objects %llu, want %llu %llu", (unsigned long long)n.values,
			 (unsigned long long)n.key_objects, (unsigned long long)c->values,
			 (unsigned long long)c->key_objects);
}

int main(void)
{
	struct CMUnitTest tests[N(cases)];
	size_t i;

	for (i = 0; i < N(cases); i++)
		tests[i] = (struct CMUnitTest){ cases[i].name, test_scan, NULL, NULL, (void *)(uintptr_t)&cases[i] };
	return _cmocka_run_group_tests("lib/jsonscan", tests, N(cases), NULL, NULL);
}
