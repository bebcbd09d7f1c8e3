/*
 * fstree: file-tree chores shared by the host side (images/) and the guest
 * side (guest/kcompile.c).
 */
#ifndef THPEVAL_LIB_FSTREE_H
#define THPEVAL_LIB_FSTREE_H

/* rm -rf path without following symbolic links; best effort, never fails */
void fstree_remove(const char *path);

#endif
