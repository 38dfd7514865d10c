/* The files numapin writes: the log= file and the report= file (np_file,
 * through np_log_open for the log), and the group=auto lock directory and
 * lock files (np_autogroup).  None is reached through a symlink or a hard
 * link planted in a shared directory, none is a FIFO that would block the
 * JVM's start-up, all are owner-only whatever the umask, and log lines are
 * written whole, one write(2) each, from any number of threads.
 *
 * The checks of a file or directory owned by another user need root (to
 * chown); without it they pass with a note on stdout. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "np_autogroup.h"
#include "np_file.h"
#include "np_log.h"
#include "tests.h"

#define NOBODY 65534

static char root[256];

static void make_root(void)
{
    t_tmpdir(root, sizeof root);
    np_log_init();
}

static void remove_root(void)
{
    t_rmdir(root);
}

static const char *in_root(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", root, name);
    return buf;
}

static void write_text(const char *path, const char *text)
{
    ck_assert_msg(t_write_file(path, text, strlen(text)) == 0, "cannot write %s: %s", path,
                  strerror(errno));
}

/* The file holds exactly `text`. */
static void expect_text(const char *path, const char *text, const char *what)
{
    char *got = t_read_file(path, NULL);
    ck_assert_msg(got != NULL && strcmp(got, text) == 0, "%s: %s holds '%s', not '%s'", what, path,
                  got != NULL ? got : "(unreadable)", text);
    free(got);
}

/* Both ways numapin opens a file it writes refuse `path` with errno
 * `want`: as the log file (np_log_open, appending) and as the report
 * (np_file_out_open, checked at start and written whole at exit).  The
 * report's check does not open the file, so a FIFO is refused as a file
 * that is not regular (EINVAL) rather than one without a reader (ENXIO). */
static void expect_refused(const char *path, int want, const char *what)
{
    errno = 0;
    int rc = np_log_open(NP_LOG_INFO, path, NULL);
    int e = errno;
    np_log_close();
    ck_assert_msg(rc == -1 && e == want, "%s: np_log_open(%s) = %d (%s), want -1 (%s)", what, path,
                  rc, strerror(e), strerror(want));
    errno = 0;
    struct np_file_out f;
    rc = np_file_out_open(&f, path, NULL);
    e = errno;
    if (rc == 0)
        np_file_out_close(&f);
    int report_want = want == ENXIO ? EINVAL : want;
    ck_assert_msg(rc == -1 && e == report_want, "%s: np_file_out_open(%s) = %d (%s), want -1 (%s)",
                  what, path, rc, strerror(e), strerror(report_want));
}

static void expect_opens(const char *path, const char *what)
{
    ck_assert_msg(np_log_open(NP_LOG_INFO, path, NULL) == 0, "%s: np_log_open(%s): %s", what, path,
                  strerror(errno));
    np_log_close();
}

START_TEST(new_log_file_is_owner_only_whatever_the_umask)
{
    char p[1024];
    struct stat st;
    mode_t old = umask(0);
    expect_opens(in_root(p, sizeof p, "new.log"), "a new file");
    ck_assert_msg(lstat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600,
                  "a new log file has mode %o, not 0600", (unsigned)(st.st_mode & 07777));
    struct np_file_out f;
    ck_assert_int_eq(np_file_out_open(&f, in_root(p, sizeof p, "new.json"), NULL), 0);
    ck_assert_int_eq(np_file_out_write(&f, "{}\n", 3), 0);
    np_file_out_close(&f);
    ck_assert_msg(lstat(p, &st) == 0 && (st.st_mode & 07777) == 0600,
                  "a new report file has mode %o, not 0600", (unsigned)(st.st_mode & 07777));
    umask(old);
}
END_TEST

START_TEST(existing_log_file_is_appended_to)
{
    char p[1024];
    write_text(in_root(p, sizeof p, "existing.log"), "kept\n");
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, p, NULL), 0);
    np_log(NP_LOG_INFO, "appended");
    np_log_close();
    char *text = t_read_file(p, NULL);
    ck_assert_msg(text != NULL && strncmp(text, "kept\n[", 6) == 0 &&
                      strstr(text, "] appended\n") != NULL,
                  "an existing log file is not appended to: %s", text ? text : "(unreadable)");
    free(text);
}
END_TEST

START_TEST(symlinks_are_refused_and_their_targets_untouched)
{
    char p[1024], q[1024];
    write_text(in_root(q, sizeof q, "target.log"), "target\n");
    ck_assert_int_eq(symlink(q, in_root(p, sizeof p, "link.log")), 0);
    expect_refused(p, ELOOP, "a symlink to a file");
    expect_text(q, "target\n", "the target of a refused symlink");
    in_root(q, sizeof q, "absent.log");
    ck_assert_int_eq(symlink(q, in_root(p, sizeof p, "dangling.log")), 0);
    expect_refused(p, ELOOP, "a dangling symlink");
    ck_assert_msg(access(q, F_OK) != 0, "a dangling symlink's target was created");
}
END_TEST

/* A FIFO would block the JVM in Agent_OnLoad until a reader came; a
 * directory or a device is no log. */
START_TEST(what_is_not_a_regular_file_is_refused_without_blocking)
{
    char p[1024];
    ck_assert_int_eq(mkfifo(in_root(p, sizeof p, "fifo.log"), 0600), 0);
    alarm(10); /* a blocking open fails the test by the signal, not by a hang */
    expect_refused(p, ENXIO, "a FIFO without a reader");
    int rfd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ck_assert_int_ge(rfd, 0);
    expect_refused(p, EINVAL, "a FIFO with a reader");
    close(rfd);
    alarm(0);
    ck_assert_int_eq(mkdir(in_root(p, sizeof p, "dir.log"), 0700), 0);
    expect_refused(p, EISDIR, "a directory");
    snprintf(p, sizeof p, "%s/", root);
    expect_refused(p, EISDIR, "a path ending in /");
    expect_refused("/dev/null", EINVAL, "a character device");
}
END_TEST

/* A hard link could be planted to any file the JVM's user may write. */
START_TEST(hard_linked_files_are_refused_and_left_whole)
{
    char p[1024], q[1024];
    write_text(in_root(q, sizeof q, "hard-target.log"), "hard\n");
    ck_assert_int_eq(link(q, in_root(p, sizeof p, "hard.log")), 0);
    expect_refused(p, EMLINK, "a file with two hard links");
    expect_text(q, "hard\n", "a hard-linked file");
}
END_TEST

START_TEST(missing_directories_are_errors)
{
    char p[1024];
    expect_refused(in_root(p, sizeof p, "missing/x.log"), ENOENT, "a missing directory");
    write_text(in_root(p, sizeof p, "plain.log"), "");
    expect_refused(in_root(p, sizeof p, "plain.log/x.log"), ENOTDIR, "a file as directory");
}
END_TEST

START_TEST(refused_log_file_keeps_the_previous_one)
{
    char p[1024], q[1024];
    write_text(in_root(q, sizeof q, "target.log"), "");
    ck_assert_int_eq(symlink(q, in_root(p, sizeof p, "link.log")), 0);
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, in_root(q, sizeof q, "first.log"), NULL), 0);
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, p, NULL), -1);
    np_log(NP_LOG_INFO, "still here");
    np_log_close();
    char *text = t_read_file(q, NULL);
    ck_assert_msg(text != NULL && strstr(text, "] still here\n") != NULL,
                  "after a refused log file, lines do not go to the previous one: %s",
                  text ? text : "(unreadable)");
    free(text);
}
END_TEST

/* In a world-writable sticky directory (/tmp) a file owned by another user
 * is refused, as the kernel's fs.protected_regular would; in this user's
 * own directory it is not. */
START_TEST(other_users_file_is_refused_in_a_sticky_directory_only)
{
    if (geteuid() != 0) {
        printf("test_file: not root: other_users_file_is_refused_in_a_sticky_directory_only "
               "checks nothing\n");
        return;
    }
    char sticky[512], p[1024];
    in_root(sticky, sizeof sticky, "sticky");
    ck_assert_int_eq(mkdir(sticky, 0700), 0);
    ck_assert_int_eq(chmod(sticky, 01777), 0);
    snprintf(p, sizeof p, "%s/theirs.log", sticky);
    write_text(p, "theirs\n");
    ck_assert_msg(chown(p, NOBODY, NOBODY) == 0, "chown: %s", strerror(errno));
    expect_refused(p, EACCES, "another user's file in a sticky world-writable directory");
    expect_text(p, "theirs\n", "another user's file");
    snprintf(p, sizeof p, "%s/mine.log", sticky);
    expect_opens(p, "a new file in a sticky directory");
    write_text(in_root(p, sizeof p, "theirs-private.log"), "");
    ck_assert_msg(chown(p, NOBODY, NOBODY) == 0, "chown: %s", strerror(errno));
    expect_opens(p, "another user's file in a private directory");
}
END_TEST

/* Lines from many threads at once: each whole, none mixed, none lost; a
 * line longer than the limit is cut, still one line. */
#define LOG_THREADS 32
#define LOG_LINES 400

static void *log_lines(void *arg)
{
    long id = (long)arg;
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    for (int i = 0; i < LOG_LINES; i++) {
        if (i % 50 == 49)
            np_log(NP_LOG_INFO, "long t=%ld i=%d %s", id, i, big);
        else
            np_log(NP_LOG_INFO, "line t=%ld i=%d end", id, i);
    }
    return NULL;
}

START_TEST(log_lines_of_32_threads_are_whole)
{
    char p[1024];
    ck_assert_int_eq(np_log_open(NP_LOG_INFO, in_root(p, sizeof p, "concurrent.log"), NULL), 0);
    pthread_t th[LOG_THREADS];
    for (long t = 0; t < LOG_THREADS; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, log_lines, (void *)t), 0);
    for (int t = 0; t < LOG_THREADS; t++)
        pthread_join(th[t], NULL);
    np_log_close();
    char *text = t_read_file(p, NULL);
    ck_assert_msg(text != NULL, "cannot read %s", p);
    static char seen[LOG_THREADS][LOG_LINES];
    int lines = 0, bad = 0;
    char first_bad[256] = "";
    for (char *l = text; *l;) {
        char *e = strchr(l, '\n');
        if (e == NULL) {
            bad++;
            break;
        }
        *e = '\0';
        long t;
        int i, n = 0;
        if (sscanf(l, "[%*[0-9.]s][info][numapin] line t=%ld i=%d end%n", &t, &i, &n) == 2 &&
            l[n] == '\0' && t >= 0 && t < LOG_THREADS && i >= 0 && i < LOG_LINES) {
            seen[t][i]++;
        } else if (sscanf(l, "[%*[0-9.]s][info][numapin] long t=%ld i=%d x%n", &t, &i, &n) == 2 &&
                   t >= 0 && t < LOG_THREADS && i >= 0 && i < LOG_LINES && strlen(l) < 2048 &&
                   strcmp(l + strlen(l) - 3, "...") == 0 && strchr(l + n, '[') == NULL) {
            seen[t][i]++;
        } else {
            if (bad++ == 0)
                snprintf(first_bad, sizeof first_bad, "%.200s", l);
        }
        lines++;
        l = e + 1;
    }
    int missing = 0;
    for (int t = 0; t < LOG_THREADS; t++)
        for (int i = 0; i < LOG_LINES; i++)
            missing += seen[t][i] != 1;
    ck_assert_msg(bad == 0 && missing == 0 && lines == LOG_THREADS * LOG_LINES,
                  "%d threads x %d lines: %d lines read, %d torn or mixed (first: %s), %d missing or "
                  "repeated", LOG_THREADS, LOG_LINES, lines, bad, first_bad, missing);
    free(text);
}
END_TEST

/* Claims a group of `groups` in dir; -1 when refused (err says why). */
static int claim(const char *dir, int groups, char *err, size_t len)
{
    int fd = -1;
    int g = np_autogroup_claim(dir, groups, &fd, err, len);
    if (fd >= 0)
        close(fd);
    return g;
}

START_TEST(lock_directory_and_files_are_owner_only)
{
    char dir[512], err[1024], p[1100];
    int fd = -1;
    mode_t old = umask(0);
    in_root(dir, sizeof dir, "locks");
    int g = np_autogroup_claim(dir, 2, &fd, err, sizeof err);
    umask(old);
    ck_assert_msg(g == 0, "claim in a new directory: %d (%s)", g, err);
    struct stat st;
    ck_assert_msg(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700,
                  "the lock directory has mode %o, not 0700", (unsigned)(st.st_mode & 07777));
    snprintf(p, sizeof p, "%s/groups-2.group-0.lock", dir);
    ck_assert_msg(lstat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600,
                  "the lock file has mode %o, not 0600", (unsigned)(st.st_mode & 07777));
    /* The holder inside: its pid, named with its PID namespace. */
    char pid[160], ns[64];
    ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    ns[n > 0 ? n : 0] = '\0';
    snprintf(pid, sizeof pid, "pid=%d pidns=%s\n", (int)getpid(), ns);
    expect_text(p, pid, "the lock file");
    if (fd >= 0)
        close(fd);
}
END_TEST

START_TEST(symlinked_lock_file_is_refused_and_its_target_untouched)
{
    char dir[512], target[512], err[1024], p[1100];
    in_root(dir, sizeof dir, "locks");
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    write_text(in_root(target, sizeof target, "lock-target"), "target\n");
    snprintf(p, sizeof p, "%s/groups-3.group-0.lock", dir);
    ck_assert_int_eq(symlink(target, p), 0);
    ck_assert_int_eq(claim(dir, 3, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "groups-3.group-0.lock") != NULL, "the error names no lock file: %s",
                  err);
    expect_text(target, "target\n", "a symlinked lock file's target");
}
END_TEST

START_TEST(unsafe_lock_directories_are_refused)
{
    char dir[512], real[512], err[1024], p[1100];
    /* A symlink to a directory: nothing created through it. */
    ck_assert_int_eq(mkdir(in_root(real, sizeof real, "real-locks"), 0700), 0);
    ck_assert_int_eq(symlink(real, in_root(dir, sizeof dir, "linked-locks")), 0);
    ck_assert_int_eq(claim(dir, 2, err, sizeof err), -1);
    snprintf(p, sizeof p, "%s/groups-2.group-0.lock", real);
    ck_assert_msg(access(p, F_OK) != 0, "a lock file was created through a symlinked directory");
    /* A directory others may enter. */
    ck_assert_int_eq(mkdir(in_root(dir, sizeof dir, "open-locks"), 0755), 0);
    ck_assert_int_eq(chmod(dir, 0755), 0);
    ck_assert_int_eq(claim(dir, 2, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "no access") != NULL, "a 0755 lock directory: %s", err);
    /* Another user's. */
    if (geteuid() != 0) {
        printf("test_file: not root: another user's lock directory is not checked\n");
        return;
    }
    ck_assert_int_eq(mkdir(in_root(dir, sizeof dir, "their-locks"), 0700), 0);
    ck_assert_msg(chown(dir, NOBODY, NOBODY) == 0, "chown: %s", strerror(errno));
    ck_assert_int_eq(claim(dir, 2, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "owned by") != NULL, "another user's lock directory: %s", err);
}
END_TEST

Suite *file_suite(void)
{
    Suite *s = suite_create("file");
    TCase *tc = tcase_create("written safely");
    tcase_add_checked_fixture(tc, make_root, remove_root);
    tcase_add_test(tc, new_log_file_is_owner_only_whatever_the_umask);
    tcase_add_test(tc, existing_log_file_is_appended_to);
    tcase_add_test(tc, symlinks_are_refused_and_their_targets_untouched);
    tcase_add_test(tc, what_is_not_a_regular_file_is_refused_without_blocking);
    tcase_add_test(tc, hard_linked_files_are_refused_and_left_whole);
    tcase_add_test(tc, missing_directories_are_errors);
    tcase_add_test(tc, refused_log_file_keeps_the_previous_one);
    tcase_add_test(tc, other_users_file_is_refused_in_a_sticky_directory_only);
    tcase_add_test(tc, log_lines_of_32_threads_are_whole);
    tcase_add_test(tc, lock_directory_and_files_are_owner_only);
    tcase_add_test(tc, symlinked_lock_file_is_refused_and_its_target_untouched);
    tcase_add_test(tc, unsafe_lock_directories_are_refused);
    suite_add_tcase(s, tc);
    return s;
}
