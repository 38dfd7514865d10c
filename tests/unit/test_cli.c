/* The numapin command-line tool ($NUMAPIN_CLI): argument errors, exit
 * statuses, help and version.  What it prints for each machine is held by
 * the transcripts of test_expected.c. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests.h"

static const char *cli(void)
{
    const char *c = getenv("NUMAPIN_CLI");
    ck_assert_msg(c != NULL && *c, "NUMAPIN_CLI (path of build/numapin) is not set");
    return c;
}

#define SYNTH "pack:2 numa:2 core:2 pu:1"

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
    const char *args[12];
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
    {{"check", " 12", NULL}, "numapin check: give one process id"},
    {{"check", "12x", NULL}, "numapin check: give one process id"},
    {{"check", "+12", NULL}, "numapin check: give one process id"},
    {{"plan", "--groups", "2", "--java-flags", "--synthetic", SYNTH, NULL}, "--java-flags needs --group G"},
    {{"plan", "--groups", "2", "--group", "1", "--java-flags", "--json", NULL}, "--json and --java-flags exclude each other"},
    /* Each option once: a second would silently win.  (Paths that cannot
     * be written, should a second be taken.) */
    {{"plan", "--groups", "2", "--groups", "3", "--synthetic", SYNTH, NULL}, "numapin plan: --groups is given twice: give it once"},
    {{"plan", "--synthetic", SYNTH, "--synthetic", SYNTH, NULL}, "numapin plan: --synthetic is given twice: give it once"},
    {{"plan", "--json", "--svg", "/nonexistent/a.svg", "--svg", "/nonexistent/b.svg", NULL}, "numapin plan: --svg is given twice"},
    {{"topo", "--json", "--json", NULL}, "numapin topo: --json is given twice: give it once"},
    {{"check", "--threads", "A*", "--threads", "B*", "1", NULL}, "numapin check: --threads is given twice"},
    {{"groups", "--groups", "2", "--logs", "/nonexistent/a", "--logs", "/nonexistent/b", "--", "true", NULL}, "numapin groups: --logs is given twice"},
    {{"report", "/nonexistent/r.json", "--html", "/nonexistent/a.html", "--html", "/nonexistent/b.html", NULL}, "numapin report: --html is given twice"},
};

START_TEST(bad_arguments)
{
    char *argv[14];
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

/* plan --svg never replaces the --topology it reads: the same path, a
 * hard link or a symbolic link to it is one line naming both, exit 1,
 * the file as it was; another path is drawn. */
START_TEST(plan_svg_never_over_its_topology)
{
    char dir[256], xml[512], hard[512], sym[512], svg[512], src[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(src, sizeof src, "%s/xeon-6972p-snc3.xml", getenv("NUMAPIN_TOPOLOGIES"));
    size_t len;
    char *machine = t_read_file(src, &len);
    ck_assert_ptr_nonnull(machine);
    snprintf(xml, sizeof xml, "%s/m.xml", dir);
    snprintf(hard, sizeof hard, "%s/hard.svg", dir);
    snprintf(sym, sizeof sym, "%s/sym.svg", dir);
    snprintf(svg, sizeof svg, "%s/m.svg", dir);
    ck_assert_int_eq(t_write_file(xml, machine, len), 0);
    const char *outs[] = {xml, hard, sym};
    for (int i = 0; i < 3; i++) {
        if (i == 1)
            ck_assert_int_eq(link(xml, hard) | symlink(xml, sym), 0);
        char *argv[] = {(char *)cli(), "plan", "--groups", "3", "--topology", xml, "--svg",
                        (char *)outs[i], NULL};
        char *out, *err, want[1400];
        ck_assert_int_eq(t_run(argv, &out, &err), 1);
        snprintf(want, sizeof want, "numapin plan: --svg: will not write %s over the input %s "
                 "(the same file): give another output file\n", outs[i], xml);
        ck_assert_str_eq(err, want);
        ck_assert_str_eq(out, "");
        free(out);
        free(err);
        char *now = t_read_file(xml, NULL);
        ck_assert_str_eq(now, machine);
        free(now);
    }
    char *argv[] = {(char *)cli(), "plan", "--groups", "3", "--topology", xml, "--svg", svg, NULL};
    char *out, *err;
    ck_assert_msg(t_run(argv, &out, &err) == 0, "%s", err);
    free(out);
    free(err);
    char *drawn = t_read_file(svg, NULL);
    ck_assert_ptr_nonnull(strstr(drawn, "<svg"));
    free(drawn);
    free(machine);
    t_rmdir(dir);
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
    tcase_add_loop_test(tc, plan_java_flags, 0, 4);
    tcase_add_loop_test(tc, bad_arguments, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, unloadable_topology);
    tcase_add_test(tc, plan_svg_never_over_its_topology);
    tcase_add_test(tc, help);
    tcase_add_test(tc, check_needs_this_machine_and_version);
    suite_add_tcase(s, tc);
    return s;
}
