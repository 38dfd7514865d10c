/* Planner properties.
 *
 * 1. Over every machine in $NUMAPIN_TOPOLOGIES and a list of synthetic
 *    machines, for domain=node and every group count G from 1 to 2 x nodes
 *    (check_plan):
 *  (a) G >= nodes: each group lies within one node's allowed CPUs, and
 *      groups' CPU sets are pairwise disjoint, except between groups of a
 *      node the plan warns must "share CPUs", which it may only do when
 *      the node has fewer allowed CPUs than groups;
 *      G <= nodes: groups hold disjoint sets of whole nodes;
 *  (b) the union of the groups' CPUs is exactly topo.allowed;
 *  (c) balance: G >= nodes: groups per node differ by at most one, and the
 *      core counts of the groups sharing a node by at most one; G <= nodes:
 *      node counts per group differ by at most one, larger groups first;
 *  (d) every group has CPUs and nodes;
 *  (e) where a node has at least as many cores as groups, slices are whole
 *      cores (all allowed PUs of a core in the same group), and the plan
 *      warns about splitting cores exactly where it has fewer.
 *
 * 2. For every domain kind (node, package, l3) on the same machines and on
 *    96 generated ones (packages 1-4, nodes per package 1-4, no L3 / 1-3
 *    L3s per node / one L3 per package over its nodes, cores 1-6, 1 or 2
 *    threads, the second sometimes numbered far away), each also under
 *    three random cpuset restrictions (np_topo_restrict, seeded PRNG), for
 *    G from 1 to 2 x domains and 3, 4, 6 x domains: check_kind (its
 *    comment lists the properties, L3-aligned slices among them), and for
 *    domain=node "nearest nodes grouped" (check_nearest).
 *
 * 3. Named machines: EPYC NPS4 sockets and node pairs from its distance
 *    matrix, a matrix that beats the numbering, an asymmetric matrix,
 *    grouping by package without a matrix, L3-aligned slices, 2048 PUs,
 *    hybrid CPU kinds, CPU-less memory nodes, L3 names in warnings.
 *
 * Every check here recomputes what it needs from hwloc itself. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_plan.h"
#include "np_topo.h"
#include "tests.h"

static const char *const synthetic[] = {
    "pack:1 numa:1 core:1 pu:1",
    "pack:1 numa:2 core:1 pu:1",
    "pack:1 numa:3 core:1 pu:1",
    "pack:1 numa:1 core:2 pu:1",
    "pack:2 numa:2 core:2 pu:1",
    "pack:2 numa:2 core:4 pu:2",
    "pack:1 numa:3 core:5 pu:2",
    "pack:1 numa:2 core:1 pu:4",
    "pack:2 numa:4 l3:2 core:3 pu:2",
    "numa:5 core:7 pu:1",
    "pack:1 numa:2 core:3 pu:2(indexes=0,6,1,7,2,8,3,9,4,10,5,11)",
    "pack:1 numa:2 core:2 pu:3(indexes=0,4,8,1,5,9,2,6,10,3,7,11)",
    "pack:1 numa:2 core:1 pu:3(indexes=0,2,4,1,3,5)",
};
#define NSYNTH ((int)(sizeof synthetic / sizeof *synthetic))

static char **xml_files;
static int nxml;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void find_xml_files(void)
{
    const char *dir = getenv("NUMAPIN_TOPOLOGIES");
    DIR *d = dir ? opendir(dir) : NULL;
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".xml") != 0)
            continue;
        char **f = realloc(xml_files, (size_t)(nxml + 1) * sizeof *f);
        if (f == NULL)
            break;
        xml_files = f;
        if (asprintf(&xml_files[nxml], "%s/%s", dir, e->d_name) < 0)
            break;
        nxml++;
    }
    closedir(d);
    if (nxml > 0)
        qsort(xml_files, (size_t)nxml, sizeof *xml_files, cmp_str);
}

static void pfail(const char *label, int G, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));

static void pfail(const char *label, int G, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    ck_abort_msg("%s, groups=%d: %s", label, G, msg);
}

/* The core holding an allowed PU (the PU itself when there are no cores). */
static hwloc_obj_t core_of_pu(const struct np_topo *t, unsigned os)
{
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(t->topology, os);
    ck_assert_ptr_nonnull(pu);
    hwloc_obj_t c = hwloc_get_ancestor_obj_by_type(t->topology, HWLOC_OBJ_CORE, pu);
    return c ? c : pu;
}

/* Number of distinct cores holding the PUs of `set`, each PU's core found
 * by `core_of`. */
static int distinct_cores(const struct np_topo *t, hwloc_const_bitmap_t set,
                          hwloc_obj_t (*core_of)(const struct np_topo *, unsigned))
{
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();
    int n = 0, i = -1;
    while ((i = hwloc_bitmap_next(set, i)) >= 0) {
        hwloc_obj_t c = core_of(t, (unsigned)i);
        /* Cores and PUs have separate logical index spaces. */
        unsigned key = c->logical_index * 2 + (c->type == HWLOC_OBJ_PU);
        if (!hwloc_bitmap_isset(seen, key)) {
            hwloc_bitmap_set(seen, key);
            n++;
        }
    }
    hwloc_bitmap_free(seen);
    return n;
}

static int count_cores(const struct np_topo *t, hwloc_const_bitmap_t set)
{
    return distinct_cores(t, set, core_of_pu);
}

static int node_index(const struct np_topo *t, unsigned os)
{
    for (int n = 0; n < t->nnodes; n++)
        if (t->nodes[n]->os_index == os)
            return n;
    return -1;
}

/* True when a warning concerning groups [first, last] contains `text`. */
static bool warned(const struct np_plan *p, int first, int last, const char *text)
{
    for (int i = 0; i < p->nwarnings; i++)
        if (p->warnings[i].first_group == first && p->warnings[i].last_group == last &&
            strstr(p->warnings[i].text, text) != NULL)
            return true;
    return false;
}

static void check_plan(const struct np_topo *t, int G, const char *label)
{
    struct np_plan p;
    const int N = t->nnodes;
    char a[1024], b[1024];
    if (np_plan_build(t, G, NP_DOMAIN_NODE, &p) != 0)
        pfail(label, G, "np_plan_build failed");
    if (p.ngroups != G)
        pfail(label, G, "plan has %d groups", p.ngroups);
    int expected_warnings = 0;

    /* (d), and (b). */
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    for (int g = 0; g < G; g++) {
        const struct np_group_plan *gp = &p.groups[g];
        if (gp->group != g)
            pfail(label, G, "group %d is numbered %d", g, gp->group);
        if (hwloc_bitmap_iszero(gp->cpus))
            pfail(label, G, "group %d has no CPUs", g);
        if (hwloc_bitmap_iszero(gp->nodes))
            pfail(label, G, "group %d has no nodes", g);
        if (!hwloc_bitmap_isincluded(gp->cpus, t->allowed))
            pfail(label, G, "group %d cpus %s are not all allowed (%s)", g,
                  t_list(gp->cpus, a, sizeof a), t_list(t->allowed, b, sizeof b));
        hwloc_bitmap_or(all, all, gp->cpus);
    }
    if (!hwloc_bitmap_isequal(all, t->allowed))
        pfail(label, G, "groups use cpus %s, allowed are %s", t_list(all, a, sizeof a),
              t_list(t->allowed, b, sizeof b));
    hwloc_bitmap_free(all);

    /* Which groups may overlap: pairs on a node that shares its CPUs. */
    int *node_of = calloc((size_t)G, sizeof *node_of);
    bool *shares = calloc((size_t)N, sizeof *shares);
    ck_assert(node_of && shares);

    if (G <= N) {
        /* Whole nodes, each in exactly one group, counts balanced and
         * non-increasing (the larger groups first). */
        int minc = N + 1, maxc = 0, prevc = N + 1;
        int *owner = calloc((size_t)N, sizeof *owner);
        ck_assert_ptr_nonnull(owner);
        for (int n = 0; n < N; n++)
            owner[n] = -1;
        for (int g = 0; g < G; g++) {
            const struct np_group_plan *gp = &p.groups[g];
            int cnt = gp->ndomains;
            if (cnt != hwloc_bitmap_weight(gp->nodes))
                pfail(label, G, "group %d has %d domains but nodes %s", g, cnt,
                      t_list(gp->nodes, a, sizeof a));
            hwloc_bitmap_t cpus = hwloc_bitmap_alloc();
            for (int k = 0; k < cnt; k++) {
                int n = gp->domains[k];
                if (n < 0 || n >= N || (k > 0 && n <= gp->domains[k - 1]))
                    pfail(label, G, "group %d domain list is not ascending node indexes", g);
                if (owner[n] >= 0)
                    pfail(label, G, "node #%d is in groups %d and %d", n, owner[n], g);
                owner[n] = g;
                if (!hwloc_bitmap_isset(gp->nodes, t->nodes[n]->os_index))
                    pfail(label, G, "group %d nodes %s lack its node #%d", g,
                          t_list(gp->nodes, a, sizeof a), n);
                hwloc_bitmap_or(cpus, cpus, t->node_cpus[n]);
            }
            if (!hwloc_bitmap_isequal(cpus, gp->cpus))
                pfail(label, G, "group %d cpus %s, its nodes' allowed cpus are %s", g,
                      t_list(gp->cpus, a, sizeof a), t_list(cpus, b, sizeof b));
            hwloc_bitmap_free(cpus);
            if (cnt > prevc)
                pfail(label, G, "group %d has more nodes (%d) than group %d (%d)", g, cnt, g - 1, prevc);
            bool spans = warned(&p, g, g, "spans nodes");
            if (spans != (cnt > 1))
                pfail(label, G, "group %d has %d nodes but %s a 'spans nodes' warning", g, cnt,
                      spans ? "has" : "lacks");
            expected_warnings += cnt > 1;
            prevc = cnt;
            minc = cnt < minc ? cnt : minc;
            maxc = cnt > maxc ? cnt : maxc;
            node_of[g] = -1; /* several nodes */
        }
        for (int n = 0; n < N; n++)
            if (owner[n] < 0)
                pfail(label, G, "node #%d is in no group", n);
        free(owner);
        if (maxc - minc > 1)
            pfail(label, G, "groups hold %d to %d nodes", minc, maxc);
    }

    if (G >= N) {
        /* (a): one node each, within its allowed CPUs; groups in order of
         * node; (c) groups per node balanced. */
        int *per_node = calloc((size_t)N, sizeof *per_node);
        ck_assert_ptr_nonnull(per_node);
        int prev = 0;
        for (int g = 0; g < G; g++) {
            const struct np_group_plan *gp = &p.groups[g];
            if (hwloc_bitmap_weight(gp->nodes) != 1)
                pfail(label, G, "group %d has nodes %s, not one", g, t_list(gp->nodes, a, sizeof a));
            int n = node_index(t, (unsigned)hwloc_bitmap_first(gp->nodes));
            if (n < 0)
                pfail(label, G, "group %d node %d is not a node with CPUs", g,
                      hwloc_bitmap_first(gp->nodes));
            if (!hwloc_bitmap_isincluded(gp->cpus, t->node_cpus[n]))
                pfail(label, G, "group %d cpus %s are not within node %u's allowed cpus %s", g,
                      t_list(gp->cpus, a, sizeof a), t->nodes[n]->os_index,
                      t_list(t->node_cpus[n], b, sizeof b));
            if (n < prev)
                pfail(label, G, "group %d is on node #%d, after a group on node #%d", g, n, prev);
            if (gp->ndomains != 1 || gp->domains[0] != n)
                pfail(label, G, "group %d has %d domains, the first #%d, want node #%d alone", g,
                      gp->ndomains, gp->ndomains ? gp->domains[0] : -1, n);
            prev = n;
            node_of[g] = n;
            per_node[n]++;
        }
        int lo = G + 1, hi = 0;
        for (int n = 0; n < N; n++) {
            lo = per_node[n] < lo ? per_node[n] : lo;
            hi = per_node[n] > hi ? per_node[n] : hi;
            if (n > 0 && per_node[n] > per_node[n - 1])
                pfail(label, G, "node #%d has more groups than node #%d", n, n - 1);
        }
        if (hi - lo > 1 || lo < 1)
            pfail(label, G, "nodes hold %d to %d groups", lo, hi);

        for (int n = 0, first = 0; n < N; first += per_node[n], n++) {
            int k = per_node[n], last = first + k - 1;
            int npus = hwloc_bitmap_weight(t->node_cpus[n]);
            int ncores = count_cores(t, t->node_cpus[n]);
            unsigned os = t->nodes[n]->os_index;
            /* Sharing is warned exactly when there are fewer CPUs than groups. */
            shares[n] = npus < k;
            bool w_share = warned(&p, first, last, "share CPUs");
            if (w_share != shares[n])
                pfail(label, G, "node %u has %d allowed CPUs for %d groups, but the plan %s a 'share CPUs' warning",
                      os, npus, k, w_share ? "gives" : "lacks");
            bool split = ncores < k && npus >= k;
            bool w_split = warned(&p, first, last, "split cores");
            if (w_split != split)
                pfail(label, G, "node %u has %d cores, %d CPUs for %d groups, but the plan %s a 'split cores' warning",
                      os, ncores, npus, k, w_split ? "gives" : "lacks");
            expected_warnings += shares[n] || split;
            /* The node's groups cover its allowed CPUs. */
            hwloc_bitmap_t u = hwloc_bitmap_alloc();
            int cmin = 1 << 30, cmax = 0;
            for (int g = first; g <= last; g++) {
                const struct np_group_plan *gp = &p.groups[g];
                hwloc_bitmap_or(u, u, gp->cpus);
                if (gp->slice != g - first || gp->nslices != k)
                    pfail(label, G, "group %d slice %d/%d, want %d/%d", g, gp->slice,
                          gp->nslices, g - first, k);
                int c = count_cores(t, gp->cpus);
                cmin = c < cmin ? c : cmin;
                cmax = c > cmax ? c : cmax;
                /* (e) whole cores. */
                if (ncores >= k) {
                    int i = -1;
                    while ((i = hwloc_bitmap_next(gp->cpus, i)) >= 0) {
                        hwloc_obj_t core = core_of_pu(t, (unsigned)i);
                        hwloc_bitmap_t sib = hwloc_bitmap_alloc();
                        hwloc_bitmap_and(sib, core->cpuset, t->allowed);
                        if (!hwloc_bitmap_isincluded(sib, gp->cpus))
                            pfail(label, G, "group %d holds PU %d but not all of its core's PUs %s (cpus %s)",
                                  g, i, t_list(sib, a, sizeof a), t_list(gp->cpus, b, sizeof b));
                        hwloc_bitmap_free(sib);
                    }
                }
            }
            if (!hwloc_bitmap_isequal(u, t->node_cpus[n]))
                pfail(label, G, "node %u's groups use cpus %s of its %s", os, t_list(u, a, sizeof a),
                      t_list(t->node_cpus[n], b, sizeof b));
            hwloc_bitmap_free(u);
            if (cmax - cmin > 1)
                pfail(label, G, "groups %d-%d on node %u hold %d to %d cores", first, last, os,
                      cmin, cmax);
        }
        free(per_node);
    }

    /* (a) disjointness, for every G. */
    for (int g = 0; g < G; g++)
        for (int h = g + 1; h < G; h++) {
            if (!hwloc_bitmap_intersects(p.groups[g].cpus, p.groups[h].cpus))
                continue;
            if (G >= N && node_of[g] == node_of[h] && shares[node_of[g]])
                continue;
            pfail(label, G, "groups %d and %d overlap: cpus %s and %s, with no 'share CPUs' warning",
                  g, h, t_list(p.groups[g].cpus, a, sizeof a), t_list(p.groups[h].cpus, b, sizeof b));
        }
    /* CPUs adopted by a node that is not local to them: one warning for
     * all groups, exactly when there are such CPUs. */
    bool adopted = t->adopted != NULL && !hwloc_bitmap_iszero(t->adopted);
    if (warned(&p, 0, G - 1, "no NUMA node local to them") != adopted)
        pfail(label, G, "adopted CPUs %s, but the plan %s the warning about them",
              adopted ? t_list(t->adopted, a, sizeof a) : "none", adopted ? "lacks" : "gives");
    expected_warnings += adopted;
    /* More groups than nodes, not a multiple: one warning for all. */
    bool uneven = G > N && G % N != 0;
    if (warned(&p, 0, G - 1, "do not divide evenly") != uneven)
        pfail(label, G, "%d groups on %d nodes, but the plan %s the 'divide evenly' warning", G, N,
              uneven ? "lacks" : "gives");
    expected_warnings += uneven;
    if (p.nwarnings != expected_warnings)
        pfail(label, G, "%d warnings, want %d; first: %s", p.nwarnings, expected_warnings,
              p.nwarnings ? p.warnings[0].text : "none");
    free(node_of);
    free(shares);
    np_plan_free(&p);
}

/* ------------------------------------------------------------------------
 * Every domain kind (node, package, l3), recomputed from hwloc.
 *
 * For D domains of the kind (own_domains: the objects' CPUs within the
 * usable ones, in logical order, empty ones left out) and G groups:
 *  - every group has CPUs; its nodes are exactly the home nodes of its
 *    CPUs, so a CPU-less memory node never takes a group;
 *  - the groups' CPUs together are exactly topo.allowed;
 *  - G <= D: whole domains, each in exactly one group, group g holding
 *    np_split(D, G, g) of them (the larger groups first);
 *  - G >= D: the groups of domain d are np_split(G, D, d), in order, each
 *    within its domain, covering it, pairwise disjoint unless the domain
 *    has fewer CPUs than groups (warned "share CPUs"); whole cores and core
 *    counts within one of each other where the domain has as many cores as
 *    groups, else hardware-thread counts within one (warned "split cores");
 *  - L3 alignment: a domain whose L3 caches (nl3 > 1) all hold the same
 *    number of its cores, shared by k groups with k a multiple of nl3:
 *    every group lies within one L3; with nl3 a multiple of k: every group
 *    is made of whole L3s;
 *  - warnings: "spans nodes" for exactly the groups made of several
 *    domains and holding several nodes (a group that is one package spans
 *    its nodes by request), "do not divide evenly" exactly when G > D and
 *    D does not divide G, the adopted-CPU warning exactly when there are
 *    adopted CPUs, "in no <kind> domain" exactly when the domains leave
 *    usable CPUs out, and no other warning.
 * ---------------------------------------------------------------------- */

struct own {
    int n;
    hwloc_obj_t objs[4096];
    hwloc_bitmap_t cpus[4096];
};

/* PU objects by OS index, rebuilt for each plan checked:
 * hwloc_get_pu_obj_by_os_index walks every PU, too slow for 2048 PUs. */
static hwloc_obj_t *pu_by_os;
static int pu_by_os_len;

static void index_pus(const struct np_topo *t)
{
    int last = hwloc_bitmap_last(hwloc_topology_get_topology_cpuset(t->topology));
    free(pu_by_os);
    pu_by_os_len = last + 1;
    pu_by_os = calloc((size_t)pu_by_os_len + 1, sizeof *pu_by_os);
    ck_assert_ptr_nonnull(pu_by_os);
    hwloc_obj_t pu = NULL;
    while ((pu = hwloc_get_next_obj_by_type(t->topology, HWLOC_OBJ_PU, pu)) != NULL)
        if ((int)pu->os_index < pu_by_os_len)
            pu_by_os[pu->os_index] = pu;
}

static hwloc_obj_t pu_obj(unsigned os)
{
    ck_assert_msg((int)os < pu_by_os_len && pu_by_os[os] != NULL, "no PU %u", os);
    return pu_by_os[os];
}

/* The core of a PU (the PU itself without cores), from the index. */
static hwloc_obj_t core_fast(const struct np_topo *t, unsigned os)
{
    hwloc_obj_t pu = pu_obj(os);
    hwloc_obj_t c = hwloc_get_ancestor_obj_by_type(t->topology, HWLOC_OBJ_CORE, pu);
    return c ? c : pu;
}

/* count_cores through the PU index built for the plan being checked. */
static int count_cores_fast(const struct np_topo *t, hwloc_const_bitmap_t set)
{
    return distinct_cores(t, set, core_fast);
}

static hwloc_bitmap_t placeable(const struct np_topo *t)
{
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    for (int i = 0; i < t->nnodes; i++)
        hwloc_bitmap_or(all, all, t->node_cpus[i]);
    return all;
}

static void own_domains(const struct np_topo *t, enum np_domain kind, struct own *d)
{
    d->n = 0;
    if (kind == NP_DOMAIN_NODE) {
        for (int i = 0; i < t->nnodes; i++) {
            d->objs[d->n] = t->nodes[i];
            d->cpus[d->n++] = hwloc_bitmap_dup(t->node_cpus[i]);
        }
        return;
    }
    hwloc_obj_type_t type = kind == NP_DOMAIN_PACKAGE ? HWLOC_OBJ_PACKAGE : HWLOC_OBJ_L3CACHE;
    hwloc_bitmap_t ok = placeable(t);
    hwloc_obj_t o = NULL;
    while ((o = hwloc_get_next_obj_by_type(t->topology, type, o)) != NULL) {
        hwloc_bitmap_t c = hwloc_bitmap_alloc();
        hwloc_bitmap_and(c, o->cpuset, t->allowed);
        hwloc_bitmap_and(c, c, ok);
        if (hwloc_bitmap_iszero(c)) {
            hwloc_bitmap_free(c);
            continue;
        }
        ck_assert_int_lt(d->n, 4096);
        d->objs[d->n] = o;
        d->cpus[d->n++] = c;
    }
    hwloc_bitmap_free(ok);
}

static void own_free(struct own *d)
{
    for (int i = 0; i < d->n; i++)
        hwloc_bitmap_free(d->cpus[i]);
    d->n = 0;
}

/* The home nodes (OS indexes) of a set of CPUs. */
static void home_nodes(const struct np_topo *t, hwloc_const_bitmap_t cpus, hwloc_bitmap_t out)
{
    hwloc_bitmap_zero(out);
    for (int i = 0; i < t->nnodes; i++)
        if (hwloc_bitmap_intersects(t->node_cpus[i], cpus))
            hwloc_bitmap_set(out, t->nodes[i]->os_index);
}

/* The L3 caches holding the cores of `cpus`, when they all hold the same
 * number of them and every core has an L3: their count, else 0. */
static int equal_l3s_of(const struct np_topo *t, hwloc_const_bitmap_t cpus, hwloc_obj_t *l3s,
                        int max)
{
    int n = 0, size = -1, i = -1;
    while ((i = hwloc_bitmap_next(cpus, i)) >= 0) {
        hwloc_obj_t pu = pu_obj((unsigned)i);
        hwloc_obj_t l3 = hwloc_get_ancestor_obj_by_type(t->topology, HWLOC_OBJ_L3CACHE, pu);
        if (l3 == NULL)
            return 0;
        int k = 0;
        while (k < n && l3s[k] != l3)
            k++;
        if (k == n) {
            if (n == max)
                return 0;
            l3s[n++] = l3;
        }
    }
    for (int k = 0; k < n; k++) {
        hwloc_bitmap_t in = hwloc_bitmap_alloc();
        hwloc_bitmap_and(in, l3s[k]->cpuset, cpus);
        int c = count_cores_fast(t, in);
        hwloc_bitmap_free(in);
        if (size >= 0 && c != size)
            return 0;
        size = c;
    }
    return n;
}

static void check_kind(const struct np_topo *t, int G, enum np_domain kind, const char *label)
{
    char where[512], a[4096], b[4096];
    snprintf(where, sizeof where, "%s domain=%s", label, np_domain_name(kind));
    static struct own d;
    index_pus(t);
    own_domains(t, kind, &d);
    struct np_plan p;
    if (d.n == 0) {
        errno = 0;
        if (np_plan_build(t, G, kind, &p) != -1 || errno != ENOENT)
            pfail(where, G, "no domain of this kind, but np_plan_build did not fail with ENOENT");
        return;
    }
    const int D = d.n;
    if (np_plan_build(t, G, kind, &p) != 0)
        pfail(where, G, "np_plan_build failed: %s", strerror(errno));
    if (p.ngroups != G || p.kind != kind)
        pfail(where, G, "plan has %d groups of kind %d", p.ngroups, (int)p.kind);
    if (p.domains.n != D)
        pfail(where, G, "plan has %d domains, hwloc %d", p.domains.n, D);
    for (int i = 0; i < D; i++)
        if (!hwloc_bitmap_isequal(p.domains.cpus[i], d.cpus[i]))
            pfail(where, G, "domain %d cpus %s, hwloc's %s", i,
                  t_list(p.domains.cpus[i], a, sizeof a), t_list(d.cpus[i], b, sizeof b));

    int expected_warnings = 0;
    hwloc_bitmap_t all = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
    hwloc_bitmap_t usable_nodes = hwloc_bitmap_alloc();
    for (int i = 0; i < t->nnodes; i++)
        hwloc_bitmap_set(usable_nodes, t->nodes[i]->os_index);
    for (int g = 0; g < G; g++) {
        const struct np_group_plan *gp = &p.groups[g];
        if (gp->group != g)
            pfail(where, G, "group %d is numbered %d", g, gp->group);
        if (hwloc_bitmap_iszero(gp->cpus))
            pfail(where, G, "group %d has no CPUs", g);
        hwloc_bitmap_or(all, all, gp->cpus);
        home_nodes(t, gp->cpus, nodes);
        if (!hwloc_bitmap_isequal(nodes, gp->nodes))
            pfail(where, G, "group %d (cpus %s) has nodes %s, its CPUs' home nodes are %s", g,
                  t_list(gp->cpus, a, sizeof a), t_list(gp->nodes, b, sizeof b),
                  t_list(nodes, a + 2048, 2048));
        if (!hwloc_bitmap_isincluded(gp->nodes, usable_nodes))
            pfail(where, G, "group %d takes nodes %s; only %s have CPUs", g,
                  t_list(gp->nodes, a, sizeof a), t_list(usable_nodes, b, sizeof b));
        bool spans = hwloc_bitmap_weight(gp->nodes) > 1 && gp->ndomains > 1;
        if (warned(&p, g, g, "spans nodes") != spans)
            pfail(where, G, "group %d has nodes %s but %s a 'spans nodes' warning", g,
                  t_list(gp->nodes, a, sizeof a), spans ? "lacks" : "has");
        expected_warnings += spans;
    }
    /* Every usable CPU is used, where the domains cover them all (always
     * for nodes; packages and L3 caches may leave CPUs out: 16amd64-8n2c
     * has L3 caches over 2 of its 16 CPUs only). */
    hwloc_bitmap_t covered = hwloc_bitmap_alloc();
    for (int x = 0; x < D; x++)
        hwloc_bitmap_or(covered, covered, d.cpus[x]);
    if (kind == NP_DOMAIN_NODE && !hwloc_bitmap_isequal(covered, t->allowed))
        pfail(where, G, "the nodes' CPUs %s are not the allowed %s", t_list(covered, a, sizeof a),
              t_list(t->allowed, b, sizeof b));
    if (!hwloc_bitmap_isequal(all, covered))
        pfail(where, G, "groups use cpus %s, the domains hold %s (allowed: %s)",
              t_list(all, a, sizeof a), t_list(covered, b, sizeof b),
              t_list(t->allowed, a + 2048, 2048));
    /* CPUs the domains leave out are warned about, for every group. */
    bool uncovered = !hwloc_bitmap_isincluded(t->allowed, covered);
    if (warned(&p, 0, G - 1, "domain: no group uses them") != uncovered)
        pfail(where, G, "the domains hold %s of the usable %s, but the plan %s the warning",
              t_list(covered, a, sizeof a), t_list(t->allowed, b, sizeof b),
              uncovered ? "lacks" : "gives");
    expected_warnings += uncovered;
    hwloc_bitmap_free(covered);

    if (G <= D) {
        int *owner = malloc((size_t)D * sizeof *owner);
        for (int i = 0; i < D; i++)
            owner[i] = -1;
        for (int g = 0; g < G; g++) {
            const struct np_group_plan *gp = &p.groups[g];
            int first, count;
            np_split(D, G, g, &first, &count);
            if (gp->ndomains != count)
                pfail(where, G, "group %d has %d domains, want %d", g, gp->ndomains, count);
            if (gp->slice != 0 || gp->nslices != 1)
                pfail(where, G, "group %d slice %d/%d, want 0/1", g, gp->slice, gp->nslices);
            hwloc_bitmap_t u = hwloc_bitmap_alloc();
            for (int k = 0; k < gp->ndomains; k++) {
                int x = gp->domains[k];
                if (x < 0 || x >= D || (k > 0 && x <= gp->domains[k - 1]))
                    pfail(where, G, "group %d domain list is not ascending domain indexes", g);
                if (owner[x] >= 0)
                    pfail(where, G, "domain %d is in groups %d and %d", x, owner[x], g);
                owner[x] = g;
                hwloc_bitmap_or(u, u, d.cpus[x]);
            }
            if (!hwloc_bitmap_isequal(u, gp->cpus))
                pfail(where, G, "group %d cpus %s, its domains' %s", g,
                      t_list(gp->cpus, a, sizeof a), t_list(u, b, sizeof b));
            hwloc_bitmap_free(u);
        }
        for (int i = 0; i < D; i++)
            if (owner[i] < 0)
                pfail(where, G, "domain %d is in no group", i);
        free(owner);
        for (int g = 0; g < G; g++)
            for (int h = g + 1; h < G; h++)
                if (hwloc_bitmap_intersects(p.groups[g].cpus, p.groups[h].cpus))
                    pfail(where, G, "groups %d and %d overlap", g, h);
    }

    if (G >= D) {
        static hwloc_obj_t l3s[4096];
        for (int x = 0; x < D; x++) {
            int first, k;
            np_split(G, D, x, &first, &k);
            int last = first + k - 1;
            int npus = hwloc_bitmap_weight(d.cpus[x]);
            int ncores = count_cores_fast(t, d.cpus[x]);
            bool share = npus < k, split = ncores < k && npus >= k;
            if (warned(&p, first, last, "share CPUs") != share)
                pfail(where, G, "domain %d has %d CPUs for %d groups, but the plan %s a 'share "
                      "CPUs' warning", x, npus, k, share ? "lacks" : "gives");
            if (warned(&p, first, last, "split cores") != split)
                pfail(where, G, "domain %d has %d cores, %d CPUs for %d groups, but the plan %s "
                      "a 'split cores' warning", x, ncores, npus, k, split ? "lacks" : "gives");
            expected_warnings += share || split;
            int nl3 = ncores >= k ? equal_l3s_of(t, d.cpus[x], l3s, 4096) : 0;
            hwloc_bitmap_t u = hwloc_bitmap_alloc();
            int lo = 1 << 30, hi = 0;
            for (int g = first; g <= last; g++) {
                const struct np_group_plan *gp = &p.groups[g];
                if (gp->ndomains != 1 || gp->domains[0] != x || gp->slice != g - first ||
                    gp->nslices != k)
                    pfail(where, G, "group %d: %d domains, first %d, slice %d/%d; want domain "
                          "%d alone, slice %d/%d", g, gp->ndomains,
                          gp->ndomains ? gp->domains[0] : -1, gp->slice, gp->nslices, x,
                          g - first, k);
                if (!hwloc_bitmap_isincluded(gp->cpus, d.cpus[x]))
                    pfail(where, G, "group %d cpus %s are not within domain %d's %s", g,
                          t_list(gp->cpus, a, sizeof a), x, t_list(d.cpus[x], b, sizeof b));
                hwloc_bitmap_or(u, u, gp->cpus);
                int size = ncores >= k ? count_cores_fast(t, gp->cpus) : hwloc_bitmap_weight(gp->cpus);
                lo = size < lo ? size : lo;
                hi = size > hi ? size : hi;
                for (int h = g + 1; h <= last && !share; h++)
                    if (hwloc_bitmap_intersects(gp->cpus, p.groups[h].cpus))
                        pfail(where, G, "groups %d and %d overlap (cpus %s and %s)", g, h,
                              t_list(gp->cpus, a, sizeof a),
                              t_list(p.groups[h].cpus, b, sizeof b));
                if (ncores >= k) {
                    int i = -1;
                    while ((i = hwloc_bitmap_next(gp->cpus, i)) >= 0) {
                        hwloc_bitmap_t sib = hwloc_bitmap_alloc();
                        hwloc_bitmap_and(sib, core_fast(t, (unsigned)i)->cpuset, d.cpus[x]);
                        if (!hwloc_bitmap_isincluded(sib, gp->cpus))
                            pfail(where, G, "group %d holds PU %d but not all of its core's "
                                  "PUs %s (cpus %s)", g, i, t_list(sib, a, sizeof a),
                                  t_list(gp->cpus, b, sizeof b));
                        hwloc_bitmap_free(sib);
                    }
                }
                if (nl3 > 1 && k % nl3 == 0) {
                    int within = 0;
                    for (int l = 0; l < nl3; l++)
                        within += hwloc_bitmap_isincluded(gp->cpus, l3s[l]->cpuset);
                    if (within != 1)
                        pfail(where, G, "group %d (cpus %s): %d groups on domain %d's %d equal "
                              "L3s, but it is not within one L3", g,
                              t_list(gp->cpus, a, sizeof a), k, x, nl3);
                }
                if (nl3 > 1 && nl3 % k == 0) {
                    for (int l = 0; l < nl3; l++) {
                        hwloc_bitmap_t in = hwloc_bitmap_alloc();
                        hwloc_bitmap_and(in, l3s[l]->cpuset, d.cpus[x]);
                        if (hwloc_bitmap_intersects(in, gp->cpus) &&
                            !hwloc_bitmap_isincluded(in, gp->cpus))
                            pfail(where, G, "group %d (cpus %s): %d groups on domain %d's %d "
                                  "equal L3s, but it holds part of L3 %s", g,
                                  t_list(gp->cpus, a, sizeof a), k, x, nl3,
                                  t_list(in, b, sizeof b));
                        hwloc_bitmap_free(in);
                    }
                }
            }
            if (!hwloc_bitmap_isequal(u, d.cpus[x]))
                pfail(where, G, "domain %d's groups use cpus %s of its %s", x,
                      t_list(u, a, sizeof a), t_list(d.cpus[x], b, sizeof b));
            hwloc_bitmap_free(u);
            if (!share && hi - lo > 1)
                pfail(where, G, "groups %d-%d on domain %d hold %d to %d %s", first, last, x, lo,
                      hi, ncores >= k ? "cores" : "CPUs");
        }
        /* Groups of different domains never overlap: each lies within its
         * domain, and domains are disjoint. */
        for (int x = 0; x < D; x++)
            for (int y = x + 1; y < D; y++)
                if (hwloc_bitmap_intersects(d.cpus[x], d.cpus[y]))
                    pfail(where, G, "domains %d and %d overlap", x, y);
    }
    bool adopted = !hwloc_bitmap_iszero(t->adopted);
    if (warned(&p, 0, G - 1, "no NUMA node local to them") != adopted)
        pfail(where, G, "adopted CPUs %s, but the plan %s the warning about them",
              t_list(t->adopted, a, sizeof a), adopted ? "lacks" : "gives");
    expected_warnings += adopted;
    bool uneven = G > D && G % D != 0;
    if (warned(&p, 0, G - 1, "do not divide evenly") != uneven)
        pfail(where, G, "%d groups on %d domains, but the plan %s the 'divide evenly' warning",
              G, D, uneven ? "lacks" : "gives");
    expected_warnings += uneven;
    if (p.nwarnings != expected_warnings)
        pfail(where, G, "%d warnings, want %d; first: %s", p.nwarnings, expected_warnings,
              p.nwarnings ? p.warnings[0].text : "none");
    hwloc_bitmap_free(all);
    hwloc_bitmap_free(nodes);
    hwloc_bitmap_free(usable_nodes);
    np_plan_free(&p);
    own_free(&d);
}

/* Nearest nodes grouped, on a machine without a distance matrix: when G
 * divides the node count and every package's node count is a multiple of
 * nodes/G, every group lies within one package. */
static void check_nearest(const struct np_topo *t, int G, const char *label)
{
    const int N = t->nnodes;
    if (G > N || N % G != 0)
        return;
    int per = N / G;
    hwloc_obj_t pkg[4096];
    for (int i = 0; i < N; i++) {
        pkg[i] = hwloc_get_ancestor_obj_by_type(t->topology, HWLOC_OBJ_PACKAGE, t->nodes[i]);
        if (pkg[i] == NULL)
            return;
    }
    for (int i = 0; i < N; i++) {
        int same = 0;
        for (int j = 0; j < N; j++)
            same += pkg[j] == pkg[i];
        if (same % per != 0)
            return;
    }
    struct np_plan p;
    ck_assert_int_eq(np_plan_build(t, G, NP_DOMAIN_NODE, &p), 0);
    if (p.domains.from_matrix)
        pfail(label, G, "a synthetic machine has a distance matrix");
    for (int g = 0; g < G; g++) {
        const struct np_group_plan *gp = &p.groups[g];
        for (int k = 1; k < gp->ndomains; k++)
            if (pkg[gp->domains[k]] != pkg[gp->domains[0]]) {
                char a[1024];
                pfail(label, G, "group %d (nodes %s) spans packages though every package's "
                      "node count is a multiple of %d", g, t_list(gp->nodes, a, sizeof a), per);
            }
    }
    np_plan_free(&p);
}

static void check_all_kinds(const struct np_topo *t, const char *label, int maxg_extra)
{
    for (int k = NP_DOMAIN_NODE; k <= NP_DOMAIN_L3; k++) {
        struct own d;
        own_domains(t, (enum np_domain)k, &d);
        int D = d.n;
        own_free(&d);
        if (D == 0) {
            check_kind(t, 2, (enum np_domain)k, label); /* must fail with ENOENT */
            continue;
        }
        for (int G = 1; G <= 2 * D + maxg_extra; G++)
            check_kind(t, G, (enum np_domain)k, label);
        /* 3, 4 and 6 groups a domain: several groups on each L3 of a
         * node or package (the L3-aligned slices). */
        for (int x = 3; x <= 6; x++)
            if (x != 5 && x * D > 2 * D + maxg_extra && x * D <= NP_MAX_GROUPS)
                check_kind(t, x * D, (enum np_domain)k, label);
    }
}

/* ---- Generated machines, with random cpuset restrictions ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static unsigned rnd(unsigned n)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (unsigned)((rng * 0x2545f4914f6cdd1dull) >> 33) % n;
}

struct gen {
    char desc[16384];
    char label[160];
};

/* Machine i of the generated list: packages 1-4 x nodes per package 1-4 x
 * three L3 layouts (none; 1-3 L3s in each node; one L3 per package over
 * its nodes), twice each with cores per L3 or node 1-6 and 1 or 2 threads
 * a core, the second thread sometimes numbered far away (Linux x86). */
#define NGEN (4 * 4 * 3 * 2)

static void generate(int i, struct gen *m)
{
    int P = 1 + i % 4, N = 1 + (i / 4) % 4, layout = (i / 16) % 3;
    rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(i + 1) * 0x100000001b3ull;
    for (int w = 0; w < 4; w++)
        rnd(2);
    int L = layout == 1 ? 1 + (int)rnd(3) : 1;
    int C = 1 + (int)rnd(6);
    int T = 1 + (int)rnd(2);
    bool far = T == 2 && rnd(2) == 0;
    int n = 0;
    size_t len = sizeof m->desc;
    if (layout == 0)
        n = snprintf(m->desc, len, "pack:%d numa:%d core:%d pu:%d", P, N, C, T);
    else if (layout == 1)
        n = snprintf(m->desc, len, "pack:%d numa:%d l3:%d core:%d pu:%d", P, N, L, C, T);
    else
        n = snprintf(m->desc, len, "pack:%d l3:1 numa:%d core:%d pu:%d", P, N, C, T);
    if (far) {
        /* Core c's threads are c and c + cores. */
        int cores = P * N * L * C;
        n += snprintf(m->desc + n, len - (size_t)n, "(indexes=");
        for (int c = 0; c < cores; c++)
            n += snprintf(m->desc + n, len - (size_t)n, "%s%d,%d", c ? "," : "", c, c + cores);
        snprintf(m->desc + n, len - (size_t)n, ")");
    }
    snprintf(m->label, sizeof m->label, "#%d %.*s%s", i, far ? (int)(strchr(m->desc, '(') - m->desc) : 120,
             m->desc, far ? " (far siblings)" : "");
}

/* A random restriction of the allowed CPUs, of one of three shapes: any
 * CPUs; whole cores; everything but one node, less a few CPUs. */
static hwloc_bitmap_t random_restriction(const struct np_topo *t, int shape)
{
    hwloc_bitmap_t r = hwloc_bitmap_alloc();
    int i = -1;
    int skip_node = (int)rnd((unsigned)t->nnodes);
    while ((i = hwloc_bitmap_next(t->allowed, i)) >= 0) {
        bool keep;
        if (shape == 0) {
            keep = rnd(2) == 0;
        } else if (shape == 1) {
            hwloc_obj_t core = core_of_pu(t, (unsigned)i);
            /* The same decision for every PU of a core: hash its index. */
            uint64_t h = (core->logical_index + 1) * 0x9e3779b97f4a7c15ull ^ rng;
            keep = (h >> 40) % 3 != 0;
        } else {
            keep = !hwloc_bitmap_isset(t->node_cpus[skip_node], (unsigned)i) && rnd(5) != 0;
        }
        if (keep)
            hwloc_bitmap_set(r, (unsigned)i);
    }
    if (hwloc_bitmap_iszero(r))
        hwloc_bitmap_set(r, (unsigned)hwloc_bitmap_first(t->allowed));
    return r;
}

START_TEST(generated_properties)
{
    static struct gen m;
    generate(_i, &m);
    struct np_topo t;
    char err[1024];
    ck_assert_msg(np_topo_load(&t, NULL, m.desc, err, sizeof err) == 0, "%s: %s", m.label, err);
    check_all_kinds(&t, m.label, 0);
    for (int G = 1; G <= t.nnodes; G++)
        check_nearest(&t, G, m.label);
    np_topo_destroy(&t);
    /* Three restrictions per machine, each on a fresh topology. */
    for (int r = 0; r < 3; r++) {
        ck_assert_int_eq(np_topo_load(&t, NULL, m.desc, err, sizeof err), 0);
        hwloc_bitmap_t set = random_restriction(&t, r);
        char list[8192], label[8400];
        t_list(set, list, sizeof list);
        snprintf(label, sizeof label, "%s restricted to %s", m.label, list);
        ck_assert_msg(np_topo_restrict(&t, set, err, sizeof err) == 0, "%s: %s", label, err);
        ck_assert_msg(hwloc_bitmap_isequal(t.allowed, set), "%s: allowed is %s", label,
                      t_list(t.allowed, err, sizeof err));
        check_all_kinds(&t, label, 0);
        for (int G = 1; G <= t.nnodes; G++)
            check_nearest(&t, G, label);
        hwloc_bitmap_free(set);
        np_topo_destroy(&t);
    }
}
END_TEST

START_TEST(xml_all_kinds)
{
    if (_i >= nxml)
        return;
    struct np_topo t;
    char err[1024];
    ck_assert_msg(np_topo_load(&t, xml_files[_i], NULL, err, sizeof err) == 0, "%s", err);
    check_all_kinds(&t, strrchr(xml_files[_i], '/') + 1, 0);
    np_topo_destroy(&t);
}
END_TEST

START_TEST(synthetic_all_kinds)
{
    struct np_topo t;
    char err[1024];
    ck_assert_msg(np_topo_load(&t, NULL, synthetic[_i], err, sizeof err) == 0, "%s", err);
    check_all_kinds(&t, synthetic[_i], 6);
    np_topo_destroy(&t);
}
END_TEST

/* Warnings name L3 caches by their logical index: caches have no OS index
 * (hwloc gives them HWLOC_UNKNOWN_INDEX, which would print as 4294967295). */
START_TEST(l3_warnings_name_the_cache)
{
    struct np_topo t;
    char err[256];
    ck_assert_int_eq(np_topo_load(&t, NULL, "pack:1 numa:1 l3:2 core:1 pu:1", err, sizeof err), 0);
    struct np_plan p;
    /* 2 L3s of one CPU, 4 groups: each L3 shared by 2 groups, warned. */
    ck_assert_int_eq(np_plan_build(&t, 4, NP_DOMAIN_L3, &p), 0);
    ck_assert_int_eq(p.nwarnings, 2);
    for (int i = 0; i < p.nwarnings; i++) {
        ck_assert_msg(strstr(p.warnings[i].text, "4294967295") == NULL,
                      "warning names the L3 by hwloc's unknown OS index: \"%s\"",
                      p.warnings[i].text);
        ck_assert_msg(strstr(p.warnings[i].text, i == 0 ? "l3 0 " : "l3 1 ") != NULL,
                      "warning %d does not name L3 %d: \"%s\"", i, i, p.warnings[i].text);
    }
    np_plan_free(&p);
    np_topo_destroy(&t);
}
END_TEST

/* ---- Named machines ---- */

static void load_xml(struct np_topo *t, const char *file)
{
    char path[4096], err[1024];
    const char *dir = getenv("NUMAPIN_TOPOLOGIES");
    ck_assert_msg(dir != NULL, "NUMAPIN_TOPOLOGIES is not set");
    snprintf(path, sizeof path, "%s/%s", dir, file);
    ck_assert_msg(np_topo_load(t, path, NULL, err, sizeof err) == 0, "%s", err);
}

static void load_synth(struct np_topo *t, const char *desc)
{
    char err[1024];
    ck_assert_msg(np_topo_load(t, NULL, desc, err, sizeof err) == 0, "%s: %s", desc, err);
}

static void expect_groups(const struct np_topo *t, int G, enum np_domain kind,
                          const char *const *nodes, const char *const *cpus, const char *label)
{
    struct np_plan p;
    char a[4096];
    ck_assert_int_eq(np_plan_build(t, G, kind, &p), 0);
    for (int g = 0; g < G; g++) {
        if (nodes != NULL)
            ck_assert_msg(strcmp(t_list(p.groups[g].nodes, a, sizeof a), nodes[g]) == 0,
                          "%s groups=%d: group %d nodes %s, want %s", label, G, g, a, nodes[g]);
        if (cpus != NULL)
            ck_assert_msg(strcmp(t_list(p.groups[g].cpus, a, sizeof a), cpus[g]) == 0,
                          "%s groups=%d: group %d cpus %s, want %s", label, G, g, a, cpus[g]);
    }
    np_plan_free(&p);
}

/* EPYC 7742 2 sockets NPS4: 4 nodes a socket, latency 12 within a socket
 * and 32 across. */
START_TEST(epyc_nps4_sockets)
{
    struct np_topo t;
    load_xml(&t, "epyc-7742-2s-nps4.xml");
    ck_assert_int_eq(t.nnodes, 8);
    struct np_plan p;
    ck_assert_int_eq(np_plan_build(&t, 2, NP_DOMAIN_NODE, &p), 0);
    ck_assert_msg(p.domains.from_matrix, "the distance matrix was not used");
    np_plan_free(&p);
    /* groups=2: one socket each. */
    const char *two[] = {"0-3", "4-7"};
    expect_groups(&t, 2, NP_DOMAIN_NODE, two, NULL, "nps4");
    /* groups=4: each group two nodes at the smallest distance (12), the
     * lowest-numbered pair first. */
    ck_assert_int_eq(np_plan_build(&t, 4, NP_DOMAIN_NODE, &p), 0);
    unsigned nr = 1;
    struct hwloc_distances_s *m = NULL;
    ck_assert_int_eq(hwloc_distances_get_by_type(t.topology, HWLOC_OBJ_NUMANODE, &nr, &m,
                                                 HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0), 0);
    ck_assert_uint_eq(nr, 1);
    hwloc_uint64_t min = ~0ull;
    for (unsigned i = 0; i < m->nbobjs; i++)
        for (unsigned j = 0; j < m->nbobjs; j++)
            if (i != j && m->values[i * m->nbobjs + j] < min)
                min = m->values[i * m->nbobjs + j];
    for (int g = 0; g < 4; g++) {
        ck_assert_int_eq(hwloc_bitmap_weight(p.groups[g].nodes), 2);
        int x = hwloc_bitmap_first(p.groups[g].nodes), y = hwloc_bitmap_last(p.groups[g].nodes);
        hwloc_uint64_t xy, yx;
        ck_assert_int_eq(hwloc_distances_obj_pair_values(
                             m, hwloc_get_numanode_obj_by_os_index(t.topology, (unsigned)x),
                             hwloc_get_numanode_obj_by_os_index(t.topology, (unsigned)y), &xy, &yx),
                         0);
        ck_assert_msg(xy == min && yx == min, "group %d: nodes %d and %d are %llu apart, the "
                      "nearest nodes %llu", g, x, y, (unsigned long long)xy,
                      (unsigned long long)min);
    }
    hwloc_distances_release(t.topology, m);
    np_plan_free(&p);
    const char *four[] = {"0-1", "2-3", "4-5", "6-7"};
    expect_groups(&t, 4, NP_DOMAIN_NODE, four, NULL, "nps4");
    /* domain=package, groups=2: the same sockets. */
    expect_groups(&t, 2, NP_DOMAIN_PACKAGE, two, NULL, "nps4 domain=package");
    np_topo_destroy(&t);
}
END_TEST

/* With an asymmetric matrix (measured latencies are), a pair of nodes
 * costs both directions: from 1 to 0 is 11 but from 0 to 1 is 40 (51 in
 * all), while 1 and 2 are 20 apart both ways (40).  groups=2 on these
 * three nodes must therefore pair 1 with 2 (counting one direction only
 * would pair 0 with 1, at 11). */
START_TEST(asymmetric_matrix_counts_both_directions)
{
    struct np_topo t;
    load_synth(&t, "pack:1 numa:3 core:1 pu:1");
    static const hwloc_uint64_t d[9] = {10, 40, 40,
                                        11, 10, 20,
                                        40, 20, 10};
    t_add_matrix(t.topology, 3, d);
    const char *nodes[] = {"1-2", "0"};
    expect_groups(&t, 2, NP_DOMAIN_NODE, nodes, NULL, "asymmetric matrix");
    np_topo_destroy(&t);
}
END_TEST

/* The matrix, not the numbering or the tree, decides: on one package of
 * four nodes where 0 is near 2 and 1 near 3, groups=2 pairs them so. */
START_TEST(matrix_beats_numbering)
{
    struct np_topo t;
    load_synth(&t, "pack:1 numa:4 core:1 pu:1");
    static const hwloc_uint64_t d[16] = {10, 30, 11, 30,
                                         30, 10, 30, 11,
                                         11, 30, 10, 30,
                                         30, 11, 30, 10};
    t_add_matrix(t.topology, 4, d);
    const char *nodes[] = {"0,2", "1,3"};
    expect_groups(&t, 2, NP_DOMAIN_NODE, nodes, nodes, "matrix 0~2 1~3");
    /* Three groups of four nodes: the nearest pair first, then one each. */
    const char *three[] = {"0,2", "1", "3"};
    expect_groups(&t, 3, NP_DOMAIN_NODE, three, NULL, "matrix 0~2 1~3");
    np_topo_destroy(&t);
}
END_TEST

/* Without a matrix, by package (the hwloc tree): 2 packages of 3 nodes,
 * groups=2 gives each group a package; with node 0 restricted away, the
 * larger group takes the package that still has 3 nodes. */
START_TEST(tree_groups_by_package)
{
    struct np_topo t;
    load_synth(&t, "pack:2 numa:3 core:1 pu:1");
    const char *two[] = {"0-2", "3-5"};
    expect_groups(&t, 2, NP_DOMAIN_NODE, two, NULL, "pack:2 numa:3");
    /* Node 0 taken away: 2 + 3 nodes, groups=2 gives package 1's three
     * nodes to group 0 (the larger group) and package 0's two to group 1. */
    hwloc_bitmap_t set = t_bitmap("1-5");
    char err[256];
    ck_assert_int_eq(np_topo_restrict(&t, set, err, sizeof err), 0);
    hwloc_bitmap_free(set);
    const char *after[] = {"3-5", "1-2"};
    expect_groups(&t, 2, NP_DOMAIN_NODE, after, NULL, "pack:2 numa:3 without node 0");
    np_topo_destroy(&t);
}
END_TEST

/* Slices follow L3 boundaries. */
START_TEST(l3_aligned_slices)
{
    struct np_topo t;
    /* 6 groups on 2 nodes of 3 L3s each (2 cores of 2 threads an L3): one
     * L3 per group. */
    load_synth(&t, "pack:1 numa:2 l3:3 core:2 pu:2");
    const char *six_nodes[] = {"0", "0", "0", "1", "1", "1"};
    const char *six_cpus[] = {"0-3", "4-7", "8-11", "12-15", "16-19", "20-23"};
    expect_groups(&t, 6, NP_DOMAIN_NODE, six_nodes, six_cpus, "2 nodes x 3 L3s");
    /* 12 groups: two a L3, one core each. */
    const char *twelve[] = {"0-1", "2-3", "4-5", "6-7", "8-9", "10-11",
                            "12-13", "14-15", "16-17", "18-19", "20-21", "22-23"};
    expect_groups(&t, 12, NP_DOMAIN_NODE, NULL, twelve, "2 nodes x 3 L3s");
    np_topo_destroy(&t);

    /* One node, 2 L3s of 3 cores; 4 groups: 2 and 1 cores within each L3,
     * none straddling (a plain split would give 0-1, 2-3, 4, 5). */
    load_synth(&t, "pack:1 numa:1 l3:2 core:3 pu:1");
    const char *four[] = {"0-1", "2", "3-4", "5"};
    expect_groups(&t, 4, NP_DOMAIN_NODE, NULL, four, "1 node x 2 L3s of 3 cores");
    np_topo_destroy(&t);

    /* 2 L3s of 3 cores with SMT siblings numbered far apart. */
    load_synth(&t, "pack:1 numa:1 l3:2 core:3 pu:2(indexes=0,6,1,7,2,8,3,9,4,10,5,11)");
    const char *four_far[] = {"0-1,6-7", "2,8", "3-4,9-10", "5,11"};
    expect_groups(&t, 4, NP_DOMAIN_NODE, NULL, four_far, "far siblings, 2 L3s of 3 cores");
    np_topo_destroy(&t);
}
END_TEST

/* More than 1024 CPUs: no fixed-size cpu_set_t anywhere. */
START_TEST(cpus_beyond_1024)
{
    struct np_topo t;
    load_synth(&t, "pack:4 numa:4 l3:4 core:16 pu:2");
    ck_assert_int_eq(hwloc_bitmap_weight(t.allowed), 2048);
    ck_assert_int_eq(t.nnodes, 16);
    static const int counts[] = {1, 2, 3, 16, 17, 32, 64, 1024, 2048, 4096};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        int G = counts[i];
        check_kind(&t, G, NP_DOMAIN_NODE, "2048 PUs");
        struct np_plan p;
        ck_assert_int_eq(np_plan_build(&t, G, NP_DOMAIN_NODE, &p), 0);
        int last = hwloc_bitmap_last(p.groups[G - 1].cpus);
        ck_assert_msg(last == 2047, "groups=%d: the last group's last CPU is %d, want 2047", G,
                      last);
        if (G == 2 || G >= 16) {
            /* The last group lies entirely above CPU 1023. */
            ck_assert_int_ge(hwloc_bitmap_first(p.groups[G - 1].cpus), 1024);
        }
        np_plan_free(&p);
    }
    for (int G = 1; G <= 128; G *= 2) {
        check_kind(&t, G, NP_DOMAIN_L3, "2048 PUs");
        check_kind(&t, G, NP_DOMAIN_PACKAGE, "2048 PUs");
    }
    np_topo_destroy(&t);
    /* The same with far-apart siblings (c and c + 1024). */
    static char desc[20000];
    int n = snprintf(desc, sizeof desc, "pack:4 numa:4 l3:4 core:16 pu:2(indexes=");
    for (int c = 0; c < 1024; c++)
        n += snprintf(desc + n, sizeof desc - (size_t)n, "%s%d,%d", c ? "," : "", c, c + 1024);
    snprintf(desc + n, sizeof desc - (size_t)n, ")");
    load_synth(&t, desc);
    for (int G = 1; G <= 64; G *= 2)
        check_kind(&t, G, NP_DOMAIN_NODE, "2048 PUs, far siblings");
    struct np_plan p;
    ck_assert_int_eq(np_plan_build(&t, 16, NP_DOMAIN_NODE, &p), 0);
    char a[256];
    ck_assert_str_eq(t_list(p.groups[15].cpus, a, sizeof a), "960-1023,1984-2047");
    np_plan_free(&p);
    np_topo_destroy(&t);
}
END_TEST

/* Hybrid: performance (P) cores 0-11 (6 cores x 2 threads), efficiency
 * (E) cores 12-19. */
START_TEST(hybrid_cpukinds)
{
    struct np_topo t;
    load_xml(&t, "20em64t-hybrid-1p6c2t+2ca4co1t.xml");
    int nr = hwloc_cpukinds_get_nr(t.topology, 0);
    ck_assert_int_eq(nr, 2);
    /* What hwloc ranks as most and least efficient for performance. */
    hwloc_bitmap_t perf = NULL, eff = NULL;
    int best = -1, worst = 1 << 30;
    for (int k = 0; k < nr; k++) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        int e;
        ck_assert_int_eq(hwloc_cpukinds_get_info(t.topology, (unsigned)k, set, &e, NULL, NULL, 0),
                         0);
        if (e > best) {
            best = e;
            hwloc_bitmap_free(perf);
            perf = hwloc_bitmap_dup(set);
        }
        if (e < worst) {
            worst = e;
            hwloc_bitmap_free(eff);
            eff = hwloc_bitmap_dup(set);
        }
        hwloc_bitmap_free(set);
    }
    char a[256];
    ck_assert_str_eq(t_list(perf, a, sizeof a), "0-11");
    ck_assert_str_eq(t_list(eff, a, sizeof a), "12-19");
    hwloc_bitmap_t out = hwloc_bitmap_alloc();
    ck_assert_int_eq(np_plan_kind(&t, NP_CPUKIND_PERFORMANCE, t.allowed, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "0-11");
    ck_assert_int_eq(np_plan_kind(&t, NP_CPUKIND_EFFICIENCY, t.allowed, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "12-19");
    ck_assert_int_eq(np_plan_kind(&t, NP_CPUKIND_ANY, t.allowed, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "0-19");
    /* By index, in hwloc's order. */
    ck_assert_int_eq(np_plan_kind(&t, 0, t.allowed, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "12-19");
    ck_assert_int_eq(np_plan_kind(&t, 1, t.allowed, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "0-11");
    errno = 0;
    ck_assert_int_eq(np_plan_kind(&t, 2, t.allowed, out), -1);
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_int_eq(np_plan_kind(&t, 99, t.allowed, out), -1);
    ck_assert_int_eq(errno, EINVAL);
    /* Within a group's CPUs: a group of 4 P threads and 4 E cores. */
    hwloc_bitmap_t group = t_bitmap("8-15");
    ck_assert_int_eq(np_plan_kind(&t, NP_CPUKIND_PERFORMANCE, group, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "8-11");
    ck_assert_int_eq(np_plan_kind(&t, NP_CPUKIND_EFFICIENCY, group, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "12-15");
    /* A group with no CPU of the kind keeps all of its own. */
    hwloc_bitmap_t e_only = t_bitmap("16-19");
    ck_assert_int_eq(np_plan_kind(&t, NP_CPUKIND_PERFORMANCE, e_only, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "16-19");
    hwloc_bitmap_free(e_only);
    hwloc_bitmap_free(group);
    hwloc_bitmap_free(perf);
    hwloc_bitmap_free(eff);
    np_topo_destroy(&t);

    /* One kind (32em64t reports a single kind): every kind is all CPUs;
     * index 1 does not exist. */
    load_xml(&t, "32em64t-2n8c+dax+nvme+mic+dimms.xml");
    ck_assert_int_eq(hwloc_cpukinds_get_nr(t.topology, 0), 1);
    ck_assert_int_eq(np_plan_kind(&t, NP_CPUKIND_PERFORMANCE, t.allowed, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "0-15");
    ck_assert_int_eq(np_plan_kind(&t, NP_CPUKIND_EFFICIENCY, t.allowed, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "0-15");
    ck_assert_int_eq(np_plan_kind(&t, 0, t.allowed, out), 0);
    ck_assert_int_eq(np_plan_kind(&t, 1, t.allowed, out), -1);
    np_topo_destroy(&t);

    /* No kind information at all (synthetic): index 0 is the only one. */
    load_synth(&t, "pack:1 numa:1 core:4 pu:1");
    ck_assert_int_eq(hwloc_cpukinds_get_nr(t.topology, 0), 0);
    ck_assert_int_eq(np_plan_kind(&t, NP_CPUKIND_PERFORMANCE, t.allowed, out), 0);
    ck_assert_str_eq(t_list(out, a, sizeof a), "0-3");
    ck_assert_int_eq(np_plan_kind(&t, 0, t.allowed, out), 0);
    errno = 0;
    ck_assert_int_eq(np_plan_kind(&t, 1, t.allowed, out), -1);
    ck_assert_int_eq(errno, EINVAL);
    hwloc_bitmap_free(out);
    np_topo_destroy(&t);
}
END_TEST

/* CPU-less memory nodes (HBM, NVM tiers beside DRAM) never take a group,
 * whatever the group count or domain kind. */
START_TEST(cpuless_nodes_take_no_group)
{
    struct np_topo t;
    load_xml(&t, "fakeheteromemtiers.xml");
    /* The nodes with CPUs: DRAM nodes 0 and 1, and HBM node 2, the only
     * memory beside CPUs 4-5 other than NVM node 9. */
    char a[256];
    hwloc_bitmap_t homes = hwloc_bitmap_alloc();
    for (int i = 0; i < t.nnodes; i++)
        hwloc_bitmap_set(homes, t.nodes[i]->os_index);
    ck_assert_str_eq(t_list(homes, a, sizeof a), "0-2");
    for (int k = NP_DOMAIN_NODE; k <= NP_DOMAIN_L3; k++)
        for (int G = 1; G <= 12; G++) {
            struct np_plan p;
            ck_assert_int_eq(np_plan_build(&t, G, (enum np_domain)k, &p), 0);
            for (int g = 0; g < G; g++)
                ck_assert_msg(hwloc_bitmap_isincluded(p.groups[g].nodes, homes),
                              "domain=%s groups=%d: group %d has nodes %s",
                              np_domain_name((enum np_domain)k), G, g,
                              t_list(p.groups[g].nodes, a, sizeof a));
            np_plan_free(&p);
        }
    hwloc_bitmap_free(homes);
    np_topo_destroy(&t);
    /* 16amd64-8n2c-cpusets: node 4 is allowed but has no CPU. */
    load_xml(&t, "16amd64-8n2c-cpusets.xml");
    for (int G = 1; G <= 8; G++) {
        struct np_plan p;
        ck_assert_int_eq(np_plan_build(&t, G, NP_DOMAIN_NODE, &p), 0);
        for (int g = 0; g < G; g++)
            ck_assert_msg(!hwloc_bitmap_isset(p.groups[g].nodes, 4), "groups=%d: group %d "
                          "takes CPU-less node 4", G, g);
        np_plan_free(&p);
    }
    np_topo_destroy(&t);
}
END_TEST

static void check_topology(const char *xml, const char *synth, int maxg_extra)
{
    struct np_topo t;
    char err[1024];
    const char *label = xml ? strrchr(xml, '/') + 1 : synth;
    ck_assert_msg(np_topo_load(&t, xml, synth, err, sizeof err) == 0, "%s: %s", label, err);
    ck_assert_msg(t.nnodes >= 1, "%s: no nodes", label);
    int maxg = 2 * t.nnodes + maxg_extra;
    for (int G = 1; G <= maxg; G++)
        check_plan(&t, G, label);
    np_topo_destroy(&t);
}

START_TEST(topology_folder_has_files)
{
    ck_assert_msg(getenv("NUMAPIN_TOPOLOGIES") != NULL, "NUMAPIN_TOPOLOGIES is not set");
    ck_assert_msg(nxml > 0, "no .xml file in NUMAPIN_TOPOLOGIES=%s", getenv("NUMAPIN_TOPOLOGIES"));
}
END_TEST

START_TEST(xml_properties)
{
    if (_i >= nxml)
        return; /* topology_folder_has_files reports it */
    check_topology(xml_files[_i], NULL, 0);
}
END_TEST

START_TEST(synthetic_properties)
{
    /* Synthetic machines are small: also try a few more groups, which
     * reach the split-cores and share-CPUs cases. */
    check_topology(NULL, synthetic[_i], 6);
}
END_TEST

Suite *property_suite(void)
{
    find_xml_files();
    Suite *s = suite_create("plan-properties");
    TCase *tc = tcase_create("properties");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, topology_folder_has_files);
    tcase_add_loop_test(tc, xml_properties, 0, nxml > 0 ? nxml : 1);
    tcase_add_loop_test(tc, synthetic_properties, 0, NSYNTH);
    tcase_add_loop_test(tc, xml_all_kinds, 0, nxml > 0 ? nxml : 1);
    tcase_add_loop_test(tc, synthetic_all_kinds, 0, NSYNTH);
    tcase_add_loop_test(tc, generated_properties, 0, NGEN);
    tcase_add_test(tc, epyc_nps4_sockets);
    tcase_add_test(tc, matrix_beats_numbering);
    tcase_add_test(tc, asymmetric_matrix_counts_both_directions);
    tcase_add_test(tc, tree_groups_by_package);
    tcase_add_test(tc, l3_aligned_slices);
    tcase_add_test(tc, cpus_beyond_1024);
    tcase_add_test(tc, hybrid_cpukinds);
    tcase_add_test(tc, cpuless_nodes_take_no_group);
    tcase_add_test(tc, l3_warnings_name_the_cache);
    suite_add_tcase(s, tc);
    return s;
}
