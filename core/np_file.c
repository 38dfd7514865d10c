#define _GNU_SOURCE
#include "np_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
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

int np_file_replace(int dirfd, const char *name, const void *data, size_t len, bool sync)
{
    /* The temporary name is new to the directory (O_EXCL) and random, so
     * that writers sharing the directory from other PID namespaces, where
     * process ids repeat, never write into each other's file. */
    char tmp[64];
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 16; tries++) {
        uint64_t r = 0;
        if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            r = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^ (uint64_t)tries;
        }
        snprintf(tmp, sizeof tmp, ".numapin-%d-%016llx.tmp", (int)getpid(), (unsigned long long)r);
        fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return errno;
    }
    if (fd < 0)
        return EEXIST;
    int e = 0;
    const char *p = data;
    for (size_t done = 0; e == 0 && done < len;) {
        ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno != EINTR)
            e = errno;
        else if (w > 0)
            done += (size_t)w;
    }
    if (e == 0 && sync && fsync(fd) != 0)
        e = errno;
    if (close(fd) != 0 && e == 0)
        e = errno;
    if (e == 0 && renameat(dirfd, tmp, dirfd, name) != 0)
        e = errno;
    if (e != 0)
        unlinkat(dirfd, tmp, 0);
    return e;
}

int np_file_out_write(struct np_file_out *f, const char *data, size_t len)
{
    if (f->dirfd < 0)
        return EBADF;
    return np_file_replace(f->dirfd, f->base, data, len, true);
}

void np_file_out_close(struct np_file_out *f)
{
    if (f->dirfd >= 0)
        close(f->dirfd);
    f->dirfd = -1;
}

/* The access that bits (r, w, x of one class) give to a directory, in
 * words: "read, write and search". */
static const char *access_words(unsigned bits)
{
    static const char *const words[8] = {
        "no", "search", "write", "write and search", "read", "read and search", "read and write",
        "read, write and search",
    };
    return words[bits & 7];
}

/* Why a lock directory of mode `mode` is not private, into buf: who besides
 * its owner has which access ("its group has read and search access"). */
static void shared_access(char *buf, size_t len, unsigned mode)
{
    unsigned group = (mode >> 3) & 7, other = mode & 7;
    if (group != 0 && group == other)
        snprintf(buf, len, "its group and others have %s access", access_words(group));
    else if (group != 0 && other != 0)
        snprintf(buf, len, "its group has %s access and others %s access", access_words(group),
                 access_words(other));
    else if (group != 0)
        snprintf(buf, len, "its group has %s access", access_words(group));
    else
        snprintf(buf, len, "others have %s access", access_words(other));
}

const char *np_file_private_default(char *buf, size_t len)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg != NULL && xdg[0] == '/')
        snprintf(buf, len, "%s/numapin", xdg);
    else
        snprintf(buf, len, "/tmp/numapin-%u", (unsigned)getuid());
    return buf;
}

int np_file_private_dir(const char *dir, const char *what, const char *option, char *err,
                        size_t errlen)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create the %s %s: %s", what, dir,
                 strerror(errno));
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open the %s %s: %s%s", what, dir,
                 strerror(errno), errno == ELOOP || errno == ENOTDIR ? " (not a plain directory)" : "");
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot read the %s %s: %s", what, dir, strerror(errno));
        close(fd);
        return -1;
    }
    unsigned uid = (unsigned)getuid(), mode = (unsigned)(st.st_mode & 0777);
    char shared[160];
    shared_access(shared, sizeof shared, mode);
    if (st.st_uid != uid) {
        char also[300] = "";
        if ((mode & 077) != 0)
            snprintf(also, sizeof also, " and chmod 700 %s (%s, mode %03o)", dir, shared, mode);
        snprintf(err, errlen, "the %s %s must be owned by uid %u, the JVM's user, "
                              "but it is owned by uid %u: chown %u %s%s, or give %s a "
                              "directory of uid %u", what, dir, uid, (unsigned)st.st_uid, uid, dir, also,
                 option, uid);
        close(fd);
        return -1;
    }
    if ((mode & 077) != 0) {
        snprintf(err, errlen, "the %s %s must allow no access for group or others, "
                              "but %s (mode %03o): make it private to uid %u with chmod 700 %s",
                 what, dir, shared, mode, uid, dir);
        close(fd);
        return -1;
    }
    return fd;
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
