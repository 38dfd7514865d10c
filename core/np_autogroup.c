#define _GNU_SOURCE
#include "np_autogroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

const char *np_autogroup_dir(char *buf, size_t len)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    if (xdg != NULL && xdg[0] == '/')
        snprintf(buf, len, "%s/numapin", xdg);
    else
        snprintf(buf, len, "/tmp/numapin-%u", (unsigned)getuid());
    return buf;
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

/* Opens dir, creating it 0700; refuses a symlink, another owner, or any
 * access for group or others.  Write access would let them take groups
 * (create and hold a lock file before the JVMs do) or steal them (replace
 * a lock file a JVM holds, so that the next JVM takes its group too);
 * search access lets them open and hold a lock file whose own mode allows
 * it (one made by hand or by another tool: numapin creates them 0600 but
 * does not check the mode of those it finds); read access alone lists
 * which layouts are in use.  A directory private to its owner is the one
 * rule that leaves none of these. */
static int open_dir(const char *dir, char *err, size_t errlen)
{
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "cannot create the group lock directory %s: %s", dir,
                 strerror(errno));
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open the group lock directory %s: %s%s", dir,
                 strerror(errno), errno == ELOOP || errno == ENOTDIR ? " (not a plain directory)" : "");
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "cannot read the group lock directory %s: %s", dir, strerror(errno));
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
        snprintf(err, errlen, "the group lock directory %s must be owned by uid %u, the JVM's user, "
                              "but it is owned by uid %u: chown %u %s%s, or give lockdir= a "
                              "directory of uid %u", dir, uid, (unsigned)st.st_uid, uid, dir, also, uid);
        close(fd);
        return -1;
    }
    if ((mode & 077) != 0) {
        snprintf(err, errlen, "the group lock directory %s must allow no access for group or others, "
                              "but %s (mode %03o): make it private to uid %u with chmod 700 %s",
                 dir, shared, mode, uid, dir);
        close(fd);
        return -1;
    }
    return fd;
}

int np_autogroup_claim(const char *dir, int groups, int *fd, char *err, size_t errlen)
{
    char def[512];
    if (dir == NULL)
        dir = np_autogroup_dir(def, sizeof def);
    int dfd = open_dir(dir, err, errlen);
    if (dfd < 0)
        return -1;
    for (int g = 0; g < groups; g++) {
        char name[64];
        /* Named by the group count too: JVMs of different layouts do not
         * share groups. */
        snprintf(name, sizeof name, "groups-%d.group-%d.lock", groups, g);
        int lfd = openat(dfd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (lfd < 0) {
            snprintf(err, errlen, "cannot open %s/%s: %s", dir, name, strerror(errno));
            close(dfd);
            return -1;
        }
        if (flock(lfd, LOCK_EX | LOCK_NB) == 0) {
            /* Who holds it, for people looking: informational only.  The
             * lock is the flock, which the kernel keeps on the file itself
             * whatever PID or mount namespace its holder is in; a process
             * id means something only in its own PID namespace, so that
             * namespace is named with it, and nothing reads either back. */
            char holder[160], ns[64];
            ssize_t k = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
            ns[k > 0 ? k : 0] = '\0';
            int n = snprintf(holder, sizeof holder, "pid=%ld pidns=%s\n", (long)getpid(),
                             ns[0] != '\0' ? ns : "unknown");
            if (ftruncate(lfd, 0) == 0 && pwrite(lfd, holder, (size_t)n, 0) < 0) {
                /* the lock is what counts */
            }
            close(dfd);
            *fd = lfd;
            return g;
        }
        close(lfd);
    }
    close(dfd);
    snprintf(err, errlen, "group=auto: all %d groups are held by other JVMs (locks in %s)", groups,
             dir);
    return -1;
}
