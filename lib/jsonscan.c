#include "lib/jsonscan.h"

#include <stdbool.h>
#include <string.h>

/* the index just past the string whose opening quote is at i */
static size_t string_end(const char *t, size_t len, size_t i)
{
	for (i++; i < len; i++) {
		if (t[i] == '\\')
			i++;
		else if (t[i] == '"')
			return i + 1;
	}
	return len;
}

void json_scan(const char *t, size_t len, const char *key, struct json_counts *out)
{
	size_t i = 0, klen = strlen(key);
	uint64_t depth = 0;
	bool at_key = false, in_array = false;

	out->values = 0;
	out->key_objects = 0;
	while (i < len) {
		char c = t[i];

		switch (c) {
		case '"': {
			size_t end = string_end(t, len, i), j = end;

			/* a member name of the top-level object: is it key? */
			if (depth == 1) {
				while (j < len && strchr(" \t\r\n", t[j]))
					j++;
				if (j < len && t[j] == ':')
					at_key = klen && end - i - 2 == klen && !memcmp(t + i + 1, key, klen);
			}
			i = end;
			continue;
		}
		case '{':
		case '[':
			out->values++;
			depth++;
			if (c == '[' && depth == 2 && at_key)
				in_array = true;
			else if (c == '{' && depth == 3 && in_array)
				out->key_objects++;
			break;
		case '}':
		case ']':
			if (depth == 2 && in_array)
				in_array = false;
			if (depth)
				depth--;
			break;
		case ',':
			out->values++;
			break;
		default:
			break;
		}
		i++;
	}
}
