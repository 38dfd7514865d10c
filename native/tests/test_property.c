/* Planner properties over every machine in $NUMAPIN_TOPOLOGIES and a list
 * of synthetic machines, for every group count G from 1 to 2 x nodes:
 *
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
 * Every check here recomputes what it needs from hwloc itself. */
#define _GNU_SOURCE
#include <dirent.h>
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

/* Number of distinct cores holding the PUs of `set`. */
static int count_cores(const struct np_topo *t, hwloc_const_bitmap_t set)
{
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();
    int n = 0, i = -1;
    while ((i = hwloc_bitmap_next(set, i)) >= 0) {
        hwloc_obj_t c = core_of_pu(t, (unsigned)i);
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
    suite_add_tcase(s, tc);
    return s;
}
