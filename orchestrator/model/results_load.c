#include "orchestrator/model/results_load.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fstree.h"
#include "lib/jsonscan.h"
#include "orchestrator/model/jtable.h"

static void line_col(const char *text, size_t off, unsigned *line, unsigned *col)
{
	size_t i;

	*line = 1;
	*col = 1;
	for (i = 0; i < off; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

int results_load_text(const char *text, size_t len, const char *name, struct results *out,
		      struct err *e)
{
	json_object *root;
	unsigned line, col;
	char why[160];
	size_t off;
	int r;

	results_init(out);
	r = jt_parse(text, len, JSON_TOKENER_DEFAULT_DEPTH, &root, &off, why, sizeof(why));
	if (r == -EFBIG)
		return err_set(e, r, "'%s' is too large for a results file", name);
	if (r == -ENOMEM)
		return err_set(e, r, "out of memory reading '%s'", name);
	if (r) {
		size_t ws = strspn(text, " \t\r\n");

		line_col(text, off, &line, &col);
		if (ws == len)
			return err_set(e, -EINVAL, "'%s' is empty, not a thpeval results file", name);
		if (text[ws] != '{' && text[ws] != '[')
			return err_set(e, -EINVAL, "'%s' is not JSON, so not a thpeval results file", name);
		return err_set(e, -EINVAL, "'%s' is not valid JSON: %s at line %u, column %u (byte %zu): "
			       "the file is truncated or was edited by hand", name, why, line, col, off);
	}
	r = results_from_json(root, name, out, e);
	json_object_put(root);
	if (r) {
		results_release(out);
		return e->code ? e->code : r;
	}
	return 0;
}

int results_path_resolve(const char *path, char *buf, size_t len, struct err *e)
{
	struct stat st;
	int n;

	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		n = snprintf(buf, len, "%s%s%s", path, path[strlen(path) - 1] == '/' ? "" : "/", RESULTS_FILE);
	else
		n = snprintf(buf, len, "%s", path);
	if (n < 0 || (size_t)n >= len)
		return err_set(e, -ENAMETOOLONG, "path too long: '%s'", path);
	return 0;
}

static int read_all(const char *path, char **text, size_t *len, struct err *e)
{
	struct err why = ERR_INIT;
	struct json_counts n;
	int r;

	/* a FIFO, device or directory is refused before anything blocks on it */
	r = read_regular(path, "", "", 0, RESULTS_MAX_BYTES, text, len, &why);
	if (r == -ENOENT)
		return err_set(e, r, "'%s' does not exist: give a results.json or the directory of a run", path);
	if (r == -EFBIG)
		return err_set(e, r, "'%s' is larger than %u MiB, the most a thpeval results file holds", path,
			       RESULTS_MAX_BYTES >> 20);
	if (r)
		return err_set(e, r, "%s", why.msg);
	/* counted before json-c builds a tree many times the text's size */
	json_scan(*text, *len, "cells", &n);
	if (n.key_objects > RESULTS_MAX_CELLS || n.values > RESULTS_MAX_VALUES) {
		free(*text);
		*text = NULL;
		if (n.key_objects > RESULTS_MAX_CELLS)
			return err_set(e, -EFBIG, "'%s' has %" PRIu64 " cells, more than the %u a thpeval results file holds",
				       path, n.key_objects, RESULTS_MAX_CELLS);
		return err_set(e, -EFBIG, "'%s' has %" PRIu64 " JSON values, more than the %u a thpeval results file holds",
			       path, n.values, RESULTS_MAX_VALUES);
	}
	return 0;
}

int results_load(const char *path, struct results *out, struct err *e)
{
	char file[PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	int r;

	results_init(out);
	if (results_path_resolve(path, file, sizeof(file), e) || read_all(file, &text, &len, e))
		return e->code;
	r = results_load_text(text, len, file, out, e);
	free(text);
	return r;
}
