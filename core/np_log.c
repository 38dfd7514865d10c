#define _GNU_SOURCE
#include "np_log.h"

#include "np_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const level_names[] = {
    "off", "error", "warning", "info", "debug", "trace",
};

static struct timespec start;
static _Atomic int log_level = NP_LOG_INFO;
static _Atomic int log_fd = STDOUT_FILENO;
static char log_path[4096];          /* the log file, for messages; "" for stdout */
static _Atomic long lines_lost;      /* lines the destination did not take (whole or part) */
static _Atomic int lost_errno;       /* why, the first time */

const char *np_level_name(enum np_level level)
{
    if ((int)level < 0 || (size_t)level >= sizeof level_names / sizeof *level_names)
        return NULL;
    return level_names[level];
}

void np_log_init(void)
{
    clock_gettime(CLOCK_MONOTONIC, &start);
}

int np_log_open(enum np_level level, const char *path, const char **why)
{
    if (why != NULL)
        *why = NULL;
    if (path != NULL) {
        char expanded[4096];
        int fd = np_file_path(path, expanded, sizeof expanded) == 0
                     ? np_file_open(expanded, true, why) : -1;
        if (fd < 0)
            return -1;
        snprintf(log_path, sizeof log_path, "%s", expanded);
        int old = atomic_exchange(&log_fd, fd);
        if (old > STDERR_FILENO)
            close(old);
    }
    atomic_store(&log_level, level);
    return 0;
}

void np_log_to_stderr(enum np_level level)
{
    int old = atomic_exchange(&log_fd, STDERR_FILENO);
    if (old > STDERR_FILENO)
        close(old);
    log_path[0] = '\0';
    atomic_store(&log_level, level);
}

void np_log_close(void)
{
    int old = atomic_exchange(&log_fd, STDOUT_FILENO);
    if (old > STDERR_FILENO)
        close(old);
    log_path[0] = '\0';
}

bool np_log_same_file(const char *path)
{
    int fd = atomic_load(&log_fd);
    return fd > STDERR_FILENO && np_file_same(fd, path);
}

long np_log_lost(int *err)
{
    if (err != NULL)
        *err = atomic_load(&lost_errno);
    return atomic_load(&lines_lost);
}

bool np_log_enabled(enum np_level level)
{
    return level != NP_LOG_OFF && (int)level <= atomic_load(&log_level);
}

/* Milliseconds since np_log_init. */
static long long uptime_ms(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)(now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
}

/* Formats one whole line, truncating (marked by "...") rather than
 * splitting it. */
static size_t format_line(char *buf, size_t len, enum np_level level,
                          const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
static size_t format_line(char *buf, size_t len, enum np_level level,
                          const char *fmt, va_list ap)
{
    long long ms = uptime_ms();
    int n = snprintf(buf, len, "[%lld.%03llds][%s][numapin] ", ms / 1000, ms % 1000,
                     np_level_name(level));
    size_t used = n < 0 ? 0 : (size_t)n;
    int m = vsnprintf(buf + used, len - used, fmt, ap);
    if (m < 0)
        m = 0;
    if (used + (size_t)m >= len - 1) {
        used = len - 5;
        memcpy(buf + used, "...", 3);
        used += 3;
    } else {
        used += (size_t)m;
    }
    buf[used++] = '\n';
    return used;
}

/* Writes the whole line; returns 0, or the errno that stopped it. */
static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

static size_t line(char *buf, size_t len, enum np_level level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static size_t line(char *buf, size_t len, enum np_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = format_line(buf, len, level, fmt, ap);
    va_end(ap);
    return n;
}

/* Writes a line to the log; a line the log does not take is counted, and
 * the first one is told on stderr (the log itself cannot say it). */
static void to_log(const char *buf, size_t len)
{
    int fd = atomic_load(&log_fd);
    int e = write_all(fd, buf, len);
    if (e == 0 || atomic_fetch_add(&lines_lost, 1) > 0)
        return;
    atomic_store(&lost_errno, e);
    char msg[4400];
    size_t n = line(msg, sizeof msg, NP_LOG_WARNING,
                    "cannot write to the log (%s): %s (%s); later lines are lost, and the summary "
                    "comes here too", log_path[0] ? log_path : fd == STDERR_FILENO ? "stderr" : "stdout",
                    strerror(e),
                    np_errno_name(e));
    write_all(STDERR_FILENO, msg, n);
}

static void vlog(enum np_level level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void vlog(enum np_level level, const char *fmt, va_list ap)
{
    if (!np_log_enabled(level))
        return;
    char buf[2048];
    size_t len = format_line(buf, sizeof buf, level, fmt, ap);
    to_log(buf, len);
}

void np_log(enum np_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

void np_log_warning(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(NP_LOG_WARNING, fmt, ap);
    va_end(ap);
}

/* A line on stderr, and in the log file (when there is one) if `file`. */
static void vboth(enum np_level level, bool file, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));
static void vboth(enum np_level level, bool file, const char *fmt, va_list ap)
{
    char buf[2048];
    size_t len = format_line(buf, sizeof buf, level, fmt, ap);
    write_all(STDERR_FILENO, buf, len);
    if (file && atomic_load(&log_fd) > STDERR_FILENO)
        to_log(buf, len);
}

void np_log_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vboth(NP_LOG_ERROR, true, fmt, ap);
    va_end(ap);
}

void np_log_both(enum np_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vboth(level, np_log_enabled(level), fmt, ap);
    va_end(ap);
}

const char *np_errno_name(int e)
{
    const char *n = strerrorname_np(e);
    return n != NULL ? n : "unknown";
}

enum np_level np_once_level(np_once *once, enum np_level level)
{
    return atomic_exchange(once, true) ? NP_LOG_DEBUG : level;
}

size_t np_quote(char *buf, size_t len, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    if (len == 0)
        return 0;
#define PUT(c) do { if (o + 1 < len) buf[o++] = (c); } while (0)
    PUT('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (o + 5 >= len)
            break;
        if (*p == '"' || *p == '\\') {
            PUT('\\');
            PUT(*p);
        } else if (*p < 0x20 || *p >= 0x7f) {
            PUT('\\');
            PUT('x');
            PUT(hex[*p >> 4]);
            PUT(hex[*p & 15]);
        } else {
            PUT(*p);
        }
    }
    PUT('"');
#undef PUT
    buf[o] = '\0';
    return o;
}
