#define _GNU_SOURCE
#include "np_log.h"

#include "np_file.h"
#include "np_thread.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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
        np_log_flush(); /* what is queued goes where it was meant to */
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
    np_log_flush();
    int old = atomic_exchange(&log_fd, STDERR_FILENO);
    if (old > STDERR_FILENO)
        close(old);
    log_path[0] = '\0';
    atomic_store(&log_level, level);
}

void np_log_close(void)
{
    np_log_stop_writer();
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
    np_log_flush(); /* the queued lines count too */
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

/* Writes v in decimal at out, without printf; returns the digits written
 * (at most 20). */
static size_t decimal(char *out, unsigned long long v)
{
    char digits[20];
    size_t n = 0;
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0);
    for (size_t i = 0; i < n; i++)
        out[i] = digits[n - 1 - i];
    return n;
}

/* The header of a line made at `ms`, "[12.345s][info][numapin] ", at buf
 * (which has room for 64 bytes); returns its length. */
static size_t header_at(char *buf, enum np_level level, long long ms)
{
    size_t o = 0;
    buf[o++] = '[';
    o += decimal(buf + o, (unsigned long long)(ms / 1000));
    buf[o++] = '.';
    buf[o++] = (char)('0' + ms % 1000 / 100);
    buf[o++] = (char)('0' + ms % 100 / 10);
    buf[o++] = (char)('0' + ms % 10);
    memcpy(buf + o, "s][", 3);
    o += 3;
    const char *name = np_level_name(level);
    size_t k = strlen(name);
    memcpy(buf + o, name, k);
    o += k;
    memcpy(buf + o, "][numapin] ", 11);
    return o + 11;
}

static size_t header(char *buf, enum np_level level)
{
    return header_at(buf, level, uptime_ms());
}

/* Formats one whole line, truncating (marked by "...") rather than
 * splitting it. */
static size_t format_line(char *buf, size_t len, enum np_level level,
                          const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));
static size_t format_line(char *buf, size_t len, enum np_level level,
                          const char *fmt, va_list ap)
{
    size_t used = header(buf, level);
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

/* Writes `lines` whole lines to the log; lines the log does not take are
 * counted, and the first loss is told on stderr (the log itself cannot
 * say it). */
static void to_log(const char *buf, size_t len, int lines)
{
    int fd = atomic_load(&log_fd);
    int e = write_all(fd, buf, len);
    if (e == 0 || atomic_fetch_add(&lines_lost, lines) > 0)
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

/* The log thread (np_log_start_writer) and its queue.  Lines of
 * np_log_later wait in `queue[cur]` under qlock, as their maker, its data
 * and their time; whoever holds wlock writes the queue out (swapping the
 * two buffers, so the lines are made and written outside qlock) before
 * writing any line of its own, so the log keeps the order in which lines
 * were logged.  The thread wakes at the first line queued while it sleeps,
 * writes, then waits BATCH_MS before looking again: lines logged meanwhile
 * go out together, in one write(2), and logging one costs a copy of its
 * data and no system call.  10 ms: at 10,000 placed threads a second, the
 * thread then wakes 100 times a second and uses about 0.3% of a CPU (about
 * 1% with 1 ms). */
#define QUEUE_BYTES (64 * 1024)
#define BATCH_MS 10

/* A line in the queue; its maker's data follows, then padding to 8 bytes. */
struct queued {
    np_line_maker *make;
    long long ms;
    size_t size;
    enum np_level level;
};
#define QUEUED_BYTES(size) ((sizeof(struct queued) + (size) + 7) & ~(size_t)7)

/* Room for one made line: header, message, "...", newline. */
#define LINE_BYTES (64 + sizeof ((struct np_line *)0)->text + 4)

static pthread_mutex_t qlock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t qcond = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;
static _Alignas(16) char queue[2][QUEUE_BYTES];
static int cur;               /* the buffer lines are queued in; under qlock */
static size_t queued;         /* bytes in queue[cur]; under qlock */
static bool writer_on;        /* the thread takes lines; under qlock */
static bool writer_idle;      /* it waits for a line; under qlock */
static bool writer_stop;      /* np_log_stop_writer asked it to end; under qlock */
static pthread_t writer;
static bool writer_joinable;  /* touched only by start and stop */
static char out[QUEUE_BYTES]; /* the queue's lines as made; under wlock */

/* Makes a line of np_log_later at buf (LINE_BYTES); returns its length. */
static size_t make_line(char *buf, enum np_level level, long long ms, np_line_maker *make,
                        const void *data)
{
    struct np_line l;
    np_line_init(&l);
    make(data, &l);
    size_t o = header_at(buf, level, ms);
    memcpy(buf + o, l.text, l.len);
    o += l.len;
    if (l.cut) {
        memcpy(buf + o, "...", 3);
        o += 3;
    }
    buf[o++] = '\n';
    return o;
}

/* Makes and writes out what is queued.  With wlock held. */
static void drain_locked(void)
{
    pthread_mutex_lock(&qlock);
    const char *buf = queue[cur];
    size_t len = queued;
    cur ^= 1;
    queued = 0;
    pthread_mutex_unlock(&qlock);
    size_t o = 0;
    int lines = 0;
    for (size_t at = 0; at < len;) {
        const struct queued *q = (const struct queued *)(const void *)(buf + at);
        if (sizeof out - o < LINE_BYTES) {
            to_log(out, o, lines);
            o = 0;
            lines = 0;
        }
        o += make_line(out + o, q->level, q->ms, q->make, q + 1);
        lines++;
        at += QUEUED_BYTES(q->size);
    }
    if (o > 0)
        to_log(out, o, lines);
}

/* Writes one line now, after whatever is queued. */
static void write_now(const char *buf, size_t len)
{
    pthread_mutex_lock(&wlock);
    drain_locked();
    to_log(buf, len, 1);
    pthread_mutex_unlock(&wlock);
}

void np_log_flush(void)
{
    pthread_mutex_lock(&wlock);
    drain_locked();
    pthread_mutex_unlock(&wlock);
}

void np_log_later(enum np_level level, np_line_maker *make, const void *data, size_t size)
{
    if (!np_log_enabled(level))
        return;
    size_t need = QUEUED_BYTES(size);
    pthread_mutex_lock(&qlock);
    /* The time is read under the lock: queued lines keep its order. */
    long long ms = uptime_ms();
    if (writer_on && need <= QUEUE_BYTES - queued) {
        struct queued *q = (struct queued *)(void *)(queue[cur] + queued);
        q->make = make;
        q->ms = ms;
        q->size = size;
        q->level = level;
        memcpy(q + 1, data, size);
        queued += need;
        if (writer_idle) {
            writer_idle = false;
            pthread_cond_signal(&qcond);
        }
        pthread_mutex_unlock(&qlock);
        return;
    }
    pthread_mutex_unlock(&qlock);
    char buf[LINE_BYTES];
    write_now(buf, make_line(buf, level, ms, make, data));
}

static void *writer_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&qlock);
    for (;;) {
        while (queued == 0 && !writer_stop) {
            writer_idle = true;
            pthread_cond_wait(&qcond, &qlock);
        }
        writer_idle = false;
        if (queued == 0)
            break; /* stopping, and nothing is left */
        pthread_mutex_unlock(&qlock);
        np_log_flush();
        pthread_mutex_lock(&qlock);
        /* The batching window; np_log_stop_writer cuts it short. */
        struct timespec until = np_after_ms(CLOCK_MONOTONIC, BATCH_MS);
        while (!writer_stop && pthread_cond_timedwait(&qcond, &qlock, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&qlock);
    return NULL;
}

/* At exit(): what is still queued goes out. */
static void flush_at_exit(void)
{
    np_log_flush();
}

/* Once: the flush at exit(), and qcond's clock (the window must not
 * follow changes of the wall clock). */
static void once_at_start(void)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) == 0) {
        if (pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0) {
            pthread_cond_destroy(&qcond);
            pthread_cond_init(&qcond, &attr);
        }
        pthread_condattr_destroy(&attr);
    }
    atexit(flush_at_exit);
}

int np_log_start_writer(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (writer_joinable)
        return 0;
    pthread_once(&once, once_at_start);
    writer_stop = false;
    /* The thread takes no signal: the JVM's signals go to its own threads. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&writer, NULL, writer_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0)
        return e;
    pthread_setname_np(writer, "numapin-log");
    writer_joinable = true;
    pthread_mutex_lock(&qlock);
    writer_on = true;
    pthread_mutex_unlock(&qlock);
    return 0;
}

void np_log_stop_writer(void)
{
    if (!writer_joinable)
        return;
    pthread_mutex_lock(&qlock);
    writer_on = false; /* later lines are written by whoever makes them */
    writer_stop = true;
    pthread_cond_signal(&qcond);
    pthread_mutex_unlock(&qlock);
    pthread_join(writer, NULL); /* it ends once the queue is written out */
    writer_joinable = false;
}

static void vlog(enum np_level level, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void vlog(enum np_level level, const char *fmt, va_list ap)
{
    if (!np_log_enabled(level))
        return;
    char buf[2048];
    size_t len = format_line(buf, sizeof buf, level, fmt, ap);
    write_now(buf, len);
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
        write_now(buf, len);
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

void np_line_add(struct np_line *l, const char *s)
{
    size_t k = strlen(s), room = sizeof l->text - l->len;
    if (k > room) {
        k = room;
        l->cut = true;
    }
    memcpy(l->text + l->len, s, k);
    l->len += k;
}

void np_line_int(struct np_line *l, long v)
{
    char s[24];
    size_t n = 0;
    if (v < 0)
        s[n++] = '-';
    n += decimal(s + n, v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v);
    s[n] = '\0';
    np_line_add(l, s);
}

void np_line_quoted(struct np_line *l, const char *s)
{
    char q[512];
    np_quote(q, sizeof q, s);
    np_line_add(l, q);
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
