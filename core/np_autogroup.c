#define _GNU_SOURCE
#include "np_autogroup.h"

#include "np_file.h"

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
    return np_file_private_default(buf, len);
}

int np_autogroup_claim(const char *dir, int groups, int *fd, char *err, size_t errlen)
{
    char def[512];
    if (dir == NULL)
        dir = np_autogroup_dir(def, sizeof def);
    int dfd = np_file_private_dir(dir, "group lock directory", "lockdir=", err, errlen);
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
