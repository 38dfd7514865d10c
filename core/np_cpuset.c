#define _GNU_SOURCE
#include "np_cpuset.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct np_cpuset {
    hwloc_topology_t topology;
};

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
    return w;
}

int np_cpuset_read(struct np_cpuset *w, hwloc_bitmap_t out)
{
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
    free(w);
}
