/* np_topo: loading a machine (synthetic, XML, restricted by a cpuset),
 * each CPU's home node, the summary line, load errors. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_topo.h"
#include "tests.h"

START_TEST(load_synthetic)
{
    struct np_topo t;
    char err[512];
    ck_assert_msg(np_topo_load(&t, NULL, "pack:2 numa:2 core:4 pu:2", err, sizeof err) == 0, "%s", err);
    ck_assert_int_eq(t.nnodes, 4);
    ck_assert_int_eq(hwloc_bitmap_weight(t.allowed), 32);
    ck_assert_int_eq(t.thissystem, 0);
    char buf[1024];
    for (int n = 0; n < 4; n++) {
        char want[32];
        snprintf(want, sizeof want, "%d-%d", 8 * n, 8 * n + 7);
        ck_assert_str_eq(t_list(t.node_cpus[n], buf, sizeof buf), want);
        ck_assert_uint_eq(t.nodes[n]->os_index, (unsigned)n);
    }
    np_topo_summary(&t, buf, sizeof buf);
    ck_assert_str_eq(buf, "nodes=4 packages=2 l3=0 cores=16 pus=32 smt=2 allowed=0-31 "
                          "source=\"synthetic pack:2 numa:2 core:4 pu:2\"");
    np_topo_destroy(&t);
    ck_assert_ptr_null(t.topology);
    ck_assert_int_eq(t.nnodes, 0);
}
END_TEST

START_TEST(load_xml_cpuset_restricted)
{
    const char *dir = getenv("NUMAPIN_TOPOLOGIES");
    ck_assert_msg(dir != NULL, "NUMAPIN_TOPOLOGIES is not set");
    char path[4096], err[512], buf[1024];
    snprintf(path, sizeof path, "%s/16amd64-8n2c-cpusets.xml", dir);
    struct np_topo t;
    ck_assert_msg(np_topo_load(&t, path, NULL, err, sizeof err) == 0, "%s", err);
    /* The cgroup allows 10 of 16 PUs, on 3 of the 8 nodes. */
    ck_assert_int_eq(t.nnodes, 3);
    ck_assert_str_eq(t_list(t.allowed, buf, sizeof buf), "0-3,5-6,12-15");
    hwloc_bitmap_t all = hwloc_bitmap_alloc();
    for (int n = 0; n < t.nnodes; n++) {
        ck_assert(hwloc_bitmap_isincluded(t.node_cpus[n], t.allowed));
        ck_assert(!hwloc_bitmap_intersects(all, t.node_cpus[n]));
        hwloc_bitmap_or(all, all, t.node_cpus[n]);
    }
    ck_assert(hwloc_bitmap_isequal(all, t.allowed));
    hwloc_bitmap_free(all);
    char src[4200];
    snprintf(src, sizeof src, "xml %s", path);
    ck_assert_str_eq(t.source, src);
    np_topo_destroy(&t);
}
END_TEST

/* CPU-less memory tiers (HBM, NVM) attached beside DRAM share its cpuset in
 * hwloc, but are no home of CPUs: three localities, three nodes. */
START_TEST(memory_tiers_are_not_nodes)
{
    struct np_topo t;
    char buf[256];
    t_load(&t, NULL, "fakeheteromemtiers.xml", NULL);
    ck_assert_int_eq(t.nnodes, 3);
    /* DRAM 0, DRAM 1, and HBM 2 (no DRAM there; HBM before NVM 9). */
    static const unsigned os[3] = {0, 1, 2};
    static const char *const cpus[3] = {"0-1", "2-3", "4-5"};
    for (int n = 0; n < 3; n++) {
        ck_assert_uint_eq(t.nodes[n]->os_index, os[n]);
        ck_assert_str_eq(t_list(t.node_cpus[n], buf, sizeof buf), cpus[n]);
    }
    ck_assert(hwloc_bitmap_iszero(t.adopted));
    np_topo_destroy(&t);
}
END_TEST

/* CPUs whose package has no node join the nearest usable one, and are
 * listed as adopted. */
START_TEST(orphan_cpus_adopted)
{
    struct np_topo t;
    char buf[256];
    t_load(&t, NULL, "offline-cpu0-node0.xml", NULL);
    ck_assert_int_eq(t.nnodes, 1);
    ck_assert_uint_eq(t.nodes[0]->os_index, 1);
    ck_assert_str_eq(t_list(t.node_cpus[0], buf, sizeof buf), "4-20");
    ck_assert_str_eq(t_list(t.adopted, buf, sizeof buf), "4,6,8,10,12,14,16,18,20");
    np_topo_destroy(&t);
    /* Synthetic machines have a node everywhere: nothing adopted. */
    char err[256];
    ck_assert_int_eq(np_topo_load(&t, NULL, "pack:2 numa:2 core:2 pu:1", err, sizeof err), 0);
    ck_assert(hwloc_bitmap_iszero(t.adopted));
    np_topo_destroy(&t);
}
END_TEST

START_TEST(load_errors)
{
    struct np_topo t;
    char err[512];
    ck_assert_int_eq(np_topo_load(&t, NULL, "pack:2 bogus:3", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "synthetic pack:2 bogus:3") != NULL, "%s", err);
    ck_assert_ptr_null(t.topology);
    ck_assert_int_eq(np_topo_load(&t, "/nonexistent/machine.xml", NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "/nonexistent/machine.xml") != NULL, "%s", err);
}
END_TEST

Suite *topo_suite(void)
{
    Suite *s = suite_create("topo");
    TCase *tc = tcase_create("topo");
    tcase_add_test(tc, load_synthetic);
    tcase_add_test(tc, load_xml_cpuset_restricted);
    tcase_add_test(tc, memory_tiers_are_not_nodes);
    tcase_add_test(tc, orphan_cpus_adopted);
    tcase_add_test(tc, load_errors);
    suite_add_tcase(s, tc);
    return s;
}
