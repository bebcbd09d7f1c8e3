#include "host/ksm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/parse.h"

/* <root>/sys/kernel/mm/ksm/<name>; root "/" or "" is the real one */
static int ksm_path(const char *root, const char *name, char *buf, size_t len)
{
	bool top = !root || !*root || !strcmp(root, "/");
	int n = snprintf(buf, len, "%s%s/%s", top ? "" : root, KSM_SYSFS_DIR, name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool ksm_present(const char *root)
{
	char path[PATH_MAX];

	return ksm_path(root, "run", path, sizeof(path)) == 0 && access(path, F_OK) == 0;
}

static int read_counter(const char *root, const char *name, uint64_t *v, struct err *e)
{
	char path[PATH_MAX], buf[32];
	ssize_t n;
	int fd, saved;

	if (ksm_path(root, name, path, sizeof(path)))
		return err_set(e, -ENAMETOOLONG, "root '%s' is too long", root);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		saved = errno;
		return err_set(e, -saved, "cannot open '%s': %s", path, strerror(saved));
	}
	n = read(fd, buf, sizeof(buf) - 1);
	saved = errno;
	close(fd);
	if (n < 0)
		return err_set(e, -saved, "cannot read '%s': %s", path, strerror(saved));
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	if (parse_u64(buf, v))
		return err_set(e, -EINVAL, "unexpected content in '%s': expected a number", path);
	return 0;
}

int ksm_stats_read(const char *root, struct ksm_stats *out, struct err *e)
{
	int r;

	memset(out, 0, sizeof(*out));
	r = read_counter(root, "pages_shared", &out->pages_shared, e);
	if (!r)
		r = read_counter(root, "pages_sharing", &out->pages_sharing, e);
	if (!r)
		r = read_counter(root, "full_scans", &out->full_scans, e);
	return r;
}
