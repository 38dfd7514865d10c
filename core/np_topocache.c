#define _GNU_SOURCE
#include "np_topocache.h"

#include "np_bind.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An export of the largest machines hwloc knows is a few MiB. */
#define MAX_FILE (64u << 20)

/* The first line of a small kernel file, as text ("" when the file does
 * not exist and `optional`).  The text is compared, never parsed: hwloc
 * parses these files when it discovers the machine. */
static int read_line(const char *path, bool optional, char *buf, size_t len, char *err,
                     size_t errlen)
{
    buf[0] = '\0';
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 && optional && errno == ENOENT)
        return 0;
    ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);
    int e = errno;
    if (fd >= 0)
        close(fd);
    if (n < 0 || (size_t)n == len - 1) {
        snprintf(err, errlen, "cannot read %s: %s", path, n < 0 ? strerror(e) : "too long");
        return -1;
    }
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

int np_topocache_key_read(struct np_topocache_key *k, char *err, size_t errlen)
{
    memset(k, 0, sizeof *k);
    snprintf(k->version, sizeof k->version, "format %d, hwloc API %#x", NP_TOPOCACHE_FORMAT,
             hwloc_get_api_version());
    if (read_line("/proc/sys/kernel/random/boot_id", false, k->boot, sizeof k->boot, err,
                  errlen) != 0 ||
        read_line("/sys/devices/system/cpu/possible", false, k->cpus_possible,
                  sizeof k->cpus_possible, err, errlen) != 0 ||
        read_line("/sys/devices/system/cpu/online", false, k->cpus_online, sizeof k->cpus_online,
                  err, errlen) != 0 ||
        read_line("/sys/devices/system/node/online", true, k->nodes_online,
                  sizeof k->nodes_online, err, errlen) != 0)
        return -1;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int rc = -1;
    if (set == NULL)
        snprintf(err, errlen, "out of memory");
    else if (np_bind_cpus_allowed(set) != 0)
        snprintf(err, errlen, "cannot read this process's CPUs: %s", strerror(errno));
    else if ((size_t)hwloc_bitmap_list_snprintf(k->cpus, sizeof k->cpus, set) >= sizeof k->cpus)
        snprintf(err, errlen, "this process's CPU list is too long to stamp");
    else if (np_bind_mems_allowed(set) != 0)
        snprintf(err, errlen, "cannot read this process's memory nodes: %s", strerror(errno));
    else if ((size_t)hwloc_bitmap_list_snprintf(k->mems, sizeof k->mems, set) >= sizeof k->mems)
        snprintf(err, errlen, "this process's node list is too long to stamp");
    else
        rc = 0;
    hwloc_bitmap_free(set);
    return rc;
}

/* FNV-1a, 64 bits: a name, not a check (the stamps are the check). */
static uint64_t hash(uint64_t h, const char *s)
{
    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
    return (h ^ '/') * 0x100000001b3ULL;
}

void np_topocache_name(const struct np_topocache_key *k, char *buf, size_t len)
{
    uint64_t h = hash(hash(0xcbf29ce484222325ULL, k->cpus), k->mems);
    snprintf(buf, len, "topology-%016llx.xml", (unsigned long long)h);
}

/* The stamps, in the order they are checked, with what a mismatch says. */
struct stamp {
    const char *name;
    size_t offset;
    const char *stale;
};
static const struct stamp stamps[] = {
    {"numapin.cache.version", offsetof(struct np_topocache_key, version),
     "was written by another numapin cache format or hwloc version"},
    {"numapin.cache.boot", offsetof(struct np_topocache_key, boot), "was made on another boot"},
    {"numapin.cache.cpus_possible", offsetof(struct np_topocache_key, cpus_possible),
     "was made on a machine with other possible CPUs"},
    {"numapin.cache.cpus_online", offsetof(struct np_topocache_key, cpus_online),
     "was made when other CPUs were online"},
    {"numapin.cache.nodes_online", offsetof(struct np_topocache_key, nodes_online),
     "was made when other NUMA nodes were online"},
    {"numapin.cache.cpus", offsetof(struct np_topocache_key, cpus),
     "was made for another set of CPUs"},
    {"numapin.cache.mems", offsetof(struct np_topocache_key, mems),
     "was made for another set of memory nodes"},
};
#define NSTAMPS (sizeof stamps / sizeof stamps[0])

static const char *field(const struct np_topocache_key *k, const struct stamp *s)
{
    return (const char *)k + s->offset;
}

int np_topocache_stamp(hwloc_topology_t topology, const struct np_topocache_key *k)
{
    hwloc_obj_t root = hwloc_get_root_obj(topology);
    for (size_t i = 0; i < NSTAMPS; i++)
        if (hwloc_obj_add_info(root, stamps[i].name, field(k, &stamps[i])) != 0)
            return -1;
    return 0;
}

const char *np_topocache_stale(hwloc_topology_t topology, const struct np_topocache_key *k)
{
    hwloc_obj_t root = hwloc_get_root_obj(topology);
    if (hwloc_obj_get_info_by_name(root, stamps[0].name) == NULL)
        return "is not numapin's cache (it has no numapin stamps)";
    for (size_t i = 0; i < NSTAMPS; i++) {
        const char *v = hwloc_obj_get_info_by_name(root, stamps[i].name);
        if (v == NULL || strcmp(v, field(k, &stamps[i])) != 0)
            return stamps[i].stale;
    }
    /* What the file describes must be this machine's as the kernel lists
     * it now, whatever its stamps say: every CPU it knows of (the complete
     * set, offline ones too) among the possible ones, those present among
     * the online ones, and every CPU and node hwloc finds allowed (read
     * live) in it. */
    hwloc_const_bitmap_t cpus = hwloc_topology_get_allowed_cpuset(topology);
    hwloc_const_bitmap_t nodes = hwloc_topology_get_allowed_nodeset(topology);
    hwloc_bitmap_t online = hwloc_bitmap_alloc(), possible = hwloc_bitmap_alloc();
    const char *stale = NULL;
    if (online == NULL || possible == NULL ||
        hwloc_bitmap_list_sscanf(online, k->cpus_online) != 0 ||
        hwloc_bitmap_list_sscanf(possible, k->cpus_possible) != 0)
        stale = "cannot be checked against the kernel's CPUs";
    else if (!hwloc_bitmap_isincluded(hwloc_topology_get_complete_cpuset(topology), possible))
        stale = "holds CPUs this machine does not have";
    else if (!hwloc_bitmap_isincluded(root->cpuset, online))
        stale = "holds CPUs that are not online";
    else if (hwloc_bitmap_iszero(cpus) || !hwloc_bitmap_isincluded(cpus, root->cpuset) ||
             !hwloc_bitmap_isincluded(nodes, root->nodeset))
        stale = "does not hold every CPU and node this process may use";
    hwloc_bitmap_free(possible);
    hwloc_bitmap_free(online);
    return stale;
}

char *np_topocache_read(int dirfd, const char *name, size_t *len, const char **why)
{
    *why = NULL;
    int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ELOOP)
            *why = "is a symbolic link, which numapin does not follow";
        else if (errno != ENOENT)
            *why = "cannot be opened";
        return NULL;
    }
    struct stat st;
    char *buf = NULL;
    if (fstat(fd, &st) != 0)
        *why = "cannot be read";
    else if (!S_ISREG(st.st_mode))
        *why = "is not a regular file";
    else if (st.st_uid != geteuid())
        *why = "belongs to another user";
    else if ((st.st_mode & 077) != 0)
        *why = "may be read or written by other users (numapin writes it 0600)";
    else if (st.st_nlink != 1)
        *why = "has other hard links";
    else if (st.st_size <= 0 || (uint64_t)st.st_size > MAX_FILE)
        *why = st.st_size <= 0 ? "is empty" : "is too large to be numapin's";
    else if ((buf = malloc((size_t)st.st_size + 1)) == NULL)
        *why = "cannot be read (out of memory)";
    size_t got = 0;
    while (buf != NULL && got < (size_t)st.st_size) {
        ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            *why = "cannot be read";
            free(buf);
            buf = NULL;
            break;
        }
        got += (size_t)n;
    }
    close(fd);
    if (buf == NULL) {
        errno = EINVAL;
        return NULL;
    }
    buf[got] = '\0';
    *len = got + 1;
    return buf;
}
