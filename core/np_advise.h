/* np_advise: start-up advice, each a concrete fix for a setup that leaves
 * performance on the table.  Pure functions over facts gathered elsewhere,
 * so each is unit-tested; np_agent logs what they return. */
#ifndef NP_ADVISE_H
#define NP_ADVISE_H

#include <hwloc.h>
#include <stdbool.h>
#include <stddef.h>

#include "np_bind.h"
#include "np_topo.h"

/* What the JVM decided before numapin could act, read from the JVM
 * (np_hotspot); -1 where unknown. */
struct np_jvm_facts {
    int use_numa;
    long parallel_gc_threads;
    long conc_gc_threads;
    long ci_compiler_count;
    int cpus_seen;            /* CPUs the JVM sized itself for */
};

/* HotSpot's own sizing rules, applied to n CPUs. */
long np_gc_threads_for(int n);
long np_conc_gc_threads_for(int n);
long np_compiler_threads_for(int n);

/* Each writes one message into buf and returns 1 when there is advice,
 * 0 when there is none. */

/* More placed threads live than the group has CPUs: how to size their
 * pool, named by the kind of pool the thread `name` belongs to
 * (ForkJoinPool, Jetty, Tomcat, Netty, Undertow, an Executors pool), or
 * told generally for any other.  *compute tells a pool meant to keep its
 * threads on CPUs (fork-join, event loops), for which the advice is a
 * warning, from one whose threads mostly wait (request pools), for which it
 * is information. */
int np_advise_oversubscribed(int live, int group_cpus, const char *name, bool *compute, char *buf,
                             size_t len);

/* GC and JIT threads sized for more CPUs than the group has. */
int np_advise_threads(const struct np_jvm_facts *f, int group_cpus, char *buf, size_t len);

/* UseNUMA in effect, and what it means for a group on `group_nodes` of a
 * machine whose usable nodes are `all_nodes` (OS indexes), the whole JVM
 * placed on it (scope=jvm) or only its matching threads. */
int np_advise_use_numa(const struct np_jvm_facts *f, hwloc_const_bitmap_t group_nodes,
                       hwloc_const_bitmap_t all_nodes, bool whole_jvm, char *buf, size_t len);

/* The process started with CPU and memory bindings on different nodes. */
int np_advise_alignment(const struct np_topo *t, const struct np_actual *startup, char *buf,
                        size_t len);

/* Kernel automatic NUMA balancing on (`mode` as read from
 * /proc/sys/kernel/numa_balancing, -1 unknown), for a JVM whose placed
 * threads get policy `mem`, every thread of it with that policy
 * (`whole_jvm`: placed whole at load) or not.  Returns 1
 * with the advice in buf and *warn telling whether it is a warning (the
 * kernel samples and migrates the memory of threads numapin leaves
 * without a policy) or information (what it does and costs under `mem`),
 * or 0. */
int np_advise_numa_balancing(int mode, enum np_mem_mode mem, bool whole_jvm, bool *warn,
                             char *buf, size_t len);

/* Reads /proc/sys/kernel/numa_balancing (or `path`): its value, or -1. */
int np_read_numa_balancing(const char *path);

#endif
