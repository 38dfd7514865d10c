#define _GNU_SOURCE
#include "np_log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const level_names[] = {
    "off", "error", "warning", "info", "debug", "trace",
};

static struct timespec start;
static _Atomic int log_level = NP_LOG_INFO;
static _Atomic int log_fd = STDOUT_FILENO;

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

int np_log_open(enum np_level level, const char *path)
{
    if (path != NULL) {
        /* O_NOFOLLOW: a log path in a shared directory must not be a
         * symlink planted by someone else. */
        int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
                      0600);
        if (fd < 0)
            return -1;
        int old = atomic_exchange(&log_fd, fd);
        if (old != STDOUT_FILENO)
            close(old);
    }
    atomic_store(&log_level, level);
    return 0;
}

void np_log_close(void)
{
    int old = atomic_exchange(&log_fd, STDOUT_FILENO);
    if (old != STDOUT_FILENO)
        close(old);
}

bool np_log_enabled(enum np_level level)
{
    return level != NP_LOG_OFF && (int)level <= atomic_load(&log_level);
}

static double uptime(void)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
}

/* Formats one whole line, truncating (marked by "...") rather than
 * splitting it. */
static size_t format_line(char *buf, size_t len, enum np_level level,
                          const char *fmt, va_list ap)
{
    int n = snprintf(buf, len, "[%.3fs][%s][numapin] ", uptime(),
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

static void write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return; /* nowhere left to report a failing log */
        }
        buf += w;
        len -= (size_t)w;
    }
}

static void vlog(enum np_level level, const char *fmt, va_list ap)
{
    if (!np_log_enabled(level))
        return;
    char buf[2048];
    size_t len = format_line(buf, sizeof buf, level, fmt, ap);
    write_all(atomic_load(&log_fd), buf, len);
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

void np_log_fatal(const char *fmt, ...)
{
    char buf[2048];
    va_list ap;
    va_start(ap, fmt);
    size_t len = format_line(buf, sizeof buf, NP_LOG_ERROR, fmt, ap);
    va_end(ap);
    write_all(STDERR_FILENO, buf, len);
    int fd = atomic_load(&log_fd);
    if (fd != STDOUT_FILENO)
        write_all(fd, buf, len);
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
