/* np_plan: np_plan_build on synthetic machines, with expectations worked
 * out by hand from the planner's contract (np_plan.h), and the slicing it
 * is built on (np_split, np_slots). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_plan.h"
#include "np_topo.h"
#include "tests.h"

struct want {
    const char *cpus, *nodes;
    int slice, nslices;
};

/* Builds the plan for `groups` and compares every group with w[], and the
 * warnings with the `nwarn` substrings in warn[] (in order). */
static void expect_plan(const char *desc, int groups, const struct want *w, int nwarn,
                        const char *const *warn)
{
    struct np_topo t;
    struct np_plan p;
    char a[256], b[256];
    t_load(&t, desc, NULL, NULL);
    ck_assert_msg(np_plan_build(&t, groups, NP_DOMAIN_NODE, &p) == 0, "%s groups=%d: np_plan_build failed", desc, groups);
    ck_assert_int_eq(p.ngroups, groups);
    for (int g = 0; g < groups; g++) {
        const struct np_group_plan *gp = &p.groups[g];
        ck_assert_int_eq(gp->group, g);
        ck_assert_msg(strcmp(t_list(gp->cpus, a, sizeof a), w[g].cpus) == 0,
                      "%s groups=%d: group %d cpus %s, want %s", desc, groups, g, a, w[g].cpus);
        ck_assert_msg(strcmp(t_list(gp->nodes, b, sizeof b), w[g].nodes) == 0,
                      "%s groups=%d: group %d nodes %s, want %s", desc, groups, g, b, w[g].nodes);
        ck_assert_msg(gp->slice == w[g].slice && gp->nslices == w[g].nslices,
                      "%s groups=%d: group %d slice %d/%d, want %d/%d", desc, groups, g,
                      gp->slice, gp->nslices, w[g].slice, w[g].nslices);
        if (groups <= t.nnodes)
            ck_assert_int_eq(gp->ndomains, hwloc_bitmap_weight(gp->nodes));
    }
    ck_assert_msg(p.nwarnings == nwarn, "%s groups=%d: %d warnings, want %d%s%s", desc, groups,
                  p.nwarnings, nwarn, p.nwarnings ? "; first: " : "",
                  p.nwarnings ? p.warnings[0].text : "");
    for (int i = 0; i < nwarn; i++)
        ck_assert_msg(strstr(p.warnings[i].text, warn[i]) != NULL,
                      "%s groups=%d: warning %d \"%s\" lacks \"%s\"", desc, groups, i,
                      p.warnings[i].text, warn[i]);
    np_plan_free(&p);
    np_topo_destroy(&t);
}

#define N(x) ((int)(sizeof(x) / sizeof *(x)))

/* Two nodes, one single-threaded core each: PU 0 on node 0, PU 1 on node 1. */
START_TEST(two_tiny_nodes)
{
    const char *d = "pack:1 numa:2 core:1 pu:1";
    struct want g1[] = {{"0-1", "0-1", 0, 1}};
    const char *w1[] = {"group 0 spans nodes 0-1"};
    expect_plan(d, 1, g1, N(w1), w1);
    struct want g2[] = {{"0", "0", 0, 1}, {"1", "1", 0, 1}};
    expect_plan(d, 2, g2, 0, NULL);
    /* 3 groups: node 0 takes groups 0 and 1, which must share its one CPU. */
    struct want g3[] = {{"0", "0", 0, 2}, {"0", "0", 1, 2}, {"1", "1", 0, 1}};
    const char *w3[] = {"node 0 has 1 CPUs for 2 groups: groups share CPUs",
                        "3 groups on 2 nodes do not divide evenly: nodes take 2 or 1 groups, so "
                        "groups differ in size; groups=2 or groups=4 divide evenly"};
    expect_plan(d, 3, g3, N(w3), w3);
    struct want g4[] = {{"0", "0", 0, 2}, {"0", "0", 1, 2}, {"1", "1", 0, 2}, {"1", "1", 1, 2}};
    const char *w4[] = {"node 0 has 1 CPUs for 2 groups", "node 1 has 1 CPUs for 2 groups"};
    expect_plan(d, 4, g4, N(w4), w4);
}
END_TEST

/* Warnings name the groups they concern. */
START_TEST(warning_groups)
{
    struct np_topo t;
    struct np_plan p;
    t_load(&t, "pack:1 numa:2 core:1 pu:1", NULL, NULL);
    ck_assert_int_eq(np_plan_build(&t, 4, NP_DOMAIN_NODE, &p), 0);
    ck_assert_int_eq(p.nwarnings, 2);
    ck_assert_int_eq(p.warnings[0].first_group, 0);
    ck_assert_int_eq(p.warnings[0].last_group, 1);
    ck_assert_int_eq(p.warnings[1].first_group, 2);
    ck_assert_int_eq(p.warnings[1].last_group, 3);
    np_plan_free(&p);
    ck_assert_int_eq(np_plan_build(&t, 1, NP_DOMAIN_NODE, &p), 0);
    ck_assert_int_eq(p.nwarnings, 1);
    ck_assert_int_eq(p.warnings[0].first_group, 0);
    ck_assert_int_eq(p.warnings[0].last_group, 0);
    ck_assert_ptr_nonnull(strstr(p.warnings[0].text, "groups=2 (one group per node)"));
    np_plan_free(&p);
    np_topo_destroy(&t);
}
END_TEST

/* 2 packages x 2 nodes x 4 cores x 2 threads: node n holds PUs 8n..8n+7,
 * core c holds PUs 2c and 2c+1. */
START_TEST(four_nodes_smt)
{
    const char *d = "pack:2 numa:2 core:4 pu:2";
    struct want g1[] = {{"0-31", "0-3", 0, 1}};
    const char *w1[] = {"group 0 spans nodes 0-3"};
    expect_plan(d, 1, g1, N(w1), w1);

    struct want g2[] = {{"0-15", "0-1", 0, 1}, {"16-31", "2-3", 0, 1}};
    const char *w2[] = {"group 0 spans nodes 0-1", "group 1 spans nodes 2-3"};
    expect_plan(d, 2, g2, N(w2), w2);

    /* 4 nodes over 3 groups: the longer run first. */
    struct want g3[] = {{"0-15", "0-1", 0, 1}, {"16-23", "2", 0, 1}, {"24-31", "3", 0, 1}};
    const char *w3[] = {"group 0 spans nodes 0-1"};
    expect_plan(d, 3, g3, N(w3), w3);

    struct want g4[] = {{"0-7", "0", 0, 1}, {"8-15", "1", 0, 1}, {"16-23", "2", 0, 1},
                        {"24-31", "3", 0, 1}};
    expect_plan(d, 4, g4, 0, NULL);

    /* 5 groups: node 0 holds two, split into 2-core halves. */
    struct want g5[] = {{"0-3", "0", 0, 2}, {"4-7", "0", 1, 2}, {"8-15", "1", 0, 1},
                        {"16-23", "2", 0, 1}, {"24-31", "3", 0, 1}};
    const char *uneven[] = {"groups on 4 nodes do not divide evenly"};
    expect_plan(d, 5, g5, N(uneven), uneven);

    struct want g6[] = {{"0-3", "0", 0, 2}, {"4-7", "0", 1, 2}, {"8-11", "1", 0, 2},
                        {"12-15", "1", 1, 2}, {"16-23", "2", 0, 1}, {"24-31", "3", 0, 1}};
    expect_plan(d, 6, g6, N(uneven), uneven);

    struct want g7[] = {{"0-3", "0", 0, 2}, {"4-7", "0", 1, 2}, {"8-11", "1", 0, 2},
                        {"12-15", "1", 1, 2}, {"16-19", "2", 0, 2}, {"20-23", "2", 1, 2},
                        {"24-31", "3", 0, 1}};
    expect_plan(d, 7, g7, N(uneven), uneven);

    /* 8 groups: every node in two slices of 2 whole cores (4 PUs). */
    struct want g8[] = {{"0-3", "0", 0, 2}, {"4-7", "0", 1, 2}, {"8-11", "1", 0, 2},
                        {"12-15", "1", 1, 2}, {"16-19", "2", 0, 2}, {"20-23", "2", 1, 2},
                        {"24-27", "3", 0, 2}, {"28-31", "3", 1, 2}};
    expect_plan(d, 8, g8, 0, NULL);
}
END_TEST

START_TEST(four_nodes_smt_many_groups)
{
    const char *d = "pack:2 numa:2 core:4 pu:2";
    struct want w12[12], w16[16], w24[24];
    char cpus[24][16], nodes[24][8];
    /* 12 groups: 3 a node; 4 cores split 2,1,1. */
    for (int g = 0; g < 12; g++) {
        int n = g / 3, r = g % 3;
        int first = 8 * n + (r == 0 ? 0 : r == 1 ? 4 : 6);
        snprintf(cpus[g], sizeof cpus[g], "%d-%d", first, first + (r == 0 ? 3 : 1));
        snprintf(nodes[g], sizeof nodes[g], "%d", n);
        w12[g] = (struct want){cpus[g], nodes[g], r, 3};
    }
    expect_plan(d, 12, w12, 0, NULL);
    /* 16 groups: one core (both threads) each. */
    for (int g = 0; g < 16; g++) {
        snprintf(cpus[g], sizeof cpus[g], "%d-%d", 2 * g, 2 * g + 1);
        snprintf(nodes[g], sizeof nodes[g], "%d", g / 4);
        w16[g] = (struct want){cpus[g], nodes[g], g % 4, 4};
    }
    expect_plan(d, 16, w16, 0, NULL);
    /* 24 groups: 6 a node, more than its 4 cores: sliced by hardware
     * thread, 8 PUs split 2,2,1,1,1,1, with a warning per node. */
    static const int off[6] = {0, 2, 4, 5, 6, 7}, len[6] = {2, 2, 1, 1, 1, 1};
    for (int g = 0; g < 24; g++) {
        int n = g / 6, r = g % 6, first = 8 * n + off[r];
        if (len[r] == 2)
            snprintf(cpus[g], sizeof cpus[g], "%d-%d", first, first + 1);
        else
            snprintf(cpus[g], sizeof cpus[g], "%d", first);
        snprintf(nodes[g], sizeof nodes[g], "%d", n);
        w24[g] = (struct want){cpus[g], nodes[g], r, 6};
    }
    const char *warn24[] = {"node 0 has 4 cores for 6 groups: its groups split cores between them",
                            "node 1 has 4 cores for 6 groups", "node 2 has 4 cores for 6 groups",
                            "node 3 has 4 cores for 6 groups"};
    expect_plan(d, 24, w24, N(warn24), warn24);
}
END_TEST

/* Two JVMs on one node of two single-threaded cores. */
START_TEST(one_node_two_cores)
{
    const char *d = "pack:1 numa:1 core:2 pu:1";
    struct want g1[] = {{"0-1", "0", 0, 1}};
    expect_plan(d, 1, g1, 0, NULL);
    struct want g2[] = {{"0", "0", 0, 2}, {"1", "0", 1, 2}};
    expect_plan(d, 2, g2, 0, NULL);
    /* Fewer CPUs than groups: shared, and said so. */
    struct want g3[] = {{"0", "0", 0, 3}, {"1", "0", 1, 3}, {"0", "0", 2, 3}};
    const char *w3[] = {"node 0 has 2 CPUs for 3 groups: groups share CPUs"};
    expect_plan(d, 3, g3, N(w3), w3);
}
END_TEST

/* A node with fewer cores than groups, but enough threads: sliced by
 * thread, warned. */
START_TEST(fewer_cores_than_groups)
{
    const char *d = "pack:1 numa:1 core:2 pu:2";
    struct want g3[] = {{"0-1", "0", 0, 3}, {"2", "0", 1, 3}, {"3", "0", 2, 3}};
    const char *w3[] = {"node 0 has 2 cores for 3 groups: its groups split cores between them"};
    expect_plan(d, 3, g3, N(w3), w3);
    struct want g2[] = {{"0-1", "0", 0, 2}, {"2-3", "0", 1, 2}};
    expect_plan(d, 2, g2, 0, NULL);
}
END_TEST

/* SMT siblings numbered far apart stay together in a slice. */
START_TEST(far_siblings)
{
    const char *d = "pack:1 numa:2 core:2 pu:2(indexes=0,4,1,5,2,6,3,7)";
    struct want g2[] = {{"0-1,4-5", "0", 0, 1}, {"2-3,6-7", "1", 0, 1}};
    expect_plan(d, 2, g2, 0, NULL);
    struct want g4[] = {{"0,4", "0", 0, 2}, {"1,5", "0", 1, 2}, {"2,6", "1", 0, 2},
                        {"3,7", "1", 1, 2}};
    expect_plan(d, 4, g4, 0, NULL);
}
END_TEST

/* Sliced by thread with siblings numbered far apart: a slice follows core
 * order, so the first group still gets a whole core. */
START_TEST(fewer_cores_far_siblings)
{
    const char *d = "pack:1 numa:1 core:2 pu:2(indexes=0,2,1,3)";
    struct want g3[] = {{"0,2", "0", 0, 3}, {"1", "0", 1, 3}, {"3", "0", 2, 3}};
    const char *w3[] = {"node 0 has 2 cores for 3 groups"};
    expect_plan(d, 3, g3, N(w3), w3);
}
END_TEST

/* np_split: a run of `total` cut into `parts` contiguous runs, the longer
 * ones first. */
START_TEST(split_cuts_longer_runs_first)
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

START_TEST(split_runs_are_contiguous_balanced_and_cover_all)
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

/* np_slots: the whole set (cpus=node), whole cores (core), or hardware
 * threads with the first thread of every core before any second (pu). */
START_TEST(slots_are_the_set_cores_or_threads_first_of_each_core)
{
    static const struct {
        const char *machine, *cpus;
        enum np_cpus_mode mode;
        const char *want;
    } c[] = {
        /* Core 0 = PUs 0,1; core 1 = PUs 2,3. */
        {"pack:1 numa:1 core:2 pu:2", "0-3", NP_CPUS_NODE, "0-3"},
        {"pack:1 numa:1 core:2 pu:2", "0-3", NP_CPUS_CORE, "0-1 2-3"},
        {"pack:1 numa:1 core:2 pu:2", "0-3", NP_CPUS_PU, "0 2 1 3"},
        {"pack:1 numa:1 core:2 pu:2", "1-3", NP_CPUS_CORE, "1 2-3"},
        {"pack:1 numa:1 core:2 pu:2", "1-3", NP_CPUS_PU, "1 2 3"},
        {"pack:1 numa:1 core:2 pu:2", "2-3", NP_CPUS_PU, "2 3"},
        /* SMT siblings numbered far apart, as Linux does on x86. */
        {"pack:1 numa:1 core:3 pu:2(indexes=0,3,1,4,2,5)", "0-5", NP_CPUS_CORE, "0,3 1,4 2,5"},
        {"pack:1 numa:1 core:3 pu:2(indexes=0,3,1,4,2,5)", "0-5", NP_CPUS_PU, "0 1 2 3 4 5"},
        /* SMT4: thread k of every core before thread k+1 of any. */
        {"pack:1 numa:1 core:2 pu:4", "0-7", NP_CPUS_PU, "0 4 1 5 2 6 3 7"},
        {"pack:1 numa:1 core:2 pu:4", "0-7", NP_CPUS_CORE, "0-3 4-7"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        struct np_topo t;
        char s[512];
        t_load(&t, c[i].machine, NULL, NULL);
        slots_str(&t, c[i].cpus, c[i].mode, s, sizeof s);
        ck_assert_msg(strcmp(s, c[i].want) == 0, "%s, cpus %s, cpus=%s: slots %s, want %s",
                      c[i].machine, c[i].cpus, np_cpus_mode_name(c[i].mode), s, c[i].want);
        np_topo_destroy(&t);
    }
}
END_TEST

/* np_slots over a set naming CPUs the topology lacks: only real PUs become
 * slots, and it ends. */
START_TEST(slots_ignore_cpus_the_machine_lacks)
{
    struct np_topo t;
    t_load(&t, "pack:1 numa:1 core:2 pu:2", NULL, NULL);
    hwloc_bitmap_t cpus = t_bitmap("0-4");
    hwloc_bitmap_t *slots;
    int n = np_slots(&t, cpus, NP_CPUS_PU, &slots);
    ck_assert_int_eq(n, 4);
    char a[64];
    const char *want[] = {"0", "2", "1", "3"};
    for (int i = 0; i < n; i++)
        ck_assert_str_eq(t_list(slots[i], a, sizeof a), want[i]);
    np_slots_free(slots, n);
    hwloc_bitmap_free(cpus);
    np_topo_destroy(&t);
}
END_TEST

START_TEST(bad_group_counts)
{
    struct np_topo t;
    struct np_plan p;
    t_load(&t, "pack:1 numa:2 core:1 pu:1", NULL, NULL);
    errno = 0;
    ck_assert_int_eq(np_plan_build(&t, 0, NP_DOMAIN_NODE, &p), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(p.ngroups, 0);
    errno = 0;
    ck_assert_int_eq(np_plan_build(&t, NP_MAX_GROUPS + 1, NP_DOMAIN_NODE, &p), -1);
    ck_assert_int_eq(errno, EINVAL);
    /* The maximum is accepted, even with two CPUs. */
    ck_assert_int_eq(np_plan_build(&t, NP_MAX_GROUPS, NP_DOMAIN_NODE, &p), 0);
    ck_assert_int_eq(p.ngroups, NP_MAX_GROUPS);
    ck_assert_int_eq(p.nwarnings, 2);
    char b[64];
    ck_assert_str_eq(t_list(p.groups[NP_MAX_GROUPS - 1].cpus, b, sizeof b), "1");
    ck_assert_str_eq(t_list(p.groups[NP_MAX_GROUPS / 2 - 1].cpus, b, sizeof b), "0");
    np_plan_free(&p);
    np_topo_destroy(&t);
}
END_TEST

Suite *plan_suite(void)
{
    Suite *s = suite_create("plan");
    TCase *tc = tcase_create("synthetic");
    tcase_add_test(tc, two_tiny_nodes);
    tcase_add_test(tc, warning_groups);
    tcase_add_test(tc, four_nodes_smt);
    tcase_add_test(tc, four_nodes_smt_many_groups);
    tcase_add_test(tc, one_node_two_cores);
    tcase_add_test(tc, fewer_cores_than_groups);
    tcase_add_test(tc, far_siblings);
    tcase_add_test(tc, fewer_cores_far_siblings);
    tcase_add_test(tc, bad_group_counts);
    suite_add_tcase(s, tc);
    tc = tcase_create("slicing");
    tcase_add_test(tc, split_cuts_longer_runs_first);
    tcase_add_test(tc, split_runs_are_contiguous_balanced_and_cover_all);
    tcase_add_test(tc, slots_are_the_set_cores_or_threads_first_of_each_core);
    tcase_add_test(tc, slots_ignore_cpus_the_machine_lacks);
    suite_add_tcase(s, tc);
    return s;
}
