/* np_domains: the placement domains of a machine (node, package, L3),
 * their usable CPUs, their home nodes, and how far apart they are (from
 * the NUMA latency matrix when it covers them, else from the hwloc tree). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_domains.h"
#include "np_topo.h"
#include "tests.h"

static void get(const struct np_topo *t, enum np_domain kind, struct np_domains *d)
{
    ck_assert_msg(np_domains_get(t, kind, d) == 0, "np_domains_get(%s): %s", np_domain_name(kind),
                  strerror(errno));
}

/* The domains' CPUs and home nodes, "cpus/nodes" joined by spaces. */
static const char *shape(const struct np_domains *d, char *out, size_t len)
{
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < d->n && o < len; i++) {
        char c[256], n[256];
        o += (size_t)snprintf(out + o, len - o, "%s%s/%s", i ? " " : "",
                              t_list(d->cpus[i], c, sizeof c), t_list(d->nodes[i], n, sizeof n));
    }
    return out;
}

static double dist(const struct np_domains *d, int a, int b)
{
    return d->dist[a * d->n + b];
}

/* Every distance: 0 (tree) or the matrix's diagonal mean to itself,
 * symmetric. */
static void expect_symmetric(const struct np_domains *d)
{
    for (int a = 0; a < d->n; a++)
        for (int b = 0; b < d->n; b++)
            ck_assert_msg(dist(d, a, b) == dist(d, b, a), "dist[%d][%d] %g, dist[%d][%d] %g", a, b,
                          dist(d, a, b), b, a, dist(d, b, a));
}

START_TEST(node_domains_are_the_nodes_with_their_cpus)
{
    struct np_topo t;
    struct np_domains d;
    char s[1024];
    t_load(&t, "pack:2 numa:2 core:2 pu:1", NULL, NULL);
    get(&t, NP_DOMAIN_NODE, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-1/0 2-3/1 4-5/2 6-7/3");
    for (int i = 0; i < d.n; i++) {
        ck_assert_int_eq(d.objs[i]->type, HWLOC_OBJ_NUMANODE);
        ck_assert_uint_eq(d.objs[i]->os_index, (unsigned)i);
    }
    /* No matrix: the tree says nodes of one package are nearer. */
    ck_assert_int_eq(d.from_matrix, 0);
    expect_symmetric(&d);
    for (int a = 0; a < 4; a++) {
        ck_assert(dist(&d, a, a) == 0);
        for (int b = 0; b < 4; b++)
            if (a != b && a / 2 == b / 2)
                for (int c = 0; c < 4; c++)
                    if (c / 2 != a / 2)
                        ck_assert_msg(dist(&d, a, b) < dist(&d, a, c),
                                      "node %d: %g to %d (same package), %g to %d", a,
                                      dist(&d, a, b), b, dist(&d, a, c), c);
    }
    np_domains_free(&d);
    ck_assert_int_eq(d.n, 0);
    ck_assert_ptr_null(d.cpus);
    np_topo_destroy(&t);
}
END_TEST

START_TEST(package_and_l3_domains_hold_the_nodes_of_their_cpus)
{
    struct np_topo t;
    struct np_domains d;
    char s[1024];
    t_load(&t, "pack:2 numa:2 core:2 pu:1", NULL, NULL);
    get(&t, NP_DOMAIN_PACKAGE, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-3/0-1 4-7/2-3");
    ck_assert_int_eq(d.objs[1]->type, HWLOC_OBJ_PACKAGE);
    ck_assert(dist(&d, 0, 0) == 0 && dist(&d, 0, 1) > 0);
    expect_symmetric(&d);
    np_domains_free(&d);
    np_topo_destroy(&t);
    /* L3s within a node, and an L3 spanning two nodes. */
    t_load(&t, "pack:1 numa:1 l3:2 core:3 pu:1", NULL, NULL);
    get(&t, NP_DOMAIN_L3, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-2/0 3-5/0");
    ck_assert_int_eq(d.objs[0]->type, HWLOC_OBJ_L3CACHE);
    np_domains_free(&d);
    np_topo_destroy(&t);
    t_load(&t, "pack:2 l3:1 numa:2 core:3 pu:2", NULL, NULL);
    get(&t, NP_DOMAIN_L3, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-11/0-1 12-23/2-3");
    np_domains_free(&d);
    np_topo_destroy(&t);
}
END_TEST

/* A kind the machine lacks: -1, ENOENT, nothing to free. */
START_TEST(missing_kinds_are_enoent)
{
    struct np_topo t;
    struct np_domains d;
    t_load(&t, "numa:3 core:2 pu:1", NULL, NULL);
    for (int k = NP_DOMAIN_PACKAGE; k <= NP_DOMAIN_L3; k++) {
        errno = 0;
        ck_assert_int_eq(np_domains_get(&t, (enum np_domain)k, &d), -1);
        ck_assert_int_eq(errno, ENOENT);
        ck_assert_int_eq(d.n, 0);
        ck_assert_ptr_null(d.objs);
        ck_assert_ptr_null(d.dist);
    }
    get(&t, NP_DOMAIN_NODE, &d);
    ck_assert_int_eq(d.n, 3);
    np_domains_free(&d);
    np_topo_destroy(&t);
}
END_TEST

/* Under a cpuset, a domain holds only its usable CPUs, and a domain with
 * none is left out. */
START_TEST(restricted_domains_hold_usable_cpus_only)
{
    struct np_topo t;
    struct np_domains d;
    char s[1024];
    t_load(&t, "pack:2 numa:2 core:2 pu:1", NULL, "0-2");
    get(&t, NP_DOMAIN_NODE, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-1/0 2/1");
    np_domains_free(&d);
    get(&t, NP_DOMAIN_PACKAGE, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-2/0-1");
    ck_assert_uint_eq(d.objs[0]->logical_index, 0);
    np_domains_free(&d);
    np_topo_destroy(&t);
    t_load(&t, "pack:2 numa:2 core:2 pu:1", NULL, "5,7");
    get(&t, NP_DOMAIN_PACKAGE, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "5,7/2-3");
    ck_assert_uint_eq(d.objs[0]->logical_index, 1);
    np_domains_free(&d);
    np_topo_destroy(&t);
}
END_TEST

/* With a latency matrix, a domain's distance to another is the mean
 * latency between their home nodes, both directions counted. */
START_TEST(matrix_distances_are_means_over_home_nodes)
{
    struct np_topo t;
    struct np_domains d;
    t_load(&t, "pack:1 numa:3 core:1 pu:1", NULL, NULL);
    static const hwloc_uint64_t m[9] = {10, 20, 30,
                                        22, 10, 40,
                                        30, 40, 10};
    t_add_matrix(t.topology, 3, m);
    get(&t, NP_DOMAIN_NODE, &d);
    ck_assert_int_eq(d.from_matrix, 1);
    ck_assert(dist(&d, 0, 0) == 10 && dist(&d, 0, 1) == 21 && dist(&d, 0, 2) == 30 &&
              dist(&d, 1, 2) == 40);
    expect_symmetric(&d);
    np_domains_free(&d);
    /* One package over the three nodes: the mean of the whole matrix. */
    get(&t, NP_DOMAIN_PACKAGE, &d);
    ck_assert_int_eq(d.n, 1);
    ck_assert_int_eq(d.from_matrix, 1);
    ck_assert_msg(dist(&d, 0, 0) == 212.0 / 9, "%g", dist(&d, 0, 0));
    np_domains_free(&d);
    np_topo_destroy(&t);

    /* Two L3s of two nodes each. */
    t_load(&t, "pack:1 l3:2 numa:2 core:1 pu:1", NULL, NULL);
    static const hwloc_uint64_t m4[16] = {10, 12, 30, 34,
                                          12, 10, 32, 36,
                                          30, 32, 10, 14,
                                          34, 36, 14, 10};
    t_add_matrix(t.topology, 4, m4);
    get(&t, NP_DOMAIN_L3, &d);
    ck_assert_int_eq(d.from_matrix, 1);
    ck_assert_msg(dist(&d, 0, 0) == 11 && dist(&d, 1, 1) == 12 && dist(&d, 0, 1) == 33,
                  "%g %g %g", dist(&d, 0, 0), dist(&d, 1, 1), dist(&d, 0, 1));
    np_domains_free(&d);
    np_topo_destroy(&t);
}
END_TEST

/* A matrix that leaves out a home node says nothing of it: the tree
 * decides, for every pair. */
START_TEST(partial_matrix_falls_back_to_the_tree)
{
    struct np_topo t;
    struct np_domains d;
    t_load(&t, "pack:3 numa:1 core:1 pu:1", NULL, NULL);
    static const hwloc_uint64_t m[4] = {10, 99, 99, 10};
    t_add_matrix(t.topology, 2, m);
    get(&t, NP_DOMAIN_NODE, &d);
    ck_assert_int_eq(d.n, 3);
    ck_assert_int_eq(d.from_matrix, 0);
    ck_assert(dist(&d, 0, 0) == 0);
    ck_assert(dist(&d, 0, 1) == dist(&d, 0, 2) && dist(&d, 0, 1) > 0 && dist(&d, 0, 1) < 99);
    np_domains_free(&d);
    np_topo_destroy(&t);
}
END_TEST

/* EPYC 7742 NPS4: latency 10 to itself, 12 within a socket, 32 across. */
START_TEST(epyc_packages_from_its_matrix)
{
    struct np_topo t;
    struct np_domains d;
    char s[1024];
    t_load(&t, NULL, "epyc-7742-2s-nps4.xml", NULL);
    get(&t, NP_DOMAIN_PACKAGE, &d);
    ck_assert_int_eq(d.n, 2);
    ck_assert_int_eq(d.from_matrix, 1);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-63,128-191/0-3 64-127,192-255/4-7");
    ck_assert_msg(dist(&d, 0, 0) == (4 * 10 + 12 * 12) / 16.0 && dist(&d, 0, 1) == 32, "%g %g",
                  dist(&d, 0, 0), dist(&d, 0, 1));
    np_domains_free(&d);
    get(&t, NP_DOMAIN_NODE, &d);
    ck_assert_int_eq(d.n, 8);
    ck_assert(dist(&d, 0, 3) == 12 && dist(&d, 3, 4) == 32 && dist(&d, 7, 7) == 10);
    np_domains_free(&d);
    get(&t, NP_DOMAIN_L3, &d);
    ck_assert_int_eq(d.n, 32);
    ck_assert_str_eq(t_list(d.cpus[0], s, sizeof s), "0-3,128-131");
    np_domains_free(&d);
    np_topo_destroy(&t);
}
END_TEST

/* CPU-less memory (NVM, HBM beside DRAM, DAX) is no domain and no home
 * node; a node of HBM alone is. */
START_TEST(cpuless_memory_is_no_domain_and_no_home)
{
    struct np_topo t;
    struct np_domains d;
    char s[1024];
    t_load(&t, NULL, "fakeheteromemtiers.xml", NULL);
    get(&t, NP_DOMAIN_NODE, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-1/0 2-3/1 4-5/2");
    ck_assert_str_eq(d.objs[2]->subtype, "HBM");
    np_domains_free(&d);
    get(&t, NP_DOMAIN_PACKAGE, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-5/0-2");
    np_domains_free(&d);
    get(&t, NP_DOMAIN_L3, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-5/0-2");
    np_domains_free(&d);
    np_topo_destroy(&t);
    t_load(&t, NULL, "32em64t-2n8c+dax+nvme+mic+dimms.xml", NULL);
    get(&t, NP_DOMAIN_NODE, &d);
    ck_assert_str_eq(shape(&d, s, sizeof s), "0-7/0 8-15/1");
    ck_assert_int_eq(d.from_matrix, 1);
    ck_assert(dist(&d, 0, 1) == 21);
    np_domains_free(&d);
    np_topo_destroy(&t);
}
END_TEST

Suite *domains_suite(void)
{
    Suite *s = suite_create("domains");
    TCase *tc = tcase_create("domains");
    tcase_add_test(tc, node_domains_are_the_nodes_with_their_cpus);
    tcase_add_test(tc, package_and_l3_domains_hold_the_nodes_of_their_cpus);
    tcase_add_test(tc, missing_kinds_are_enoent);
    tcase_add_test(tc, restricted_domains_hold_usable_cpus_only);
    tcase_add_test(tc, matrix_distances_are_means_over_home_nodes);
    tcase_add_test(tc, partial_matrix_falls_back_to_the_tree);
    tcase_add_test(tc, epyc_packages_from_its_matrix);
    tcase_add_test(tc, cpuless_memory_is_no_domain_and_no_home);
    suite_add_tcase(s, tc);
    return s;
}
