/* watch and jvmview: the frames of `numapin check PID --watch` (80
 * columns, plain text off a terminal, in place on one, names that cannot
 * drive the terminal), the agent's options found in a command line or
 * JAVA_TOOL_OPTIONS, and the command itself on this process. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvmview.h"
#include "tests.h"
#include "watch.h"

START_TEST(finds_the_agents_options)
{
    char out[256];
    static const char cmdline[] = "java\0-Xmx1g\0-agentpath:/opt/x/libnumapin.so=group=1,groups=3\0Main";
    ck_assert_int_eq(cli_jvm_find_agent(cmdline, sizeof cmdline - 1, '\0', out, sizeof out), 1);
    ck_assert_str_eq(out, "group=1,groups=3");
    static const char other[] = "java\0-agentpath:/opt/libother.so=group=1\0Main";
    ck_assert_int_eq(cli_jvm_find_agent(other, sizeof other - 1, '\0', out, sizeof out), 0);
    static const char numapin_dir[] = "-agentpath:/numapin/libother.so=x";
    ck_assert_int_eq(cli_jvm_find_agent(numapin_dir, sizeof numapin_dir - 1, '\0', out, sizeof out), 0);
    const char *jto = "-Xss1m  -agentpath:build/libnumapin.so=group=auto,threads=Tier*\t-Dx=y";
    ck_assert_int_eq(cli_jvm_find_agent(jto, strlen(jto), ' ', out, sizeof out), 1);
    ck_assert_str_eq(out, "group=auto,threads=Tier*");
    const char *bare = "-agentpath:/usr/lib/x86_64-linux-gnu/numapin/libnumapin.so";
    ck_assert_int_eq(cli_jvm_find_agent(bare, strlen(bare), ' ', out, sizeof out), 1);
    ck_assert_str_eq(out, "");
    const char *lib = "-agentlib:numapin=group=2 -agentlib:numapinx=group=3";
    ck_assert_int_eq(cli_jvm_find_agent(lib, strlen(lib), ' ', out, sizeof out), 1);
    ck_assert_str_eq(out, "group=2");
}
END_TEST

/* A process of 30 threads: 3 tier, one whose name holds escapes, the
 * JVM's own. */
struct fake {
    struct np_inspect c;
    struct cli_watch_thread st[30];
    long long kb[2], prev[2], first[2];
};

static void fake(struct fake *f)
{
    memset(f, 0, sizeof *f);
    f->c.pid = 4242;
    snprintf(f->c.command, sizeof f->c.command, "java");
    f->c.nthreads = 30;
    f->c.threads = calloc(30, sizeof *f->c.threads);
    for (int i = 0; i < 30; i++) {
        struct np_seen *s = &f->c.threads[i];
        char name[64];
        enum cli_kind k = i < 3 ? CLI_TIER : i < 10 ? CLI_OTHER : CLI_JVM_OWN;
        if (i == 3)
            snprintf(name, sizeof name, "evil\033[2J\033]0;title\a-name-that-is-very-long-indeed");
        else
            snprintf(name, sizeof name, k == CLI_TIER ? "Tier%d-worker-1" : "thread-%d", i);
        s->tid = 5000 - i; /* in no order */
        s->name = strdup(name);
        s->jvm_name = i != 5;
        s->cpus = t_bitmap(k == CLI_TIER ? "1" : "0-191");
        s->nodes = t_bitmap(k == CLI_TIER ? "1" : "0-2");
        s->last_cpu = k == CLI_TIER ? 1 : 100;
        s->last_node = k == CLI_TIER ? 1 : 2;
        f->st[i] = (struct cli_watch_thread){s->tid, k, 10, k == CLI_TIER ? 10 : 3, i};
    }
    f->kb[0] = 2048;
    f->kb[1] = 10240;
    f->prev[1] = 9216;
    f->c.node_kb = f->kb;
    f->c.nnode_kb = 2;
}

static void unfake(struct fake *f)
{
    for (int i = 0; i < f->c.nthreads; i++) {
        free(f->c.threads[i].name);
        hwloc_bitmap_free(f->c.threads[i].cpus);
        hwloc_bitmap_free(f->c.threads[i].nodes);
    }
    free(f->c.threads);
}

static struct cli_watch_view view_of(struct fake *f)
{
    return (struct cli_watch_view){&f->c, f->st, f->prev, f->first, 2, 2,
                                   "group 1 of 3: nodes 1, CPUs 1, domain node", NULL, true, 2.0, 3};
}

START_TEST(plain_frame_fits_80_columns_without_escapes)
{
    struct fake f;
    fake(&f);
    struct cli_watch_view v = view_of(&f);
    char *text;
    size_t len;
    ck_assert_int_eq(cli_watch_frame(&v, 0, 0, false, &text, &len), 0);
    ck_assert_uint_eq(strlen(text), len);
    ck_assert_ptr_null(strchr(text, '\033'));
    ck_assert_ptr_null(strchr(text, '\a'));
    int lines = 0;
    for (char *l = text; *l != '\0';) {
        char *nl = strchr(l, '\n');
        ck_assert_ptr_nonnull(nl);
        int chars = 0;
        for (char *p = l; p < nl; p++)
            chars += ((unsigned char)*p & 0xc0) != 0x80;
        ck_assert_msg(chars <= 80, "%d columns: %.*s", chars, (int)(nl - l), l);
        l = nl + 1;
        lines++;
    }
    ck_assert_int_eq(lines, 3 + 1 + 2 + 1 + 30 + 1); /* header, memory, rows, footnote */
    ck_assert_ptr_nonnull(strstr(text, "group 1 of 3: nodes 1, CPUs 1, domain node"));
    ck_assert_ptr_nonnull(strstr(text, "threads 30: 3 tier, 7 other, 20 jvm"));
    /* Memory: now, since the last frame, since the start. */
    ck_assert_ptr_nonnull(strstr(text, "1             10.0         +1.0        +10.0"));
    /* Tier rows first, then the others, then the JVM's; HOME%, migrations. */
    char *t0 = strstr(text, "Tier0-worker-1"), *other = strstr(text, " other "),
         *jvm = strstr(text, " jvm ");
    ck_assert(t0 != NULL && other != NULL && jvm != NULL && t0 < other && other < jvm);
    ck_assert_ptr_nonnull(strstr(text, "   5000 Tier0-worker-1           tier  1                 1    1  100%      0"));
    ck_assert_ptr_nonnull(strstr(text, "   4995 thread-5*"));
    ck_assert_ptr_nonnull(strstr(text, " 30%"));
    ck_assert_ptr_nonnull(strstr(text, "evil?[2J?]0;title?-name~"));
    ck_assert_ptr_nonnull(strstr(text, "0-191         "));
    free(text);
    unfake(&f);
}
END_TEST

START_TEST(terminal_frame_redraws_in_place_and_fits_the_screen)
{
    struct fake f;
    fake(&f);
    struct cli_watch_view v = view_of(&f);
    char *text;
    size_t len;
    ck_assert_int_eq(cli_watch_frame(&v, 60, 15, true, &text, &len), 0);
    ck_assert(strncmp(text, "\033[H", 3) == 0);
    ck_assert(len > 3 && strcmp(text + len - 3, "\033[J") == 0);
    /* 15 lines exactly, the last without a newline (it would scroll). */
    int lines = 1;
    for (char *p = text; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, 15);
    ck_assert_ptr_nonnull(strstr(text, "more threads"));
    ck_assert(strcmp(text + len - 6, "\033[K\033[J") == 0);
    /* Every line cut at 60 columns before its erase-to-end. */
    for (char *l = text + 3; *l != '\0' && strncmp(l, "\033[J", 3) != 0;) {
        char *end = strstr(l, "\033[K");
        ck_assert_ptr_nonnull(end);
        ck_assert_int_le(end - l, 60);
        l = end + 3 + (end[3] == '\n');
    }
    /* Escapes only the view's own: none from the thread's name. */
    int esc = 0;
    for (char *p = text; *p; p++)
        esc += *p == '\033';
    ck_assert_int_eq(esc, 1 + lines + 1); /* home, one erase a line, erase below */
    free(text);
    unfake(&f);
}
END_TEST

/* On this test process (no JVM: kernel names, nothing sent to it). */
START_TEST(watch_count_prints_that_many_plain_frames)
{
    const char *c = getenv("NUMAPIN_CLI");
    ck_assert_ptr_nonnull(c);
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)getpid());
    char *argv[] = {(char *)c, "check", pid, "--kernel-names", "--watch", "0.2", "--count", "3", NULL};
    char *out, *err;
    int rc = t_run(argv, &out, &err);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, err);
    ck_assert_int_eq(t_count_lines(out, "numapin check "), 3);
    ck_assert_ptr_nonnull(strstr(out, "frame 3, "));
    ck_assert_ptr_null(strchr(out, '\033'));
    ck_assert_ptr_nonnull(strstr(out, "no numapin agent in its command line or JAVA_TOOL_OPTIONS"));
    free(out);
    free(err);

    char *bad[] = {(char *)c, "check", pid, "--watch", "0", NULL};
    ck_assert_int_eq(t_run(bad, &out, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "--watch takes seconds from 0.1 to 3600, not '0'"));
    free(out);
    free(err);
    char *count_alone[] = {(char *)c, "check", pid, "--count", "2", NULL};
    ck_assert_int_eq(t_run(count_alone, &out, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "--count counts the frames of --watch"));
    free(out);
    free(err);
    char *dead[] = {(char *)c, "check", "999999999", "--watch", "--count", "1", NULL};
    ck_assert_int_eq(t_run(dead, &out, &err), 1);
    ck_assert_str_eq(err, "numapin check: no process 999999999\n");
    ck_assert_str_eq(out, "");
    free(out);
    free(err);
    char dir[256], svg[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(svg, sizeof svg, "%s/dead.svg", dir);
    char *dead_svg[] = {(char *)c, "check", "999999999", "--svg", svg, NULL};
    ck_assert_int_eq(t_run(dead_svg, &out, &err), 1);
    ck_assert_str_eq(err, "numapin check: no process 999999999\n");
    ck_assert_int_ne(access(svg, F_OK), 0);
    free(out);
    free(err);
    t_rmdir(dir);
}
END_TEST

Suite *watch_suite(void)
{
    Suite *s = suite_create("watch");
    TCase *tc = tcase_create("watch");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, finds_the_agents_options);
    tcase_add_test(tc, plain_frame_fits_80_columns_without_escapes);
    tcase_add_test(tc, terminal_frame_redraws_in_place_and_fits_the_screen);
    tcase_add_test(tc, watch_count_prints_that_many_plain_frames);
    suite_add_tcase(s, tc);
    return s;
}
