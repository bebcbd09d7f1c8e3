/*
 * jsonscan: the size of JSON text counted without building it, so that a
 * reader can refuse text too large to parse before a parser allocates a
 * tree for it (a tree costs many times the text). A byte scan, linear and
 * allocation-free; malformed text is counted as far as it goes (the parser
 * that follows says what is wrong with it). Never prints.
 */
#ifndef THPEVAL_LIB_JSONSCAN_H
#define THPEVAL_LIB_JSONSCAN_H

#include <stddef.h>
#include <stdint.h>

struct json_counts {
	uint64_t values;	/* containers and commas: within 2x of the values a parser allocates */
	uint64_t key_objects;	/* objects directly in the array at the top-level key given */
};

/* counts of text[0..len) (the top-level key "" counts nothing) */
void json_scan(const char *text, size_t len, const char *key, struct json_counts *out);

#endif
