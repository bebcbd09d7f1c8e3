/* thpeval host: show, set or restore the host's transparent hugepage settings */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "host/journal.h"
#include "host/thp.h"
#include "lib/err.h"
#include "orchestrator/cmd/commands.h"
#include "orchestrator/virt/migrate.h"
#include "orchestrator/virt/virt.h"

enum host_opt { HO_SYSFS_ROOT, HO_STATE_DIR };

struct host_args {
	char root[PATH_MAX];
	char state_dir[PATH_MAX];
};

static const struct opt host_opts[] = {
	{ .name = "sysfs-root", .arg = "DIR", .def = "/", .id = HO_SYSFS_ROOT, .type = OPT_STRING,
	  OPT_AT(struct host_args, root), .what = "sysfs root",
	  .help = "root under which /sys is read and written (tests)" },
	{ .name = "state-dir", .arg = "DIR", .def = "/var/lib/thpeval", .id = HO_STATE_DIR, .type = OPT_STRING,
	  OPT_AT(struct host_args, state_dir), .what = "state", .help = "host settings journal and lock" },
};

const struct command host_cmd = {
	.name = "host",
	.args = "show | set KEY=VALUE... | restore",
	.summary = "Show, change or restore the host's transparent hugepage settings.",
	.details = "show     every THP knob this kernel offers, with its current value\n"
		   "set      validate all KEY=VALUE pairs, then write them (keys are relative to\n"
		   "         /sys/kernel/mm/transparent_hugepage, e.g. enabled, defrag,\n"
		   "         khugepaged/defrag, hugepages-64kB/enabled)\n"
		   "restore  put back the settings a killed 'thpeval run' left changed (journal)",
	CLI_OPTS(host_opts),
};

/* every host option is typed: nothing for a callback */
static int host_opt(void *ctx, int id, const char *arg, struct err *e)
{
	(void)ctx;
	(void)arg;
	return err_set(e, -EINVAL, "internal: unhandled option %d", id);
}

static int host_show(const struct host_args *a)
{
	struct thp_settings s;
	struct err e = ERR_INIT;
	size_t i;

	if (thp_settings_read(a->root, &s, &e))
		return cmd_fail(&e, CMD_ERROR);
	if (s.n == 0) {
		cmd_error("no transparent hugepage support under '%s%s'", a->root, THP_DIR);
		return CMD_ERROR;
	}
	for (i = 0; i < s.n; i++)
		printf("%-36s %s\n", s.s[i].key, s.s[i].value);
	return CMD_OK;
}

static int host_set(const struct host_args *a, int argc, char **argv)
{
	struct host_lock lock = HOST_LOCK_INIT;
	char lockdir[PATH_MAX];
	struct err e = ERR_INIT;
	char key[THP_KEY_MAX], old[THP_VAL_MAX];
	int i, j;

	if (argc == 0) {
		cmd_error("host set: give at least one KEY=VALUE, e.g. 'thpeval host set enabled=always'");
		return CMD_USAGE;
	}
	/* validate everything before changing anything */
	for (i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t kl = eq ? (size_t)(eq - argv[i]) : 0;

		if (!eq || kl == 0 || kl >= sizeof(key) || !eq[1]) {
			cmd_error("host set: not KEY=VALUE: %s", err_q(argv[i]));
			return CMD_USAGE;
		}
		memcpy(key, argv[i], kl);
		key[kl] = '\0';
		for (j = 0; j < i; j++)	/* one value per knob: the last would win, the first be written too */
			if (!strncmp(argv[j], argv[i], kl + 1)) {
				cmd_error("host set: %s is given twice (%s and %s): give each knob once", err_q(key),
					  err_q(argv[j]), err_q(argv[i]));
				return CMD_USAGE;
			}
		if (thp_validate(a->root, key, eq + 1, &e))
			return cmd_fail(&e, CMD_USAGE);
	}
	if (cmd_is_host_root(a->root) && cmd_need_root("thpeval host set"))
		return CMD_ERROR;
	/* never under a running thpeval: its journal would restore over this */
	if (host_lock_dir(a->root, lockdir, sizeof(lockdir), &e) || host_lock_take(&lock, lockdir, NULL, &e))
		return cmd_fail(&e, CMD_ERROR);
	for (i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t kl = (size_t)(eq - argv[i]);

		memcpy(key, argv[i], kl);
		key[kl] = '\0';
		if (thp_read_one(a->root, key, old, sizeof(old), &e) || thp_write(a->root, key, eq + 1, &e)) {
			host_lock_release(&lock);
			return cmd_fail(&e, CMD_ERROR);
		}
		printf("%s: %s -> %s\n", key, old, eq + 1);
	}
	host_lock_release(&lock);
	return CMD_OK;
}

/*
 * What a killed run left besides host settings: the migration arms' second
 * libvirt daemon with its guests, and guests of dead runs on the default
 * daemon (a migration's source). Only on the real host: a fake root has none.
 */
static void restore_guests(const struct host_args *a)
{
	struct err e = ERR_INIT;
	struct virt *v = NULL;
	char what[256];
	bool found = false;
	int removed = 0;

	if (!cmd_is_host_root(a->root))
		return;
	if (migd_reap_stale(a->state_dir, &found, what, sizeof(what), &e))
		cmd_error("host restore: %s", e.msg);
	else if (found)
		printf("second libvirt daemon of a killed run: %s\n", what);
	err_clear(&e);
	if (virt_open(NULL, &v, &e))
		return;	/* no libvirtd here: no guests to remove */
	if (virt_reap_stale(v, &removed, &e))
		cmd_error("host restore: %s", e.msg);
	if (removed)
		printf("removed %d guest(s) left by a killed thpeval run\n", removed);
	virt_close(v);
}

static int host_restore(const struct host_args *a)
{
	struct err e = ERR_INIT;
	char holder[256] = "";
	bool restored = false;

	if (cmd_is_host_root(a->root) && cmd_need_root("thpeval host restore"))
		return CMD_ERROR;
	if (host_restore_journal(a->root, a->state_dir, &restored, holder, sizeof(holder), &e))
		return cmd_fail(&e, CMD_ERROR);
	restore_guests(a);
	if (restored)
		printf("host THP settings restored from the journal\n");
	else if (holder[0])
		printf("nothing to restore: no journal of a killed run (%s)\n", holder);
	else
		printf("nothing to restore: no journal of a killed run\n");
	return CMD_OK;
}

static int host_main(int argc, char **argv)
{
	struct host_args a = { "", "" };
	struct err e = ERR_INIT;
	bool help;
	int first;

	if (cli_defaults(&host_cmd, host_opt, &a, &e))
		return cmd_fail(&e, CMD_ERROR);
	if (cli_parse(&host_cmd, argc, argv, host_opt, &a, &first, &help, NULL, &e))
		return cmd_fail(&e, CMD_USAGE);
	if (help) {
		cli_help(&host_cmd, stdout);
		return CMD_OK;
	}
	if (first >= argc) {
		cmd_error("host: missing subcommand: show, set or restore");
		return CMD_USAGE;
	}
	if (!strcmp(argv[first], "show") && first + 1 == argc)
		return host_show(&a);
	if (!strcmp(argv[first], "set"))
		return host_set(&a, argc - first - 1, argv + first + 1);
	if (!strcmp(argv[first], "restore") && first + 1 == argc)
		return host_restore(&a);
	cmd_error("host: unknown subcommand or extra arguments at '%s': use show, set KEY=VALUE... or restore",
		  argv[first]);
	return CMD_USAGE;
}

int cmd_host(int argc, char **argv)
{
	return cmd_options_first(&host_cmd, host_main, argc, argv);
}
