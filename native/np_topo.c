#define _GNU_SOURCE
#include "np_topo.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void np_cpulist(char *buf, size_t len, hwloc_const_bitmap_t set)
{
    if (len == 0)
        return;
    if (hwloc_bitmap_iszero(set)) {
        buf[0] = '\0';
        return;
    }
    hwloc_bitmap_list_snprintf(buf, len, set);
}

static int fail(struct np_topo *t, char *err, size_t errlen, const char *what)
{
    snprintf(err, errlen, "cannot load the topology (%s): %s: %s", t->source, what,
             strerror(errno));
    np_topo_destroy(t);
    return -1;
}

int np_topo_load(struct np_topo *t, const char *xml, const char *synthetic,
                 char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (xml != NULL)
        snprintf(t->source, sizeof t->source, "xml %s", xml);
    else if (synthetic != NULL)
        snprintf(t->source, sizeof t->source, "synthetic %s", synthetic);
    else if (getenv("HWLOC_XMLFILE") != NULL)
        snprintf(t->source, sizeof t->source, "xml %s", getenv("HWLOC_XMLFILE"));
    else if (getenv("HWLOC_SYNTHETIC") != NULL)
        snprintf(t->source, sizeof t->source, "synthetic %s", getenv("HWLOC_SYNTHETIC"));
    else
        snprintf(t->source, sizeof t->source, "this system");

    /* The library must speak the API we were built against (2.x). */
    if ((hwloc_get_api_version() >> 16) != (HWLOC_API_VERSION >> 16)) {
        snprintf(err, errlen, "hwloc library API %#x does not match the %#x numapin was built for",
                 hwloc_get_api_version(), HWLOC_API_VERSION);
        return -1;
    }
    if (hwloc_topology_init(&t->topology) != 0)
        return fail(t, err, errlen, "hwloc_topology_init");
    /* No I/O devices: not needed for placement, and slow to discover. */
    hwloc_topology_set_io_types_filter(t->topology, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (xml != NULL && hwloc_topology_set_xml(t->topology, xml) != 0)
        return fail(t, err, errlen, "hwloc_topology_set_xml");
    if (synthetic != NULL && hwloc_topology_set_synthetic(t->topology, synthetic) != 0)
        return fail(t, err, errlen, "invalid synthetic description");
    if (hwloc_topology_load(t->topology) != 0)
        return fail(t, err, errlen, "hwloc_topology_load");

    t->thissystem = hwloc_topology_is_thissystem(t->topology);
    t->allowed = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(t->topology));
    if (t->allowed == NULL)
        return fail(t, err, errlen, "out of memory");
    if (t->thissystem) {
        hwloc_bitmap_t bound = hwloc_bitmap_alloc();
        if (bound != NULL &&
            hwloc_get_cpubind(t->topology, bound, HWLOC_CPUBIND_PROCESS) == 0 &&
            hwloc_bitmap_intersects(bound, t->allowed))
            hwloc_bitmap_and(t->allowed, t->allowed, bound);
        hwloc_bitmap_free(bound);
    }

    int n = hwloc_get_nbobjs_by_type(t->topology, HWLOC_OBJ_NUMANODE);
    t->nodes = calloc(n > 0 ? (size_t)n : 1, sizeof *t->nodes);
    t->node_cpus = calloc(n > 0 ? (size_t)n : 1, sizeof *t->node_cpus);
    if (t->nodes == NULL || t->node_cpus == NULL)
        return fail(t, err, errlen, "out of memory");
    for (int i = 0; i < n; i++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(t->topology, HWLOC_OBJ_NUMANODE, (unsigned)i);
        hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
        if (cpus == NULL)
            return fail(t, err, errlen, "out of memory");
        hwloc_bitmap_and(cpus, node->cpuset, t->allowed);
        if (hwloc_bitmap_iszero(cpus)) {
            hwloc_bitmap_free(cpus); /* CPU-less, or none of its CPUs allowed */
            continue;
        }
        t->nodes[t->nnodes] = node;
        t->node_cpus[t->nnodes++] = cpus;
    }
    if (t->nnodes == 0) {
        errno = ENODEV;
        return fail(t, err, errlen, "no NUMA node has a CPU this process may use");
    }
    return 0;
}

void np_topo_destroy(struct np_topo *t)
{
    for (int i = 0; i < t->nnodes; i++)
        hwloc_bitmap_free(t->node_cpus[i]);
    free(t->node_cpus);
    free(t->nodes);
    hwloc_bitmap_free(t->allowed);
    if (t->topology != NULL)
        hwloc_topology_destroy(t->topology);
    char source[sizeof t->source];
    memcpy(source, t->source, sizeof source);
    memset(t, 0, sizeof *t);
    memcpy(t->source, source, sizeof source); /* kept for error messages */
}

static int count_allowed(const struct np_topo *t, hwloc_obj_type_t type)
{
    int n = 0;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t->topology, type, o)) != NULL)
        n += o->cpuset != NULL && hwloc_bitmap_intersects(o->cpuset, t->allowed);
    return n;
}

void np_topo_summary(const struct np_topo *t, char *buf, size_t len)
{
    char allowed[1024];
    np_cpulist(allowed, sizeof allowed, t->allowed);
    int l3 = 0;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t->topology, HWLOC_OBJ_L3CACHE, o)) != NULL)
        l3 += hwloc_bitmap_intersects(o->cpuset, t->allowed);
    int cores = count_allowed(t, HWLOC_OBJ_CORE);
    int pus = hwloc_bitmap_weight(t->allowed);
    snprintf(buf, len,
             "nodes=%d packages=%d l3=%d cores=%d pus=%d smt=%d allowed=%s source=\"%s\"",
             t->nnodes, count_allowed(t, HWLOC_OBJ_PACKAGE), l3, cores, pus,
             cores > 0 ? (pus + cores - 1) / cores : 1, allowed, t->source);
}
