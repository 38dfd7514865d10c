/* np_describe: `numapin topo`, the machine as numapin sees it, in text and
 * in JSON.  The golden transcripts (test_expected.c) hold the whole output
 * of every machine; these tests assert the facts a user reads in it: which
 * nodes take groups, the recommended group count, distances, objects
 * without an OS index, the usable CPUs under a cpuset, CPU kinds.  The JSON
 * is read with jq, so that only what it says counts, not how it is
 * spelled. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "describe.h"
#include "np_topo.h"
#include "tests.h"

#define JQ "/usr/bin/jq"

/* What np_describe_text (json = 0) or np_describe_json writes; free it. */
static char *describe(const struct np_topo *t, int json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    if (json)
        np_describe_json(t, f);
    else
        np_describe_text(t, f);
    ck_assert_int_eq(fclose(f), 0);
    return buf;
}

/* The JSON description of t satisfies the jq filter (jq -e: its last
 * output is neither false nor null). */
static void expect_json(const struct np_topo *t, const char *filter)
{
    ck_assert_msg(access(JQ, X_OK) == 0, JQ " is missing (scripts/install-deps.sh build)");
    char dir[256], path[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/topo.json", dir);
    char *json = describe(t, 1);
    ck_assert_int_eq(t_write_file(path, json, strlen(json)), 0);
    char *argv[] = {JQ, "-e", (char *)filter, path, NULL};
    char *out, *err;
    int rc = t_run(argv, &out, &err);
    ck_assert_msg(rc == 0, "jq -e '%s': exit %d, %s%s\non: %s", filter, rc, out, err, json);
    free(out);
    free(err);
    free(json);
    t_rmdir(dir);
}

/* The text description of t has each of the NULL-terminated `lines` as a
 * whole line (indent aside); it has `absent` nowhere unless NULL. */
static void expect_lines(const struct np_topo *t, const char *const *lines, const char *absent)
{
    char *text = describe(t, 0);
    for (int i = 0; lines[i] != NULL; i++) {
        bool found = false;
        size_t n = strlen(lines[i]);
        for (const char *l = text; *l && !found; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != 0)) {
            const char *p = l + strspn(l, " ");
            found = strncmp(p, lines[i], n) == 0 && (p[n] == '\n' || p[n] == '\0');
        }
        ck_assert_msg(found, "no line \"%s\" in:\n%s", lines[i], text);
    }
    if (absent != NULL)
        ck_assert_msg(strstr(text, absent) == NULL, "\"%s\" in:\n%s", absent, text);
    free(text);
}

#define LINES(...) ((const char *const[]){__VA_ARGS__, NULL})

/* CPU-less memory tiers beside DRAM (NVM, HBM) take no group; a node whose
 * only memory is HBM does. */
START_TEST(cpuless_nodes_take_no_group)
{
    struct np_topo t;
    t_load(&t, NULL, "fakeheteromemtiers.xml", NULL);
    expect_lines(&t,
                 LINES("node P#0: cpus=0-1 memory=2934MiB kind=DRAM",
                       "node P#8: cpus=0-1 memory=384MiB kind=NVM (takes no group)",
                       "node P#4: cpus=2-3 memory=512MiB kind=HBM (takes no group)",
                       "node P#2: cpus=4-5 memory=512MiB kind=HBM",
                       "recommended groups: 3 (one per NUMA node with CPUs)"),
                 NULL);
    char *text = describe(&t, 0);
    ck_assert_int_eq(t_count_lines(text, "(takes no group)"), 4);
    free(text);
    expect_json(&t, "[.numa_nodes[] | select(.takes_groups) | .os_index] == [0, 1, 2]");
    expect_json(&t, "[.numa_nodes[] | select(.takes_groups | not) | .kind] == "
                    "[\"NVM\", \"HBM\", \"NVM\", \"NVM\"]");
    expect_json(&t, ".recommended_groups == 3 and .pus == 6 and .cores == 6");
    np_topo_destroy(&t);
}
END_TEST

/* One group per node with usable CPUs: what np_recommended_groups and
 * both outputs say, under a cpuset too; every other node takes none. */
START_TEST(recommended_groups_are_the_nodes_with_usable_cpus)
{
    static const struct {
        const char *synth, *xml, *restrict_cpus;
        int want;
    } c[] = {
        {NULL, "epyc-7742-2s-nps4.xml", NULL, 8},
        {NULL, "epyc-7742-2s-nps4.xml", "0-23,64-79", 3},
        {NULL, "16amd64-8n2c-cpusets.xml", NULL, 3},
        {NULL, "qemu-n3.xml", NULL, 3},
        {"pack:1 numa:1 core:1 pu:1", NULL, NULL, 1},
        {"pack:2 numa:2 core:2 pu:1", NULL, "1", 1},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        struct np_topo t;
        char want[128], filter[64];
        t_load(&t, c[i].synth, c[i].xml, c[i].restrict_cpus);
        ck_assert_int_eq(np_recommended_groups(&t), c[i].want);
        snprintf(want, sizeof want, "recommended groups: %d (one per NUMA node with CPUs)", c[i].want);
        expect_lines(&t, LINES(want), NULL);
        char *text = describe(&t, 0);
        ck_assert_int_eq(t_count_lines(text, "(takes no group)"),
                         hwloc_get_nbobjs_by_type(t.topology, HWLOC_OBJ_NUMANODE) - c[i].want);
        free(text);
        snprintf(filter, sizeof filter, ".recommended_groups == %d", c[i].want);
        expect_json(&t, filter);
        np_topo_destroy(&t);
    }
}
END_TEST

/* The latency matrix as the kernel or the XML gives it, by OS index; none
 * on a synthetic machine. */
START_TEST(distances_are_the_latency_matrix)
{
    struct np_topo t;
    t_load(&t, NULL, "qemu-n3.xml", NULL);
    char *text = describe(&t, 0);
    ck_assert_ptr_nonnull(strstr(text, "distances (relative latency):\n"
                                       "             0     1     2\n"
                                       "      0     10    21    31\n"
                                       "      1     21    10    21\n"
                                       "      2     31    21    10\n"));
    free(text);
    expect_json(&t, ".distances.nodes == [0, 1, 2] and "
                    ".distances.values == [[10, 21, 31], [21, 10, 21], [31, 21, 10]]");
    np_topo_destroy(&t);
    t_load(&t, NULL, "fakeheteromemtiers.xml", NULL);
    expect_json(&t, ".distances.nodes == [0, 1, 2, 4, 6, 8, 9] and (.distances.values | length) == 7");
    np_topo_destroy(&t);
    t_load(&t, "pack:2 numa:2 core:1 pu:1", NULL, NULL);
    expect_lines(&t, LINES("distances (relative latency):", "(none reported)"), NULL);
    expect_json(&t, ".distances == null");
    np_topo_destroy(&t);
}
END_TEST

/* Objects without an OS index (caches; packages on some machines) are
 * named by their logical index only, never by hwloc's HWLOC_UNKNOWN_INDEX
 * (4294967295); JSON says null. */
START_TEST(objects_without_os_index_are_named_by_logical_index)
{
    struct np_topo t;
    t_load(&t, "pack:1 numa:1 l3:2 core:1 pu:1", NULL, NULL);
    expect_lines(&t, LINES("L3Cache L#1: cpus=1 nodes=0 size=16384KiB"), "4294967295");
    char *json = describe(&t, 1);
    ck_assert_ptr_null(strstr(json, "4294967295"));
    free(json);
    expect_json(&t, "[.l3[] | .os_index] == [null, null] and [.l3[] | .logical_index] == [0, 1] and "
                    ".packages[0].os_index == 0");
    np_topo_destroy(&t);
    /* With an OS index, it is shown. */
    t_load(&t, NULL, "qemu-n3.xml", NULL);
    expect_lines(&t, LINES("L3Cache L#1 P#2: cpus=2-3 nodes=1 size=16384KiB"), NULL);
    expect_json(&t, "[.l3[] | .os_index] == [0, 2, 4] and .l3[1].size == 16777216");
    np_topo_destroy(&t);
}
END_TEST

/* Under a cpuset: the usable CPUs, objects with none of them say so, and
 * nodes keep their memory. */
START_TEST(restricted_machine_shows_usable_cpus_only)
{
    struct np_topo t;
    t_load(&t, "pack:2 numa:2 core:2 pu:1", NULL, "0-2");
    expect_lines(&t,
                 LINES("usable cpus: 0-2", "node P#1: cpus=2 memory=1024MiB",
                       "node P#2: cpus=none memory=1024MiB (takes no group)",
                       "Package L#1 P#1: cpus=none nodes=2-3"),
                 NULL);
    expect_json(&t, ".usable_cpus == \"0-2\" and .pus == 3 and .cores == 3 and "
                    "[.numa_nodes[] | .cpus] == [\"0-1\", \"2\", \"\", \"\"] and "
                    "[.packages[] | .cpus] == [\"0-2\", \"\"]");
    np_topo_destroy(&t);
}
END_TEST

/* Hybrid machines: each CPU kind with its efficiency rank and CPUs;
 * machines of one kind say so. */
START_TEST(cpu_kinds_are_listed_by_efficiency)
{
    struct np_topo t;
    t_load(&t, NULL, "20em64t-hybrid-1p6c2t+2ca4co1t.xml", NULL);
    expect_lines(&t,
                 LINES("kind 0: efficiency=0 cpus=12-19 3900", "kind 1: efficiency=1 cpus=0-11 5000"),
                 "(one kind)");
    expect_json(&t, "[.cpukinds[] | .cpus] == [\"12-19\", \"0-11\"] and "
                    "[.cpukinds[] | .efficiency] == [0, 1]");
    np_topo_destroy(&t);
    t_load(&t, NULL, "qemu-n2.xml", NULL);
    expect_lines(&t, LINES("cpu kinds:", "(one kind)"), "kind 0:");
    expect_json(&t, ".cpukinds == []");
    np_topo_destroy(&t);
}
END_TEST

/* On every machine of the topology folder, the JSON is one valid JSON
 * document whose counts agree with the machine. */
START_TEST(json_is_valid_on_every_machine)
{
    const char *dir = getenv("NUMAPIN_TOPOLOGIES");
    ck_assert_msg(dir != NULL, "NUMAPIN_TOPOLOGIES is not set");
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "%s: %s", dir, strerror(errno));
    int seen = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 4, ".xml") != 0)
            continue;
        struct np_topo t;
        char filter[256];
        t_load(&t, NULL, e->d_name, NULL);
        snprintf(filter, sizeof filter,
                 ".pus == %d and (.numa_nodes | length) == %d and .recommended_groups == %d",
                 hwloc_bitmap_weight(t.allowed),
                 hwloc_get_nbobjs_by_type(t.topology, HWLOC_OBJ_NUMANODE), t.nnodes);
        expect_json(&t, filter);
        np_topo_destroy(&t);
        seen++;
    }
    closedir(d);
    ck_assert_int_gt(seen, 0);
}
END_TEST

Suite *describe_suite(void)
{
    Suite *s = suite_create("describe");
    TCase *tc = tcase_create("describe");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, cpuless_nodes_take_no_group);
    tcase_add_test(tc, recommended_groups_are_the_nodes_with_usable_cpus);
    tcase_add_test(tc, distances_are_the_latency_matrix);
    tcase_add_test(tc, objects_without_os_index_are_named_by_logical_index);
    tcase_add_test(tc, restricted_machine_shows_usable_cpus_only);
    tcase_add_test(tc, cpu_kinds_are_listed_by_efficiency);
    tcase_add_test(tc, json_is_valid_on_every_machine);
    suite_add_tcase(s, tc);
    return s;
}
