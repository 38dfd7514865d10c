/* `numapin report ... --html`: the page of a run from reports as the agent
 * writes them (docs/report.md), fields of later versions included; and
 * every bad input one line, a non-zero exit and no page. */
#define _GNU_SOURCE
#include <fcntl.h>
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

/* A report of group g in format `version`, as np_report.c writes it, plus
 * fields this version of the page does not know; `advice` is the JSON of
 * its "advice" array, or NULL for none (format 1 has none). */
static void write_report_v(const char *path, int version, int g, const char *cpus,
                           const char *extra_thread_name, const char *advice)
{
    char *text, adv[4096] = "";
    if (advice != NULL)
        snprintf(adv, sizeof adv, "  \"advice\": %s,\n", advice);
    ck_assert_int_gt(asprintf(&text,
             "{\n  \"numapin\": %d,\n  \"pid\": %d,\n%s"
             "  \"plan\": {\"group\": %d, \"groups\": 2, \"domain\": \"node\", \"node\": \"%d\", "
             "\"slice\": 1, \"slices\": 1, \"cpus\": \"%s\", \"cpus_mode\": \"node\", \"cpukind\": "
             "\"performance\", \"slots\": 1, \"mem\": \"preferred:%d\", \"threads\": \"Tier*\", "
             "\"scope\": \"threads\", \"dryrun\": false},\n"
             "  \"totals\": {\"placed\": 2, \"would_place\": 0, \"skipped\": 1, \"failed\": 0, "
             "\"mem_failed\": 0, \"live\": 2},\n"
             "  \"ended_kept\": 1024,\n"
             "  \"memory\": {\"node_pages\": {\"0\": 1200, \"1\": 34}, \"mem_local\": 2.7, "
             "\"future_note\": \"kept\"},\n"
             "  \"access\": {\"sampled\": true, \"nodes\": \"1\", \"access_local\": 99.9, "
             "\"access_samples\": 6696, \"access_migrated\": 3},\n"
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
             version, 1000 + g, adv, g, g, cpus, g, g, 2000 + g, cpus, g, g, extra_thread_name,
             3000 + g, cpus, 4000 + g), 0);
    ck_assert_int_eq(t_write_file(path, text, strlen(text)), 0);
    free(text);
}

/* The same in format 1. */
static void write_report(const char *path, int g, const char *cpus, const char *extra_thread_name)
{
    write_report_v(path, 1, g, cpus, extra_thread_name, NULL);
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
    /* The groups' table: each group's shares of pages and of sampled
     * accesses on its nodes. */
    ck_assert_ptr_nonnull(strstr(page, "<th>live</th><th>mem_local</th><th>access_local</th></tr>"));
    ck_assert_ptr_nonnull(strstr(page, "<td>2</td><td>2.7%</td><td>99.9%</td></tr>"));
    /* A real as written (99.9, not the double's 99.900000000000006). */
    ck_assert_ptr_nonnull(strstr(page, "<tr><th>access_local</th><td>99.9</td></tr>"));
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

/* Runs `report args`: exit `want_rc`, a first line naming `want`, and
 * html (which held "previous page") as it was. */
static void refused_args(char **args, int want_rc, const char *html, const char *want)
{
    char *err;
    int rc = report(args, &err);
    ck_assert_msg(rc == want_rc, "exit %d, want %d: %s", rc, want_rc, err);
    const char *nl = strchr(err, '\n');
    ck_assert_ptr_nonnull(nl);
    ck_assert_msg(want_rc == 2 || nl[1] == '\0', "more than one line: %s", err);
    ck_assert_msg(strstr(err, want) != NULL && strstr(err, want) < nl, "'%s' is not in the first "
                  "line of: %s", want, err);
    free(err);
    char *kept = t_read_file(html, NULL);
    ck_assert_ptr_nonnull(kept);
    ck_assert_str_eq(kept, "previous page");
    free(kept);
}

/* The page never replaces one of its reports: the same path, a hard link
 * or a symbolic link to it is refused, naming both; another file is
 * written. */
START_TEST(page_never_written_over_a_report)
{
    char dir[256], r0[512], r1[512], hard[512], sym[512], out[512], err_want[1200];
    t_tmpdir(dir, sizeof dir);
    snprintf(r0, sizeof r0, "%s/r0.json", dir);
    snprintf(r1, sizeof r1, "%s/r1.json", dir);
    snprintf(hard, sizeof hard, "%s/hard.html", dir);
    snprintf(sym, sizeof sym, "%s/sym.html", dir);
    write_report(r0, 0, "0", "Tier1-worker-1");
    write_report(r1, 1, "1", "Tier2-worker-1");
    char *before = t_read_file(r1, NULL);
    const char *outs[] = {r1, hard, sym};
    for (int i = 0; i < 3; i++) {
        if (i == 1) /* the links, once the path itself was tried alone */
            ck_assert_int_eq(link(r1, hard) | symlink(r1, sym), 0);
        char *err, *args[] = {r0, r1, "--html", (char *)outs[i], "--synthetic",
                              "pack:1 numa:2 core:1 pu:1", NULL};
        ck_assert_int_eq(report(args, &err), 1);
        snprintf(err_want, sizeof err_want, "numapin report: will not write %s over the input %s "
                 "(the same file)", outs[i], r1);
        ck_assert_msg(strncmp(err, err_want, strlen(err_want)) == 0, "%s", err);
        ck_assert_ptr_eq(strchr(err, '\n'), err + strlen(err) - 1);
        free(err);
        char *after = t_read_file(r1, NULL);
        ck_assert_str_eq(after, before);
        free(after);
    }
    /* A new path, and an existing file that is no input, are written. */
    snprintf(out, sizeof out, "%s/run.html", dir);
    for (int i = 0; i < 2; i++) {
        char *err, *args[] = {r0, r1, "--html", out, "--synthetic", "pack:1 numa:2 core:1 pu:1",
                              NULL};
        ck_assert_msg(report(args, &err) == 0, "%s", err);
        free(err);
        char *page = t_read_file(out, NULL);
        ck_assert(strncmp(page, "<!DOCTYPE html>", 15) == 0);
        free(page);
    }
    free(before);
    t_rmdir(dir);
}
END_TEST

/* Names shown as a person reads them: a bidirectional override or a
 * zero-width character written out, so it cannot reverse or hide the
 * rest of its line; HTML escaping as before. */
START_TEST(names_shown_with_format_characters_written_out)
{
    char dir[256], r0[512], html[512], *err;
    t_tmpdir(dir, sizeof dir);
    snprintf(r0, sizeof r0, "%s/r0.json", dir);
    snprintf(html, sizeof html, "%s/run.html", dir);
    write_report_v(r0, 2, 0, "0-1", "ForkJoinPool-7-worker-\\u202eevil<b>\\u200b",
                   "[{\"level\": \"warning\", \"text\": \"group 0 \\u202eis oversubscribed\"}]");
    char *args[] = {r0, "--html", html, "--synthetic", "pack:1 numa:2 core:2 pu:1", NULL};
    ck_assert_msg(report(args, &err) == 0, "%s", err);
    free(err);
    char *page = t_read_file(html, NULL);
    ck_assert_ptr_nonnull(strstr(page, ">ForkJoinPool-7-worker-\\u202eevil&lt;b&gt;\\u200b<"));
    ck_assert_ptr_nonnull(strstr(page, "group 0 \\u202eis oversubscribed"));
    ck_assert_ptr_null(strstr(page, "\xe2\x80\xae")); /* U+202E itself */
    ck_assert_ptr_null(strstr(page, "\xe2\x80\x8b")); /* U+200B itself */
    ck_assert_ptr_null(strstr(page, "<b>\\u200b"));
    free(page);
    /* A name cut at 1,000 characters is cut before a written-out
     * character that would go past them, never inside it. */
    char name[1100];
    memset(name, 'a', 996);
    strcpy(name + 996, "\\u202ez");
    write_report_v(r0, 2, 0, "0-1", name, "[]");
    ck_assert_msg(report(args, &err) == 0, "%s", err);
    free(err);
    page = t_read_file(html, NULL);
    char want[1100];
    memset(want, 'a', 996);
    strcpy(want + 996, "...<");
    ck_assert_ptr_nonnull(strstr(page, want));
    ck_assert_ptr_null(strstr(page, "aaaa\\u20"));
    free(page);
    t_rmdir(dir);
}
END_TEST

/* The advice: a format 2 report's lines with their level, "none given"
 * for an empty list, and for format 1, which did not record it, a line
 * saying so. */
START_TEST(advice_as_the_report_recorded_it)
{
    char dir[256], r[512], html[512], *err;
    t_tmpdir(dir, sizeof dir);
    snprintf(r, sizeof r, "%s/r.json", dir);
    snprintf(html, sizeof html, "%s/run.html", dir);
    static const struct {
        int version;
        const char *advice, *want[3], *not;
    } c[] = {
        {2, "[{\"level\": \"warning\", \"text\": \"12 tier threads on 4 CPUs\"}, "
            "{\"level\": \"info\", \"text\": \"groups=4 keeps <each> group on one node\"}]",
         {"<li class=\"warning\"><span class=\"level\">warning:</span> 12 tier threads on 4 CPUs</li>",
          "<li class=\"info\"><span class=\"level\">info:</span> groups=4 keeps &lt;each&gt; group on "
          "one node</li>", NULL}, "advice: "},
        {2, "[]", {"advice: none given", NULL}, "not recorded"},
        /* More than the report keeps: how many, and where they are. */
        {2, "[{\"level\": \"info\", \"text\": \"kept\"}], \"advice_dropped\": 3",
         {"<span class=\"level\">info:</span> kept</li>",
          "and 3 more, not kept in the report (the JVM's log has them)", NULL}, "none given"},
        {1, NULL, {"advice: not recorded (report format 1)", NULL}, "none given"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        write_report_v(r, c[i].version, 0, "0", "Tier1-worker-1", c[i].advice);
        char *args[] = {r, "--html", html, "--synthetic", "pack:1 numa:2 core:1 pu:1", NULL};
        ck_assert_msg(report(args, &err) == 0, "%s", err);
        free(err);
        char *page = t_read_file(html, NULL);
        for (int k = 0; c[i].want[k] != NULL; k++)
            ck_assert_msg(strstr(page, c[i].want[k]) != NULL, "case %zu: no %s", i, c[i].want[k]);
        ck_assert_msg(strstr(page, c[i].not) == NULL, "case %zu: %s", i, c[i].not);
        /* In the order given. */
        if (i == 0)
            ck_assert(strstr(page, "12 tier threads") < strstr(page, "groups=4 keeps"));
        free(page);
    }
    t_rmdir(dir);
}
END_TEST

/* A long name wraps inside its column: the style sheet lets a name (and
 * lists, and fields of later versions) break anywhere, each column keeping
 * a width, and the page carries the name's cell with that class. */
START_TEST(long_names_wrap_in_their_column)
{
    char dir[256], r[512], html[512], *err, name[10001];
    t_tmpdir(dir, sizeof dir);
    snprintf(r, sizeof r, "%s/r.json", dir);
    snprintf(html, sizeof html, "%s/run.html", dir);
    memset(name, 'x', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    write_report_v(r, 2, 0, "0", name, "[]");
    char *args[] = {r, "--html", html, "--synthetic", "pack:1 numa:2 core:1 pu:1", NULL};
    ck_assert_msg(report(args, &err) == 0, "%s", err);
    free(err);
    char *page = t_read_file(html, NULL);
    const char *style = strstr(page, "<style>"), *end = strstr(page, "</style>");
    ck_assert_ptr_nonnull(style);
    ck_assert_ptr_nonnull(end);
    /* The rule that lets text break anywhere, and what it applies to. */
    const char *wrap = strstr(style, "{overflow-wrap:anywhere}");
    ck_assert_ptr_nonnull(wrap);
    ck_assert(wrap < end);
    const char *sel = wrap;
    while (sel > style && sel[-1] != '}' && sel[-1] != '>')
        sel--;
    char selectors[512];
    snprintf(selectors, sizeof selectors, "%.*s,", (int)(wrap - sel), sel);
    static const char *const cells[] = {"td.name,", "td.cpus,", "td.mem,", "td.extra,",
                                        "td.cpulist,", ".kv td,"};
    for (size_t i = 0; i < sizeof cells / sizeof *cells; i++)
        ck_assert_msg(strstr(selectors, cells[i]) != NULL, "%s not in %s", cells[i], selectors);
    ck_assert_ptr_nonnull(strstr(style, "td.name{min-width:"));
    ck_assert_ptr_nonnull(strstr(style, "table{max-width:100%}"));
    /* The name's cell: that class, the name cut after 1,000 characters. */
    const char *cell = strstr(page, "<td class=\"name\">xxxx");
    ck_assert_ptr_nonnull(cell);
    ck_assert_int_eq((int)strspn(cell + 17, "x"), 1000);
    ck_assert(strncmp(cell + 17 + 1000, "...</td>", 8) == 0);
    free(page);
    t_rmdir(dir);
}
END_TEST

/* A file past the size limit is refused before it is read (a sparse file:
 * nothing of it is read), naming the file, its size and the limit; a
 * report of some megabytes is read whole. */
START_TEST(size_limit_and_large_reports)
{
    char dir[256], r[512], html[512], want[1024];
    t_tmpdir(dir, sizeof dir);
    snprintf(r, sizeof r, "%s/huge.json", dir);
    snprintf(html, sizeof html, "%s/page.html", dir);
    ck_assert_int_eq(t_write_file(html, "previous page", 13), 0);
    int fd = open(r, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)(256 << 20) + 1), 0);
    close(fd);
    snprintf(want, sizeof want, "numapin report: %s is too big for a numapin report: 268435457 "
             "bytes, and a report has at most 256 MiB (268435456 bytes", r);
    char *args[] = {r, "--html", html, NULL};
    refused_args(args, 1, html, want);

    /* 20,000 threads, 5 MB or so: every one on the page. */
    enum { N = 20000 };
    snprintf(r, sizeof r, "%s/large.json", dir);
    FILE *f = fopen(r, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "{\"numapin\": 2, \"pid\": 77, \"advice\": [], \"plan\": {\"group\": 0, \"node\": "
               "\"0\", \"cpus\": \"0\", \"mem\": \"preferred:0\"}, \"totals\": {\"placed\": %d}, "
               "\"threads\": [\n", N);
    for (int i = 0; i < N; i++)
        fprintf(f, "%s{\"name\": \"Tier-worker-%d-%0200d\", \"tid\": %d, \"seq\": %d, \"outcome\": "
                   "\"placed\", \"how\": \"start\", \"live\": true, \"cpus\": \"0\", \"mem\": "
                   "\"preferred:0\", \"verified\": true, \"cpu_error\": null, \"mem_error\": null}\n",
                i ? "," : "", i, 0, 10000 + i, i);
    fputs("]}\n", f);
    ck_assert_int_eq(fclose(f), 0);
    struct stat st;
    ck_assert_int_eq(stat(r, &st), 0);
    ck_assert_int_gt(st.st_size, 4 << 20);
    char *err, *ok[] = {r, "--html", html, "--synthetic", "pack:1 numa:1 core:1 pu:1", NULL};
    ck_assert_msg(report(ok, &err) == 0, "%s", err);
    free(err);
    char *page = t_read_file(html, NULL);
    int rows = 0;
    for (const char *p = strstr(page, "<td class=\"name\">Tier-worker-"); p;
         p = strstr(p + 1, "<td class=\"name\">Tier-worker-"))
        rows++;
    ck_assert_int_eq(rows, N);
    snprintf(want, sizeof want, ">Tier-worker-%d-%0200d<", N - 1, 0);
    ck_assert_ptr_nonnull(strstr(page, want));
    free(page);
    t_rmdir(dir);
}
END_TEST

/* What the page reads is checked: a field of the wrong type is named with
 * the type wanted; a version not read is named with those that are; each
 * is one line, exit 1, no page. */
START_TEST(reports_checked_field_by_field)
{
    char dir[256], html[512], p[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(html, sizeof html, "%s/page.html", dir);
    ck_assert_int_eq(t_write_file(html, "previous page", 13), 0);
    static const struct {
        const char *json, *want;
    } c[] = {
        {"{\"numapin\":1,\"pid\":1,\"plan\":{\"group\":\"x\"},\"totals\":{},\"threads\":[]}",
         "is not a numapin report: \"plan.group\" must be an integer, not a string"},
        {"{\"numapin\":1,\"pid\":1,\"plan\":{\"group\":0},\"totals\":{},\"threads\":\"no\"}",
         "is not a numapin report: \"threads\" must be an array, not a string"},
        {"{\"numapin\":1,\"pid\":1,\"plan\":{\"group\":0},\"threads\":[]}",
         "is not a numapin report: \"totals\" is missing (an object)"},
        {"{\"numapin\":1,\"pid\":\"1\",\"plan\":{\"group\":0},\"totals\":{},\"threads\":[]}",
         "is not a numapin report: \"pid\" must be an integer, not a string"},
        {"{\"numapin\":1,\"pid\":0,\"plan\":{\"group\":0},\"totals\":{},\"threads\":[]}",
         "is not a numapin report: \"pid\" must be a process id from 1 to"},
        {"{\"numapin\":1,\"pid\":1,\"plan\":{\"group\":-1},\"totals\":{},\"threads\":[]}",
         "is not a numapin report: \"plan.group\" must be a group from 0 to 4095, not -1"},
        {"{\"numapin\":1,\"pid\":1,\"plan\":{\"group\":0,\"cpus\":3},\"totals\":{},\"threads\":[]}",
         "is not a numapin report: \"plan.cpus\" must be a string or null, not an integer"},
        {"{\"numapin\":1,\"pid\":1,\"plan\":{\"group\":0},\"totals\":{\"placed\":1.5},\"threads\":[]}",
         "is not a numapin report: \"totals.placed\" must be an integer, not a number with a "
         "fraction"},
        {"{\"numapin\":1,\"pid\":1,\"plan\":{\"group\":0},\"totals\":{},\"threads\":[7]}",
         "is not a numapin report: \"threads[0]\" must be an object, not an integer"},
        {"{\"numapin\":1,\"pid\":1,\"plan\":{\"group\":0},\"totals\":{},\"threads\":[{\"name\":\"a\"},"
         "{\"name\":\"b\",\"live\":\"yes\"}]}",
         "is not a numapin report: \"threads[1].live\" must be true or false, not a string"},
        {"{\"numapin\":1,\"pid\":1,\"plan\":{\"group\":0},\"totals\":{},\"threads\":[{\"tid\":1}]}",
         "is not a numapin report: \"threads[0].name\" is missing (a string)"},
        {"{\"numapin\":2,\"pid\":1,\"plan\":{\"group\":0},\"totals\":{},\"threads\":[]}",
         "is not a numapin report: \"advice\" is missing (an array: report format 2 has it)"},
        {"{\"numapin\":2,\"pid\":1,\"plan\":{\"group\":0},\"totals\":{},\"threads\":[],\"advice\":"
         "[{\"level\":\"error\",\"text\":\"x\"}]}",
         "is not a numapin report: \"advice[0].level\" must be \"info\" or \"warning\", not "
         "\"error\""},
        {"{\"numapin\":2,\"pid\":1,\"plan\":{\"group\":0},\"totals\":{},\"threads\":[],\"advice\":"
         "[{\"level\":\"info\"}]}",
         "is not a numapin report: \"advice[0].text\" is missing (a string)"},
        {"{\"numapin\":5,\"pid\":1,\"plan\":{\"group\":0},\"totals\":{},\"threads\":[]}",
         "is report format 5, which this numapin does not read: it reads formats 1 to 4"},
        {"{\"numapin\":3,\"pid\":1,\"plan\":{\"group\":0},\"totals\":{},\"threads\":[]}",
         "is not a numapin report: \"advice\" is missing (an array: report format 3 has it)"},
        {"{\"numapin\":0}", "is report format 0, which this numapin does not read"},
        {"{\"numapin\":\"2\"}",
         "is not a numapin report: \"numapin\" (the format version) must be an integer, not a string"},
        {"[1, 2]", "is not a numapin report: no \"numapin\" format version"},
    };
    snprintf(p, sizeof p, "%s/r.json", dir);
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        ck_assert_int_eq(t_write_file(p, c[i].json, strlen(c[i].json)), 0);
        char want[1024];
        snprintf(want, sizeof want, "numapin report: %s %s", p, c[i].want);
        char *args[] = {p, "--html", html, NULL};
        refused_args(args, 1, html, want);
    }
    /* The same text with the right types is a page: the checks refuse only
     * what is wrong. */
    static const char good[] = "{\"numapin\":2,\"pid\":1,\"plan\":{\"group\":0,\"cpus\":null},"
                               "\"totals\":{\"placed\":1},\"threads\":[{\"name\":\"b\",\"live\":true,"
                               "\"name_escaped\":\"b\\\\ud800\"}],\"advice\":[{\"level\":\"info\","
                               "\"text\":\"x\"}]}";
    ck_assert_int_eq(t_write_file(p, good, strlen(good)), 0);
    char *err, *args[] = {p, "--html", html, "--synthetic", "pack:1 numa:1 core:1 pu:1", NULL};
    ck_assert_msg(report(args, &err) == 0, "%s", err);
    free(err);
    char *page = t_read_file(html, NULL);
    ck_assert_ptr_nonnull(strstr(page, "<td class=\"extra\">b\\\\ud800</td>"));
    free(page);
    t_rmdir(dir);
}
END_TEST

/* One JVM, one section: the same file given twice (by its path or a hard
 * link), two reports of one process, and an option given twice are each
 * refused in one line. */
START_TEST(duplicates_refused)
{
    char dir[256], html[512], r0[512], r1[512], same_pid[512], hard[512], want[1600];
    t_tmpdir(dir, sizeof dir);
    snprintf(html, sizeof html, "%s/page.html", dir);
    snprintf(r0, sizeof r0, "%s/r0.json", dir);
    snprintf(r1, sizeof r1, "%s/r1.json", dir);
    snprintf(same_pid, sizeof same_pid, "%s/again.json", dir);
    snprintf(hard, sizeof hard, "%s/hard.json", dir);
    ck_assert_int_eq(t_write_file(html, "previous page", 13), 0);
    write_report(r0, 0, "0", "Tier1-worker-1");
    write_report(r1, 1, "1", "Tier2-worker-1");
    write_report(same_pid, 0, "0", "Tier1-worker-1");
    ck_assert_int_eq(link(r1, hard), 0);
    const char *syn = "pack:1 numa:2 core:1 pu:1";

    char *twice[] = {r0, r1, r0, "--html", html, "--synthetic", (char *)syn, NULL};
    snprintf(want, sizeof want, "numapin report: %s and %s are the same report (the same file)",
             r0, r0);
    refused_args(twice, 1, html, want);
    char *linked[] = {r0, r1, hard, "--html", html, "--synthetic", (char *)syn, NULL};
    snprintf(want, sizeof want, "numapin report: %s and %s are the same report (the same file)",
             r1, hard);
    refused_args(linked, 1, html, want);
    char *pids[] = {r0, same_pid, "--html", html, "--synthetic", (char *)syn, NULL};
    snprintf(want, sizeof want, "numapin report: %s and %s are copies of one report (pid 1000)", r0,
             same_pid);
    refused_args(pids, 1, html, want);
    /* Another JVM with the same pid (each in a PID namespace of its own):
     * two sections. */
    char boxed[512], *text = NULL;
    snprintf(boxed, sizeof boxed, "%s/boxed.json", dir);
    write_report(boxed, 1, "1", "Tier2-worker-1");
    ck_assert_ptr_nonnull(text = t_read_file(boxed, NULL));
    char *at = strstr(text, "\"pid\": 1001");
    ck_assert_ptr_nonnull(at);
    at[10] = '0';
    ck_assert_int_eq(t_write_file(boxed, text, strlen(text)), 0);
    free(text);
    char boxed_html[600];
    snprintf(boxed_html, sizeof boxed_html, "%s/boxed.html", dir);
    char *containers[] = {r0, boxed, "--html", boxed_html, "--synthetic", (char *)syn, NULL};
    char *cerr;
    ck_assert_msg(report(containers, &cerr) == 0, "%s", cerr);
    free(cerr);
    char *two = t_read_file(boxed_html, NULL);
    ck_assert_ptr_nonnull(two);
    ck_assert_ptr_nonnull(strstr(two, "numapin: 2 JVMs"));
    free(two);

    char other[512];
    snprintf(other, sizeof other, "%s/other.html", dir);
    char *html2[] = {r0, "--html", other, "--html", html, NULL};
    refused_args(html2, 2, html, "numapin report: --html is given twice: give it once");
    char *syn2[] = {r0, "--html", html, "--synthetic", (char *)syn, "--synthetic", (char *)syn,
                    NULL};
    refused_args(syn2, 2, html, "numapin report: --synthetic is given twice: give it once");
    ck_assert_int_eq(access(other, F_OK), -1);

    /* Each once: the page of two JVMs. */
    char *good[] = {r0, r1, "--html", html, "--synthetic", (char *)syn, NULL};
    char *err;
    ck_assert_msg(report(good, &err) == 0, "%s", err);
    free(err);
    char *page = t_read_file(html, NULL);
    ck_assert_ptr_nonnull(strstr(page, "numapin: 2 JVMs placed"));
    free(page);
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
    tcase_add_test(tc, page_never_written_over_a_report);
    tcase_add_test(tc, names_shown_with_format_characters_written_out);
    tcase_add_test(tc, advice_as_the_report_recorded_it);
    tcase_add_test(tc, long_names_wrap_in_their_column);
    tcase_add_test(tc, size_limit_and_large_reports);
    tcase_add_test(tc, reports_checked_field_by_field);
    tcase_add_test(tc, duplicates_refused);
    suite_add_tcase(s, tc);
    return s;
}
