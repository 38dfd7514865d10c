/* np_topo (loading, cpulist, summary), np_split and np_slots. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_plan.h"
#include "np_topo.h"
#include "tests.h"

static void expect_cpulist(const char *set_from, const char *want)
{
    /* Build the set bit by bit from a space-separated index list. */
    hwloc_bitmap_t b = hwloc_bitmap_alloc();
    char *copy = strdup(set_from), *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save))
        hwloc_bitmap_set(b, (unsigned)atoi(t));
    free(copy);
    char buf[256];
    memset(buf, 'X', sizeof buf);
    np_cpulist(buf, sizeof buf, b);
    ck_assert_msg(strcmp(buf, want) == 0, "{%s}: got \"%s\", want \"%s\"", set_from, buf, want);
    hwloc_bitmap_free(b);
}

START_TEST(cpulist)
{
    expect_cpulist("", "");
    expect_cpulist("0", "0");
    expect_cpulist("7", "7");
    expect_cpulist("0 1", "0-1");
    expect_cpulist("0 1 2 3", "0-3");
    expect_cpulist("0 1 2 3 8 10 11", "0-3,8,10-11");
    expect_cpulist("0 2 4", "0,2,4");
    expect_cpulist("5 6 7 200 201 1023", "5-7,200-201,1023");
    /* Truncated into a small buffer, still terminated. */
    hwloc_bitmap_t b = t_bitmap("0-3,8,10-11");
    char small[5];
    memset(small, 'X', sizeof small);
    np_cpulist(small, sizeof small, b);
    ck_assert_str_eq(small, "0-3,");
    hwloc_bitmap_free(b);
}
END_TEST

START_TEST(split_examples)
{
    struct { int total, parts, i, first, count; } c[] = {
        {10, 3, 0, 0, 4}, {10, 3, 1, 4, 3}, {10, 3, 2, 7, 3},
        {8, 8, 5, 5, 1},  {4, 2, 1, 2, 2},  {7, 1, 0, 0, 7},
        {2, 4, 0, 0, 1},  {2, 4, 1, 1, 1},  {2, 4, 2, 2, 0}, {2, 4, 3, 2, 0},
        {5, 3, 0, 0, 2},  {5, 3, 1, 2, 2},  {5, 3, 2, 4, 1},
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        int first = -1, count = -1;
        np_split(c[k].total, c[k].parts, c[k].i, &first, &count);
        ck_assert_msg(first == c[k].first && count == c[k].count,
                      "np_split(%d,%d,%d) = first %d count %d, want %d %d", c[k].total,
                      c[k].parts, c[k].i, first, count, c[k].first, c[k].count);
    }
}
END_TEST

START_TEST(split_property)
{
    for (int total = 0; total <= 64; total++) {
        for (int parts = 1; parts <= 20; parts++) {
            int next = 0, prev = total + 1;
            for (int i = 0; i < parts; i++) {
                int first, count;
                np_split(total, parts, i, &first, &count);
                ck_assert_msg(first == next, "split(%d,%d,%d): runs not contiguous", total, parts, i);
                ck_assert_msg(count <= prev, "split(%d,%d,%d): longer run after shorter", total, parts, i);
                ck_assert_msg(count == total / parts || count == total / parts + 1,
                              "split(%d,%d,%d): count %d unbalanced", total, parts, i, count);
                next += count;
                prev = count;
            }
            ck_assert_msg(next == total, "split(%d,%d) covers %d", total, parts, next);
        }
    }
}
END_TEST

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

static void load_xml(struct np_topo *t, const char *name)
{
    const char *dir = getenv("NUMAPIN_TOPOLOGIES");
    ck_assert_msg(dir != NULL, "NUMAPIN_TOPOLOGIES is not set");
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    ck_assert_msg(np_topo_load(t, path, NULL, err, sizeof err) == 0, "%s", err);
}

/* CPU-less memory tiers (HBM, NVM) attached beside DRAM share its cpuset in
 * hwloc, but are no home of CPUs: three localities, three nodes. */
START_TEST(memory_tiers_are_not_nodes)
{
    struct np_topo t;
    char buf[256];
    load_xml(&t, "fakeheteromemtiers.xml");
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
    load_xml(&t, "offline-cpu0-node0.xml");
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

/* The slots' cpulists, joined by spaces. */
static void slots_str(const struct np_topo *t, const char *cpus, enum np_cpus_mode mode,
                      char *out, size_t len)
{
    hwloc_bitmap_t set = t_bitmap(cpus);
    hwloc_bitmap_t *slots = NULL;
    int n = np_slots(t, set, mode, &slots);
    ck_assert_int_ge(n, 0);
    size_t o = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        char b[256];
        o += (size_t)snprintf(out + o, len - o, "%s%s", i ? " " : "", t_list(slots[i], b, sizeof b));
    }
    np_slots_free(slots, n);
    hwloc_bitmap_free(set);
}

START_TEST(slots)
{
    struct np_topo t;
    char err[512], s[512];
    ck_assert_msg(np_topo_load(&t, NULL, "pack:1 numa:1 core:2 pu:2", err, sizeof err) == 0, "%s", err);
    /* Core 0 = PUs 0,1; core 1 = PUs 2,3. */
    slots_str(&t, "0-3", NP_CPUS_NODE, s, sizeof s);
    ck_assert_str_eq(s, "0-3");
    slots_str(&t, "0-3", NP_CPUS_CORE, s, sizeof s);
    ck_assert_str_eq(s, "0-1 2-3");
    slots_str(&t, "0-3", NP_CPUS_PU, s, sizeof s);
    ck_assert_str_eq(s, "0 2 1 3");  /* first thread of each core first */
    slots_str(&t, "1-3", NP_CPUS_CORE, s, sizeof s);
    ck_assert_str_eq(s, "1 2-3");
    slots_str(&t, "1-3", NP_CPUS_PU, s, sizeof s);
    ck_assert_str_eq(s, "1 2 3");
    slots_str(&t, "2-3", NP_CPUS_PU, s, sizeof s);
    ck_assert_str_eq(s, "2 3");
    np_topo_destroy(&t);

    /* SMT siblings numbered far apart, as Linux does on x86. */
    ck_assert_msg(np_topo_load(&t, NULL, "pack:1 numa:1 core:3 pu:2(indexes=0,3,1,4,2,5)", err,
                               sizeof err) == 0, "%s", err);
    slots_str(&t, "0-5", NP_CPUS_CORE, s, sizeof s);
    ck_assert_str_eq(s, "0,3 1,4 2,5");
    slots_str(&t, "0-5", NP_CPUS_PU, s, sizeof s);
    ck_assert_str_eq(s, "0 1 2 3 4 5");
    np_topo_destroy(&t);

    /* SMT4: thread k of every core before thread k+1 of any. */
    ck_assert_msg(np_topo_load(&t, NULL, "pack:1 numa:1 core:2 pu:4", err, sizeof err) == 0, "%s", err);
    slots_str(&t, "0-7", NP_CPUS_PU, s, sizeof s);
    ck_assert_str_eq(s, "0 4 1 5 2 6 3 7");
    slots_str(&t, "0-7", NP_CPUS_CORE, s, sizeof s);
    ck_assert_str_eq(s, "0-3 4-7");
    np_topo_destroy(&t);
}
END_TEST

Suite *topo_suite(void)
{
    Suite *s = suite_create("topo");
    TCase *tc = tcase_create("topo");
    tcase_add_test(tc, cpulist);
    tcase_add_test(tc, split_examples);
    tcase_add_test(tc, split_property);
    tcase_add_test(tc, load_synthetic);
    tcase_add_test(tc, load_xml_cpuset_restricted);
    tcase_add_test(tc, memory_tiers_are_not_nodes);
    tcase_add_test(tc, orphan_cpus_adopted);
    tcase_add_test(tc, load_errors);
    tcase_add_test(tc, slots);
    suite_add_tcase(s, tc);
    return s;
}
