#define _GNU_SOURCE
#include "np_cpuset.h"

#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_cpulist.h"

struct np_cpuset {
    hwloc_topology_t topology;
    char *root_file; /* the effective CPUs at the mount's root, or NULL: hwloc's */
};

/* The cgroup path of the line for `controller` ("" for cgroup v2's "0::"
 * line) of a /proc/PID/cgroup file, into out.  Returns 0 or -1. */
static int cgroup_path(const char *cgroup, const char *controller, char *out, size_t len)
{
    FILE *f = fopen(cgroup, "re");
    if (f == NULL)
        return -1;
    char line[4096];
    int rc = -1;
    while (rc != 0 && fgets(line, sizeof line, f) != NULL) {
        char *c = strchr(line, ':'), *p = c != NULL ? strchr(c + 1, ':') : NULL;
        if (p == NULL)
            continue;
        *p++ = '\0';
        p[strcspn(p, "\n")] = '\0';
        bool match = *controller == '\0' ? c[1] == '\0' : false;
        for (char *save = NULL, *tok = strtok_r(c + 1, ",", &save); !match && tok != NULL;
             tok = strtok_r(NULL, ",", &save))
            match = strcmp(tok, controller) == 0;
        if (match && (size_t)snprintf(out, len, "%s", p) < len)
            rc = 0;
    }
    fclose(f);
    return rc;
}

int np_cpuset_root_file(const char *mounts, const char *cgroup, char *out, size_t len)
{
    FILE *m = setmntent(mounts, "re");
    if (m == NULL)
        return 0;
    char v1[4096] = "", v2[4096] = "";
    struct mntent *e;
    while ((e = getmntent(m)) != NULL) {
        if (strcmp(e->mnt_type, "cgroup") == 0 && hasmntopt(e, "cpuset") != NULL && !*v1)
            snprintf(v1, sizeof v1, "%s", e->mnt_dir);
        else if (strcmp(e->mnt_type, "cgroup2") == 0 && !*v2)
            snprintf(v2, sizeof v2, "%s", e->mnt_dir);
    }
    endmntent(m);
    /* cgroup v1's cpuset controller where it is mounted (hybrid
     * hierarchies have both), as hwloc looks for it. */
    const char *mnt = *v1 ? v1 : v2, *file = *v1 ? "cpuset.effective_cpus" : "cpuset.cpus.effective";
    char path[4096], dir[8192];
    struct stat st;
    if (!*mnt || cgroup_path(cgroup, *v1 ? "cpuset" : "", path, sizeof path) != 0 ||
        (size_t)snprintf(dir, sizeof dir, "%s%s", mnt, path) >= sizeof dir)
        return 0;
    if (stat(dir, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    if ((size_t)snprintf(out, len, "%s/%s", mnt, file) >= len || access(out, R_OK) != 0)
        return 0;
    return 1;
}

/* The CPUs of w->root_file into out.  Returns 0 or -1 with errno. */
static int read_root(struct np_cpuset *w, hwloc_bitmap_t out)
{
    int fd = open(w->root_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = errno;
    close(fd);
    if (n < 0) {
        errno = e;
        return -1;
    }
    buf[n] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    if (np_parse_list(buf, ',', 1u << 20, out) != 0) {
        errno = EINVAL;
        return -1;
    }
    hwloc_bitmap_and(out, out, hwloc_topology_get_complete_cpuset(w->topology));
    return 0;
}

struct np_cpuset *np_cpuset_open(char *err, size_t errlen)
{
    struct np_cpuset *w = calloc(1, sizeof *w);
    if (w == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (hwloc_topology_init(&w->topology) != 0) {
        snprintf(err, errlen, "hwloc_topology_init: %s", strerror(errno));
        free(w);
        return NULL;
    }
    /* Only the PUs matter: no caches, no I/O, so loading is quick. */
    hwloc_topology_set_all_types_filter(w->topology, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_type_filter(w->topology, HWLOC_OBJ_PU, HWLOC_TYPE_FILTER_KEEP_ALL);
    hwloc_topology_set_type_filter(w->topology, HWLOC_OBJ_NUMANODE, HWLOC_TYPE_FILTER_KEEP_ALL);
    /* The source follows the environment, as np_topo's does. */
    if (hwloc_topology_set_flags(w->topology, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED |
                                                  HWLOC_TOPOLOGY_FLAG_THISSYSTEM_ALLOWED_RESOURCES) != 0 ||
        hwloc_topology_load(w->topology) != 0) {
        snprintf(err, errlen, "hwloc_topology_load: %s", strerror(errno));
        hwloc_topology_destroy(w->topology);
        free(w);
        return NULL;
    }
    if (!hwloc_topology_is_thissystem(w->topology)) {
        snprintf(err, errlen, "the topology is not this machine's");
        hwloc_topology_destroy(w->topology);
        free(w);
        return NULL;
    }
    char root[8192];
    if (np_cpuset_root_file("/proc/self/mounts", "/proc/self/cgroup", root, sizeof root) == 1)
        w->root_file = strdup(root);
    return w;
}

bool np_cpuset_from_root(const struct np_cpuset *w)
{
    return w != NULL && w->root_file != NULL;
}

int np_cpuset_read(struct np_cpuset *w, hwloc_bitmap_t out)
{
    if (w->root_file != NULL)
        return read_root(w, out);
    if (hwloc_topology_allow(w->topology, NULL, NULL, HWLOC_ALLOW_FLAG_LOCAL_RESTRICTIONS) != 0)
        return -1;
    if (hwloc_bitmap_copy(out, hwloc_topology_get_allowed_cpuset(w->topology)) != 0) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void np_cpuset_close(struct np_cpuset *w)
{
    if (w == NULL)
        return;
    hwloc_topology_destroy(w->topology);
    free(w->root_file);
    free(w);
}
