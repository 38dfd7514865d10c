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
int np_file_open(const char *path, bool append)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash != NULL ? slash + 1 : path;
    if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
        errno = EISDIR;
        return -1;
    }
    char *dir = slash == NULL ? strdup(".") : slash == path ? strdup("/")
                                                            : strndup(path, (size_t)(slash - path));
    if (dir == NULL)
        return -1;
    int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    free(dir);
    if (dfd < 0)
        return -1;
    int fd = openat(dfd, base,
                    O_WRONLY | O_CREAT | (append ? O_APPEND : 0) | O_NOFOLLOW | O_NONBLOCK |
                        O_NOCTTY | O_CLOEXEC,
                    0600);
    int e = errno;
    struct stat st, dst;
    if (fd >= 0) {
        if (fstat(fd, &st) != 0 || fstat(dfd, &dst) != 0)
            e = errno;
        else if (!S_ISREG(st.st_mode))
            e = EINVAL;
        else if (st.st_nlink > 1)
            e = EMLINK;
        else if (st.st_uid != geteuid() && (dst.st_mode & S_ISVTX) && (dst.st_mode & S_IWOTH))
            e = EACCES;
        else if (!append && ftruncate(fd, 0) != 0) /* only once checked */
            e = errno;
        else
            e = 0;
        int fl;
        if (e == 0 && ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
            e = errno;
        if (e != 0) {
            close(fd);
            fd = -1;
        }
    }
    close(dfd);
    errno = e;
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
