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

/* The cores with PUs in `cpus`, in logical order, each restricted to `cpus`;
 * with `firsts`, also each core's first such PU object.  Returns the count,
 * or -1. */
static int cores_in(const struct np_topo *t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t **out,
                    hwloc_obj_t **firsts)
{
    int n = 0, cap = 0;
    hwloc_bitmap_t *cores = NULL;
    hwloc_obj_t *first = NULL;
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
                hwloc_obj_t *f = firsts ? realloc(first, (size_t)cap * sizeof *f) : NULL;
                if (firsts && f == NULL)
                    goto fail;
                first = f;
            }
            if ((cores[n] = hwloc_bitmap_alloc()) == NULL)
                goto fail;
            if (firsts)
                first[n] = pu;
            n++;
            last = core;
        }
        hwloc_bitmap_set(cores[n - 1], pu->os_index);
    }
    *out = cores;
    if (firsts)
        *firsts = first;
    return n;
fail:
    np_slots_free(cores, n);
    free(first);
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
    int ncores = cores_in(t, cpus, &cores, NULL);
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

/* Equal-sized L3 caches covering a domain's cores: their count, with
 * l3_of[c] the L3 of core c, or 0 when the domain has no such layout. */
static int equal_l3s(const struct np_topo *t, const hwloc_obj_t *firsts, int ncores, int *l3_of)
{
    int n = 0, size = 0, run = 0;
    hwloc_obj_t last = NULL;
    for (int c = 0; c < ncores; c++) {
        hwloc_obj_t l3 = hwloc_get_ancestor_obj_by_type(t->topology, HWLOC_OBJ_L3CACHE, firsts[c]);
        if (l3 == NULL)
            return 0;
        if (l3 != last) {
            if (n > 0 && size != 0 && run != size)
                return 0;
            if (n == 1)
                size = run;
            n++;
            run = 0;
            last = l3;
        }
        l3_of[c] = n - 1;
        run++;
    }
    if (n > 1 && run != (size ? size : run))
        return 0;
    /* The same L3 must not come back after another (cores in L3 order). */
    return n;
}

/* Gives group g its slice of domain `dom`, shared by k groups of which g is
 * the r-th. */
static int slice_domain(const struct np_topo *t, struct np_plan *p, struct np_group_plan *g,
                        int dom, int r, int k)
{
    hwloc_const_bitmap_t cpus = p->domains.cpus[dom];
    hwloc_bitmap_t *cores;
    hwloc_obj_t *firsts = NULL;
    int ncores = cores_in(t, cpus, &cores, &firsts);
    if (ncores < 0)
        return -1;
    int *l3_of = calloc(ncores > 0 ? (size_t)ncores : 1, sizeof *l3_of);
    if (l3_of == NULL)
        goto fail;
    int first, count;
    const char *what = np_domain_name(p->kind);
    /* Nodes and packages by the number the OS gives them; caches have none
     * (hwloc's logical index, as lstopo shows "L3 L#2"). */
    hwloc_obj_t obj = p->domains.objs[dom];
    unsigned os = obj->os_index != HWLOC_UNKNOWN_INDEX ? obj->os_index : obj->logical_index;
    int nl3 = ncores >= k ? equal_l3s(t, firsts, ncores, l3_of) : 0;
    if (nl3 > 1 && k > nl3 && k % nl3 == 0) {
        /* k/nl3 groups per L3, each L3 sliced on its own. */
        int per = k / nl3, l3 = r / per, lfirst = -1, lcount = 0;
        for (int c = 0; c < ncores; c++)
            if (l3_of[c] == l3) {
                lfirst = lfirst < 0 ? c : lfirst;
                lcount++;
            }
        if (lcount >= per) {
            np_split(lcount, per, r % per, &first, &count);
            first += lfirst;
            for (int c = first; c < first + count; c++)
                hwloc_bitmap_or(g->cpus, g->cpus, cores[c]);
            goto done;
        }
    }
    if (ncores >= k) {
        np_split(ncores, k, r, &first, &count);
        for (int c = first; c < first + count; c++)
            hwloc_bitmap_or(g->cpus, g->cpus, cores[c]);
    } else {
        /* Fewer cores than groups: slice by hardware thread, or share. */
        int npus = hwloc_bitmap_weight(cpus);
        if (npus >= k) {
            np_split(npus, k, r, &first, &count);
            if (r == 0 && warn(p, g->group, g->group + k - 1,
                               "%s %u has %d cores for %d groups: its groups split cores "
                               "between them", what, os, ncores, k) != 0)
                goto fail;
        } else {
            first = r % npus;
            count = 1;
            if (r == 0 && warn(p, g->group, g->group + k - 1,
                               "%s %u has %d CPUs for %d groups: groups share CPUs", what, os,
                               npus, k) != 0)
                goto fail;
        }
        /* The domain's hardware threads in core order, so that a slice
         * keeps a core's threads together where it can. */
        int i = 0;
        for (int c = 0; c < ncores; c++) {
            int idx;
            NP_FOREACH(idx, cores[c]) {
                if (i >= first && i < first + count)
                    hwloc_bitmap_set(g->cpus, (unsigned)idx);
                i++;
            }
        }
    }
done:
    free(l3_of);
    free(firsts);
    np_slots_free(cores, ncores);
    return 0;
fail:
    free(l3_of);
    free(firsts);
    np_slots_free(cores, ncores);
    return -1;
}

/* The home nodes of a set of CPUs. */
static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Fewer groups than domains: each group in turn takes the cheapest cluster
 * of `size` unassigned domains.  A cluster grows from a seed by adding the
 * domain nearest to its members (lowest index on ties); of all seeds the
 * cheapest cluster wins (lowest seed on ties). */
static int cluster(struct np_plan *p)
{
    const struct np_domains *d = &p->domains;
    int D = d->n, G = p->ngroups;
    int *owner = malloc((size_t)D * sizeof *owner);
    int *set = malloc((size_t)D * sizeof *set);
    int *best = malloc((size_t)D * sizeof *best);
    double *sum = malloc((size_t)D * sizeof *sum);
    int rc = -1;
    if (owner == NULL || set == NULL || best == NULL || sum == NULL)
        goto out;
    for (int i = 0; i < D; i++)
        owner[i] = -1;
    for (int g = 0; g < G; g++) {
        int first, size;
        np_split(D, G, g, &first, &size);
        double best_cost = -1;
        for (int seed = 0; seed < D; seed++) {
            if (owner[seed] >= 0)
                continue;
            int n = 0;
            double cost = 0;
            set[n++] = seed;
            owner[seed] = -2; /* in the cluster being grown */
            for (int u = 0; u < D; u++)
                sum[u] = d->dist[u * D + seed];
            while (n < size) {
                int pick = -1;
                for (int u = 0; u < D; u++)
                    if (owner[u] == -1 && (pick < 0 || sum[u] < sum[pick] - 1e-9))
                        pick = u;
                cost += sum[pick];
                set[n++] = pick;
                owner[pick] = -2;
                for (int u = 0; u < D; u++)
                    sum[u] += d->dist[u * D + pick];
            }
            for (int i = 0; i < n; i++)
                owner[set[i]] = -1;
            if (best_cost < 0 || cost < best_cost - 1e-9) {
                best_cost = cost;
                memcpy(best, set, (size_t)n * sizeof *set);
            }
        }
        struct np_group_plan *gp = &p->groups[g];
        qsort(best, (size_t)size, sizeof *best, cmp_int);
        if ((gp->domains = malloc((size_t)size * sizeof *gp->domains)) == NULL)
            goto out;
        memcpy(gp->domains, best, (size_t)size * sizeof *best);
        gp->ndomains = size;
        gp->nslices = 1;
        for (int i = 0; i < size; i++) {
            owner[best[i]] = g;
            hwloc_bitmap_or(gp->cpus, gp->cpus, d->cpus[best[i]]);
            hwloc_bitmap_or(gp->nodes, gp->nodes, d->nodes[best[i]]);
        }
    }
    rc = 0;
out:
    free(owner);
    free(set);
    free(best);
    free(sum);
    return rc;
}

/* More groups than domains: group g's domain and rank on it. */
static int spread(const struct np_topo *t, struct np_plan *p, int gi)
{
    struct np_group_plan *g = &p->groups[gi];
    int D = p->domains.n;
    for (int dom = 0; dom < D; dom++) {
        int first, count;
        np_split(p->ngroups, D, dom, &first, &count);
        if (gi < first || gi >= first + count)
            continue;
        if ((g->domains = malloc(sizeof *g->domains)) == NULL)
            return -1;
        g->domains[0] = dom;
        g->ndomains = 1;
        g->slice = gi - first;
        g->nslices = count;
        if (slice_domain(t, p, g, dom, gi - first, count) != 0)
            return -1;
        np_topo_home_nodes(t, g->cpus, g->nodes);
        return 0;
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

/* CPUs in no domain of the kind asked for (an L3 level covering only some
 * CPUs): no group uses them; say so, for every group. */
static int warn_uncovered(const struct np_topo *t, struct np_plan *p)
{
    hwloc_bitmap_t rest = hwloc_bitmap_alloc();
    if (rest == NULL)
        return -1;
    for (int n = 0; n < t->nnodes; n++)
        hwloc_bitmap_or(rest, rest, t->node_cpus[n]);
    for (int d = 0; d < p->domains.n; d++)
        hwloc_bitmap_andnot(rest, rest, p->domains.cpus[d]);
    int rc = 0;
    if (!hwloc_bitmap_iszero(rest)) {
        char *list = NULL;
        if (hwloc_bitmap_list_asprintf(&list, rest) < 0)
            rc = -1;
        else
            rc = warn(p, 0, p->ngroups - 1,
                      "CPUs %s are in no %s domain: no group uses them (domain=node covers every "
                      "CPU)", list, np_domain_name(p->kind));
        free(list);
    }
    hwloc_bitmap_free(rest);
    return rc;
}

/* Groups spanning NUMA nodes, and group counts that do not divide evenly:
 * the advice, with the count that fits. */
static int advise(const struct np_topo *t, struct np_plan *p)
{
    int G = p->ngroups, D = p->domains.n, N = t->nnodes;
    const char *fix = p->kind == NP_DOMAIN_NODE ? "" : "domain=node,";
    for (int g = 0; g < G; g++) {
        const struct np_group_plan *gp = &p->groups[g];
        /* A group that is one package (domain=package) spans that package's
         * nodes by request: warn only when several domains make a group. */
        if (hwloc_bitmap_weight(gp->nodes) <= 1 || gp->ndomains <= 1)
            continue;
        char *list = NULL;
        if (hwloc_bitmap_list_asprintf(&list, gp->nodes) < 0)
            return -1;
        int rc = warn(p, g, g, "group %d spans nodes %s: its threads' memory is not all local; "
                               "%sgroups=%d (one group per node) keeps every group on one node",
                      g, list, fix, N);
        free(list);
        if (rc != 0)
            return -1;
    }
    if (G > D && G % D != 0)
        return warn(p, 0, G - 1, "%d groups on %d %ss do not divide evenly: %ss take %d or %d "
                                 "groups, so groups differ in size; groups=%d or groups=%d "
                                 "divide evenly", G, D, np_domain_name(p->kind),
                    np_domain_name(p->kind), G / D + 1, G / D, D * (G / D), D * (G / D + 1));
    return 0;
}

int np_plan_build(const struct np_topo *t, int groups, enum np_domain kind, struct np_plan *p)
{
    memset(p, 0, sizeof *p);
    if (groups < 1 || groups > NP_MAX_GROUPS || t->nnodes < 1) {
        errno = EINVAL;
        return -1;
    }
    p->kind = kind;
    if (np_domains_get(t, kind, &p->domains) != 0)
        return -1;
    if ((p->groups = calloc((size_t)groups, sizeof *p->groups)) == NULL)
        goto fail;
    p->ngroups = groups;
    for (int g = 0; g < groups; g++) {
        p->groups[g].group = g;
        if ((p->groups[g].cpus = hwloc_bitmap_alloc()) == NULL ||
            (p->groups[g].nodes = hwloc_bitmap_alloc()) == NULL)
            goto fail;
    }
    if (warn_adopted(t, p) != 0 || warn_uncovered(t, p) != 0)
        goto fail;
    if (groups <= p->domains.n) {
        if (cluster(p) != 0)
            goto fail;
    } else {
        for (int g = 0; g < groups; g++)
            if (spread(t, p, g) != 0)
                goto fail;
    }
    if (advise(t, p) != 0)
        goto fail;
    return 0;
fail:;
    int e = errno ? errno : ENOMEM;
    np_plan_free(p);
    errno = e;
    return -1;
}

int np_plan_kind(const struct np_topo *t, int kind, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    int nr = hwloc_cpukinds_get_nr(t->topology, 0);
    hwloc_bitmap_copy(out, cpus);
    if (kind >= 0 && kind >= (nr > 0 ? nr : 1)) {
        errno = EINVAL;
        return -1;
    }
    if (nr <= 1 || kind == NP_CPUKIND_ANY)
        return 0;
    /* hwloc orders kinds from least to most efficient for performance. */
    int index = kind == NP_CPUKIND_PERFORMANCE ? nr - 1 : kind == NP_CPUKIND_EFFICIENCY ? 0 : kind;
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    if (set == NULL || hwloc_cpukinds_get_info(t->topology, (unsigned)index, set, NULL, NULL,
                                               NULL, 0) != 0) {
        hwloc_bitmap_free(set);
        return 0;
    }
    hwloc_bitmap_and(out, cpus, set);
    hwloc_bitmap_free(set);
    if (hwloc_bitmap_iszero(out))
        hwloc_bitmap_copy(out, cpus); /* the group has none of that kind */
    return 0;
}

void np_plan_free(struct np_plan *p)
{
    for (int g = 0; p->groups != NULL && g < p->ngroups; g++) {
        hwloc_bitmap_free(p->groups[g].cpus);
        hwloc_bitmap_free(p->groups[g].nodes);
        free(p->groups[g].domains);
    }
    free(p->groups);
    np_domains_free(&p->domains);
    for (int i = 0; i < p->nwarnings; i++)
        free(p->warnings[i].text);
    free(p->warnings);
    memset(p, 0, sizeof *p);
}
