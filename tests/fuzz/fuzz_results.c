/*
 * libFuzzer harness for the results.json loader (orchestrator/model/
 * results_load.c, the function every command that reads a results file
 * calls): the input is a file's bytes, as an operator or another tool could
 * hand it over.
 *
 *  - results_load_text must accept or refuse with a message, one line;
 *  - an accepted file, written back (results_to_json_text), must load again
 *    and write back the very same bytes: what the loader keeps is exactly
 *    what the writer writes, so nothing it accepted is half-read.
 * A broken property calls abort() so that the fuzzer reports it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/model/results_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(stderr, "fuzz_results: property failed at %s:%d: %s\n",    \
				__FILE__, __LINE__, #cond);                                 \
			abort();                                                            \
		}                                                                           \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct results *r = malloc(sizeof(*r)), *back = malloc(sizeof(*back));
	char *text = malloc(size + 1), *out = NULL, *again = NULL;
	size_t olen = 0, alen = 0;
	struct err e = ERR_INIT;

	CHECK(r && back && text);
	/* as read_all() hands it over: the bytes, then a NUL */
	memcpy(text, data, size);
	text[size] = '\0';
	if (results_load_text(text, size, "fuzz.json", r, &e)) {
		CHECK(e.code < 0 && e.msg[0] != '\0');
		CHECK(!strchr(e.msg, '\n'));
		CHECK(r->ncells == 0 && r->nguests == 0);	/* left empty */
		goto out;
	}
	CHECK(results_to_json_text(r, &out, &olen, &e) == 0);
	err_clear(&e);
	if (results_load_text(out, olen, "again.json", back, &e)) {
		fprintf(stderr, "fuzz_results: written back, refused: %s\n", e.msg);
		CHECK(!"what was accepted and written back loads again");
	}
	CHECK(results_to_json_text(back, &again, &alen, &e) == 0);
	CHECK(alen == olen && !memcmp(out, again, olen));
	results_release(back);
	results_release(r);
out:
	free(out);
	free(again);
	free(text);
	free(r);
	free(back);
	return 0;
}
