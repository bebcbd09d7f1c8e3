/*
 * fstree: file-tree chores shared by the host side (images/, the
 * orchestrator) and the guest side (guest/kcompile.c): removing a tree,
 * creating a directory and its parents, writing a file atomically, opening a
 * file that must be a regular one.
 */
#ifndef THPEVAL_LIB_FSTREE_H
#define THPEVAL_LIB_FSTREE_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "lib/err.h"

/* rm -rf path without following symbolic links; best effort, never fails */
void fstree_remove(const char *path);

/* mkdir -p path: each missing directory created with exactly mode (chmod after
 * mkdir, so the umask does not narrow it); existing ones are left as they are */
int mkdir_p(const char *path, mode_t mode, struct err *e);
/* mkdir_p of the directories above path (path itself is a file to be) */
int mkdir_parents(const char *path, mode_t mode, struct err *e);
/*
 * path's content becomes buf whole or not at all: written to a temporary
 * beside it (never following or reusing what someone else put there), synced,
 * renamed over path, the directory synced.
 */
int write_file_atomic(const char *path, const char *buf, size_t len, mode_t mode, struct err *e);

/*
 * open path for reading, refused unless it is a regular file; *st is its
 * fstat. Returns the descriptor, or a negative errno with e set: "cannot open
 * WHAT 'path': ..." (advice added when it does not exist), "cannot stat ...",
 * "WHAT 'path' is not a regular file"; what "" leaves the word out.
 */
int open_regular(const char *path, const char *what, const char *advice, struct stat *st, struct err *e);

#endif
