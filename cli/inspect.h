/* np_inspect: a running process's threads seen from outside, for
 * `numapin check PID`: each thread's name, the CPUs it may run on and their
 * nodes, the CPU it last ran on, and the process's memory on each node.
 *
 * CPUs come from hwloc (hwloc_get_proc_cpubind and
 * hwloc_get_proc_last_cpu_location on each thread); the threads of the
 * process, their kernel names and the memory per node from /proc, which
 * hwloc does not report (the same files ps and numastat read).  Java
 * thread names come from a HotSpot thread dump when the caller has one
 * (np_inspect_parse_dump); the kernel keeps only 15 bytes of a name.
 *
 * Thread ids differ between PID namespaces: the caller sees the process
 * from its own (a host looking into a container), while the JVM's thread
 * dump and numapin's marker use the JVM's.  Each thread's id in the
 * process's own namespace is the last one of the NSpid line of its
 * /proc status; names and the marker are matched by that one.
 *
 * Where the kernel's automatic NUMA balancing samples the process's
 * accesses, each thread's samples by node (np_access) give the share
 * local to the nodes of its CPUs, and all threads' the share local to the
 * group's nodes.
 *
 * When numapin's agent runs in the process, its marker (np_marker.h, an
 * anonymous file found among /proc/PID/fd) says what CPUs it set for each
 * placed thread: a thread whose CPUs differ has drifted. */
#ifndef NP_INSPECT_H
#define NP_INSPECT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "np_access.h"
#include "np_glob.h"
#include "np_marker.h"
#include "np_memory.h"
#include "np_topo.h"

/* A thread named by the JVM. */
/* A thread's name as UTF-8 text, and its escaped form when the text is
 * not the name exactly, else NULL (np_text_from_mutf8: the dump gives
 * names in the JVM's modified UTF-8). */
struct np_named {
    pid_t tid;
    char *name;
    char *escaped;
};

/* Reads HotSpot's thread dump (`jcmd PID Thread.print`): each line
 * starting with a quoted name and holding nid=ID (hexadecimal 0x... up to
 * JDK 19, decimal since) gives a thread.  A thread id given by more than
 * one line is left out (a name cannot forge another thread's record):
 * their count goes to *ambiguous (may be NULL).  Returns how many threads,
 * sorted by id, with *out allocated (np_inspect_named_free), or -1 when
 * memory runs out. */
int np_inspect_parse_dump(const char *text, struct np_named **out, int *ambiguous);
void np_inspect_named_free(struct np_named *n, int count);

struct np_seen {
    pid_t tid;
    pid_t ns_tid;           /* the id in the process's own PID namespace */
    char *name;             /* UTF-8 text (np_text.h) */
    char *escaped;          /* its escaped form, or NULL when name is exact */
    bool jvm_name;          /* from the thread dump, else the kernel's */
    hwloc_bitmap_t cpus;    /* CPUs it may run on */
    hwloc_bitmap_t nodes;   /* their home nodes */
    int last_cpu, last_node; /* -1: unknown */
    hwloc_bitmap_t planned; /* the CPUs numapin set (its marker); NULL: not placed by it */
    struct np_access access; /* the kernel's sampled accesses (np_access) */
};

/* numapin's marker, as np_inspect_collect found it. */
enum np_marker_state {
    NP_MARKER_NONE,         /* no numapin agent (or one that left no marker) */
    NP_MARKER_FOUND,
    NP_MARKER_UNREADABLE,   /* there, but not readable whole (a note says why) */
};

struct np_inspect {
    pid_t pid;
    char command[64];       /* the kernel's name of the process */
    struct np_seen *threads;
    int nthreads;
    long long *node_kb;     /* resident memory per node, by OS index; NULL when unknown */
    int nnode_kb;
    int memory_errno;       /* why node_kb is NULL (EACCES: another user's process), or 0 */
    enum np_marker_state marker_state;
    struct np_marker marker; /* when NP_MARKER_FOUND */
    long long now;          /* when looked at, seconds since the epoch */
    struct np_memory own;   /* its own memory (np_memory: not the files it maps) */
    struct np_access access; /* every thread's sampled accesses, summed */
    int balancing;          /* kernel.numa_balancing, -1 unknown */
};

/* Looks at process `pid` on the machine `t` (loaded as this system).
 * names (may be NULL) are the JVM's names by tid.  Threads that end while
 * being looked at are left out.  Returns 0, or -1 with a message in err. */
int np_inspect_collect(const struct np_topo *t, pid_t pid, const struct np_named *names, int nnames,
                     struct np_inspect *out, char *err, size_t errlen);
void np_inspect_free(struct np_inspect *c);

/* Whether the kernel samples c's accesses at all: false with why (and the
 * fix) in buf; true with buf empty, or with a note when no thread has a
 * sample yet. */
bool np_inspect_access_sampled(const struct np_inspect *c, char *buf, size_t len);

/* The group's access line as check prints it, without its newline:
 * "access_local nodes=N access_local=... access_samples=...
 * access_migrated=..." (with " note=..." when no sample yet), or "access
 * unsampled: WHY"; empty when the process's own memory is unknown. */
void np_inspect_access_line(const struct np_inspect *c, char *buf, size_t len);

/* The same in 80 columns, for the live view and the picture: the group's
 * line without its note, or "access unsampled: CAUSE (numapin check PID
 * says why)", CAUSE the reason's text before its first ':' or '('.
 * Returns whether the kernel samples c's accesses. */
bool np_inspect_access_brief(const struct np_inspect *c, char *buf, size_t len);

/* Prints the threads whose names match `filter`, or all when it is NULL. */
void np_inspect_print(const struct np_inspect *c, const struct np_globs *filter, bool json,
                      FILE *out);

#endif
