/* np_marker: what the agent set, left where `numapin check` finds it.
 *
 * The agent keeps an anonymous file (memfd_create(2), named
 * NP_MARKER_NAME) open in the JVM, holding the plan and, for each live
 * placed thread, its OS id and the CPUs numapin gave it.  `numapin check
 * PID` finds it among /proc/PID/fd (readable by the process's user and
 * root only) and compares each thread's CPUs with them: a thread whose
 * CPUs differ has drifted (a cpuset rewrite, a taskset).  Nothing is
 * written to a shared directory, nothing survives the JVM, and it is
 * found from any PID or mount namespace; ids in it are the JVM's own
 * (the reader maps them through NSpid).
 *
 * Each refresh writes a new file whole and seals it (F_SEAL_WRITE and the
 * rest), then puts it in place of the old one with dup3(2) on the same
 * descriptor number: a reader gets one version whole, never part of one,
 * and nobody can change it afterwards.  The text:
 *
 *   numapin-marker 2
 *   pid PID
 *   seq N
 *   time UNIX_SECONDS
 *   group G groups N plan P
 *   cpus LIST|none nodes LIST|none
 *   mem MODE                           (the memory policy every thread of
 *                                      the JVM has: a mem= name, none when
 *                                      some have none of numapin's)
 *   drift N
 *   thread TID cpus LIST drift N       (one line per live placed thread)
 *   end N                              (N: seq again)
 *
 * A reader must not trust it: np_marker_parse accepts only this shape,
 * bounded numbers and lists, at most NP_MARKER_MAX_THREADS threads, and
 * version 1's, which has no mem line. */
#ifndef NP_MARKER_H
#define NP_MARKER_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "np_modes.h"

#define NP_MARKER_NAME "numapin-marker"
/* What readlink(2) of /proc/PID/fd/N gives for the marker. */
#define NP_MARKER_LINK "/memfd:" NP_MARKER_NAME " (deleted)"
#define NP_MARKER_VERSION 2
#define NP_MARKER_MAX_THREADS (1 << 20)
#define NP_MARKER_MAX_BYTES (64L << 20)

struct np_marker_thread {
    pid_t tid;            /* in the JVM's PID namespace */
    hwloc_bitmap_t cpus;  /* the CPUs numapin set */
    int drift;            /* times the agent found them otherwise */
};

struct np_marker {
    long pid;             /* in the JVM's PID namespace */
    unsigned long seq;
    long long time;       /* when written, seconds since the epoch */
    int group, groups;
    unsigned plan;        /* re-plans so far */
    hwloc_bitmap_t cpus;  /* the group's CPUs; NULL: the cpuset leaves it none */
    hwloc_bitmap_t nodes; /* its nodes; NULL with cpus */
    int mem;              /* the memory policy of the whole JVM (enum np_mem_mode):
                             NP_MEM_NONE when some threads have none of numapin's;
                             -1 unknown (a version 1 marker) */
    int drift;            /* drift the agent found, in all */
    int nthreads;
    struct np_marker_thread *threads;
};

/* The marker as text, into *text (free()) of *len bytes.  0, or -1 when
 * memory runs out. */
int np_marker_format(const struct np_marker *m, char **text, size_t *len);

/* Reads text (len bytes, need not be NUL-terminated) into *m.  Returns 0,
 * or -1 when it is not a marker of this shape (*m is then empty). */
int np_marker_parse(const char *text, size_t len, struct np_marker *m);

void np_marker_free(struct np_marker *m);

/* The agent's marker file: fd -1 until the first publish. */
struct np_marker_file {
    int fd;
    dev_t dev;
    ino_t ino;
};

/* Publishes text as the marker (see above).  Returns 0, or -1 with errno
 * (memfd_create refused by a seccomp profile, out of memory). */
int np_marker_publish(struct np_marker_file *f, const char *text, size_t len);

/* Closes the marker file: `numapin check` no longer finds it. */
void np_marker_close(struct np_marker_file *f);

#endif
