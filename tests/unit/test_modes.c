/* np_modes: the names of every mode, which the agent's options, the
 * command-line tool and every printed line share. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "np_modes.h"
#include "tests.h"

static const struct {
    const struct np_names *t;
    const char *list; /* np_names_list, with "or" */
} tables[] = {
    {&np_scope_names, "threads or jvm"},
    {&np_cpus_mode_names, "node, core or pu"},
    {&np_domain_names, "node, package or l3"},
    {&np_mem_mode_names, "preferred, bind, interleave, local, none or balancing"},
};
#define NTABLES ((int)(sizeof tables / sizeof *tables))

/* The printing function of table i, for value v. */
static const char *name_of(int i, int v)
{
    switch (i) {
    case 0: return np_scope_name((enum np_scope)v);
    case 1: return np_cpus_mode_name((enum np_cpus_mode)v);
    case 2: return np_domain_name((enum np_domain)v);
    default: return np_mem_mode_name((enum np_mem_mode)v);
    }
}

/* Every value prints as its name and is found again by it; the names are
 * the enums' values in order. */
START_TEST(every_name_round_trips)
{
    for (int i = 0; i < NTABLES; i++) {
        const struct np_names *t = tables[i].t;
        for (int v = 0; v < t->n; v++) {
            ck_assert_str_eq(name_of(i, v), t->names[v]);
            ck_assert_int_eq(np_names_find(t, t->names[v]), v);
            ck_assert_int_eq(np_names_findn(t, t->names[v], strlen(t->names[v])), v);
        }
        ck_assert_str_eq(name_of(i, t->n), "unknown");
        ck_assert_str_eq(name_of(i, -1), "unknown");
    }
    ck_assert_int_eq(NP_SCOPE_JVM, np_names_find(&np_scope_names, "jvm"));
    ck_assert_int_eq(NP_CPUS_PU, np_names_find(&np_cpus_mode_names, "pu"));
    ck_assert_int_eq(NP_DOMAIN_L3, np_names_find(&np_domain_names, "l3"));
    ck_assert_int_eq(NP_MEM_NONE, np_names_find(&np_mem_mode_names, "none"));
}
END_TEST

/* Only a whole name is found: not a prefix, not a longer word, not in
 * another case. */
START_TEST(only_whole_names_are_found)
{
    ck_assert_int_eq(np_names_find(&np_cpus_mode_names, "nod"), -1);
    ck_assert_int_eq(np_names_find(&np_cpus_mode_names, "nodes"), -1);
    ck_assert_int_eq(np_names_find(&np_cpus_mode_names, "Node"), -1);
    ck_assert_int_eq(np_names_find(&np_cpus_mode_names, ""), -1);
    ck_assert_int_eq(np_names_find(&np_mem_mode_names, "bind:0"), -1);
    /* findn reads only the first len bytes: "bind" of "bind:0-1". */
    ck_assert_int_eq(np_names_findn(&np_mem_mode_names, "bind:0-1", 4), NP_MEM_BIND);
    ck_assert_int_eq(np_names_findn(&np_mem_mode_names, "bind:0-1", 3), -1);
    ck_assert_int_eq(np_names_findn(&np_mem_mode_names, "bind:0-1", 5), -1);
}
END_TEST

/* "a, b or c" for messages, "a, b, c" without "or"; cut short, still
 * terminated. */
START_TEST(names_list_reads_a_b_or_c)
{
    char buf[128];
    for (int i = 0; i < NTABLES; i++)
        ck_assert_str_eq(np_names_list(tables[i].t, 1, buf, sizeof buf), tables[i].list);
    ck_assert_str_eq(np_names_list(&np_cpus_mode_names, 0, buf, sizeof buf), "node, core, pu");
    ck_assert_str_eq(np_names_list(&np_scope_names, 0, buf, sizeof buf), "threads, jvm");
    static const char *const one[] = {"only"};
    const struct np_names single = {one, 1};
    ck_assert_str_eq(np_names_list(&single, 1, buf, sizeof buf), "only");
    char small[8];
    ck_assert_str_eq(np_names_list(&np_mem_mode_names, 1, small, sizeof small), "preferr");
    small[0] = 'X';
    np_names_list(&np_mem_mode_names, 1, small, 0);
    ck_assert_int_eq(small[0], 'X');
}
END_TEST

START_TEST(cpukinds_read_by_name_or_index)
{
    static const struct {
        const char *s;
        int kind;
    } good[] = {
        {"performance", NP_CPUKIND_PERFORMANCE},
        {"efficiency", NP_CPUKIND_EFFICIENCY},
        {"any", NP_CPUKIND_ANY},
        {"0", 0},
        {"255", 255},
    };
    char buf[32];
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        int k = 1000;
        ck_assert_msg(np_cpukind_parse(good[i].s, &k) == 0 && k == good[i].kind, "%s: %d", good[i].s,
                      k);
        ck_assert_str_eq(np_cpukind_name(k, buf, sizeof buf), good[i].s);
    }
    static const char *const bad[] = {"", "256", "-1", "Performance", "perf", "1x", "any "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int k = 1000;
        ck_assert_msg(np_cpukind_parse(bad[i], &k) == -1, "'%s' accepted as %d", bad[i], k);
        ck_assert_int_eq(k, 1000);
    }
}
END_TEST

Suite *modes_suite(void)
{
    Suite *s = suite_create("modes");
    TCase *tc = tcase_create("modes");
    tcase_add_test(tc, every_name_round_trips);
    tcase_add_test(tc, only_whole_names_are_found);
    tcase_add_test(tc, names_list_reads_a_b_or_c);
    tcase_add_test(tc, cpukinds_read_by_name_or_index);
    suite_add_tcase(s, tc);
    return s;
}
