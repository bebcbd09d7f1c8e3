#include "lib/fstree.h"

#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

void fstree_remove(const char *path)
{
	nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS);
}
