#include "orchestrator/run/workloads.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "images/spawn.h"
#include "lib/argv.h"
#include "lib/clock.h"
#include "lib/parse.h"
#include "orchestrator/model/jtable.h"

int workloads_describe(const char *guest_bin, char *buf, size_t len, struct err *e)
{
	const char *argv[] = { guest_bin, "workloads", NULL };
	int r = spawn_run(argv, NULL, buf, len, e);

	return r ? err_wrap(e, "cannot list workloads of '%s'", guest_bin) : 0;
}

/* at most 40 characters of s for a message, non-printable bytes as '?' */
static const char *shown(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 4 < len && i < 40; i++)
		buf[i] = s[i] > 0x20 && s[i] < 0x7f ? s[i] : '?';
	strcpy(buf + i, s[i] ? "..." : "");
	return buf;
}

/* a name of [a-z0-9_] (and '-' when dash), 1 to max - 1 characters, copied into out[max] */
static int take_name(const char *prog, const char *what, json_object *o, bool dash, char *out,
		     size_t max, struct err *e)
{
	const char *s;
	char b[48];
	size_t i, len;

	if (!o || !json_object_is_type(o, json_type_string))
		return err_set(e, -EPROTO, "'%s workloads --format=json': %s has no \"name\" string", prog, what);
	s = json_object_get_string(o);
	len = (size_t)json_object_get_string_len(o);
	if (len == 0)
		return err_set(e, -EPROTO, "'%s workloads --format=json': %s has an empty name", prog, what);
	for (i = 0; i < len; i++)	/* a NUL (\u0000) too */
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_' ||
		      (dash && s[i] == '-')))
			return err_set(e, -EPROTO, "'%s workloads --format=json': %s has a bad name '%s': "
				       "expected [a-z0-9_%s]", prog, what, shown(s, b, sizeof(b)), dash ? "-" : "");
	if (i >= max)
		return err_set(e, -EPROTO, "'%s workloads --format=json': %s has a name longer than %zu "
			       "characters: '%s'", prog, what, max - 1, shown(s, b, sizeof(b)));
	memcpy(out, s, i + 1);
	return 0;
}

/* member key of o, of type t; NULL with e set otherwise */
static json_object *member(const char *prog, const char *what, json_object *o, const char *key,
			   enum json_type t, struct err *e)
{
	json_object *v;

	if (json_object_object_get_ex(o, key, &v) && json_object_is_type(v, t))
		return v;
	err_set(e, -EPROTO, "'%s workloads --format=json': %s has no \"%s\" %s", prog, what, key,
		json_type_to_name(t));
	return NULL;
}

static int take_params(const char *prog, json_object *arr, struct workload_info *wi, struct err *e)
{
	static const char *const types[] = { "size", "u64", "bool", "keep01", "word" };
	size_t np = json_object_array_length(arr), i, k;
	char what[96], b[48];
	json_object *p, *v;
	bool known;

	if (np > WORKLOAD_PARAMS_MAX)
		return err_set(e, -E2BIG, "'%s workloads --format=json': workload '%s' has more than %d "
			       "parameters", prog, wi->name, WORKLOAD_PARAMS_MAX);
	for (i = 0; i < np; i++) {
		p = json_object_array_get_idx(arr, i);
		snprintf(what, sizeof(what), "parameter %zu of workload '%s'", i + 1, wi->name);
		if (!json_object_is_type(p, json_type_object))
			return err_set(e, -EPROTO, "'%s workloads --format=json': %s is not an object", prog, what);
		v = NULL;
		json_object_object_get_ex(p, "name", &v);
		if (take_name(prog, what, v, true, wi->params[i], WORKLOAD_PARAM_NAME_MAX, e))
			return e->code;
		snprintf(what, sizeof(what), "parameter '%s' of workload '%s'", wi->params[i], wi->name);
		for (k = 0; k < i; k++)
			if (!strcmp(wi->params[k], wi->params[i]))
				return err_set(e, -EPROTO, "'%s workloads --format=json': %s is listed twice", prog, what);
		if (!(v = member(prog, what, p, "type", json_type_string, e)))
			return e->code;
		for (k = 0, known = false; k < sizeof(types) / sizeof(types[0]); k++)
			known |= !strcmp(json_object_get_string(v), types[k]);
		if (!known)
			return err_set(e, -EPROTO, "'%s workloads --format=json': %s has an unknown type '%s'",
				       prog, what, shown(json_object_get_string(v), b, sizeof(b)));
		if (!(v = member(prog, what, p, "default", json_type_string, e)))
			return e->code;
		if ((size_t)json_object_get_string_len(v) >= WORKLOAD_DEFAULT_MAX)
			return err_set(e, -EPROTO, "'%s workloads --format=json': %s has a default longer than %d "
				       "characters", prog, what, WORKLOAD_DEFAULT_MAX - 1);
		memcpy(wi->defaults[i], json_object_get_string(v), (size_t)json_object_get_string_len(v) + 1);
	}
	wi->nparams = np;
	wi->has_size = workload_has_param(wi, "size");
	wi->has_accesses = workload_has_param(wi, "accesses");
	wi->has_madvise = workload_has_param(wi, "madvise");
	wi->has_src = workload_has_param(wi, "src");
	return 0;
}

static int take_doc(const char *prog, json_object *root, struct workload_info *wl, size_t max,
		    size_t *n, struct err *e)
{
	json_object *v, *arr, *w;
	size_t nw, i, k;
	char what[64];

	if (!json_object_is_type(root, json_type_object))
		return err_set(e, -EPROTO, "'%s workloads --format=json' did not print a JSON object", prog);
	if (!(v = member(prog, "the document", root, "schema_version", json_type_int, e)))
		return e->code;
	if (json_object_get_int64(v) != WORKLOADS_SCHEMA)
		return err_set(e, -EPROTO, "'%s workloads --format=json': schema_version %s, this thpeval "
			       "reads %d: use the guest program built with it", prog, json_object_get_string(v),
			       WORKLOADS_SCHEMA);
	if (!(arr = member(prog, "the document", root, "workloads", json_type_array, e)))
		return e->code;
	nw = json_object_array_length(arr);
	if (nw == 0)
		return err_set(e, -EPROTO, "'%s workloads --format=json' listed no workload", prog);
	if (nw > max)
		return err_set(e, -E2BIG, "'%s' offers more than %zu workloads", prog, max);
	for (i = 0; i < nw; i++) {
		struct workload_info *wi = &wl[i];

		w = json_object_array_get_idx(arr, i);
		snprintf(what, sizeof(what), "workload %zu", i + 1);
		memset(wi, 0, sizeof(*wi));
		if (!json_object_is_type(w, json_type_object))
			return err_set(e, -EPROTO, "'%s workloads --format=json': %s is not an object", prog, what);
		v = NULL;
		json_object_object_get_ex(w, "name", &v);
		if (take_name(prog, what, v, false, wi->name, sizeof(wi->name), e))
			return e->code;
		for (k = 0; k < i; k++)
			if (!strcmp(wl[k].name, wi->name))
				return err_set(e, -EPROTO, "'%s workloads --format=json': workload '%s' is listed twice",
					       prog, wi->name);
		snprintf(what, sizeof(what), "workload '%s'", wi->name);
		if (!member(prog, what, w, "description", json_type_string, e) ||
		    !member(prog, what, w, "metrics", json_type_array, e) ||
		    !(v = member(prog, what, w, "params", json_type_array, e)))
			return e->code;
		if (take_params(prog, v, wi, e))
			return e->code;
	}
	*n = nw;
	return 0;
}

/* the first byte at or after i that is not JSON white space, or len */
static size_t skip_ws(const char *text, size_t i, size_t len)
{
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\r' || text[i] == '\n'))
		i++;
	return i;
}

int workloads_parse_json(const char *prog, const char *text, size_t len, struct workload_info *wl,
			 size_t max, size_t *n, struct err *e)
{
	json_object *root;
	const char *nul;
	char why[160];
	size_t end;
	int r;

	*n = 0;
	if (len > WORKLOADS_JSON_MAX)
		return err_set(e, -EFBIG, "'%s workloads --format=json' printed more than %d bytes: "
			       "not a workload list", prog, WORKLOADS_JSON_MAX);
	if (skip_ws(text, 0, len) == len)
		return err_set(e, -EPROTO, "'%s workloads --format=json' printed nothing", prog);
	if ((nul = memchr(text, '\0', len)))
		return err_set(e, -EPROTO, "'%s workloads --format=json' printed a NUL byte (byte %zu)",
			       prog, (size_t)(nul - text));
	end = skip_ws(text, 0, len);
	if (text[end] != '{')
		return err_set(e, -EPROTO, "'%s workloads --format=json' did not print a JSON object: "
			       "is it a thpeval-guest of this version?", prog);
	r = jt_parse(text, len, WORKLOADS_JSON_DEPTH, &root, &end, why, sizeof(why));
	if (r == -ENOMEM)
		return err_set(e, r, "out of memory");
	if (r)
		return err_set(e, -EPROTO, "'%s workloads --format=json' printed invalid JSON: %s (byte %zu)",
			       prog, why, end);
	r = take_doc(prog, root, wl, max, n, e);
	json_object_put(root);
	if (r) {
		memset(wl, 0, max * sizeof(*wl));
		*n = 0;
	}
	return r;
}

int workloads_list(const char *guest_bin, struct workload_info *wl, size_t max, size_t *n, struct err *e)
{
	const char *argv[] = { guest_bin, "workloads", "--format=json", NULL };
	struct err se = ERR_INIT;
	size_t cap = WORKLOADS_JSON_MAX + 1, len;
	char *buf = malloc(cap + 1);
	int r;

	*n = 0;
	if (!buf)
		return err_set(e, -ENOMEM, "out of memory");
	/*
	 * spawn_run() NUL-terminates what it read and leaves the rest of buf
	 * alone: filled with non-NUL bytes first, the last NUL is the end, so a
	 * NUL the program printed is seen (and refused) rather than cutting the text.
	 */
	memset(buf, 0x01, cap + 1);
	r = spawn_run(argv, NULL, buf, cap + 1, &se);
	if (r == -EOVERFLOW)
		r = err_set(e, -EFBIG, "'%s workloads --format=json' printed more than %d bytes: "
			    "not a workload list", guest_bin, WORKLOADS_JSON_MAX);
	else if (r)
		r = err_set(e, r, "cannot list workloads of '%s': %s", guest_bin, se.msg);
	if (!r) {
		len = (size_t)((const char *)memrchr(buf, '\0', cap + 1) - buf);
		r = workloads_parse_json(guest_bin, buf, len, wl, max, n, e);
	}
	free(buf);
	return r;
}

bool workload_has_param(const struct workload_info *wi, const char *name)
{
	size_t i;

	for (i = 0; i < wi->nparams; i++)
		if (!strcmp(wi->params[i], name))
			return true;
	return false;
}

int workload_opts_check(const char *spec, const char (*sel)[WORKLOAD_NAME_MAX], size_t nsel,
			const struct workload_info *avail, size_t navail, struct err *e)
{
	struct wlopt o[WLOPTS_MAX];
	char why[ERR_MSG_MAX];
	size_t n, i, k;

	if (wlopts_parse(spec, o, WLOPTS_MAX, &n, why, sizeof(why)))
		return err_set(e, -EINVAL, "--workload-opts: %s", why);
	for (i = 0; i < n; i++) {
		const struct workload_info *wi = workload_find(avail, navail, o[i].workload);
		bool selected = false;

		for (k = 0; k < nsel; k++)
			selected |= !strcmp(sel[k], o[i].workload);
		if (!wi || !selected)
			return err_set(e, -EINVAL, "--workload-opts: '%s' is not a workload of this run (--workloads)",
				       o[i].workload);
		if (!workload_has_param(wi, o[i].param))
			return err_set(e, -EINVAL, "--workload-opts: workload %s has no parameter '%s' ('thpeval "
				       "workloads' lists them)", wi->name, o[i].param);
	}
	return 0;
}

const char *workload_opt_value(const char *spec, const struct workload_info *wi, const char *param, char *buf,
			       size_t len)
{
	struct wlopt o[WLOPTS_MAX];
	size_t n = 0, i;

	for (i = 0; i < wi->nparams && strcmp(wi->params[i], param); i++)
		;
	if (i == wi->nparams)
		return NULL;
	snprintf(buf, len, "%s", wi->defaults[i]);
	if (spec[0] && !wlopts_parse(spec, o, WLOPTS_MAX, &n, NULL, 0))
		for (i = 0; i < n; i++)
			if (!strcmp(o[i].workload, wi->name) && !strcmp(o[i].param, param))
				snprintf(buf, len, "%s", o[i].value);
	return buf;
}

uint64_t workload_run_limit_ms(const char *spec, const struct workload_info *wi)
{
	char v[WLOPT_VALUE_MAX];
	uint64_t s;

	if (!workload_opt_value(spec, wi, "timeout", v, sizeof(v)) || parse_u64(v, &s) || s > 1000000000)
		return 0;
	return s * 1000 + ARGV_EXEC_MARGIN_MS;
}

size_t workload_opts_args(const char *spec, const char *workload, char (*out)[WLOPT_NAME_MAX + WLOPT_VALUE_MAX + 8],
			  size_t max)
{
	struct wlopt o[WLOPTS_MAX];
	size_t n, i, k = 0;

	if (!spec[0] || wlopts_parse(spec, o, WLOPTS_MAX, &n, NULL, 0))
		return 0;
	for (i = 0; i < n && k < max; i++)
		if (!strcmp(o[i].workload, workload))
			snprintf(out[k++], WLOPT_NAME_MAX + WLOPT_VALUE_MAX + 8, "--%s=%s", o[i].param, o[i].value);
	return k;
}

const struct workload_info *workload_find(const struct workload_info *wl, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(wl[i].name, name))
			return &wl[i];
	return NULL;
}

int workloads_select(const char *spec, const struct workload_info *avail, size_t navail,
		     char out[][WORKLOAD_NAME_MAX], size_t max, size_t *n, struct err *e)
{
	char buf[256], list[WORKLOADS_MAX * WORKLOAD_NAME_MAX] = "", *tok, *save = NULL;
	size_t i, k;

	*n = 0;
	for (i = 0; i < navail; i++) {
		strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, avail[i].name, sizeof(list) - strlen(list) - 1);
	}
	if (!strcmp(spec, "all")) {
		for (i = 0; i < navail && i < max; i++)
			strcpy(out[(*n)++], avail[i].name);
		return 0;
	}
	if (strlen(spec) >= sizeof(buf))
		return err_set(e, -EINVAL, "workload list too long");
	if (parse_list_check(spec))
		return err_set(e, -EINVAL, "empty item in workload list '%s': separate workloads "
			       "with single commas (e.g. memset,tlb)", spec);
	strcpy(buf, spec);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool found = false, dup = false;

		for (i = 0; i < navail; i++)
			found |= !strcmp(avail[i].name, tok);
		if (!found)
			return err_set(e, -EINVAL, "unknown workload '%.64s': available: %s, or all", tok, list);
		for (k = 0; k < *n; k++)
			dup |= !strcmp(out[k], tok);
		if (dup)
			continue;
		if (*n >= max)
			return err_set(e, -E2BIG, "too many workloads");
		strcpy(out[(*n)++], tok);
	}
	if (*n == 0)
		return err_set(e, -EINVAL, "empty workload list: available: %s, or all", list);
	return 0;
}

struct line_ctx {
	local_record_fn fn;
	void *opaque;
	int stop;
};

static int on_line(void *opaque, enum rec_line_kind kind, const char *line, size_t len)
{
	struct line_ctx *lc = opaque;
	struct record rec;
	char why[128];

	if (kind == REC_LINE_OVERSIZED)
		return lc->fn(lc->opaque, NULL, "line longer than the record limit");
	if (rec_parse(line, len, &rec, why, sizeof(why)))
		return lc->fn(lc->opaque, NULL, why);
	return lc->fn(lc->opaque, &rec, NULL);
}

int workload_run_local(const char *guest_bin, const char *const *args, int timeout_ms,
		       volatile const sig_atomic_t *stop, local_record_fn fn, void *opaque, struct err *e)
{
	const char *argv[32];
	struct rec_reader *rd = malloc(sizeof(*rd));
	struct line_ctx lc = { fn, opaque, 0 };
	int p[2], status = 0, r = 0, devnull;
	double deadline = (mono_s() * 1e3) + timeout_ms;
	size_t n = 0;
	pid_t pid;

	if (!rd)
		return err_set(e, -ENOMEM, "out of memory");
	argv[n++] = guest_bin;
	argv[n++] = "workload";
	while (args && *args && n < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[n++] = *args++;
	argv[n] = NULL;
	if (pipe2(p, O_CLOEXEC) < 0) {
		free(rd);
		return err_set(e, -errno, "cannot create a pipe: %s", strerror(errno));
	}
	pid = fork();
	if (pid < 0) {
		r = err_set(e, -errno, "cannot fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		free(rd);
		return r;
	}
	if (pid == 0) {
		devnull = open("/dev/null", O_RDWR);
		if (devnull >= 0) {
			dup2(devnull, 0);
			dup2(devnull, 2);
		}
		dup2(p[1], 1);
		signal(SIGPIPE, SIG_DFL);
		execv(guest_bin, (char *const *)(uintptr_t)argv);
		_exit(127);
	}
	close(p[1]);
	rec_reader_init(rd);
	for (;;) {
		struct pollfd pfd = { p[0], POLLIN, 0 };
		char buf[4096];
		ssize_t got;
		int left = (int)(deadline - (mono_s() * 1e3));

		if (stop && *stop) {
			r = err_set(e, -EINTR, "interrupted");
			break;
		}
		if (left <= 0) {
			r = err_set(e, -ETIMEDOUT, "workload '%s' did not finish within %d s: killed it", args ? args[0] : "?",
				    timeout_ms / 1000);
			break;
		}
		if (poll(&pfd, 1, left < 100 ? left : 100) < 0) {
			if (errno == EINTR)
				continue;
			r = err_set(e, -errno, "poll: %s", strerror(errno));
			break;
		}
		if (!pfd.revents)
			continue;
		got = read(p[0], buf, sizeof(buf));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;	/* EOF: the child closed stdout */
		if (rec_reader_feed(rd, buf, (size_t)got, on_line, &lc)) {
			r = err_set(e, -EPROTO, "stopped reading workload output");
			break;
		}
	}
	if (r)
		kill(pid, SIGKILL);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!r && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		/* argv[2], the name: args has been walked to its end */
		const char *name = n > 2 ? argv[2] : "?";

		if (WIFSIGNALED(status))
			r = err_set(e, -EIO, "workload '%s' was killed by signal %d", name, WTERMSIG(status));
		else
			r = err_set(e, -EIO, "workload '%s' exited with status %d", name, WEXITSTATUS(status));
	}
	free(rd);
	return r;
}
