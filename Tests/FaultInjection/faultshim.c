// faultshim: an LD_PRELOAD library that counts the file-system calls a process makes on the files
// under one directory and fails a chosen one, for the fault-injection tests
// (Tests/AnyDefaultsCLITests/FaultInjectionTests.swift, Docs/Reliability.md "Fault injection").
//
// It interposes libc's functions, so it reaches every caller that goes through the dynamic
// linker: the tool's Swift code, Foundation, libsqlite3 and liblmdb (a seam in Swift could not
// reach the two C libraries). Linux with glibc only. The tests build it themselves:
//
//     cc -shared -fPIC -O1 -o faultshim.so faultshim.c -ldl
//
// Environment (read once, at load):
//   FAULTSHIM_DIR      the directory whose files count (absolute; nothing counts without it)
//   FAULTSHIM_FAIL     the number (from 1) of the counted call to fail; 0 or unset: none
//   FAULTSHIM_PERSIST  1: fail that call and every counted call after it; else only that one
//   FAULTSHIM_ERRNO    the error to fail with: EIO (default), ENOSPC, or a number
//   FAULTSHIM_LOG      a file to append one line per counted call to:
//                      "<pid> <number> <class> <function> <ok|FAIL> <path or fd>"
//
// Classes of counted calls: open (open, openat, creat: every open of a path under the directory,
// reading ones too), mkdir, write (write, pwrite, writev, pwritev on a descriptor opened under
// it; "dwrite" in the log when the descriptor was opened with O_SYNC or O_DSYNC, which makes the
// write a sync), sync (fsync, fdatasync), rename (either name under the directory), unlink
// (unlink, unlinkat), truncate (ftruncate, truncate), lock (flock and fcntl lock requests that
// take a lock; releases are not counted, they cannot usefully fail). Descriptors are followed
// through dup, dup2, dup3 and F_DUPFD, and forgotten on close.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FDS 65536
enum { FD_NONE = 0, FD_TRACKED = 1, FD_SYNCED = 2 };

static char shim_dir[PATH_MAX];
static size_t shim_dir_length;
static long shim_fail_at;
static int shim_persist;
static int shim_errno = EIO;
static int shim_log = -1;
static long shim_counter;
static unsigned char shim_fds[MAX_FDS];

static void *real(const char *name) {
    void *function = dlsym(RTLD_NEXT, name);
    if (!function) {
        static const char message[] = "faultshim: a libc function is missing\n";
        syscall(SYS_write, 2, message, sizeof message - 1);
        abort();
    }
    return function;
}

#define REAL(type, name, ...)                                                      \
    static type (*real_##name)(__VA_ARGS__);                                       \
    if (!real_##name) real_##name = (type (*)(__VA_ARGS__))real(#name)

__attribute__((constructor)) static void shim_load(void) {
    const char *dir = getenv("FAULTSHIM_DIR");
    if (dir && dir[0] == '/' && strlen(dir) < sizeof shim_dir) {
        strcpy(shim_dir, dir);
        shim_dir_length = strlen(shim_dir);
        while (shim_dir_length > 1 && shim_dir[shim_dir_length - 1] == '/') shim_dir[--shim_dir_length] = 0;
    }
    const char *fail = getenv("FAULTSHIM_FAIL");
    if (fail) shim_fail_at = strtol(fail, NULL, 10);
    const char *persist = getenv("FAULTSHIM_PERSIST");
    shim_persist = persist && strcmp(persist, "1") == 0;
    const char *error = getenv("FAULTSHIM_ERRNO");
    if (error) {
        if (strcmp(error, "EIO") == 0) shim_errno = EIO;
        else if (strcmp(error, "ENOSPC") == 0) shim_errno = ENOSPC;
        else if (atoi(error) > 0) shim_errno = atoi(error);
    }
    const char *log = getenv("FAULTSHIM_LOG");
    // The log is opened and written with raw system calls, so that it is never counted itself.
    if (log) shim_log = (int)syscall(SYS_openat, AT_FDCWD, log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
}

static int active(void) { return shim_dir_length > 0; }

static int path_under(const char *path) {
    if (!path || !active()) return 0;
    return strncmp(path, shim_dir, shim_dir_length) == 0 &&
           (path[shim_dir_length] == 0 || path[shim_dir_length] == '/' || shim_dir_length == 1);
}

static int fd_state(int fd) { return fd >= 0 && fd < MAX_FDS ? __atomic_load_n(&shim_fds[fd], __ATOMIC_RELAXED) : FD_NONE; }

static void fd_mark(int fd, int state) {
    if (fd >= 0 && fd < MAX_FDS) __atomic_store_n(&shim_fds[fd], (unsigned char)state, __ATOMIC_RELAXED);
}

// Whether `path` (relative to `dirfd`) names something under the directory.
static int at_under(int dirfd, const char *path) {
    if (!path || !active()) return 0;
    if (path[0] == '/') return path_under(path);
    if (dirfd != AT_FDCWD) return fd_state(dirfd) != FD_NONE;
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd)) return 0;
    char full[PATH_MAX * 2];
    snprintf(full, sizeof full, "%s/%s", cwd, path);
    return path_under(full);
}

// Counts a call; returns 1 if it is to fail (errno is then set).
static int count(const char *class_name, const char *function, const char *path, int fd) {
    long number = __atomic_add_fetch(&shim_counter, 1, __ATOMIC_SEQ_CST);
    int fail = shim_fail_at > 0 && (number == shim_fail_at || (shim_persist && number > shim_fail_at));
    if (shim_log >= 0) {
        char line[PATH_MAX + 128];
        int length;
        if (path) length = snprintf(line, sizeof line, "%d %ld %s %s %s %s\n", (int)getpid(), number, class_name, function, fail ? "FAIL" : "ok", path);
        else length = snprintf(line, sizeof line, "%d %ld %s %s %s fd:%d\n", (int)getpid(), number, class_name, function, fail ? "FAIL" : "ok", fd);
        if (length > 0) syscall(SYS_write, shim_log, line, (size_t)(length < (int)sizeof line ? length : (int)sizeof line - 1));
    }
    return fail;
}

static int opened(int fd, int flags, int under) {
    if (fd >= 0 && fd < MAX_FDS) fd_mark(fd, under ? ((flags & (O_SYNC | O_DSYNC)) ? FD_SYNCED : FD_TRACKED) : FD_NONE);
    return fd;
}

static int open_mode_needed(int flags) { return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE; }

// MARK: open

static int do_openat(const char *function, int dirfd, const char *path, int flags, mode_t mode) {
    REAL(int, openat, int, const char *, int, ...);
    int under = at_under(dirfd, path);
    if (under && count("open", function, path, -1)) { errno = shim_errno; return -1; }
    return opened(real_openat(dirfd, path, flags, mode), flags, under);
}

int open(const char *path, int flags, ...) {
    mode_t mode = 0;
    if (open_mode_needed(flags)) { va_list list; va_start(list, flags); mode = va_arg(list, mode_t); va_end(list); }
    return do_openat("open", AT_FDCWD, path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    mode_t mode = 0;
    if (open_mode_needed(flags)) { va_list list; va_start(list, flags); mode = va_arg(list, mode_t); va_end(list); }
    return do_openat("open", AT_FDCWD, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    if (open_mode_needed(flags)) { va_list list; va_start(list, flags); mode = va_arg(list, mode_t); va_end(list); }
    return do_openat("openat", dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    if (open_mode_needed(flags)) { va_list list; va_start(list, flags); mode = va_arg(list, mode_t); va_end(list); }
    return do_openat("openat", dirfd, path, flags, mode);
}

int creat(const char *path, mode_t mode) { return do_openat("creat", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode); }
int creat64(const char *path, mode_t mode) { return do_openat("creat", AT_FDCWD, path, O_CREAT | O_WRONLY | O_TRUNC, mode); }

int mkdir(const char *path, mode_t mode) {
    REAL(int, mkdir, const char *, mode_t);
    if (path_under(path) || (path && path[0] != '/' && at_under(AT_FDCWD, path))) {
        if (count("mkdir", "mkdir", path, -1)) { errno = shim_errno; return -1; }
    }
    return real_mkdir(path, mode);
}

int mkdirat(int dirfd, const char *path, mode_t mode) {
    REAL(int, mkdirat, int, const char *, mode_t);
    if (at_under(dirfd, path) && count("mkdir", "mkdirat", path, -1)) { errno = shim_errno; return -1; }
    return real_mkdirat(dirfd, path, mode);
}

// MARK: descriptors

int close(int fd) {
    REAL(int, close, int);
    fd_mark(fd, FD_NONE);
    return real_close(fd);
}

int dup(int fd) {
    REAL(int, dup, int);
    int copy = real_dup(fd);
    if (copy >= 0) fd_mark(copy, fd_state(fd));
    return copy;
}

int dup2(int fd, int target) {
    REAL(int, dup2, int, int);
    int copy = real_dup2(fd, target);
    if (copy >= 0) fd_mark(copy, fd_state(fd));
    return copy;
}

int dup3(int fd, int target, int flags) {
    REAL(int, dup3, int, int, int);
    int copy = real_dup3(fd, target, flags);
    if (copy >= 0) fd_mark(copy, fd_state(fd));
    return copy;
}

// MARK: writes

static int write_fails(const char *function, int fd) {
    int state = fd_state(fd);
    if (state == FD_NONE) return 0;
    return count(state == FD_SYNCED ? "dwrite" : "write", function, NULL, fd);
}

ssize_t write(int fd, const void *buffer, size_t size) {
    REAL(ssize_t, write, int, const void *, size_t);
    if (write_fails("write", fd)) { errno = shim_errno; return -1; }
    return real_write(fd, buffer, size);
}

ssize_t pwrite(int fd, const void *buffer, size_t size, off_t offset) {
    REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
    if (write_fails("pwrite", fd)) { errno = shim_errno; return -1; }
    return real_pwrite(fd, buffer, size, offset);
}

ssize_t pwrite64(int fd, const void *buffer, size_t size, off_t offset) {
    REAL(ssize_t, pwrite64, int, const void *, size_t, off_t);
    if (write_fails("pwrite64", fd)) { errno = shim_errno; return -1; }
    return real_pwrite64(fd, buffer, size, offset);
}

ssize_t writev(int fd, const struct iovec *vector, int count_) {
    REAL(ssize_t, writev, int, const struct iovec *, int);
    if (write_fails("writev", fd)) { errno = shim_errno; return -1; }
    return real_writev(fd, vector, count_);
}

ssize_t pwritev(int fd, const struct iovec *vector, int count_, off_t offset) {
    REAL(ssize_t, pwritev, int, const struct iovec *, int, off_t);
    if (write_fails("pwritev", fd)) { errno = shim_errno; return -1; }
    return real_pwritev(fd, vector, count_, offset);
}

// MARK: syncs

int fsync(int fd) {
    REAL(int, fsync, int);
    if (fd_state(fd) != FD_NONE && count("sync", "fsync", NULL, fd)) { errno = shim_errno; return -1; }
    return real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(int, fdatasync, int);
    if (fd_state(fd) != FD_NONE && count("sync", "fdatasync", NULL, fd)) { errno = shim_errno; return -1; }
    return real_fdatasync(fd);
}

// MARK: names

int rename(const char *from, const char *to) {
    REAL(int, rename, const char *, const char *);
    if ((at_under(AT_FDCWD, from) || at_under(AT_FDCWD, to)) && count("rename", "rename", to, -1)) { errno = shim_errno; return -1; }
    return real_rename(from, to);
}

int renameat(int fromfd, const char *from, int tofd, const char *to) {
    REAL(int, renameat, int, const char *, int, const char *);
    if ((at_under(fromfd, from) || at_under(tofd, to)) && count("rename", "renameat", to, -1)) { errno = shim_errno; return -1; }
    return real_renameat(fromfd, from, tofd, to);
}

int renameat2(int fromfd, const char *from, int tofd, const char *to, unsigned int flags) {
    REAL(int, renameat2, int, const char *, int, const char *, unsigned int);
    if ((at_under(fromfd, from) || at_under(tofd, to)) && count("rename", "renameat2", to, -1)) { errno = shim_errno; return -1; }
    return real_renameat2(fromfd, from, tofd, to, flags);
}

int unlink(const char *path) {
    REAL(int, unlink, const char *);
    if (at_under(AT_FDCWD, path) && count("unlink", "unlink", path, -1)) { errno = shim_errno; return -1; }
    return real_unlink(path);
}

int unlinkat(int dirfd, const char *path, int flags) {
    REAL(int, unlinkat, int, const char *, int);
    if (at_under(dirfd, path) && count("unlink", "unlinkat", path, -1)) { errno = shim_errno; return -1; }
    return real_unlinkat(dirfd, path, flags);
}

// MARK: truncation

int ftruncate(int fd, off_t length) {
    REAL(int, ftruncate, int, off_t);
    if (fd_state(fd) != FD_NONE && count("truncate", "ftruncate", NULL, fd)) { errno = shim_errno; return -1; }
    return real_ftruncate(fd, length);
}

int ftruncate64(int fd, off_t length) {
    REAL(int, ftruncate64, int, off_t);
    if (fd_state(fd) != FD_NONE && count("truncate", "ftruncate64", NULL, fd)) { errno = shim_errno; return -1; }
    return real_ftruncate64(fd, length);
}

int truncate(const char *path, off_t length) {
    REAL(int, truncate, const char *, off_t);
    if (at_under(AT_FDCWD, path) && count("truncate", "truncate", path, -1)) { errno = shim_errno; return -1; }
    return real_truncate(path, length);
}

// MARK: locks

int flock(int fd, int operation) {
    REAL(int, flock, int, int);
    if (fd_state(fd) != FD_NONE && !(operation & LOCK_UN) && count("lock", "flock", NULL, fd)) { errno = shim_errno; return -1; }
    return real_flock(fd, operation);
}

static int do_fcntl(const char *function, int (*call)(int, int, ...), int fd, int command, void *argument) {
    switch (command) {
    case F_SETLK: case F_SETLKW: case F_OFD_SETLK: case F_OFD_SETLKW: {
        const struct flock *lock = argument;
        if (fd_state(fd) != FD_NONE && lock && lock->l_type != F_UNLCK && count("lock", function, NULL, fd)) {
            errno = shim_errno;
            return -1;
        }
        return call(fd, command, argument);
    }
    case F_DUPFD: case F_DUPFD_CLOEXEC: {
        int copy = call(fd, command, argument);
        if (copy >= 0) fd_mark(copy, fd_state(fd));
        return copy;
    }
    default:
        return call(fd, command, argument);
    }
}

// Every fcntl command's argument fits a pointer (an int is passed in the same register), so it
// is passed on as one.
int fcntl(int fd, int command, ...) {
    REAL(int, fcntl, int, int, ...);
    va_list list;
    va_start(list, command);
    void *argument = va_arg(list, void *);
    va_end(list);
    return do_fcntl("fcntl", real_fcntl, fd, command, argument);
}

int fcntl64(int fd, int command, ...) {
    REAL(int, fcntl64, int, int, ...);
    va_list list;
    va_start(list, command);
    void *argument = va_arg(list, void *);
    va_end(list);
    return do_fcntl("fcntl64", real_fcntl64, fd, command, argument);
}
