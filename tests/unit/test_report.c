/* `numapin report ... --html`: the page of a run from reports as the agent
 * writes them (docs/report.md), fields of later versions included; and
 * every bad input one line, a non-zero exit and no page. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "draw.h"
#include "tests.h"

static const char *cli(void)
{
    const char *c = getenv("NUMAPIN_CLI");
    ck_assert_msg(c != NULL && *c, "NUMAPIN_CLI is not set");
    return c;
}

/* A report of group g, as np_report.c writes it, plus fields this version
 * of the page does not know. */
static void write_report(const char *path, int g, const char *cpus, const char *extra_thread_name)
{
    char text[4096];
    snprintf(text, sizeof text,
             "{\n  \"numapin\": 1,\n  \"pid\": %d,\n"
             "  \"plan\": {\"group\": %d, \"groups\": 2, \"domain\": \"node\", \"node\": \"%d\", "
             "\"slice\": 1, \"slices\": 1, \"cpus\": \"%s\", \"cpus_mode\": \"node\", \"cpukind\": "
             "\"performance\", \"slots\": 1, \"mem\": \"preferred:%d\", \"threads\": \"Tier*\", "
             "\"scope\": \"threads\", \"dryrun\": false},\n"
             "  \"totals\": {\"placed\": 2, \"would_place\": 0, \"skipped\": 1, \"failed\": 0, "
             "\"mem_failed\": 0, \"live\": 2},\n"
             "  \"ended_kept\": 1024,\n"
             "  \"memory\": {\"node_pages\": {\"0\": 1200, \"1\": 34}, \"future_note\": \"kept\"},\n"
             "  \"threads\": [\n"
             "    {\"name\": \"Tier1-worker-%d\", \"tid\": %d, \"seq\": 0, \"outcome\": \"placed\", "
             "\"how\": \"start\", \"live\": true, \"cpus\": \"%s\", \"mem\": \"preferred:%d\", "
             "\"verified\": true, \"cpu_error\": null, \"mem_error\": null, \"mem_pages\": {\"%d\": 77}},\n"
             "    {\"name\": \"%s\", \"tid\": %d, \"seq\": 1, \"outcome\": \"placed\", "
             "\"how\": \"start\", \"live\": true, \"cpus\": \"%s\", \"mem\": null, "
             "\"verified\": false, \"cpu_error\": null, \"mem_error\": \"EINVAL\"},\n"
             "    {\"name\": \"main\", \"tid\": %d, \"seq\": 2, \"outcome\": \"skipped\", \"how\": "
             "\"start\", \"live\": true, \"cpus\": null, \"mem\": null, \"verified\": null, "
             "\"cpu_error\": null, \"mem_error\": null}\n  ]\n}\n",
             1000 + g, g, g, cpus, g, g, 2000 + g, cpus, g, g, extra_thread_name, 3000 + g, cpus,
             4000 + g);
    ck_assert_int_eq(t_write_file(path, text, strlen(text)), 0);
}

static int report(char **args, char **err)
{
    char *argv[16], *out;
    int n = 0;
    argv[n++] = (char *)cli();
    argv[n++] = "report";
    for (; *args != NULL && n < 15; args++)
        argv[n++] = *args;
    argv[n] = NULL;
    int rc = t_run(argv, &out, err);
    free(out);
    return rc;
}

START_TEST(page_holds_each_group_thread_and_unknown_field)
{
    char dir[256], r0[512], r1[512], html[512], *err;
    t_tmpdir(dir, sizeof dir);
    snprintf(r0, sizeof r0, "%s/r0.json", dir);
    snprintf(r1, sizeof r1, "%s/r1.json", dir);
    snprintf(html, sizeof html, "%s/run.html", dir);
    write_report(r0, 0, "0-1", "Tier<2>&\\\"x\\\"");
    write_report(r1, 1, "2-3", "Tier2-worker-1");
    char *args[] = {r0, r1, "--html", html, "--synthetic", "pack:1 numa:2 core:2 pu:1", NULL};
    ck_assert_msg(report(args, &err) == 0, "%s", err);
    ck_assert_str_eq(err, "");
    free(err);
    char *page = t_read_file(html, NULL);
    ck_assert_ptr_nonnull(page);
    ck_assert(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    /* Each thread by name (escaped), each group's CPUs, in its colour. */
    ck_assert_ptr_nonnull(strstr(page, ">Tier1-worker-0<"));
    ck_assert_ptr_nonnull(strstr(page, ">Tier1-worker-1<"));
    ck_assert_ptr_nonnull(strstr(page, ">Tier&lt;2&gt;&amp;&quot;x&quot;<"));
    ck_assert_ptr_null(strstr(page, "Tier<2>"));
    ck_assert_ptr_nonnull(strstr(page, "<b class=\"cpulist\">0-1</b>"));
    ck_assert_ptr_nonnull(strstr(page, "<b class=\"cpulist\">2-3</b>"));
    ck_assert_ptr_nonnull(strstr(page, cli_draw_colour(0)));
    ck_assert_ptr_nonnull(strstr(page, cli_draw_colour(1)));
    /* The machine drawn by lstopo, inline, one PU rectangle per CPU. */
    ck_assert_ptr_nonnull(strstr(page, "<svg "));
    int pus = 0;
    for (const char *p = strstr(page, "<rect id='PU_"); p; p = strstr(p + 1, "<rect id='PU_"))
        pus++;
    ck_assert_int_eq(pus, 4);
    /* Fields of later versions, shown as they are. */
    ck_assert_ptr_nonnull(strstr(page, ">node_pages<"));
    ck_assert_ptr_nonnull(strstr(page, "0: 1200, 1: 34"));
    ck_assert_ptr_nonnull(strstr(page, ">mem_pages<"));
    ck_assert_ptr_nonnull(strstr(page, ">future_note<"));
    /* Self-contained: nothing to fetch, no script. */
    ck_assert_ptr_null(strstr(page, "<script"));
    ck_assert_ptr_null(strstr(page, "<link"));
    ck_assert_ptr_null(strstr(page, "src="));
    ck_assert_ptr_null(strstr(page, "url("));
    ck_assert_ptr_null(strstr(page, "href=\"http"));
    struct stat st;
    ck_assert_int_eq(stat(html, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    free(page);
    t_rmdir(dir);
}
END_TEST

/* One bad input: exit 1, one line naming `want`, the old page intact. */
static void refused(const char *dir, const char *input, const char *html, const char *want)
{
    char *err;
    char *args[] = {(char *)input, "--html", (char *)html, NULL};
    ck_assert_int_eq(report(args, &err), 1);
    int lines = 0;
    for (const char *p = err; *p; p++)
        lines += *p == '\n';
    ck_assert_msg(lines == 1, "%s: %d lines: %s", input, lines, err);
    ck_assert_msg(strstr(err, want) != NULL, "%s: '%s' is not in: %s", input, want, err);
    free(err);
    (void)dir;
}

START_TEST(bad_inputs_are_one_line_and_write_nothing)
{
    char dir[256], html[512], p[512], good[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(html, sizeof html, "%s/page.html", dir);
    ck_assert_int_eq(t_write_file(html, "previous page", 13), 0);

    snprintf(p, sizeof p, "%s/missing.json", dir);
    refused(dir, p, html, "cannot read");
    snprintf(p, sizeof p, "%s/text.json", dir);
    ck_assert_int_eq(t_write_file(p, "not json at all\n", 16), 0);
    refused(dir, p, html, "is not a numapin report: not JSON");
    snprintf(p, sizeof p, "%s/other.json", dir);
    ck_assert_int_eq(t_write_file(p, "{\"name\": \"x\", \"plan\": 3}\n", 25), 0);
    refused(dir, p, html, "is not a numapin report: no \"numapin\" format version");
    snprintf(p, sizeof p, "%s/empty.json", dir);
    ck_assert_int_eq(t_write_file(p, "", 0), 0);
    refused(dir, p, html, "is empty: the JVM wrote no report");
    refused(dir, dir, html, "not a regular file");
    char *kept = t_read_file(html, NULL);
    ck_assert_str_eq(kept, "previous page");
    free(kept);

    /* A good report, a bad place to write. */
    snprintf(good, sizeof good, "%s/good.json", dir);
    write_report(good, 0, "0", "Tier1-worker-1");
    char out[512];
    snprintf(out, sizeof out, "%s/no/such/folder/page.html", dir);
    refused(dir, good, out, "does not exist");
    snprintf(out, sizeof out, "%s/page.html", geteuid() == 0 ? "/sys" : "/");
    refused(dir, good, out, "cannot write");

    /* Arguments. */
    char *err;
    char *none[] = {"--html", html, NULL};
    ck_assert_int_eq(report(none, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "give at least one REPORT.json"));
    free(err);
    char *nohtml[] = {good, NULL};
    ck_assert_int_eq(report(nohtml, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "--html OUT.html is required"));
    free(err);
    t_rmdir(dir);
}
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, page_holds_each_group_thread_and_unknown_field);
    tcase_add_test(tc, bad_inputs_are_one_line_and_write_nothing);
    suite_add_tcase(s, tc);
    return s;
}
