/*
 * doc/thpeval.1 against the option tables: every option of every command is
 * documented in that command's section (with its metavar), and a section
 * documents no option its command does not have. The option tables (each
 * command's, in cmd/) are checked directly; every command that `thpeval help`
 * lists again through `bin/thpeval help COMMAND` when the binary is built
 * (skipped otherwise).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "orchestrator/cmd/cli.h"
#include "orchestrator/cmd/commands.h"
#include "tests/orchestrator/fixture.h"

#define MAX_OPTS 64

/* the text of ".SS name" up to the next .SS or .SH; NULL if absent */
static char *section(const char *man, const char *name)
{
	char head[64];
	const char *s, *end, *e2;
	size_t n;

	snprintf(head, sizeof(head), "\n.SS %s\n", name);
	s = strstr(man, head);
	if (!s)
		return NULL;
	s += strlen(head);
	end = strstr(s, "\n.SS ");
	e2 = strstr(s, "\n.SH ");
	if (!end || (e2 && e2 < end))
		end = e2;
	n = end ? (size_t)(end - s) : strlen(s);
	return strndup(s, n);
}

/* every "--name" token in text */
static size_t doc_options(const char *text, char names[][48], size_t max)
{
	const char *p = text;
	size_t n = 0;

	while ((p = strstr(p, "--"))) {
		const char *q = p + 2;
		size_t len = 0, k;
		bool dup = false;

		if ((p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '-')) || !islower((unsigned char)*q)) {
			p += 2;
			continue;
		}
		while (islower((unsigned char)q[len]) || isdigit((unsigned char)q[len]) || q[len] == '-')
			len++;
		while (len && q[len - 1] == '-')
			len--;
		for (k = 0; k < n; k++)
			dup |= strlen(names[k]) == len && !strncmp(names[k], q, len);
		if (!dup && n < max && len < 48) {
			memcpy(names[n], q, len);
			names[n++][len] = '\0';
		}
		p = q + len;
	}
	return n;
}

struct optdoc {
	char name[48];
	char arg[48];		/* "" for a flag */
};

static void check_section(const char *man, const char *cmd, const struct optdoc *opts, size_t nopts)
{
	char *sec = section(man, cmd), found[MAX_OPTS * 2][48], want[128];
	size_t i, k, n;

	if (!sec)
		fail_msg("doc/thpeval.1 has no '.SS %s' section for 'thpeval %s'", cmd, cmd);
	for (i = 0; i < nopts; i++) {
		if (opts[i].arg[0])
			snprintf(want, sizeof(want), "--%s=%s", opts[i].name, opts[i].arg);
		else
			snprintf(want, sizeof(want), "--%s", opts[i].name);
		if (!strstr(sec, want))
			fail_msg("doc/thpeval.1: section '%s' does not document '%s'", cmd, want);
	}
	n = doc_options(sec, found, MAX_OPTS * 2);
	for (k = 0; k < n; k++) {
		bool known = !strcmp(found[k], "help");

		for (i = 0; i < nopts && !known; i++)
			known = !strcmp(found[k], opts[i].name);
		if (!known)
			fail_msg("doc/thpeval.1: section '%s' documents '--%s', which 'thpeval %s' does not have",
				 cmd, found[k], cmd);
	}
	print_message("  %-8s %zu options documented\n", cmd, nopts);
	free(sec);
}

static size_t table_opts(const struct command *c, struct optdoc *out)
{
	size_t i;

	assert_true(c->nopts <= MAX_OPTS);
	for (i = 0; i < c->nopts; i++) {
		snprintf(out[i].name, sizeof(out[i].name), "%s", c->opts[i].name);
		snprintf(out[i].arg, sizeof(out[i].arg), "%s", c->opts[i].arg ? c->opts[i].arg : "");
	}
	return c->nopts;
}

static void test_linked_tables(void **state)
{
	const struct command *const cmds[] = { &run_cmd, &host_cmd, &image_cmd, &report_cmd,
						 &compare_cmd, &history_cmd };
	struct optdoc opts[MAX_OPTS];
	char *man = fixture_man_text();
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		check_section(man, cmds[i]->name, opts, table_opts(cmds[i], opts));
	free(man);
}

/* options from `thpeval help CMD`: lines "  --name=ARG   text" or "  --name   text" */
static size_t help_opts(const char *bin, const char *cmd, struct optdoc *out, bool *known)
{
	char line[512], shell[4300];
	size_t n = 0;
	FILE *p;

	snprintf(shell, sizeof(shell), "'%s' help '%s' 2>/dev/null", bin, cmd);
	p = popen(shell, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *s = line + 2, *end;

		if (strncmp(line, "  --", 4) || !strncmp(s, "--help", 6))
			continue;
		end = s + strcspn(s, " \n");
		*end = '\0';
		s += 2;
		assert_true(n < MAX_OPTS);
		assert_true(strlen(s) < sizeof(out[n].name));
		if (strchr(s, '=')) {
			strcpy(out[n].arg, strchr(s, '=') + 1);
			*strchr(s, '=') = '\0';
		} else {
			out[n].arg[0] = '\0';
		}
		strcpy(out[n].name, s);
		n++;
	}
	*known = pclose(p) == 0;
	return n;
}

static void test_all_commands_via_binary(void **state)
{
	char bin[4096], line[512], shell[4300];
	struct optdoc opts[MAX_OPTS];
	char *man = fixture_man_text();
	bool in_list = false;
	size_t ncmds = 0;
	FILE *p;

	fixture_path(bin, sizeof(bin), "bin/thpeval");
	if (access(bin, X_OK) != 0) {
		print_message("skipped: %s not built (make)\n", bin);
		free(man);
		skip();
	}
	snprintf(shell, sizeof(shell), "'%s' help", bin);
	p = popen(shell, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char name[32];
		bool known;
		size_t n;

		if (!strncmp(line, "commands:", 9)) {
			in_list = true;
			continue;
		}
		if (!in_list || strncmp(line, "  ", 2) || sscanf(line, " %31[a-z]", name) != 1)
			continue;
		ncmds++;
		n = help_opts(bin, name, opts, &known);
		if (!strcmp(name, "help") || !strcmp(name, "version") || n == 0) {
			char head[64];

			snprintf(head, sizeof(head), "\n.SS %s\n", name);
			if (!strstr(man, head))
				fail_msg("doc/thpeval.1 has no '.SS %s' section", name);
			continue;
		}
		check_section(man, name, opts, n);
	}
	pclose(p);
	assert_true(ncmds >= 5);
	free(man);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linked_tables),
		cmocka_unit_test(test_all_commands_via_binary),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
