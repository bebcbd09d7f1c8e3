/*
 * fstree: file-tree chores shared by the host side (images/, the
 * orchestrator) and the guest side (guest/kcompile.c): removing a tree,
 * creating a directory and its parents, writing a file atomically, opening
 * and reading a file that must be a regular one (never hanging on a FIFO),
 * joining a path and syncing what was written.
 */
#ifndef THPEVAL_LIB_FSTREE_H
#define THPEVAL_LIB_FSTREE_H

#include <limits.h>
#include <stdbool.h>
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
 * path (created or truncated, 0644 whatever the umask) holds content, synced
 * to disk; for a file in a directory that is renamed into place once whole
 */
int write_file_synced(const char *path, const char *content, struct err *e);
/* fsync of a file or directory by its path */
int fsync_path(const char *path, struct err *e);
/* dst = "dir/name"; -ENAMETOOLONG, naming both, when that is PATH_MAX or longer */
int fstree_join(char dst[PATH_MAX], const char *dir, const char *name, struct err *e);
/* path exists and is a regular file (following links) */
bool is_regular_file(const char *path);

/*
 * Reading a file a user named, which may be anything: the type is checked
 * (stat, before the open, so a device is never opened; fstat after, on what
 * was opened), the open never blocks (O_NONBLOCK, cleared once it is known
 * to be a regular file: a FIFO cannot hang the reader), and reads are
 * bounded. Refusals are one line naming the path and what it is: "WHAT
 * 'path' is a FIFO, not a regular file". what "" leaves the word out.
 */
#define RF_NOFOLLOW 1u	/* a symbolic link at path is refused, not followed */

/* "a FIFO", "a directory", "a character device", ... for a st_mode */
const char *file_kind(mode_t mode);
/*
 * open path for reading, refused unless it is a regular file; *st is its
 * fstat. Returns the descriptor (blocking reads), or a negative errno with
 * e set: "cannot open WHAT 'path': ..." (advice added when it does not
 * exist), "WHAT 'path' is a FIFO, not a regular file".
 */
int open_regular(const char *path, const char *what, const char *advice, struct stat *st, struct err *e);
/* the same with RF_ flags */
int open_regular_flags(const char *path, const char *what, const char *advice, unsigned flags, struct stat *st,
		       struct err *e);
/*
 * The whole of a regular file into *buf (malloc'd, NUL-terminated; *len its
 * length), refused with -EFBIG when it holds more than max bytes (by its
 * size before anything is read, and while reading, should it grow).
 */
int read_regular(const char *path, const char *what, const char *advice, unsigned flags, size_t max, char **buf,
		 size_t *len, struct err *e);
/*
 * For a path handed to a library that opens it itself (SQLite): 0 when it
 * is a regular file, -ENOENT (e left alone) when there is nothing there,
 * else the refusal in e. Nothing is opened.
 */
int check_regular(const char *path, const char *what, unsigned flags, struct err *e);

#endif
