#define _GNU_SOURCE
#include "np_domains.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void np_domains_free(struct np_domains *d)
{
    for (int i = 0; i < d->n; i++) {
        hwloc_bitmap_free(d->cpus[i]);
        hwloc_bitmap_free(d->nodes[i]);
    }
    free(d->objs);
    free(d->cpus);
    free(d->nodes);
    free(d->dist);
    memset(d, 0, sizeof *d);
}

/* Tree distance: edges between the two objects through their deepest
 * common ancestor.  NUMA nodes count from what they are attached to. */
static hwloc_obj_t normal_parent(hwloc_obj_t o)
{
    while (o != NULL && o->depth < 0) /* memory objects have virtual depths */
        o = o->parent;
    return o;
}

static double tree_distance(hwloc_topology_t topo, hwloc_obj_t a, hwloc_obj_t b)
{
    a = normal_parent(a);
    b = normal_parent(b);
    if (a == b)
        return 0;
    hwloc_obj_t c = hwloc_get_common_ancestor_obj(topo, a, b);
    return (double)(a->depth - c->depth) + (double)(b->depth - c->depth);
}

/* Mean NUMA latency between the home nodes of two domains, or -1 when the
 * matrix does not cover them. */
static double matrix_distance(struct hwloc_distances_s *m, hwloc_topology_t topo,
                              hwloc_const_bitmap_t na, hwloc_const_bitmap_t nb)
{
    double sum = 0;
    int count = 0;
    int i, j;
    NP_FOREACH(i, na) {
        int x = hwloc_distances_obj_index(m, hwloc_get_numanode_obj_by_os_index(topo, (unsigned)i));
        NP_FOREACH(j, nb) {
            int y = hwloc_distances_obj_index(m, hwloc_get_numanode_obj_by_os_index(topo, (unsigned)j));
            if (x < 0 || y < 0)
                return -1;
            /* Both directions: a measured matrix need not be symmetric. */
            sum += (double)m->values[(unsigned)x * m->nbobjs + (unsigned)y];
            sum += (double)m->values[(unsigned)y * m->nbobjs + (unsigned)x];
            count += 2;
        }
    }
    return count > 0 ? sum / count : -1;
}

static int distances(const struct np_topo *t, struct np_domains *d)
{
    d->dist = calloc((size_t)d->n * (size_t)d->n + 1, sizeof *d->dist);
    if (d->dist == NULL)
        return -1;
    unsigned nr = 1;
    struct hwloc_distances_s *m = NULL;
    if (hwloc_distances_get_by_type(t->topology, HWLOC_OBJ_NUMANODE, &nr, &m,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 || nr == 0)
        m = NULL;
    d->from_matrix = m != NULL;
    for (int a = 0; a < d->n && d->from_matrix; a++)
        for (int b = 0; b < d->n && d->from_matrix; b++) {
            double x = matrix_distance(m, t->topology, d->nodes[a], d->nodes[b]);
            if (x < 0)
                d->from_matrix = 0;
            d->dist[a * d->n + b] = x;
        }
    if (m != NULL)
        hwloc_distances_release(t->topology, m);
    if (!d->from_matrix)
        for (int a = 0; a < d->n; a++)
            for (int b = 0; b < d->n; b++)
                d->dist[a * d->n + b] = tree_distance(t->topology, d->objs[a], d->objs[b]);
    return 0;
}

static int add(struct np_domains *d, hwloc_obj_t obj, hwloc_bitmap_t cpus, const struct np_topo *t)
{
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    if (nodes == NULL)
        return -1;
    np_topo_home_nodes(t, cpus, nodes);
    d->objs[d->n] = obj;
    d->cpus[d->n] = cpus;
    d->nodes[d->n] = nodes;
    d->n++;
    return 0;
}

int np_domains_get(const struct np_topo *t, enum np_domain kind, struct np_domains *d)
{
    memset(d, 0, sizeof *d);
    hwloc_obj_type_t type = kind == NP_DOMAIN_PACKAGE ? HWLOC_OBJ_PACKAGE
                          : kind == NP_DOMAIN_L3 ? HWLOC_OBJ_L3CACHE : HWLOC_OBJ_NUMANODE;
    int max = kind == NP_DOMAIN_NODE ? t->nnodes : hwloc_get_nbobjs_by_type(t->topology, type);
    size_t cap = max > 0 ? (size_t)max : 1;
    d->objs = calloc(cap, sizeof *d->objs);
    d->cpus = calloc(cap, sizeof *d->cpus);
    d->nodes = calloc(cap, sizeof *d->nodes);
    if (d->objs == NULL || d->cpus == NULL || d->nodes == NULL)
        goto fail;
    for (int i = 0; i < max; i++) {
        hwloc_obj_t obj;
        hwloc_bitmap_t cpus;
        if (kind == NP_DOMAIN_NODE) {
            obj = t->nodes[i];
            cpus = hwloc_bitmap_dup(t->node_cpus[i]);
        } else {
            obj = hwloc_get_obj_by_type(t->topology, type, (unsigned)i);
            cpus = hwloc_bitmap_alloc();
            if (cpus != NULL)
                hwloc_bitmap_and(cpus, obj->cpuset, t->allowed);
        }
        if (cpus == NULL)
            goto fail;
        /* Only CPUs some usable node is home to (all but in odd cases). */
        hwloc_bitmap_t placeable = hwloc_bitmap_alloc();
        if (placeable == NULL) {
            hwloc_bitmap_free(cpus);
            goto fail;
        }
        for (int n = 0; n < t->nnodes; n++)
            hwloc_bitmap_or(placeable, placeable, t->node_cpus[n]);
        hwloc_bitmap_and(cpus, cpus, placeable);
        hwloc_bitmap_free(placeable);
        if (hwloc_bitmap_iszero(cpus)) {
            hwloc_bitmap_free(cpus);
            continue;
        }
        if (add(d, obj, cpus, t) != 0) {
            hwloc_bitmap_free(cpus);
            goto fail;
        }
    }
    if (d->n == 0) {
        np_domains_free(d);
        errno = ENOENT;
        return -1;
    }
    if (distances(t, d) != 0)
        goto fail;
    return 0;
fail:
    np_domains_free(d);
    errno = ENOMEM;
    return -1;
}
