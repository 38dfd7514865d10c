#define _GNU_SOURCE
#include "describe.h"

#include "np_cpulist.h"
#include "np_json.h"

#include <stdlib.h>
#include <string.h>

int np_recommended_groups(const struct np_topo *t)
{
    return t->nnodes;
}

/* A cpulist for printing: never truncated, "" when empty.  Free it. */
static char *list(hwloc_const_bitmap_t set)
{
    char *s = np_cpulist_dup(set);
    return s != NULL ? s : strdup("");
}

/* The latency matrix between all NUMA nodes, or NULL. Release with
 * hwloc_distances_release. */
static struct hwloc_distances_s *node_distances(const struct np_topo *t)
{
    unsigned nr = 1;
    struct hwloc_distances_s *d = NULL;
    if (hwloc_distances_get_by_type(t->topology, HWLOC_OBJ_NUMANODE, &nr, &d,
                                    HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) != 0 || nr == 0)
        return NULL;
    return d;
}

static const char *cpukind_info(hwloc_topology_t topo, unsigned k, int *efficiency)
{
    unsigned nr_infos = 0;
    struct hwloc_info_s *infos = NULL;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    *efficiency = -1;
    if (set == NULL || hwloc_cpukinds_get_info(topo, k, set, efficiency, &nr_infos, &infos, 0) != 0)
        nr_infos = 0;
    hwloc_bitmap_free(set);
    for (unsigned i = 0; i < nr_infos; i++)
        if (strcmp(infos[i].name, "CoreType") == 0 || strcmp(infos[i].name, "FrequencyMaxMHz") == 0)
            return infos[i].value;
    return "";
}

/* Usable CPUs of an object: its cpuset within the allowed CPUs. */
static hwloc_bitmap_t usable(const struct np_topo *t, hwloc_obj_t o)
{
    hwloc_bitmap_t s = hwloc_bitmap_alloc();
    if (s != NULL && o->cpuset != NULL)
        hwloc_bitmap_and(s, o->cpuset, t->allowed);
    return s;
}

/* Objects of one type (packages, L3 caches): a line each, or with j an
 * array member each. */
static void each_obj(const struct np_topo *t, hwloc_obj_type_t type, FILE *out, struct np_json *j)
{
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t->topology, type, o)) != NULL) {
        hwloc_bitmap_t s = usable(t, o);
        if (s == NULL)
            continue;
        char *cpus = list(s), *nodes = list(o->nodeset);
        /* Caches, and some packages, have no OS index. */
        int known = o->os_index != HWLOC_UNKNOWN_INDEX;
        bool l3 = type == HWLOC_OBJ_L3CACHE && o->attr != NULL;
        if (j != NULL) {
            np_json_open(j, NULL, '{', false);
            np_json_int(j, "logical_index", o->logical_index);
            if (known)
                np_json_int(j, "os_index", o->os_index);
            else
                np_json_null(j, "os_index");
            np_json_str(j, "cpus", cpus);
            np_json_str(j, "nodes", nodes);
            if (l3)
                np_json_int(j, "size", (long long)o->attr->cache.size);
            np_json_close(j);
        } else {
            fprintf(out, "  %s L#%u", hwloc_obj_type_string(type), o->logical_index);
            if (known)
                fprintf(out, " P#%u", o->os_index);
            fprintf(out, ": cpus=%s nodes=%s", cpus[0] ? cpus : "none", nodes);
            if (l3)
                fprintf(out, " size=%lluKiB", (unsigned long long)o->attr->cache.size / 1024);
            fputc('\n', out);
        }
        free(cpus);
        free(nodes);
        hwloc_bitmap_free(s);
    }
}

static int node_has_cpus(const struct np_topo *t, hwloc_obj_t node)
{
    for (int i = 0; i < t->nnodes; i++)
        if (t->nodes[i] == node)
            return 1;
    return 0;
}

static void nodes_out(const struct np_topo *t, FILE *out, struct np_json *j)
{
    hwloc_obj_t n = NULL;
    while ((n = hwloc_get_next_obj_by_type(t->topology, HWLOC_OBJ_NUMANODE, n)) != NULL) {
        hwloc_bitmap_t s = usable(t, n);
        char *cpus = s ? list(s) : strdup("");
        const char *subtype = n->subtype ? n->subtype : "";
        unsigned long long mem = n->attr ? (unsigned long long)n->attr->numanode.local_memory : 0;
        if (j != NULL) {
            np_json_open(j, NULL, '{', false);
            np_json_int(j, "os_index", n->os_index);
            np_json_str(j, "cpus", cpus ? cpus : "");
            np_json_int(j, "memory", (long long)mem);
            np_json_str(j, "kind", subtype);
            np_json_bool(j, "takes_groups", node_has_cpus(t, n));
            np_json_close(j);
        } else {
            fprintf(out, "  node P#%u: cpus=%s memory=%lluMiB%s%s%s\n", n->os_index,
                    cpus && cpus[0] ? cpus : "none", mem >> 20, subtype[0] ? " kind=" : "",
                    subtype, node_has_cpus(t, n) ? "" : " (takes no group)");
        }
        free(cpus);
        hwloc_bitmap_free(s);
    }
}

static void distances_out(const struct np_topo *t, FILE *out, struct np_json *j)
{
    struct hwloc_distances_s *d = node_distances(t);
    if (d == NULL) {
        if (j != NULL)
            np_json_null(j, "distances");
        else
            fputs("  (none reported)\n", out);
        return;
    }
    if (j != NULL) {
        np_json_open(j, "distances", '{', true);
        np_json_open(j, "nodes", '[', false);
        for (unsigned i = 0; i < d->nbobjs; i++)
            np_json_int(j, NULL, d->objs[i]->os_index);
        np_json_close(j);
        np_json_open(j, "values", '[', true);
        for (unsigned i = 0; i < d->nbobjs; i++) {
            np_json_open(j, NULL, '[', false);
            for (unsigned k = 0; k < d->nbobjs; k++)
                np_json_int(j, NULL, (long long)d->values[i * d->nbobjs + k]);
            np_json_close(j);
        }
        np_json_close(j);
        np_json_close(j);
    } else {
        fputs("        ", out);
        for (unsigned k = 0; k < d->nbobjs; k++)
            fprintf(out, " %5u", d->objs[k]->os_index);
        fputs("\n", out);
        for (unsigned i = 0; i < d->nbobjs; i++) {
            fprintf(out, "  %5u ", d->objs[i]->os_index);
            for (unsigned k = 0; k < d->nbobjs; k++)
                fprintf(out, " %5llu", (unsigned long long)d->values[i * d->nbobjs + k]);
            fputs("\n", out);
        }
    }
    hwloc_distances_release(t->topology, d);
}

static void cpukinds_out(const struct np_topo *t, FILE *out, struct np_json *j)
{
    int nr = hwloc_cpukinds_get_nr(t->topology, 0);
    for (int k = 0; k < nr; k++) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        int eff;
        if (set == NULL)
            continue;
        hwloc_cpukinds_get_info(t->topology, (unsigned)k, set, &eff, NULL, NULL, 0);
        hwloc_bitmap_and(set, set, t->allowed);
        char *cpus = list(set);
        const char *info = cpukind_info(t->topology, (unsigned)k, &eff);
        if (j != NULL) {
            np_json_open(j, NULL, '{', false);
            np_json_int(j, "efficiency", eff);
            np_json_str(j, "cpus", cpus);
            np_json_str(j, "info", info);
            np_json_close(j);
        } else {
            fprintf(out, "  kind %d: efficiency=%d cpus=%s %s\n", k, eff, cpus, info);
        }
        free(cpus);
        hwloc_bitmap_free(set);
    }
    if (j == NULL && nr <= 0)
        fputs("  (one kind)\n", out);
}

void np_describe_text(const struct np_topo *t, FILE *out)
{
    char summary[2048];
    np_topo_summary(t, summary, sizeof summary);
    fprintf(out, "machine %s\n", summary);
    fputs("numa nodes:\n", out);
    nodes_out(t, out, NULL);
    fputs("distances (relative latency):\n", out);
    distances_out(t, out, NULL);
    fputs("packages:\n", out);
    each_obj(t, HWLOC_OBJ_PACKAGE, out, NULL);
    fputs("l3 domains:\n", out);
    each_obj(t, HWLOC_OBJ_L3CACHE, out, NULL);
    fputs("cpu kinds:\n", out);
    cpukinds_out(t, out, NULL);
    char *allowed = list(t->allowed);
    fprintf(out, "usable cpus: %s\n", allowed);
    free(allowed);
    fprintf(out, "recommended groups: %d (one per NUMA node with CPUs)\n", np_recommended_groups(t));
}

void np_describe_json(const struct np_topo *t, FILE *out)
{
    int cores = 0;
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t->topology, HWLOC_OBJ_CORE, o)) != NULL)
        cores += hwloc_bitmap_intersects(o->cpuset, t->allowed);
    char *allowed = list(t->allowed);
    struct np_json j;
    np_json_start(&j, out);
    np_json_open(&j, NULL, '{', true);
    np_json_int(&j, "pus", hwloc_bitmap_weight(t->allowed));
    np_json_int(&j, "cores", cores);
    np_json_str(&j, "usable_cpus", allowed);
    free(allowed);
    np_json_open(&j, "numa_nodes", '[', true);
    nodes_out(t, out, &j);
    np_json_close(&j);
    distances_out(t, out, &j);
    np_json_open(&j, "packages", '[', true);
    each_obj(t, HWLOC_OBJ_PACKAGE, out, &j);
    np_json_close(&j);
    np_json_open(&j, "l3", '[', true);
    each_obj(t, HWLOC_OBJ_L3CACHE, out, &j);
    np_json_close(&j);
    np_json_open(&j, "cpukinds", '[', true);
    cpukinds_out(t, out, &j);
    np_json_close(&j);
    np_json_int(&j, "recommended_groups", np_recommended_groups(t));
    np_json_close(&j);
}
