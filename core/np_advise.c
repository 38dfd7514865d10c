#define _GNU_SOURCE
#include "np_advise.h"

#include <numaif.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "np_domains.h"
#include "np_log.h"

static int log2i(int n)
{
    int l = 0;
    while (n > 1) {
        n >>= 1;
        l++;
    }
    return l;
}

long np_gc_threads_for(int n)
{
    return n <= 8 ? n : 8 + (n - 8) * 5 / 8;
}

long np_conc_gc_threads_for(int n)
{
    long c = (np_gc_threads_for(n) + 2) / 4;
    return c > 1 ? c : 1;
}

long np_compiler_threads_for(int n)
{
    /* Tiered compilation's CICompilerCount ergonomics. */
    int l = log2i(n), ll = log2i(l > 1 ? l : 1);
    long c = (long)l * ll * 3 / 2;
    return c > 2 ? c : 2;
}

int np_advise_threads(const struct np_jvm_facts *f, int group_cpus, char *buf, size_t len)
{
    struct { const char *flag; long now, fit; } t[] = {
        {"ParallelGCThreads", f->parallel_gc_threads, np_gc_threads_for(group_cpus)},
        {"ConcGCThreads", f->conc_gc_threads, np_conc_gc_threads_for(group_cpus)},
        {"CICompilerCount", f->ci_compiler_count, np_compiler_threads_for(group_cpus)},
    };
    char fix[256] = "", now[256] = "";
    size_t a = 0, b = 0;
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        if (t[i].now < 0 || t[i].now <= t[i].fit)
            continue;
        a += (size_t)snprintf(fix + a, sizeof fix - a, "%s-XX:%s=%ld", a ? " " : "", t[i].flag,
                              t[i].fit);
        b += (size_t)snprintf(now + b, sizeof now - b, "%s%s=%ld", b ? ", " : "", t[i].flag,
                              t[i].now);
    }
    if (a == 0)
        return 0;
    char seen[64] = "";
    if (f->cpus_seen > 0)
        snprintf(seen, sizeof seen, "the %d CPUs the JVM saw", f->cpus_seen);
    snprintf(buf, len,
             "GC and JIT threads are sized for %s (%s), but this group has %d CPUs: "
             "%s fit the group, or -XX:ActiveProcessorCount=%d sizes all of them to it "
             "(numapin groups passes it; numapin plan --group G --java-flags prints it)",
             seen[0] ? seen : "more CPUs than this group has", now, group_cpus, fix, group_cpus);
    return 1;
}

int np_advise_use_numa(const struct np_jvm_facts *f, hwloc_const_bitmap_t group_nodes,
                       hwloc_const_bitmap_t all_nodes, bool whole_jvm, char *buf, size_t len)
{
    if (f->use_numa < 0)
        return 0;
    char nodes[256];
    hwloc_bitmap_list_snprintf(nodes, sizeof nodes, group_nodes);
    if (f->use_numa == 0) {
        snprintf(buf, len,
                 "UseNUMA is off in this JVM: the heap is not split by node, and each page lands "
                 "where the memory policy of the thread that first touches it says (%s: node %s, "
                 "unless mem=none)", whole_jvm ? "the whole JVM" : "placed threads", nodes);
        return 1;
    }
    if (hwloc_bitmap_isequal(group_nodes, all_nodes)) {
        snprintf(buf, len,
                 "UseNUMA is on in this JVM: HotSpot splits the young generation by node and "
                 "each thread allocates in the part of the node it runs on");
        return 1;
    }
    /* The shares were measured by the QEMU suite (docs/heap.md): the heap
     * of a 3-node machine's group 1 with UseNUMA on. */
    char all[256];
    hwloc_bitmap_list_snprintf(all, sizeof all, all_nodes);
    if (whole_jvm)
        snprintf(buf, len,
                 "UseNUMA is on in this JVM: HotSpot binds parts of the heap to each of nodes %s, "
                 "not only to this group's node %s, and it was too late to turn it off, so much of "
                 "the heap stays remote (measured on 3 nodes: 36%% of a G1 heap and 53%% of a "
                 "Parallel heap on the group's node, all of it without UseNUMA): run this JVM "
                 "with -XX:-UseNUMA", all, nodes);
    else
        snprintf(buf, len,
                 "UseNUMA is on in this JVM: HotSpot binds parts of the heap to each of nodes %s, "
                 "not only to this group's node %s, so much of the heap stays remote (measured on "
                 "3 nodes: 35%% of a G1 heap and 55%% of a Parallel heap on the group's node): "
                 "run this JVM with -XX:-UseNUMA and its memory on its node (scope=jvm, the "
                 "default with groups > 1, or numactl --membind=%s)", all, nodes, nodes);
    return 1;
}

int np_advise_alignment(const struct np_topo *t, const struct np_actual *startup, char *buf,
                        size_t len)
{
    int mode = startup->mem_mode;
    if (!t->thissystem || (mode != MPOL_BIND && mode != MPOL_PREFERRED &&
                           mode != MPOL_PREFERRED_MANY && mode != MPOL_INTERLEAVE) ||
        hwloc_bitmap_iszero(startup->mem_nodes))
        return 0;
    hwloc_bitmap_t cpu_nodes = hwloc_bitmap_alloc();
    if (cpu_nodes == NULL)
        return 0;
    np_topo_home_nodes(t, startup->cpus, cpu_nodes);
    int differ = !hwloc_bitmap_iszero(cpu_nodes) &&
                 !hwloc_bitmap_isequal(cpu_nodes, startup->mem_nodes);
    if (differ) {
        char cpus[512], cnodes[256], policy[256];
        hwloc_bitmap_list_snprintf(cpus, sizeof cpus, startup->cpus);
        hwloc_bitmap_list_snprintf(cnodes, sizeof cnodes, cpu_nodes);
        np_mem_actual_str(policy, sizeof policy, startup);
        snprintf(buf, len,
                 "the JVM was started with CPUs %s (node %s) but memory policy %s: CPU and "
                 "memory bindings on different nodes put memory far from the threads, and "
                 "HotSpot turns UseNUMA off for it; bind both to the same nodes "
                 "(numactl --cpunodebind=%s --membind=%s)", cpus, cnodes, policy, cnodes, cnodes);
    }
    hwloc_bitmap_free(cpu_nodes);
    return differ;
}

int np_advise_numa_balancing(int mode, enum np_mem_mode mem, bool whole_jvm, bool *warn,
                             char *buf, size_t len)
{
    if (mode <= 0 || !(mode & 1))
        return 0; /* off, unknown, or memory tiering only (mode 2) */
    /* The figures: docs/access.md, measured on the 3-node QEMU guest. */
    *warn = false;
    if (mem == NP_MEM_BALANCING) {
        snprintf(buf, len,
                 "kernel automatic NUMA balancing is on (kernel.numa_balancing=%d): under "
                 "mem=balancing it samples this JVM's memory accesses (the summary's "
                 "access_local=) and migrates pages only among the group's nodes, for some 130 "
                 "hint faults a second at its default scan rates and no CPU cost measured (under "
                 "4%% of the JVM's CPU time, on a 3-node guest)",
                 mode);
    } else if (whole_jvm && mem != NP_MEM_NONE) {
        snprintf(buf, len,
                 "kernel automatic NUMA balancing is on (kernel.numa_balancing=%d): under mem=%s "
                 "it neither samples nor migrates this JVM's memory, and costs it nothing; "
                 "mem=balancing lets it sample the accesses (the summary's access_local=), for "
                 "some 130 hint faults a second at its default scan rates and no CPU cost "
                 "measured (under 4%% of the JVM's CPU time, on a 3-node guest)",
                 mode, np_mem_mode_name(mem));
    } else {
        *warn = true;
        snprintf(buf, len,
                 "kernel automatic NUMA balancing is on (kernel.numa_balancing=%d): it cannot "
                 "move threads numapin binds, but it samples and migrates the memory of %s "
                 "toward wherever they run, at the cost of hint faults; sysctl -w "
                 "kernel.numa_balancing=0 turns it off, and scope=jvm with a memory policy "
                 "places that memory instead",
                 mode, mem == NP_MEM_NONE ? "every thread (mem=none sets no policy)"
                                          : "the threads without numapin's memory policy "
                                            "(those it does not place, or that ran before it "
                                            "loaded)");
    }
    return 1;
}

int np_read_numa_balancing(const char *path)
{
    FILE *f = fopen(path ? path : "/proc/sys/kernel/numa_balancing", "re");
    if (f == NULL)
        return -1;
    int v = -1;
    if (fscanf(f, "%d", &v) != 1)
        v = -1;
    fclose(f);
    return v;
}

/* Thread pools by the names of their threads, and how each is sized: the
 * text around the group's CPU count. */
static const struct {
    const char *glob;   /* '*'-only glob on the thread name */
    const char *before, *after;
    bool compute;       /* a pool meant to run on CPUs, not to wait */
} pools[] = {
    {"ForkJoinPool.commonPool-worker-*", "-Djava.util.concurrent.ForkJoinPool.common.parallelism=", "",
     true},
    {"ForkJoinPool-*-worker-*", "new ForkJoinPool(", ")", true},
    {"nioEventLoopGroup-*-*", "Netty: new NioEventLoopGroup(", ")", true},
    {"epollEventLoopGroup-*-*", "Netty: new EpollEventLoopGroup(", ")", true},
    {"qtp*-*", "Jetty's QueuedThreadPool: setMaxThreads(", ")", false},
    {"http-nio-*-exec-*", "Tomcat's connector: maxThreads=\"", "\"", false},
    {"https-jsse-nio-*-exec-*", "Tomcat's connector: maxThreads=\"", "\"", false},
    {"XNIO-*", "Undertow: setIoThreads and setWorkerThreads to ", "", false},
    {"pool-*-thread-*", "Executors.newFixedThreadPool(", ")", false},
};

/* fnmatch for globs whose only wildcard is '*'. */
static bool star(const char *p, const char *s)
{
    if (*p == '\0')
        return *s == '\0';
    if (*p == '*')
        return star(p + 1, s) || (*s != '\0' && star(p, s + 1));
    return *s == *p && star(p + 1, s + 1);
}

int np_advise_oversubscribed(int live, int group_cpus, const char *name, bool *compute, char *buf,
                             size_t len)
{
    if (live <= group_cpus)
        return 0;
    char how[256], quoted[72];
    np_quote(quoted, sizeof quoted, name); /* a name is escaped as the log writes it */
    snprintf(how, sizeof how, "the pool that starts them to at most %d threads", group_cpus);
    *compute = false;
    for (size_t i = 0; i < sizeof pools / sizeof *pools; i++)
        if (star(pools[i].glob, name)) {
            snprintf(how, sizeof how, "%s%d%s", pools[i].before, group_cpus, pools[i].after);
            *compute = pools[i].compute;
            break;
        }
    if (*compute)
        snprintf(buf, len, "%d placed threads are live on this group's %d CPUs, so they share CPUs: "
                 "size their pool to the group (threads like %s: %s)", live, group_cpus,
                 quoted, how);
    else
        snprintf(buf, len, "%d placed threads are live on this group's %d CPUs: when more than %d run "
                 "at once they share CPUs, so for CPU-bound work size their pool to the group "
                 "(threads like %s: %s)", live, group_cpus, group_cpus, quoted, how);
    return 1;
}
