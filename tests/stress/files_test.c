/* files_test: the files numapin writes (the log= file, the group=auto lock
 * directory and lock files) are never reached through a symlink, are
 * owner-only, and log lines are written whole, one write(2) each.
 *
 *   files_test        exit 0, or 1 with the failures on stderr
 *
 * Some checks need root (a file or directory owned by another user); they
 * are skipped, with a note, otherwise.  Built plain and with ASan+UBSan by
 * mk/hardening.mk. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "np_autogroup.h"
#include "np_log.h"

#define NOBODY 65534

static int failures, checks;
static char root[256];

#define CHECK(cond, ...)                                                                         \
    do {                                                                                         \
        checks++;                                                                                \
        if (!(cond)) {                                                                           \
            fprintf(stderr, "files_test: FAIL %s:%d: ", __FILE__, __LINE__);                      \
            fprintf(stderr, __VA_ARGS__);                                                        \
            fputc('\n', stderr);                                                                 \
            failures++;                                                                          \
        }                                                                                        \
    } while (0)

static const char *path_in(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", root, name);
    return buf;
}

static char *slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    ssize_t n = buf != NULL ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    if (n < 0) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    if (len != NULL)
        *len = (size_t)n;
    return buf;
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        if (write(fd, text, strlen(text)) < 0)
            perror("files_test: write");
        close(fd);
    }
}

/* np_log_open must fail with `want` (0: succeed), and leave logging on the
 * previous destination. */
static void expect_open(const char *path, int want, const char *what)
{
    errno = 0;
    int rc = np_log_open(NP_LOG_INFO, path);
    int e = errno;
    if (want == 0)
        CHECK(rc == 0, "%s: np_log_open(%s) failed: %s", what, path, strerror(e));
    else
        CHECK(rc == -1 && e == want, "%s: np_log_open(%s) = %d (%s), expected -1 (%s)", what, path,
              rc, strerror(e), strerror(want));
    np_log_close();
}

static void log_file_checks(void)
{
    char p[1024], q[1024];
    mode_t old = umask(0); /* 0600 must come from numapin, not from the umask */
    expect_open(path_in(p, sizeof p, "new.log"), 0, "a new file");
    struct stat st;
    CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600,
          "a new log file has mode %o, not 0600", (unsigned)(st.st_mode & 07777));
    umask(old);

    /* Appends to what is there. */
    write_file(path_in(p, sizeof p, "existing.log"), "kept\n");
    CHECK(np_log_open(NP_LOG_INFO, p) == 0, "existing file: %s", strerror(errno));
    np_log(NP_LOG_INFO, "appended");
    np_log_close();
    char *text = slurp(p, NULL);
    CHECK(text != NULL && strncmp(text, "kept\n[", 6) == 0 && strstr(text, "] appended\n") != NULL,
          "an existing log file is appended to: %s", text ? text : "(unreadable)");
    free(text);

    /* A symlink, to an existing file or to none: refused, target untouched. */
    write_file(path_in(q, sizeof q, "target.log"), "target\n");
    if (symlink(q, path_in(p, sizeof p, "link.log")) == 0)
        expect_open(p, ELOOP, "a symlink to a file");
    text = slurp(q, NULL);
    CHECK(text != NULL && strcmp(text, "target\n") == 0, "the symlink's target was written");
    free(text);
    path_in(q, sizeof q, "absent.log");
    if (symlink(q, path_in(p, sizeof p, "dangling.log")) == 0)
        expect_open(p, ELOOP, "a dangling symlink");
    CHECK(access(q, F_OK) != 0, "a dangling symlink's target was created");

    /* Not a regular file: a FIFO (with or without a reader: the JVM must
     * not block in Agent_OnLoad), a directory, a device. */
    if (mkfifo(path_in(p, sizeof p, "fifo.log"), 0600) == 0) {
        alarm(10); /* a blocking open would hang the test, not fail it */
        expect_open(p, ENXIO, "a FIFO without a reader");
        int rfd = open(p, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        expect_open(p, EINVAL, "a FIFO with a reader");
        if (rfd >= 0)
            close(rfd);
        alarm(0);
    }
    mkdir(path_in(p, sizeof p, "dir.log"), 0700);
    expect_open(p, EISDIR, "a directory");
    snprintf(p, sizeof p, "%s/", root);
    expect_open(p, EISDIR, "a path ending in /");
    expect_open("/dev/null", EINVAL, "a character device");

    /* A hard link: refused (it could be planted to any file the JVM's user
     * may write). */
    write_file(path_in(q, sizeof q, "hard-target.log"), "hard\n");
    if (link(q, path_in(p, sizeof p, "hard.log")) == 0)
        expect_open(p, EMLINK, "a file with two hard links");
    text = slurp(q, NULL);
    CHECK(text != NULL && strcmp(text, "hard\n") == 0, "a hard-linked file was written");
    free(text);

    /* Missing directory, and a directory component that is a file. */
    expect_open(path_in(p, sizeof p, "missing/x.log"), ENOENT, "a missing directory");
    expect_open(path_in(p, sizeof p, "existing.log/x.log"), ENOTDIR, "a file as directory");

    /* A failed open keeps the previous destination. */
    CHECK(np_log_open(NP_LOG_INFO, path_in(q, sizeof q, "first.log")) == 0, "first.log");
    CHECK(np_log_open(NP_LOG_INFO, path_in(p, sizeof p, "link.log")) == -1, "link.log accepted");
    np_log(NP_LOG_INFO, "still here");
    np_log_close();
    text = slurp(q, NULL);
    CHECK(text != NULL && strstr(text, "] still here\n") != NULL,
          "after a refused log file, lines still go to the previous one");
    free(text);

    if (geteuid() != 0) {
        printf("files_test: not root: the other-owner checks are skipped\n");
        return;
    }
    /* In a world-writable sticky directory (/tmp), a file owned by another
     * user is refused, as the kernel's fs.protected_regular would; in
     * this user's own directory it is not. */
    char sticky[512];
    path_in(sticky, sizeof sticky, "sticky");
    mkdir(sticky, 0700);
    chmod(sticky, 01777);
    snprintf(p, sizeof p, "%s/theirs.log", sticky);
    write_file(p, "theirs\n");
    CHECK(chown(p, NOBODY, NOBODY) == 0, "chown: %s", strerror(errno));
    expect_open(p, EACCES, "another user's file in a sticky world-writable directory");
    text = slurp(p, NULL);
    CHECK(text != NULL && strcmp(text, "theirs\n") == 0, "another user's file was written");
    free(text);
    snprintf(p, sizeof p, "%s/mine.log", sticky);
    expect_open(p, 0, "a new file in a sticky directory");
    path_in(p, sizeof p, "theirs-private.log");
    write_file(p, "");
    CHECK(chown(p, NOBODY, NOBODY) == 0, "chown: %s", strerror(errno));
    expect_open(p, 0, "another user's file in a private directory");
}

/* Lines from many threads at once: each whole, none mixed. */
#define LOG_THREADS 32
#define LOG_LINES 400

static void *log_lines(void *arg)
{
    long id = (long)arg;
    char big[3000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    for (int i = 0; i < LOG_LINES; i++) {
        if (i % 50 == 49) /* longer than a line may be: cut, still one line */
            np_log(NP_LOG_INFO, "long t=%ld i=%d %s", id, i, big);
        else
            np_log(NP_LOG_INFO, "line t=%ld i=%d end", id, i);
    }
    return NULL;
}

static void concurrent_lines(void)
{
    char p[1024];
    CHECK(np_log_open(NP_LOG_INFO, path_in(p, sizeof p, "concurrent.log")) == 0, "concurrent.log");
    pthread_t th[LOG_THREADS];
    for (long t = 0; t < LOG_THREADS; t++)
        pthread_create(&th[t], NULL, log_lines, (void *)t);
    for (int t = 0; t < LOG_THREADS; t++)
        pthread_join(th[t], NULL);
    np_log_close();
    size_t len;
    char *text = slurp(p, &len);
    CHECK(text != NULL, "cannot read %s", p);
    if (text == NULL)
        return;
    static char seen[LOG_THREADS][LOG_LINES];
    int lines = 0, bad = 0;
    for (char *l = text; *l; ) {
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
            if (bad < 3)
                fprintf(stderr, "files_test: torn or mixed line: %.200s\n", l);
            bad++;
        }
        lines++;
        l = e + 1;
    }
    int missing = 0;
    for (int t = 0; t < LOG_THREADS; t++)
        for (int i = 0; i < LOG_LINES; i++)
            missing += seen[t][i] != 1;
    CHECK(bad == 0 && missing == 0 && lines == LOG_THREADS * LOG_LINES,
          "%d threads x %d lines: %d lines read, %d malformed, %d missing or repeated", LOG_THREADS,
          LOG_LINES, lines, bad, missing);
    free(text);
}

static void lock_checks(void)
{
    char dir[512], err[1024], p[1100];
    int fd = -1;

    /* Created 0700, lock files 0600, the holder inside: its pid, named
     * with its PID namespace. */
    mode_t old = umask(0);
    path_in(dir, sizeof dir, "locks");
    int g = np_autogroup_claim(dir, 2, &fd, err, sizeof err);
    umask(old);
    CHECK(g == 0, "claim in a new directory: %d (%s)", g, err);
    struct stat st;
    CHECK(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700,
          "the lock directory has mode %o, not 0700", (unsigned)(st.st_mode & 07777));
    snprintf(p, sizeof p, "%s/groups-2.group-0.lock", dir);
    CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600,
          "the lock file has mode %o, not 0600", (unsigned)(st.st_mode & 07777));
    char *text = slurp(p, NULL);
    char pid[160], ns[64];
    ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
    ns[n > 0 ? n : 0] = '\0';
    snprintf(pid, sizeof pid, "pid=%d pidns=%s\n", (int)getpid(), ns);
    CHECK(text != NULL && strcmp(text, pid) == 0, "the lock file holds '%s', not '%s'",
          text ? text : "(unreadable)", pid);
    free(text);
    if (fd >= 0)
        close(fd);

    /* A symlink as lock file: refused, its target untouched. */
    char target[512];
    path_in(target, sizeof target, "lock-target");
    write_file(target, "target\n");
    snprintf(p, sizeof p, "%s/groups-3.group-0.lock", dir);
    if (symlink(target, p) == 0) {
        fd = -1;
        g = np_autogroup_claim(dir, 3, &fd, err, sizeof err);
        CHECK(g == -1 && fd == -1, "a symlinked lock file was used (group %d)", g);
        CHECK(strstr(err, "groups-3.group-0.lock") != NULL, "the error names the lock file: %s", err);
        if (fd >= 0)
            close(fd);
    }
    text = slurp(target, NULL);
    CHECK(text != NULL && strcmp(text, "target\n") == 0, "a symlinked lock file's target was written");
    free(text);

    /* A symlink as lock directory; a directory others may enter. */
    char real[512];
    path_in(real, sizeof real, "real-locks");
    mkdir(real, 0700);
    path_in(dir, sizeof dir, "linked-locks");
    if (symlink(real, dir) == 0) {
        fd = -1;
        g = np_autogroup_claim(dir, 2, &fd, err, sizeof err);
        CHECK(g == -1, "a symlinked lock directory was used (group %d)", g);
        if (fd >= 0)
            close(fd);
    }
    snprintf(p, sizeof p, "%s/groups-2.group-0.lock", real);
    CHECK(access(p, F_OK) != 0, "a lock file was created through a symlinked directory");
    path_in(dir, sizeof dir, "open-locks");
    mkdir(dir, 0755);
    chmod(dir, 0755);
    fd = -1;
    g = np_autogroup_claim(dir, 2, &fd, err, sizeof err);
    CHECK(g == -1 && strstr(err, "no access") != NULL, "a 0755 lock directory was used (group %d): %s",
          g, err);
    if (fd >= 0)
        close(fd);
    if (geteuid() == 0) {
        path_in(dir, sizeof dir, "their-locks");
        mkdir(dir, 0700);
        CHECK(chown(dir, NOBODY, NOBODY) == 0, "chown: %s", strerror(errno));
        fd = -1;
        g = np_autogroup_claim(dir, 2, &fd, err, sizeof err);
        CHECK(g == -1 && strstr(err, "owned by") != NULL, "another user's lock directory was used "
              "(group %d): %s", g, err);
        if (fd >= 0)
            close(fd);
    }
}

/* Removes root and everything in it. */
static void cleanup(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        fprintf(stderr, "files_test: could not remove %s\n", root);
}

int main(void)
{
    snprintf(root, sizeof root, "/tmp/numapin-files-XXXXXX");
    if (mkdtemp(root) == NULL) {
        perror("files_test: mkdtemp");
        return 2;
    }
    np_log_init();
    log_file_checks();
    concurrent_lines();
    lock_checks();
    if (failures == 0)
        cleanup();
    else
        fprintf(stderr, "files_test: files kept in %s\n", root);
    printf("files_test: %d checks, %d failures\n", checks, failures);
    return failures == 0 ? 0 : 1;
}
