#define _GNU_SOURCE
#include "np_targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The machine's NUMA nodes, for error messages. */
static const char *all_nodes(const struct np_topo *topo, char *buf, size_t len)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    buf[0] = '\0';
    if (set == NULL)
        return buf;
    hwloc_obj_t n = NULL;
    while ((n = hwloc_get_next_obj_by_type(topo->topology, HWLOC_OBJ_NUMANODE, n)) != NULL)
        hwloc_bitmap_set(set, n->os_index);
    np_cpulist(buf, len, set);
    hwloc_bitmap_free(set);
    return buf;
}

struct np_targets *np_targets_none(void)
{
    struct np_targets *t = calloc(1, sizeof *t);
    if (t != NULL)
        t->none = true;
    return t;
}

enum np_targets_status np_targets_build(const struct np_options *o, const struct np_topo *topo,
                                        struct np_plan *plan, int group, struct np_targets **out,
                                        char *err, size_t errlen)
{
    char kind[32], nodes[256];
    *out = NULL;
    struct np_targets *t = calloc(1, sizeof *t);
    if (t == NULL) {
        np_plan_free(plan);
        return NP_TARGETS_NOMEM;
    }
    t->plan = *plan;
    memset(plan, 0, sizeof *plan);
    t->topo = topo;
    t->mine = &t->plan.groups[group];
    enum np_targets_status st = NP_TARGETS_NOMEM;
    if ((t->place_cpus = hwloc_bitmap_alloc()) == NULL || (t->mem_nodes = hwloc_bitmap_alloc()) == NULL ||
        (t->used_before = hwloc_bitmap_alloc()) == NULL)
        goto fail;
    if (np_plan_kind(topo, o->cpukind, t->mine->cpus, t->place_cpus) != 0) {
        snprintf(err, errlen, "option 'cpukind=%s' names a CPU kind this machine does not have: valid "
                 "values are performance, efficiency, any, or 0 to %d",
                 np_cpukind_name(o->cpukind, kind, sizeof kind),
                 hwloc_cpukinds_get_nr(topo->topology, 0) - 1);
        st = NP_TARGETS_CPUKIND;
        goto fail;
    }
    if (o->mem_nodes == NULL) {
        hwloc_bitmap_copy(t->mem_nodes, t->mine->nodes);
    } else {
        hwloc_bitmap_list_sscanf(t->mem_nodes, o->mem_nodes);
        int n;
        NP_FOREACH(n, t->mem_nodes) {
            if (hwloc_get_numanode_obj_by_os_index(topo->topology, (unsigned)n) == NULL) {
                snprintf(err, errlen, "option 'mem=%s:%s' names node %d, which this machine does not "
                         "have: valid nodes are %s", np_mem_mode_name(o->mem), o->mem_nodes, n,
                         all_nodes(topo, nodes, sizeof nodes));
                st = NP_TARGETS_MEMNODE;
                goto fail;
            }
        }
    }
    t->nslots = np_slots(topo, t->place_cpus, o->cpus, &t->slots);
    if (t->nslots <= 0) {
        if (t->nslots < 0)
            t->slots = NULL; /* np_slots failed: nothing to free */
        t->nslots = 0;
        goto fail;
    }
    np_cpulist(t->node_list, sizeof t->node_list, t->mine->nodes);
    *out = t;
    return NP_TARGETS_OK;
fail:
    np_targets_free(t);
    return st;
}

void np_targets_own_topo(struct np_targets *t, struct np_topo *topo)
{
    t->own_topo = *topo;
    memset(topo, 0, sizeof *topo);
    t->topo = &t->own_topo;
    t->owns_topo = true;
}

int np_targets_prepare(struct np_targets *t, const struct np_options *o)
{
    struct np_target target = {t->place_cpus, t->mem_nodes, o->mem};
    if (hwloc_bitmap_list_asprintf(&t->place_cpus_str, t->place_cpus) < 0 ||
        (t->slot_cpus_str = calloc((size_t)t->nslots, sizeof *t->slot_cpus_str)) == NULL ||
        np_policy_init(&t->policy, &target) != 0)
        return -1;
    for (int s = 0; s < t->nslots; s++)
        if (hwloc_bitmap_list_asprintf(&t->slot_cpus_str[s], t->slots[s]) < 0)
            return -1;
    if (np_cpumask_init(&t->place_mask, t->place_cpus) != 0 ||
        (t->slot_masks = calloc((size_t)t->nslots, sizeof *t->slot_masks)) == NULL)
        return -1;
    for (int s = 0; s < t->nslots; s++)
        if (np_cpumask_init(&t->slot_masks[s], t->slots[s]) != 0)
            return -1;
    t->nplace_cpus = hwloc_bitmap_weight(t->place_cpus);
    /* Each CPU's slot, for the thread that can stay where it runs. */
    t->ncpus_known = hwloc_bitmap_last(t->place_cpus) + 1;
    if (t->ncpus_known > 0) {
        if ((t->slot_of_cpu = malloc((size_t)t->ncpus_known * sizeof *t->slot_of_cpu)) == NULL)
            return -1;
        for (int c = 0; c < t->ncpus_known; c++)
            t->slot_of_cpu[c] = -1;
        for (int s = 0; s < t->nslots; s++) {
            int c = -1;
            while ((c = hwloc_bitmap_next(t->slots[s], c)) >= 0 && c < t->ncpus_known)
                t->slot_of_cpu[c] = s;
        }
    }
    np_mem_target_str(t->mem_str, sizeof t->mem_str, &target);
    t->report_plan = (struct np_report_plan){
        .group = t->mine->group, .groups = t->plan.ngroups, .domain = o->domain,
        .node = t->node_list, .slice = t->mine->slice + 1, .slices = t->mine->nslices,
        .cpus = t->place_cpus_str, .cpus_mode = o->cpus, .cpukind = o->cpukind,
        .nslots = t->nslots, .slot_cpus = (const char *const *)t->slot_cpus_str,
        .mem = t->mem_str, .threads = o->threads.text, .scope = o->scope,
        .dryrun = o->dryrun, .plan = t->gen,
    };
    return 0;
}

void np_targets_inherit_policy(struct np_targets *t, bool inherited)
{
    t->policy.inherited = inherited && !t->none && t->policy.mode >= 0;
    t->report_plan.mem_inherited = t->policy.inherited;
}

const struct np_targets *np_targets_find(const struct np_targets *t, unsigned gen)
{
    for (const struct np_targets *o = t; o != NULL; o = o->older)
        if (o->gen == gen)
            return o;
    return t;
}

bool np_targets_is_placement(const struct np_targets *t, hwloc_const_bitmap_t cpus)
{
    if (t->none)
        return false;
    if (hwloc_bitmap_isequal(cpus, t->place_cpus))
        return true;
    for (int s = 0; s < t->nslots; s++)
        if (hwloc_bitmap_isequal(cpus, t->slots[s]))
            return true;
    return false;
}

int np_targets_set_unplaced(struct np_targets *t, hwloc_const_bitmap_t cpus,
                            const struct np_actual *startup)
{
    if (!t->have_unplaced) {
        if (np_actual_init(&t->unplaced) != 0)
            return -1;
        t->have_unplaced = true;
    }
    hwloc_bitmap_copy(t->unplaced.cpus, cpus);
    hwloc_bitmap_copy(t->unplaced.mem_nodes, startup->mem_nodes);
    t->unplaced.mem_mode = startup->mem_mode;
    t->unplaced.mem_flags = startup->mem_flags;
    t->may_inherit = !t->none && !hwloc_bitmap_isequal(t->place_cpus, cpus);
    for (int s = 0; !t->may_inherit && s < t->nslots; s++)
        t->may_inherit = !hwloc_bitmap_isequal(t->slots[s], cpus);
    return 0;
}

hwloc_const_bitmap_t np_targets_cpus(const struct np_targets *t, int slot)
{
    return slot >= 0 && slot < t->nslots ? t->slots[slot] : t->place_cpus;
}

const struct np_cpumask *np_targets_mask(const struct np_targets *t, int slot)
{
    if (slot >= 0 && slot < t->nslots)
        return t->slot_masks != NULL ? &t->slot_masks[slot] : NULL;
    return &t->place_mask;
}

int np_targets_slot_of(const struct np_targets *t, int cpu)
{
    return cpu >= 0 && cpu < t->ncpus_known && t->slot_of_cpu != NULL ? t->slot_of_cpu[cpu] : -1;
}

const char *np_targets_cpus_str(const struct np_targets *t, int slot)
{
    return slot >= 0 && slot < t->nslots ? t->slot_cpus_str[slot] : t->place_cpus_str;
}

bool np_targets_same(const struct np_targets *a, const struct np_targets *b)
{
    if (a->none || b->none)
        return a->none == b->none;
    if (!hwloc_bitmap_isequal(a->place_cpus, b->place_cpus) ||
        !hwloc_bitmap_isequal(a->mem_nodes, b->mem_nodes) || a->nslots != b->nslots ||
        a->mine->slice != b->mine->slice || a->mine->nslices != b->mine->nslices)
        return false;
    for (int s = 0; s < a->nslots; s++)
        if (!hwloc_bitmap_isequal(a->slots[s], b->slots[s]))
            return false;
    return true;
}

void np_targets_free(struct np_targets *t)
{
    if (t == NULL)
        return;
    for (int s = 0; t->slot_cpus_str != NULL && s < t->nslots; s++)
        free(t->slot_cpus_str[s]);
    free(t->slot_cpus_str);
    free(t->place_cpus_str);
    np_cpumask_destroy(&t->place_mask);
    for (int s = 0; t->slot_masks != NULL && s < t->nslots; s++)
        np_cpumask_destroy(&t->slot_masks[s]);
    free(t->slot_masks);
    free(t->slot_of_cpu);
    np_policy_destroy(&t->policy);
    np_slots_free(t->slots, t->nslots);
    hwloc_bitmap_free(t->place_cpus);
    hwloc_bitmap_free(t->mem_nodes);
    hwloc_bitmap_free(t->used_before);
    if (t->have_unplaced)
        np_actual_destroy(&t->unplaced);
    np_plan_free(&t->plan);
    if (t->owns_topo)
        np_topo_destroy(&t->own_topo);
    free(t);
}

void np_targets_free_all(struct np_targets *t)
{
    while (t != NULL) {
        struct np_targets *older = (struct np_targets *)t->older;
        np_targets_free(t);
        t = older;
    }
}
