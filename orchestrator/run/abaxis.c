#include "orchestrator/run/abaxis.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* one emulator: an absolute path to an executable regular file */
static int check_emulator(const char *path, struct err *e)
{
	struct stat st;

	if (path[0] != '/')
		return err_set(e, -EINVAL, "not an absolute path: give the QEMU binary's full path, "
			       "e.g. /usr/bin/qemu-system-x86_64: %s", err_q(path));
	if (stat(path, &st)) {
		int saved = errno;

		return err_set(e, -saved, "%s: %s", strerror(saved), err_q(path));
	}
	if (!S_ISREG(st.st_mode) || access(path, X_OK))
		return err_set(e, -EACCES, "not an executable file: %s", err_q(path));
	return 0;
}

int ab_emulator_parse(struct run_config *c, const char *arg, struct err *e)
{
	const char *comma = strchr(arg, ',');
	size_t la = comma ? (size_t)(comma - arg) : strlen(arg);
	unsigned i;
	int r;

	if (comma && strchr(comma + 1, ','))
		return err_set(e, -EINVAL, "give one or two QEMU binaries, A or A,B: %s", err_q(arg));
	if (la == 0 || (comma && !comma[1]))
		return err_set(e, -EINVAL, "an empty path: give A or A,B: %s", err_q(arg));
	if (la >= sizeof(c->emulator[0]) || (comma && strlen(comma + 1) >= sizeof(c->emulator[1])))
		return err_set(e, -ENAMETOOLONG, "path too long");
	memcpy(c->emulator[0], arg, la);
	c->emulator[0][la] = '\0';
	c->n_emulator = 1;
	if (comma) {
		strcpy(c->emulator[1], comma + 1);
		c->n_emulator = 2;
	}
	for (i = 0; i < c->n_emulator; i++)
		if ((r = check_emulator(c->emulator[i], e)))
			return r;
	return 0;
}

unsigned ab_arms(const struct run_config *c)
{
	return c->n_emulator == 2 ? 2 : 1;
}

const char *ab_arm_name(const struct run_config *c, unsigned arm)
{
	if (ab_arms(c) < 2)
		return "";
	return arm ? "B" : "A";
}

const char *ab_emulator(const struct run_config *c, unsigned arm)
{
	if (c->n_emulator == 0)
		return NULL;
	return c->emulator[arm < c->n_emulator ? arm : 0];
}

void ab_echo(const struct run_config *c, struct results *res)
{
	struct run_settings *s = &res->settings;

	if (c->n_emulator == 2)
		snprintf(s->emulator, sizeof(s->emulator), "%s,%s", c->emulator[0], c->emulator[1]);
	else if (c->n_emulator == 1)
		snprintf(s->emulator, sizeof(s->emulator), "%s", c->emulator[0]);
}
