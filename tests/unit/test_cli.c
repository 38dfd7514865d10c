/* The numapin command-line tool ($NUMAPIN_CLI): expected output and
 * argument errors.
 *
 * Expected outputs live in native/tests/expected/ (or $NUMAPIN_EXPECTED),
 * one file per command, named for its inputs.  Each was checked by hand
 * against the topology (hwloc-calc / lstopo) before being stored.  After a
 * deliberate change of the plan or its format, regenerate them with
 *
 *     NUMAPIN_REGEN=1 make test-unit
 *
 * (run from the repository root), then review `git diff native/tests/expected`
 * before committing: regeneration accepts whatever the tool prints. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests.h"

static const char *cli(void)
{
    const char *c = getenv("NUMAPIN_CLI");
    ck_assert_msg(c != NULL && *c, "NUMAPIN_CLI (path of build/numapin) is not set");
    return c;
}

static const char *topologies(void)
{
    const char *d = getenv("NUMAPIN_TOPOLOGIES");
    ck_assert_msg(d != NULL && *d, "NUMAPIN_TOPOLOGIES is not set");
    return d;
}

static void expected_path(char *buf, size_t len, const char *name)
{
    const char *dir = getenv("NUMAPIN_EXPECTED");
    ck_assert_msg(dir != NULL && *dir, "NUMAPIN_EXPECTED (the folder tests/golden/expected) is not set");
    snprintf(buf, len, "%s/%s", dir, name);
}

/* Runs the CLI with args (NULL-terminated) and compares stdout with the
 * expected file; stderr must be empty and the exit status 0. */
static void expect_output(const char *name, const char *const *args)
{
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)cli();
    for (; args[n - 1] != NULL; n++)
        argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    char *out, *err;
    int rc = t_run(argv, &out, &err);
    ck_assert_msg(rc == 0, "%s: exit %d, stderr: %s", name, rc, err);
    ck_assert_msg(err[0] == '\0', "%s: stderr: %s", name, err);
    char path[4096];
    expected_path(path, sizeof path, name);
    const char *regen = getenv("NUMAPIN_REGEN");
    if (regen != NULL && strcmp(regen, "1") == 0) {
        ck_assert_msg(t_write_file(path, out, strlen(out)) == 0, "cannot write %s", path);
        fprintf(stderr, "regenerated %s\n", path);
    } else {
        char *want = t_read_file(path, NULL);
        ck_assert_msg(want != NULL,
                      "cannot read %s (`make test-unit REGEN=1` creates it)", path);
        ck_assert_msg(strcmp(out, want) == 0, "%s: output differs from %s\n got: %s\nwant: %s",
                      name, path, out, want);
        free(want);
    }
    free(out);
    free(err);
}

#define SYNTH "pack:2 numa:2 core:2 pu:1"

static const struct {
    const char *groups, *file;
} synth_cases[] = {
    {"1", "plan_synthetic_pack2-numa2-core2-pu1_groups1.json"},
    {"2", "plan_synthetic_pack2-numa2-core2-pu1_groups2.json"},
    {"3", "plan_synthetic_pack2-numa2-core2-pu1_groups3.json"},
    {"4", "plan_synthetic_pack2-numa2-core2-pu1_groups4.json"},
    {"5", "plan_synthetic_pack2-numa2-core2-pu1_groups5.json"},
    {"8", "plan_synthetic_pack2-numa2-core2-pu1_groups8.json"},
    {"9", "plan_synthetic_pack2-numa2-core2-pu1_groups9.json"},
};

START_TEST(plan_synthetic_json)
{
    const char *args[] = {"plan", "--synthetic", SYNTH, "--groups", synth_cases[_i].groups,
                          "--json", NULL};
    expect_output(synth_cases[_i].file, args);
}
END_TEST

START_TEST(plan_xml_json)
{
    static const struct {
        const char *xml, *groups, *file;
    } c[] = {
        {"xeon-6972p-snc3.xml", "3", "plan_xeon-6972p-snc3_groups3.json"},
        {"epyc-7742-2s-nps4.xml", "2", "plan_epyc-7742-2s-nps4_groups2.json"},
        {"epyc-7742-2s-nps4.xml", "8", "plan_epyc-7742-2s-nps4_groups8.json"},
    };
    char xml[4096];
    snprintf(xml, sizeof xml, "%s/%s", topologies(), c[_i].xml);
    const char *args[] = {"plan", "--topology", xml, "--groups", c[_i].groups, "--json", NULL};
    expect_output(c[_i].file, args);
}
END_TEST

START_TEST(plan_table)
{
    /* The human-readable table, for one group, with cpus=pu slots. */
    const char *args[] = {"plan", "--synthetic", "pack:1 numa:2 core:2 pu:2", "--groups", "3",
                          "--group", "0", "--cpus", "pu", NULL};
    expect_output("plan_synthetic_pack1-numa2-core2-pu2_groups3_group0_cpus-pu.txt", args);
    const char *all[] = {"plan", "--synthetic", "pack:1 numa:2 core:2 pu:2", "--groups", "3",
                         "--cpus", "core", NULL};
    expect_output("plan_synthetic_pack1-numa2-core2-pu2_groups3_cpus-core.txt", all);
}
END_TEST

/* The flags that size one group's JVM: its CPU count, on one line. */
START_TEST(plan_java_flags)
{
    static const struct {
        const char *synthetic, *groups, *group, *want;
    } c[] = {
        {"pack:1 numa:3 core:2 pu:1", "3", "1", "-XX:ActiveProcessorCount=2\n"},
        {SYNTH, "1", "0", "-XX:ActiveProcessorCount=8\n"},  /* the whole machine */
        {SYNTH, "3", "0", "-XX:ActiveProcessorCount=4\n"},  /* two nodes of four */
        {SYNTH, "8", "7", "-XX:ActiveProcessorCount=1\n"},  /* a core */
    };
    char *argv[] = {(char *)cli(), "plan", "--synthetic", (char *)c[_i].synthetic, "--groups",
                    (char *)c[_i].groups, "--group", (char *)c[_i].group, "--java-flags", NULL};
    char *out, *err;
    ck_assert_int_eq(t_run(argv, &out, &err), 0);
    ck_assert_str_eq(out, c[_i].want);
    ck_assert_str_eq(err, "");
    free(out);
    free(err);
}
END_TEST

/* Bad arguments: exit status 2 and a message on stderr. */
static const struct {
    const char *args[8];
    const char *msg;
} bad[] = {
    {{NULL}, "usage: numapin plan"},
    {{"frobnicate", NULL}, "numapin: unknown command 'frobnicate'"},
    {{"plan", "--groups", "0", "--synthetic", SYNTH, NULL}, "--groups takes a number from 1 to 4096, not '0'"},
    {{"plan", "--groups", "4097", "--synthetic", SYNTH, NULL}, "--groups takes a number from 1 to 4096, not '4097'"},
    {{"plan", "--groups", "two", "--synthetic", SYNTH, NULL}, "not 'two'"},
    {{"plan", "--groups", "-1", "--synthetic", SYNTH, NULL}, "not '-1'"},
    {{"plan", "--groups", "2", "--group", "x", "--synthetic", SYNTH, NULL}, "--group takes a group index from 0 to 4095, not 'x'"},
    {{"plan", "--groups", "2", "--group", "2", "--synthetic", SYNTH, NULL}, "--group 2 is out of range: valid values are 0 to 1"},
    {{"plan", "--group", "4", "--synthetic", SYNTH, NULL}, "--group 4 is out of range: valid values are 0 to 3"},
    {{"plan", "--cpus", "numa", "--synthetic", SYNTH, NULL}, "--cpus takes node, core or pu, not 'numa'"},
    {{"plan", "--topology", "a.xml", "--synthetic", SYNTH, NULL}, "--topology and --synthetic exclude each other"},
    {{"plan", "--synthetic", SYNTH, "extra", NULL}, "unexpected argument 'extra'"},
    {{"plan", "--frobnicate", NULL}, "invalid arguments"},
    {{"plan", "--groups", NULL}, "invalid arguments"},
    {{"plan", "--groups", "2", "--java-flags", "--synthetic", SYNTH, NULL}, "--java-flags needs --group G"},
    {{"plan", "--groups", "2", "--group", "1", "--java-flags", "--json", NULL}, "--json and --java-flags exclude each other"},
};

START_TEST(bad_arguments)
{
    char *argv[10];
    int n = 0;
    argv[n++] = (char *)cli();
    for (int k = 0; bad[_i].args[k] != NULL; k++)
        argv[n++] = (char *)bad[_i].args[k];
    argv[n] = NULL;
    char *out, *err;
    int rc = t_run(argv, &out, &err);
    ck_assert_msg(rc == 2, "case %d: exit %d, want 2 (stderr: %s)", _i, rc, err);
    ck_assert_msg(strstr(err, bad[_i].msg) != NULL, "case %d: stderr lacks \"%s\": %s", _i,
                  bad[_i].msg, err);
    ck_assert_msg(out[0] == '\0', "case %d: stdout not empty: %s", _i, out);
    free(out);
    free(err);
}
END_TEST

START_TEST(unloadable_topology)
{
    /* Not a usage error: exit 1. */
    char *argv[] = {(char *)cli(), "plan", "--topology", "/nonexistent/m.xml", NULL};
    char *out, *err;
    ck_assert_int_eq(t_run(argv, &out, &err), 1);
    ck_assert_ptr_nonnull(strstr(err, "numapin: cannot load the topology (xml /nonexistent/m.xml)"));
    free(out);
    free(err);
}
END_TEST

/* check reads threads on this machine: a topology of another is refused
 * before anything is asked of the process; --version. */
START_TEST(check_needs_this_machine_and_version)
{
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    setenv("HWLOC_SYNTHETIC", "pack:1 numa:2 core:1 pu:1", 1);
    unsetenv("HWLOC_THISSYSTEM");
    char *argv[] = {(char *)cli(), "check", pid, NULL};
    char *out, *err;
    ck_assert_int_eq(t_run(argv, &out, &err), 1);
    ck_assert_ptr_nonnull(strstr(err, "numapin check: the topology (synthetic pack:1 numa:2 core:1 "
                                      "pu:1) is not this machine's"));
    ck_assert_str_eq(out, "");
    free(out);
    free(err);
    unsetenv("HWLOC_SYNTHETIC");
    char *argv2[] = {(char *)cli(), "--version", NULL};
    ck_assert_int_eq(t_run(argv2, &out, &err), 0);
    ck_assert_int_eq(strncmp(out, "numapin ", 8), 0);
    ck_assert_ptr_nonnull(strchr(out, '.'));
    free(out);
    free(err);
}
END_TEST

START_TEST(help)
{
    char *argv[] = {(char *)cli(), "help", NULL};
    char *out, *err;
    ck_assert_int_eq(t_run(argv, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: numapin plan --groups N"));
    ck_assert_str_eq(err, "");
    free(out);
    free(err);
    char *argv2[] = {(char *)cli(), "plan", "--help", NULL};
    ck_assert_int_eq(t_run(argv2, &out, &err), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: numapin plan --groups N"));
    free(out);
    free(err);
}
END_TEST

Suite *cli_suite(void)
{
    Suite *s = suite_create("cli");
    TCase *tc = tcase_create("cli");
    tcase_set_timeout(tc, 20);
    tcase_add_loop_test(tc, plan_synthetic_json, 0, (int)(sizeof synth_cases / sizeof *synth_cases));
    tcase_add_loop_test(tc, plan_xml_json, 0, 3);
    tcase_add_test(tc, plan_table);
    tcase_add_loop_test(tc, plan_java_flags, 0, 4);
    tcase_add_loop_test(tc, bad_arguments, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, unloadable_topology);
    tcase_add_test(tc, help);
    tcase_add_test(tc, check_needs_this_machine_and_version);
    suite_add_tcase(s, tc);
    return s;
}
