/* np_log: numapin's log, in the JVM's unified-logging line format.
 *
 *   [0.123s][info][numapin] placed "ForkJoinPool-1-worker-3" tid=4369 ...
 *
 * Uptime is measured from np_log_init().  Each line is formatted into one
 * buffer and written with a single write(2), so lines from concurrent
 * ThreadStart callbacks never interleave.  Safe to call from any thread.
 *
 * The lines made for every thread (np_log_line) can be left to a log
 * thread (np_log_start_writer): a line made while it waits is written at
 * once, the lines made in the next 10 ms after that together, in one
 * write(2).  The thread they are about then makes no system call for
 * them.  Every other line is written at once, after
 * the queued ones, so the log keeps the order lines were made in. */
#ifndef NP_LOG_H
#define NP_LOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

enum np_level {
    NP_LOG_OFF = 0,
    NP_LOG_ERROR,
    NP_LOG_WARNING,
    NP_LOG_INFO,
    NP_LOG_DEBUG,
    NP_LOG_TRACE,
};

/* Starts the uptime clock.  Logging before np_log_open() goes to stdout at
 * info level. */
void np_log_init(void);

/* Sets the level and destination: path NULL for stdout, else the file is
 * opened for appending, created 0600, never through a symlink
 * (np_file_open).  Returns 0, or -1 with errno set and *why as
 * np_file_open gives it (the previous destination is kept). */
int np_log_open(enum np_level level, const char *path, const char **why);

/* Sends the log to stderr at `level` (a closed file before is closed). */
void np_log_to_stderr(enum np_level level);

/* Closes a log file opened by np_log_open; later lines go to stdout. */
void np_log_close(void);

bool np_log_enabled(enum np_level level);

/* Starts the log thread ("numapin-log", no signals): lines of np_log_line
 * are queued for it from then on, and what is queued at exit() is written
 * then.  Returns 0, or the error of pthread_create (lines are then written
 * at once, as before). */
int np_log_start_writer(void);

/* Stops the log thread, after it wrote what was queued (np_log_close does
 * this); lines of np_log_later are written at once again. */
void np_log_stop_writer(void);

/* Writes out the lines queued for the log thread, now. */
void np_log_flush(void);

/* A line built without printf, for the lines made for every thread: the
 * message after the header, cut (and marked "...") when it is too long. */
struct np_line {
    size_t len;
    bool cut;
    char text[1536];
};
static inline void np_line_init(struct np_line *l)
{
    l->len = 0;
    l->cut = false;
}
void np_line_add(struct np_line *l, const char *s);
void np_line_int(struct np_line *l, long v);
/* Adds s as np_quote writes it. */
void np_line_quoted(struct np_line *l, const char *s);

/* Builds a message into l from `data` alone: it runs later, on whichever
 * thread writes the line out. */
typedef void np_line_maker(const void *data, struct np_line *l);

/* Logs a line at `level` whose message make(data) builds: the line's time
 * is now, and `size` bytes of data are copied.  While the log thread runs
 * the line is queued and made there, so the caller pays for neither the
 * building nor the write; else (or when the queue is full) it is made and
 * written at once.  Lines keep the order in which they were logged. */
void np_log_later(enum np_level level, np_line_maker *make, const void *data, size_t size);

/* True when the log is a file and `path` names it too. */
bool np_log_same_file(const char *path);

/* Lines the log did not take (a full disk, a closed stdout), and in *err
 * (may be NULL) why the first was lost.  The first loss is told on stderr
 * at once. */
long np_log_lost(int *err);

void np_log(enum np_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* np_log at warning level, with the signature of np_log_fatal. */
void np_log_warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes one line in the log format to stderr, whatever the level and
 * destination, and to the log file too when there is one.  For errors that
 * stop the JVM: the user must see them on the terminal. */
void np_log_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The same at another level: on stderr whatever the level, and in the log
 * file when there is one and the level is enabled. */
void np_log_both(enum np_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A "warn once" latch: the first caller gets `level`, every later caller
 * NP_LOG_DEBUG, so a runtime failure hit by every thread is one warning. */
typedef atomic_bool np_once;
enum np_level np_once_level(np_once *once, enum np_level level);

/* Name of a level ("info"), or NULL when out of range. */
const char *np_level_name(enum np_level level);

/* Appends `s` to buf as a double-quoted string: quotes and backslashes are
 * escaped, control and non-ASCII bytes written as \xNN.  Returns the number
 * of bytes written (buf is always NUL-terminated when len > 0). */
size_t np_quote(char *buf, size_t len, const char *s);

/* An errno value's name as the log and the report show it ("EPERM"), or
 * "unknown". */
const char *np_errno_name(int e);

#endif
