/* np_log: quoting, line format, level filter, file safety, warn-once. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "np_file.h"
#include "np_log.h"
#include "tests.h"

static void expect_quote(const char *in, const char *want)
{
    char buf[256];
    memset(buf, 'X', sizeof buf);
    size_t n = np_quote(buf, sizeof buf, in);
    ck_assert_msg(strcmp(buf, want) == 0, "np_quote: got %s, want %s", buf, want);
    ck_assert_uint_eq(n, strlen(want));
}

START_TEST(quote)
{
    expect_quote("", "\"\"");
    expect_quote("ForkJoinPool-1-worker-3", "\"ForkJoinPool-1-worker-3\"");
    expect_quote("a\"b", "\"a\\\"b\"");
    expect_quote("a\\b", "\"a\\\\b\"");
    expect_quote("line\nbreak\ttab\r", "\"line\\x0abreak\\x09tab\\x0d\"");
    expect_quote("\x01\x1f", "\"\\x01\\x1f\"");
    expect_quote("del\x7f", "\"del\\x7f\"");
    expect_quote("caf\xc3\xa9", "\"caf\\xc3\\xa9\"");        /* UTF-8 é */
    expect_quote("\xff", "\"\\xff\"");
    expect_quote(" ~", "\" ~\"");                              /* printable edges */
}
END_TEST

START_TEST(quote_truncation)
{
    /* All escapes, so truncation must not cut one in half. */
    const char *s = "\x01\x02\"\\\x03\xfe";
    char full[128];
    size_t flen = np_quote(full, sizeof full, s);
    ck_assert_str_eq(full, "\"\\x01\\x02\\\"\\\\\\x03\\xfe\"");
    for (size_t len = 1; len <= flen + 2; len++) {
        char buf[128];
        memset(buf, 'X', sizeof buf);
        size_t n = np_quote(buf, len, s);
        ck_assert_msg(memchr(buf, '\0', len) != NULL, "len %zu: not terminated", len);
        ck_assert_uint_eq(n, strlen(buf));
        ck_assert_uint_lt(n, len);
        ck_assert_msg(buf[len] == 'X', "len %zu: wrote past the buffer", len);
        if (len > flen) {
            ck_assert_str_eq(buf, full);
            continue;
        }
        if (len >= 3) {
            /* A prefix of the full form cut before an escape, then the
             * closing quote. */
            ck_assert_msg(n >= 2 && buf[0] == '"' && buf[n - 1] == '"', "len %zu: %s", len, buf);
            ck_assert_msg(strncmp(buf, full, n - 1) == 0, "len %zu: %s is no prefix of %s", len,
                          buf, full);
            ck_assert_msg(full[n - 1] == '\\' || n - 1 == flen - 1,
                          "len %zu: %s cuts an escape", len, buf);
        }
    }
    /* A long plain string is cut, and still closed and terminated. */
    char big[300], out[32];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    size_t n = np_quote(out, sizeof out, big);
    ck_assert_uint_lt(n, sizeof out);
    ck_assert_uint_eq(strlen(out), n);
    ck_assert_int_eq(out[0], '"');
    ck_assert_int_eq(out[n - 1], '"');
    ck_assert_uint_ge(n, sizeof out - 6);
    /* len 0 writes nothing. */
    char z = 'X';
    ck_assert_uint_eq(np_quote(&z, 0, "abc"), 0);
    ck_assert_int_eq(z, 'X');
}
END_TEST

START_TEST(level_names)
{
    const char *names[] = {"off", "error", "warning", "info", "debug", "trace"};
    for (int l = NP_LOG_OFF; l <= NP_LOG_TRACE; l++)
        ck_assert_str_eq(np_level_name(l), names[l]);
    ck_assert_ptr_null(np_level_name((enum np_level)6));
    ck_assert_ptr_null(np_level_name((enum np_level)-1));
}
END_TEST

/* Makes a temporary folder (its path in dir) and opens the log at info
 * level on the file `name` in it (its path in path). */
static void log_in_tmp(char dir[static 256], char path[static 512], const char *name)
{
    t_tmpdir(dir, 256);
    snprintf(path, 512, "%s/%s", dir, name);
    np_log_init();
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, path, NULL), 0);
}

/* Checks every line of `text` against the unified-logging shape. */
static int check_lines(const char *text, char lines[][256], int max)
{
    regex_t re;
    ck_assert_int_eq(regcomp(&re, "^\\[[0-9]+\\.[0-9]{3}s\\]\\[(error|warning|info|debug|trace)\\]"
                                  "\\[numapin\\] (.*)$", REG_EXTENDED), 0);
    int n = 0;
    char *copy = strdup(text), *save = NULL;
    ck_assert_msg(text[0] == '\0' || text[strlen(text) - 1] == '\n', "last line unterminated");
    for (char *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        regmatch_t m[3];
        ck_assert_msg(regexec(&re, l, 3, m, 0) == 0, "bad log line: %s", l);
        ck_assert_int_lt(n, max);
        snprintf(lines[n++], 256, "%.*s|%.*s", (int)(m[1].rm_eo - m[1].rm_so), l + m[1].rm_so,
                 (int)(m[2].rm_eo - m[2].rm_so), l + m[2].rm_so);
    }
    free(copy);
    regfree(&re);
    return n;
}

START_TEST(format_and_levels)
{
    char dir[256], path[512];
    log_in_tmp(dir, path, "numapin.log");
    ck_assert(np_log_enabled(NP_LOG_ERROR));
    ck_assert(np_log_enabled(NP_LOG_INFO));
    ck_assert(!np_log_enabled(NP_LOG_DEBUG));
    ck_assert(!np_log_enabled(NP_LOG_OFF));
    np_log(NP_LOG_DEBUG, "hidden %d", 1);
    np_log(NP_LOG_INFO, "hello %d %s", 42, "x");
    np_log(NP_LOG_WARNING, "careful");
    np_log(NP_LOG_ERROR, "broken");
    np_log(NP_LOG_TRACE, "hidden too");
    np_log(NP_LOG_OFF, "never");
    /* Raising the level without a path keeps the file. */
    ck_assert_int_eq(np_log_open(NP_LOG_TRACE, NULL, NULL), 0);
    np_log(NP_LOG_TRACE, "traced");
    np_log(NP_LOG_DEBUG, "debugged");
    ck_assert_int_eq(np_log_open(NP_LOG_OFF, NULL, NULL), 0);
    np_log(NP_LOG_ERROR, "silenced");
    np_log_close();

    char *text = t_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    char lines[16][256];
    int n = check_lines(text, lines, 16);
    ck_assert_msg(n == 5, "%d lines:\n%s", n, text);
    ck_assert_str_eq(lines[0], "info|hello 42 x");
    ck_assert_str_eq(lines[1], "warning|careful");
    ck_assert_str_eq(lines[2], "error|broken");
    ck_assert_str_eq(lines[3], "trace|traced");
    ck_assert_str_eq(lines[4], "debug|debugged");
    /* Uptime counts from np_log_init: well under a minute here. */
    ck_assert_msg(strncmp(text, "[0.", 3) == 0 || strncmp(text, "[1.", 3) == 0, "%s", text);
    free(text);
    t_rmdir(dir);
}
END_TEST

START_TEST(long_line)
{
    char dir[256], path[512];
    log_in_tmp(dir, path, "l.log");
    char *big = malloc(5000);
    memset(big, 'y', 4999);
    big[4999] = '\0';
    np_log(NP_LOG_INFO, "%s", big);
    np_log(NP_LOG_INFO, "after");
    np_log_close();
    free(big);
    size_t len;
    char *text = t_read_file(path, &len);
    ck_assert_ptr_nonnull(text);
    char *nl = strchr(text, '\n');
    ck_assert_ptr_nonnull(nl);
    ck_assert_msg(nl - text < 2048 && nl - text > 1900, "first line is %td bytes", nl - text);
    ck_assert_msg(strncmp(nl - 3, "...", 3) == 0, "truncated line does not end with ...");
    ck_assert_int_eq(t_count_lines(text, "] after"), 1);
    ck_assert_int_eq(t_count_lines(text, "[numapin]"), 2);
    free(text);
    t_rmdir(dir);
}
END_TEST

/* What the test lines say: made into a line by make_test_line. */
struct test_line {
    long tid, n;
    char name[64];
};

static _Atomic(pthread_t) made_on; /* the thread that last made a test line */

static void make_test_line(const void *data, struct np_line *l)
{
    const struct test_line *t = data;
    made_on = pthread_self();
    np_line_add(l, "placed ");
    np_line_quoted(l, t->name);
    np_line_add(l, " tid=");
    np_line_int(l, t->tid);
    np_line_add(l, " n=");
    np_line_int(l, t->n);
    np_line_add(l, " z=");
    np_line_int(l, 0);
}

/* Lines of np_log_later have np_log's shape: header, message, newline.
 * Without the log thread they are made and written at once. */
START_TEST(built_lines)
{
    char dir[256], path[512];
    log_in_tmp(dir, path, "b.log");
    struct test_line t = {4369, -12, "a \"b\"\n"};
    np_log_later(NP_LOG_INFO, make_test_line, &t, sizeof t);
    ck_assert(pthread_equal(made_on, pthread_self()));
    np_log_later(NP_LOG_DEBUG, make_test_line, &t, sizeof t); /* below the level: not written */
    char *text = t_read_file(path, NULL);
    ck_assert_int_eq(t_count_lines(text, "placed"), 1); /* written at once */
    free(text);
    np_log_close();
    text = t_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    char lines[4][256];
    ck_assert_int_eq(check_lines(text, lines, 4), 1);
    ck_assert_str_eq(lines[0], "info|placed \"a \\\"b\\\"\\x0a\" tid=4369 n=-12 z=0");
    free(text);
    t_rmdir(dir);
}
END_TEST

/* A message too long for a line is cut, and the line ends with "...". */
static void make_long_line(const void *data, struct np_line *l)
{
    (void)data;
    for (int i = 0; i < 100; i++)
        np_line_add(l, "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy");
}

START_TEST(later_line_cut)
{
    char dir[256], path[512];
    log_in_tmp(dir, path, "c.log");
    np_log_later(NP_LOG_WARNING, make_long_line, NULL, 0);
    np_log_close();
    char *text = t_read_file(path, NULL);
    ck_assert_ptr_nonnull(text);
    char *end = strchr(text, '\n');
    ck_assert_ptr_nonnull(end);
    ck_assert_msg(strncmp(end - 3, "...", 3) == 0, "a cut line ends with ...");
    struct np_line probe;
    ck_assert_uint_eq((size_t)(end - strstr(text, "] y")) - 2, sizeof probe.text + 3);
    free(text);
    t_rmdir(dir);
}
END_TEST

/* With the log thread, a line is made there, from a copy of its data
 * taken when it was logged. */
START_TEST(later_line_made_by_log_thread)
{
    char dir[256], path[512];
    log_in_tmp(dir, path, "t.log");
    ck_assert_int_eq(np_log_start_writer(), 0);
    made_on = pthread_self();
    struct test_line t = {7, 8, "first"};
    np_log_later(NP_LOG_INFO, make_test_line, &t, sizeof t);
    snprintf(t.name, sizeof t.name, "changed");
    np_log_flush();
    char *text = t_read_file(path, NULL);
    ck_assert_ptr_nonnull(strstr(text, "] placed \"first\" tid=7 n=8 z=0\n"));
    ck_assert_ptr_null(strstr(text, "changed"));
    free(text);
    /* Left to the log thread (no flush), it is made there. */
    made_on = pthread_self();
    np_log_later(NP_LOG_INFO, make_test_line, &t, sizeof t);
    int found = 0;
    for (int tries = 0; tries < 500 && !found; tries++) {
        usleep(10000);
        text = t_read_file(path, NULL);
        found = strstr(text, "] placed \"changed\"") != NULL;
        free(text);
    }
    ck_assert(found);
    ck_assert(!pthread_equal(made_on, pthread_self()));
    np_log_close();
    t_rmdir(dir);
}
END_TEST

struct maker {
    int id, n;
};

/* "line ID I" and dots. */
struct numbered {
    int id, i;
};

static void make_numbered(const void *data, struct np_line *l)
{
    const struct numbered *n = data;
    np_line_add(l, "line ");
    np_line_int(l, n->id);
    np_line_add(l, " ");
    np_line_int(l, n->i);
    np_line_add(l, " ........................................................................"
                   "..........................................................................");
}

static void *make_lines(void *arg)
{
    const struct maker *m = arg;
    for (int i = 0; i < m->n; i++) {
        /* Data padded so that the queue fills and lines are then written
         * by their maker. */
        struct {
            struct numbered n;
            char pad[120];
        } d = {{m->id, i}, {0}};
        np_log_later(NP_LOG_INFO, make_numbered, &d, sizeof d);
    }
    return NULL;
}

/* Counts the lines "line ID I" of each maker in text, checking that each
 * maker's come in order. */
static int count_in_order(const char *text, int makers, int *per)
{
    int total = 0;
    for (int k = 0; k < makers; k++)
        per[k] = 0;
    for (const char *p = text; (p = strstr(p, "] line ")) != NULL; p++) {
        int id, i;
        ck_assert_int_eq(sscanf(p, "] line %d %d", &id, &i), 2);
        ck_assert(id >= 0 && id < makers);
        ck_assert_msg(i == per[id], "maker %d: line %d where %d was next", id, i, per[id]);
        per[id]++;
        total++;
    }
    return total;
}

/* With the log thread: lines of concurrent makers all reach the log, each
 * maker's in order, without a flush; a line written at once comes after
 * the lines its maker queued before it. */
START_TEST(log_thread_keeps_every_line_in_order)
{
    char dir[256], path[512];
    log_in_tmp(dir, path, "w.log");
    ck_assert_int_eq(np_log_start_writer(), 0);
    struct maker m[3] = {{0, 3000}, {1, 3000}, {2, 40}};
    pthread_t t[2];
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(pthread_create(&t[k], NULL, make_lines, &m[k]), 0);
    make_lines(&m[2]);
    np_log(NP_LOG_WARNING, "after the 40");
    for (int k = 0; k < 2; k++)
        ck_assert_int_eq(pthread_join(t[k], NULL), 0);
    /* The log thread writes them all out by itself. */
    int per[3], total = 0;
    for (int tries = 0; tries < 1000 && total < 6040; tries++) {
        char *text = t_read_file(path, NULL);
        total = count_in_order(text, 3, per);
        free(text);
        if (total < 6040)
            usleep(10000);
    }
    ck_assert_int_eq(total, 6040);
    char *text = t_read_file(path, NULL);
    char *warning = strstr(text, "] after the 40\n");
    ck_assert_ptr_nonnull(warning);
    ck_assert_ptr_nonnull(strstr(text, "] line 2 39 "));
    ck_assert(strstr(text, "] line 2 39 ") < warning);
    free(text);
    np_log_close();
    ck_assert_int_eq(np_log_lost(NULL), 0);
    t_rmdir(dir);
}
END_TEST

/* A process that exits with lines still queued writes them at exit(). */
START_TEST(log_thread_lines_written_at_exit)
{
    char dir[256], path[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/x.log", dir);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        np_log_init();
        if (np_log_open(NP_LOG_INFO, path, NULL) != 0 || np_log_start_writer() != 0)
            _exit(3);
        struct maker m = {0, 200};
        make_lines(&m);
        exit(0);
    }
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char *text = t_read_file(path, NULL);
    int per[1];
    ck_assert_int_eq(count_in_order(text, 1, per), 200);
    free(text);
    t_rmdir(dir);
}
END_TEST

/* Queued lines the log does not take are counted as lost, every one.
 * Needs root (a private, full tmpfs of one page). */
START_TEST(log_thread_counts_lost_lines)
{
    if (geteuid() != 0)
        return;
    char dir[256], fs[300], path[400];
    t_tmpdir(dir, sizeof dir);
    snprintf(fs, sizeof fs, "%s/full", dir);
    t_full_tmpfs(fs);
    snprintf(path, sizeof path, "%s/full.log", fs);
    np_log_init();
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, path, NULL), 0);
    ck_assert_int_eq(np_log_start_writer(), 0);
    struct maker m = {0, 10};
    make_lines(&m);
    int err;
    ck_assert_int_eq(np_log_lost(&err), 10);
    ck_assert_int_eq(err, ENOSPC);
    np_log_close();
    umount(fs);
    t_rmdir(dir);
}
END_TEST

START_TEST(file_mode_and_append)
{
    char dir[256], path[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/m.log", dir);
    umask(0); /* the 0600 must come from np_log_open, not the umask */
    np_log_init();
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, path, NULL), 0);
    np_log(NP_LOG_INFO, "one");
    np_log_close();
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_msg((st.st_mode & 07777) == 0600, "log file mode %o, want 600", st.st_mode & 07777);
    /* Reopening appends. */
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, path, NULL), 0);
    np_log(NP_LOG_INFO, "two");
    np_log_close();
    char *text = t_read_file(path, NULL);
    ck_assert_int_eq(t_count_lines(text, "] one"), 1);
    ck_assert_int_eq(t_count_lines(text, "] two"), 1);
    ck_assert_ptr_nonnull(strstr(text, "] one\n"));
    ck_assert(strstr(text, "] one") < strstr(text, "] two"));
    free(text);
    t_rmdir(dir);
}
END_TEST

START_TEST(refuses_symlink)
{
    char dir[256], path[512], target[512], link[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/good.log", dir);
    snprintf(target, sizeof target, "%s/target", dir);
    snprintf(link, sizeof link, "%s/link.log", dir);
    ck_assert_int_eq(symlink(target, link), 0);
    np_log_init();
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, path, NULL), 0);
    errno = 0;
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, link, NULL), -1);
    ck_assert_int_eq(errno, ELOOP);
    ck_assert_int_eq(access(target, F_OK), -1); /* nothing created through it */
    /* A symlink to an existing file is refused too. */
    ck_assert_int_eq(t_write_file(target, "", 0), 0);
    errno = 0;
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, link, NULL), -1);
    ck_assert_int_eq(errno, ELOOP);
    /* The previous destination is kept. */
    np_log(NP_LOG_INFO, "still here");
    np_log_close();
    char *good = t_read_file(path, NULL), *bad = t_read_file(target, NULL);
    ck_assert_int_eq(t_count_lines(good, "] still here"), 1);
    ck_assert_str_eq(bad, "");
    free(good);
    free(bad);
    /* A missing directory: -1, ENOENT. */
    snprintf(path, sizeof path, "%s/no/such/dir.log", dir);
    errno = 0;
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, path, NULL), -1);
    ck_assert_int_eq(errno, ENOENT);
    t_rmdir(dir);
}
END_TEST

START_TEST(fatal_goes_to_stderr_and_file)
{
    char dir[256], path[512], errpath[512];
    t_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/f.log", dir);
    snprintf(errpath, sizeof errpath, "%s/stderr", dir);
    int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
    np_log_init();
    /* Even with logging off, a fatal line reaches both. */
    ck_assert_int_eq(np_log_open(NP_LOG_OFF, path, NULL), 0);
    np_log_fatal("cannot %s", "start");
    np_log_close();
    dup2(saved, STDERR_FILENO);
    close(saved);
    char *e = t_read_file(errpath, NULL), *f = t_read_file(path, NULL);
    char lines[4][256];
    ck_assert_int_eq(check_lines(e, lines, 4), 1);
    ck_assert_str_eq(lines[0], "error|cannot start");
    ck_assert_int_eq(check_lines(f, lines, 4), 1);
    ck_assert_str_eq(lines[0], "error|cannot start");
    free(e);
    free(f);
    t_rmdir(dir);
}
END_TEST

START_TEST(file_path_expansion)
{
    char out[64], want[64];
    snprintf(want, sizeof want, "/tmp/numapin-%d.log", (int)getpid());
    ck_assert_int_eq(np_file_path("/tmp/numapin-%p.log", out, sizeof out), 0);
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(np_file_path("100%%-%p%%", out, sizeof out), 0);
    snprintf(want, sizeof want, "100%%-%d%%", (int)getpid());
    ck_assert_str_eq(out, want);
    ck_assert_int_eq(np_file_path("plain", out, sizeof out), 0);
    ck_assert_str_eq(out, "plain");
    errno = 0;
    ck_assert_int_eq(np_file_path("a%t", out, sizeof out), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(np_file_path("trailing%", out, sizeof out), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(np_file_path("%p", out, 3), -1); /* a pid of 3+ digits does not fit */
    ck_assert_int_eq(errno, ENAMETOOLONG);
    ck_assert_int_eq(np_file_path("abc", out, 3), -1);
    ck_assert_int_eq(np_file_path("ab", out, 3), 0);
}
END_TEST

/* A file opened to be rewritten (a report) is emptied, but only once the
 * checks passed: a link planted to another file leaves it whole. */
START_TEST(file_rewrite)
{
    char dir[256], path[512], other[512], *text;
    t_tmpdir(dir, sizeof dir);
    snprintf(path, sizeof path, "%s/report.json", dir);
    snprintf(other, sizeof other, "%s/precious", dir);
    ck_assert_int_eq(t_write_file(path, "old contents, longer than the new\n", 34), 0);
    int fd = np_file_open(path, false, NULL);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "new\n", 4), 4);
    close(fd);
    ck_assert_str_eq(text = t_read_file(path, NULL), "new\n");
    free(text);
    ck_assert_int_eq(t_write_file(other, "keep me\n", 8), 0);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(link(other, path), 0); /* two links: refused */
    errno = 0;
    ck_assert_int_eq(np_file_open(path, false, NULL), -1);
    ck_assert_int_eq(errno, EMLINK);
    ck_assert_str_eq(text = t_read_file(other, NULL), "keep me\n");
    free(text);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(symlink(other, path), 0); /* a symlink: refused */
    ck_assert_int_eq(np_file_open(path, false, NULL), -1);
    ck_assert_int_eq(errno, ELOOP);
    ck_assert_str_eq(text = t_read_file(other, NULL), "keep me\n");
    free(text);
    unlink(path);
    unlink(other);
    t_rmdir(dir);
}
END_TEST

START_TEST(once)
{
    np_once a = false, b = false;
    ck_assert_int_eq(np_once_level(&a, NP_LOG_WARNING), NP_LOG_WARNING);
    ck_assert_int_eq(np_once_level(&a, NP_LOG_WARNING), NP_LOG_DEBUG);
    ck_assert_int_eq(np_once_level(&a, NP_LOG_WARNING), NP_LOG_DEBUG);
    /* Latches are independent. */
    ck_assert_int_eq(np_once_level(&b, NP_LOG_ERROR), NP_LOG_ERROR);
    ck_assert_int_eq(np_once_level(&b, NP_LOG_ERROR), NP_LOG_DEBUG);
}
END_TEST

Suite *log_suite(void)
{
    Suite *s = suite_create("log");
    TCase *tc = tcase_create("log");
    tcase_add_test(tc, quote);
    tcase_add_test(tc, quote_truncation);
    tcase_add_test(tc, level_names);
    tcase_add_test(tc, format_and_levels);
    tcase_add_test(tc, long_line);
    tcase_add_test(tc, built_lines);
    tcase_add_test(tc, later_line_cut);
    tcase_add_test(tc, later_line_made_by_log_thread);
    tcase_add_test(tc, log_thread_keeps_every_line_in_order);
    tcase_add_test(tc, log_thread_lines_written_at_exit);
    tcase_add_test(tc, log_thread_counts_lost_lines);
    tcase_add_test(tc, file_mode_and_append);
    tcase_add_test(tc, refuses_symlink);
    tcase_add_test(tc, fatal_goes_to_stderr_and_file);
    tcase_add_test(tc, once);
    tcase_add_test(tc, file_path_expansion);
    tcase_add_test(tc, file_rewrite);
    suite_add_tcase(s, tc);
    return s;
}
