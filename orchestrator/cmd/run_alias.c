#include "orchestrator/cmd/run_alias.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lib/parse.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/cmd/execopts.h"

#define KC_CONFIG_MAX 32	/* --kcompile's CONFIG and TARGET, NUL included */
#define KC_TARGET_MAX 64

/* WORKLOAD:PARAM=VALUE into c->wl_opts: replaces that item where it is, else appended */
static int wl_set(struct run_config *c, const char *workload, const char *param, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int wl_set(struct run_config *c, const char *workload, const char *param, const char *fmt, ...)
{
	struct wlopt o[WLOPTS_MAX];
	char spec[WLOPTS_SPEC_MAX + 2] = "", value[WLOPT_VALUE_MAX];
	size_t n = 0, i;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(value, sizeof(value), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(value))
		return -E2BIG;
	if (c->wl_opts[0] && wlopts_parse(c->wl_opts, o, WLOPTS_MAX, &n, NULL, 0))
		return -EINVAL;
	for (i = 0; i < n; i++)
		if (!strcmp(o[i].workload, workload) && !strcmp(o[i].param, param))
			break;
	if (i == n && n == WLOPTS_MAX)
		return -E2BIG;
	if (i == n) {
		snprintf(o[i].workload, sizeof(o[i].workload), "%s", workload);
		snprintf(o[i].param, sizeof(o[i].param), "%s", param);
		n++;
	}
	snprintf(o[i].value, sizeof(o[i].value), "%s", value);
	for (i = 0, len = 0; i < n && (size_t)len < sizeof(spec); i++)
		len += snprintf(spec + len, sizeof(spec) - (size_t)len, "%s%s:%s=%s", i ? "," : "", o[i].workload,
				o[i].param, o[i].value);
	if ((size_t)len > WLOPTS_SPEC_MAX)
		return -E2BIG;
	memcpy(c->wl_opts, spec, (size_t)len + 1);
	return 0;
}

static int wl_set_failed(int r, struct err *e)
{
	return err_set(e, r, "with the other workload options: more than %d items or %d bytes", WLOPTS_MAX,
		       WLOPTS_SPEC_MAX);
}

/* --kcompile=CONFIG:TARGET: the syntax (the workload checks CONFIG against its list, in a fail record) */
static int kcompile_alias(struct run_config *c, const char *arg, struct err *e)
{
	const char *colon = strchr(arg, ':'), *t;
	char config[KC_CONFIG_MAX];
	size_t n, i;
	int r;

	if (!colon || colon == arg || !colon[1] || strchr(colon + 1, ':'))
		return err_set(e, -EINVAL, "not CONFIG:TARGET (e.g. tinyconfig:mm/ or defconfig:vmlinux): %s", err_q(arg));
	n = (size_t)(colon - arg);
	if (n >= KC_CONFIG_MAX)
		return err_set(e, -EINVAL, "--kcompile config '%.64s' is too long", arg);
	for (i = 0; i < n; i++)
		if (!((arg[i] >= 'a' && arg[i] <= 'z') || (arg[i] >= '0' && arg[i] <= '9') || arg[i] == '_'))
			return err_set(e, -EINVAL, "--kcompile config in '%.64s': use a config target such as tinyconfig or defconfig",
				       arg);
	t = colon + 1;
	if (strlen(t) >= KC_TARGET_MAX)
		return err_set(e, -EINVAL, "--kcompile target '%.64s' is too long", t);
	if (t[0] == '-' || t[0] == '/' || t[0] == '.' || strstr(t, ".."))
		return err_set(e, -EINVAL, "--kcompile target '%.64s': a directory such as mm/ or a target such as vmlinux",
			       t);
	for (i = 0; t[i]; i++)
		if (!((t[i] >= 'a' && t[i] <= 'z') || (t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= '0' && t[i] <= '9') ||
		      t[i] == '_' || t[i] == '.' || t[i] == '/' || t[i] == '-'))
			return err_set(e, -EINVAL, "--kcompile target '%.64s': use letters, digits and _./- only", t);
	memcpy(config, arg, n);
	config[n] = '\0';
	if ((r = wl_set(c, "kcompile", "config", "%s", config)) || (r = wl_set(c, "kcompile", "target", "%s", t)))
		return wl_set_failed(r, e);
	return 0;
}

/* --exec and its options: checked by cmd/execopts against what the list already holds */
static int exec_alias(struct run_config *c, const char *opt, const char *arg, struct err *e)
{
	struct exec_opts x;
	int r;

	exec_opts_from_wlopts(&x, c->wl_opts);
	if (!strcmp(opt, "exec"))
		r = exec_opts_command(&x, arg, e) ? e->code : wl_set(c, "exec", "argv", "%s", x.argv_enc);
	else if (!strcmp(opt, "exec-metric"))
		r = exec_opts_metric(&x, arg, e) ? e->code : wl_set(c, "exec", "metric", "%s", x.metric_enc);
	else if (!strcmp(opt, "exec-direction"))
		r = exec_opts_direction(&x, arg, e) ? e->code : wl_set(c, "exec", "direction", "%s", x.dir);
	else
		r = exec_opts_timeout(&x, arg, e) ? e->code :
		    wl_set(c, "exec", "timeout", "%llu", (unsigned long long)((x.timeout_ms + 999) / 1000));
	if (r && e->code)
		return e->code;
	return r ? wl_set_failed(r, e) : 0;
}

int run_opt_alias(struct run_config *c, const char *opt, const char *arg, struct err *e)
{
	uint64_t v;
	int r;

	if (!strcmp(opt, "kcompile"))
		return kcompile_alias(c, arg, e);
	if (!strcmp(opt, "kcompile-timeout")) {
		r = parse_duration_ms(arg, &v);
		if (r || v < 10000 || v > 24ull * 3600 * 1000)
			return err_set(e, r == -ERANGE || !r ? -ERANGE : -EINVAL,
				       "not a duration from 10s to 24h (e.g. 20m, 2h): %s", err_q(arg));
		r = wl_set(c, "kcompile", "timeout", "%llu", (unsigned long long)((v + 999) / 1000));
		return r ? wl_set_failed(r, e) : 0;
	}
	if (!strncmp(opt, "exec", 4) && (!opt[4] || !strcmp(opt + 4, "-metric") || !strcmp(opt + 4, "-direction") ||
					  !strcmp(opt + 4, "-timeout")))
		return exec_alias(c, opt, arg, e);
	return -ENOENT;
}

int run_wlopts_add(struct run_config *c, const char *spec, struct err *e)
{
	struct wlopt o[WLOPTS_MAX];
	char why[ERR_MSG_MAX];
	size_t n, i;
	int r;

	if (wlopts_parse(spec, o, WLOPTS_MAX, &n, why, sizeof(why)))
		return err_set(e, -EINVAL, "%s", why);
	for (i = 0; i < n; i++)
		if ((r = wl_set(c, o[i].workload, o[i].param, "%s", o[i].value)))
			return wl_set_failed(r, e);
	return 0;
}

void run_alias_echo(const struct run_config *c, struct results *res)
{
	const struct workload_info *wi = workload_find(c->wl_info, c->n_wl_info, "kcompile");
	char config[WLOPT_VALUE_MAX], target[WLOPT_VALUE_MAX];
	size_t i;

	for (i = 0; wi && i < c->n_wl; i++)
		if (!strcmp(c->wl[i], "kcompile") && workload_opt_value(c->wl_opts, wi, "config", config, sizeof(config)) &&
		    workload_opt_value(c->wl_opts, wi, "target", target, sizeof(target)))
			snprintf(res->settings.kcompile, sizeof(res->settings.kcompile), "%.63s:%.63s", config, target);
}

/* whether the workload runs a user's command (exec: it takes --argv) */
static bool runs_command(const struct run_config *c, const char *name)
{
	const struct workload_info *wi = workload_find(c->wl_info, c->n_wl_info, name);

	return wi && workload_has_param(wi, "argv");
}

/*
 * The exec workload needs its command: 'all' without --exec leaves it out (with
 * a note); named without one, or --exec without it, or on the host, is refused.
 */
int exec_select(struct run_config *c, struct err *e)
{
	struct exec_opts x;
	size_t i, k;
	bool planned = false;

	exec_opts_from_wlopts(&x, c->wl_opts);
	for (i = 0; i < c->n_wl; i++)
		planned |= runs_command(c, c->wl[i]);
	if (planned && !x.set && !strcmp(c->workloads, "all")) {
		for (i = k = 0; i < c->n_wl; i++) {
			if (!runs_command(c, c->wl[i]))
				memmove(c->wl[k++], c->wl[i], sizeof(c->wl[0]));
			else if (!c->quiet)
				fprintf(stderr, "thpeval: --workloads=all leaves out %s: it runs the command given "
					"with --exec\n", c->wl[i]);
		}
		c->n_wl = k;
		planned = false;
	}
	if (c->n_image_pkgs && !c->target_guest)
		return err_set(e, -EINVAL, "--image-packages adds packages to the guest image: --target=host "
			       "boots no guest");
	return exec_opts_check(&x, planned, c->target_host, e);
}
