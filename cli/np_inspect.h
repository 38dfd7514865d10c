/* np_inspect: a running process's threads seen from outside, for
 * `numapin check PID`: each thread's name, the CPUs it may run on and their
 * nodes, the CPU it last ran on, and the process's memory on each node.
 *
 * CPUs come from hwloc (hwloc_get_proc_cpubind and
 * hwloc_get_proc_last_cpu_location on each thread); the threads of the
 * process, their kernel names and the memory per node from /proc, which
 * hwloc does not report (the same files ps and numastat read).  Java
 * thread names come from a HotSpot thread dump when the caller has one
 * (np_inspect_parse_dump); the kernel keeps only 15 bytes of a name. */
#ifndef NP_INSPECT_H
#define NP_INSPECT_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "np_glob.h"
#include "np_memory.h"
#include "np_topo.h"

/* A thread named by the JVM. */
struct np_named {
    pid_t tid;
    char *name;
};

/* Reads HotSpot's thread dump (`jcmd PID Thread.print`): each line
 * starting with a quoted name and holding nid=ID (hexadecimal 0x... up to
 * JDK 19, decimal since) gives a thread.  Returns how many, with *out
 * allocated (np_inspect_named_free), or -1 when memory runs out. */
int np_inspect_parse_dump(const char *text, struct np_named **out);
void np_inspect_named_free(struct np_named *n, int count);

struct np_seen {
    pid_t tid;
    char *name;
    bool jvm_name;          /* from the thread dump, else the kernel's */
    hwloc_bitmap_t cpus;    /* CPUs it may run on */
    hwloc_bitmap_t nodes;   /* their home nodes */
    int last_cpu, last_node; /* -1: unknown */
};

struct np_inspect {
    pid_t pid;
    char command[64];       /* the kernel's name of the process */
    struct np_seen *threads;
    int nthreads;
    long long *node_kb;     /* resident memory per node, by OS index; NULL when unknown */
    int nnode_kb;
    struct np_memory own;   /* its own memory (np_memory: not the files it maps) */
};

/* Looks at process `pid` on the machine `t` (loaded as this system).
 * names (may be NULL) are the JVM's names by tid.  Threads that end while
 * being looked at are left out.  Returns 0, or -1 with a message in err. */
int np_inspect_collect(const struct np_topo *t, pid_t pid, const struct np_named *names, int nnames,
                     struct np_inspect *out, char *err, size_t errlen);
void np_inspect_free(struct np_inspect *c);

/* Prints the threads whose names match `filter`, or all when it is NULL. */
void np_inspect_print(const struct np_inspect *c, const struct np_globs *filter, bool json,
                      FILE *out);

#endif
