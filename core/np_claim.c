#define _GNU_SOURCE
#include "np_claim.h"

#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MARK "numapin-agent"

/* The descriptor of the mark among this process's open files, or -1. */
static int find_mark(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (d == NULL)
        return -1;
    int found = -1, self = dirfd(d);
    struct dirent *e;
    while (found < 0 && (e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end != '\0' || end == e->d_name || fd == self)
            continue;
        char link[64], target[128];
        snprintf(link, sizeof link, "/proc/self/fd/%ld", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n <= 0)
            continue;
        target[n] = '\0';
        if (strncmp(target, "/memfd:" MARK " ", sizeof "/memfd:" MARK) == 0)
            found = (int)fd;
    }
    closedir(d);
    return found;
}

int np_claim_read(char *other, size_t len)
{
    int fd = find_mark();
    if (fd < 0)
        return -1;
    ssize_t n = len > 1 ? pread(fd, other, len - 1, 0) : -1;
    if (n > 0)
        other[n] = '\0';
    else if (len > 0)
        snprintf(other, len, "another copy");
    return 0;
}

int np_claim_take(const char *who, char *other, size_t len)
{
    if (np_claim_read(other, len) == 0)
        return NP_CLAIM_TAKEN;
    int fd = memfd_create(MARK, MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t w = strlen(who);
    if (write(fd, who, w) != (ssize_t)w) {
        close(fd);
        return -1;
    }
    return fd;
}

void np_claim_release(int fd)
{
    if (fd >= 0)
        close(fd);
}

const char *np_claim_self(char *buf, size_t len)
{
    Dl_info info;
    if (dladdr((void *)np_claim_self, &info) != 0 && info.dli_fname != NULL)
        snprintf(buf, len, "%s", info.dli_fname);
    else
        snprintf(buf, len, "libnumapin.so");
    return buf;
}
