#define _GNU_SOURCE
#include "np_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Refuses what would make numapin write somewhere it was not told to, or
 * hang:
 *  - a symlink as the last component (O_NOFOLLOW: ELOOP), since a log path
 *    in a shared directory may be a link planted by someone else;
 *  - anything but a regular file (EINVAL): a FIFO would block the JVM's
 *    start-up until a reader came (O_NONBLOCK makes a FIFO without reader
 *    fail with ENXIO instead), a device or socket is no log;
 *  - a file with more than one hard link (EMLINK): a link planted in a
 *    shared directory to a file the JVM's user may write;
 *  - in a world-writable sticky directory (/tmp), a file owned by another
 *    user (EACCES), as the kernel's fs.protected_regular does.
 * The directory is opened first and the file relative to it, so the
 * checks concern the directory the file was really opened in.  A file
 * created here is 0600 whatever the umask allows more of. */
static const char *const refused_link = "is a symbolic link, which numapin does not follow";
static const char *const refused_kind = "is not a regular file (a FIFO, device or socket)";
static const char *const refused_links = "has more than one hard link";
static const char *const refused_owner =
    "belongs to another user in a shared sticky directory (such as /tmp)";

/* The refusals above of an existing file, by its metadata and its
 * directory's; 0 or the errno, with *why. */
static int refuse(const struct stat *st, const struct stat *dst, const char **why)
{
    if (S_ISLNK(st->st_mode)) {
        *why = refused_link;
        return ELOOP;
    }
    if (S_ISDIR(st->st_mode))
        return EISDIR; /* as opening it to write would say */
    if (!S_ISREG(st->st_mode)) {
        *why = refused_kind;
        return EINVAL;
    }
    if (st->st_nlink > 1) {
        *why = refused_links;
        return EMLINK;
    }
    if (st->st_uid != geteuid() && (dst->st_mode & S_ISVTX) && (dst->st_mode & S_IWOTH)) {
        *why = refused_owner;
        return EACCES;
    }
    return 0;
}

/* Opens the directory of `path` (O_PATH) and finds the file's name in it.
 * Returns the descriptor, or -1 with errno. */
static int open_dir(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash != NULL ? slash + 1 : path;
    if (**base == '\0' || strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0) {
        errno = EISDIR;
        return -1;
    }
    char *dir = slash == NULL ? strdup(".") : slash == path ? strdup("/")
                                                            : strndup(path, (size_t)(slash - path));
    if (dir == NULL)
        return -1;
    int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    return dfd;
}

int np_file_open(const char *path, bool append, const char **why)
{
    const char *base, *reason = NULL;
    int dfd = open_dir(path, &base);
    if (why != NULL)
        *why = NULL;
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, base,
                    O_WRONLY | O_CREAT | (append ? O_APPEND : 0) | O_NOFOLLOW | O_NONBLOCK |
                        O_NOCTTY | O_CLOEXEC,
                    0600);
    int e = errno;
    struct stat st, dst;
    if (fd < 0 && e == ELOOP)
        reason = refused_link;
    else if (fd < 0 && e == ENXIO)
        reason = refused_kind; /* a FIFO without a reader */
    if (fd >= 0) {
        if (fstat(fd, &st) != 0 || fstat(dfd, &dst) != 0)
            e = errno;
        else if ((e = refuse(&st, &dst, &reason)) != 0)
            ;
        else if (!append && ftruncate(fd, 0) != 0) /* only once checked */
            e = errno;
        int fl;
        if (e == 0 && ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
            e = errno;
        if (e != 0) {
            close(fd);
            fd = -1;
        }
    }
    close(dfd);
    if (why != NULL && fd < 0)
        *why = reason;
    errno = e;
    return fd;
}

bool np_file_same(int fd, const char *path)
{
    struct stat a, b;
    return fstat(fd, &a) == 0 && stat(path, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int np_file_out_open(struct np_file_out *f, const char *path, const char **why)
{
    const char *base;
    f->dirfd = -1;
    if (why != NULL)
        *why = NULL;
    int dfd = open_dir(path, &base);
    if (dfd < 0)
        return -1;
    struct stat st, dst;
    int e = 0;
    const char *reason = NULL;
    if (strlen(base) >= sizeof f->base)
        e = ENAMETOOLONG;
    else if (faccessat(dfd, ".", W_OK | X_OK, AT_EACCESS) != 0)
        e = errno;
    else if (fstat(dfd, &dst) != 0)
        e = errno;
    else if (fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0)
        e = refuse(&st, &dst, &reason);
    else if (errno != ENOENT)
        e = errno;
    if (e != 0) {
        close(dfd);
        if (why != NULL)
            *why = reason;
        errno = e;
        return -1;
    }
    f->dirfd = dfd;
    snprintf(f->base, sizeof f->base, "%s", base);
    return 0;
}

int np_file_out_write(struct np_file_out *f, const char *data, size_t len)
{
    if (f->dirfd < 0)
        return EBADF;
    char tmp[64];
    snprintf(tmp, sizeof tmp, ".numapin-%d.tmp", (int)getpid());
    int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
    int fd = openat(f->dirfd, tmp, flags, 0600);
    if (fd < 0 && errno == EEXIST && unlinkat(f->dirfd, tmp, 0) == 0)
        fd = openat(f->dirfd, tmp, flags, 0600); /* left by an earlier process of this pid */
    if (fd < 0)
        return errno;
    int e = 0;
    for (size_t done = 0; e == 0 && done < len;) {
        ssize_t w = write(fd, data + done, len - done);
        if (w < 0 && errno != EINTR)
            e = errno;
        else if (w > 0)
            done += (size_t)w;
    }
    if (e == 0 && fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && e == 0)
        e = errno;
    if (e == 0 && renameat(f->dirfd, tmp, f->dirfd, f->base) != 0)
        e = errno;
    if (e != 0)
        unlinkat(f->dirfd, tmp, 0);
    return e;
}

void np_file_out_close(struct np_file_out *f)
{
    if (f->dirfd >= 0)
        close(f->dirfd);
    f->dirfd = -1;
}

int np_file_path(const char *pattern, char *out, size_t len)
{
    size_t o = 0;
    for (const char *p = pattern; *p != '\0'; p++) {
        char pid[24];
        const char *add = pid;
        if (*p != '%') {
            pid[0] = *p;
            pid[1] = '\0';
        } else if (p[1] == 'p') {
            snprintf(pid, sizeof pid, "%d", (int)getpid());
            p++;
        } else if (p[1] == '%') {
            add = "%";
            p++;
        } else {
            errno = EINVAL;
            return -1;
        }
        size_t n = strlen(add);
        if (o + n >= len) {
            errno = ENAMETOOLONG;
            return -1;
        }
        memcpy(out + o, add, n);
        o += n;
    }
    if (len == 0) {
        errno = ENAMETOOLONG;
        return -1;
    }
    out[o] = '\0';
    return 0;
}
