#define _GNU_SOURCE
#include "np_describe.h"

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
    char *s = NULL;
    if (hwloc_bitmap_iszero(set) || hwloc_bitmap_list_asprintf(&s, set) < 0)
        return strdup("");
    return s;
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

static void each_obj(const struct np_topo *t, hwloc_obj_type_t type, FILE *out, int json)
{
    hwloc_obj_t o = NULL;
    int first = 1;
    while ((o = hwloc_get_next_obj_by_type(t->topology, type, o)) != NULL) {
        hwloc_bitmap_t s = usable(t, o);
        if (s == NULL)
            continue;
        char *cpus = list(s), *nodes = list(o->nodeset);
        /* Caches, and some packages, have no OS index. */
        int known = o->os_index != HWLOC_UNKNOWN_INDEX;
        if (json) {
            fprintf(out, "%s{\"logical_index\":%u,\"os_index\":", first ? "" : ",",
                    o->logical_index);
            if (known)
                fprintf(out, "%u", o->os_index);
            else
                fputs("null", out);
            fprintf(out, ",\"cpus\":\"%s\",\"nodes\":\"%s\"", cpus, nodes);
        } else {
            fprintf(out, "  %s L#%u", hwloc_obj_type_string(type), o->logical_index);
            if (known)
                fprintf(out, " P#%u", o->os_index);
            fprintf(out, ": cpus=%s nodes=%s", cpus[0] ? cpus : "none", nodes);
        }
        if (type == HWLOC_OBJ_L3CACHE && o->attr != NULL)
            fprintf(out, json ? ",\"size\":%llu" : " size=%lluKiB",
                    json ? (unsigned long long)o->attr->cache.size
                         : (unsigned long long)o->attr->cache.size / 1024);
        fputs(json ? "}" : "\n", out);
        first = 0;
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

static void nodes_out(const struct np_topo *t, FILE *out, int json)
{
    hwloc_obj_t n = NULL;
    int first = 1;
    while ((n = hwloc_get_next_obj_by_type(t->topology, HWLOC_OBJ_NUMANODE, n)) != NULL) {
        hwloc_bitmap_t s = usable(t, n);
        char *cpus = s ? list(s) : strdup("");
        const char *subtype = n->subtype ? n->subtype : "";
        unsigned long long mem = n->attr ? (unsigned long long)n->attr->numanode.local_memory : 0;
        if (json) {
            fprintf(out, "%s{\"os_index\":%u,\"cpus\":\"%s\",\"memory\":%llu,\"kind\":",
                    first ? "" : ",", n->os_index, cpus ? cpus : "", mem);
            np_json_string(out, subtype);
            fprintf(out, ",\"takes_groups\":%s}", node_has_cpus(t, n) ? "true" : "false");
        } else
            fprintf(out, "  node P#%u: cpus=%s memory=%lluMiB%s%s%s\n", n->os_index,
                    cpus && cpus[0] ? cpus : "none", mem >> 20, subtype[0] ? " kind=" : "",
                    subtype, node_has_cpus(t, n) ? "" : " (takes no group)");
        first = 0;
        free(cpus);
        hwloc_bitmap_free(s);
    }
}

static void distances_out(const struct np_topo *t, FILE *out, int json)
{
    struct hwloc_distances_s *d = node_distances(t);
    if (d == NULL) {
        fputs(json ? "null" : "  (none reported)\n", out);
        return;
    }
    if (json) {
        fputs("{\"nodes\":[", out);
        for (unsigned i = 0; i < d->nbobjs; i++)
            fprintf(out, "%s%u", i ? "," : "", d->objs[i]->os_index);
        fputs("],\"values\":[", out);
        for (unsigned i = 0; i < d->nbobjs; i++) {
            fputs(i ? ",[" : "[", out);
            for (unsigned j = 0; j < d->nbobjs; j++)
                fprintf(out, "%s%llu", j ? "," : "", (unsigned long long)d->values[i * d->nbobjs + j]);
            fputs("]", out);
        }
        fputs("]}", out);
    } else {
        fputs("        ", out);
        for (unsigned j = 0; j < d->nbobjs; j++)
            fprintf(out, " %5u", d->objs[j]->os_index);
        fputs("\n", out);
        for (unsigned i = 0; i < d->nbobjs; i++) {
            fprintf(out, "  %5u ", d->objs[i]->os_index);
            for (unsigned j = 0; j < d->nbobjs; j++)
                fprintf(out, " %5llu", (unsigned long long)d->values[i * d->nbobjs + j]);
            fputs("\n", out);
        }
    }
    hwloc_distances_release(t->topology, d);
}

static void cpukinds_out(const struct np_topo *t, FILE *out, int json)
{
    int nr = hwloc_cpukinds_get_nr(t->topology, 0);
    int first = 1;
    for (int k = 0; k < nr; k++) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        int eff;
        if (set == NULL)
            continue;
        hwloc_cpukinds_get_info(t->topology, (unsigned)k, set, &eff, NULL, NULL, 0);
        hwloc_bitmap_and(set, set, t->allowed);
        char *cpus = list(set);
        const char *info = cpukind_info(t->topology, (unsigned)k, &eff);
        if (json) {
            fprintf(out, "%s{\"efficiency\":%d,\"cpus\":\"%s\",\"info\":", first ? "" : ",",
                    eff, cpus);
            np_json_string(out, info);
            fputs("}", out);
        } else
            fprintf(out, "  kind %d: efficiency=%d cpus=%s %s\n", k, eff, cpus, info);
        first = 0;
        free(cpus);
        hwloc_bitmap_free(set);
    }
    if (!json && nr <= 0)
        fputs("  (one kind)\n", out);
}

void np_describe_text(const struct np_topo *t, FILE *out)
{
    char summary[2048];
    np_topo_summary(t, summary, sizeof summary);
    fprintf(out, "machine %s\n", summary);
    fputs("numa nodes:\n", out);
    nodes_out(t, out, 0);
    fputs("distances (relative latency):\n", out);
    distances_out(t, out, 0);
    fputs("packages:\n", out);
    each_obj(t, HWLOC_OBJ_PACKAGE, out, 0);
    fputs("l3 domains:\n", out);
    each_obj(t, HWLOC_OBJ_L3CACHE, out, 0);
    fputs("cpu kinds:\n", out);
    cpukinds_out(t, out, 0);
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
    fprintf(out, "{\"pus\":%d,\"cores\":%d,\"usable_cpus\":\"%s\",\"numa_nodes\":[",
            hwloc_bitmap_weight(t->allowed), cores, allowed);
    free(allowed);
    nodes_out(t, out, 1);
    fputs("],\"distances\":", out);
    distances_out(t, out, 1);
    fputs(",\"packages\":[", out);
    each_obj(t, HWLOC_OBJ_PACKAGE, out, 1);
    fputs("],\"l3\":[", out);
    each_obj(t, HWLOC_OBJ_L3CACHE, out, 1);
    fputs("],\"cpukinds\":[", out);
    cpukinds_out(t, out, 1);
    fprintf(out, "],\"recommended_groups\":%d}\n", np_recommended_groups(t));
}
