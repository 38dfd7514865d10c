/* watch and jvmview: the frames of `numapin check PID --watch` (80
 * columns, plain text off a terminal; on one, in place and within its
 * width and height), names of any width keeping the columns in line and
 * shown so that they cannot drive or reorder the terminal, the agent's
 * options found in a command line or JAVA_TOOL_OPTIONS, and the command
 * itself, in a pipe and on a pseudo-terminal. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include "jvmview.h"
#include "np_text.h"
#include "tests.h"
#include "watch.h"

extern char **environ;

/* The columns a terminal gives n bytes of UTF-8 (wcwidth under C.UTF-8). */
static int columns(const char *s, size_t n)
{
    static locale_t utf8;
    if (utf8 == (locale_t)0)
        utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
    ck_assert_msg(utf8 != (locale_t)0, "no C.UTF-8 locale");
    locale_t old = uselocale(utf8);
    int cols = 0;
    for (size_t i = 0; i < n;) {
        unsigned cp;
        size_t k = np_text_next(s + i, &cp);
        ck_assert_uint_gt(k, 0);
        int w = wcwidth((wchar_t)cp);
        ck_assert_msg(w >= 0, "U+%04X reaches the terminal: %.*s", cp, (int)n, s);
        cols += w;
        i += k;
    }
    uselocale(old);
    return cols;
}

/* The lines of a frame as a terminal shows them: the view's own escapes
 * (home, erase line, erase below) taken out, any other escape failing the
 * test.  Up to max lines into lines[] (malloc'd); their count returned,
 * *erases the lines followed by an erase of the rest of their row, and
 * *full those that fill `cols` columns and are followed by none. */
static int screen_lines(const char *text, int cols, char *lines[], int max, int *erases, int *full)
{
    int n = 0;
    *erases = *full = 0;
    const char *p = text;
    if (strncmp(p, "\033[H", 3) == 0)
        p += 3;
    while (*p != '\0' && strcmp(p, "\033[J") != 0) {
        size_t k = strcspn(p, "\033\n");
        ck_assert_int_lt(n, max);
        lines[n] = strndup(p, k);
        bool erase = strncmp(p + k, "\033[K", 3) == 0;
        if (erase)
            k += 3;
        ck_assert_msg(p[k] == '\n' || p[k] == '\0' || strcmp(p + k, "\033[J") == 0,
                      "an escape not the view's own after: %s", lines[n]);
        int w = columns(lines[n], strlen(lines[n]));
        *erases += erase;
        *full += cols > 0 && w == cols && !erase;
        n++;
        p += k + (p[k] == '\n');
    }
    return n;
}

static void free_lines(char *lines[], int n)
{
    for (int i = 0; i < n; i++)
        free(lines[i]);
}

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
        int cols = columns(l, (size_t)(nl - l));
        ck_assert_msg(cols <= 80, "%d columns: %.*s", cols, (int)(nl - l), l);
        l = nl + 1;
        lines++;
    }
    ck_assert_int_eq(lines, 3 + 1 + 2 + 1 + 1 + 30 + 1); /* header, memory, access, rows, footnote */
    ck_assert_ptr_nonnull(strstr(text, "group 1 of 3: nodes 1, CPUs 1, domain node"));
    ck_assert_ptr_nonnull(strstr(text, "threads 30: 3 tier, 7 other, 20 jvm"));
    /* Memory: now, since the last frame, since the start. */
    ck_assert_ptr_nonnull(strstr(text, "1             10.0         +1.0        +10.0"));
    /* kernel.numa_balancing=0: the kernel samples none, and says so once. */
    ck_assert_ptr_nonnull(strstr(text, "\naccess unsampled: kernel.numa_balancing=0 (numapin check 4242 says why)\n"));
    /* Tier rows first, then the others, then the JVM's; HOME%, migrations. */
    char *t0 = strstr(text, "Tier0-worker-1"), *other = strstr(text, " other "),
         *jvm = strstr(text, " jvm ");
    ck_assert(t0 != NULL && other != NULL && jvm != NULL && t0 < other && other < jvm);
    ck_assert_ptr_nonnull(strstr(text, "   5000 Tier0-worker-1           tier  1               1    1  100%      0     -"));
    ck_assert_ptr_nonnull(strstr(text, "   4995 thread-5*"));
    ck_assert_ptr_nonnull(strstr(text, " 30%"));
    /* The name's escapes written out, cut at a whole one. */
    ck_assert_ptr_nonnull(strstr(text, " evil\\x1b[2J\\x1b]0;title~ other "));
    ck_assert_ptr_nonnull(strstr(text, "0-191         "));
    free(text);
    unfake(&f);
}
END_TEST

/* Where the kernel samples: the group's share on its nodes (the group's
 * line of check, in 80 columns) and each thread's on the nodes of its
 * CPUs, rounded down as check's access_local= is. */
START_TEST(sampled_accesses_per_group_and_thread)
{
    struct fake f;
    fake(&f);
    long long own[2] = {512, 2560}, all[2] = {7, 993}, tier[2] = {1, 199}, other[2] = {50, 50};
    f.c.own.pages = own;
    f.c.own.nnodes = 2;
    f.c.balancing = 1;
    f.c.access = (struct np_access){all, 2, 3, true};
    f.c.threads[0].access = (struct np_access){tier, 2, 1, true};
    f.c.threads[10].access = (struct np_access){other, 2, 0, true};
    struct cli_watch_view v = view_of(&f);
    char *text;
    size_t len;
    ck_assert_int_eq(cli_watch_frame(&v, 0, 0, false, &text, &len), 0);
    /* The group's nodes are those of its threads here (no marker): 0-2. */
    ck_assert_ptr_nonnull(strstr(text, "\naccess_local nodes=0-2 access_local=100.0% access_samples=1000 access_migrated=3\n"));
    char row[128];
    snprintf(row, sizeof row, "%7d %-24s %-5s %-12s %4s %4s %5s %6s %5s\n", 5000, "Tier0-worker-1",
             "tier", "1", "1", "1", "100%", "0", "99%");
    ck_assert_msg(strstr(text, row) != NULL, "no '%s' in:\n%s", row, text);
    ck_assert_ptr_nonnull(strstr(text, "  100%\n")); /* thread 10: all on its nodes 0-2 */
    ck_assert_ptr_nonnull(strstr(text, "     -\n"));  /* threads without a sample */
    free(text);
    f.c.own.pages = NULL;
    memset(&f.c.access, 0, sizeof f.c.access);
    for (int i = 0; i < f.c.nthreads; i++)
        memset(&f.c.threads[i].access, 0, sizeof f.c.threads[i].access);
    unfake(&f);
}
END_TEST

START_TEST(terminal_frame_redraws_in_place_and_fits_the_screen)
{
    struct fake f;
    fake(&f);
    struct cli_watch_view v = view_of(&f);
    char *text, *lines[64];
    size_t len;
    int erases, full;
    ck_assert_int_eq(cli_watch_frame(&v, 60, 15, true, &text, &len), 0);
    ck_assert(strncmp(text, "\033[H", 3) == 0);
    /* 15 lines exactly, the last without a newline (it would scroll) and
     * nothing below to erase. */
    ck_assert_int_eq(screen_lines(text, 60, lines, 64, &erases, &full), 15);
    ck_assert(text[len - 1] != '\n');
    ck_assert_ptr_null(strstr(text, "\033[J"));
    for (int i = 0; i < 15; i++)
        ck_assert_msg(columns(lines[i], strlen(lines[i])) <= 60, "wider than 60: %s", lines[i]);
    /* Each line erases the rest of its row unless it fills it. */
    ck_assert_int_eq(erases + full, 15);
    ck_assert_int_gt(full, 0); /* the title, cut */
    /* The rows that do not fit, counted on the last line. */
    int rows = 0, more = -1;
    for (int i = 0; i < 15; i++)
        rows += strncmp(lines[i], "   4", 4) == 0 || strncmp(lines[i], "   5", 4) == 0;
    ck_assert_int_eq(sscanf(lines[14], "+%d more threads", &more), 1);
    ck_assert_int_eq(rows + more, 30);
    ck_assert_int_gt(rows, 0);
    free_lines(lines, 15);
    free(text);

    /* A frame shorter than the screen: a newline after its last line, and
     * what an earlier frame left below it erased. */
    ck_assert_int_eq(cli_watch_frame(&v, 100, 60, true, &text, &len), 0);
    ck_assert_int_eq(screen_lines(text, 100, lines, 64, &erases, &full), 3 + 4 + 1 + 30 + 1);
    ck_assert(len > 4 && strcmp(text + len - 4, "\n\033[J") == 0);
    free_lines(lines, 3 + 4 + 1 + 30 + 1);
    free(text);
    unfake(&f);
}
END_TEST

/* Whatever the terminal's size, the frame fits it: no line wider than it,
 * no more lines than its rows (nothing scrolls), the title and the plan
 * line kept first, the thread rows left out counted. */
START_TEST(frames_fit_every_terminal_size)
{
    struct fake f;
    fake(&f);
    struct cli_watch_view v = view_of(&f);
    static const int widths[] = {8, 12, 20, 33, 47, 60, 80, 132};
    const char *title = "numapin check 4242 \"java\"  threads 30: 3 tier, 7 other, 20 jvm  (q quits)";
    for (size_t w = 0; w < sizeof widths / sizeof *widths; w++)
        for (int height = 1; height <= 45; height++) {
            int cols = widths[w], erases, full;
            char *text, *lines[64];
            size_t len;
            ck_assert_int_eq(cli_watch_frame(&v, cols, height, true, &text, &len), 0);
            int n = screen_lines(text, cols, lines, 64, &erases, &full);
            ck_assert_msg(n <= height, "%dx%d: %d lines", cols, height, n);
            int rows = 0, more = -1;
            for (int i = 0; i < n; i++) {
                ck_assert_msg(columns(lines[i], strlen(lines[i])) <= cols, "%dx%d: %s", cols, height,
                              lines[i]);
                int tid;
                rows += sscanf(lines[i], "%d ", &tid) == 1 && tid > 4900 && tid <= 5000;
            }
            ck_assert_int_eq(strncmp(lines[0], title, strlen(lines[0])), 0);
            ck_assert_uint_eq(strlen(lines[0]), (size_t)cols < strlen(title) ? (size_t)cols : strlen(title));
            if (height >= 2)
                ck_assert_int_eq(strncmp(lines[1], "group 1 of 3: nodes 1, CPUs 1, domain node",
                                         strlen(lines[1])), 0);
            if (rows < 30 && height >= 3 && cols >= 8) {
                const char *last = lines[n - 1];
                ck_assert_msg(sscanf(last, "+%d more", &more) == 1 ||
                              sscanf(last, "... %d more threads", &more) == 1,
                              "%dx%d: no count of the rows left out: %s", cols, height, last);
                ck_assert_int_eq(rows + more, 30);
            }
            if (height >= 3 + 4 + 1 + 30)
                ck_assert_int_eq(rows, 30);
            if (cols == 20 && height == 5) /* the title, the plan, the frame, the count */
                ck_assert_int_eq(n, 4);
            free_lines(lines, n);
            free(text);
        }
    unfake(&f);
}
END_TEST

/* Names of wide, combining, written-out and broken characters: each row's
 * next column starts at the same display column as an ASCII row's. */
START_TEST(names_of_any_width_keep_the_columns_in_line)
{
    static const char *const names[] = {
        "Tier0-worker-1",
        "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x82\xb9\xe3\x83\xac\xe3\x83\x83\xe3\x83\x89",
        "\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2\xe5\xad\x97"
        "\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2", /* 26 columns: cut */
        "e\xcc\x81te\xcc\x81-combining",
        "zero\xe2\x80\x8bwidth",
        "abc\xe2\x80\xae" "def",
        "esc\x1b[31mred\x1b[0m",
        "unassigned\xcd\xb8",
        "bad\xff\xfe utf8",
        "\xef\xbc\xa1\xef\xbc\xa2 fullwidth tab\there",
    };
    enum { N = sizeof names / sizeof *names };
    struct fake f;
    fake(&f);
    char zalgo[400] = "z";
    for (int i = 0; i < 150; i++)
        strcat(zalgo, "\xcc\x81");
    strcat(zalgo, "algo");
    for (int i = 0; i <= N; i++) {
        free(f.c.threads[i].name);
        f.c.threads[i].name = strdup(i < N ? names[i] : zalgo);
        f.st[i].kind = CLI_TIER;
    }
    struct cli_watch_view v = view_of(&f);
    char *text;
    size_t len;
    ck_assert_int_eq(cli_watch_frame(&v, 0, 0, false, &text, &len), 0);
    int at = -1, rows = 0;
    for (char *l = text; *l != '\0';) {
        char *nl = strchr(l, '\n'), *kind = strstr(l, " tier  ");
        ck_assert_ptr_nonnull(nl);
        if (kind != NULL && kind < nl) {
            int col = columns(l, (size_t)(kind - l));
            if (at < 0)
                at = col;
            ck_assert_msg(col == at, "KIND at column %d, not %d: %.*s", col, at, (int)(nl - l), l);
            rows++;
        }
        l = nl + 1;
    }
    ck_assert_int_eq(rows, N + 1);
    ck_assert_int_eq(at, 7 + 1 + 24);
    /* Cut at a whole wide character, the rest of the cell padded. */
    ck_assert_ptr_nonnull(strstr(text, "\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2 ~ tier "));
    /* Written out: format characters, controls, unprintable and broken. */
    ck_assert_ptr_nonnull(strstr(text, " zero\\u200bwidth "));
    ck_assert_ptr_nonnull(strstr(text, " abc\\u202edef* "));
    ck_assert_ptr_nonnull(strstr(text, " esc\\x1b[31mred\\x1b[0m "));
    ck_assert_ptr_nonnull(strstr(text, " unassigned\\u0378 "));
    ck_assert_ptr_nonnull(strstr(text, " bad\xef\xbf\xbd\xef\xbf\xbd utf8 "));
    ck_assert_ptr_nonnull(strstr(text, " fullwidth tab\\x09h~ tier ")); /* a written-out control is never cut */
    ck_assert_ptr_null(strchr(text, '\033'));
    ck_assert_ptr_null(strchr(text, '\t'));
    ck_assert_ptr_null(strstr(text, "\xe2\x80\xae"));
    ck_assert_ptr_null(strstr(text, "\xe2\x80\x8b"));
    ck_assert_ptr_null(strstr(text, "\xcd\xb8"));
    ck_assert(np_text_is_utf8(text));
    free(text);
    unfake(&f);
}
END_TEST

START_TEST(the_command_is_shown_like_a_name)
{
    struct fake f;
    fake(&f);
    snprintf(f.c.command, sizeof f.c.command, "j\xe2\x80\xae\"av\x1b" "a\xc3");
    struct cli_watch_view v = view_of(&f);
    char *text;
    size_t len;
    ck_assert_int_eq(cli_watch_frame(&v, 80, 24, true, &text, &len), 0);
    ck_assert_ptr_nonnull(strstr(text, "numapin check 4242 \"j\\u202e\\\"av\\x1ba\xef\xbf\xbd\"  threads 30"));
    free(text);
    unfake(&f);
}
END_TEST

/* What stays on the screen when the process exits: the last frame as it
 * was drawn, without escapes, then a newline before any message. */
START_TEST(the_last_frame_ends_on_a_line_of_its_own)
{
    struct fake f;
    fake(&f);
    struct cli_watch_view v = view_of(&f);
    static const int sizes[][2] = {{20, 5}, {80, 24}, {60, 60}, {0, 0}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        char *text, *last, *lines[64];
        size_t len, n;
        int erases, full;
        ck_assert_int_eq(cli_watch_frame(&v, sizes[i][0], sizes[i][1], true, &text, &len), 0);
        ck_assert_int_eq(cli_watch_last(text, len, &last, &n), 0);
        ck_assert_uint_eq(strlen(last), n);
        ck_assert_ptr_null(strchr(last, '\033'));
        ck_assert(n > 0 && last[n - 1] == '\n');
        int k = screen_lines(text, sizes[i][0], lines, 64, &erases, &full);
        const char *p = last;
        for (int j = 0; j < k; j++) {
            ck_assert_int_eq(strncmp(p, lines[j], strlen(lines[j])), 0);
            p += strlen(lines[j]);
            ck_assert_int_eq(*p, '\n');
            p++;
        }
        ck_assert_str_eq(p, "");
        free_lines(lines, k);
        free(last);
        free(text);
    }
    /* A plain frame already ends its last line. */
    char *text, *last;
    size_t len, n;
    ck_assert_int_eq(cli_watch_frame(&v, 0, 0, false, &text, &len), 0);
    ck_assert_int_eq(cli_watch_last(text, len, &last, &n), 0);
    ck_assert_str_eq(last, text);
    free(last);
    free(text);
    unfake(&f);
}
END_TEST

/* The view run on a pseudo-terminal of cols x rows, watching a child of
 * this process that exits when told; `quit` sends q after the third
 * frame, else the child is let exit then.  Returns the view's exit status,
 * its output in *out (malloc'd), the child's pid in *watched, and whether
 * the terminal was given back in canonical mode with echo. */
static int watch_on_a_terminal(int cols, int rows, bool quit, char **out, pid_t *watched,
                               bool *restored)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    ck_assert_int_ge(m, 0);
    ck_assert_int_eq(grantpt(m), 0);
    ck_assert_int_eq(unlockpt(m), 0);
    int s = open(ptsname(m), O_RDWR | O_NOCTTY | O_CLOEXEC);
    ck_assert_int_ge(s, 0);
    struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
    ck_assert_int_eq(ioctl(m, TIOCSWINSZ, &ws), 0);
    int go[2];
    ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        char b;
        close(go[1]);
        while (read(go[0], &b, 1) < 0 && errno == EINTR)
            ;
        _exit(0);
    }
    close(go[0]);
    char pid[24];
    snprintf(pid, sizeof pid, "%d", (int)child);
    char *argv[] = {getenv("NUMAPIN_CLI"), "check", pid, "--kernel-names", "--watch", "0.2", NULL};
    ck_assert_ptr_nonnull(argv[0]);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    for (int fd = 0; fd < 3; fd++)
        posix_spawn_file_actions_adddup2(&fa, s, fd);
    pid_t view;
    ck_assert_int_eq(posix_spawn(&view, argv[0], &fa, NULL, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    int status = -1;
    bool told = false, done = false;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        struct pollfd p = {m, POLLIN, 0};
        int r = poll(&p, 1, done ? 200 : 100);
        if (r > 0 && (p.revents & POLLIN)) {
            if (n + 4096 > cap)
                buf = realloc(buf, cap *= 2);
            ssize_t k = read(m, buf + n, cap - n - 1);
            if (k > 0)
                n += (size_t)k;
        } else if (done) {
            break; /* the view has exited, and all it wrote is read */
        }
        buf[n] = '\0';
        if (!told && strstr(buf, "frame 3,") != NULL) {
            told = true;
            if (quit) {
                ck_assert_int_eq(write(m, "q", 1), 1);
            } else {
                close(go[1]);
                ck_assert_int_eq(waitpid(child, NULL, 0), child);
            }
        }
        if (!done && waitpid(view, &status, WNOHANG) == view)
            done = true;
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > 40) {
            kill(view, SIGKILL);
            ck_abort_msg("the view did not end; its output:\n%s", buf);
        }
    }
    struct termios t;
    ck_assert_int_eq(tcgetattr(s, &t), 0);
    *restored = (t.c_lflag & ICANON) && (t.c_lflag & ECHO);
    if (quit) {
        close(go[1]);
        ck_assert_int_eq(waitpid(child, NULL, 0), child);
    }
    close(s);
    close(m);
    *out = buf;
    *watched = child;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* On a 20x5 terminal every frame the view draws fits it; when the process
 * exits, the last frame stays on the screen, the message on a line of its
 * own after it; q quits and gives the terminal back. */
START_TEST(watch_on_a_terminal_fits_it_and_ends_on_a_fresh_line)
{
    char *out;
    pid_t pid;
    bool restored;
    int rc = watch_on_a_terminal(20, 5, false, &out, &pid, &restored);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    ck_assert(restored);
    /* The terminal's own newlines are CR LF. */
    char *w = out;
    for (char *p = out; *p; p++)
        if (*p != '\r')
            *w++ = *p;
    *w = '\0';
    /* The view ends: the cursor below the frame, shown again, the screen
     * given back. */
    char *leave = strstr(out, "\n\033[?25h\033[?1049l");
    ck_assert_ptr_nonnull(leave);
    *leave = '\0';
    leave += 1 + 6;
    int frames = 0;
    for (char *f = strstr(out, "\033[H"); f != NULL; frames++) {
        char *next = strstr(f + 3, "\033[H"), *lines[64];
        if (next != NULL)
            *next = '\0';
        int erases, full, k = screen_lines(f, 20, lines, 64, &erases, &full);
        ck_assert_msg(k <= 5, "%d lines:\n%s", k, f);
        for (int i = 0; i < k; i++)
            ck_assert_msg(columns(lines[i], strlen(lines[i])) <= 20, "wider than 20: %s", lines[i]);
        ck_assert_msg(strncmp(lines[0], "numapin check ", 14) == 0, "frame %d:\n%s", frames, f);
        free_lines(lines, k);
        if (next != NULL)
            *next = '\033';
        f = next;
    }
    ck_assert_int_ge(frames, 3);
    char *after = leave + 8, msg[80];
    snprintf(msg, sizeof msg, "\nnumapin check: process %d exited\n", (int)pid);
    ck_assert_msg(strlen(after) > strlen(msg) && strcmp(after + strlen(after) - strlen(msg), msg) == 0,
                  "after the view:\n%s", after);
    ck_assert_int_eq(strncmp(after, "numapin check ", 14), 0); /* the last frame */
    ck_assert_ptr_null(strchr(after, '\033'));
    free(out);

    rc = watch_on_a_terminal(80, 24, true, &out, &pid, &restored);
    ck_assert_msg(rc == 0, "exit %d: %s", rc, out);
    ck_assert(restored);
    leave = strstr(out, "\033[?1049l");
    ck_assert_ptr_nonnull(leave);
    ck_assert_str_eq(leave, "\033[?1049l"); /* nothing after: the screen as it was */
    ck_assert_ptr_null(strstr(out, "exited"));
    free(out);
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
    char title[48];
    snprintf(title, sizeof title, "numapin check %s \"", pid);
    ck_assert_int_eq(t_count_lines(out, title), 3);
    /* Each frame gives the kernel's sampled accesses, or says it samples
     * none (a one-node machine, kernel.numa_balancing=0). */
    ck_assert_int_eq(t_count_lines(out, "access unsampled") + t_count_lines(out, "access_local nodes="),
                     3);
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
    tcase_add_test(tc, sampled_accesses_per_group_and_thread);
    tcase_add_test(tc, terminal_frame_redraws_in_place_and_fits_the_screen);
    tcase_add_test(tc, frames_fit_every_terminal_size);
    tcase_add_test(tc, names_of_any_width_keep_the_columns_in_line);
    tcase_add_test(tc, the_command_is_shown_like_a_name);
    tcase_add_test(tc, the_last_frame_ends_on_a_line_of_its_own);
    tcase_add_test(tc, watch_on_a_terminal_fits_it_and_ends_on_a_fresh_line);
    tcase_add_test(tc, watch_count_prints_that_many_plain_frames);
    suite_add_tcase(s, tc);
    return s;
}
