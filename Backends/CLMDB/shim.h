#ifndef ANYDEFAULTS_CLMDB_SHIM_H
#define ANYDEFAULTS_CLMDB_SHIM_H

#include <lmdb.h>

#ifdef __linux__
#include <fcntl.h>
#include <linux/falloc.h>

/// Allocates the first `length` bytes of the file's blocks without changing its size
/// (`fallocate` with `FALLOC_FL_KEEP_SIZE`, which the C library declares only under _GNU_SOURCE).
/// Returns 0, or -1 with errno set.
int fallocate(int fd, int mode, off_t offset, off_t len);

static inline int anydefaults_allocate_keeping_size(int fd, long long length) {
    return fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)length);
}
#endif

#endif
