#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "np_cpulist.h"
#include "np_file.h"
#include "np_options.h"
#include "np_plan.h"

extern char **environ;

int cli_usage_error(const char *cmd, const char *usage, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "numapin %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

int cli_once(const char *cmd, const char *usage, const struct option *longopts, int c,
             bool seen[256])
{
    if (c < 0 || c > 255)
        return 0;
    for (const struct option *o = longopts; o->name != NULL; o++) {
        if (o->flag != NULL || o->val != c)
            continue;
        if (seen[c])
            return cli_usage_error(cmd, usage, "--%s is given twice: give it once", o->name);
        seen[c] = true;
        return 0;
    }
    return 0; /* not an option of the table: getopt's '?' */
}

int cli_mode(const char *cmd, const char *usage, const char *opt, const struct np_names *names,
             const char *v, int *out)
{
    int x = np_names_find(names, v);
    if (x >= 0) {
        *out = x;
        return 0;
    }
    char valid[256];
    return cli_usage_error(cmd, usage, "--%s takes %s, not '%s'", opt,
                           np_names_list(names, 1, valid, sizeof valid), v);
}

int cli_count(const char *cmd, const char *usage, const char *opt, const char *what, long min,
              long max, const char *v, int *out)
{
    if (np_parse_int(v, min, max, out) == 0)
        return 0;
    return cli_usage_error(cmd, usage, "--%s takes %s from %ld to %ld, not '%s'", opt, what, min,
                           max, v);
}

int cli_machine_option(struct cli_machine *m, int c, const char *arg)
{
    switch (c) {
    case 't': m->xml = arg; return 1;
    case 's': m->synthetic = arg; return 1;
    case 'r': m->restrict_cpus = arg; return 1;
    default: return 0;
    }
}

int cli_machine_load(const char *cmd, const char *usage, const struct cli_machine *m,
                     struct np_topo *t)
{
    char err[1024];
    if (m->xml != NULL && m->synthetic != NULL)
        return cli_usage_error(cmd, usage, "--topology and --synthetic exclude each other");
    hwloc_bitmap_t set = NULL;
    if (m->restrict_cpus != NULL) {
        /* CPU numbers up to 2^20 - 1: far beyond any Linux NR_CPUS, and no
         * number that wraps around or range that never ends. */
        set = hwloc_bitmap_alloc();
        if (set == NULL || np_parse_list(m->restrict_cpus, ',', (1u << 20) - 1, set) != 0) {
            hwloc_bitmap_free(set);
            return cli_usage_error(cmd, usage, "--restrict takes a CPU list such as 0-7,16, not '%s'",
                                   m->restrict_cpus);
        }
    }
    if (np_topo_load(t, m->xml, m->synthetic, err, sizeof err) != 0) {
        fprintf(stderr, "numapin: %s\n", err);
        hwloc_bitmap_free(set);
        return 1;
    }
    if (t->warning[0] != '\0')
        fprintf(stderr, "numapin %s: warning: %s\n", cmd, t->warning);
    if (set != NULL && np_topo_restrict(t, set, err, sizeof err) != 0) {
        fprintf(stderr, "numapin: --restrict %s: %s\n", m->restrict_cpus, err);
        hwloc_bitmap_free(set);
        np_topo_destroy(t);
        return 1;
    }
    hwloc_bitmap_free(set);
    return 0;
}

int cli_exe_dir(pid_t pid, char *buf, size_t len)
{
    char link[64], exe[PATH_MAX];
    if (pid == 0)
        snprintf(link, sizeof link, "/proc/self/exe");
    else
        snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL || (size_t)(slash - exe) >= len)
        return -1;
    *slash = '\0';
    snprintf(buf, len, "%s", exe);
    return 0;
}

int cli_write_file(const char *path, const char *data, size_t len, char *err, size_t errlen)
{
    /* As the agent writes its report: np_file_out refuses what np_file
     * refuses (a symbolic link, anything but a regular file, a second
     * hard link, another user's file in /tmp), then writes a temporary
     * file and renames it onto the path. */
    struct np_file_out f;
    const char *why = NULL;
    if (np_file_out_open(&f, path, &why) != 0) {
        int e = errno;
        const char *slash = strrchr(path, '/');
        if (e == ENOENT && why == NULL)
            snprintf(err, errlen, "cannot write %s: the folder %.*s does not exist", path,
                     slash != NULL ? (int)(slash - path) : 1, slash != NULL ? path : ".");
        else
            snprintf(err, errlen, "cannot write %s: %s", path, why != NULL ? why : strerror(e));
        return -1;
    }
    int e = np_file_out_write(&f, data, len);
    np_file_out_close(&f);
    if (e != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(e));
        return -1;
    }
    return 0;
}

int cli_not_input(const char *out, const char *in, char *err, size_t errlen)
{
    struct stat o, i;
    if (stat(out, &o) != 0 || stat(in, &i) != 0)
        return 0;
    if (o.st_dev != i.st_dev || o.st_ino != i.st_ino)
        return 0;
    snprintf(err, errlen, "will not write %s over the input %s (the same file): give another "
                          "output file", out, in);
    return -1;
}

int cli_read_fd(int fd, size_t hint, size_t limit, char **buf, size_t *len)
{
    size_t cap = (hint > 0 && hint < limit ? hint : 8192) + 1, n = 0;
    char *b = malloc(cap);
    *buf = NULL;
    *len = 0;
    for (;;) {
        if (b == NULL) {
            errno = ENOMEM;
            return -1;
        }
        if (n + 1 == cap) {
            if (n > limit) {
                free(b);
                errno = EFBIG;
                return -1;
            }
            size_t ncap = cap * 2 > limit + 2 ? limit + 2 : cap * 2;
            char *m = realloc(b, ncap);
            if (m == NULL)
                free(b);
            b = m;
            cap = ncap;
            continue;
        }
        ssize_t r = read(fd, b + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(b);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    if (n > limit) {
        free(b);
        errno = EFBIG;
        return -1;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}

/* Appends what fd has now to *buf; 0 at end of file, 1 more to come, -1
 * out of memory. */
static int take(int fd, char **buf, size_t *len, size_t *cap)
{
    char chunk[65536];
    ssize_t r = read(fd, chunk, sizeof chunk);
    if (r < 0)
        return errno == EINTR || errno == EAGAIN ? 1 : 0;
    if (r == 0)
        return 0;
    if (*len + (size_t)r + 1 > *cap) {
        size_t ncap = (*len + (size_t)r + 1) * 2;
        char *m = realloc(*buf, ncap);
        if (m == NULL)
            return -1;
        *buf = m;
        *cap = ncap;
    }
    memcpy(*buf + *len, chunk, (size_t)r);
    *len += (size_t)r;
    (*buf)[*len] = '\0';
    return 1;
}

int cli_filter(char *const argv[], const char *input, size_t inlen, int seconds,
               struct cli_filtered *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int in[2] = {-1, -1}, o[2] = {-1, -1}, e[2] = {-1, -1};
    if (pipe2(in, O_CLOEXEC) != 0 || pipe2(o, O_CLOEXEC) != 0 || pipe2(e, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        for (int i = 0; i < 2; i++) {
            if (in[i] >= 0) close(in[i]);
            if (o[i] >= 0) close(o[i]);
            if (e[i] >= 0) close(e[i]);
        }
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&fa, o[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&fa, e[1], STDERR_FILENO);
    pid_t child;
    int rc = posix_spawnp(&child, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(in[0]);
    close(o[1]);
    close(e[1]);
    if (rc != 0) {
        close(in[1]);
        close(o[0]);
        close(e[0]);
        snprintf(err, errlen, "cannot run %s: %s", argv[0], strerror(rc));
        return rc == ENOENT ? -2 : -1;
    }
    fcntl(in[1], F_SETFL, O_NONBLOCK);
    /* A child that exits before reading all its input: EPIPE, not SIGPIPE. */
    struct sigaction ign = {.sa_handler = SIG_IGN}, old_pipe;
    sigaction(SIGPIPE, &ign, &old_pipe);
    size_t sent = 0, ocap = 0, ecap = 0;
    int in_fd = in[1], out_fd = o[0], err_fd = e[0];
    if (inlen == 0) {
        close(in_fd);
        in_fd = -1;
    }
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    bool timed_out = false, oom = false;
    while (out_fd >= 0 || err_fd >= 0) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        long left = seconds * 1000L - ((now.tv_sec - start.tv_sec) * 1000L +
                                       (now.tv_nsec - start.tv_nsec) / 1000000L);
        struct pollfd p[3] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}, {in_fd, POLLOUT, 0}};
        if (left <= 0 || poll(p, 3, (int)left) == 0) {
            timed_out = true;
            break;
        }
        if (in_fd >= 0 && (p[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
            ssize_t w = write(in_fd, input + sent, inlen - sent);
            if (w > 0)
                sent += (size_t)w;
            if ((w < 0 && errno != EAGAIN && errno != EINTR) || sent == inlen) {
                close(in_fd); /* done, or the child stopped reading */
                in_fd = -1;
            }
        }
        int r;
        if (out_fd >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
            if ((r = take(out_fd, &out->out, &out->len, &ocap)) <= 0) {
                oom |= r < 0;
                close(out_fd);
                out_fd = -1;
            }
        }
        if (err_fd >= 0 && (p[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            if ((r = take(err_fd, &out->err, &out->errlen, &ecap)) <= 0) {
                oom |= r < 0;
                close(err_fd);
                err_fd = -1;
            }
        }
        if (oom)
            break;
    }
    if (in_fd >= 0)
        close(in_fd);
    if (out_fd >= 0)
        close(out_fd);
    if (err_fd >= 0)
        close(err_fd);
    if (timed_out || oom)
        kill(child, SIGKILL);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    sigaction(SIGPIPE, &old_pipe, NULL);
    if (timed_out || oom) {
        cli_filtered_free(out);
        if (timed_out)
            snprintf(err, errlen, "%s did not finish in %d s", argv[0], seconds);
        else
            snprintf(err, errlen, "out of memory");
        return -1;
    }
    if ((out->out == NULL && (out->out = strdup("")) == NULL) ||
        (out->err == NULL && (out->err = strdup("")) == NULL)) {
        cli_filtered_free(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    out->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return 0;
}

void cli_filtered_free(struct cli_filtered *f)
{
    free(f->out);
    free(f->err);
    memset(f, 0, sizeof *f);
}

void cli_java_flags(int cpus, char *buf, size_t len)
{
    snprintf(buf, len, "-XX:ActiveProcessorCount=%d", cpus);
}

int cli_group_cpus(int groups, const char *options, int *cpus, char *err, size_t errlen)
{
    struct np_options o;
    if (np_options_parse(options, &o, err, errlen) != 0) {
        np_options_free(&o);
        return -1;
    }
    enum np_domain domain = o.domain;
    np_options_free(&o);
    struct np_topo t;
    if (np_topo_load(&t, NULL, NULL, err, errlen) != 0)
        return -1;
    struct np_plan p;
    int rc = np_plan_build(&t, groups, domain, &p);
    if (rc != 0) {
        snprintf(err, errlen, "cannot plan %d groups: %s", groups,
                 errno == ENOENT ? "this machine has no such domain with usable CPUs" : strerror(errno));
    } else {
        for (int g = 0; g < groups; g++)
            cpus[g] = hwloc_bitmap_weight(p.groups[g].cpus);
        np_plan_free(&p);
    }
    np_topo_destroy(&t);
    return rc;
}
