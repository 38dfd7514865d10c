#define _GNU_SOURCE
#include "np_plan.h"

#include "np_json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void np_split(int total, int parts, int i, int *first, int *count)
{
    int base = total / parts, extra = total % parts;
    *count = base + (i < extra);
    *first = i * base + (i < extra ? i : extra);
}

static int warn(struct np_plan *p, int first_group, int last_group, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int warn(struct np_plan *p, int first_group, int last_group, const char *fmt, ...)
{
    struct np_warning *w = realloc(p->warnings, (size_t)(p->nwarnings + 1) * sizeof *w);
    if (w == NULL)
        return -1;
    p->warnings = w;
    w[p->nwarnings].first_group = first_group;
    w[p->nwarnings].last_group = last_group;
    va_list ap;
    va_start(ap, fmt);
    int rc = vasprintf(&w[p->nwarnings].text, fmt, ap);
    va_end(ap);
    if (rc < 0)
        return -1;
    p->nwarnings++;
    return 0;
}

/* The core holding a PU; the PU itself where the topology has no cores. */
static hwloc_obj_t core_of(hwloc_topology_t topo, hwloc_obj_t pu)
{
    hwloc_obj_t core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    return core != NULL ? core : pu;
}

/* The cores with PUs in `cpus`, in logical order, each restricted to `cpus`.
 * Returns the count, or -1. */
static int cores_in(const struct np_topo *t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t **out)
{
    int n = 0, cap = 0;
    hwloc_bitmap_t *cores = NULL;
    hwloc_obj_t last = NULL;
    hwloc_obj_t pu = NULL;
    while ((pu = hwloc_get_next_obj_by_type(t->topology, HWLOC_OBJ_PU, pu)) != NULL) {
        if (!hwloc_bitmap_isset(cpus, pu->os_index))
            continue;
        hwloc_obj_t core = core_of(t->topology, pu);
        if (core != last || n == 0) {
            if (n == cap) {
                cap = cap ? 2 * cap : 16;
                hwloc_bitmap_t *c = realloc(cores, (size_t)cap * sizeof *c);
                if (c == NULL)
                    goto fail;
                cores = c;
            }
            if ((cores[n] = hwloc_bitmap_alloc()) == NULL)
                goto fail;
            n++;
            last = core;
        }
        hwloc_bitmap_set(cores[n - 1], pu->os_index);
    }
    *out = cores;
    return n;
fail:
    np_slots_free(cores, n);
    return -1;
}

void np_slots_free(hwloc_bitmap_t *slots, int n)
{
    for (int i = 0; i < n; i++)
        hwloc_bitmap_free(slots[i]);
    free(slots);
}

int np_slots(const struct np_topo *t, hwloc_const_bitmap_t cpus,
             enum np_cpus_mode mode, hwloc_bitmap_t **slots)
{
    if (mode == NP_CPUS_NODE) {
        hwloc_bitmap_t *s = malloc(sizeof *s);
        if (s == NULL || (s[0] = hwloc_bitmap_dup(cpus)) == NULL) {
            free(s);
            return -1;
        }
        *slots = s;
        return 1;
    }
    hwloc_bitmap_t *cores;
    int ncores = cores_in(t, cpus, &cores);
    if (ncores < 0 || mode == NP_CPUS_CORE) {
        *slots = cores;
        return ncores;
    }
    /* cpus=pu: the k-th thread of every core before any (k+1)-th. */
    int npus = 0;
    for (int c = 0; c < ncores; c++)
        npus += hwloc_bitmap_weight(cores[c]);
    hwloc_bitmap_t *pus = calloc(npus > 0 ? (size_t)npus : 1, sizeof *pus);
    int n = 0;
    if (pus == NULL)
        goto fail;
    for (int k = 0; n < npus; k++) {
        for (int c = 0; c < ncores; c++) {
            int idx = hwloc_bitmap_first(cores[c]);
            for (int j = 0; j < k && idx >= 0; j++)
                idx = hwloc_bitmap_next(cores[c], idx);
            if (idx < 0)
                continue;
            if ((pus[n] = hwloc_bitmap_alloc()) == NULL)
                goto fail;
            hwloc_bitmap_only(pus[n++], (unsigned)idx);
        }
    }
    np_slots_free(cores, ncores);
    *slots = pus;
    return n;
fail:
    np_slots_free(cores, ncores);
    np_slots_free(pus, n);
    return -1;
}

/* Gives group g its slice of node `node`, shared by `k` groups (g is the
 * r-th of them). */
static int slice_node(const struct np_topo *t, struct np_plan *p, struct np_group_plan *g,
                      int node, int r, int k)
{
    hwloc_bitmap_t *cores;
    int ncores = cores_in(t, t->node_cpus[node], &cores);
    if (ncores < 0)
        return -1;
    int first, count;
    unsigned node_os = t->nodes[node]->os_index;
    if (ncores >= k) {
        np_split(ncores, k, r, &first, &count);
        for (int c = first; c < first + count; c++)
            hwloc_bitmap_or(g->cpus, g->cpus, cores[c]);
    } else {
        /* Fewer cores than groups: slice by hardware thread, or share. */
        int npus = hwloc_bitmap_weight(t->node_cpus[node]);
        if (npus >= k) {
            np_split(npus, k, r, &first, &count);
            if (r == 0 && warn(p, g->group, g->group + k - 1,
                               "node %u has %d cores for %d groups: its groups split cores "
                               "between them", node_os, ncores, k) != 0)
                goto fail;
        } else {
            first = r % npus;
            count = 1;
            if (r == 0 && warn(p, g->group, g->group + k - 1,
                               "node %u has %d CPUs for %d groups: groups share CPUs", node_os,
                               npus, k) != 0)
                goto fail;
        }
        /* The node's hardware threads in core order, so that a slice
         * keeps a core's threads together where it can. */
        int i = 0;
        for (int c = 0; c < ncores; c++) {
            int idx;
            hwloc_bitmap_foreach_begin(idx, cores[c]) {
                if (i >= first && i < first + count)
                    hwloc_bitmap_set(g->cpus, (unsigned)idx);
                i++;
            }
            hwloc_bitmap_foreach_end();
        }
    }
    np_slots_free(cores, ncores);
    return 0;
fail:
    np_slots_free(cores, ncores);
    return -1;
}

static int plan_group(const struct np_topo *t, struct np_plan *p, int gi)
{
    struct np_group_plan *g = &p->groups[gi];
    int nodes = t->nnodes, groups = p->ngroups;
    g->group = gi;
    if ((g->cpus = hwloc_bitmap_alloc()) == NULL || (g->nodes = hwloc_bitmap_alloc()) == NULL)
        return -1;
    if (groups <= nodes) {
        np_split(nodes, groups, gi, &g->first_node, &g->nnodes);
        g->slice = 0;
        g->nslices = 1;
        for (int n = g->first_node; n < g->first_node + g->nnodes; n++) {
            hwloc_bitmap_or(g->cpus, g->cpus, t->node_cpus[n]);
            hwloc_bitmap_set(g->nodes, t->nodes[n]->os_index);
        }
        if (g->nnodes > 1) {
            char list[256];
            np_cpulist(list, sizeof list, g->nodes);
            if (warn(p, gi, gi, "group %d spans nodes %s: its threads' memory is not all local; "
                        "groups=%d (one group per node) keeps every group on one node",
                     gi, list, nodes) != 0)
                return -1;
        }
        return 0;
    }
    /* More groups than nodes: find this group's node and rank on it. */
    for (int n = 0; n < nodes; n++) {
        int first, count;
        np_split(groups, nodes, n, &first, &count);
        if (gi < first || gi >= first + count)
            continue;
        g->first_node = n;
        g->nnodes = 1;
        g->slice = gi - first;
        g->nslices = count;
        hwloc_bitmap_set(g->nodes, t->nodes[n]->os_index);
        return slice_node(t, p, g, n, gi - first, count);
    }
    errno = EINVAL;
    return -1;
}

/* Adopted CPUs (np_topo.adopted) have remote memory whatever we do: say
 * so, for every group. */
static int warn_adopted(const struct np_topo *t, struct np_plan *p)
{
    if (hwloc_bitmap_iszero(t->adopted))
        return 0;
    char *list = NULL;
    if (hwloc_bitmap_list_asprintf(&list, t->adopted) < 0)
        return -1;
    int rc = warn(p, 0, p->ngroups - 1,
                  "CPUs %s may be used but no NUMA node local to them may (not in the cgroup's "
                  "cpuset.mems, or no memory): they join the nearest usable node, remote to them",
                  list);
    free(list);
    return rc;
}

int np_plan_build(const struct np_topo *t, int groups, struct np_plan *p)
{
    memset(p, 0, sizeof *p);
    if (groups < 1 || groups > NP_MAX_GROUPS || t->nnodes < 1) {
        errno = EINVAL;
        return -1;
    }
    if ((p->groups = calloc((size_t)groups, sizeof *p->groups)) == NULL)
        return -1;
    p->ngroups = groups;
    if (warn_adopted(t, p) != 0) {
        np_plan_free(p);
        errno = ENOMEM;
        return -1;
    }
    for (int g = 0; g < groups; g++) {
        if (plan_group(t, p, g) != 0) {
            int e = errno ? errno : ENOMEM;
            np_plan_free(p);
            errno = e;
            return -1;
        }
    }
    return 0;
}

void np_plan_free(struct np_plan *p)
{
    for (int g = 0; g < p->ngroups; g++) {
        hwloc_bitmap_free(p->groups[g].cpus);
        hwloc_bitmap_free(p->groups[g].nodes);
    }
    free(p->groups);
    for (int i = 0; i < p->nwarnings; i++)
        free(p->warnings[i].text);
    free(p->warnings);
    memset(p, 0, sizeof *p);
}

void np_plan_json(const struct np_plan *p, FILE *out)
{
    fputs("{\"groups\":[", out);
    for (int g = 0; g < p->ngroups; g++) {
        const struct np_group_plan *gp = &p->groups[g];
        fprintf(out, "%s{\"group\":%d,\"nodes\":[", g ? "," : "", gp->group);
        int i = -1, first = 1;
        while ((i = hwloc_bitmap_next(gp->nodes, i)) >= 0) {
            fprintf(out, "%s%d", first ? "" : ",", i);
            first = 0;
        }
        char *cpus = NULL;
        if (!hwloc_bitmap_iszero(gp->cpus) && hwloc_bitmap_list_asprintf(&cpus, gp->cpus) < 0)
            cpus = NULL;
        fprintf(out, "],\"cpus\":\"%s\"}", cpus ? cpus : "");
        free(cpus);
    }
    fputs("],\"warnings\":[", out);
    for (int i = 0; i < p->nwarnings; i++) {
        if (i)
            fputc(',', out);
        np_json_string(out, p->warnings[i].text);
    }
    fputs("]}\n", out);
}
